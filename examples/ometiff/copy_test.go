package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// writeTiled writes a tiled pyramid of one 200 x 150 uint16 image, two
// planes, with opts.
func writeTiled(t *testing.T, path string, opts pyramid.Options) {
	t.Helper()
	w, err := pyramid.Create(path, opts)
	require.NoError(t, err)
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 200, SizeY: 150, SizeZ: 2, PixelType: pyramid.Uint16})
	require.NoError(t, err)
	for z := range 2 {
		plane := make([]byte, im.PlaneBytes())
		for i := range plane {
			plane[i] = byte(i/7 + z)
		}
		require.NoError(t, im.WritePlane(z, 0, 0, plane))
	}
	require.NoError(t, w.Close())
}

// TestConvertCopyThrough: the converter copies a TIFF's tiles through
// when it can and nothing asks otherwise, says so, and says why not when
// a flag or the source stands in the way; the output's coding is the
// source's when copied, the flags' otherwise.
func TestConvertCopyThrough(t *testing.T) {
	dir := t.TempDir()
	lzw := filepath.Join(dir, "lzw.ome.tif")
	writeTiled(t, lzw, pyramid.Options{TileSize: 64, Compression: pyramid.LZW, Predictor: pyramid.PredictorHorizontal})
	flat := filepath.Join(dir, "flat.ome.tif")
	writeTiled(t, flat, pyramid.Options{TileSize: 32, Compression: pyramid.Zstd, Levels: 1})
	stripped := filepath.Join(dir, "strips.tif")
	writeTIFF(t, stripped, page{width: 40, height: 30, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero})
	tests := []struct {
		name   string
		args   []string
		stderr string // "": nothing
		coding string // of the output's first directory, as Describe shows it
	}{
		{"copied", []string{lzw}, "image 0: LZW tiles of 64 x 64 copied through, the levels computed (-compression encodes them again)\n", "LZW"},
		{"levels copied", []string{"-copy-levels", lzw}, "image 0: LZW tiles of 64 x 64 copied through, 2 levels copied", "LZW"},
		{"another codec", []string{"-compression", "deflate", lzw}, "", "Deflate"},
		{"another tile", []string{"-tile", "128", lzw}, "tiles encoded again: -tile 128, the source's are 64 x 64\n", "LZW"},
		{"the same tile", []string{"-tile", "64", lzw}, "copied through", "LZW"},
		{"another predictor", []string{"-predictor", "none", lzw}, "tiles encoded again: -predictor none, the source's is horizontal\n", "LZW"},
		{"no levels to copy", []string{"-copy-levels", flat}, "the levels are computed: source: unsupported", "Zstd"},
		{"strips", []string{stripped}, "", "LZW"},
		{"strips, levels asked for", []string{"-copy-levels", stripped}, "tiles encoded again: source: unsupported", "LZW"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out"+string(rune('a'+i))+".ome.tif")
			code, _, stderr := clitest.Run(runConvert, append(tt.args, out)...)
			require.Equal(t, 0, code, stderr)
			if tt.stderr == "" {
				assert.Empty(t, stderr)
			} else {
				assert.Contains(t, stderr, tt.stderr)
			}
			assert.Contains(t, clitest.Describe(t, out, pyramid.InspectOptions{}), tt.coding)
		})
	}
}
