package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/ndpitest"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/pyramid/source"
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

// TestConvertOutputExistsFirst: an output that exists, without -force,
// is refused alone: nothing else on stderr (tiles copied through were once
// announced first), and the file untouched. A source that cannot be a
// dataset is not read at all: a JPEG too large for -max-pixels is not
// refused for that.
func TestConvertOutputExistsFirst(t *testing.T) {
	dir := t.TempDir()
	lzw := filepath.Join(dir, "lzw.ome.tif")
	writeTiled(t, lzw, pyramid.Options{TileSize: 64, Compression: pyramid.LZW, Predictor: pyramid.PredictorHorizontal})
	output := writeFile(t, dir, "out.ome.tif", []byte("old"))
	code, _, stderr := clitest.Run(runConvert, lzw, output)
	require.Equal(t, 1, code)
	assert.Equal(t, "ometiff convert: "+output+" exists (use -force to replace it)\n", stderr)
	old, err := os.ReadFile(output)
	require.NoError(t, err)
	assert.Equal(t, "old", string(old))

	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 64, 64)), nil))
	big := writeFile(t, dir, "big.jpg", jpg.Bytes())
	code, _, stderr = clitest.Run(runConvert, "-max-pixels", "100", big, output)
	require.Equal(t, 1, code)
	assert.Equal(t, "ometiff convert: "+output+" exists (use -force to replace it)\n", stderr)
}

