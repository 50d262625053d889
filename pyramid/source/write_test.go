package source

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/omexmltest"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// convert writes every image of f into an OME-TIFF in memory, with the
// writer's options, and returns the file.
func convert(t testing.TB, f *File, wopts pyramid.Options, opts Options) []byte {
	t.Helper()
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, wopts)
	require.NoError(t, err)
	var dsts []*pyramid.Image
	for _, im := range f.Images {
		dst, err := w.AddImage(im.Spec)
		require.NoError(t, err)
		dsts = append(dsts, dst)
	}
	for i, im := range f.Images {
		require.NoError(t, im.WritePlanes(context.Background(), dsts[i], opts))
	}
	require.NoError(t, w.Close())
	return h.Bytes()
}

// planePixels reads a plane of a mapped file through a band reader, and
// splits out its sample when it is one.
func planePixels(t testing.TB, p Plane) []byte {
	t.Helper()
	r, err := NewBandReader(context.Background(), p.Page, Options{Workers: 2})
	require.NoError(t, err)
	all, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	if p.Sample < 0 {
		return all
	}
	return deinterleave(nil, all, r.Layout().SamplesPerPixel, r.r.sample)[p.Sample]
}

// want returns the pixels a plane of a file made by fileOf must have.
func want(f *File, images [][]byte, p Plane, bytesPerSample int) []byte {
	for i, q := range f.TIFF.Pages {
		if q != p.Page {
			continue
		}
		if p.Sample < 0 {
			return images[i]
		}
		l, _ := q.Layout()
		return deinterleave(nil, images[i], l.SamplesPerPixel, bytesPerSample)[p.Sample]
	}
	return nil
}

// TestWritePlanes converts files of every kind of page into OME-TIFFs and
// reads them back as sources: the images, their specs and every plane's
// pixels must come back as they went in.
func TestWritePlanes(t *testing.T) {
	tests := []struct {
		name  string
		pages []testPage
		rows  int
	}{
		{"gray pages along T, RGB, and two samples as channels", []testPage{
			{width: 100, height: 70, samples: 1, bits: 16, tileW: 32, tileH: 16, codec: mustCodec(tiff.CompressionLZW), predictor: 2},
			{width: 100, height: 70, samples: 1, bits: 16, rowsPerStrip: 9, codec: mustCodec(tiff.CompressionDeflate), seed: 1},
			{width: 64, height: 40, samples: 3, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionDeflate), seed: 2},
			{width: 33, height: 17, samples: 2, bits: 32, float: true, rowsPerStrip: 4, codec: mustCodec(tiff.CompressionZstd), predictor: 3, seed: 3},
		}, 0},
		{"planar RGBA in bands of 32 rows", []testPage{{width: 50, height: 70, samples: 4, bits: 8, tileW: 16, tileH: 16, planar: true, codec: mustCodec(tiff.CompressionZstd)}}, 32},
		{"16-bit RGB in bands of the whole page", []testPage{{width: 40, height: 30, samples: 3, bits: 16, rowsPerStrip: 7, planar: true}}, 1000},
		{"signed", []testPage{{width: 20, height: 20, samples: 1, bits: 8, signed: true}, {width: 20, height: 20, samples: 1, bits: 32, signed: true, seed: 1}}, 0},
	}
	for _, tt := range tests {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			t.Run(fmt.Sprintf("%s/%v", tt.name, order), func(t *testing.T) {
				file, images := fileOf(t, order, false, tt.pages...)
				tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
				require.NoError(t, err)
				in, err := New(tf, "in.tif", Options{})
				require.NoError(t, err)
				out := convert(t, in, pyramid.Options{TileSize: 16, Workers: 2}, Options{Rows: tt.rows})
				tout, err := tiff.Read(bytes.NewReader(out), int64(len(out)))
				require.NoError(t, err)
				back, err := New(tout, "", Options{})
				require.NoError(t, err)
				assert.Equal(t, OMETIFF, back.Kind)
				require.Len(t, back.Images, len(in.Images))
				for i, im := range in.Images {
					got := back.Images[i]
					s := got.Spec
					s.Name, s.DimensionOrder = im.Spec.Name, im.Spec.DimensionOrder
					assert.NotNil(t, s.OME, "image %d: the output's document goes with it", i)
					s.OME = nil
					assert.Equal(t, im.Spec, s, "image %d", i)
					require.Len(t, got.Planes, len(im.Planes))
					for p := range im.Planes {
						wanted := want(in, images, im.Planes[p], im.Spec.PixelType.Size())
						assert.True(t, bytes.Equal(wanted, planePixels(t, got.Planes[p])), "image %d plane %d", i, p)
					}
				}
			})
		}
	}
}

