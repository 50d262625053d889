package compress

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/internal/synth"
	"github.com/ometiff-go/ometiff/tiff"
)

// rgbSlideTiles returns n tiles of size x size pixels of the slide
// workload's RGB rendering, interleaved 8-bit R, G, B, spread over its
// 8192 x 8192 plane like slideTiles.
func rgbSlideTiles(n, size int) [][]byte { return slideTiles8(n, size, synth.Pattern.RGB8, 3) }

// graySlideTiles is rgbSlideTiles for the 8-bit gray rendering.
func graySlideTiles(n, size int) [][]byte { return slideTiles8(n, size, synth.Pattern.Gray8, 1) }

// jpegCoding is one of the encoder's codings, with slide tiles for it.
type jpegCoding struct {
	name    string
	samples int
	color   JPEGColor
	tiles   [][]byte
}

// jpegCodings returns the three codings (RGB as YCbCr 4:2:0, RGB coded as
// RGB, gray) with n slide tiles of size x size pixels each.
func jpegCodings(n, size int) []jpegCoding {
	rgb := rgbSlideTiles(n, size)
	return []jpegCoding{
		{"YCbCr420", 3, JPEGYCbCr420, rgb},
		{"RGB", 3, JPEGRGB, rgb},
		{"Gray", 1, JPEGYCbCr420, graySlideTiles(n, size)},
	}
}

func slideTiles8(n, size int, render func(synth.Pattern, []uint8, int, int, int, int), samples int) [][]byte {
	tiles := make([][]byte, n)
	perRow := 8192 / size
	for i := range tiles {
		k := (i * 7919) % (perRow * perRow)
		tiles[i] = make([]byte, samples*size*size)
		render(synth.Pattern{Seed: 1}, tiles[i], k%perRow*size, k/perRow*size, size, size)
	}
	return tiles
}

// spliceJPEG makes the interchange stream a JPEG decoder reads from the
// JPEGTables stream and an abbreviated tile stream (TIFF Technical Note 2):
// the tables without their EOI, then the tile without its SOI.
func spliceJPEG(t testing.TB, tables, tile []byte) []byte {
	t.Helper()
	require.True(t, bytes.HasPrefix(tables, []byte{0xff, 0xd8}) && bytes.HasSuffix(tables, []byte{0xff, 0xd9}), "tables are SOI ... EOI")
	require.True(t, bytes.HasPrefix(tile, []byte{0xff, 0xd8}) && bytes.HasSuffix(tile, []byte{0xff, 0xd9}), "tile is SOI ... EOI")
	return append(bytes.Clone(tables[:len(tables)-2]), tile[2:]...)
}

// decodeGo decodes a tile with the standard library's image/jpeg and
// returns its samples interleaved as the encoder took them. The decoder
// converts YCbCr to RGB, and keeps RGB-coded tiles (Adobe transform 0) as
// they are.
func decodeGo(t testing.TB, tables, tile []byte, samples int) (pix []byte, width, height int) {
	t.Helper()
	m, err := jpeg.Decode(bytes.NewReader(spliceJPEG(t, tables, tile)))
	require.NoError(t, err)
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			switch m := m.(type) {
			case *image.Gray:
				require.Equal(t, 1, samples)
				pix = append(pix, m.GrayAt(x, y).Y)
			default:
				require.Equal(t, 3, samples, "decoded as %T", m)
				r, g, b, _ := m.At(x, y).RGBA()
				pix = append(pix, byte(r>>8), byte(g>>8), byte(b>>8))
			}
		}
	}
	return pix, b.Dx(), b.Dy()
}

// psnr is the peak signal-to-noise ratio of b against a, in dB.
var psnr = readback.PSNR