// TestConvertCopyThrough: the converter copies a TIFF's tiles through
// when it can and nothing asks otherwise, says so, and says why not when
// a flag or the source stands in the way; the output's coding is the
// source's when copied, the flags' otherwise.
func TestConvertCopyThrough(t *testing.T) {
	dir := t.TempDir()
	lzw := filepath.Join(dir, "lzw.ome.tif")
	writeTiled(t, lzw, pyramid.Options{TileSize: 64, Compression: pyramid.LZW, Predictor: pyramid.PredictorHorizontal})
	two := filepath.Join(dir, "two.ome.tif")
	writeTiled(t, two, pyramid.Options{TileSize: 64, Compression: pyramid.LZW, Predictor: pyramid.PredictorHorizontal, Levels: 2})
	flat := filepath.Join(dir, "flat.ome.tif")
	// Zstd at level 1, which the writer does not use by default: tiles
	// encoded again would differ from the source's.
	writeTiled(t, flat, pyramid.Options{TileSize: 32, Compression: pyramid.Zstd, Level: 1, Levels: 1})
	raw := filepath.Join(dir, "raw.ome.tif")
	writeTiled(t, raw, pyramid.Options{TileSize: 64, Compression: pyramid.None})
	tiny := filepath.Join(dir, "tiny.ome.tif")
	writeTiled(t, tiny, pyramid.Options{TileSize: 16, Compression: pyramid.LZW, Predictor: pyramid.PredictorHorizontal, Levels: 1})
	huge := filepath.Join(dir, "huge.ome.tif") // tiles of 2048 on an image 2100 wide
	hw, err := pyramid.Create(huge, pyramid.Options{TileSize: 2048, Compression: pyramid.None, Levels: 1})
	require.NoError(t, err)
	him, err := hw.AddImage(pyramid.ImageSpec{SizeX: 2100, SizeY: 40})
	require.NoError(t, err)
	require.NoError(t, him.WritePlane(0, 0, 0, make([]byte, him.PlaneBytes())))
	require.NoError(t, hw.Close())
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
		{"levels copied, -levels", []string{"-copy-levels", "-levels", "2", lzw}, "image 0: LZW tiles of 64 x 64 copied through, 1 level copied", "LZW", false},
		{"levels copied, -levels and -downsampling", []string{"-copy-levels", "-downsampling", "nearest", "-levels", "3", lzw},
			"image 0: -downsampling does not apply: the source's 2 reduced levels are copied\n", "LZW", false},
		{"no levels", []string{"-levels", "1", lzw}, "image 0: LZW tiles of 64 x 64 copied through, no reduced levels (-levels 1)", "LZW", false},
		{"-copy-levels and -compression", []string{"-copy-levels", "-compression", "deflate", lzw},
			"-copy-levels does not apply: -compression encodes every image again\n", "Deflate", false},
		{"one level copied", []string{"-copy-levels", two}, "image 0: LZW tiles of 64 x 64 copied through, 1 level copied (-compression", "LZW", false},
		{"another codec", []string{"-compression", "deflate", lzw}, "", "Deflate", false},
		{"another tile", []string{"-tile", "128", lzw}, "encoded again as LZW: -tile 128, the source's are 64 x 64\n", "LZW", false},
		{"the same tile", []string{"-tile", "64", lzw}, "copied through", "LZW", false},
		{"another predictor", []string{"-predictor", "none", lzw}, "encoded again as LZW: -predictor none, the source's is horizontal\n", "LZW", false},
		{"another tile, Zstd kept", []string{"-tile", "64", flat}, "encoded again as Zstd: -tile 64, the source's are 32 x 32\n", "Zstd", false},
		{"another tile, -copy-levels", []string{"-tile", "64", "-copy-levels", flat}, "-tile 64, the source's are 32 x 32; -copy-levels does not apply\n", "Zstd", false},
		{"another predictor, Zstd kept", []string{"-tile", "32", "-predictor", "none", flat}, "encoded again as Zstd: -predictor none, the source's is horizontal\n", "Zstd", false},
		{"another tile, uncompressed kept", []string{"-tile", "128", raw}, "written again uncompressed: -tile 128, the source's are 64 x 64\n", "none", false},
		{"a predictor for uncompressed tiles", []string{"-predictor", "horizontal", raw}, "encoded again as LZW: -predictor horizontal, the source's is none\n", "LZW", false},
		{"no levels to copy", []string{"-copy-levels", flat}, "its levels are computed, as -copy-levels cannot copy them: the file stores no reduced levels of plane 0\n", "Zstd", true},
		{"Zstd copied", []string{flat}, "image 0: Zstd tiles of 32 x 32 copied through", "Zstd", true},
		{"Zstd copied, -level for its levels", []string{"-level", "5", flat}, "image 0: Zstd tiles of 32 x 32 copied through", "Zstd", true},
		{"Zstd encoded again", []string{"-compression", "zstd", flat}, "", "Zstd", false},
		{"strips", []string{stripped}, "", "LZW", false},
		// Tiles of a side viewers read slowly are cut anew, unless -tile
		// asks for them.
		{"tiles too small", []string{tiny}, "image 0: encoded again as LZW: the source's are 16 x 16, and tiles of 32 to 1024 a side are copied (-tile 16 copies these)\n",
			"LZW", false},
		{"tiles too small, -tile", []string{"-tile", "16", tiny}, "image 0: LZW tiles of 16 x 16 copied through", "LZW", false},
		{"tiles too large", []string{huge}, "image 0: written again uncompressed: the source's are 2048 x 48, and tiles of 32 to 1024 a side are copied (-tile 2048 copies these)\n",
			"none", false},
		{"strips, levels asked for", []string{"-copy-levels", stripped}, "image 0: encoded again as LZW: its uncompressed strips are not copied (tiles only)\n", "LZW", false},
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
	// An image of one tile has no levels to copy or compute: -copy-levels
	// says neither.
	one := filepath.Join(dir, "one.ome.tif")
	writeTiled(t, one, pyramid.Options{TileSize: 256})
	code, _, stderr := clitest.Run(runConvert, "-copy-levels", one, filepath.Join(dir, "one-out.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: LZW tiles of 208 x 160 copied through, no reduced levels (one tile)")
	assert.NotContains(t, stderr, "levels are computed")
	code, _, stderr = clitest.Run(runConvert, "-levels", "3", one, filepath.Join(dir, "one-levels.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: LZW tiles of 208 x 160 copied through, the levels computed", "-levels asks for them")

	// Tiles encoded again take the predictor -predictor's auto gives the
	// codec, not a source's none.
	bare := filepath.Join(dir, "bare.ome.tif")
	writeTiled(t, bare, pyramid.Options{TileSize: 64, Compression: pyramid.LZW, Predictor: pyramid.PredictorNone})
	require.Contains(t, clitest.Describe(t, bare, pyramid.InspectOptions{}), "LZW, 1")
	for _, args := range [][]string{{"-tile", "128"}, {"-tile", "128", "-predictor", "auto"}} {
		out := filepath.Join(dir, "bare-out.ome.tif")
		code, _, stderr = clitest.Run(runConvert, append(args, "-force", bare, out)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, "image 0: encoded again as LZW: -tile 128, the source's are 64 x 64\n")
		assert.Contains(t, clitest.Describe(t, out, pyramid.InspectOptions{}), "LZW, predictor horizontal", args)
	}

	// A tile size the writer refuses is refused first: nothing is said
	// of copying with it.
	code, _, stderr = clitest.Run(runConvert, "-tile", "100", lzw, filepath.Join(dir, "refused.ome.tif"))
	assert.Equal(t, 2, code)
	assert.Equal(t, "ometiff convert: -tile 100: want a multiple of 16 from 16 to 32768\n", stderr)
}

// TestConvertCopyEachCoding converts a file of three images, of Zstd
// tiles and of LZW tiles, one shorter than a tile (its tiles 32 x 16, as
// the writer cuts them): each is copied in its own codec, which its
// computed levels take too. (TestInteropConvertSVSCopy has images not
// copied.)
func TestConvertCopyEachCoding(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.ome.tif"), filepath.Join(dir, "out.ome.tif")
	w, err := pyramid.Create(in, pyramid.Options{TileSize: 32})
	require.NoError(t, err)
	for _, spec := range []pyramid.ImageSpec{
		{Name: "zstd", SizeX: 90, SizeY: 70, PixelType: pyramid.Uint16, Coding: &pyramid.Coding{Compression: pyramid.Zstd, Level: 1}},
		{Name: "lzw", SizeX: 50, SizeY: 40, PixelType: pyramid.Uint16},
		{Name: "short", SizeX: 50, SizeY: 10, PixelType: pyramid.Uint16},
	} {
		im, err := w.AddImage(spec)
		require.NoError(t, err)
		plane := make([]byte, im.PlaneBytes())
		for i := range plane {
			plane[i] = byte(i * 7 / 5)
		}
		require.NoError(t, im.WritePlane(0, 0, 0, plane))
	}
	require.NoError(t, w.Close())
	code, _, stderr := clitest.Run(runConvert, in, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: Zstd tiles of 32 x 32 copied through, the levels computed")
	assert.Contains(t, stderr, "image 1: LZW tiles of 32 x 32 copied through, the levels computed")
	assert.Contains(t, stderr, "image 2: LZW tiles of 32 x 16 copied through, the levels computed")
	src, err := tiff.Open(in)
	require.NoError(t, err)
	defer src.Close()
	dst, err := tiff.Open(out)
	require.NoError(t, err)
	defer dst.Close()
	for i, want := range []uint16{tiff.CompressionZstd, tiff.CompressionLZW, tiff.CompressionLZW} {
		require.NotEmpty(t, dst.Pages[i].SubIFDs, "image %d has levels", i)
		for l, p := range append([]*tiff.Page{dst.Pages[i]}, dst.Pages[i].SubIFDs...) {
			layout, err := p.Layout()
			require.NoError(t, err)
			assert.Equal(t, [2]uint16{want, 2}, [2]uint16{layout.Compression, layout.Predictor}, "image %d level %d", i, l)
		}
		assert.True(t, slices.EqualFunc(pageTiles(t, src.Pages[i]), pageTiles(t, dst.Pages[i]), bytes.Equal), "image %d copied", i)
	}
}

// TestConvertImages: -images converts the images it numbers, as ometiff
// info numbers them, in the file's order; the messages name them by those
// numbers. Numbers the input does not hold are a usage error.
func TestConvertImages(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ome.tif")
	w, err := pyramid.Create(in, pyramid.Options{TileSize: 32})
	require.NoError(t, err)
	for _, name := range []string{"a", "b", "c"} {
		im, err := w.AddImage(pyramid.ImageSpec{Name: name, SizeX: 40, SizeY: 40})
		require.NoError(t, err)
		require.NoError(t, im.WritePlane(0, 0, 0, bytes.Repeat([]byte(name), 1600)))
	}
	require.NoError(t, w.Close())

	out := filepath.Join(dir, "out.ome.tif")
	code, stdout, stderr := clitest.Run(runConvert, "-images", "2, 0,2", in, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "image 0 \"a\"")
	assert.Contains(t, stdout, "image 1 \"c\"")
	assert.Contains(t, stderr, "image 2: LZW tiles of 32 x 32 copied through")
	assert.NotContains(t, stderr, "image 1:")
	back, err := source.Open(out, source.Options{})
	require.NoError(t, err)
	defer back.Close()
	require.Len(t, back.Images, 2)
	for i, name := range []string{"a", "c"} {
		assert.Equal(t, name, back.Images[i].Spec.Name)
	}

	png := writeFile(t, dir, "in.png", encoded(t, nrgbaImage(8, 8, false), encodePNG))
	jpg := writeFile(t, dir, "in.jpg", encoded(t, nrgbaImage(300, 200, false), encodeJPEG))
	code, _, stderr = clitest.Run(runConvert, "-images", "0", png, filepath.Join(dir, "png.ome.tif"))
	require.Equal(t, 0, code, stderr)
	for _, tt := range []struct {
		input, images, says string
	}{
		{in, "3", "-images 3: " + in + " holds 3 images (ometiff info lists them)"},
		{in, "5,1,7", "-images 5,7: " + in + " holds 3 images (ometiff info lists them)"}, // every one past them (7 alone was named)
		{png, "0,1", "-images 1: " + png + " holds 1 image (0)"},
		{jpg, "1", "-images 1: " + jpg + " holds 1 image (0)"}, // before -max-memory refuses its decoding
		{in, "-1", `-images "-1": want image numbers from 0`},
		{in, " , ", `-images " , ": want image numbers from 0`},
		{in, "", `-images "": name at least one image`},
	} {
		code, _, stderr := clitest.Run(runConvert, "-force", "-max-memory", "100KiB", "-images", tt.images, tt.input, filepath.Join(dir, "bad.ome.tif"))
		assert.Equal(t, 2, code, tt.images)
		assert.Contains(t, stderr, tt.says, tt.images)
		assert.NoFileExists(t, filepath.Join(dir, "bad.ome.tif"))
	}
}

// TestConvertPredictorPerImage: -predictor's predictor goes to the images
// whose samples it suits; the others take the one that suits them, said,
// and their tiles are copied when that is theirs. A predictor that suits
// no image is refused.
func TestConvertPredictorPerImage(t *testing.T) {
	dir := t.TempDir()
	mixed := filepath.Join(dir, "mixed.ome.tif")
	w, err := pyramid.Create(mixed, pyramid.Options{TileSize: 32})
	require.NoError(t, err)
	for _, typ := range []pyramid.PixelType{pyramid.Uint16, pyramid.Float32} {
		im, err := w.AddImage(pyramid.ImageSpec{SizeX: 40, SizeY: 40, PixelType: typ})
		require.NoError(t, err)
		require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, im.PlaneBytes())))
	}
	require.NoError(t, w.Close())
	for _, tt := range []struct {
		args  []string
		says  string
		coded []string // each image's predictor, as Describe shows it
	}{
		{[]string{"-compression", "deflate", "-predictor", "horizontal"}, "image 1: predictor floating-point, not -predictor's horizontal, which is not for float samples\n",
			[]string{"horizontal", "floating-point"}},
		{[]string{"-compression", "deflate", "-predictor", "floating-point"}, "image 0: predictor horizontal, not -predictor's floating-point, which is not for uint16 samples\n",
			[]string{"horizontal", "floating-point"}},
		{[]string{"-predictor", "horizontal"}, "image 1: LZW tiles of 32 x 32 copied through", []string{"horizontal", "floating-point"}},
	} {
		out := filepath.Join(dir, "out.ome.tif")
		code, _, stderr := clitest.Run(runConvert, append(append([]string{"-force"}, tt.args...), mixed, out)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, tt.says, tt.args)
		assert.NotContains(t, stderr, "encoded again", tt.args)
		f, err := source.Open(out, source.Options{})
		require.NoError(t, err)
		for i, im := range f.Images {
			l, err := im.Planes[0].Page.Layout()
			require.NoError(t, err)
			assert.Equal(t, map[string]uint16{"horizontal": 2, "floating-point": 3}[tt.coded[i]], l.Predictor, "%v: image %d", tt.args, i)
		}
		f.Close()
	}
	gray := filepath.Join(dir, "gray.ome.tif")
	writeTiled(t, gray, pyramid.Options{TileSize: 64})
	code, _, stderr := clitest.Run(runConvert, "-predictor", "floating-point", gray, filepath.Join(dir, "refused.ome.tif"))
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "floating-point predictor on uint16 samples")
}

