package pyramid

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/tiff"
)

// codingImage is one image of TestImageCoding's file.
type codingImage struct {
	spec ImageSpec
	base refPlane
	tiff uint16 // the TIFF Compression of every level
	pred uint16 // the TIFF Predictor of every level
}

// codingImages are images of every coding beside a writer's LZW: JPEG,
// the writer's own (nil, and set equal), Deflate at a level, and none.
func codingImages(same *Coding) []codingImage {
	slide := slideRGBOf(96)
	return []codingImage{
		{ImageSpec{Name: "slide", SizeX: 96, SizeY: 96, SamplesPerPixel: 3, Coding: &Coding{Compression: JPEG, Quality: 90}},
			slide, tiff.CompressionJPEG, 1},
		{ImageSpec{Name: "label", SizeX: 70, SizeY: 50, PixelType: Uint16}, randomPlane(70, 50, 1, Uint16, 1, false), tiff.CompressionLZW, 2},
		{ImageSpec{Name: "deflate", SizeX: 40, SizeY: 90, Coding: &Coding{Compression: Deflate, Level: 6}},
			randomPlane(40, 90, 1, Uint8, 2, false), tiff.CompressionDeflate, 2},
		{ImageSpec{Name: "raw", SizeX: 50, SizeY: 40, PixelType: Float32, Coding: &Coding{Compression: None}},
			randomPlane(50, 40, 1, Float32, 3, false), tiff.CompressionNone, 1},
		{ImageSpec{Name: "same", SizeX: 33, SizeY: 65, Coding: same}, randomPlane(33, 65, 1, Uint8, 4, false), tiff.CompressionLZW, 2},
	}
}

// writeCoding writes images into one file of the writer's default LZW.
func writeCoding(t *testing.T, workers int, images []codingImage) []byte {
	return writeMemory(t, Options{TileSize: 32, Workers: workers}, func(w *Writer) error {
		for _, c := range images {
			im, err := w.AddImage(c.spec)
			if err != nil {
				return err
			}
			if err := im.WritePlane(0, 0, 0, c.base.pix); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestImageCoding checks that ImageSpec.Coding encodes every level of its
// image, and that image only, as it says; that the lossless images read
// back exactly; that a Coding equal to the writer's writes the same bytes
// as none; and that the file is the same at every Workers value.
func TestImageCoding(t *testing.T) {
	images := codingImages(&Coding{})
	data := writeCoding(t, 1, images)
	f := readFile(t, data)
	require.Len(t, f.Pages, len(images))
	pyramids := readPyramids(t, data)
	for i, c := range images {
		for l, p := range append([]*tiff.Page{f.Pages[i]}, f.Pages[i].SubIFDs...) {
			layout, err := p.Layout()
			require.NoError(t, err)
			assert.Equal(t, [2]uint16{c.tiff, c.pred}, [2]uint16{layout.Compression, layout.Predictor}, "image %d (%s), level %d", i, c.spec.Name, l)
		}
		got := pyramids[i][0]
		if c.tiff == tiff.CompressionJPEG {
			assert.Greater(t, psnr(c.base.pix, got.pix), 38.0, "JPEG at quality 90")
			continue
		}
		assert.True(t, bytes.Equal(c.base.pix, got.pix), "image %d (%s) is lossless", i, c.spec.Name)
	}

	assert.True(t, bytes.Equal(data, writeCoding(t, 1, codingImages(nil))), "a Coding equal to the writer's is none")
	assert.True(t, bytes.Equal(data, writeCoding(t, 0, images)), "Workers 1 and GOMAXPROCS")
	assert.True(t, bytes.Equal(data, writeCoding(t, 3, images)), "Workers 1 and 3")
}

// TestImageCodingIsCopied: the spec the image keeps has its own copy of
// the Coding, which the caller may reuse.
func TestImageCodingIsCopied(t *testing.T) {
	writeMemory(t, Options{}, func(w *Writer) error {
		c := &Coding{Compression: Zstd}
		im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 8, Coding: c})
		require.NoError(t, err)
		c.Compression = None
		assert.Equal(t, Zstd, im.Spec().Coding.Compression)
		return im.WritePlane(0, 0, 0, make([]byte, 64))
	})
}

// TestImageCodingSharesCodecs: images of one compression and level share
// a codec, whatever else their Codings say, so that a file of many images
// coded otherwise than the writer keeps one codec's encoder state (a Zstd
// codec holds an encoder a core) and not one an image; another level gets
// its own.
func TestImageCodingSharesCodecs(t *testing.T) {
	writeMemory(t, Options{}, func(w *Writer) error {
		add := func(c Coding) *Image {
			im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 8, Coding: &c})
			require.NoError(t, err)
			require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 64)))
			return im
		}
		a, b := add(Coding{Compression: Zstd}), add(Coding{Compression: Zstd, Predictor: PredictorNone})
		c, d := add(Coding{Compression: Zstd, Level: 9}), add(Coding{Compression: Deflate})
		lzw := add(Coding{Compression: LZW, Predictor: PredictorNone})
		assert.Same(t, a.codec, b.codec, "one Zstd codec")
		assert.NotSame(t, a.codec, c.codec, "Zstd level 9")
		assert.NotSame(t, a.codec, d.codec, "Deflate")
		assert.True(t, w.codec == lzw.codec, "the writer's LZW")
		return nil
	})
}