// TestPaletteColours: the palette pages of a plain TIFF are written as
// the colours of their ColorMap, as libvips reads them (8-bit colours of
// the map's high bytes, or its low bytes when every high byte is 0;
// 16-bit colours for 16-bit indices; gray when every colour is a gray),
// in both byte orders, and as several planes of one image. What cannot
// stand for colours is refused, naming the ColorMap.
func TestPaletteColours(t *testing.T) {
	colourMap := func(bits int, f func(i, s int) uint16) []uint16 {
		n := 1 << bits
		out := make([]uint16, 3*n)
		for i := range n {
			for s := range 3 {
				out[s*n+i] = f(i, s)
			}
		}
		return out
	}
	palette := func(p testPage, cmap []uint16) testPage {
		p.more = fields(short(tiff.TagPhotometricInterpretation, tiff.PhotometricPalette), short(tiff.TagColorMap, cmap...))
		return p
	}
	strips := testPage{width: 37, height: 21, samples: 1, bits: 8, rowsPerStrip: 5, codec: mustCodec(tiff.CompressionLZW)}
	tiles := testPage{width: 37, height: 21, samples: 1, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionDeflate), seed: 1}
	wide := testPage{width: 19, height: 7, samples: 1, bits: 16, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionZstd)}
	colours := colourMap(8, func(i, s int) uint16 { return uint16(i*251 + s*40503) })
	tests := []struct {
		name      string
		pages     []testPage
		pixelType pyramid.PixelType
		samples   int
		colour    func(index int) []byte // the pixel index stands for
	}{
		{"8-bit colours, two pages along T", []testPage{palette(strips, colours), palette(tiles, colours)}, pyramid.Uint8, 3,
			func(i int) []byte {
				return []byte{byte(colours[i] >> 8), byte(colours[256+i] >> 8), byte(colours[512+i] >> 8)}
			}},
		{"a map of 8-bit values", []testPage{palette(tiles, colourMap(8, func(i, s int) uint16 { return uint16((i + s) % 256) }))}, pyramid.Uint8, 3,
			func(i int) []byte { return []byte{byte(i), byte(i + 1), byte(i + 2)} }},
		{"grays", []testPage{palette(strips, colourMap(8, func(i, _ int) uint16 { return uint16(255-i) * 257 }))}, pyramid.Uint8, 1,
			func(i int) []byte { return []byte{byte(255 - i)} }},
		{"16-bit indices", []testPage{palette(wide, colourMap(16, func(i, s int) uint16 { return uint16(i*3 + s*7919) }))}, pyramid.Uint16, 3,
			func(i int) []byte {
				return binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil,
					uint16(i*3)), uint16(i*3+7919)), uint16(i*3+2*7919))
			}},
	}
	for _, tt := range tests {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			t.Run(fmt.Sprintf("%s/%v", tt.name, order), func(t *testing.T) {
				file, images := fileOf(t, order, false, tt.pages...)
				in, err := mapFile(t, file, "palette.tif", Options{})
				require.NoError(t, err)
				require.Len(t, in.Images, 1)
				spec := in.Images[0].Spec
				assert.Equal(t, tt.pixelType, spec.PixelType)
				assert.Equal(t, tt.samples, spec.SamplesPerPixel)
				assert.Equal(t, len(tt.pages), spec.SizeT)
				assert.Contains(t, in.Images[0].Notes, "a palette image: the colours of its ColorMap are written, as libvips reads it, not its indices, "+
					"which tifffile and Bio-Formats give")
				_, err = in.Images[0].Encoded(false)
				assert.ErrorIs(t, err, ErrUnsupported, "a palette's tiles are not copied")
				out := convert(t, in, pyramid.Options{TileSize: 16, Workers: 2}, Options{})
				back, err := mapFile(t, out, "", Options{})
				require.NoError(t, err)
				require.Len(t, back.Images, 1)
				require.Len(t, back.Images[0].Planes, len(tt.pages))
				for k, pl := range back.Images[0].Planes {
					size := tt.pages[k].bits / 8
					var wanted []byte
					for i := 0; i < len(images[k]); i += size {
						index := int(images[k][i])
						if size == 2 {
							index = int(binary.LittleEndian.Uint16(images[k][i:]))
						}
						wanted = append(wanted, tt.colour(index)...)
					}
					assert.True(t, bytes.Equal(wanted, planePixels(t, pl)), "plane %d", k)
				}
			})
		}
	}

	bad := []struct {
		name string
		page testPage
		is   error
		says string
	}{
		{"no ColorMap", testPage{width: 8, height: 8, samples: 1, bits: 8, more: short(tiff.TagPhotometricInterpretation, tiff.PhotometricPalette)},
			ErrMetadata, "ColorMap of none, not 3 × 2^8 (BitsPerSample)"},
		{"a short ColorMap", palette(testPage{width: 8, height: 8, samples: 1, bits: 8}, colourMap(4, func(int, int) uint16 { return 0 })),
			ErrMetadata, "ColorMap of 48 values, not 3 × 2^8"},
		{"two samples", palette(testPage{width: 8, height: 8, samples: 2, bits: 8}, colours), ErrUnsupported, "palette (ColorMap) with SamplesPerPixel 2"},
		{"signed indices", palette(testPage{width: 8, height: 8, samples: 1, bits: 8, signed: true}, colours), ErrUnsupported,
			"palette (ColorMap) with indices of 8 bits of SampleFormat 2"},
		{"32-bit indices", palette(testPage{width: 8, height: 8, samples: 1, bits: 32}, colours), ErrUnsupported, "indices of 32 bits"},
		{"a LONG ColorMap past 16 bits", testPage{width: 8, height: 8, samples: 1, bits: 8, more: fields(short(tiff.TagPhotometricInterpretation, tiff.PhotometricPalette),
			func(b *ifd.Builder) {
				cmap := make([]uint32, 3*256)
				cmap[5] = 70000 // libtiff ignores such a map; it was wrapped to 16 bits
				b.AddLong(tiff.TagColorMap, cmap...)
			})}, ErrMetadata, "value 5 is 70000, past 16 bits"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			file, _ := fileOf(t, binary.LittleEndian, false, tt.page)
			_, err := mapFile(t, file, "palette.tif", Options{})
			require.ErrorIs(t, err, tt.is)
			assert.ErrorContains(t, err, tt.says)
		})
	}
}