// jpegMarkers returns the markers of a JPEG stream up to SOS, and whether
// the entropy-coded data holds any marker other than RSTn (none should).
func jpegMarkers(t testing.TB, b []byte) []byte {
	t.Helper()
	var markers []byte
	for i := 0; i < len(b); {
		require.Equal(t, byte(0xff), b[i], "marker at %d", i)
		m := b[i+1]
		markers = append(markers, m)
		switch {
		case m == jpegSOI || m == jpegEOI:
			i += 2
			continue
		case m == jpegSOS:
			n := int(b[i+2])<<8 | int(b[i+3])
			data := b[i+2+n:]
			for k := 0; k+1 < len(data); k++ {
				if data[k] == 0xff && data[k+1] != 0 {
					require.Equal(t, len(data)-2, k, "marker %#x inside the entropy-coded data", data[k+1])
					markers = append(markers, data[k+1])
				}
			}
			return markers
		}
		i += 2 + (int(b[i+2])<<8 | int(b[i+3]))
	}
	return markers
}

// upsampleSmooth converts a decoded 4:2:0 image to interleaved RGB with
// libjpeg's "fancy" chroma upsampling (each full-resolution chroma sample
// weighs its four nearest subsampled ones 9:3:3:1, the edges repeated),
// where image/jpeg's At repeats each chroma sample over 2x2 pixels.
func upsampleSmooth(t testing.TB, m image.Image) []byte {
	t.Helper()
	ycc, ok := m.(*image.YCbCr)
	require.True(t, ok && ycc.SubsampleRatio == image.YCbCrSubsampleRatio420, "decoded as %T", m)
	b := ycc.Bounds()
	cw, ch := (b.Dx()+1)/2, (b.Dy()+1)/2
	chroma := func(plane []byte, x, y int) int {
		x, y = min(max(x, 0), cw-1), min(max(y, 0), ch-1)
		return int(plane[y*ycc.CStride+x])
	}
	smooth := func(plane []byte, x, y int) uint8 {
		cx, cy := x/2, y/2
		nx, ny := cx+2*(x%2)-1, cy+2*(y%2)-1 // the nearer neighbours
		v := 9*chroma(plane, cx, cy) + 3*chroma(plane, nx, cy) + 3*chroma(plane, cx, ny) + chroma(plane, nx, ny)
		return uint8((v + 8) / 16)
	}
	var out []byte
	for y := range b.Dy() {
		for x := range b.Dx() {
			r, g, bl := color.YCbCrToRGB(ycc.Y[y*ycc.YStride+x], smooth(ycc.Cb, x, y), smooth(ycc.Cr, x, y))
			out = append(out, r, g, bl)
		}
	}
	return out
}

// TestJPEGRoundTripGo decodes the slide's tiles at quality 90 with the
// standard library's decoder. Its At repeats each chroma sample of a 4:2:0
// image over 2x2 pixels, which holds the PSNR of any 4:2:0 encoder under 40
// dB on this content (image/jpeg's own encoder gives 39.7 dB): there, the
// tiles must do at least as well as image/jpeg's own, and 40 dB when the
// chroma is upsampled like libjpeg does.
func TestJPEGRoundTripGo(t *testing.T) {
	for _, c := range jpegCodings(8, 256) {
		t.Run(c.name, func(t *testing.T) {
			j, err := NewJPEG(Format{SamplesPerPixel: c.samples}, 256, JPEGOptions{Quality: 90, Color: c.color})
			require.NoError(t, err)
			var all, decoded, smooth, stdlib []byte
			for _, tile := range c.tiles {
				enc, err := j.Encode(nil, tile)
				require.NoError(t, err)
				pix, w, h := decodeGo(t, j.Tables(), enc, c.samples)
				require.Equal(t, [2]int{256, 256}, [2]int{w, h})
				all, decoded = append(all, tile...), append(decoded, pix...)
				if c.color == JPEGYCbCr420 && c.samples == 3 {
					m, err := jpeg.Decode(bytes.NewReader(spliceJPEG(t, j.Tables(), enc)))
					require.NoError(t, err)
					smooth = append(smooth, upsampleSmooth(t, m)...)
					theirs, err := stdlibJPEG{quality: 90, width: 256}.interchange(tile)
					require.NoError(t, err)
					tables, tile := splitJPEG(theirs)
					pix, _, _ := decodeGo(t, tables, tile, 3)
					stdlib = append(stdlib, pix...)
				}
			}
			p := psnr(all, decoded)
			if smooth == nil {
				t.Logf("PSNR %.2f dB", p)
				assert.GreaterOrEqual(t, p, 40.0)
				return
			}
			ps, pStd := psnr(all, smooth), psnr(all, stdlib)
			t.Logf("PSNR %.2f dB (image/jpeg's own tiles %.2f dB); %.2f dB with smooth chroma", p, pStd, ps)
			assert.GreaterOrEqual(t, p, pStd)
			assert.GreaterOrEqual(t, ps, 40.0)
		})
	}
}

