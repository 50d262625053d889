package pyramid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/internal/synth"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// psnr is the peak signal-to-noise ratio of b against a, in dB.
var psnr = readback.PSNR

// decodePage decodes every tile of a tiled page with package compress's
// decoder and returns its pixels; each decoded tile, whole (padding
// included), also goes to each, if set, in the order of TileOffsets.
func decodePage(t testing.TB, p *tiff.Page, each func(i int, tile []byte)) refPlane {
	t.Helper()
	l, err := p.Layout()
	require.NoError(t, err)
	dec, err := compress.NewDecoder(compress.BlockFormat{
		Compression: l.Compression, Predictor: l.Predictor,
		Format: compress.Format{BitsPerSample: l.BitsPerSample, SamplesPerPixel: l.SamplesPerPixel,
			Float: l.SampleFormat == tiff.SampleFormatFloat, ByteOrder: p.Order()},
		Width: l.BlockWidth, Height: l.BlockHeight, Photometric: l.Photometric, JPEGTables: p.JPEGTables(),
	})
	require.NoError(t, err)
	pb := l.SamplesPerPixel * l.BitsPerSample / 8
	out := refPlane{w: l.Width, h: l.Height, spp: l.SamplesPerPixel, pix: make([]byte, l.Width*l.Height*pb)}
	var raw, tile []byte
	for i := range l.Blocks() {
		raw, err = p.ReadBlock(raw[:0], i)
		require.NoError(t, err)
		tile, err = dec.Decode(tile[:0], raw)
		require.NoError(t, err, "tile %d", i)
		if each != nil {
			each(i, tile)
		}
		x0, y0 := i%l.BlocksAcross*l.BlockWidth, i/l.BlocksAcross*l.BlockHeight
		w := min(l.BlockWidth, l.Width-x0)
		for y := range min(l.BlockHeight, l.Height-y0) {
			copy(out.pix[((y0+y)*l.Width+x0)*pb:][:w*pb], tile[y*l.BlockWidth*pb:])
		}
	}
	return out
}

// readPyramids reads a file and decodes every level of every plane of its
// main chain with package compress's decoder.
func readPyramids(t testing.TB, data []byte) [][]refPlane {
	t.Helper()
	f, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	var out [][]refPlane
	for _, p := range f.Pages {
		var levels []refPlane
		for _, page := range append([]*tiff.Page{p}, p.SubIFDs...) {
			levels = append(levels, decodePage(t, page, nil))
		}
		out = append(out, levels)
	}
	return out
}

// jpegPyramids are the JPEG pyramids the tests write: gray, RGB as YCbCr
// and RGB-coded, with partial edge tiles at every level.
func jpegPyramids() []goldenPyramid {
	rgb := ImageSpec{Name: "brightfield", SizeX: 150, SizeY: 100, PixelType: Uint8, SamplesPerPixel: 3, PhysicalSizeX: 0.5, PhysicalSizeY: 0.5}
	gray := ImageSpec{Name: "gray", SizeX: 90, SizeY: 70, SizeZ: 2, PixelType: Uint8}
	return []goldenPyramid{
		{name: "jpeg", opts: Options{TileSize: 32, Compression: JPEG}, images: []goldenImage{planesFor(rgb), planesFor(gray)}},
		{name: "jpeg-rgb-q90", opts: Options{TileSize: 48, Compression: JPEG, Quality: 90, JPEGColor: JPEGRGB}, images: []goldenImage{planesFor(rgb)}},
	}
}

// TestJPEGOptions: JPEG's options are refused with ErrOption where they do
// not apply or are out of range.
func TestJPEGOptions(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"default", Options{Compression: JPEG}, true},
		{"quality", Options{Compression: JPEG, Quality: 90, JPEGColor: JPEGRGB}, true},
		{"quality 1 and 100", Options{Compression: JPEG, Quality: 100}, true},
		{"predictor none", Options{Compression: JPEG, Predictor: PredictorNone}, true},
		{"quality without JPEG", Options{Compression: LZW, Quality: 80}, false},
		{"color without JPEG", Options{Compression: Deflate, JPEGColor: JPEGRGB}, false},
		{"level with JPEG", Options{Compression: JPEG, Level: 3}, false},
		{"quality 101", Options{Compression: JPEG, Quality: 101}, false},
		{"quality -1", Options{Compression: JPEG, Quality: -1}, false},
		{"unknown color", Options{Compression: JPEG, JPEGColor: 7}, false},
		{"horizontal predictor", Options{Compression: JPEG, Predictor: PredictorHorizontal}, false},
		{"float predictor", Options{Compression: JPEG, Predictor: PredictorFloatingPoint}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := New(iohandle.NewMemory(), c.opts)
			if !c.ok {
				assert.ErrorIs(t, err, ErrOption)
				return
			}
			require.NoError(t, err)
			require.NoError(t, w.Abort())
		})
	}
}