// TestRoundTripMetadata writes OME-TIFFs with the pyramid writer and maps
// them back: every field the writer writes comes back, the acquisition
// date and the annotations in the document that goes with the image.
func TestRoundTripMetadata(t *testing.T) {
	specs := []pyramid.ImageSpec{
		{Name: "stack", SizeX: 40, SizeY: 30, SizeZ: 3, SizeC: 2, SizeT: 2, DimensionOrder: pyramid.XYCTZ, PixelType: pyramid.Uint16,
			PhysicalSizeX: 0.25, PhysicalSizeY: 0.5, PhysicalSizeZ: 2, PhysicalSizeXUnit: "µm", PhysicalSizeYUnit: "nm", PhysicalSizeZUnit: "mm",
			Channels:        []pyramid.Channel{{Name: "DAPI", Color: color.NRGBA{0, 0, 255, 255}}, {Name: "GFP", Color: color.NRGBA{0, 255, 0, 255}}},
			AcquisitionDate: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), Description: "a stack\nof planes",
			Annotations: []pyramid.KeyValue{{Key: "objective", Value: "40x"}, {Key: "stain", Value: "<&>"}}},
		{Name: "slide", SizeX: 300, SizeY: 200, PixelType: pyramid.Uint8, SamplesPerPixel: 3, PhysicalSizeX: 0.5, PhysicalSizeY: 0.5},
		{Name: "floats", SizeX: 17, SizeY: 9, SizeT: 3, PixelType: pyramid.Float64, DimensionOrder: pyramid.XYTZC},
	}
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, pyramid.Options{TileSize: 64})
	require.NoError(t, err)
	var planes [][][]byte
	for i, s := range specs {
		im, err := w.AddImage(s)
		require.NoError(t, err)
		var ps [][]byte
		for p := range s.Planes() {
			pix := make([]byte, im.PlaneBytes())
			for k := range pix {
				pix[k] = byte(k*7 + p*31 + i)
			}
			z, c, tm := im.Spec().PlaneCoords(p)
			require.NoError(t, im.WritePlane(z, c, tm, pix))
			ps = append(ps, pix)
		}
		planes = append(planes, ps)
	}
	require.NoError(t, w.Close())
	tf, err := tiff.Read(bytes.NewReader(h.Bytes()), int64(len(h.Bytes())))
	require.NoError(t, err)
	f, err := New(tf, "", Options{})
	require.NoError(t, err)
	require.Len(t, f.Images, len(specs))
	for i, s := range specs {
		got := f.Images[i].Spec
		want := s
		for _, d := range []*int{&want.SizeZ, &want.SizeC, &want.SizeT, &want.SamplesPerPixel} {
			*d = max(*d, 1)
		}
		want.DimensionOrder = pyramid.DimensionOrder(cmpOr(string(want.DimensionOrder), "XYZCT"))
		if want.PhysicalSizeX > 0 && want.PhysicalSizeXUnit == "" {
			want.PhysicalSizeXUnit, want.PhysicalSizeYUnit = "µm", "µm"
		}
		require.NotNil(t, got.OME, "image %d", i)
		got.OME = nil
		want.AcquisitionDate, want.Annotations = time.Time{}, nil // the document's
		assert.Equal(t, want, got, "image %d", i)
		for p := range planes[i] {
			assert.True(t, bytes.Equal(planes[i][p], planePixels(t, f.Images[i].Planes[p])), "image %d plane %d", i, p)
		}
	}
	doc := omexmltest.Parse(t, []byte(f.OMEXML))
	stack := doc.Element("Image")
	assert.Equal(t, "2020-01-02T03:04:05Z", stack.Element("AcquisitionDate").Text)
	annotation := doc.Element("StructuredAnnotations", "MapAnnotation")
	require.NotNil(t, annotation)
	assert.Equal(t, annotation.Attr("ID"), stack.Element("AnnotationRef").Attr("ID"))
	var kvs []pyramid.KeyValue
	for _, m := range annotation.Element("Value").Children("M") {
		kvs = append(kvs, pyramid.KeyValue{Key: m.Attr("K"), Value: m.Text})
	}
	assert.Equal(t, specs[0].Annotations, kvs)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestWritePlanesMismatch(t *testing.T) {
	f, _, err := mapPages(t, Options{}, gray(8, 8), gray(8, 8))
	require.NoError(t, err)
	w, err := pyramid.New(iohandle.NewMemory(), pyramid.Options{})
	require.NoError(t, err)
	defer w.Abort()
	for _, s := range []pyramid.ImageSpec{
		{SizeX: 8, SizeY: 8, SizeT: 1, PixelType: pyramid.Uint16},
		{SizeX: 8, SizeY: 9, SizeT: 2, PixelType: pyramid.Uint16},
		{SizeX: 8, SizeY: 8, SizeT: 2, PixelType: pyramid.Int16},
		{SizeX: 8, SizeY: 8, SizeZ: 2, PixelType: pyramid.Uint16}, // as many planes, along Z
	} {
		dst, err := w.AddImage(s)
		require.NoError(t, err)
		assert.ErrorIs(t, f.Images[0].WritePlanes(context.Background(), dst, Options{}), ErrMismatch)
	}
	dst, err := w.AddImage(pyramid.ImageSpec{SizeX: 8, SizeY: 8, SizeC: 2, PixelType: pyramid.Uint16})
	require.NoError(t, err)
	assert.EqualError(t, f.Images[0].WritePlanes(context.Background(), dst, Options{}),
		"source: destination image does not match: 8 x 8, 1 x uint16, Z 1 x C 1 x T 2 written into 8 x 8, 1 x uint16, Z 1 x C 2 x T 1")
	// The image AddEncodedImage did not add, when its error was not looked at.
	assert.ErrorIs(t, f.Images[0].WritePlanes(context.Background(), nil, Options{}), ErrMismatch, "a nil destination")
}