// jpegSegments returns the payloads of a stream's marker segments before
// SOS, by marker.
func jpegSegments(t testing.TB, b []byte) map[byte][][]byte {
	t.Helper()
	segs := map[byte][][]byte{}
	require.Equal(t, []byte{0xff, jpegSOI}, b[:2])
	for i := 2; i < len(b); {
		require.Equal(t, byte(0xff), b[i], "marker at %d", i)
		m := b[i+1]
		if m == jpegEOI {
			break
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		segs[m] = append(segs[m], b[i+4:i+2+n])
		if m == jpegSOS {
			break
		}
		i += 2 + n
	}
	return segs
}

// jpegTableContents returns the quantization tables (by id) and the Huffman
// tables (by class<<4|id) of a stream, whatever their grouping in segments.
func jpegTableContents(t testing.TB, b []byte) (quant, huff map[byte][]byte) {
	t.Helper()
	quant, huff = map[byte][]byte{}, map[byte][]byte{}
	segs := jpegSegments(t, b)
	for _, p := range segs[jpegDQT] {
		for len(p) > 0 {
			require.Zero(t, p[0]>>4, "8-bit quantizers")
			quant[p[0]] = p[1:65]
			p = p[65:]
		}
	}
	for _, p := range segs[jpegDHT] {
		for len(p) > 0 {
			n := 0
			for _, c := range p[1:17] {
				n += int(c)
			}
			huff[p[0]] = p[1 : 17+n]
			p = p[17+n:]
		}
	}
	return quant, huff
}

// TestJPEGTablesMatchStdlib compares the tables with those of the standard
// library's encoder, written independently from the same standard: the
// quantization tables scaled to the quality as libjpeg does, and the
// Huffman tables of Annex K.
func TestJPEGTablesMatchStdlib(t *testing.T) {
	tile := rgbSlideTiles(1, 16)[0]
	for _, quality := range []int{1, 10, 49, 50, 75, 85, 90, 99, 100} {
		t.Run(fmt.Sprint(quality), func(t *testing.T) {
			theirs, err := stdlibJPEG{quality: quality, width: 16}.interchange(tile)
			require.NoError(t, err)
			wantQuant, wantHuff := jpegTableContents(t, theirs)
			require.Len(t, wantQuant, 2)
			require.Len(t, wantHuff, 4)

			j, err := NewJPEG(Format{SamplesPerPixel: 3}, 16, JPEGOptions{Quality: quality})
			require.NoError(t, err)
			quant, huff := jpegTableContents(t, j.Tables())
			assert.Equal(t, wantQuant, quant)
			assert.Equal(t, wantHuff, huff)

			for _, c := range []struct {
				samples int
				color   JPEGColor
			}{{1, JPEGYCbCr420}, {3, JPEGRGB}} {
				j, err := NewJPEG(Format{SamplesPerPixel: c.samples}, 16, JPEGOptions{Quality: quality, Color: c.color})
				require.NoError(t, err)
				quant, huff := jpegTableContents(t, j.Tables())
				assert.Equal(t, map[byte][]byte{0: wantQuant[0]}, quant, "only the luminance table")
				assert.Equal(t, map[byte][]byte{0x00: wantHuff[0x00], 0x10: wantHuff[0x10]}, huff, "only the luminance tables")
			}
		})
	}
}

// TestJPEGStreams checks the structure of the tables and the tiles: the
// tables stream has only tables, the same for every encoder of the same
// settings whatever the width; each tile is SOI, SOF0, SOS, data, EOI
// (APP14 first for RGB), without tables or other markers, and its frame
// header names the tile's size, components, sampling and tables.
func TestJPEGStreams(t *testing.T) {
	cases := []struct {
		name     string
		samples  int
		color    JPEGColor
		markers  []byte
		ids      []byte
		sampling []byte
		tables   []byte
		photo    uint16
		ycbcr    []uint16
	}{
		{"gray", 1, JPEGRGB, []byte{jpegSOI, jpegSOF0, jpegSOS, jpegEOI}, []byte{1}, []byte{0x11}, []byte{0}, tiff.PhotometricBlackIsZero, nil},
		{"ycbcr420", 3, JPEGYCbCr420, []byte{jpegSOI, jpegSOF0, jpegSOS, jpegEOI}, []byte{1, 2, 3}, []byte{0x22, 0x11, 0x11}, []byte{0, 1, 1}, tiff.PhotometricYCbCr, []uint16{2, 2}},
		{"rgb", 3, JPEGRGB, []byte{jpegSOI, jpegAPP14, jpegSOF0, jpegSOS, jpegEOI}, []byte{'R', 'G', 'B'}, []byte{0x11, 0x11, 0x11}, []byte{0, 0, 0}, tiff.PhotometricRGB, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const width, height = 40, 24
			f := Format{SamplesPerPixel: c.samples}
			j, err := NewJPEG(f, width, JPEGOptions{Color: c.color})
			require.NoError(t, err)
			assert.Equal(t, tiff.CompressionJPEG, j.Compression())
			assert.Equal(t, DefaultJPEGQuality, j.Quality())
			assert.Equal(t, c.photo, j.Photometric())
			assert.Equal(t, c.ycbcr, j.YCbCrSubSampling())

			other, err := NewJPEG(f, 256, JPEGOptions{Color: c.color, Quality: DefaultJPEGQuality})
			require.NoError(t, err)
			assert.Equal(t, j.Tables(), other.Tables(), "the tables depend on the quality and coding only")
			tableMarkers := jpegMarkers(t, j.Tables())
			assert.Equal(t, jpegSOI, tableMarkers[0])
			assert.Equal(t, jpegEOI, tableMarkers[len(tableMarkers)-1])
			for _, m := range tableMarkers[1 : len(tableMarkers)-1] {
				assert.Contains(t, []byte{jpegDQT, jpegDHT}, m)
			}

			r := rand.New(rand.NewPCG(1, 2))
			tile := make([]byte, width*height*c.samples)
			for i := range tile {
				tile[i] = byte(r.Uint32())
			}
			enc := encodeAppending(t, j, tile)
			assert.Equal(t, c.markers, jpegMarkers(t, enc))

			segs := jpegSegments(t, enc)
			sof := segs[jpegSOF0][0]
			n := len(c.ids)
			require.Len(t, sof, 6+3*n)
			assert.Equal(t, []byte{8, 0, height, 0, width, byte(n)}, sof[:6])
			for i := range n {
				assert.Equal(t, []byte{c.ids[i], c.sampling[i], c.tables[i]}, sof[6+3*i:9+3*i], "component %d", i)
			}
			sos := segs[jpegSOS][0]
			require.Len(t, sos, 4+2*n)
			for i := range n {
				assert.Equal(t, []byte{c.ids[i], c.tables[i]<<4 | c.tables[i]}, sos[1+2*i:3+2*i], "component %d", i)
			}
			assert.Equal(t, []byte{0, 63, 0}, sos[1+2*n:])
			if c.color == JPEGRGB && c.samples == 3 {
				assert.Equal(t, []byte{'A', 'd', 'o', 'b', 'e', 0, 100, 0, 0, 0, 0, 0}, segs[jpegAPP14][0], "Adobe, transform 0")
			}
		})
	}
}

