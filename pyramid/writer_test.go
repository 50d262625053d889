package pyramid

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/ctxtest"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/iohandle/iohandletest"
	"github.com/ometiff-go/ometiff/tiff"
)

// writeMemory writes images built by fill into memory and returns the file.
func writeMemory(t testing.TB, opts Options, fill func(w *Writer) error) []byte {
	t.Helper()
	h := iohandle.NewMemory()
	w, err := New(h, opts)
	require.NoError(t, err)
	require.NoError(t, fill(w))
	require.NoError(t, w.Close())
	return h.Bytes()
}

// createNoSync is Create with a handle that skips the sync at Close, as
// iohandle.Options says (and what else hopts sets), for tests that write
// files but need no durability.
func createNoSync(t testing.TB, path string, hopts iohandle.Options, opts Options) *Writer {
	t.Helper()
	hopts.BufferSize, hopts.NoSync = iohandle.BigBuffer, true
	h, err := iohandle.Create(path, hopts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() }) // nothing after a Close or Abort of the writer
	w, err := New(h, opts)
	require.NoError(t, err)
	return w
}

// checkPyramid reads data back independently and compares every level of
// every plane with the reference pyramids, main chain in order.
func checkPyramid(t *testing.T, data []byte, want [][]refPlane) {
	t.Helper()
	f, err := readback.Parse(data)
	require.NoError(t, err)
	require.Len(t, f.IFDs, len(want), "planes in the main chain")
	for i, d := range f.IFDs {
		require.Len(t, d.SubIFDs, len(want[i])-1, "plane %d SubIFDs", i)
		assert.Zero(t, d.Uint(tiff.TagNewSubfileType, 9), "full resolution")
		for l, lv := range want[i] {
			dir := d
			if l > 0 {
				dir = d.SubIFDs[l-1]
				assert.Equal(t, uint64(1), dir.Uint(tiff.TagNewSubfileType, 9), "reduced")
			}
			got, err := f.Image(dir)
			require.NoError(t, err, "plane %d level %d", i, l)
			require.Equal(t, lv.w, got.Width, "plane %d level %d width", i, l)
			require.Equal(t, lv.h, got.Height, "plane %d level %d height", i, l)
			if !bytes.Equal(lv.pix, got.Pix) {
				t.Fatalf("plane %d level %d (%dx%d): pixels differ", i, l, lv.w, lv.h)
			}
		}
	}
}

// TestPyramidPixelExact writes planes of every pixel type with every
// downsampling and codec, and compares every tile of every level with the
// reference pyramid.
func TestPyramidPixelExact(t *testing.T) {
	types := []PixelType{Uint8, Int8, Uint16, Int16, Uint32, Int32, Float32, Float64}
	codecs := []Compression{None, LZW, Deflate, Zstd}
	methods := []Downsampling{Mean, Nearest, Mode}
	for ti, pt := range types {
		for ci, comp := range codecs {
			for _, method := range methods {
				name := fmt.Sprintf("%v/%v/%v", pt, comp, map[Downsampling]string{Mean: "mean", Nearest: "nearest", Mode: "mode"}[method])
				t.Run(name, func(t *testing.T) {
					const w, h = 77, 53 // odd sizes at every level
					base := randomPlane(w, h, 1, pt, uint64(ti*10+ci), method == Mode)
					opts := Options{TileSize: 16, Compression: comp, Downsampling: method}
					data := writeMemory(t, opts, func(wr *Writer) error {
						im, err := wr.AddImage(ImageSpec{SizeX: w, SizeY: h, PixelType: pt})
						if err != nil {
							return err
						}
						return im.WritePlane(0, 0, 0, base.pix)
					})
					levels := len(referenceLevels(w, h, 16))
					checkPyramid(t, data, [][]refPlane{referencePyramid(base, pt, method, levels)})
				})
			}
		}
	}
}

// referenceLevels lists the level sizes the automatic rule gives: halve
// until the level fits in one tile.
func referenceLevels(w, h, tile int) [][2]int {
	out := [][2]int{{w, h}}
	for w > tile || h > tile {
		w, h = (w+1)/2, (h+1)/2
		out = append(out, [2]int{w, h})
	}
	return out
}

func TestRGBPyramid(t *testing.T) {
	for _, pt := range []PixelType{Uint8, Uint16} {
		t.Run(pt.String(), func(t *testing.T) {
			base := randomPlane(45, 38, 3, pt, 7, false)
			data := writeMemory(t, Options{TileSize: 16, Compression: Deflate}, func(w *Writer) error {
				im, err := w.AddImage(ImageSpec{SizeX: 45, SizeY: 38, PixelType: pt, SamplesPerPixel: 3})
				if err != nil {
					return err
				}
				return im.WritePlane(0, 0, 0, base.pix)
			})
			checkPyramid(t, data, [][]refPlane{referencePyramid(base, pt, Mean, 3)})
			f, err := readback.Parse(data)
			require.NoError(t, err)
			assert.Equal(t, uint64(tiff.PhotometricRGB), f.IFDs[0].Uint(tiff.TagPhotometricInterpretation, 0))
			assert.Equal(t, []uint64{8 * uint64(pt.Size()), 8 * uint64(pt.Size()), 8 * uint64(pt.Size())}, f.IFDs[0].Uints(tiff.TagBitsPerSample))
		})
	}
}

// TestSizeCCountsPlanesOMESizeCSamples: Spec().SizeC counts the planes
// along C, while the OME-XML's Pixels SizeC counts samples, as OME does;
// OMESizeC gives the XML's value, with SizeC Channel elements of
// SamplesPerPixel samples each.
func TestSizeCCountsPlanesOMESizeCSamples(t *testing.T) {
	tests := []struct {
		spec            ImageSpec
		sizeC, omeSizeC int
	}{
		{ImageSpec{SizeX: 8, SizeY: 8, SamplesPerPixel: 3}, 1, 3},
		{ImageSpec{SizeX: 8, SizeY: 8, SizeC: 2, SamplesPerPixel: 3, PixelType: Uint16}, 2, 6},
		{ImageSpec{SizeX: 8, SizeY: 8, SizeC: 4}, 4, 4},
		{ImageSpec{SizeX: 8, SizeY: 8}, 1, 1},
	}
	channels := regexp.MustCompile(`<Channel [^>]*SamplesPerPixel="(\d+)"`)
	for _, tc := range tests {
		t.Run(fmt.Sprintf("C %d x %d samples", tc.sizeC, tc.spec.SamplesPerPixel), func(t *testing.T) {
			var spec ImageSpec
			data := writeMemory(t, Options{}, func(w *Writer) error {
				im, err := w.AddImage(tc.spec)
				if err != nil {
					return err
				}
				spec = im.Spec()
				for c := range spec.SizeC {
					if err := im.WritePlane(0, c, 0, make([]byte, im.PlaneBytes())); err != nil {
						return err
					}
				}
				return nil
			})
			assert.Equal(t, tc.sizeC, spec.SizeC)
			assert.Equal(t, tc.omeSizeC, spec.OMESizeC())
			f, err := readback.Parse(data)
			require.NoError(t, err)
			xml := f.IFDs[0].Text(tiff.TagImageDescription)
			assert.Contains(t, xml, fmt.Sprintf(` SizeC="%d" `, tc.omeSizeC))
			found := channels.FindAllStringSubmatch(xml, -1)
			require.Len(t, found, tc.sizeC, "Channel elements")
			for _, c := range found {
				assert.Equal(t, strconv.Itoa(spec.SamplesPerPixel), c[1])
			}
			assert.Len(t, f.IFDs, tc.sizeC, "planes")
		})
	}
}