// TestWritePlanesStops checks that a cancelled context, and a block that
// does not decode, stop WritePlanes with their error, naming the plane.
func TestWritePlanesStops(t *testing.T) {
	f, _, err := mapPages(t, Options{}, gray(64, 64), gray(64, 64))
	require.NoError(t, err)
	w, err := pyramid.New(iohandle.NewMemory(), pyramid.Options{})
	require.NoError(t, err)
	defer w.Abort()
	dst, err := w.AddImage(f.Images[0].Spec)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = f.Images[0].WritePlanes(ctx, dst, Options{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "source: plane z=0 c=0 t=0", "behind this package's prefix")

	file, _ := fileOf(t, binary.LittleEndian, false, gray(64, 64), gray(64, 64))
	file[len(file)/3] ^= 0xff // inside the first page's strips
	file[len(file)/3+1] ^= 0xff
	tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	f, err = New(tf, "", Options{})
	require.NoError(t, err)
	w, err = pyramid.New(iohandle.NewMemory(), pyramid.Options{})
	require.NoError(t, err)
	defer w.Abort()
	dst, err = w.AddImage(f.Images[0].Spec)
	require.NoError(t, err)
	err = f.Images[0].WritePlanes(context.Background(), dst, Options{})
	assert.True(t, errors.Is(err, compress.ErrCorrupt), "%v", err)
}

// TestWidenHalves widens every half float and compares it with its value
// computed from its fields: equal bits, NaNs with their payload.
func TestWidenHalves(t *testing.T) {
	band := make([]byte, 2<<16)
	for h := range 1 << 16 {
		binary.LittleEndian.PutUint16(band[2*h:], uint16(h))
	}
	wide := widenHalves(nil, band)
	require.Len(t, wide, 4<<16)
	for h := range 1 << 16 {
		got := binary.LittleEndian.Uint32(wide[4*h:])
		sign, exp, frac := h>>15, h>>10&0x1f, h&0x3ff
		var want float64
		switch {
		case exp == 0x1f && frac == 0:
			want = math.Inf(1)
		case exp == 0x1f:
			f := math.Float32frombits(got)
			require.True(t, f != f, "%#04x is a NaN", h)
			require.Equal(t, uint32(frac), got>>13&0x3ff, "%#04x: the NaN's payload", h)
			continue
		case exp == 0:
			want = math.Ldexp(float64(frac), -24)
		default:
			want = math.Ldexp(1+float64(frac)/1024, exp-15)
		}
		if sign == 1 {
			want = -want
		}
		require.Equal(t, math.Float32bits(float32(want)), got, "%#04x", h)
	}
}

// TestWriteHalfFloats converts pages of half floats (tiles and strips,
// both byte orders; the floating-point predictor on halves is
// compress's decoder's, tested there and by the interop tests): the
// image is float32, each plane the halves widened exactly, and its tiles
// are not copied through (they are 16 bits).
func TestWriteHalfFloats(t *testing.T) {
	pages := []testPage{
		{width: 37, height: 21, samples: 1, bits: 16, float: true, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionDeflate)},
		{width: 37, height: 21, samples: 1, bits: 16, float: true, rowsPerStrip: 5, codec: mustCodec(tiff.CompressionLZW), seed: 1},
		{width: 20, height: 9, samples: 2, bits: 16, float: true, rowsPerStrip: 4, seed: 2},
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		file, images := fileOf(t, order, false, pages...)
		tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
		require.NoError(t, err)
		in, err := New(tf, "in.tif", Options{})
		require.NoError(t, err)
		require.Len(t, in.Images, 2)
		for _, im := range in.Images {
			assert.Equal(t, pyramid.Float32, im.Spec.PixelType)
		}
		_, err = in.Images[0].Encoded(false)
		require.ErrorIs(t, err, ErrUnsupported)
		assert.ErrorContains(t, err, "samples of 16 bits, widened to the image's float")

		out := convert(t, in, pyramid.Options{TileSize: 16, Workers: 2}, Options{})
		tout, err := tiff.Read(bytes.NewReader(out), int64(len(out)))
		require.NoError(t, err)
		back, err := New(tout, "", Options{})
		require.NoError(t, err)
		require.Len(t, back.Images, 2)
		for i, im := range in.Images {
			for p := range im.Planes {
				wanted := widenHalves(nil, want(in, images, im.Planes[p], 2))
				assert.True(t, bytes.Equal(wanted, planePixels(t, back.Images[i].Planes[p])), "%v: image %d plane %d", order, i, p)
			}
		}
	}
}