func TestJPEGErrors(t *testing.T) {
	for _, c := range []struct {
		f       Format
		width   int
		o       JPEGOptions
		want    error
		message string
	}{
		{Format{BitsPerSample: 16}, 16, JPEGOptions{}, ErrFormat, "16-bit"},
		{Format{BitsPerSample: 32, Float: true}, 16, JPEGOptions{}, ErrFormat, "32-bit floating point"},
		{Format{BitsPerSample: 12}, 16, JPEGOptions{}, ErrFormat, "12 bits"},
		{Format{SamplesPerPixel: 2}, 16, JPEGOptions{}, ErrFormat, "not 2"},
		{Format{SamplesPerPixel: 4}, 16, JPEGOptions{}, ErrFormat, "not 4"},
		{Format{}, 0, JPEGOptions{}, ErrFormat, "width 0"},
		{Format{}, 65536, JPEGOptions{}, ErrFormat, "width 65536"},
		{Format{}, 16, JPEGOptions{Quality: -1}, ErrLevel, "quality -1"},
		{Format{}, 16, JPEGOptions{Quality: 101}, ErrLevel, "quality 101"},
		{Format{}, 16, JPEGOptions{Color: 2}, ErrFormat, "color 2"},
	} {
		_, err := NewJPEG(c.f, c.width, c.o)
		require.ErrorIs(t, err, c.want, "%+v width %d %+v", c.f, c.width, c.o)
		assert.Contains(t, err.Error(), c.message)
		assert.True(t, strings.HasPrefix(err.Error(), "compress: "), err.Error())
	}

	j, err := NewJPEG(Format{SamplesPerPixel: 3}, 16, JPEGOptions{})
	require.NoError(t, err)
	for _, n := range []int{0, 1, 47, 16*3*2 + 1, 16 * 3 * 65536} {
		dst, err := j.Encode([]byte("x"), make([]byte, n))
		require.ErrorIs(t, err, ErrTileSize, "%d bytes", n)
		assert.Equal(t, []byte("x"), dst)
	}
}