// TestPlanesInDimensionOrder writes several images with Z, C and T, planes
// submitted in a scrambled order, and checks the main chain follows
// DimensionOrder, image after image.
func TestPlanesInDimensionOrder(t *testing.T) {
	specs := []ImageSpec{
		{Name: "a", SizeX: 40, SizeY: 20, SizeZ: 3, SizeC: 2, SizeT: 2, PixelType: Uint16},
		{Name: "b", SizeX: 17, SizeY: 33, SizeZ: 2, SizeC: 3, DimensionOrder: XYCZT, PixelType: Uint8},
		{Name: "c", SizeX: 16, SizeY: 16, SizeT: 3, DimensionOrder: XYTZC, PixelType: Float32},
	}
	var want [][]refPlane
	planes := map[[4]int]refPlane{}
	for i, s := range specs {
		s, _ = s.normalized()
		for p := range s.Planes() {
			z, c, tt := s.PlaneCoords(p)
			base := randomPlane(s.SizeX, s.SizeY, 1, s.PixelType, uint64(1000*i+p), false)
			planes[[4]int{i, z, c, tt}] = base
			want = append(want, referencePyramid(base, s.PixelType, Mean, len(referenceLevels(s.SizeX, s.SizeY, 16))))
		}
	}
	data := writeMemory(t, Options{TileSize: 16}, func(w *Writer) error {
		var ims []*Image
		for _, s := range specs {
			im, err := w.AddImage(s)
			if err != nil {
				return err
			}
			ims = append(ims, im)
		}
		// Last image first, T and C descending: file order must not depend
		// on write order.
		for i := len(specs) - 1; i >= 0; i-- {
			s := ims[i].Spec()
			for tt := s.SizeT - 1; tt >= 0; tt-- {
				for c := s.SizeC - 1; c >= 0; c-- {
					for z := range s.SizeZ {
						if err := ims[i].WritePlane(z, c, tt, planes[[4]int{i, z, c, tt}].pix); err != nil {
							return err
						}
					}
				}
			}
		}
		return nil
	})
	checkPyramid(t, data, want)
}

// writeWhole writes pix as the one plane of an image of spec.
func writeWhole(t *testing.T, opts Options, spec ImageSpec, pix []byte) []byte {
	t.Helper()
	return writeMemory(t, opts, func(w *Writer) error {
		im, err := w.AddImage(spec)
		if err != nil {
			return err
		}
		return im.WritePlane(0, 0, 0, pix)
	})
}

// writeStreamed writes pix as the one plane of an image of spec, through a
// PlaneWriter, band bytes at a time, each from an odd address when odd is
// set (never aligned for samples wider than a byte).
func writeStreamed(t *testing.T, opts Options, spec ImageSpec, pix []byte, band int, odd bool) []byte {
	t.Helper()
	return writeMemory(t, opts, func(w *Writer) error {
		im, err := w.AddImage(spec)
		if err != nil {
			return err
		}
		pw, err := im.Plane(0, 0, 0)
		if err != nil {
			return err
		}
		buf := make([]byte, band+1)
		for p := pix; len(p) > 0; {
			n := min(band, len(p))
			chunk := p[:n]
			if odd {
				chunk = buf[1 : 1+n]
				copy(chunk, p[:n])
			}
			if _, err := pw.Write(chunk); err != nil {
				return err
			}
			p = p[n:]
		}
		return pw.Close()
	})
}

// TestStreamingEqualsWholePlane streams a plane in bands of many sizes,
// from misaligned slices and across row boundaries, and requires the same
// file as writing it whole. In 64-pixel tiles a level hands the next its
// reduced rows in several pieces (reducedRows), and a band of 80 rows
// holds the end of a tile row of three levels and the plane's last row.
func TestStreamingEqualsWholePlane(t *testing.T) {
	for _, tc := range []struct{ w, h, tile int }{{70, 61, 16}, {150, 333, 64}, {40, 300, 64}} {
		base := randomPlane(tc.w, tc.h, 1, Uint16, 3, false)
		spec := ImageSpec{SizeX: tc.w, SizeY: tc.h, PixelType: Uint16}
		opts := Options{TileSize: tc.tile, UUID: "urn:uuid:01234567-89ab-cdef-0123-456789abcdef"}
		whole := writeWhole(t, opts, spec, base.pix)
		row := 2 * tc.w
		for _, band := range []int{1, 2, 3, row - 1, row, row + 1, 7 * row, 16 * row, 33 * row, 80 * row, 100 * row, len(base.pix)} {
			t.Run(fmt.Sprintf("%dx%d tile %d band %d", tc.w, tc.h, tc.tile, band), func(t *testing.T) {
				assert.True(t, bytes.Equal(whole, writeStreamed(t, opts, spec, base.pix, band, true)))
			})
		}
	}
}

// TestStreamingEqualsWholePlaneAnyBands: planes of random sizes and tile
// sizes, streamed in bands of random heights (whole rows or not), give the
// same file as writing them whole.
func TestStreamingEqualsWholePlaneAnyBands(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 150 {
		w, h, tile := 1+rng.IntN(90), 1+rng.IntN(400), 16*(1+rng.IntN(5))
		base := randomPlane(w, h, 1, Uint8, uint64(i), false)
		spec := ImageSpec{SizeX: w, SizeY: h}
		opts := Options{TileSize: tile, Compression: None, UUID: "urn:uuid:01234567-89ab-cdef-0123-456789abcdef"}
		whole := writeWhole(t, opts, spec, base.pix)
		for _, band := range []int{w * (1 + rng.IntN(150)), 1 + rng.IntN(w*150)} {
			if !bytes.Equal(whole, writeStreamed(t, opts, spec, base.pix, band, false)) {
				t.Errorf("%d x %d in %d-pixel tiles, bands of %d bytes: not the file written whole", w, h, tile, band)
			}
		}
	}
}

// TestByteIdenticalAtAnyWorkers writes the same input with 1, 2 and 8
// workers, and with a derived UUID, and requires identical files.
func TestByteIdenticalAtAnyWorkers(t *testing.T) {
	for _, comp := range []Compression{LZW, Deflate, Zstd, None} {
		t.Run(comp.String(), func(t *testing.T) {
			var files [][]byte
			for _, workers := range []int{1, 2, 8} {
				files = append(files, writeMemory(t, Options{TileSize: 32, Workers: workers, Compression: comp}, func(w *Writer) error {
					for i := range 3 {
						base := randomPlane(150+i, 90, 1, Uint16, uint64(i), false)
						im, err := w.AddImage(ImageSpec{SizeX: base.w, SizeY: base.h, PixelType: Uint16})
						if err != nil {
							return err
						}
						if err := im.WritePlane(0, 0, 0, base.pix); err != nil {
							return err
						}
					}
					return nil
				}))
			}
			assert.True(t, bytes.Equal(files[0], files[1]), "workers 1 and 2")
			assert.True(t, bytes.Equal(files[0], files[2]), "workers 1 and 8")
		})
	}
}

func TestUUIDFollowsContent(t *testing.T) {
	write := func(seed uint64, uuid string) string {
		data := writeMemory(t, Options{UUID: uuid}, func(w *Writer) error {
			base := randomPlane(20, 20, 1, Uint8, seed, false)
			im, err := w.AddImage(ImageSpec{SizeX: 20, SizeY: 20})
			if err != nil {
				return err
			}
			return im.WritePlane(0, 0, 0, base.pix)
		})
		f, err := readback.Parse(data)
		require.NoError(t, err)
		desc := f.IFDs[0].Text(tiff.TagImageDescription)
		i := strings.Index(desc, `UUID="`)
		return desc[i+6 : i+6+45]
	}
	assert.Equal(t, write(1, ""), write(1, ""), "same content, same UUID")
	assert.NotEqual(t, write(1, ""), write(2, ""), "other content, other UUID")
	assert.Equal(t, "urn:uuid:01234567-89ab-cdef-0123-456789abcdef", write(1, "01234567-89AB-CDEF-0123-456789ABCDEF"))
}