// TestWritePlanesResumes: WritePlanes stopped by its context gives back
// the plane it was writing, and WritePlanes again writes the planes not
// complete, from the decoded rows or from tiles copied, so the file
// closes with every plane as the source's. A cancelled context's cause is
// the error.
func TestWritePlanesResumes(t *testing.T) {
	src := pyramidFile(t, pyramid.ImageSpec{SizeX: 64, SizeY: 64, SizeT: 3, PixelType: pyramid.Uint8},
		pyramid.Options{TileSize: 16, Compression: pyramid.Deflate})
	im := src.Images[0]
	for _, mode := range []string{"decoded", "tiles copied, levels computed", "every level copied"} {
		t.Run(mode, func(t *testing.T) {
			stop := errors.New("stopped by the test")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			// The second plane stops after its first row of tiles: plane 0
			// stores 16 + 4 + 1 tiles (synchronously, with Workers 1).
			h, w, dst := modeDestination(t, im, mode, func(p pyramid.Progress) {
				if p.Tiles >= 25 {
					cancel(stop)
				}
			})
			if mode == "every level copied" {
				cancel(stop) // no rows, so no Progress before the tiles: stop at once
			}
			err := im.WritePlanes(ctx, dst, Options{Rows: 16, Workers: 1})
			require.ErrorIs(t, err, stop, "the cause, not context.Canceled")
			done, err := dst.PlaneComplete(0, 0, 2)
			require.NoError(t, err)
			assert.False(t, done)
			require.NoError(t, im.WritePlanes(context.Background(), dst, Options{Rows: 16, Workers: 1}), "resumed")
			for tt := range 3 {
				done, err := dst.PlaneComplete(0, 0, tt)
				require.NoError(t, err)
				assert.True(t, done, "t=%d", tt)
			}
			require.NoError(t, w.Close())
			out, err := mapFile(t, h.Bytes(), "out.ome.tif", Options{})
			require.NoError(t, err)
			require.Len(t, out.Images[0].Planes, 3)
			for p := range 3 {
				assert.True(t, bytes.Equal(planePixels(t, im.Planes[p]), planePixels(t, out.Images[0].Planes[p])), "plane %d", p)
				for k, lp := range out.Images[0].Planes[p].Levels {
					assert.True(t, bytes.Equal(planePixels(t, Plane{Page: im.Planes[p].Levels[k], Sample: -1}), planePixels(t, Plane{Page: lp, Sample: -1})), "plane %d level %d", p, k+1)
				}
			}
		})
	}
}