// TestJPEGLimits: tiles of 65500 pixels across and down, libjpeg's
// largest, encode to a frame of that size in both builds, and 65501 is
// refused (65535 was encoded by image/jpeg, which libjpeg, and so
// libtiff and libvips, does not read); JPEGColor
// values past the codings do not marshal.
func TestJPEGLimits(t *testing.T) {
	for _, tt := range []struct{ width, height int }{{65500, 1}, {1, 65500}, {65499, 2}} {
		j, err := NewJPEG(Format{}, tt.width, JPEGOptions{})
		require.NoError(t, err, "%d x %d", tt.width, tt.height)
		tile, err := j.Encode(nil, make([]byte, tt.width*tt.height))
		require.NoError(t, err, "%d x %d", tt.width, tt.height)
		w, h, comps, err := frameSize(tile)
		require.NoError(t, err)
		assert.Equal(t, [3]int{tt.width, tt.height, 1}, [3]int{w, h, comps})
	}
	for _, c := range []JPEGColor{-1, 2, 3} {
		_, err := c.MarshalText()
		assert.ErrorIs(t, err, ErrFormat, "JPEGColor(%d)", int(c))
	}
	// One more is refused, in both builds: libjpeg reads no such frame.
	_, err := NewJPEG(Format{}, 65501, JPEGOptions{})
	assert.ErrorIs(t, err, ErrFormat)
	j, err := NewJPEG(Format{}, 1, JPEGOptions{})
	require.NoError(t, err)
	_, err = j.Encode(nil, make([]byte, 65501))
	assert.ErrorIs(t, err, ErrTileSize)
	for c, want := range map[JPEGColor]string{JPEGYCbCr420: "ycbcr", JPEGRGB: "rgb"} {
		text, err := c.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, want, string(text))
	}
}

