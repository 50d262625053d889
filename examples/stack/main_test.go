package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/pyramid"
)

// runStack runs the program in-process and returns its exit code and
// output.
func runStack(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunWritesStack(t *testing.T) {
	tests := []struct {
		name                      string
		args                      []string
		series, z, channels, size int
		want                      []string // in the description of the file
	}{
		{"lzw", []string{"-series", "2", "-z", "3", "-channels", "2", "-size", "64"}, 2, 3, 2, 64, []string{
			`Image:1 "series 2": 64 x 64, Z 3, C 2, T 1, uint16, XYZCT, 6 planes in TiffData, pixel 0.325 µm x 0.325 µm, Z step 1 µm`,
			`channel 1 "Channel 2"`, "IFD 11: 64 x 64, 1 x uint16, tiles 64 x 64 (1 x 1), LZW, predictor horizontal"}},
		{"none, pool reused", []string{"-series", "3", "-z", "10", "-channels", "3", "-size", "16", "-compression", "none"}, 3, 10, 3, 16, []string{
			"3 images", "IFD 89: 16 x 16, 1 x uint16, tiles 16 x 16 (1 x 1), none"}},
		{"zstd, one worker", []string{"-series", "1", "-z", "2", "-channels", "1", "-size", "300", "-compression", "zstd", "-workers", "1"}, 1, 2, 1, 300, []string{
			"IFD 1: 300 x 300, 1 x uint16, tiles 256 x 256 (2 x 2), Zstd", "SubIFD 1.1: 150 x 150"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stack.ome.tif")
			code, stdout, stderr := runStack(append(tt.args, "-o", path)...)
			require.Equal(t, 0, code, stderr)
			assert.Empty(t, stderr)
			planes := tt.series * tt.z * tt.channels
			assert.Contains(t, stdout, fmt.Sprintf("= %d planes of %d x %d uint16", planes, tt.size, tt.size))
			assert.Contains(t, stdout, "OS write calls")

			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var description strings.Builder
			require.NoError(t, pyramid.Inspect(&description, bytes.NewReader(data), int64(len(data)), pyramid.InspectOptions{}))
			assert.Contains(t, description.String(), fmt.Sprintf("%d IFDs in the main chain", planes))
			for _, want := range tt.want {
				assert.Contains(t, description.String(), want)
			}
			checkPlanes(t, data, newPool(tt.size, min(poolSize, planes)))
			t.Run("tiffinfo", func(t *testing.T) {
				interop.Need(t, "tiffinfo")
				interop.MustRun(t, "tiffinfo", path)
			})
		})
	}
}

// checkPlanes checks that the full-resolution planes of the file cycle
// through pool in order.
func checkPlanes(t *testing.T, data []byte, pool [][]byte) {
	t.Helper()
	f, err := readback.Parse(data)
	require.NoError(t, err)
	for i, d := range f.IFDs {
		img, err := f.Image(d)
		require.NoError(t, err)
		require.True(t, bytes.Equal(pool[i%len(pool)], img.Pix), "plane %d is not pool plane %d", i, i%len(pool))
	}
}

func TestNewPoolPlanesDiffer(t *testing.T) {
	pool := newPool(32, poolSize)
	seen := map[string]int{}
	for i, p := range pool {
		require.Len(t, p, 2*32*32)
		if j, ok := seen[string(p)]; ok {
			t.Fatalf("pool planes %d and %d are equal", j, i)
		}
		seen[string(p)] = i
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"unknown flag", []string{"-t", "2"}, 2},
		{"unknown compression", []string{"-compression", "jpeg"}, 2},
		{"not a number", []string{"-z", "many"}, 2},
		{"no series", []string{"-series", "0"}, 2},
		{"no planes", []string{"-z", "0"}, 2},
		{"no channels", []string{"-channels", "-2"}, 2},
		{"zero size", []string{"-size", "0"}, 2},
		{"argument", []string{"out.ome.tif"}, 2},
		{"negative workers", []string{"-series", "1", "-z", "1", "-workers", "-1"}, 2},
		{"bad zstd level", []string{"-series", "1", "-z", "1", "-compression", "zstd", "-level", "99"}, 2},
		{"missing directory", []string{"-series", "1", "-z", "1", "-o", "missing/stack.ome.tif"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			code, stdout, stderr := runStack(tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Empty(t, stdout)
			assert.True(t, strings.HasPrefix(stderr, "stack: "), "stderr %q", stderr)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "stderr %q is not one line", stderr)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "files left behind")
		})
	}
}

func TestRunPrintsUsage(t *testing.T) {
	code, stdout, stderr := runStack("-h")
	assert.Equal(t, 0, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "usage: stack [flags]")
}