// TestWritePlanesProgressPanics: a Progress that panics mid-plane, which
// the caller recovers, leaves the plane given back, so that WritePlanes
// again writes it and the file is whole (it stayed started, and every
// later call failed on it).
func TestWritePlanesProgressPanics(t *testing.T) {
	src := pyramidFile(t, pyramid.ImageSpec{SizeX: 64, SizeY: 64, SizeT: 3, PixelType: pyramid.Uint8},
		pyramid.Options{TileSize: 16, Compression: pyramid.Deflate})
	im := src.Images[0]
	for _, mode := range []string{"decoded", "tiles copied, levels computed", "every level copied"} {
		t.Run(mode, func(t *testing.T) {
			panicked := false
			h, w, dst := modeDestination(t, im, mode, func(p pyramid.Progress) {
				if p.Tiles >= 25 && !panicked { // within the second plane
					panicked = true
					panic("the progress bar fails")
				}
			})
			func() {
				defer func() { assert.Equal(t, "the progress bar fails", recover()) }()
				_ = im.WritePlanes(context.Background(), dst, Options{Rows: 16, Workers: 1})
			}()
			require.True(t, panicked)
			done, err := dst.PlaneComplete(0, 0, 1)
			require.NoError(t, err)
			assert.False(t, done)
			require.NoError(t, im.WritePlanes(context.Background(), dst, Options{Rows: 16, Workers: 1}), "again")
			require.NoError(t, w.Close())
			out, err := mapFile(t, h.Bytes(), "out.ome.tif", Options{})
			require.NoError(t, err)
			require.Len(t, out.Images[0].Planes, 3)
			for p := range 3 {
				assert.True(t, bytes.Equal(planePixels(t, im.Planes[p]), planePixels(t, out.Images[0].Planes[p])), "plane %d", p)
			}
		})
	}
}