// TestJPEGEntropyPadding: the entropy-coded data ends in the last bits of
// the last block, padded with 1 bits to a byte and no further. A flat gray
// block codes in 6 bits (DC difference 0: 00; EOB: 1010), so 1 to 4 of
// them take 6 to 24 bits, the last a whole number of bytes.
func TestJPEGEntropyPadding(t *testing.T) {
	for _, tt := range []struct {
		blocks int
		data   []byte
	}{
		{1, []byte{0b00101011}},
		{2, []byte{0b00101000, 0b10101111}},
		{3, []byte{0b00101000, 0b10100010, 0b10111111}},
		{4, []byte{0b00101000, 0b10100010, 0b10001010}},
	} {
		j, err := NewJPEG(Format{}, 8*tt.blocks, JPEGOptions{})
		require.NoError(t, err)
		tile, err := j.Encode(nil, bytes.Repeat([]byte{128}, 8*tt.blocks*8))
		require.NoError(t, err)
		sos := bytes.Index(tile, []byte{0xff, jpegSOS})
		require.Positive(t, sos)
		data := tile[sos+2+(int(tile[sos+2])<<8|int(tile[sos+3])):]
		assert.Equal(t, append(tt.data, 0xff, jpegEOI), data, "%d blocks", tt.blocks)
	}
}

// TestJPEGPartialMCU encodes tiles whose sizes are no multiple of the MCU:
// the decoders must give back their size, and a flat tile must stay flat up
// to its last row and column, which it would not if the encoder padded the
// MCU with black (the DCT spreads such an edge over the whole block).
func TestJPEGPartialMCU(t *testing.T) {
	for _, samples := range []int{1, 3} {
		for _, color := range []JPEGColor{JPEGYCbCr420, JPEGRGB} {
			for _, size := range [][2]int{{1, 1}, {7, 9}, {17, 15}, {37, 21}, {16, 33}} {
				t.Run(fmt.Sprintf("%d/%v/%dx%d", samples, color, size[0], size[1]), func(t *testing.T) {
					w, h := size[0], size[1]
					j, err := NewJPEG(Format{SamplesPerPixel: samples}, w, JPEGOptions{Quality: 90, Color: color})
					require.NoError(t, err)
					tile := bytes.Repeat([]byte{230, 200, 215}[:samples], w*h)
					enc, err := j.Encode(nil, tile)
					require.NoError(t, err)
					pix, dw, dh := decodeGo(t, j.Tables(), enc, samples)
					require.Equal(t, [2]int{w, h}, [2]int{dw, dh})
					for i := range pix {
						require.InDelta(t, tile[i], pix[i], 2, "sample %d of pixel (%d, %d)", i%samples, i/samples%w, i/samples/w)
					}
				})
			}
		}
	}
}

