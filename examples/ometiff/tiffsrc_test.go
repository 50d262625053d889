package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// page is one uncompressed page of a test TIFF: its size, samples of
// bits each, photometric interpretation, description and pixels
// (little-endian samples, interleaved; a pattern of seed when nil).
type page struct {
	width, height, samples, bits int
	photometric                  uint16
	description                  string
	subfile                      uint32
	orientation                  uint16             // written when not 0
	sampleFormat                 uint16             // written when not 0
	compression                  uint16             // said (the data stays raw); none when 0
	icc                          []byte             // an ICC profile, written when set
	more                         func(*ifd.Builder) // other fields, when set
	seed                         int
	pix                          []byte
}

// pixels returns the page's pixels.
func (p page) pixels() []byte {
	if p.pix != nil {
		return p.pix
	}
	out := make([]byte, p.width*p.height*p.samples*p.bits/8)
	for i := range out {
		out[i] = byte(i*7 + i/251 + p.seed*37)
	}
	return out
}

// writeTIFF writes the pages, each one uncompressed strip, into a
// little-endian classic TIFF at path.
func writeTIFF(t *testing.T, path string, pages ...page) {
	t.Helper()
	writeTIFFWith(t, path, tiff.Options{}, pages...)
}

// writeTIFFWith is writeTIFF with the tiff writer's options.
func writeTIFFWith(t *testing.T, path string, opts tiff.Options, pages ...page) {
	t.Helper()
	h := iohandle.NewMemory()
	w, err := tiff.NewWriter(h, opts)
	require.NoError(t, err)
	for _, p := range pages {
		b, err := w.WriteBlock(p.pixels())
		require.NoError(t, err)
		f := &ifd.Builder{}
		if p.subfile != 0 {
			f.AddLong(tiff.TagNewSubfileType, p.subfile)
		}
		f.AddUint(tiff.TagImageWidth, uint64(p.width))
		f.AddUint(tiff.TagImageLength, uint64(p.height))
		bits := make([]uint16, p.samples)
		for i := range bits {
			bits[i] = uint16(p.bits)
		}
		f.AddShort(tiff.TagBitsPerSample, bits...)
		f.AddShort(tiff.TagCompression, max(p.compression, tiff.CompressionNone))
		f.AddShort(tiff.TagPhotometricInterpretation, p.photometric)
		if p.description != "" {
			f.AddASCII(tiff.TagImageDescription, p.description)
		}
		if p.orientation != 0 {
			f.AddShort(tiff.TagOrientation, p.orientation)
		}
		if p.sampleFormat != 0 {
			f.AddShort(tiff.TagSampleFormat, p.sampleFormat)
		}
		if p.icc != nil {
			f.AddByte(tiff.TagICCProfile, p.icc...)
		}
		if p.more != nil {
			p.more(f)
		}
		f.AddShort(tiff.TagSamplesPerPixel, uint16(p.samples))
		f.AddUint(tiff.TagRowsPerStrip, uint64(p.height))
		if p.photometric == tiff.PhotometricPalette { // colours, not grays
			n := 1 << p.bits
			cmap := make([]uint16, 3*n)
			for i := range n {
				cmap[i], cmap[n+i], cmap[2*n+i] = uint16(i*4099), uint16(i*257), uint16(0xffff-i)
			}
			f.AddShort(tiff.TagColorMap, cmap...)
		}
		require.NoError(t, w.AddDirectory(&tiff.Directory{Fields: f, OffsetsTag: tiff.TagStripOffsets, CountsTag: tiff.TagStripByteCounts, Blocks: []tiff.Block{b}}))
	}
	require.NoError(t, w.Close())
	require.NoError(t, h.Commit())
	require.NoError(t, os.WriteFile(path, h.Bytes(), 0o644))
}