// TestTileSide: tiles the writer would cut are copied, square or shrunk
// to an image narrower or shorter than a tile; other oblong tiles are not.
// An image in one tile shrunk to it would be cut so at any larger side.
func TestTileSide(t *testing.T) {
	tests := []struct {
		w, h, tileW, tileH int
		square             bool
		fits               []int // sides that cut these tiles
		not                []int // sides that do not
	}{
		{300, 200, 256, 256, true, []int{256}, []int{240, 272}},
		{300, 200, 256, 208, true, []int{256}, []int{240, 272}},
		{200, 300, 208, 256, true, []int{256}, []int{208, 512}},
		{200, 100, 208, 112, true, []int{208, 256, 1024}, []int{192}},
		{100, 100, 112, 112, true, []int{112, 256}, []int{96}},
		{300, 200, 256, 128, false, nil, nil}, // strips of tiles
		{300, 200, 256, 224, false, nil, nil}, // not the height rounded up to 16
		{1000, 1000, 512, 256, false, nil, nil},
	}
	for _, tt := range tests {
		_, square, fits := tileSide(pyramid.ImageSpec{SizeX: tt.w, SizeY: tt.h}, pyramid.TileCoding{TileWidth: tt.tileW, TileHeight: tt.tileH})
		assert.Equal(t, tt.square, square, "%+v", tt)
		for _, side := range tt.fits {
			assert.True(t, fits(side), "%+v: side %d", tt, side)
		}
		for _, side := range tt.not {
			assert.False(t, fits(side), "%+v: side %d", tt, side)
		}
	}
}