// TestJPEGDCT checks the fixed-point DCT and quantization against the DCT's
// definition computed in floating point, at quality 100 (every quantizer 1)
// where they show most, on random blocks and on the extreme ones (the
// largest coefficients the 8-bit range allows).
func TestJPEGDCT(t *testing.T) {
	q := newJPEGQuant(&jpegLumaQuant, 100)
	r := rand.New(rand.NewPCG(3, 4))
	blocks := [][64]int{}
	for k := range 6 {
		var b [64]int
		for i := range b {
			switch k {
			case 0:
				b[i] = 255
			case 1:
				b[i] = 0
			case 2: // a checkerboard: the largest high frequencies
				b[i] = 255 * ((i/8 + i%8) % 2)
			case 3: // vertical stripes: the largest first-row ones
				b[i] = 255 * (i % 8 / 4)
			default:
				b[i] = int(r.Uint32() % 256)
			}
		}
		blocks = append(blocks, b)
	}
	for n, samples := range blocks {
		var b [64]int32
		for i, v := range samples {
			b[i] = int32(v-128) << jpegFracBits
		}
		mask := fdctQuant(&b, &q)
		for v := range 8 {
			for u := range 8 {
				var sum float64
				for y := range 8 {
					for x := range 8 {
						sum += float64(samples[8*y+x]-128) * math.Cos(float64(2*x+1)*float64(u)*math.Pi/16) * math.Cos(float64(2*y+1)*float64(v)*math.Pi/16)
					}
				}
				cu, cv := 1.0, 1.0
				if u == 0 {
					cu = 1 / math.Sqrt2
				}
				if v == 0 {
					cv = 1 / math.Sqrt2
				}
				want := sum * cu * cv / 4
				got := b[8*v+u]
				require.InDelta(t, want, float64(got), 1, "block %d, coefficient (%d, %d)", n, u, v)
				k := jpegNatural[8*v+u]
				require.Equal(t, got != 0, mask>>k&1 == 1, "block %d, mask bit of coefficient (%d, %d)", n, u, v)
			}
		}
	}
}

// TestJPEGPipeline runs the encoder in the ordered pipeline at several
// worker counts: the tiles are the same bytes as one Encode after another
// gives, at every count, and the race detector watches the pooled state.
func TestJPEGPipeline(t *testing.T) {
	tiles := rgbSlideTiles(24, 64)
	for _, color := range []JPEGColor{JPEGYCbCr420, JPEGRGB} {
		j, err := NewJPEG(Format{SamplesPerPixel: 3}, 64, JPEGOptions{Quality: 85, Color: color})
		require.NoError(t, err)
		encoders := make([]Encoder, len(tiles))
		var want [][]byte
		for i, tile := range tiles {
			encoders[i] = j
			enc, err := j.Encode(nil, tile)
			require.NoError(t, err)
			want = append(want, enc)
		}
		for _, workers := range []int{1, 2, 8} {
			got := runPipeline(t, Options{Workers: workers, BatchBytes: 1}, tiles, encoders)
			require.Equal(t, want, got, "%v, %d workers", color, workers)
		}
	}
}

// TestJPEGConcurrentEncode has many goroutines encode with one JPEG at once.
func TestJPEGConcurrentEncode(t *testing.T) {
	tiles := rgbSlideTiles(8, 32)
	j, err := NewJPEG(Format{SamplesPerPixel: 3}, 32, JPEGOptions{})
	require.NoError(t, err)
	want := make([][]byte, len(tiles))
	for i, tile := range tiles {
		want[i], err = j.Encode(nil, tile)
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 50 {
				i := (g + n) % len(tiles)
				got, err := j.Encode(nil, tiles[i])
				assert.NoError(t, err)
				assert.Equal(t, want[i], got)
			}
		})
	}
	wg.Wait()
}

