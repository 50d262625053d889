package main

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/examples/internal/pngstream/pngtest"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// TestCommands runs the program's commands as the shell would.
func TestCommands(t *testing.T) {
	dir := t.TempDir()
	file := writeOMETIFF(t, dir)
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string // held by each
	}{
		{"no command", nil, 2, "", "ometiff: no command given (run ometiff help for the commands)\n"},
		{"unknown command", []string{"frobnicate"}, 2, "", `ometiff: unknown command "frobnicate"`},
		{"help", []string{"help"}, 0, "usage: ometiff command [flags] [arguments]", ""},
		{"-h", []string{"-h"}, 0, "  convert  convert an image", ""},
		{"help on a command", []string{"help", "inspect"}, 0, "usage: ometiff inspect [-fields] file...", ""},
		{"convert -h", []string{"convert", "-h"}, 0, "usage: ometiff convert [flags] input output.ome.tif", ""},
		{"info", []string{"info", file}, 0, `image 1 "overview": 40 x 30`, ""},
		{"inspect", []string{"inspect", file}, 0, "OME-XML: ", ""},
		{"convert", []string{"convert", file, filepath.Join(dir, "out.ome.tif")}, 0, "wrote ", "image 0: LZW tiles of 64 x 64 copied through"},
		{"convert encoding again", []string{"convert", "-compression", "zstd", file, filepath.Join(dir, "zstd.ome.tif")}, 0, "wrote ", ""},
		{"a bad flag of a command", []string{"info", "-x"}, 2, "", "ometiff info: flag provided but not defined: -x"},
		{"version", []string{"version"}, 0, thisBuildJPEG, ""},
		{"version with an argument", []string{"version", "x"}, 2, "", `ometiff version: unexpected argument "x"`},
		{"version -h", []string{"version", "-h"}, 0, "usage: ometiff version", ""},
		{"help on version", []string{"help", "version"}, 0, "usage: ometiff version", ""},
		{"info -h", []string{"info", "-h"}, 0, "usage: ometiff info file...", ""},
		{"inspect -h", []string{"inspect", "-h"}, 0, "usage: ometiff inspect", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := clitest.Run(run, tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stdout, tt.stdout)
			assert.Contains(t, stderr, tt.stderr)
			if tt.stderr == "" {
				assert.Empty(t, stderr)
			}
		})
	}
}