// TestJPEGPixelTypes: JPEG takes uint8 of 1 or 3 samples; other images
// are ErrOption naming their type.
func TestJPEGPixelTypes(t *testing.T) {
	cases := []struct {
		pt      PixelType
		samples int
		want    string // "" when accepted
	}{
		{Uint8, 1, ""},
		{Uint8, 3, ""},
		{Uint16, 1, "1 x uint16"},
		{Uint16, 3, "3 x uint16"},
		{Int8, 1, "1 x int8"},
		{Float32, 1, "1 x float"},
		{Float64, 1, "1 x double"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d x %v", c.samples, c.pt), func(t *testing.T) {
			w, err := New(iohandle.NewMemory(), Options{Compression: JPEG})
			require.NoError(t, err)
			defer w.Abort()
			_, err = w.AddImage(ImageSpec{SizeX: 20, SizeY: 20, PixelType: c.pt, SamplesPerPixel: c.samples})
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrOption)
			assert.ErrorContains(t, err, "JPEG takes uint8 samples, 1 or 3 per pixel, not "+c.want)
		})
	}
}

// TestJPEGFields: every directory, SubIFDs included, carries what TIFF
// Technical Note 2 asks of new-style JPEG: Compression 7, the
// encoder's Photometric and its JPEGTables, YCbCrSubSampling 2 2 and
// ReferenceBlackWhite for YCbCr only, contiguous samples, no predictor;
// and the tiles decode close to the source at every level.
func TestJPEGFields(t *testing.T) {
	for _, g := range jpegPyramids() {
		t.Run(g.name, func(t *testing.T) {
			data := g.write(t)
			f, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
			require.NoError(t, err)
			var pages []*tiff.Page
			var samples []int
			for i, p := range f.Pages {
				image := 0
				if i > 0 && len(g.images) > 1 {
					image = 1
				}
				for _, page := range append([]*tiff.Page{p}, p.SubIFDs...) {
					pages = append(pages, page)
					samples = append(samples, max(g.images[image].spec.SamplesPerPixel, 1))
				}
			}
			for i, p := range pages {
				color := g.opts.JPEGColor
				j, err := compress.NewJPEG(compress.Format{BitsPerSample: 8, SamplesPerPixel: samples[i]}, 16, compress.JPEGOptions{Quality: g.opts.Quality, Color: color})
				require.NoError(t, err)
				compression, _ := p.Uint(tiff.TagCompression)
				photometric, _ := p.Uint(tiff.TagPhotometricInterpretation)
				planar, _ := p.Uint(tiff.TagPlanarConfiguration)
				assert.Equal(t, uint64(tiff.CompressionJPEG), compression, "page %d", i)
				assert.Equal(t, uint64(j.Photometric()), photometric, "page %d", i)
				assert.Equal(t, uint64(tiff.PlanarContig), planar, "page %d", i)
				assert.Equal(t, j.Tables(), p.JPEGTables(), "page %d", i)
				_, predictor := p.Field(tiff.TagPredictor)
				assert.False(t, predictor, "page %d has a Predictor", i)
				sub, hasSub := p.Field(tiff.TagYCbCrSubSampling)
				rbw, hasRBW := p.ReferenceBlackWhite()
				if j.Photometric() == tiff.PhotometricYCbCr {
					v, err := sub.Uints()
					require.NoError(t, err)
					assert.Equal(t, []uint64{2, 2}, v, "page %d", i)
					assert.Equal(t, []float64{0, 255, 128, 255, 128, 255}, rbw, "page %d", i)
				} else {
					assert.False(t, hasSub || hasRBW, "page %d has YCbCr fields", i)
				}
			}
			decoded := readPyramids(t, data)
			want := g.expected(t)
			require.Len(t, decoded, len(want))
			for i := range want {
				require.Len(t, decoded[i], len(want[i]))
				for l := range want[i] {
					got, ref := decoded[i][l], want[i][l]
					require.Equal(t, [2]int{ref.w, ref.h}, [2]int{got.w, got.h})
					assert.GreaterOrEqual(t, psnr(ref.pix, got.pix), 33.0, "plane %d level %d", i, l)
				}
			}
		})
	}
}