// firstTiles returns the stored tiles of a file's first page.
func firstTiles(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := tiff.Open(path)
	require.NoError(t, err)
	defer f.Close()
	return pageTiles(t, f.Pages[0])
}

// pageTiles returns the stored tiles of a page.
func pageTiles(t *testing.T, p *tiff.Page) [][]byte {
	t.Helper()
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

// TestConvertBigEndianTiles converts a big-endian TIFF of 16-bit tiles,
// which are not copied through (they would keep their byte order in the
// little-endian output) but decoded and encoded again: the output's pixels
// are the source's as an independent reader decodes both.
func TestConvertBigEndianTiles(t *testing.T) {
	const width, height, tile = 48, 40, 16
	data := tiledTIFF(t, binary.BigEndian, width, height, tile, 16, func(tx, ty int) []byte {
		raw := make([]byte, tile*tile*2)
		for y := range tile {
			for x := range tile {
				binary.BigEndian.PutUint16(raw[2*(y*tile+x):], uint16((tx+x)*300+ty+y))
			}
		}
		return raw
	})
	dir := t.TempDir()
	in, out := filepath.Join(dir, "be.tif"), filepath.Join(dir, "out.ome.tif")
	require.NoError(t, os.WriteFile(in, data, 0o644))

	code, _, stderr := clitest.Run(runConvert, in, out)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "copied through,")
	assert.Contains(t, stderr, "image 0: encoded again as LZW: ")
	assert.Contains(t, stderr, "big-endian samples of 16 bits", "the reason")
	image := func(path string) []byte {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		file, err := readback.Parse(data)
		require.NoError(t, err)
		im, err := file.Image(file.IFDs[0])
		require.NoError(t, err)
		return im.Pix
	}
	assert.Equal(t, image(in), image(out))
}

// TestConvertSparseTile converts a tiled TIFF with a sparse tile (0 bytes
// at offset 0, as GDAL writes empty tiles): its tiles are not copied
// through, since the writer writes no empty tile and libtiff reads none,
// but decoded, the sparse one as zeros, and encoded again, with the reason
// on stderr.
func TestConvertSparseTile(t *testing.T) {
	const width, height, tile, sparse = 48, 32, 16, 4
	want := make([]byte, width*height)
	data := tiledTIFF(t, binary.LittleEndian, width, height, tile, 8, func(tx, ty int) []byte {
		i := ty/tile*(width/tile) + tx/tile
		if i == sparse {
			return nil
		}
		raw := make([]byte, tile*tile)
		for y := range tile {
			for x := range tile {
				raw[y*tile+x] = byte(i*40 + x + y)
				want[(ty+y)*width+tx+x] = raw[y*tile+x]
			}
		}
		return raw
	})
	dir := t.TempDir()
	in, out := filepath.Join(dir, "sparse.tif"), filepath.Join(dir, "out.ome.tif")
	require.NoError(t, os.WriteFile(in, data, 0o644))

	code, _, stderr := clitest.Run(runConvert, in, out)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, convertName+": "+in+": image 0: encoded again as LZW: "+
		"tile 4 of level 0 of plane 0 is sparse (0 bytes), which the writer does not write and libtiff cannot read (decoded, it is zeros, or GDAL's no-data value)\n", stderr)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	file, err := readback.Parse(data)
	require.NoError(t, err)
	im, err := file.Image(file.IFDs[0])
	require.NoError(t, err)
	assert.Equal(t, want, im.Pix)
}

// TestConvertJPEGColor: -jpeg-color other than the coding of a source's
// JPEG tiles encodes every level again, in JPEG as it asks (a pyramid of
// copied YCbCr tiles and RGB-coded levels was once written); the same
// coding copies them.
func TestConvertJPEGColor(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "ycbcr.ome.tif")
	writeJPEGSource(t, in)

	for _, tt := range []struct {
		color, stderr string
		photometric   uint16
	}{
		{"rgb", "image 0: encoded again as JPEG (RGB) at quality 80: -jpeg-color rgb, the source's are YCbCr\n", tiff.PhotometricRGB},
		{"ycbcr", "image 0: JPEG tiles of 32 x 32 copied through, the levels computed at quality 80", tiff.PhotometricYCbCr},
	} {
		out := filepath.Join(dir, "out-"+tt.color+".ome.tif")
		code, _, stderr := clitest.Run(runConvert, "-jpeg-color", tt.color, in, out)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, tt.stderr)
		f, err := tiff.Open(out)
		require.NoError(t, err)
		for l, p := range append([]*tiff.Page{f.Pages[0]}, f.Pages[0].SubIFDs...) {
			layout, err := p.Layout()
			require.NoError(t, err)
			assert.Equal(t, [2]uint16{tiff.CompressionJPEG, tt.photometric}, [2]uint16{layout.Compression, layout.Photometric}, "-jpeg-color %s, level %d", tt.color, l)
		}
		require.NoError(t, f.Close())
	}
}