// TestImageCodingRefused checks the codings an image cannot take, each
// with ErrOption naming what.
func TestImageCodingRefused(t *testing.T) {
	tests := []struct {
		name   string
		writer Compression
		spec   ImageSpec
		says   string
	}{
		{"quality without JPEG", LZW, ImageSpec{Coding: &Coding{Quality: 50}}, "Quality 50 is for JPEG, not LZW (Level sets Deflate's and Zstd's) (ImageSpec.Coding)"},
		{"unknown compression", LZW, ImageSpec{Coding: &Coding{Compression: 9}}, "Compression 9 (ImageSpec.Coding)"},
		{"bad level", LZW, ImageSpec{Coding: &Coding{Compression: Deflate, Level: 99}}, "Level 99"},
		{"predictor on JPEG", LZW, ImageSpec{Coding: &Coding{Compression: JPEG, Predictor: PredictorHorizontal}}, "a predictor needs lossless compression, not JPEG"},
		{"JPEG of uint16", LZW, ImageSpec{PixelType: Uint16, Coding: &Coding{Compression: JPEG}}, "JPEG takes uint8 samples"},
		{"floating-point predictor on integers", Zstd, ImageSpec{Coding: &Coding{Predictor: PredictorFloatingPoint}}, "floating-point predictor on uint8 samples"},
		{"compressed in a writer of none", None, ImageSpec{Coding: &Coding{Compression: Deflate}},
			"ImageSpec.Coding Deflate in a writer of uncompressed tiles (Options.Compression None)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeMemory(t, Options{Compression: tt.writer}, func(w *Writer) error {
				spec := tt.spec
				spec.SizeX, spec.SizeY = 20, 20
				_, err := w.AddImage(spec)
				assert.ErrorIs(t, err, ErrOption)
				assert.ErrorContains(t, err, tt.says)
				return writeOne(w, ImageSpec{SizeX: 8, SizeY: 8})
			})
		})
	}

	writeMemory(t, Options{Compression: None}, func(w *Writer) error {
		return writeOne(w, ImageSpec{SizeX: 20, SizeY: 20, Coding: &Coding{Compression: None}})
	})

	_, err := NewDataset(DatasetSpec{Name: "d", Images: []ImageSpec{{SizeX: 8, SizeY: 8, Coding: &Coding{Compression: Zstd}}}})
	assert.ErrorIs(t, err, ErrPlan)
	assert.ErrorContains(t, err, "Images[0].Coding is set: a dataset's images take the coding of DatasetSpec.Options")
}

// TestEncodedImageCoding: an image whose full resolution is given encoded
// computes its reduced levels with its own Coding, not the writer's.
func TestEncodedImageCoding(t *testing.T) {
	base := randomPlane(64, 64, 1, Uint8, 5, false)
	spec := ImageSpec{SizeX: 64, SizeY: 64}
	src := readFile(t, writeMemory(t, Options{TileSize: 32, Compression: Zstd, Levels: 1}, func(w *Writer) error {
		im, err := w.AddImage(spec)
		if err != nil {
			return err
		}
		return im.WritePlane(0, 0, 0, base.pix)
	}))
	level, err := EncodedLevelOf(src.Pages[0])
	require.NoError(t, err)
	spec.Coding = &Coding{Compression: Zstd}
	data := writeMemory(t, Options{TileSize: 32}, func(w *Writer) error {
		im, err := w.AddEncodedImage(spec, level)
		if err != nil {
			return err
		}
		ep, err := im.EncodedPlane(0, 0, 0)
		if err != nil {
			return err
		}
		return copyPlane(t, ep, src.Pages[0], nil, false)
	})
	f := readFile(t, data)
	require.Len(t, f.Pages[0].SubIFDs, 1)
	for l, p := range levelsOf(f.Pages[0]) {
		layout, err := p.Layout()
		require.NoError(t, err)
		assert.Equal(t, uint16(tiff.CompressionZstd), layout.Compression, "level %d", l)
	}
	sameTiles(t, src.Pages[0], f.Pages[0], "level 0")
	levels := readPyramids(t, data)[0]
	assert.True(t, bytes.Equal(base.pix, levels[0].pix))
}

// writeOne adds an image of spec and writes its one plane of zeros.
func writeOne(w *Writer, spec ImageSpec) error {
	im, err := w.AddImage(spec)
	if err != nil {
		return err
	}
	return im.WritePlane(0, 0, 0, make([]byte, im.PlaneBytes()))
}