func TestLevelsOption(t *testing.T) {
	tests := []struct {
		levels, tile int
		want         [][2]int
	}{
		{0, 256, [][2]int{{1000, 300}, {500, 150}, {250, 75}}},
		{2, 256, [][2]int{{1000, 300}, {500, 150}}},
		{1, 16, [][2]int{{1000, 300}}},
		{11, 16, [][2]int{{1000, 300}, {500, 150}, {250, 75}, {125, 38}, {63, 19}, {32, 10}, {16, 5}, {8, 3}, {4, 2}, {2, 1}, {1, 1}}},
	}
	for _, tt := range tests {
		got, err := pyramidLevels(1000, 300, tt.tile, tt.levels)
		require.NoError(t, err)
		var sizes [][2]int
		for _, g := range got {
			sizes = append(sizes, [2]int{g.width, g.height})
			assert.Zero(t, g.tileW%16)
			assert.Zero(t, g.tileH%16)
		}
		assert.Equal(t, tt.want, sizes)
	}
	_, err := pyramidLevels(1000, 300, 16, 12)
	assert.ErrorIs(t, err, ErrOption)
}

func TestImageData(t *testing.T) {
	gray := image.NewGray16(image.Rect(0, 0, 30, 20))
	rgba := image.NewNRGBA(image.Rect(5, 5, 25, 17))
	for i := range gray.Pix {
		gray.Pix[i] = byte(i * 7)
	}
	for i := range rgba.Pix {
		rgba.Pix[i] = byte(i * 3)
	}
	data := writeMemory(t, Options{TileSize: 16}, func(w *Writer) error {
		if _, err := w.AddImageData(ImageSpec{Name: "gray", PhysicalSizeX: 2, PhysicalSizeY: 2}, gray); err != nil {
			return err
		}
		im, err := w.AddImageData(ImageSpec{}, rgba)
		if err == nil && (im.Spec().SamplesPerPixel != 3 || im.Spec().PixelType != Uint8) {
			return fmt.Errorf("layout %+v", im.Spec())
		}
		return err
	})
	f, err := readback.Parse(data)
	require.NoError(t, err)
	require.Len(t, f.IFDs, 2)
	g, err := f.Image(f.IFDs[0])
	require.NoError(t, err)
	assert.Equal(t, gray.Gray16At(3, 2).Y, uint16(g.Pix[2*(2*30+3)])|uint16(g.Pix[2*(2*30+3)+1])<<8)
	c, err := f.Image(f.IFDs[1])
	require.NoError(t, err)
	assert.Equal(t, 3, c.Samples)
	want := rgba.NRGBAAt(9, 8)
	i := 3 * (3*20 + 4)
	assert.Equal(t, []byte{want.R, want.G, want.B}, c.Pix[i:i+3])
	assert.Contains(t, f.IFDs[0].Text(tiff.TagImageDescription), `Name="image 1"`)
}

func TestWriteImageCreatesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.ome.tif")
	m := image.NewGray(image.Rect(0, 0, 40, 40))
	require.NoError(t, WriteImage(path, m, Options{}))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := readback.Parse(data)
	require.NoError(t, err)
	assert.Contains(t, f.IFDs[0].Text(tiff.TagImageDescription), `FileName="one.ome.tif"`)
	assert.ErrorIs(t, WriteImage(path, m, Options{}), iohandle.ErrExist, "never replaced")
}

// TestWriteImageNil: a nil image, or a nil pointer of an image type, is
// ErrData before anything is created at the path.
func TestWriteImageNil(t *testing.T) {
	dir := t.TempDir()
	for _, img := range []image.Image{nil, (*image.Gray)(nil), (*image.RGBA)(nil)} {
		err := WriteImage(filepath.Join(dir, "nil.ome.tif"), img, Options{})
		assert.ErrorIs(t, err, ErrData, "%T", img)
		assert.ErrorContains(t, err, "nil image")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing created, not even a temporary file")
}

func TestMetadata(t *testing.T) {
	data := writeMemory(t, Options{}, func(w *Writer) error {
		im, err := w.AddImage(ImageSpec{Name: `A "quoted" <name> & more`, SizeX: 8, SizeY: 8, SizeC: 2,
			PhysicalSizeX: 0.325, PhysicalSizeY: 0.5, PhysicalSizeZ: 2, PhysicalSizeZUnit: "mm",
			Channels:    []Channel{{Name: "DAPI", Color: color.NRGBA{0, 0, 255, 255}}, {Name: "ünïcödé"}},
			Annotations: []KeyValue{{"stain", "H&E"}, {"scanner", "x<y>"}},
			Description: "line one\nline two",
		})
		if err != nil {
			return err
		}
		for c := range 2 {
			if err := im.WritePlane(0, c, 0, make([]byte, 64)); err != nil {
				return err
			}
		}
		return nil
	})
	var out bytes.Buffer
	require.NoError(t, Inspect(&out, bytes.NewReader(data), int64(len(data)), InspectOptions{}))
	text := out.String()
	assert.Contains(t, text, `"A \"quoted\" <name> & more": 8 x 8, Z 1, C 2, T 1, uint8, XYZCT, 2 planes in TiffData, pixel 0.325 µm x 0.5 µm, Z step 2 mm`)
	assert.Contains(t, text, `channel 0 "DAPI", 1 sample, colour #0000FFFF`)
	assert.Contains(t, text, `channel 1 "ünïcödé"`)
	assert.Contains(t, text, `"stain" = "H&E"`)
	f, err := readback.Parse(data)
	require.NoError(t, err)
	assert.InDelta(t, 1/0.325e-4, f.IFDs[0].Rational(tiff.TagXResolution), 1e-3)
	assert.InDelta(t, 1/0.5e-4, f.IFDs[0].Rational(tiff.TagYResolution), 1e-6)
	assert.Empty(t, f.IFDs[0].SubIFDs, "one tile: no reduced levels")
}

// errorCase is a misuse and the error it must give.
type errorCase struct {
	name string
	run  func(w *Writer) error
	want error
}

func plane8(n int) []byte { return make([]byte, n) }

// TestMicrometreSpellings: "um" and the Greek mu are taken for the micro
// sign in the physical sizes' units, and the OME-XML has the schema's "µm".
func TestMicrometreSpellings(t *testing.T) {
	for _, unit := range []string{"um", "\u03bcm", "µm", ""} {
		file := writeMemory(t, Options{}, func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, PhysicalSizeX: 0.5, PhysicalSizeXUnit: unit, PhysicalSizeY: 0.5, PhysicalSizeYUnit: "unm"})
			require.ErrorIs(t, err, ErrMetadata, "a u before no unit's symbol")
			im, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, PhysicalSizeX: 0.5, PhysicalSizeXUnit: unit, PhysicalSizeY: 0.5, PhysicalSizeYUnit: unit})
			if err != nil {
				return err
			}
			assert.Equal(t, "µm", im.Spec().PhysicalSizeXUnit, "%q", unit)
			return im.WritePlane(0, 0, 0, plane8(16))
		})
		assert.Contains(t, descriptionOf(t, file), `PhysicalSizeX="0.5" PhysicalSizeXUnit="µm" PhysicalSizeY="0.5" PhysicalSizeYUnit="µm"`, "%q", unit)
	}
}

// TestFloatAttributes: the OME-XML's numbers are the schema's xsd:float,
// written as short as they read back as the same 32-bit float.
func TestFloatAttributes(t *testing.T) {
	file := writeMemory(t, Options{}, func(w *Writer) error {
		im, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, PhysicalSizeX: 1e4 / 20040.08, PhysicalSizeY: 0.1,
			TimeIncrement: Quantity{1.0 / 3, "s"}})
		if err != nil {
			return err
		}
		return im.WritePlane(0, 0, 0, plane8(16))
	})
	assert.Contains(t, descriptionOf(t, file), `PhysicalSizeX="0.499" PhysicalSizeXUnit="µm" PhysicalSizeY="0.1" PhysicalSizeYUnit="µm" TimeIncrement="0.33333334" TimeIncrementUnit="s"`)
}