// TestConvertLevelNamesOutputCodec: -level without -compression, for a
// source whose JPEG tiles are copied through, is refused naming the
// output's codec, JPEG, not the writer's default, LZW.
func TestConvertLevelNamesOutputCodec(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "ycbcr.ome.tif")
	writeJPEGSource(t, in)
	code, _, stderr := clitest.Run(runConvert, "-level", "5", in, filepath.Join(dir, "out.ome.tif"))
	require.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "-level 5 is Deflate's or Zstd's: give -compression deflate or zstd (the output is JPEG)\n")
}

// writeJPEGSource writes an 80 x 60 RGB image in YCbCr JPEG tiles of 32 x
// 32 at quality 80, without levels.
func writeJPEGSource(t *testing.T, path string) {
	t.Helper()
	w, err := pyramid.Create(path, pyramid.Options{TileSize: 32, Compression: pyramid.JPEG, Quality: 80, Levels: 1})
	require.NoError(t, err)
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 80, SizeY: 60, SamplesPerPixel: 3})
	require.NoError(t, err)
	rgb := make([]byte, im.PlaneBytes())
	for i := range rgb {
		rgb[i] = byte(i / 3 % 80 * 3)
	}
	require.NoError(t, im.WritePlane(0, 0, 0, rgb))
	require.NoError(t, w.Close())
}

// TestConvertJPEGTileMismatch: JPEG tiles that cannot be copied (here of
// another size than -tile's) are encoded again in JPEG, at the source's
// quality and in its colour coding, every level: not in LZW, many times
// larger.
func TestConvertJPEGTileMismatch(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.ome.tif"), filepath.Join(dir, "out.ome.tif")
	writeJPEGSource(t, in)
	code, _, stderr := clitest.Run(runConvert, "-tile", "64", in, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: encoded again as JPEG at quality 80: -tile 64, the source's are 32 x 32\n")
	f, err := tiff.Open(out)
	require.NoError(t, err)
	defer f.Close()
	for l, p := range append([]*tiff.Page{f.Pages[0]}, f.Pages[0].SubIFDs...) {
		layout, err := p.Layout()
		require.NoError(t, err)
		assert.Equal(t, [2]uint16{tiff.CompressionJPEG, tiff.PhotometricYCbCr}, [2]uint16{layout.Compression, layout.Photometric}, "level %d", l)
		if l == 0 {
			assert.Equal(t, 64, layout.BlockWidth, "-tile's")
		}
	}
	q, _, err := compress.JPEGQuality(f.Pages[0].JPEGTables())
	require.NoError(t, err)
	assert.Equal(t, 80, q)
}

// TestConvertJPEGColorGray: -jpeg-color is of RGB tiles; gray JPEG tiles,
// alike in both codings, are still copied when it is given.
func TestConvertJPEGColorGray(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "gray.ome.tif")
	w, err := pyramid.Create(in, pyramid.Options{TileSize: 32, Compression: pyramid.JPEG, Quality: 80, Levels: 1})
	require.NoError(t, err)
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 80, SizeY: 60})
	require.NoError(t, err)
	plane := make([]byte, im.PlaneBytes())
	for i := range plane {
		plane[i] = byte(i % 80 * 3)
	}
	require.NoError(t, im.WritePlane(0, 0, 0, plane))
	require.NoError(t, w.Close())

	out := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-jpeg-color", "rgb", in, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: JPEG tiles of 32 x 32 copied through")
	assert.NotContains(t, stderr, "encoded again")
	assert.Equal(t, firstTiles(t, in), firstTiles(t, out), "the gray JPEG tiles copied")
}

// TestConvertJPEGWhereItApplies: -compression jpeg on a file whose images
// JPEG cannot all code gives the others LZW, and says so; on a file where
// it codes none, it is refused.
func TestConvertJPEGWhereItApplies(t *testing.T) {
	dir := t.TempDir()
	input := writeOMETIFF(t, dir) // uint16 "cells", RGB uint8 "overview"
	out := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-compression", "jpeg", input, out)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, convertName+": "+input+": image 0: LZW, not JPEG, which takes 8-bit gray or RGB samples, not 1 x uint16\n", stderr)
	f, err := tiff.Open(out)
	require.NoError(t, err)
	defer f.Close()
	var got []uint16
	for _, p := range f.Pages {
		l, err := p.Layout()
		require.NoError(t, err)
		got = append(got, l.Compression)
	}
	assert.Equal(t, []uint16{tiff.CompressionLZW, tiff.CompressionLZW, tiff.CompressionJPEG}, got, "two planes of cells, then the overview")

	only := filepath.Join(dir, "u16.ome.tif")
	writeTiled(t, only, pyramid.Options{TileSize: 64})
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 2, "-compression jpeg takes 8-bit gray or RGB samples, and no image of "+only+" has them (image 0 is 1 x uint16): give lzw, deflate or zstd", "-compression", "jpeg", only, "out.ome.tif")
}

// tiledTIFF returns a TIFF in order of one uncompressed gray page of
// width x height samples of bits, in tiles of tile pixels, whose stored
// bytes tileAt gives for the tile at (tx, ty); nil makes it sparse (0
// bytes at offset 0).
func tiledTIFF(t *testing.T, order binary.ByteOrder, width, height, tile, bits int, tileAt func(tx, ty int) []byte) []byte {
	t.Helper()
	h := iohandle.NewMemory()
	w, err := tiff.NewWriter(h, tiff.Options{ByteOrder: order})
	require.NoError(t, err)
	var blocks []tiff.Block
	for ty := 0; ty < height; ty += tile {
		for tx := 0; tx < width; tx += tile {
			raw := tileAt(tx, ty)
			if raw == nil {
				blocks = append(blocks, tiff.Block{})
				continue
			}
			b, err := w.WriteBlock(raw)
			require.NoError(t, err)
			blocks = append(blocks, b)
		}
	}
	f := &ifd.Builder{}
	f.AddUint(tiff.TagImageWidth, uint64(width))
	f.AddUint(tiff.TagImageLength, uint64(height))
	f.AddShort(tiff.TagBitsPerSample, uint16(bits))
	f.AddShort(tiff.TagCompression, tiff.CompressionNone)
	f.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricBlackIsZero)
	f.AddUint(tiff.TagTileWidth, uint64(tile))
	f.AddUint(tiff.TagTileLength, uint64(tile))
	require.NoError(t, w.AddDirectory(&tiff.Directory{Fields: f, OffsetsTag: tiff.TagTileOffsets, CountsTag: tiff.TagTileByteCounts, Blocks: blocks}))
	require.NoError(t, w.Close())
	require.NoError(t, h.Commit())
	return h.Bytes()
}

