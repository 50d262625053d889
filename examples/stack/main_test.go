package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/examples/internal/stackpool"
	"github.com/ometiff-go/ometiff/pyramid"
)

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
			code, stdout, stderr := clitest.Run(run, append(tt.args, "-o", path)...)
			require.Equal(t, 0, code, stderr)
			assert.Empty(t, stderr)
			planes := tt.series * tt.z * tt.channels
			assert.Contains(t, stdout, fmt.Sprintf("= %d planes of %d x %d uint16", planes, tt.size, tt.size))
			assert.Contains(t, stdout, "OS write calls")

			description := clitest.Describe(t, path, pyramid.InspectOptions{})
			assert.Contains(t, description, fmt.Sprintf("%d IFDs in the main chain", planes))
			for _, want := range tt.want {
				assert.Contains(t, description, want)
			}
			checkPlanes(t, path, stackpool.New(tt.size, min(stackpool.Size, planes)))
			clitest.CheckTiffinfo(t, path)
		})
	}
}

// checkPlanes checks that the full-resolution planes of the file at path
// cycle through pool in order.
func checkPlanes(t *testing.T, path string, pool [][]byte) {
	t.Helper()
	for i, img := range clitest.Planes(t, path) {
		require.True(t, bytes.Equal(pool[i%len(pool)], img.Pix), "plane %d is not pool plane %d", i, i%len(pool))
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
		// These panicked (an int overflow) or ran out of memory.
		{"planes past an int", []string{"-series", "4611686018427387904", "-z", "4", "-size", "16"}, 2},
		{"more planes than a file holds", []string{"-series", "2000", "-z", "1000", "-channels", "1"}, 2},
		{"planes past memory", []string{"-series", "1", "-z", "1", "-size", "100000"}, 2},
		{"workers past 256", []string{"-series", "1", "-z", "1", "-workers", "100000"}, 2},
		{"not a TIFF name", []string{"-series", "1", "-z", "1", "-o", "stack.png"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clitest.AssertFails(t, run, "stack", t.TempDir(), tt.code, tt.args...)
		})
	}
	clitest.AssertFailsSaying(t, run, "stack", t.TempDir(), 2, "-series 4611686018427387904 x -z 4 x -channels 2: more than 1048576 planes",
		"-series", "4611686018427387904", "-z", "4")
	clitest.AssertFailsSaying(t, run, "stack", t.TempDir(), 2, "-size 100000: want at most 16384", "-size", "100000")
}

func TestRunPrintsUsage(t *testing.T) {
	clitest.AssertUsage(t, run, "usage: stack [flags]")
}