func TestBadInputErrors(t *testing.T) {
	ok := ImageSpec{SizeX: 20, SizeY: 10}
	addOK := func(w *Writer) *Image {
		im, err := w.AddImage(ok)
		if err != nil {
			panic(err)
		}
		return im
	}
	cases := []errorCase{
		{"zero width", func(w *Writer) error { _, err := w.AddImage(ImageSpec{SizeY: 4}); return err }, ErrSize},
		{"negative height", func(w *Writer) error { _, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: -1}); return err }, ErrSize},
		{"negative Z", func(w *Writer) error { _, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, SizeZ: -2}); return err }, ErrSize},
		{"overflowing planes", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, SizeZ: 1 << 30, SizeC: 1 << 30, SizeT: 1 << 30})
			return err
		}, ErrSize},
		{"planes past what package tiff reads", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, SizeT: tiff.MaxDirectories + 1})
			if err != nil && !strings.Contains(err.Error(), "the image takes 1048577 directories (1048577 planes x 1 levels): the file's 1048577 would pass 1048576") {
				return fmt.Errorf("the limit is not named: %v", err)
			}
			return err
		}, ErrSize},
		{"directories past what package tiff reads", func(w *Writer) error {
			// 3 levels of 2^18 planes and 1 level of 2^18 planes fill the
			// file; no image is refused alone, but one more plane is.
			for i, spec := range []ImageSpec{{SizeX: 1024, SizeY: 1024, SizeT: 1 << 18}, {SizeX: 64, SizeY: 64, SizeT: 1 << 18}} {
				if _, err := w.AddImage(spec); err != nil {
					return fmt.Errorf("image %d: %v", i, err)
				}
			}
			_, err := w.AddImage(ImageSpec{SizeX: 64, SizeY: 64})
			if err != nil && !strings.Contains(err.Error(), "the image takes 1 directories (1 planes x 1 levels): the file's 1048577 would pass 1048576") {
				return fmt.Errorf("the count is not said: %v", err)
			}
			return err
		}, ErrSize},
		{"width past 32 bits", func(w *Writer) error { _, err := w.AddImage(ImageSpec{SizeX: 1 << 33, SizeY: 1}); return err }, ErrSize},
		{"RGB float", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, PixelType: Float32, SamplesPerPixel: 3})
			return err
		}, ErrPixelType},
		{"two samples", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, SamplesPerPixel: 2})
			return err
		}, ErrPixelType},
		{"unknown pixel type", func(w *Writer) error { _, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, PixelType: 42}); return err }, ErrPixelType},
		{"bad dimension order", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, DimensionOrder: "xyzct"})
			if err != nil && !strings.Contains(err.Error(), `DimensionOrder "xyzct" is none of XYZCT, XYZTC,`) {
				return fmt.Errorf("the orders are not named: %v", err)
			}
			return err
		}, ErrMetadata},
		{"invalid UTF-8", func(w *Writer) error { _, err := w.AddImage(ImageSpec{Name: "a\xffb", SizeX: 4, SizeY: 4}); return err }, ErrMetadata},
		{"control character", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, Annotations: []KeyValue{{"k", "\x01"}}})
			if err != nil && !strings.Contains(err.Error(), "(Annotations[0].Value)") {
				return fmt.Errorf("the field is not named: %v", err)
			}
			return err
		}, ErrMetadata},
		{"unknown unit", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, PhysicalSizeX: 1, PhysicalSizeXUnit: "furlong"})
			return err
		}, ErrMetadata},
		{"a size xsd:float rounds to 0", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, PhysicalSizeX: 1, PhysicalSizeY: 1e-50})
			if err != nil && !strings.Contains(err.Error(), "PhysicalSizeY 1e-50") {
				return fmt.Errorf("the field is not named: %v", err)
			}
			return err
		}, ErrMetadata},
		{"a size past xsd:float's largest", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, PhysicalSizeX: 3.5e38})
			if err != nil && !strings.Contains(err.Error(), "PhysicalSizeX 3.5e+38") {
				return fmt.Errorf("the field is not named: %v", err)
			}
			return err
		}, ErrMetadata},
		{"a wavelength xsd:float rounds to 0", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, Channels: []Channel{{EmissionWavelength: Quantity{5e-324, "nm"}}}})
			return err
		}, ErrMetadata},
		{"year 0", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, AcquisitionDate: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)})
			return err
		}, ErrMetadata},
		{"a colour not alpha-premultiplied", func(w *Writer) error {
			// color.RGBA{G: 255} reads as green but has no opacity.
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, Channels: []Channel{{Color: color.RGBA{G: 255}}}})
			if err != nil && !strings.Contains(err.Error(), "Channels[0].Color") {
				return fmt.Errorf("the field is not named: %v", err)
			}
			return err
		}, ErrMetadata},
		{"too many channel names", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, Channels: []Channel{{Name: "a"}, {Name: "b"}}})
			return err
		}, ErrMetadata},
		{"plane out of range", func(w *Writer) error { return addOK(w).WritePlane(0, 1, 0, plane8(200)) }, ErrPlane},
		{"negative plane", func(w *Writer) error { _, err := addOK(w).Plane(-1, 0, 0); return err }, ErrPlane},
		{"short data", func(w *Writer) error { return addOK(w).WritePlane(0, 0, 0, plane8(199)) }, ErrData},
		{"long data", func(w *Writer) error { return addOK(w).WritePlane(0, 0, 0, plane8(201)) }, ErrData},
		{"plane twice", func(w *Writer) error {
			im := addOK(w)
			if err := im.WritePlane(0, 0, 0, plane8(200)); err != nil {
				return err
			}
			return im.WritePlane(0, 0, 0, plane8(200))
		}, ErrPlane},
		{"rows past the end", func(w *Writer) error {
			pw, err := addOK(w).Plane(0, 0, 0)
			if err != nil {
				return err
			}
			if _, err := pw.Write(plane8(150)); err != nil {
				return err
			}
			_, err = pw.Write(plane8(60))
			return err
		}, ErrData},
		{"incomplete plane closed", func(w *Writer) error {
			pw, err := addOK(w).Plane(0, 0, 0)
			if err != nil {
				return err
			}
			if _, err := pw.Write(plane8(20)); err != nil {
				return err
			}
			return pw.Close()
		}, ErrData},
		{"missing planes at close", func(w *Writer) error {
			im, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, SizeZ: 3})
			if err != nil {
				return err
			}
			if err := im.WritePlane(1, 0, 0, plane8(16)); err != nil {
				return err
			}
			return w.Close()
		}, ErrMissingPlanes},
		{"no image at close", func(w *Writer) error { return w.Close() }, ErrMissingPlanes},
		{"call after close", func(w *Writer) error {
			im := addOK(w)
			if err := im.WritePlane(0, 0, 0, plane8(200)); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
			_, err := w.AddImage(ok)
			return err
		}, ErrClosed},
		{"nil image", func(w *Writer) error { _, err := w.AddImageData(ImageSpec{}, nil); return err }, ErrData},
		{"a nil *image.Gray", func(w *Writer) error { _, err := w.AddImageData(ImageSpec{}, (*image.Gray)(nil)); return err }, ErrData},
		{"image data with other sizes", func(w *Writer) error {
			_, err := w.AddImageData(ImageSpec{SizeX: 3}, image.NewGray(image.Rect(0, 0, 4, 4)))
			return err
		}, ErrData},
		{"image data with another pixel type", func(w *Writer) error {
			_, err := w.AddImageData(ImageSpec{PixelType: Float32}, image.NewGray(image.Rect(0, 0, 4, 4)))
			return err
		}, ErrData},
		{"a row of tiles of more than 1 TiB", func(w *Writer) error {
			// 2^31 tiles of 256x256, within what a directory holds
			_, err := w.AddImage(ImageSpec{SizeX: math.MaxInt32, SizeY: 1 << 15, PixelType: Float64})
			return err
		}, ErrSize},
		{"more tiles in a level than a TIFF directory holds", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: math.MaxInt32, SizeY: math.MaxInt32})
			return err
		}, ErrSize},
		{"a width past OME's PositiveInt (2^31-1)", func(w *Writer) error {
			_, err := w.AddImage(ImageSpec{SizeX: math.MaxInt32 + 1, SizeY: 16})
			return err
		}, ErrSize},
		{"a width past OME's PositiveInt, given encoded", func(w *Writer) error {
			_, err := w.AddEncodedImage(ImageSpec{SizeX: math.MaxInt32 + 1, SizeY: 16},
				EncodedLevel{TileCoding: TileCoding{Compression: LZW, TileWidth: 1 << 16, TileHeight: 16}})
			return err
		}, ErrSize},
		{"YCbCr image whose chroma does not cover its bounds", func(w *Writer) error {
			// image.NewYCbCr's chroma planes fall one short for this origin
			_, err := w.AddImageData(ImageSpec{}, image.NewYCbCr(image.Rect(-24, 9, 0, 52), image.YCbCrSubsampleRatio410))
			return err
		}, ErrData},
		{"image whose pixels are shorter than its bounds", func(w *Writer) error {
			m := image.NewGray(image.Rect(0, 0, 4, 4))
			m.Pix = m.Pix[:15]
			_, err := w.AddImageData(ImageSpec{}, m)
			return err
		}, ErrData},
		{"image with a negative stride", func(w *Writer) error {
			m := image.NewRGBA(image.Rect(0, 0, 4, 4))
			m.Stride = -16
			_, err := w.AddImageData(ImageSpec{}, m)
			return err
		}, ErrData},
		{"palette index past the palette", func(w *Writer) error {
			m := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
			m.Pix[5] = 2
			_, err := w.AddImageData(ImageSpec{}, m)
			return err
		}, ErrData},
		{"palette index of a nil colour", func(w *Writer) error {
			m := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, nil})
			m.Pix[15] = 1
			_, err := w.AddImageData(ImageSpec{}, m)
			return err
		}, ErrData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.ome.tif")
			w, err := Create(path, Options{})
			require.NoError(t, err)
			err = tc.run(w)
			require.ErrorIs(t, err, tc.want)
			requireOnePrefix(t, err)
			closeErr := w.Close()
			if closeErr == nil && tc.want != ErrMissingPlanes {
				// The writer survived a rejected call and wrote a valid file;
				// that is allowed only when every plane was written.
				return
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "no file at the destination after a failure")
		})
	}
}