// writeImageJStack writes n 8 x 6 uint8 planes as ImageJ writes stacks
// past 4 GiB: one directory, along Z, each plane's data after the last's.
func writeImageJStack(t *testing.T, path string, n int) {
	t.Helper()
	h := iohandle.NewMemory()
	w, err := tiff.NewWriter(h, tiff.Options{})
	require.NoError(t, err)
	b, err := w.WriteBlock(make([]byte, 8*6*n))
	require.NoError(t, err)
	f := &ifd.Builder{}
	f.AddUint(tiff.TagImageWidth, 8)
	f.AddUint(tiff.TagImageLength, 6)
	f.AddShort(tiff.TagBitsPerSample, 8)
	f.AddShort(tiff.TagCompression, tiff.CompressionNone)
	f.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricBlackIsZero)
	f.AddASCII(tiff.TagImageDescription, "ImageJ=1.54f\nimages="+strconv.Itoa(n)+"\nslices="+strconv.Itoa(n)+"\n")
	f.AddUint(tiff.TagRowsPerStrip, 6)
	b.Size = 8 * 6
	require.NoError(t, w.AddDirectory(&tiff.Directory{Fields: f, OffsetsTag: tiff.TagStripOffsets, CountsTag: tiff.TagStripByteCounts, Blocks: []tiff.Block{b}}))
	require.NoError(t, w.Close())
	require.NoError(t, h.Commit())
	require.NoError(t, os.WriteFile(path, h.Bytes(), 0o644))
}

// split returns sample s of interleaved pixels of n samples of size bytes.
func split(pix []byte, n, size, s int) []byte {
	var out []byte
	for i := s * size; i < len(pix); i += n * size {
		out = append(out, pix[i:i+size]...)
	}
	return out
}