// TestJPEGByteIdenticalAtAnyWorkers: JPEG output is the same at every
// Workers value, planes streamed in bands of any height.
func TestJPEGByteIdenticalAtAnyWorkers(t *testing.T) {
	for _, color := range []JPEGColor{JPEGYCbCr420, JPEGRGB} {
		t.Run(color.String(), func(t *testing.T) {
			var files [][]byte
			for _, workers := range []int{1, 2, 8} {
				files = append(files, writeMemory(t, Options{TileSize: 32, Workers: workers, Compression: JPEG, JPEGColor: color}, func(w *Writer) error {
					for i, spp := range []int{3, 1, 3} {
						base := randomPlane(150+i, 90, spp, Uint8, uint64(i), false)
						im, err := w.AddImage(ImageSpec{SizeX: base.w, SizeY: base.h, PixelType: Uint8, SamplesPerPixel: spp})
						if err != nil {
							return err
						}
						if err := writeBands(im, 0, 0, 0, base.pix, (7+i)*base.w*spp, false); err != nil {
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

// TestJPEGEdgeTiles: a flat image whose sizes are not multiples of the
// tile decodes to its colour, up to the codec's rounding, in every edge
// tile of every level: the writer pads edge tiles with their last column
// and row, not zeros, which JPEG would smear into the image as a dark
// border.
func TestJPEGEdgeTiles(t *testing.T) {
	cases := []struct {
		name    string
		samples int
		color   JPEGColor
		value   []byte
	}{
		{"gray", 1, JPEGYCbCr420, []byte{180}},
		{"YCbCr", 3, JPEGYCbCr420, []byte{200, 150, 100}},
		{"RGB", 3, JPEGRGB, []byte{60, 200, 120}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const width, height = 300, 203
			plane := bytes.Repeat(c.value, width*height)
			data := writeMemory(t, Options{TileSize: 64, Compression: JPEG, JPEGColor: c.color}, func(w *Writer) error {
				im, err := w.AddImage(ImageSpec{SizeX: width, SizeY: height, PixelType: Uint8, SamplesPerPixel: c.samples})
				if err != nil {
					return err
				}
				return im.WritePlane(0, 0, 0, plane)
			})
			f, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
			require.NoError(t, err)
			levels := append([]*tiff.Page{f.Pages[0]}, f.Pages[0].SubIFDs...)
			require.Len(t, levels, 4)
			for l, p := range levels {
				lay, err := p.Layout()
				require.NoError(t, err)
				require.True(t, lay.Width%lay.BlockWidth != 0 || lay.Height%lay.BlockHeight != 0, "level %d has no partial tile", l)
				decodePage(t, p, func(i int, tile []byte) {
					tx, ty := i%lay.BlocksAcross, i/lay.BlocksAcross
					if tx != lay.BlocksAcross-1 && ty != lay.BlocksDown-1 {
						return // not an edge tile
					}
					w, h := min(lay.BlockWidth, lay.Width-tx*lay.BlockWidth), min(lay.BlockHeight, lay.Height-ty*lay.BlockHeight)
					worst := 0
					for y := range h {
						for k, v := range tile[y*lay.BlockWidth*c.samples:][:w*c.samples] {
							worst = max(worst, absDiff(int(v), int(c.value[k%c.samples])))
						}
					}
					assert.LessOrEqual(t, worst, 2, "level %d tile %d: the image differs from the flat colour by %d", l, i, worst)
				})
			}
		})
	}
}

func absDiff(a, b int) int {
	if a > b {
		return a - b
	}
	return b - a
}

// meanLevels reduces base with the writer's Mean kernel into levels
// levels: the source's levels, which the kernel computes exactly
// (TestReducers holds it to a reference computed sample by sample).
func meanLevels(base refPlane, levels int) []refPlane {
	reduce := reducer(Uint8, base.spp, Mean)
	out := []refPlane{base}
	for len(out) < levels {
		src := out[len(out)-1]
		dst := refPlane{w: halve(src.w), h: halve(src.h), spp: src.spp}
		rb, drb := src.w*src.spp, dst.w*dst.spp
		dst.pix = make([]byte, dst.h*drb)
		for y := range dst.h {
			var below []byte
			if 2*y+1 < src.h {
				below = src.pix[(2*y+1)*rb : (2*y+2)*rb]
			}
			reduce(dst.pix[y*drb:(y+1)*drb], src.pix[2*y*rb:(2*y+1)*rb], below, src.w)
		}
		out = append(out, dst)
	}
	return out
}

// slideRGBOf is the top left size x size of the slide workload's RGB
// rendering (the whole of it at 8192).
func slideRGBOf(size int) refPlane {
	p := refPlane{w: size, h: size, spp: 3, pix: make([]byte, size*size*3)}
	synth.Pattern{}.RGB8(p.pix, 0, 0, size, size)
	return p
}

// writeSlideJPEG writes the RGB slide of size pixels as a JPEG pyramid at
// quality in the coding color, 256 x 256 tiles, to path (or to memory when
// path is ""), and returns the file and the source's levels.
func writeSlideJPEG(t testing.TB, path string, size, quality int, color JPEGColor) ([]byte, []refPlane) {
	base := slideRGBOf(size)
	opts := Options{Compression: JPEG, Quality: quality, JPEGColor: color}
	fill := func(w *Writer) error {
		im, err := w.AddImage(ImageSpec{SizeX: size, SizeY: size, PixelType: Uint8, SamplesPerPixel: 3})
		if err != nil {
			return err
		}
		return im.WritePlane(0, 0, 0, base.pix)
	}
	var data []byte
	if path == "" {
		data = writeMemory(t, opts, fill)
	} else {
		w, err := Create(path, opts)
		require.NoError(t, err)
		require.NoError(t, fill(w))
		require.NoError(t, w.Close())
		data, err = os.ReadFile(path)
		require.NoError(t, err)
	}
	f := readFile(t, data)
	return data, meanLevels(base, 1+len(f.Pages[0].SubIFDs))
}

// goJPEGAt decodes a JPEG page's tiles with image/jpeg alone, its colour
// read pixel by pixel through At, which repeats each 4:2:0 chroma sample
// (libjpeg and package compress interpolate them).
func goJPEGAt(t testing.TB, p *tiff.Page) []byte {
	l, err := p.Layout()
	require.NoError(t, err)
	tables := p.JPEGTables()
	out := make([]byte, l.Width*l.Height*3)
	for i := range l.Blocks() {
		tile, err := p.ReadBlock(nil, i)
		require.NoError(t, err)
		m, err := jpeg.Decode(bytes.NewReader(append(bytes.Clone(tables[:len(tables)-2]), tile[2:]...)))
		require.NoError(t, err)
		x0, y0 := i%l.BlocksAcross*l.BlockWidth, i/l.BlocksAcross*l.BlockHeight
		for y := range min(l.BlockHeight, l.Height-y0) {
			for x := range min(l.BlockWidth, l.Width-x0) {
				r, g, b, _ := m.At(x, y).RGBA()
				copy(out[((y0+y)*l.Width+x0+x)*3:], []byte{byte(r >> 8), byte(g >> 8), byte(b >> 8)})
			}
		}
	}
	return out
}

// TestJPEGFidelity: the RGB slide at quality 90 decodes with package
// compress's decoder, which upsamples chroma as libjpeg does, to at least
// 40 dB against the source at full resolution, as YCbCr 4:2:0 and as RGB;
// the reduced levels hold denser detail, which loses more (their figures
// are logged; TestInteropJPEGFidelity holds them to libvips's at the same
// quality and coding, on the full 8192 x 8192 workload). image/jpeg's At,
// which repeats each chroma sample, is logged too: about 39.8 dB for any
// 4:2:0 encoder.
func TestJPEGFidelity(t *testing.T) {
	for _, color := range []JPEGColor{JPEGYCbCr420, JPEGRGB} {
		data, want := writeSlideJPEG(t, "", 1024, 90, color)
		f := readFile(t, data)
		for l, p := range levelsOf(f.Pages[0]) {
			got := decodePage(t, p, nil)
			ours := psnr(want[l].pix, got.pix)
			t.Logf("%v level %d (%d x %d): package compress %.2f dB", color, l, got.w, got.h, ours)
			if l == 0 {
				assert.GreaterOrEqual(t, ours, 40.0, "%v full resolution", color)
				if color == JPEGYCbCr420 {
					t.Logf("%v level 0: image/jpeg At %.2f dB", color, psnr(want[0].pix, goJPEGAt(t, p)))
				}
			}
		}
	}
}

// TestJPEGPlanJSON: a dataset's plan carries JPEG's options, so that
// every process writing a part of it encodes alike; left zero, they are
// left out of the plan, whose canonical JSON gives the files' UUIDs.
func TestJPEGPlanJSON(t *testing.T) {
	spec := stackPlan(1, 2, 1, 40, Split{Files: 2})
	for i := range spec.Images {
		spec.Images[i].PixelType = Uint8
	}
	spec.Options = Options{Compression: JPEG, Quality: 90, JPEGColor: JPEGRGB}
	d, err := NewDataset(spec)
	require.NoError(t, err)
	data, err := json.Marshal(d)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"Compression":"jpeg","Quality":90,"JPEGColor":"rgb"`)
	back, err := ParseDataset(data)
	require.NoError(t, err)
	assert.Equal(t, [2]any{JPEG, 90}, [2]any{back.spec.Options.Compression, back.spec.Options.Quality})
	assert.Equal(t, JPEGRGB, back.spec.Options.JPEGColor)

	spec.Options = Options{Compression: Zstd}
	d, err = NewDataset(spec)
	require.NoError(t, err)
	data, err = json.Marshal(d)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "Quality")
	assert.NotContains(t, string(data), "JPEGColor")
}