// TestConvertRefusedAlone: refusals of the output or of a codec's flags
// come alone on stderr, and name the flag and the output's codec: a link
// to nothing as the output, a missing directory, -quality for a Deflate
// copy (the writer's refusal named its Quality option and LZW), -level
// with every level copied (said not to apply, then refused for it once).
// A JPEG source is not decoded first.
func TestConvertRefusedAlone(t *testing.T) {
	dir := t.TempDir()
	deflate := filepath.Join(dir, "deflate.ome.tif")
	writeTiled(t, deflate, pyramid.Options{TileSize: 64, Compression: pyramid.Deflate, Predictor: pyramid.PredictorHorizontal, Levels: 2})
	jpegTIFF := filepath.Join(dir, "jpeg.ome.tif")
	writeJPEGSource(t, jpegTIFF)
	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 64, 64)), nil))
	broken := writeFile(t, dir, "broken.jpg", jpg.Bytes()[:100]) // a decode error, were it read
	dangling := filepath.Join(dir, "dangling.ome.tif")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), dangling))
	out := filepath.Join(dir, "out.ome.tif")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string // the whole of it
	}{
		{"a link to nothing", []string{broken, dangling}, 1, dangling + " exists (use -force to replace it)"},
		{"a link to nothing, TIFF", []string{deflate, dangling}, 1, dangling + " exists (use -force to replace it)"},
		{"no directory", []string{broken, filepath.Join(dir, "none", "x.ome.tif")}, 1,
			filepath.Join(dir, "none", "x.ome.tif") + ": its directory, " + filepath.Join(dir, "none") + ", does not exist"},
		// As the system resolves it: no directory, whatever cleaning the
		// path as text gives (dir).
		{"no directory, then ..", []string{deflate, dir + "/none/../x.ome.tif"}, 1,
			dir + "/none/../x.ome.tif: its directory, " + dir + "/none/.., does not exist"},
		{"standard input", []string{"-", out}, 2, "-: standard input is not read as such: name the input file (a PNG, JPEG or raw input may be /dev/stdin)"},
		{"-quality, Deflate copied", []string{"-quality", "50", deflate, out}, 2,
			"-quality 50 is JPEG's: give -compression jpeg (the output is Deflate)"},
		{"-quality, a JPEG read", []string{"-quality", "50", broken, out}, 2,
			"-quality 50 is JPEG's: give -compression jpeg (the output is LZW)"},
		{"-jpeg-color", []string{"-jpeg-color", "rgb", deflate, out}, 2,
			"-jpeg-color rgb is JPEG's: give -compression jpeg (the output is Deflate)"},
		{"-level, -compression lzw", []string{"-compression", "lzw", "-level", "5", broken, out}, 2,
			"-level 5 is Deflate's or Zstd's: -compression lzw takes no -level"},
		{"-quality, -compression none", []string{"-compression", "none", "-quality", "90", deflate, out}, 2,
			"-quality 90 is JPEG's: -compression none takes no -quality"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := clitest.Run(runConvert, tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Equal(t, "ometiff convert: "+tc.stderr+"\n", stderr)
		})
	}
	// JPEG tiles and their level, all copied: -level applies to nothing.
	pyr := filepath.Join(dir, "pyr.ome.tif")
	w, err := pyramid.Create(pyr, pyramid.Options{TileSize: 32, Compression: pyramid.JPEG, Levels: 2})
	require.NoError(t, err)
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 80, SizeY: 60, SamplesPerPixel: 3})
	require.NoError(t, err)
	require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, im.PlaneBytes())))
	require.NoError(t, w.Close())
	code, _, stderr := clitest.Run(runConvert, "-copy-levels", "-level", "3", pyr, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: -level does not apply: the source's 1 reduced level is copied\n")
	// Encoded again, its JPEG tiles lose more: said, with the qualities.
	code, _, stderr = clitest.Run(runConvert, "-force", "-compression", "jpeg", "-quality", "60", pyr, out)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, fmt.Sprintf("ometiff convert: %s: image 0: its JPEG tiles are decoded and encoded again at quality 60 (the source's: %d); "+
		"without -compression they are copied\n", pyr, compress.DefaultJPEGQuality), stderr)
	// Nor does -quality with every level of an LZW pyramid copied.
	lzwPyr := filepath.Join(dir, "lzw-pyr.ome.tif")
	writeTiled(t, lzwPyr, pyramid.Options{TileSize: 64, Compression: pyramid.LZW, Predictor: pyramid.PredictorHorizontal, Levels: 2})
	code, _, stderr = clitest.Run(runConvert, "-copy-levels", "-quality", "80", lzwPyr, filepath.Join(dir, "lzw-out.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: -quality does not apply: the source's 1 reduced level is copied\n")

	// Raw samples that start as a TIFF does are raw: -quality is refused
	// alone, naming the flag, before they are read.
	raw := writeFile(t, dir, "raw.bin", append([]byte("II*\x00"), make([]byte, 16*16-4)...))
	code, _, stderr = clitest.Run(runConvert, "-raw-width", "16", "-raw-height", "16", "-quality", "50", raw, filepath.Join(dir, "raw.ome.tif"))
	assert.Equal(t, 2, code)
	assert.Equal(t, "ometiff convert: -quality 50 is JPEG's: give -compression jpeg (the output is LZW)\n", stderr)

}