// modeDestination adds im to a writer in memory (16-pixel Deflate tiles,
// synchronous, reporting to progress) as mode says: decoded, or its tiles
// copied with the levels computed or copied too ("every level copied").
// The writer is aborted when the test ends.
func modeDestination(t *testing.T, im *Image, mode string, progress func(pyramid.Progress)) (*iohandle.Memory, *pyramid.Writer, *pyramid.Image) {
	t.Helper()
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, pyramid.Options{TileSize: 16, Compression: pyramid.Deflate, Workers: 1, Progress: progress})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Abort() })
	if mode == "decoded" {
		dst, err := w.AddImage(im.Spec)
		require.NoError(t, err)
		return h, w, dst
	}
	enc, err := im.Encoded(mode == "every level copied")
	require.NoError(t, err)
	dst, err := w.AddEncodedImage(im.Spec, enc...)
	require.NoError(t, err)
	return h, w, dst
}

// TestWritePlanesNamesTheFirstPlaneToWrite: resumed on a page whose
// first channel is written, WritePlanes opens no reader before it knows
// which planes to write, and its errors name the first of them.
func TestWritePlanesNamesTheFirstPlaneToWrite(t *testing.T) {
	file, _ := fileOf(t, binary.LittleEndian, false, testPage{width: 16, height: 8, samples: 2, bits: 8, rowsPerStrip: 4, codec: mustCodec(tiff.CompressionDeflate)})
	tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	f, err := New(tf, "", Options{})
	require.NoError(t, err)
	im := f.Images[0]
	require.Equal(t, 2, im.Spec.SizeC)
	w, err := pyramid.New(iohandle.NewMemory(), pyramid.Options{})
	require.NoError(t, err)
	defer w.Abort()
	dst, err := w.AddImage(im.Spec)
	require.NoError(t, err)
	require.NoError(t, dst.WritePlane(0, 0, 0, make([]byte, 16*8)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = im.WritePlanes(ctx, dst, Options{})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "plane z=0 c=1 t=0")
	require.NoError(t, im.WritePlanes(context.Background(), dst, Options{}), "resumed")
}

// TestWritePlanesOtherCoding: tiles copied into levels added with another
// image's coding (its Encoded levels: a predictor these tiles lack) are
// ErrMismatch, naming the difference; copied, they made a file of other
// pixels, and no error.
func TestWritePlanesOtherCoding(t *testing.T) {
	deflate := mustCodec(tiff.CompressionDeflate)
	page := testPage{width: 64, height: 64, samples: 1, bits: 16, tileW: 16, tileH: 16, codec: deflate}
	predicted := page
	predicted.predictor = 2
	a, _, err := mapPages(t, Options{}, predicted)
	require.NoError(t, err)
	b, _, err := mapPages(t, Options{}, page)
	require.NoError(t, err)
	levels, err := a.Images[0].Encoded(false)
	require.NoError(t, err)
	w, err := pyramid.New(iohandle.NewMemory(), pyramid.Options{Levels: 1})
	require.NoError(t, err)
	defer w.Abort()
	dst, err := w.AddEncodedImage(b.Images[0].Spec, levels...)
	require.NoError(t, err)
	err = b.Images[0].WritePlanes(context.Background(), dst, Options{})
	require.ErrorIs(t, err, ErrMismatch)
	assert.ErrorContains(t, err, "level 0: the page at 6992 has tiles of Deflate, predictor none, 16 x 16, photometric 1, subsampling [0 0], positioning 0, "+
		"the destination's level Deflate, predictor horizontal, 16 x 16, photometric 1")
	done, err := dst.PlaneComplete(0, 0, 0)
	require.NoError(t, err)
	assert.False(t, done, "nothing copied")
	require.NoError(t, a.Images[0].WritePlanes(context.Background(), dst, Options{}), "the image's own tiles")
}

// TestImageMadeByCaller: an Image a caller builds with planes the mapping
// never makes (no page, a sample the page lacks, a page twice) is
// ErrMismatch, before anything is allocated or written (they panicked,
// allocated a slice as long as the sample number, or left a plane
// unwritten with no error).
func TestImageMadeByCaller(t *testing.T) {
	f, _, err := mapPages(t, Options{}, testPage{width: 16, height: 16, samples: 2, bits: 8}, testPage{width: 16, height: 16, samples: 2, bits: 8, seed: 1})
	require.NoError(t, err)
	p0, p1 := f.TIFF.Pages[0], f.TIFF.Pages[1]
	spec := pyramid.ImageSpec{SizeX: 16, SizeY: 16, SizeC: 2, PixelType: pyramid.Uint8}
	for name, planes := range map[string][]Plane{
		"no page":             {{Page: nil, Sample: -1}, {Page: p1, Sample: -1}},
		"a zero plane":        {{}, {Page: p1, Sample: 0}},
		"a sample past them":  {{Page: p0, Sample: 0}, {Page: p0, Sample: 1 << 22}},
		"a negative sample":   {{Page: p0, Sample: -2}, {Page: p1, Sample: -1}},
		"a page twice":        {{Page: p0, Sample: -1}, {Page: p0, Sample: -1}},
		"a sample twice":      {{Page: p0, Sample: 1}, {Page: p0, Sample: 1}},
		"whole, then sampled": {{Page: p0, Sample: -1}, {Page: p0, Sample: 0}},
		"a level of no page":  {{Page: p0, Sample: -1, Levels: []*tiff.Page{nil}}, {Page: p1, Sample: -1}},
	} {
		t.Run(name, func(t *testing.T) {
			s := spec
			if planes[0].Sample < 0 && planes[0].Page != nil {
				s.SizeC, s.SamplesPerPixel = 1, 2 // whole pages: two samples a pixel (not RGB; the spec is only compared)
			}
			im := &Image{Spec: s, Planes: planes, OMEImage: -1}
			w, err := pyramid.New(iohandle.NewMemory(), pyramid.Options{})
			require.NoError(t, err)
			defer w.Abort()
			dst, err := w.AddImage(pyramid.ImageSpec{SizeX: 16, SizeY: 16, SizeC: 2, PixelType: pyramid.Uint8})
			require.NoError(t, err)
			im.Spec = dst.Spec()
			err = im.WritePlanes(context.Background(), dst, Options{})
			assert.ErrorIs(t, err, ErrMismatch)
			if planes[0].Page == nil || slices.Contains(planes[0].Levels, nil) {
				_, err = im.Encoded(false)
				assert.ErrorIs(t, err, ErrMismatch, "Encoded")
			}
		})
	}
}

// TestZeroBandReaderAndFile: a zero or nil BandReader, a nil File and a nil
// tiff.File give errors (ErrClosed, nil for Close of no File), never a
// panic; Err after a Close that met no error is nil (it was an unexported
// "stopped").
func TestZeroBandReaderAndFile(t *testing.T) {
	for name, r := range map[string]*BandReader{"zero": {}, "nil": nil} {
		_, _, err := r.Next()
		assert.ErrorIs(t, err, ErrClosed, name)
		_, err = r.Read(make([]byte, 4))
		assert.ErrorIs(t, err, ErrClosed, name)
		_, err = r.WriteTo(io.Discard)
		assert.ErrorIs(t, err, ErrClosed, name)
		assert.ErrorIs(t, r.Err(), ErrClosed, name)
		assert.ErrorIs(t, r.Close(), ErrClosed, name)
		assert.Zero(t, r.RowBytes(), name)
	}
	var f *File
	assert.NoError(t, f.Close())
	_, err := New(nil, "x.tif", Options{})
	assert.ErrorIs(t, err, ErrMetadata)

	file, _, err := mapPages(t, Options{}, testPage{width: 16, height: 64, samples: 1, bits: 8, rowsPerStrip: 16})
	require.NoError(t, err)
	r, err := NewBandReader(context.Background(), file.TIFF.Pages[0], Options{Workers: 2})
	require.NoError(t, err)
	_, _, err = r.Next()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	assert.NoError(t, r.Err(), "after Close")
}

// TestFileCloseConcurrent: File is safe for concurrent use, Close too: two
// Closes at once close each file once (a data race under -race).
func TestFileCloseConcurrent(t *testing.T) {
	closed := 0
	var mu sync.Mutex
	f := &File{closers: []func() error{func() error { mu.Lock(); closed++; mu.Unlock(); return nil }}}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { assert.NoError(t, f.Close()) })
	}
	wg.Wait()
	assert.Equal(t, 1, closed)
}
