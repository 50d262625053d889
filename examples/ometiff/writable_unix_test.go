//go:build linux || darwin

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"golang.org/x/sys/unix"
)

// TestOutputDirectoryNotWritable: an output whose directory the process
// cannot create files in is refused before the input is read, naming the
// directory (it was found only once the whole input was decoded). Root,
// whom permissions do not stop, is refused only by a read-only file
// system: as root the directory of mode 0555 is skipped, and /proc/sys
// (read-only in most containers) is tested when it is not writable.
func TestOutputDirectoryNotWritable(t *testing.T) {
	readOnly := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(readOnly, 0o555))
	for _, tt := range []struct {
		name string
		dir  string
	}{
		{"mode 0555", readOnly},
		{"read-only file system", "/proc/sys"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if unix.Access(tt.dir, unix.W_OK) == nil {
				t.Skipf("%s is writable here (run as root, or on a writable file system)", tt.dir)
			}
			in := writeFile(t, t.TempDir(), "in.png", encoded(t, grayImage(8, 8), encodePNG))
			out := filepath.Join(tt.dir, "out.ome.tif")
			input, err := openInput(in)
			require.NoError(t, err)
			defer input.Close()
			assert.ErrorContains(t, checkOutput(input, out), out+": its directory, "+tt.dir+", is not writable")

			// The command reads nothing of the input: this one, two
			// bytes, would be refused as no image otherwise.
			bmp := writeFile(t, t.TempDir(), "in.bmp", []byte("BM"))
			code, stdout, stderr := clitest.Run(runConvert, bmp, out)
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			clitest.AssertErrorLine(t, convertName, stderr)
			assert.Contains(t, stderr, "its directory, "+tt.dir+", is not writable")
		})
	}
}