// TestConvertTIFF converts TIFF files of several layouts: every plane of
// every image comes out, in the order of the mapping, equal to its page
// (or to its sample, for samples that are channels).
func TestConvertTIFF(t *testing.T) {
	gray := page{width: 30, height: 20, samples: 1, bits: 16, photometric: tiff.PhotometricBlackIsZero}
	rgb := page{width: 17, height: 9, samples: 3, bits: 8, photometric: tiff.PhotometricRGB}
	rgba := page{width: 12, height: 10, samples: 4, bits: 8, photometric: tiff.PhotometricRGB}
	reduced := gray
	reduced.width, reduced.height, reduced.subfile = 15, 10, tiff.SubfileReducedImage
	with := func(p page, seed int) page { p.seed = seed; return p }
	tests := []struct {
		name   string
		pages  []page
		wants  []string // in stdout
		planes [][]byte // the output's, in order
	}{
		{"pages along T", []page{with(gray, 1), with(gray, 2), reduced, with(gray, 3)},
			[]string{"wrote ", ": 30 x 20 uint16, Z 1 x C 1 x T 3,"},
			[][]byte{with(gray, 1).pixels(), with(gray, 2).pixels(), with(gray, 3).pixels()}},
		{"three images", []page{gray, rgb, with(gray, 4)},
			[]string{": 2 images, 3 planes,", `image 0 "in": 30 x 20 uint16, Z 1 x C 1 x T 2`, `image 1 "in #1": 17 x 9 RGB uint8, Z 1 x C 1 x T 1`},
			[][]byte{gray.pixels(), with(gray, 4).pixels(), rgb.pixels()}},
		{"RGBA as four channels", []page{rgba},
			[]string{": 12 x 10 uint8, Z 1 x C 4 x T 1,"},
			[][]byte{split(rgba.pixels(), 4, 1, 0), split(rgba.pixels(), 4, 1, 1), split(rgba.pixels(), 4, 1, 2), split(rgba.pixels(), 4, 1, 3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			input := filepath.Join(dir, "in.tif")
			writeTIFF(t, input, tt.pages...)
			output := filepath.Join(dir, "out.ome.tif")
			code, stdout, stderr := clitest.Run(runConvert, "-compression", "deflate", "-tile", "16", input, output)
			require.Equal(t, 0, code, stderr)
			assert.Empty(t, stderr)
			for _, want := range tt.wants {
				assert.Contains(t, stdout, want)
			}
			got := clitest.Planes(t, output)
			require.Len(t, got, len(tt.planes))
			for i := range got {
				assert.True(t, bytes.Equal(tt.planes[i], got[i].Pix), "plane %d", i)
			}
		})
	}
}

// TestConvertWhiteIsZero: the values of a page stored white-is-zero are
// kept, as tifffile reads them, and the conversion says viewers will show
// the image inverted.
func TestConvertWhiteIsZero(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.tif")
	white := page{width: 30, height: 20, samples: 1, bits: 8, photometric: tiff.PhotometricWhiteIsZero}
	writeTIFF(t, input, white, white)
	output := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-compression", "none", input, output)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, convertName+": "+input+": image 0: stored white-is-zero (PhotometricInterpretation 0): its values are kept, so viewers show it inverted\n", stderr)
	for _, p := range clitest.Planes(t, output) {
		assert.True(t, bytes.Equal(white.pixels(), p.Pix))
	}
}

// TestPixelNotes: what convert says of how pixels are written (stored
// white-is-zero, inks, an ICC profile, 2-bit samples, an Orientation not
// applied), ometiff info says too, as notes of the image.
func TestPixelNotes(t *testing.T) {
	orientation := func(b *ifd.Builder) { b.AddShort(tiff.TagOrientation, 3) }
	for _, tt := range []struct {
		name string
		page page
		note string
	}{
		{"white-is-zero", page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricWhiteIsZero},
			"stored white-is-zero (PhotometricInterpretation 0): its values are kept, so viewers show it inverted"},
		{"CMYK", page{width: 8, height: 6, samples: 4, bits: 8, photometric: tiff.PhotometricSeparated},
			"stored as inks (PhotometricInterpretation 5, CMYK): its samples are kept as channels, not made RGB"},
		{"other inks", page{width: 8, height: 6, samples: 5, bits: 8, photometric: tiff.PhotometricSeparated, more: func(b *ifd.Builder) { b.AddShort(tiff.TagInkSet, 2) }},
			"stored as inks (PhotometricInterpretation 5, 5 inks, not CMYK): its samples are kept as channels, not made RGB"},
		{"ICC profile", page{width: 8, height: 6, samples: 3, bits: 8, photometric: tiff.PhotometricRGB, icc: []byte("an ICC profile")},
			"its ICC colour profile is not kept (OME has no field for it)"},
		{"2-bit samples", page{width: 8, height: 6, samples: 1, bits: 2, photometric: tiff.PhotometricBlackIsZero},
			"2-bit samples are written as uint8, their values as stored (0-3), as tifffile reads them"},
		{"orientation", page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, more: orientation},
			"Orientation 3 is not applied: the pixels are written as stored, as tifffile and Bio-Formats read them"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			input := filepath.Join(dir, "in.tif")
			writeTIFF(t, input, tt.page)
			code, _, stderr := clitest.Run(runConvert, input, filepath.Join(dir, "out.ome.tif"))
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stderr, convertName+": "+input+": image 0: "+tt.note+"\n")
			code, stdout, stderr := clitest.Run(runInfo, input)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "  note: "+tt.note+"\n")
		})
	}
}