func TestBadOptions(t *testing.T) {
	//lint:ignore SA1012 a nil context on purpose
	_, err := NewContext(nil, iohandle.NewMemory(), Options{})
	assert.ErrorIs(t, err, ErrOption, "a nil context")
	bad := []Options{
		{TileSize: 24}, {TileSize: -16}, {TileSize: 8}, {Compression: 9}, {Predictor: 7},
		{Compression: None, Predictor: PredictorHorizontal}, {Levels: -1}, {Downsampling: 5},
		{Workers: -1}, {BigTIFF: 4}, {UUID: "not-a-uuid"}, {Compression: Deflate, Level: 99},
	}
	for _, o := range bad {
		_, err = New(iohandle.NewMemory(), o)
		assert.ErrorIs(t, err, ErrOption, "%+v", o)
	}
	w, err := New(iohandle.NewMemory(), Options{Predictor: PredictorHorizontal})
	require.NoError(t, err)
	_, err = w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, PixelType: Float32})
	assert.ErrorIs(t, err, ErrOption, "horizontal predictor on floats")
}

// TestCancelledContext: a context cancelled during the writing fails it
// with the cause it was cancelled with (context.Canceled without one),
// whether tiles are compressed, stored unchanged, or copied straight by
// ReadPlanes; no file is left.
func TestCancelledContext(t *testing.T) {
	stop := errors.New("stopped by the user")
	for _, comp := range []Compression{LZW, None} {
		for _, read := range []bool{false, true} {
			for _, cause := range []error{nil, stop} {
				t.Run(fmt.Sprintf("%v/ReadPlanes %v/%v", comp, read, cause), func(t *testing.T) {
					want := cause
					if want == nil {
						want = context.Canceled
					}
					dir := t.TempDir()
					ctx, cancel := context.WithCancelCause(context.Background())
					w, err := CreateContext(ctx, filepath.Join(dir, "x.ome.tif"), Options{Compression: comp, TileSize: 64, Levels: 1})
					require.NoError(t, err)
					im, err := w.AddImage(ImageSpec{SizeX: 64, SizeY: 64, SizeZ: 50})
					require.NoError(t, err)
					if !read {
						require.NoError(t, im.WritePlane(0, 0, 0, plane8(64*64)))
					}
					cancel(cause)
					if read {
						err = im.ReadPlanes(bytes.NewReader(make([]byte, 50*64*64)))
					}
					for z := 1; z < 50 && err == nil; z++ {
						err = im.WritePlane(z, 0, 0, plane8(64*64))
					}
					if err == nil {
						err = w.Close()
					} else {
						assert.ErrorIs(t, w.Close(), want)
					}
					assert.ErrorIs(t, err, want)
					entries, err := os.ReadDir(dir)
					require.NoError(t, err)
					assert.Empty(t, entries)
				})
			}
		}
	}
}

// TestContextDoneUnannounced: a context done before Close fails the
// writer even when its callback has not run, whether after the next tile
// or after the last one, at every Workers and with tiles stored unchanged:
// no file is committed.
func TestContextDoneUnannounced(t *testing.T) {
	for _, o := range []Options{{Workers: 1}, {Workers: 2}, {Compression: None}} {
		for _, last := range []bool{false, true} {
			dir := t.TempDir()
			ctx := ctxtest.New()
			o.TileSize = 16
			w, err := CreateContext(ctx, filepath.Join(dir, "x.ome.tif"), o)
			require.NoError(t, err)
			im, err := w.AddImage(ImageSpec{SizeX: 32, SizeY: 32, SizeZ: 2})
			require.NoError(t, err)
			require.NoError(t, im.WritePlane(0, 0, 0, plane8(32*32)))
			if !last {
				ctx.Cancel()
				assert.ErrorIs(t, im.WritePlane(1, 0, 0, plane8(32*32)), context.Canceled, "%+v: the next tile", o)
			} else {
				require.NoError(t, im.WritePlane(1, 0, 0, plane8(32*32)))
				ctx.Cancel()
			}
			assert.ErrorIs(t, w.Close(), context.Canceled, "%+v, done after the last tile: %v", o, last)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries)
		}
	}
}

// TestFaultsLeaveNoFile fails the output at every write call in turn and at
// commit: every attempt returns an error, and no file is left.
func TestFaultsLeaveNoFile(t *testing.T) {
	write := func(h iohandle.Handle) error {
		w, err := New(h, Options{TileSize: 16, Workers: 2})
		if err != nil {
			return err
		}
		im, err := w.AddImage(ImageSpec{SizeX: 60, SizeY: 40, SizeC: 2, PixelType: Uint16})
		if err != nil {
			return err
		}
		for c := range 2 {
			if err := im.WritePlane(0, c, 0, randomPlane(60, 40, 1, Uint16, uint64(c), false).pix); err != nil {
				_ = w.Abort()
				return err
			}
		}
		return w.Close()
	}
	count := iohandle.NewMemory()
	require.NoError(t, write(count))
	calls := int(count.Stats().Writes())
	dir := t.TempDir()
	faults := []iohandletest.Faults{{Sync: true}, {Rename: true}, {MaxBytes: count.Len() / 2}, {MaxBytes: count.Len() - 1}}
	for i := 1; i <= calls; i++ {
		faults = append(faults, iohandletest.Faults{Write: i})
	}
	for _, fault := range faults {
		f, err := iohandle.Create(filepath.Join(dir, "out.ome.tif"), iohandle.Options{NoSync: true, BufferSize: 256})
		require.NoError(t, err)
		err = write(iohandletest.NewFaulty(f, fault))
		assert.ErrorIs(t, err, iohandletest.ErrInjected, "%+v", fault)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "%+v", fault)
	}
}

