package main

import (
	"bytes"
	"io"
	"path/filepath"
	"slices"
	"strings"
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
	// Zstd at level 1, which the writer does not use by default: tiles
	// encoded again would differ from the source's.
	writeTiled(t, flat, pyramid.Options{TileSize: 32, Compression: pyramid.Zstd, Level: 1, Levels: 1})
	stripped := filepath.Join(dir, "strips.tif")
	writeTIFF(t, stripped, page{width: 40, height: 30, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero})
	tests := []struct {
		name   string
		args   []string
		stderr string // "": nothing
		coding string // of the output's first directory, as Describe shows it
		copied bool   // the output's first page has the source's tiles, byte for byte
	}{
		{"copied", []string{lzw}, "image 0: LZW tiles of 64 x 64 copied through, the levels computed (-compression encodes them again)\n", "LZW", false},
		{"levels copied", []string{"-copy-levels", lzw}, "image 0: LZW tiles of 64 x 64 copied through, 2 levels copied", "LZW", false},
		{"another codec", []string{"-compression", "deflate", lzw}, "", "Deflate", false},
		{"another tile", []string{"-tile", "128", lzw}, "tiles encoded again: -tile 128, the source's are 64 x 64\n", "LZW", false},
		{"the same tile", []string{"-tile", "64", lzw}, "copied through", "LZW", false},
		{"another predictor", []string{"-predictor", "none", lzw}, "tiles encoded again: -predictor none, the source's is horizontal\n", "LZW", false},
		{"no levels to copy", []string{"-copy-levels", flat}, "the levels are computed: source: unsupported", "Zstd", true},
		{"Zstd copied", []string{flat}, "image 0: Zstd tiles of 32 x 32 copied through", "Zstd", true},
		{"Zstd encoded again", []string{"-compression", "zstd", flat}, "", "Zstd", false},
		{"strips", []string{stripped}, "", "LZW", false},
		{"strips, levels asked for", []string{"-copy-levels", stripped}, "tiles encoded again: source: unsupported", "LZW", false},
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
			if strings.Contains(tt.args[len(tt.args)-1], "flat") {
				assert.Equal(t, tt.copied, slices.EqualFunc(firstTiles(t, flat), firstTiles(t, out), bytes.Equal), "tiles copied")
			}
		})
	}
}

// firstTiles returns the stored tiles of a file's first page.
func firstTiles(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := tiff.Open(path)
	require.NoError(t, err)
	defer f.Close()
	p := f.Pages[0]
	l, err := p.Layout()
	require.NoError(t, err)
	var out [][]byte
	for i := range l.BlocksAcross * l.BlocksDown {
		b, err := p.ReadBlock(nil, i)
		require.NoError(t, err)
		out = append(out, b)
	}
	return out
}

// TestDirectIO: with -direct, the output goes around the page cache when
// the converter compresses some image's full-resolution tiles itself;
// copied and uncompressed tiles go through the cache, and so does
// everything without -direct, the default.
func TestDirectIO(t *testing.T) {
	copied := []pyramid.EncodedLevel{{}}
	for _, tc := range []struct {
		name        string
		direct      bool
		compression pyramid.Compression
		src         sourceImages
		want        bool
	}{
		{"an image encoded", true, pyramid.LZW, oneImage{}, true},
		{"JPEG", true, pyramid.JPEG, oneImage{}, true},
		{"without -direct", false, pyramid.LZW, oneImage{}, false},
		{"uncompressed", true, pyramid.None, oneImage{}, false},
		{"TIFF encoded again", true, pyramid.Zstd, &tiffSource{encoded: [][]pyramid.EncodedLevel{nil}}, true},
		{"TIFF copied through", true, pyramid.JPEG, &tiffSource{encoded: [][]pyramid.EncodedLevel{copied}}, false},
		{"TIFF, one image of two copied", true, pyramid.LZW, &tiffSource{encoded: [][]pyramid.EncodedLevel{copied, nil}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config{direct: tc.direct}
			assert.Equal(t, tc.want, directIO(cfg, pyramid.Options{Compression: tc.compression}, tc.src))
		})
	}
	for args, want := range map[string]bool{"in.png out.ome.tif": false, "-direct in.png out.ome.tif": true} {
		cfg, err := parseArgs(strings.Fields(args), io.Discard)
		require.NoError(t, err)
		assert.Equal(t, want, cfg.direct, args)
	}
}