// TestConvertTIFFMetadata converts an OME-TIFF of two images: the
// output's OME-XML keeps their names, channels and physical sizes, and
// the metadata flags override the first image's.
func TestConvertTIFFMetadata(t *testing.T) {
	dir := t.TempDir()
	input := writeOMETIFF(t, dir)
	output := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, input, output)
	require.Equal(t, 0, code, stderr)
	d := clitest.Describe(t, output, pyramid.InspectOptions{})
	for _, want := range []string{`"cells": 100 x 80, Z 1, C 2, T 1, uint16`, `channel 0 "DAPI"`, `channel 1 "FITC"`, `"overview": 40 x 30, Z 1, C 3, T 1, uint8`} {
		assert.Contains(t, d, want)
	}

	code, stdout, stderr := clitest.Run(runConvert, "-force", "-name", "nuclei", "-channels", "Hoechst,", "-physical-size", "0.3", input, output)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `  image 0 "nuclei": 100 x 80 uint16, Z 1 x C 2 x T 1, pixel 0.3 µm`+"\n", "the summary says the pixel size")
	d = clitest.Describe(t, output, pyramid.InspectOptions{})
	for _, want := range []string{`"nuclei": 100 x 80, Z 1, C 2, T 1, uint16, XYZCT, 2 planes in TiffData, pixel 0.3 µm x 0.3 µm`,
		`channel 0 "Hoechst"`, `channel 1 "FITC"`, `"overview": 40 x 30`} {
		assert.Contains(t, d, want)
	}
}

// TestNameNamesTheFirstImage: -name names the first image; the others
// without a name keep the input's, as ometiff info lists them (they took
// -name's, and -name ” made " #1").
func TestNameNamesTheFirstImage(t *testing.T) {
	dir := t.TempDir()
	input, output := filepath.Join(dir, "two.tif"), filepath.Join(dir, "out.ome.tif")
	writeTIFF(t, input, page{width: 16, height: 16, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero},
		page{width: 8, height: 8, samples: 1, bits: 16, photometric: tiff.PhotometricBlackIsZero})
	code, stdout, stderr := clitest.Run(runInfo, input)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `image 1 "two #1"`)
	for name, first := range map[string]string{"foo": "foo", "": "two"} { // an empty name: the input's
		code, _, stderr = clitest.Run(runConvert, "-force", "-name", name, input, output)
		require.Equal(t, 0, code, stderr)
		d := clitest.Describe(t, output, pyramid.InspectOptions{})
		assert.Contains(t, d, fmt.Sprintf(`%q: 16 x 16`, first))
		assert.Contains(t, d, `"two #1": 8 x 8`, "-name %q", name)
	}
}

// TestBandBytesOfHugeHeights: the bands of a plane of any height are at
// most three rows of tiles (a height near 2^63 wrapped the rounding, and
// an image of 1-pixel rows "needed" 8 million TiB).
func TestBandBytesOfHugeHeights(t *testing.T) {
	assert.Equal(t, int64(3*256*1*1), limits{}.bandBytes(1, math.MaxInt, 1))
	assert.Equal(t, int64(3*16*10*2), limits{}.bandBytes(10, 5, 2), "below a tile: the height rounded to 16")
}