// FuzzJPEG encodes tiles of any content, size and settings and decodes them
// with the standard library's decoder, which must accept them and give back
// their size; a tile of that size and settings all of the fuzzed tile's
// first pixel must decode to it, within what quantizing its DC coefficients
// can change (a sixteenth of their quantizers, the chroma's weighed as
// converting to RGB weighs them) and rounding.
func FuzzJPEG(f *testing.F) {
	f.Add([]byte("abcdefghijklmnopqrstuvwxyz0123456789"), uint16(4), true, uint8(75), false)
	f.Add(bytes.Repeat([]byte{0, 255}, 600), uint16(17), false, uint8(100), false)
	f.Add(bytes.Repeat([]byte{255}, 768), uint16(16), true, uint8(1), true)
	// Tiles of whole rows (the ones above are not, and are refused).
	f.Add([]byte("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHI"), uint16(4), true, uint8(75), false)
	f.Add(bytes.Repeat([]byte{200, 30}, 64), uint16(15), false, uint8(90), false)
	f.Add(bytes.Repeat([]byte{0, 255, 40}, 17*9), uint16(16), true, uint8(1), true)
	f.Fuzz(func(t *testing.T, tile []byte, width uint16, rgb bool, quality uint8, rgbCoded bool) {
		samples, coding := 1, JPEGYCbCr420
		if rgb {
			samples = 3
		}
		if rgbCoded {
			coding = JPEGRGB
		}
		w := 1 + int(width)%512
		j, err := NewJPEG(Format{SamplesPerPixel: samples}, w, JPEGOptions{Quality: int(quality) % 101, Color: coding})
		require.NoError(t, err)
		enc, err := j.Encode(nil, tile)
		h := len(tile) / (w * samples)
		if h == 0 || len(tile)%(w*samples) != 0 {
			require.ErrorIs(t, err, ErrTileSize)
			return
		}
		require.NoError(t, err)
		m, err := jpeg.Decode(bytes.NewReader(spliceJPEG(t, j.Tables(), enc)))
		require.NoError(t, err)
		require.Equal(t, image.Rect(0, 0, w, h), m.Bounds())

		pixel := tile[:samples]
		flat := bytes.Repeat(pixel, w*h)
		enc, err = j.Encode(nil, flat)
		require.NoError(t, err)
		m, err = jpeg.Decode(bytes.NewReader(spliceJPEG(t, j.Tables(), enc)))
		require.NoError(t, err)
		tol := float64(j.quant[0].value[0])/16 + 2
		if rgb && !rgbCoded {
			tol += 1.772*float64(j.quant[1].value[0])/16 + 1
		}
		for y := range h {
			for x := range w {
				c := color.RGBAModel.Convert(m.At(x, y)).(color.RGBA)
				got := []uint8{c.R, c.G, c.B}[:samples]
				for k := range samples {
					require.InDelta(t, float64(pixel[k]), float64(got[k]), tol, "sample %d of pixel (%d, %d) of a tile all %v", k, x, y, pixel)
				}
			}
		}
	})
}

// TestJPEGColorConversion checks the fixed-point conversion of a 4:2:0 MCU
// against JFIF's formulas in floating point: luma per pixel, chroma the mean
// of each 2x2 pixels, both level-shifted, with jpegFracBits fractional bits.
func TestJPEGColorConversion(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const stride = 3 * 20 // an MCU inside a wider tile
	p := make([]byte, 16*stride)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	p[0], p[1], p[2] = 255, 255, 255
	p[3], p[4], p[5] = 0, 0, 0
	var st jpegState
	st.ycc420(p, stride)
	const scale = 1 << jpegFracBits
	for y := range 16 {
		for x := range 16 {
			px := p[y*stride+3*x:]
			want := (0.299*float64(px[0]) + 0.587*float64(px[1]) + 0.114*float64(px[2]) - 128) * scale
			got := st.blocks[y/8*2+x/8][y%8*8+x%8]
			require.InDelta(t, want, float64(got), 0.5, "Y of pixel (%d, %d)", x, y)
		}
	}
	for y := range 8 {
		for x := range 8 {
			var cb, cr float64
			for _, d := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
				px := p[(2*y+d[1])*stride+3*(2*x+d[0]):]
				R, G, B := float64(px[0]), float64(px[1]), float64(px[2])
				cb += -0.168736*R - 0.331264*G + 0.5*B
				cr += 0.5*R - 0.418688*G - 0.081312*B
			}
			require.InDelta(t, cb/4*scale, float64(st.blocks[4][8*y+x]), 0.5, "Cb of (%d, %d)", x, y)
			require.InDelta(t, cr/4*scale, float64(st.blocks[5][8*y+x]), 0.5, "Cr of (%d, %d)", x, y)
		}
	}
}