// TestProgress writes two planes at every Workers: Progress is told
// counts that never go back, and at Close the whole file's.
func TestProgress(t *testing.T) {
	for _, workers := range []int{1, 2, 0} {
		t.Run(fmt.Sprintf("workers %d", workers), func(t *testing.T) {
			var seen []Progress
			opts := Options{TileSize: 16, Workers: workers, Progress: func(p Progress) { seen = append(seen, p) }}
			file := writeMemory(t, opts, func(w *Writer) error {
				im, err := w.AddImage(ImageSpec{SizeX: 50, SizeY: 40, SizeZ: 2})
				if err != nil {
					return err
				}
				for z := range 2 {
					if err := im.WritePlane(z, 0, 0, plane8(2000)); err != nil {
						return err
					}
				}
				return nil
			})
			// Levels 50x40 (4x3 tiles) and 25x20 (2x2) and 13x10 (1): 17 per plane.
			require.NotEmpty(t, seen)
			if workers == 1 {
				assert.Len(t, seen, 35, "one call a tile, and Close's")
			}
			for i := 1; i < len(seen); i++ {
				assert.GreaterOrEqual(t, seen[i].Tiles, seen[i-1].Tiles, "call %d", i)
				assert.GreaterOrEqual(t, seen[i].Bytes, seen[i-1].Bytes, "call %d", i)
			}
			last := seen[len(seen)-1]
			assert.Equal(t, Progress{Tiles: 34, TotalTiles: 34, Bytes: int64(len(file))}, last)
		})
	}
}

// TestProgressMayCallTheWriter calls the Writer's methods from Progress
// (at its first report, or at the committed file's), at Workers 1 and 2:
// each returns what it would on another goroutine, and none waits for ever
// (the guard fails the test after a minute).
func TestProgressMayCallTheWriter(t *testing.T) {
	spec := ImageSpec{SizeX: 512, SizeY: 512, SizeZ: 3} // planes fill the pipeline's batches: reports come as they are written
	plane := plane8(512 * 512)
	cases := []struct {
		name      string
		call      func(w *Writer, im *Image) error
		want      error // of the call; nil for none
		atClose   bool  // called at the committed file's report, else at the first
		wantClose error // nil: the file is committed
	}{
		{"Stats", func(w *Writer, _ *Image) error { w.Stats(); return nil }, nil, false, nil},
		{"another plane", func(_ *Writer, im *Image) error { return im.WritePlane(2, 0, 0, plane) }, nil, false, nil},
		{"the same plane", func(_ *Writer, im *Image) error { return im.WritePlane(0, 0, 0, plane) }, ErrPlane, false, nil},
		{"AddImage", func(w *Writer, _ *Image) error { _, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 8}); return err }, nil, false, ErrMissingPlanes},
		{"Abort", func(w *Writer, _ *Image) error { return w.Abort() }, nil, false, ErrClosed},
		{"Close", func(w *Writer, _ *Image) error { return w.Close() }, ErrMissingPlanes, false, ErrClosed},
		{"Close of the committed file", func(w *Writer, _ *Image) error { return w.Close() }, nil, true, nil},
		{"Abort of the committed file", func(w *Writer, _ *Image) error { return w.Abort() }, nil, true, nil},
	}
	for _, workers := range []int{1, 2} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s workers %d", c.name, workers), func(t *testing.T) {
				done := make(chan struct{})
				go func() {
					defer close(done)
					var w *Writer
					var im *Image
					var calls []error
					var seen []Progress
					closing := false
					h := iohandle.NewMemory()
					w, err := New(h, Options{TileSize: 16, Workers: workers, Progress: func(p Progress) {
						seen = append(seen, p)
						if len(calls) == 0 && c.atClose == closing && (!closing || p.Tiles == p.TotalTiles) {
							calls = append(calls, c.call(w, im))
						}
					}})
					if !assert.NoError(t, err) {
						return
					}
					im, err = w.AddImage(spec)
					if !assert.NoError(t, err) {
						return
					}
					for z := range 3 {
						if err := im.WritePlane(z, 0, 0, plane); err != nil && !errors.Is(err, ErrPlane) {
							assert.ErrorIs(t, err, ErrClosed, "plane %d", z)
						}
					}
					closing = true
					err = w.Close()
					if assert.Len(t, calls, 1, "the call was made") {
						if c.want == nil {
							assert.NoError(t, calls[0])
						} else {
							assert.ErrorIs(t, calls[0], c.want)
						}
					}
					if c.wantClose != nil {
						assert.ErrorIs(t, err, c.wantClose)
						return
					}
					assert.NoError(t, err)
					if assert.NotEmpty(t, seen) {
						assert.Equal(t, int64(len(h.Bytes())), seen[len(seen)-1].Bytes, "the committed file's report comes last")
					}
				}()
				select {
				case <-done:
				case <-time.After(time.Minute):
					t.Fatal("a call from Progress waits for ever")
				}
			})
		}
	}
}

// TestProgressCommittedFileReported: the committed file's report is not
// lost when Progress runs as Close commits: Close from Progress (a report
// of ReadPlanes, whose planes are complete by then), or Close on another
// goroutine while Progress runs.
func TestProgressCommittedFileReported(t *testing.T) {
	spec := ImageSpec{SizeX: 64, SizeY: 64, SizeZ: 3}
	opts := Options{Compression: None, TileSize: 64} // each plane its own tile: ReadPlanes copies them
	for _, elsewhere := range []bool{false, true} {
		var w *Writer
		var seen []Progress
		var closeErr error
		inside, release := make(chan struct{}), make(chan struct{})
		once := false
		opts.Progress = func(p Progress) {
			seen = append(seen, p)
			if p.Tiles == p.TotalTiles && !once {
				once = true
				if elsewhere {
					close(inside)
					<-release
				} else {
					closeErr = w.Close()
				}
			}
		}
		h := iohandle.NewMemory()
		w, err := New(h, opts)
		require.NoError(t, err)
		im, err := w.AddImage(spec)
		require.NoError(t, err)
		read := make(chan error)
		go func() { read <- im.ReadPlanes(bytes.NewReader(make([]byte, 3*64*64))) }()
		if elsewhere {
			<-inside
			closeErr = w.Close()
			close(release)
		}
		require.NoError(t, <-read)
		require.NoError(t, closeErr)
		require.NoError(t, w.Close())
		assert.Equal(t, Progress{Tiles: 3, TotalTiles: 3, Bytes: int64(len(h.Bytes()))}, seen[len(seen)-1], "elsewhere %v: %+v", elsewhere, seen)
	}
}