// TestConvertUnsupportedTIFF checks that a TIFF page the output cannot
// carry is refused, leaving no file, and with -skip-unsupported left out
// and reported, the rest converted.
func TestConvertUnsupportedTIFF(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.tif")
	gray := page{width: 8, height: 8, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero}
	lab := page{width: 8, height: 8, samples: 1, bits: 8, photometric: 8} // CIELab
	writeTIFF(t, input, gray, lab, gray)
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "page 1: source: unsupported layout: PhotometricInterpretation 8", input, "out.ome.tif")
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "of the page at 322 (-skip-unsupported converts the rest)\n", input, "out.ome.tif")

	output := filepath.Join(dir, "out.ome.tif")
	code, stdout, stderr := clitest.Run(runConvert, "-skip-unsupported", input, output)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, convertName+": "+input+": left out (-skip-unsupported): page 1: source: unsupported layout: PhotometricInterpretation 8 of the page at 322\n", stderr)
	assert.Contains(t, stdout, ": 8 x 8 uint8, Z 1 x C 1 x T 2,")

	// The refusal suggests the flag whatever the package of the error
	// (the complex samples are tiff's), and -images converts the images
	// selected, numbered as ometiff info numbers them: the page left out
	// is in no selection.
	mixed := filepath.Join(dir, "mixed.tif")
	complexPage := page{width: 10, height: 10, samples: 1, bits: 64, photometric: tiff.PhotometricBlackIsZero, sampleFormat: 6}
	wide := page{width: 12, height: 8, samples: 1, bits: 16, photometric: tiff.PhotometricBlackIsZero}
	writeTIFF(t, mixed, gray, complexPage, wide)
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "(complex float) (-skip-unsupported, or -images naming images ometiff info lists, converts the rest)\n", mixed, "out.ome.tif")
	code, stdout, stderr = clitest.Run(runInfo, mixed)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `image 1 "mixed #1": 12 x 8`)
	selected := filepath.Join(dir, "selected.ome.tif")
	code, stdout, stderr = clitest.Run(runConvert, "-images", "1", mixed, selected)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, ": 12 x 8 uint16, Z 1 x C 1 x T 1")
	// So with -skip-unsupported: the page left out is not said, its
	// numbering apart from -images's.
	code, stdout, stderr = clitest.Run(runConvert, "-force", "-skip-unsupported", "-images", "1", mixed, selected)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, ": 12 x 8 uint16, Z 1 x C 1 x T 1")
	// What might be left out of the image selected is still refused: a
	// page unread of its size (pages of one shape are planes of one
	// image), or the planes its ImageJ description counts.
	planes := filepath.Join(dir, "planes.tif")
	sameSize := complexPage
	sameSize.width, sameSize.height = gray.width, gray.height
	writeTIFF(t, planes, gray, sameSize, wide)
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "(complex float) (-skip-unsupported converts the rest)\n", "-images", "0", planes, "out.ome.tif")
	short := filepath.Join(dir, "short.tif")
	imagej := gray
	imagej.description = "ImageJ=1.54f\nimages=3\nslices=3\n"
	writeTIFF(t, short, imagej, gray)
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "says 3 planes", "-images", "0", short, "out.ome.tif")

	// With nothing left, the refusal says why, and does not suggest the
	// flag that was given.
	only := filepath.Join(dir, "lab.tif")
	writeTIFF(t, only, lab, lab)
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1,
		"no image of the file can be read: page 0: source: unsupported layout: PhotometricInterpretation 8", "-skip-unsupported", only, "out.ome.tif")
	_, _, stderr = clitest.Run(runConvert, "-skip-unsupported", only, filepath.Join(dir, "none.ome.tif"))
	assert.NotContains(t, stderr, "(-skip-unsupported converts the rest)")
	// Nor is it suggested without the flag, since it would leave nothing.
	code, _, stderr = clitest.Run(runConvert, only, filepath.Join(dir, "none.ome.tif"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "PhotometricInterpretation 8")
	assert.NotContains(t, stderr, "-skip-unsupported")
}

// TestConvertPaletteTIFF converts a palette TIFF that
// golang.org/x/image/tiff wrote: its colours are written as RGB, as that
// package decodes them.
func TestConvertPaletteTIFF(t *testing.T) {
	data := encoded(t, palettedImage(31, 29), encodeTIFF)
	dir := t.TempDir()
	input := writeFile(t, dir, "palette.tif", data)
	output := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-compression", "none", input, output)
	require.Equal(t, 0, code, stderr)
	note := "a palette image: the colours of its ColorMap are written, as libvips reads it, not its indices, which tifffile and Bio-Formats give"
	assert.Equal(t, convertName+": "+input+": image 0: "+note+"\n", stderr)
	code, stdout, stderr := clitest.Run(runInfo, input)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "TIFF, 1 image, 1 plane\nimage 0 \"palette\": 31 x 29, Z 1 x C 1 x T 1, XYCZT, RGB uint8, page 0\n  note: "+note+"\n  pixel 352.77777 µm x 352.77777 µm\n", stdout,
		"info says what convert does")
	decoded, _, err := image.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	_, _, want := wantPixels(decoded)
	assert.True(t, bytes.Equal(want, clitest.Planes(t, output)[0].Pix))
}