// fullWriter fails every write, as stdout on a full disk does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestLostOutputFails: a command whose stdout could not be written fails,
// whatever it returned (info, version and help returned 0).
func TestLostOutputFails(t *testing.T) {
	file := writeOMETIFF(t, t.TempDir())
	for _, args := range [][]string{{"help"}, {"version"}, {"info", file}, {"inspect", file}} {
		var stderr strings.Builder
		assert.Equal(t, 1, runChecked(args, fullWriter{}, &stderr), "%v", args)
		assert.Contains(t, stderr.String(), "no space left on device", "%v", args)
	}
	var stdout, stderr strings.Builder
	assert.Equal(t, 0, runChecked([]string{"version"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), thisBuildJPEG)
	assert.Empty(t, stderr.String())
}

// TestInfo describes files of every kind: how their pages map to images,
// and what cannot be converted.
func TestInfo(t *testing.T) {
	dir := t.TempDir()
	ome := writeOMETIFF(t, dir)
	plain := filepath.Join(dir, "plain.tif")
	gray := page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero}
	writeTIFF(t, plain, gray, gray, page{width: 8, height: 6, samples: 2, bits: 16, photometric: tiff.PhotometricBlackIsZero},
		page{width: 8, height: 6, samples: 1, bits: 8, photometric: 8})
	// A CIELab page of a size of its own is an image left out: -images
	// goes on without it.
	apart := filepath.Join(dir, "apart.tif")
	writeTIFF(t, apart, gray, page{width: 4, height: 2, samples: 1, bits: 8, photometric: 8})
	svs := filepath.Join(dir, "slide.svs")
	rgb := func(w, h int, d string) page {
		return page{width: w, height: h, samples: 3, bits: 8, photometric: tiff.PhotometricRGB, description: d}
	}
	writeTIFF(t, svs, rgb(64, 48, "Aperio Image Library v12.0.5\n64x48 [0,0 64x48] (240x240) JPEG/RGB Q=70|AppMag = 20|MPP = 0.5|Date = 01/02/21|Time = 10:11:12"),
		rgb(32, 24, "Aperio Image Library v12.0.5\n64x48 -> 32x24 - |AppMag = 20"), rgb(20, 10, "Aperio Image Library v12.0.5\nlabel 20x10"))
	imagej := filepath.Join(dir, "stack.tif")
	writeImageJStack(t, imagej, 3)
	timed := filepath.Join(dir, "timed.ome.tif") // a pixel width only, and a time step
	writeTIFF(t, timed, page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, description: `<?xml version="1.0" encoding="UTF-8"?>` +
		`<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0" Name="timed"><AcquisitionDate>2024-05-06T07:08:09</AcquisitionDate>` +
		`<Pixels ID="Pixels:0" DimensionOrder="XYCZT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="2" PhysicalSizeX="0.5" TimeIncrement="30">` +
		`<Channel ID="Channel:0:0" SamplesPerPixel="1"/><TiffData IFD="0" PlaneCount="2"/></Pixels></Image></OME>`}, gray)
	var jpg, png16 bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 7, 5)), nil))
	require.NoError(t, png.Encode(&png16, image.NewRGBA64(image.Rect(0, 0, 9, 4))))
	interlacedPNG := interlaced(t, 9, 7)
	at := bytes.Index(interlacedPNG, []byte("IDAT")) - 4 // before it, a density of 2e6 pixels per metre
	interlacedPNG = append(append(bytes.Clone(interlacedPNG[:at]), pngtest.Chunk("pHYs", []byte{0, 0x1e, 0x84, 0x80, 0, 0x1e, 0x84, 0x80, 1})...), interlacedPNG[at:]...)
	tests := []struct {
		file string
		want string
	}{
		{writeFile(t, dir, "gray.jpg", jpg.Bytes()), "JPEG, 1 image, 1 plane\nimage 0: 7 x 5, uint8, decoded whole by convert\n"},
		{writeFile(t, dir, "anim.gif", animatedGIF(t, 2)), "GIF, 1 image, 1 plane\nimage 0: 6 x 4, RGB uint8, decoded whole by convert\n" +
			"not converted but with -skip-unsupported: an animated GIF of 2 frames: only the first is written\n"},
		{writeFile(t, dir, "rgba.png", png16.Bytes()), "PNG, 1 image, 1 plane\nimage 0: 9 x 4, RGB uint16, streamed by convert\n" +
			"  note: the image has transparency: convert refuses it if a pixel is not opaque (-skip-unsupported writes its colours without it)\n"},
		// What convert says or refuses from the header, info says too.
		{writeFile(t, dir, "turned.jpg", withSegment(jpg.Bytes(), 0xe1, exif("II", 6))), "JPEG, 1 image, 1 plane\nimage 0: 7 x 5, uint8, decoded whole by convert\n" +
			"  note: EXIF Orientation 6 is not applied: the pixels are written as stored, as tifffile and Bio-Formats read them\n"},
		{writeFile(t, dir, "bomb.png", pngBomb(t)), "PNG, 1 image, 1 plane\nimage 0: 100000 x 100000, RGB uint8, streamed by convert\n" +
			"  note: the image has transparency: convert refuses it if a pixel is not opaque (-skip-unsupported writes its colours without it)\n" +
			"not converted: " + filepath.Join(dir, "bomb.png") + ": its header claims 100000 x 100000 pixels, more than -max-pixels 4294967296 (raise it, or set 0 for no limit, if the image is genuine)\n"},
		{writeFile(t, dir, "adam7.png", interlacedPNG), "PNG, 1 image, 1 plane\nimage 0: 9 x 7, RGB uint16, decoded whole by convert\n  pixel 0.5 µm x 0.5 µm\n"},
		{imagej, `TIFF, 1 image, 3 planes
image 0 "stack": 8 x 6, Z 3 x C 1 x T 1, XYCZT, uint8, page 0 and 2 images stored after its data
`},
		{ome, `OME-TIFF, 2 images, 3 planes
OME-XML kept whole, but for what the writer writes itself
image 0 "cells": 100 x 80, Z 1 x C 2 x T 1, XYZCT, uint16, pages 0-1
  LZW tiles of 64 x 64, copied through by convert, with its 1 reduced level by -copy-levels
  channel 0 "DAPI"
  channel 1 "FITC"
image 1 "overview": 40 x 30, Z 1 x C 1 x T 1, XYZCT, RGB uint8, page 2
  LZW tiles of 48 x 32, copied through by convert
`},
		{plain, `TIFF, 2 images, 4 planes
image 0 "plain": 8 x 6, Z 1 x C 1 x T 2, XYCZT, uint8, pages 0-1
image 1 "plain #1": 8 x 6, Z 1 x C 2 x T 1, XYCZT, uint16, page 2, each sample a plane
not converted (convert goes on only with -skip-unsupported, whatever -images says): page 3: source: unsupported layout: PhotometricInterpretation 8 of the page at 694
`},
		{apart, `TIFF, 1 image, 1 plane
image 0 "apart": 8 x 6, Z 1 x C 1 x T 1, XYCZT, uint8, page 0
not converted (convert goes on only with -skip-unsupported, or -images naming images above): page 1: source: unsupported layout: PhotometricInterpretation 8 of the page at 186
`},
		{timed, `OME-TIFF, 1 image, 2 planes
OME-XML kept whole, but for what the writer writes itself
image 0 "timed": 8 x 6, Z 1 x C 1 x T 2, XYCZT, uint8, pages 0-1
  pixel width 0.5 µm (no height)
  time step 30 s
  acquired "2024-05-06T07:08:09"
`},
		{svs, `SVS, 2 images, 2 planes
image 0 "slide": 64 x 48, Z 1 x C 1 x T 1, XYCZT, RGB uint8, page 0
  pixel 0.5 µm x 0.5 µm
  acquired 2021-01-02T10:11:12 (no time zone)
  description "Aperio Image Library v12.0.5\n64x48 [0,0 64x48] (240x240) JPEG/RGB Q=70"
  objective 20x
  "MPP" = "0.5"
  "Date" = "01/02/21"
  "Time" = "10:11:12"
image 1 "label": 20 x 10, Z 1 x C 1 x T 1, XYCZT, RGB uint8, page 2
  description "Aperio Image Library v12.0.5\nlabel 20x10"
`},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			code, stdout, stderr := clitest.Run(runInfo, tt.file)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, tt.want, stdout)
		})
	}
	code, _, stderr := clitest.Run(runInfo, writeFile(t, dir, "notes.txt", []byte("notes")))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "notes.txt: not a TIFF, PNG, JPEG, GIF, BMP or WebP file")
	// An OME-XML of another schema: the image is converted, with its typed
	// metadata only, and info says what is not carried, not "not
	// converted".
	old := filepath.Join(dir, "old.ome.tif")
	writeTIFF(t, old, page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero,
		description: `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2015-01"><Image ID="Image:0" Name="old"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1"><TiffData/></Pixels></Image></OME>`})
	code, stdout, stderr := clitest.Run(runInfo, old)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "image 0 \"old\": 8 x 6")
	assert.Contains(t, stdout, "\nmetadata not carried (convert goes on only with -skip-unsupported): source: bad metadata: the OME-XML cannot be carried to the output")
	assert.NotContains(t, stdout, "not converted")

	// One of two Image elements cannot be carried (two Channels for one
	// channel): the document is kept but for it.
	mixed := filepath.Join(dir, "mixed.ome.tif")
	img := func(i int, channels string) string {
		return fmt.Sprintf(`<Image ID="Image:%d"><Pixels ID="Pixels:%d" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1">%s<TiffData IFD="%d"/></Pixels></Image>`, i, i, channels, i)
	}
	gray8 := page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero}
	first := gray8
	first.description = `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06">` + img(0, `<Channel ID="Channel:0:0"/>`) +
		img(1, `<Channel ID="Channel:1:0"/><Channel ID="Channel:1:1"/>`) + `</OME>`
	writeTIFF(t, mixed, first, gray8)
	code, stdout, stderr = clitest.Run(runInfo, mixed)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "\nOME-XML kept, but for the Image elements not carried (below) and what the writer writes itself\n")
	assert.Contains(t, stdout, "\nmetadata of image 1 not carried (convert goes on only with -skip-unsupported, or -images without 1): ")
	code, _, stderr = clitest.Run(run, "convert", "-images", "0", mixed, filepath.Join(dir, "first.ome.tif"))
	require.Equal(t, 0, code, "as info says: %s", stderr)

	code, stdout, stderr = clitest.Run(runInfo, ome, filepath.Join(dir, "missing.tif"), plain)
	assert.Equal(t, 1, code)
	assert.Equal(t, 3, strings.Count(stdout, "==> "), "a header for every file")
	clitest.AssertErrorLine(t, infoName, stderr)
	clitest.AssertUsage(t, runInfo, "usage: ometiff info file...")

	// Tiles convert copies through, and the levels -copy-levels copies;
	// tiles shrunk to the 200 x 150 image are copied too.
	for _, tt := range []struct {
		tile, levels int
		want         string
	}{
		{32, 1, "\n  Zstd tiles of 32 x 32, copied through by convert\n"},
		{32, 3, "\n  Zstd tiles of 32 x 32, copied through by convert, with its 2 reduced levels by -copy-levels\n"},
		{256, 1, "\n  Zstd tiles of 208 x 160, copied through by convert\n"},
	} {
		tiled := filepath.Join(dir, fmt.Sprintf("tiled%d-%d.ome.tif", tt.tile, tt.levels))
		writeTiled(t, tiled, pyramid.Options{TileSize: tt.tile, Compression: pyramid.Zstd, Levels: tt.levels})
		code, stdout, stderr := clitest.Run(runInfo, tiled)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, tt.want)
	}
}