// TestNoGoroutineOutlivesTheWriter checks that Close, Abort and failures
// all stop the encoding goroutines, planes written from several goroutines
// or not: synctest.Test fails if a goroutine started in its bubble is
// still blocked (a worker waiting on its sync.Cond) when the test ends.
func TestNoGoroutineOutlivesTheWriter(t *testing.T) {
	planes := func(im *Image, goroutines int) error {
		var jobs []planeJob
		for z := range 4 {
			jobs = append(jobs, planeJob{im: im, p: z, pix: plane8(64 * 64), how: 1, band: 500})
		}
		return runJobs(jobs, goroutines)
	}
	endings := map[string]func(w *Writer, im *Image, cancel func()) error{
		"close": func(w *Writer, im *Image, _ func()) error {
			if err := planes(im, 1); err != nil {
				return err
			}
			return w.Close()
		},
		"close after concurrent planes": func(w *Writer, im *Image, _ func()) error {
			if err := planes(im, 4); err != nil {
				return err
			}
			return w.Close()
		},
		"abort": func(w *Writer, im *Image, _ func()) error { return w.Abort() },
		"abort while planes are written": func(w *Writer, im *Image, _ func()) error {
			done := make(chan error)
			go func() { done <- planes(im, 4) }()
			abortErr := w.Abort()
			if err := <-done; err != nil && !errors.Is(err, ErrClosed) {
				return err
			}
			return abortErr
		},
		"missing planes": func(w *Writer, im *Image, _ func()) error {
			if !errors.Is(w.Close(), ErrMissingPlanes) {
				return errors.New("want ErrMissingPlanes")
			}
			return nil
		},
		"cancelled": func(w *Writer, im *Image, cancel func()) error {
			cancel()
			if err := planes(im, 2); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			if err := w.Close(); !errors.Is(err, context.Canceled) {
				return fmt.Errorf("want context.Canceled, got %v", err)
			}
			return nil
		},
	}
	for name, end := range endings {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// Only the ending that cancels gets a context to cancel: a
				// deferred cancel would stop goroutines that Close or Abort
				// left behind.
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if name == "cancelled" {
					ctx, cancel = context.WithCancel(ctx)
				}
				w, err := NewContext(ctx, iohandle.NewMemory(), Options{Workers: 4, TileSize: 16})
				require.NoError(t, err)
				im, err := w.AddImage(ImageSpec{SizeX: 64, SizeY: 64, SizeZ: 4})
				require.NoError(t, err)
				require.NoError(t, end(w, im, cancel))
			})
		})
	}
}

// TestPlaneOfManyTiles: starting a plane allocates nothing in proportion
// to its tiles (22 million here, whose tile numbers would take 179 MB): the
// numbers grow as the tiles come.
func TestPlaneOfManyTiles(t *testing.T) {
	w, err := New(iohandle.NewMemory(), Options{TileSize: 16})
	require.NoError(t, err)
	im, err := w.AddImage(ImageSpec{SizeX: 1 << 16, SizeY: 1 << 16})
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = im.Plane(0, 0, 0)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated to start the plane")
	require.NoError(t, w.Abort())
}

// TestPlaneWriterAbort gives back a plane cut off after tiles of it were
// stored: the plane written again gives the pixels and the derived UUID
// of a clean write, and the PlaneWriter given back takes nothing more. A
// plane given back before any byte, and a complete plane, are tried too.
func TestPlaneWriterAbort(t *testing.T) {
	spec := ImageSpec{SizeX: 2048, SizeY: 1536, SizeZ: 2, PixelType: Uint16} // 6 MiB a plane
	planes, _ := rawPlanes(spec)
	for _, comp := range []Compression{None, Deflate} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%v, workers %d", comp, workers), func(t *testing.T) {
				opts := Options{Compression: comp, Workers: workers}
				clean := writeZPlanes(t, opts, spec, planes)
				h := iohandle.NewMemory()
				w, err := New(h, opts)
				require.NoError(t, err)
				im, err := w.AddImage(spec)
				require.NoError(t, err)
				before := w.progress().TotalTiles

				pw, err := im.Plane(1, 0, 0)
				require.NoError(t, err)
				_, err = pw.Write(planes[1][:5<<20])
				require.NoError(t, err)
				require.NoError(t, pw.Abort())
				assert.Positive(t, w.progress().TotalTiles-before, "tiles of the plane given back were stored")
				_, err = pw.Write(planes[1][5<<20:])
				assert.ErrorIs(t, err, ErrPlane, "a plane given back takes nothing")
				assert.ErrorIs(t, pw.Close(), ErrPlane)
				assert.NoError(t, pw.Abort(), "again: nothing to do")

				empty, err := im.Plane(0, 0, 0)
				require.NoError(t, err)
				require.NoError(t, empty.Abort())

				require.NoError(t, im.WritePlane(1, 0, 0, planes[1]))
				done, err := im.Plane(0, 0, 0)
				require.NoError(t, err)
				_, err = done.Write(planes[0])
				require.NoError(t, err)
				assert.ErrorIs(t, done.Abort(), ErrPlane, "a complete plane is not given back")
				require.NoError(t, w.Close())
				compareFiles(t, clean, h.Bytes(), true) // the UUID derives from the tiles the directories name
			})
		}
	}
}

// TestPlaneWriterCloseAfterEnd: an incomplete plane's Close after the
// writer's Abort, or its Close, is ErrClosed (the writer ended it), not
// ErrData, and before either, ErrData; a complete plane's is nil.
func TestPlaneWriterCloseAfterEnd(t *testing.T) {
	for _, end := range []string{"Abort", "Close"} {
		t.Run(end, func(t *testing.T) {
			w, err := New(iohandle.NewMemory(), Options{})
			require.NoError(t, err)
			defer w.Abort()
			im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 4, SizeT: 2})
			require.NoError(t, err)
			half, err := im.Plane(0, 0, 0)
			require.NoError(t, err)
			_, err = half.Write(make([]byte, 16))
			require.NoError(t, err)
			assert.ErrorIs(t, half.Close(), ErrData)
			whole, err := im.Plane(0, 0, 1)
			require.NoError(t, err)
			_, err = whole.Write(make([]byte, 32))
			require.NoError(t, err)
			if end == "Abort" {
				require.NoError(t, w.Abort())
			} else {
				require.ErrorIs(t, w.Close(), ErrMissingPlanes)
			}
			err = half.Close()
			assert.ErrorIs(t, err, ErrClosed)
			assert.NotErrorIs(t, err, ErrData)
			assert.NoError(t, whole.Close())
		})
	}
}

// TestPlaneComplete: a plane is complete once its last row is written, not
// while open, nor after Abort gives it back; planes outside the image and
// a zero Image are errors.
func TestPlaneComplete(t *testing.T) {
	w, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w.Abort()
	im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 4, SizeT: 2})
	require.NoError(t, err)
	complete := func(z, c, tp int) bool {
		done, err := im.PlaneComplete(z, c, tp)
		require.NoError(t, err)
		return done
	}
	assert.False(t, complete(0, 0, 0))
	pw, err := im.Plane(0, 0, 0)
	require.NoError(t, err)
	_, err = pw.Write(make([]byte, 16))
	require.NoError(t, err)
	assert.False(t, complete(0, 0, 0), "half written")
	require.NoError(t, pw.Abort())
	assert.False(t, complete(0, 0, 0), "given back")
	require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 32)))
	assert.True(t, complete(0, 0, 0))
	assert.False(t, complete(0, 0, 1))
	_, err = im.PlaneComplete(0, 0, 2)
	assert.ErrorIs(t, err, ErrPlane)
	_, err = (&Image{}).PlaneComplete(0, 0, 0)
	assert.ErrorIs(t, err, ErrClosed)
	require.NoError(t, im.WritePlane(0, 0, 1, make([]byte, 32)))
	require.NoError(t, im.TruncateT(1))
	_, err = im.PlaneComplete(0, 0, 1)
	assert.ErrorIs(t, err, ErrPlane, "dropped by TruncateT, as Plane says")
	require.NoError(t, w.Close())
	_, err = im.PlaneComplete(0, 0, 0)
	assert.ErrorIs(t, err, ErrClosed)
}

// syncCancels is a handle whose Sync cancels the writer's context, as a
// signal during a long fsync would.
type syncCancels struct {
	*iohandle.Memory
	cancel context.CancelCauseFunc
	syncs  int
}

func (h *syncCancels) Sync() error {
	h.syncs++
	h.cancel(errStopped)
	return nil
}

var errStopped = errors.New("stopped while the file synced")

// TestCloseContextDuringSync: a context done while Close syncs the file
// discards it; Commit is never called.
func TestCloseContextDuringSync(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	h := &syncCancels{Memory: iohandle.NewMemory(), cancel: cancel}
	w, err := NewContext(ctx, h, Options{})
	require.NoError(t, err)
	im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 4})
	require.NoError(t, err)
	require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 32)))
	assert.ErrorIs(t, w.Close(), errStopped)
	assert.Equal(t, 1, h.syncs)
	assert.Nil(t, h.Bytes(), "not committed: discarded")
}