// TestConvertTranslucentTIFF converts an RGBA TIFF written by x/image/tiff
// (premultiplied, associated alpha): its four samples are four channels,
// as stored.
func TestConvertTranslucentTIFF(t *testing.T) {
	img := premultipliedImage(45, 20).(*image.RGBA)
	dir := t.TempDir()
	input := writeFile(t, dir, "rgba.tiff", encoded(t, img, encodeTIFF))
	output := filepath.Join(dir, "out.ome.tif")
	code, stdout, stderr := clitest.Run(runConvert, "-compression", "none", input, output)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "45 x 20 uint8, Z 1 x C 4 x T 1")
	planes := clitest.Planes(t, output)
	require.Len(t, planes, 4)
	for c := range 4 {
		assert.True(t, bytes.Equal(split(img.Pix, 4, 1, c), planes[c].Pix), "channel %d", c)
	}
}

func TestIsTIFF(t *testing.T) {
	for _, head := range []string{"II*\x00", "MM\x00*", "II+\x00", "MM\x00+"} {
		assert.True(t, isTIFF([]byte(head+"rest")), "%q", head)
	}
	for _, head := range []string{"", "II", "II*\x01", "\x89PNG", "MM*\x00"} {
		assert.False(t, isTIFF([]byte(head)), "%q", head)
	}
}

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{"a/b/slide.svs": "slide", "x.ome.tif": "x", "x.OME.TIFF": "x", "y.tar.gz": "y.tar", "plain": "plain"} {
		assert.Equal(t, want, baseName(in), in)
	}
}

// TestProgressCountsEveryImage converts a TIFF of three images: the
// first progress the writer reports already counts the tiles of all of
// them, and the last has written them all.
func TestProgressCountsEveryImage(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.tif")
	gray := page{width: 100, height: 60, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero}
	rgb := page{width: 50, height: 50, samples: 3, bits: 8, photometric: tiff.PhotometricRGB}
	writeTIFF(t, input, gray, gray, rgb, page{width: 20, height: 20, samples: 2, bits: 16, photometric: tiff.PhotometricBlackIsZero})
	cfg, err := parseArgs([]string{"-tile", "16", input, filepath.Join(dir, "out.ome.tif")}, io.Discard)
	require.NoError(t, err)
	var seen []pyramid.Progress
	cfg.options.Progress = func(p pyramid.Progress) { seen = append(seen, p) }
	specs, err := convert(context.Background(), cfg, io.Discard)
	require.NoError(t, err)
	require.Len(t, specs, 3)
	require.NotEmpty(t, seen)
	// Tiles of 16 x 16: 100 x 60 is 7 x 4 tiles, then 4 x 2, 2 x 1 and 1;
	// 50 x 50 is 4 x 4, 2 x 2 and 1; 20 x 20 is 2 x 2 and 1.
	total := int64(2*(28+8+2+1) + (16 + 4 + 1) + 2*(4+1))
	assert.Equal(t, total, seen[0].TotalTiles, "the first report counts every image's tiles")
	assert.Equal(t, total, seen[len(seen)-1].Tiles)
}