// TestMappingNotes: what the mapping reads otherwise than the file says
// (tifffile's axes OME lacks, put along T) is said by info and convert.
func TestMappingNotes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "positions.tif")
	gray := page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero}
	first := gray
	first.description = `{"shape": [2, 3, 6, 8], "axes": "QZYX"}`
	writeTIFF(t, path, first, gray, gray, gray, gray, gray)
	note := "tifffile's axes QZYX (shape [2 3 6 8]): Q (2) put along T, as OME has no such axis"
	code, stdout, stderr := clitest.Run(runInfo, path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Z 3 x C 1 x T 2")
	assert.Contains(t, stdout, "\n  note: "+note+"\n")
	code, _, stderr = clitest.Run(run, "convert", "-compression", "none", path, filepath.Join(dir, "out.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "positions.tif: image 0: "+note+"\n")
}

// TestInfoClipsText: info shows the first shownText bytes of a long
// name, description or annotation, and the first shownAnnotations annotations,
// saying how much more there is.
func TestInfoClipsText(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.tif")
	writeTIFF(t, long, page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, description: strings.Repeat("é", 1000),
		more: func(b *ifd.Builder) { b.AddASCII(tiff.TagPageName, strings.Repeat("n", 600)) }})
	fields := "Aperio Image Library v12.0.5\n64x48 [0,0 64x48] (240x240) JPEG/RGB Q=70|AppMag = 20"
	for i := range 300 {
		fields += fmt.Sprintf("|field %d = %d", i, i)
	}
	svs := filepath.Join(dir, "many.svs")
	writeTIFF(t, svs, page{width: 64, height: 48, samples: 3, bits: 8, photometric: tiff.PhotometricRGB, description: fields})
	code, stdout, stderr := clitest.Run(runInfo, long, svs)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `  description "`+strings.Repeat("é", shownText/2)+`"... (2000 bytes in all)`+"\n")
	assert.Contains(t, stdout, `image 0 "`+strings.Repeat("n", shownText)+`"... (600 bytes in all): 8 x 6`)
	assert.Contains(t, stdout, "\n  \"field 255\" = \"255\"\n  ... 44 annotations more\n", "300 fields, 256 shown")
	assert.NotContains(t, stdout, `"field 256"`)
}