// TestProgressPanicsMidPlane: a Progress that panics within a
// PlaneWriter's or EncodedPlaneWriter's call, which the caller recovers,
// gives the plane back: writing on through the same writer is ErrPlane
// (it stored a tile twice, and the file's directory listed one offset
// more than its tiles), and the plane written again makes a whole file.
func TestProgressPanicsMidPlane(t *testing.T) {
	const width, height, tile = 100, 70, 16
	base := randomPlane(width, height, 1, Uint8, 3, false)
	tiles := make([][]byte, 0, 28) // the full resolution's, uncompressed, edge tiles padded
	for y := 0; y < height; y += tile {
		for x := 0; x < width; x += tile {
			t := make([]byte, tile*tile)
			for r := range min(tile, height-y) {
				copy(t[r*tile:], base.pix[(y+r)*width+x:(y+r)*width+min(x+tile, width)])
			}
			tiles = append(tiles, t)
		}
	}
	for _, tt := range []struct {
		name    string
		workers int
		encoded bool
		rows    bool // of a plane given encoded: the panic in its rows, after its tiles
	}{{"rows, synchronous", 1, false, false}, {"rows, pipelined", 2, false, false}, {"tiles given encoded", 1, true, false},
		{"tiles given encoded, pipelined", 2, true, false}, {"rows of tiles given encoded", 1, true, true}, {"rows of tiles given encoded, pipelined", 2, true, true}} {
		t.Run(tt.name, func(t *testing.T) {
			calls, panicAt := 0, 2
			h := iohandle.NewMemory()
			w, err := New(h, Options{TileSize: tile, Compression: None, Workers: tt.workers, Progress: func(Progress) {
				if calls++; calls == panicAt {
					panic("the progress bar fails")
				}
			}})
			require.NoError(t, err)
			spec := ImageSpec{SizeX: width, SizeY: height}
			var im *Image
			if tt.encoded {
				im, err = w.AddEncodedImage(spec, EncodedLevel{TileCoding: TileCoding{Compression: None, TileWidth: tile, TileHeight: tile}})
			} else {
				im, err = w.AddImage(spec)
			}
			require.NoError(t, err)
			again := func() error { // the plane's data from its start, through the writer at hand
				t.Helper()
				if !tt.encoded {
					pw, err := im.Plane(0, 0, 0)
					require.NoError(t, err)
					return pw.writeAll(base.pix)
				}
				ep, err := im.EncodedPlane(0, 0, 0)
				require.NoError(t, err)
				for _, tl := range tiles {
					if err := ep.WriteTile(0, tl); err != nil {
						return err
					}
				}
				if _, err := ep.Write(base.pix); err != nil {
					return err
				}
				return ep.Close()
			}
			if tt.encoded {
				ep, err := im.EncodedPlane(0, 0, 0)
				require.NoError(t, err)
				if tt.rows {
					panicAt = math.MaxInt
					for _, tl := range tiles {
						require.NoError(t, ep.WriteTile(0, tl))
					}
					panicAt = calls + 1
				}
				func() {
					defer func() { assert.Equal(t, "the progress bar fails", recover()) }()
					if tt.rows {
						for y := range height {
							_, err := ep.Write(base.pix[y*width : (y+1)*width])
							require.NoError(t, err)
						}
						return
					}
					for _, tl := range tiles {
						require.NoError(t, ep.WriteTile(0, tl))
					}
				}()
				_, err = ep.Write(base.pix[:width])
				assert.ErrorIs(t, err, ErrPlane, "writing on")
				assert.ErrorIs(t, ep.WriteTile(0, tiles[0]), ErrPlane, "writing on")
				assert.ErrorIs(t, ep.Close(), ErrPlane)
			} else {
				pw, err := im.Plane(0, 0, 0)
				require.NoError(t, err)
				func() {
					defer func() { assert.Equal(t, "the progress bar fails", recover()) }()
					for y := range height {
						_, err := pw.Write(base.pix[y*width : (y+1)*width])
						require.NoError(t, err)
					}
				}()
				_, err = pw.Write(base.pix[:width])
				assert.ErrorIs(t, err, ErrPlane, "writing on")
				assert.ErrorIs(t, pw.Close(), ErrPlane)
			}
			done, err := im.PlaneComplete(0, 0, 0)
			require.NoError(t, err)
			assert.False(t, done, "given back")
			require.NoError(t, again(), "written again")
			require.NoError(t, w.Close())
			levels := referenceLevels(width, height, tile)
			checkPyramid(t, h.Bytes(), [][]refPlane{referencePyramid(base, Uint8, Options{}.Downsampling, len(levels))})
			f, err := readback.Parse(h.Bytes())
			require.NoError(t, err)
			assert.Len(t, f.IFDs[0].Uints(tiff.TagTileOffsets), len(tiles), "an offset a tile")
		})
	}
}

// TestProgressPanics: a Progress that panics once, which the caller
// recovers, is called again for the planes written after, and with the
// committed file's report (a panic left its lock held, and no report came
// again).
func TestProgressPanics(t *testing.T) {
	spec := ImageSpec{SizeX: 32, SizeY: 32, SizeZ: 4}
	var seen []Progress
	h := iohandle.NewMemory()
	w, err := New(h, Options{TileSize: 32, Workers: 1, Progress: func(p Progress) {
		seen = append(seen, p)
		if len(seen) == 1 {
			panic("the progress bar fails")
		}
	}})
	require.NoError(t, err)
	im, err := w.AddImage(spec)
	require.NoError(t, err)
	func() {
		defer func() { assert.Equal(t, "the progress bar fails", recover()) }()
		_ = im.WritePlane(0, 0, 0, make([]byte, 32*32))
	}()
	require.Len(t, seen, 1)
	for z := range 4 { // plane 0 given back, written again
		require.NoError(t, im.WritePlane(z, 0, 0, make([]byte, 32*32)))
	}
	require.NoError(t, w.Close())
	assert.Greater(t, len(seen), 2)
	// Plane 0's first tile, stored before the panic, stays in the file
	// unused, and counts (as Abort's doc says).
	assert.Equal(t, Progress{Tiles: 5, TotalTiles: 5, Bytes: int64(len(h.Bytes()))}, seen[len(seen)-1])
}

// panicAt is an image whose rows from row on panic when read: a lazily
// decoded image whose read failed.
type panicAt struct {
	image.Image
	row int
}

func (p panicAt) At(x, y int) color.Color {
	if y >= p.row {
		panic("read failed")
	}
	return p.Image.At(x, y)
}

// TestPanickingImage: an image.Image that panics after some of its tiles
// were written panics WriteImage, which leaves no goroutine (synctest) and
// nothing in the output's directory; it panics AddImageData, whose writer
// then fails (its Close says why, where it said a plane the caller could
// not write was missing) and leaves no goroutine after Abort.
func TestPanickingImage(t *testing.T) {
	img := panicAt{image.NewGray(image.Rect(0, 0, 64, 200)), 150}
	opts := Options{Workers: 4, TileSize: 16}
	t.Run("WriteImage", func(t *testing.T) {
		dir := t.TempDir()
		synctest.Test(t, func(t *testing.T) {
			assert.PanicsWithValue(t, "read failed", func() { _ = WriteImage(filepath.Join(dir, "x.ome.tif"), img, opts) })
		})
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries)
	})
	t.Run("AddImageData", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w, err := New(iohandle.NewMemory(), opts)
			require.NoError(t, err)
			assert.PanicsWithValue(t, "read failed", func() { _, _ = w.AddImageData(ImageSpec{}, img) })
			err = w.Close()
			assert.ErrorIs(t, err, ErrData)
			assert.ErrorContains(t, err, "pyramid.panicAt panicked while its pixels were read: read failed")
			assert.NoError(t, w.Abort())
		})
	})
}