// TestStripTallerThanTile: an image whose strip is taller than the tile
// (a whole scan in one strip) is decoded a strip at a time whatever
// -tile says: the refusal over -max-memory says so, not to lower -tile;
// a -max-memory above the reader's bound on a band raises that bound.
func TestStripTallerThanTile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "strip.tif")
	writeTIFF(t, path, page{width: 64, height: 600, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero})
	code, _, stderr := clitest.Run(runConvert, "-max-memory", "100KiB", path, filepath.Join(dir, "out.ome.tif"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "(its blocks are 64 x 600 pixels, each decoded whole at any -tile, and no -tile brings it within: raise -max-memory (0: no limit))")
	in, err := openInput(path)
	require.NoError(t, err)
	defer in.Close()
	for _, tc := range []struct {
		memory byteSize
		want   int64
	}{{0, 0}, {1 << 30, 1 << 30}, {100 << 20, 0}} { // 0: a thousand times the file, when past 256 MiB
		cfg := config{limits: limits{maxMemory: tc.memory}}
		src, ok, err := openTIFF(in, cfg, io.Discard)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, tc.want, src.(*tiffSource).opts.MaxBandBytes, "-max-memory %v", tc.memory)
	}
	// Without a limit, a file that can hold more than the bound, decoded,
	// is allowed a thousand times its size.
	large := filepath.Join(dir, "large.tif")
	writeTIFF(t, large, page{width: 600, height: 500, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero})
	in2, err := openInput(large)
	require.NoError(t, err)
	defer in2.Close()
	src, ok, err := openTIFF(in2, config{}, io.Discard)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 1000*in2.size, src.(*tiffSource).opts.MaxBandBytes)
}

// TestShortWideImage: the memory planned for an image shorter than a
// tile is for its rows, not a tile's (the writer's rounded up to 16): a
// 200000 x 4 RGB image converts within 40 MiB, and is refused within
// 24 MiB, saying how much it needs.
func TestShortWideImage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wide.tif")
	writeTIFF(t, path, page{width: 200000, height: 4, samples: 3, bits: 8, photometric: tiff.PhotometricRGB})
	code, _, stderr := clitest.Run(runConvert, "-max-memory", "40MiB", path, filepath.Join(dir, "out.ome.tif"))
	assert.Equal(t, 0, code, stderr)
	code, _, stderr = clitest.Run(runConvert, "-max-memory", "24MiB", path, filepath.Join(dir, "out2.ome.tif"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "image 0 (200000 x 4) needs about 34.3 MiB for the bands read and written")
}

// TestImagesKeepTheirNames: an image without a name of its own is named
// by its number in the input, as ometiff info lists it, whatever -images
// selects (written in the input's order).
func TestImagesKeepTheirNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "three.tif")
	gray := func(w int) page {
		return page{width: w, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero}
	}
	writeTIFF(t, path, gray(8), gray(16), gray(24))
	code, stdout, stderr := clitest.Run(runInfo, path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `image 2 "three #2"`)
	for _, tt := range []struct {
		images string
		want   []string
	}{{"0,2", []string{"three", "three #2"}}, {"2", []string{"three #2"}}, {"2,1", []string{"three #1", "three #2"}}} {
		out := filepath.Join(dir, "out.ome.tif")
		code, _, stderr := clitest.Run(runConvert, "-force", "-images", tt.images, path, out)
		require.Equal(t, 0, code, stderr)
		var got []string
		for _, m := range regexp.MustCompile(`(?m)"([^"]*)": \d+ x \d+, Z`).FindAllStringSubmatch(clitest.Describe(t, out, pyramid.InspectOptions{}), -1) {
			got = append(got, m[1])
		}
		assert.Equal(t, tt.want, got, "-images %s", tt.images)
	}
}