func TestInfoPageInNoTiffData(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "extra.ome.tif")
	doc := `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0" Name="one"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1"><Channel ID="Channel:0:0" SamplesPerPixel="1"/><TiffData IFD="0" PlaneCount="1"/></Pixels></Image></OME>`
	writeTIFF(t, path,
		page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, description: doc},
		page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, seed: 1})
	code, stdout, stderr := clitest.Run(runInfo, path)
	require.Equal(t, 0, code, stderr)
	note := "page 1 of the OME-TIFF, in no image's TiffData, not converted: ignored, as the OME-TIFF specification asks"
	assert.Contains(t, stdout, "\nnote: "+note+"\n", "the page is not converted, as the specification asks")
	assert.NotContains(t, stdout, "-skip-unsupported")
	// convert goes on, and says it.
	code, _, stderr = clitest.Run(run, "convert", "-compression", "none", path, filepath.Join(dir, "out.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "extra.ome.tif: "+note+"\n")
}

// TestInfoTIFFNotImage: a TIFF source.Open refuses is not read as an
// image file by image.DecodeConfig, whose TIFF decoder would buffer the
// file up to its directory, here 64 MiB into it.
func TestInfoTIFFNotImage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "far.tif")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = f.Write([]byte{'I', 'I', 42, 0, 0, 0, 0, 4}) // the first directory at 64 MiB
	require.NoError(t, err)
	require.NoError(t, f.Truncate(64<<20+64)) // sparse, its directory of no entries
	require.NoError(t, f.Close())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, ok := imageFile(path)
	runtime.ReadMemStats(&after)
	assert.False(t, ok)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated")
	code, _, stderr := clitest.Run(runInfo, path)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "far.tif")
}

// TestInfoTilesEncodedAgain: tiles convert does not copy for their size
// are said to be encoded again, as convert says (info said nothing).
func TestInfoTilesEncodedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big-tiles.tif")
	w, err := pyramid.Create(path, pyramid.Options{TileSize: 1040, Levels: 1})
	require.NoError(t, err)
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 1100, SizeY: 1100})
	require.NoError(t, err)
	require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 1100*1100)))
	require.NoError(t, w.Close())
	code, stdout, stderr := clitest.Run(runInfo, path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "  LZW tiles of 1040 x 1040, encoded again by convert (it copies square tiles of 32 to 1024)\n")
}