// TestChromaLost: 4:2:0 loses the chroma of sources subsampled less than
// it, and of none subsampled as much or more.
func TestChromaLost(t *testing.T) {
	for sub, lost := range map[[2]int]bool{{1, 1}: true, {2, 1}: true, {1, 2}: true, {2, 2}: false, {4, 1}: false, {4, 2}: false, {2, 4}: false, {4, 4}: false} {
		c := pyramid.TileCoding{Photometric: tiff.PhotometricYCbCr, YCbCrSubSampling: sub}
		assert.Equal(t, lost, chromaLost(c, pyramid.Coding{}) != "", "%v", sub)
		assert.Empty(t, chromaLost(c, pyramid.Coding{JPEGColor: pyramid.JPEGRGB}), "%v, RGB-coded", sub)
	}
	assert.Empty(t, chromaLost(pyramid.TileCoding{Photometric: tiff.PhotometricRGB}, pyramid.Coding{}))
}

// TestConvertNDPI: an NDPI's restart intervals, read as tiles, are never
// copied (not square, or of 8 rows at 4:4:4 or gray): the slide is
// encoded again in JPEG at its quality, never in LZW many times its size,
// and -compression jpeg says so without promising a copy.
func TestConvertNDPI(t *testing.T) {
	dir := t.TempDir()
	rgb := ndpitest.Pattern(128, 64, 0)
	gray := make([]byte, 128*64)
	for i := range gray {
		gray[i] = rgb[3*i]
	}
	write := func(name string, p ndpitest.Page) string {
		file, err := ndpitest.File(p, ndpitest.Page{Width: 48, Height: 16, RGB: ndpitest.Pattern(48, 16, 1), Magnification: -1})
		require.NoError(t, err)
		return writeFile(t, dir, name, file)
	}
	color := write("rgb.ndpi", ndpitest.Page{Width: 128, Height: 64, RGB: rgb, Interval: 2, Magnification: 20})
	mono := write("gray.ndpi", ndpitest.Page{Width: 128, Height: 64, RGB: gray, Gray: true, Interval: 4, Magnification: 20})
	code, stdout, stderr := clitest.Run(runInfo, color, mono)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "  JPEG tiles of 32 x 16, encoded again in JPEG by convert (it copies square tiles of 32 to 1024)\n")
	assert.Contains(t, stdout, "  JPEG tiles of 32 x 8, encoded again in JPEG by convert (their sides are not multiples of 16)\n")
	for _, tc := range []struct {
		name, in string
		args     []string
		stderr   string
	}{
		{"RGB", color, nil, "image 0: encoded again as JPEG at quality 90: the source's are 32 x 16, and the writer's square\n"},
		{"gray", mono, nil, "image 0: encoded again as JPEG at quality 90: the source's are 32 x 8, not multiples of 16\n"},
		{"-compression jpeg", color, []string{"-compression", "jpeg"}, "image 0: its JPEG tiles are decoded and encoded again at quality 75 (the source's: 90)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".ome.tif")
			code, _, stderr := clitest.Run(runConvert, append(tc.args, tc.in, out)...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stderr, tc.stderr)
			assert.NotContains(t, stderr, "copied through")
			assert.NotContains(t, stderr, "they are copied")
			f, err := tiff.Open(out)
			require.NoError(t, err)
			defer f.Close()
			c, _ := f.Pages[0].Uint(tiff.TagCompression)
			assert.Equal(t, uint64(tiff.CompressionJPEG), c, "the slide stays JPEG")
		})
	}
}

// TestConvertSparseBomb: a TIFF of empty tiles (sparse) decoding to over
// 1024 times its size and 256 MiB is refused as a decompression bomb,
// saying which flag converts it; ometiff info describes it and says so;
// -max-decode-ratio 0 (a trusted file) converts it, its empty tiles as
// zeros.
func TestConvertSparseBomb(t *testing.T) {
	const width, height, tile = 65 * 256, 64 * 256, 256 // 272 MB decoded, a 99 KB file
	data := tiledTIFF(t, binary.LittleEndian, width, height, tile, 8, func(tx, ty int) []byte {
		if tx != 0 || ty != 0 {
			return nil
		}
		return bytes.Repeat([]byte{7}, tile*tile)
	})
	dir := t.TempDir()
	in, out := filepath.Join(dir, "sparse.tif"), filepath.Join(dir, "out.ome.tif")
	require.NoError(t, os.WriteFile(in, data, 0o644))
	const bomb = "source: decompression bomb: the images decode to 272629760 bytes or more from 98946 bytes of files, more than 1024 times their size, "
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, bomb, in, "out.ome.tif")
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "and 4159 of their blocks store nothing (sparse: the page at 65552 has one) (-max-decode-ratio 0 converts it, if you trust the file)", in, "out.ome.tif")
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "more than 2000 times their size", "-max-decode-ratio", "2000", in, "out.ome.tif")
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 2, "-max-decode-ratio -1: want 0 (no limit) or more", "-max-decode-ratio", "-1", in, "out.ome.tif")

	code, stdout, stderr := clitest.Run(runInfo, in)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `image 0 "sparse": 16640 x 16384, Z 1 x C 1 x T 1, XYCZT, uint8, page 0`)
	assert.Contains(t, stdout, "not converted (convert goes on only with -max-decode-ratio 0, for a trusted file): "+bomb)

	code, _, stderr = clitest.Run(runConvert, "-max-decode-ratio", "0", in, out)
	require.Equal(t, 0, code, stderr)
	f, err := source.Open(out, source.Options{})
	require.NoError(t, err)
	defer f.Close()
	r, err := source.NewBandReader(context.Background(), f.Images[0].Planes[0].Page, source.Options{Rows: 256})
	require.NoError(t, err)
	defer r.Close()
	_, band, err := r.Next()
	require.NoError(t, err)
	want := make([]byte, width*tile)
	for y := range tile {
		copy(want[y*width:y*width+tile], bytes.Repeat([]byte{7}, tile))
	}
	assert.True(t, bytes.Equal(want, band), "the first band: the tile stored, then zeros")
}