// TestImagesPastUnselectedMetadata: -images converts the images it names
// when an image it does not name has metadata the output cannot carry
// (here GDAL metadata that does not parse); naming that image, or all,
// is refused without -skip-unsupported.
func TestImagesPastUnselectedMetadata(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "two.tif")
	bad := func(b *ifd.Builder) { b.AddASCII(tiff.TagGDALMetadata, "<GDALMetadata><Item") }
	writeTIFF(t, path, page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, more: bad},
		page{width: 16, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero})
	out := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-images", "1", path, out)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "GDAL", "the image not converted is not spoken of")
	// Without -images, the refusal says which flags go on, as info does.
	code, _, stderr = clitest.Run(runConvert, path, filepath.Join(dir, "all.ome.tif"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "(-skip-unsupported, or -images naming images ometiff info lists, converts the rest)")
	// Of a file of one image, info gives no -images to leave it out.
	one := filepath.Join(dir, "one.tif")
	writeTIFF(t, one, page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, more: bad})
	code, stdout, stderr := clitest.Run(runInfo, one)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "\nmetadata not carried (convert goes on only with -skip-unsupported): ")
	code, _, stderr = clitest.Run(runConvert, one, out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "(-skip-unsupported converts the rest)", "no -images leaves the one image's metadata out")
	for _, images := range [][]string{{"-images", "0"}, nil} {
		code, _, stderr = clitest.Run(runConvert, append(append(images, "-force"), path, out)...)
		assert.Equal(t, 1, code, "%v", images)
		assert.Contains(t, stderr, "GDAL metadata (tag 42112)", "%v", images)
	}
}

// TestTIFFMetadataRefusedIsInput: metadata of a TIFF input that the
// writer refuses is the input's, exit status 1 (it was taken for a bad
// command line, 2), unless flags describe the image.
func TestTIFFMetadataRefusedIsInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.tif")
	writeTIFF(t, path, page{width: 16, height: 16, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero})
	for _, tt := range []struct {
		name string
		set  map[string]bool // the flags given
		code int
	}{
		{"the input's", nil, 1},
		{"a flag's", map[string]bool{"physical-unit": true}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, err := openInput(path)
			require.NoError(t, err)
			defer in.Close()
			src, ok, err := openTIFF(in, config{set: tt.set}, io.Discard)
			require.NoError(t, err)
			require.True(t, ok)
			w, err := pyramid.Create(filepath.Join(dir, "out.ome.tif"), pyramid.Options{})
			require.NoError(t, err)
			defer w.Abort()
			specs := src.specs()
			specs[0].PhysicalSizeX, specs[0].PhysicalSizeXUnit = 1, "furlong"
			_, err = src.write(context.Background(), w, specs)
			require.ErrorIs(t, err, pyramid.ErrMetadata)
			assert.ErrorContains(t, err, path+": image 0")
			assert.Equal(t, tt.code, cli.Exit(convertName, io.Discard, err))
		})
	}
}

// TestMemoryAdviceIsRight: an image refused for -max-memory is advised a
// smaller -tile only when one fits, and that -tile converts it; blocks as
// tall as the tile (JPEG tiles of 1024 copied through) were advised a
// smaller -tile, which was refused again, as any -tile is.
func TestMemoryAdviceIsRight(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "jpeg.ome.tif")
	w, err := pyramid.Create(in, pyramid.Options{TileSize: 1024, Compression: pyramid.JPEG, Levels: 1})
	require.NoError(t, err)
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 8000, SizeY: 1100, PixelType: pyramid.Uint8, SamplesPerPixel: 3})
	require.NoError(t, err)
	require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, im.PlaneBytes())))
	require.NoError(t, w.Close())
	for _, tt := range []struct {
		name   string
		memory string
		tile   string // the -tile advised, which converts; "" when none is
		advice string
	}{
		{"no tile fits", "80MiB", "", "(its blocks are 1024 x 1024 pixels, each decoded whole at any -tile, and no -tile brings it within: raise -max-memory (0: no limit))"},
		{"a smaller tile fits", "130MiB", "336", "(raise it, or give -tile 336 or less)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.ome.tif")
			code, _, stderr := clitest.Run(runConvert, "-max-memory", tt.memory, in, out)
			require.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, tt.advice)
			tile := cmp.Or(tt.tile, "16") // none fits: the smallest is refused too
			code, _, stderr = clitest.Run(runConvert, "-max-memory", tt.memory, "-tile", tile, in, out)
			assert.Equal(t, map[bool]int{true: 0, false: 1}[tt.tile != ""], code, stderr)
		})
	}
}