// TestFlagsThatDoNotApply: -predictor with JPEG tiles copied, and
// -copy-levels with an input that is no TIFF, are said not to apply (they
// were taken without a word).
func TestFlagsThatDoNotApply(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "ycbcr.ome.tif")
	writeJPEGSource(t, in)
	code, _, stderr := clitest.Run(runConvert, "-predictor", "horizontal", in, filepath.Join(dir, "out.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: -predictor horizontal does not apply: JPEG tiles take no predictor")

	png := writeFile(t, dir, "in.png", encoded(t, nrgbaImage(8, 8, false), encodePNG))
	code, _, stderr = clitest.Run(runConvert, "-copy-levels", png, filepath.Join(dir, "png.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "in.png: -copy-levels does not apply: the input is no TIFF, whose levels it copies")
}

// TestConvertBandPastFileBound: with -max-memory 0 (no limit) and
// -max-decode-ratio 0 (a trusted file), a band is bounded by 1000 times
// the file's size; one past it (a strip of 400 MB of Zstd zeros in a file
// of 300 KB) is refused naming the remedy, which there was none of.
func TestConvertBandPastFileBound(t *testing.T) {
	const side = 20000
	zstd, err := compress.NewCodec(tiff.CompressionZstd, 1)
	require.NoError(t, err)
	strip, err := zstd.Encode(nil, make([]byte, side*side))
	require.NoError(t, err)
	// A file of the strip alone is small: its bound is the reader's
	// default, 256 MiB, which it was told -max-memory above raises though
	// -max-memory 0 was given.
	for _, tt := range []struct {
		name string
		bulk bool // a page of 300 KB, making the file's thousand times its size more than 256 MiB
		msg  string
	}{
		{"large file", true, "(with -max-memory 0, a band takes at most 1000 times the file's size; a -max-memory above the band reads it)"},
		{"small file", false, "(with -max-memory 0, a band takes at most 256.0 MiB (more than 1000 times the file's size); a -max-memory above the band reads it)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := iohandle.NewMemory()
			w, err := tiff.NewWriter(h, tiff.Options{})
			require.NoError(t, err)
			page := func(width, height int, compression uint16, data []byte) {
				b, err := w.WriteBlock(data)
				require.NoError(t, err)
				f := &ifd.Builder{}
				f.AddUint(tiff.TagImageWidth, uint64(width))
				f.AddUint(tiff.TagImageLength, uint64(height))
				f.AddShort(tiff.TagBitsPerSample, 8)
				f.AddShort(tiff.TagCompression, compression)
				f.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricBlackIsZero)
				f.AddUint(tiff.TagRowsPerStrip, uint64(height))
				require.NoError(t, w.AddDirectory(&tiff.Directory{Fields: f, OffsetsTag: tiff.TagStripOffsets, CountsTag: tiff.TagStripByteCounts, Blocks: []tiff.Block{b}}))
			}
			page(side, side, tiff.CompressionZstd, strip)
			if tt.bulk {
				page(600, 500, tiff.CompressionNone, bytes.Repeat([]byte{1, 2, 3, 4, 5}, 600*100))
			}
			require.NoError(t, w.Close())
			require.NoError(t, h.Commit())
			in := writeFile(t, t.TempDir(), "strip.tif", h.Bytes())
			clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, tt.msg,
				"-max-memory", "0", "-max-decode-ratio", "0", in, "out.ome.tif")
		})
	}
}

// TestCopyLevelsHonoursLevels: with -copy-levels, -levels N copies the
// first N of the source's levels, the full resolution included (it said
// "-levels does not apply" and copied them all), and says so when the
// source has fewer; -jpeg-color, which encodes every level again, says
// -copy-levels does not apply, as another -tile does.
func TestCopyLevelsHonoursLevels(t *testing.T) {
	dir := t.TempDir()
	lzw := filepath.Join(dir, "lzw.ome.tif") // 3 levels
	writeTiled(t, lzw, pyramid.Options{TileSize: 64, Compression: pyramid.LZW, Predictor: pyramid.PredictorHorizontal})
	jpg := filepath.Join(dir, "ycbcr.ome.tif")
	writeJPEGSource(t, jpg)
	for _, tt := range []struct {
		name   string
		args   []string
		levels int // of the output's first image
		stderr string
	}{
		{"-levels 1", []string{"-levels", "1", lzw}, 1, "image 0: LZW tiles of 64 x 64 copied through, no reduced levels (-levels 1)"},
		{"-levels 2", []string{"-levels", "2", lzw}, 2, "image 0: LZW tiles of 64 x 64 copied through, 1 level copied"},
		{"-levels 3", []string{"-levels", "3", lzw}, 3, "image 0: LZW tiles of 64 x 64 copied through, 2 levels copied"},
		{"-levels past the source's", []string{"-levels", "5", lzw}, 3, "image 0: -levels 5: the source has 3 levels, all copied (none is computed past them)\n"},
		{"-jpeg-color", []string{"-jpeg-color", "rgb", jpg}, 0, "-jpeg-color rgb, the source's are YCbCr; -copy-levels does not apply\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.ome.tif")
			code, _, stderr := clitest.Run(runConvert, append([]string{"-copy-levels"}, append(tt.args, out)...)...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stderr, tt.stderr)
			assert.NotContains(t, stderr, "does not apply: the source's")
			if tt.levels == 0 {
				return
			}
			f, err := tiff.Open(out)
			require.NoError(t, err)
			defer f.Close()
			assert.Len(t, f.Pages[0].SubIFDs, tt.levels-1, "reduced levels")
		})
	}
}
