package pngstream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/pngstream/pngtest"
)

// randomPNG returns an image of the colour type and depth with random
// samples, every filter, and a palette or tRNS chunk when trns is set.
func randomPNG(rng *rand.Rand, ct ColorType, depth, width, height int, trns bool) pngtest.Image {
	p := pngtest.Image{Width: width, Height: height, Depth: depth, ColorType: byte(ct), IDATSize: 1 + rng.IntN(200),
		Filter: func(y int) byte { return byte(y % 5) }}
	h := Header{Width: width, BitDepth: depth, ColorType: ct}
	for range height {
		row := make([]byte, h.RowBytes())
		for i := range row {
			row[i] = byte(rng.Uint32())
		}
		p.Rows = append(p.Rows, row)
	}
	switch {
	case ct == Paletted:
		// Fewer entries than indices, so that some are out of range.
		p.Palette = make([]color.NRGBA, 1+rng.IntN(1<<depth))
		for i := range p.Palette {
			p.Palette[i] = color.NRGBA{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), 0xff}
			if trns {
				p.Palette[i].A = byte(rng.Uint32())
			}
		}
	case trns && ct == Gray:
		p.TRNS = []byte{0, p.Rows[0][0] >> (8 - min(depth, 8))}
	case trns && ct == RGB:
		p.TRNS = []byte{0, 1, 0, 2, 0, 3}
	}
	return p
}

// sample returns sample s of pixel x of a row, scaled to 16 bits.
func sample(h Header, row []byte, x, s int) uint16 {
	switch d := h.BitDepth; d {
	case 16:
		i := 2 * (x*h.Channels() + s)
		return binary.BigEndian.Uint16(row[i:])
	case 8:
		if h.ColorType == Paletted {
			return uint16(row[x])
		}
		return uint16(row[x*h.Channels()+s]) * 0x101
	default: // gray or palette index, one sample
		bit := x * d
		v := row[bit/8] >> (8 - d - bit%8) & (1<<d - 1)
		if h.ColorType == Paletted {
			return uint16(v)
		}
		return uint16(v) * (0xffff / (1<<d - 1))
	}
}

// rgba returns pixel x of a row as 16-bit non-premultiplied samples; alpha
// is 0xffff where the colour type has none.
func rgba(h Header, row []byte, x int) [4]uint16 {
	s := func(i int) uint16 { return sample(h, row, x, i) }
	switch h.ColorType {
	case Gray:
		return [4]uint16{s(0), s(0), s(0), 0xffff}
	case GrayAlpha:
		return [4]uint16{s(0), s(0), s(0), s(1)}
	case RGB:
		return [4]uint16{s(0), s(1), s(2), 0xffff}
	case RGBA:
		return [4]uint16{s(0), s(1), s(2), s(3)}
	}
	i := int(s(0))
	if i >= len(h.Palette) {
		return [4]uint16{0, 0, 0, 0xffff} // out of range: opaque black, as libpng and image/png
	}
	c := h.Palette[i]
	return [4]uint16{uint16(c.R) * 0x101, uint16(c.G) * 0x101, uint16(c.B) * 0x101, uint16(c.A) * 0x101}
}

// straight returns pixel (x, y) of an image image/png decoded as 16-bit
// non-premultiplied samples, read from its pixel slices, so that the colour
// of a transparent pixel is kept.
func straight(img image.Image, x, y int) [4]uint16 {
	w := func(v uint8) uint16 { return uint16(v) * 0x101 }
	switch m := img.(type) {
	case *image.Gray:
		v := w(m.GrayAt(x, y).Y)
		return [4]uint16{v, v, v, 0xffff}
	case *image.Gray16:
		v := m.Gray16At(x, y).Y
		return [4]uint16{v, v, v, 0xffff}
	case *image.NRGBA:
		c := m.NRGBAAt(x, y)
		return [4]uint16{w(c.R), w(c.G), w(c.B), w(c.A)}
	case *image.RGBA:
		c := m.RGBAAt(x, y)
		return [4]uint16{w(c.R), w(c.G), w(c.B), w(c.A)}
	case *image.NRGBA64:
		c := m.NRGBA64At(x, y)
		return [4]uint16{c.R, c.G, c.B, c.A}
	case *image.RGBA64:
		c := m.RGBA64At(x, y)
		return [4]uint16{c.R, c.G, c.B, c.A}
	case *image.Paletted:
		switch c := m.Palette[m.ColorIndexAt(x, y)].(type) {
		case color.RGBA:
			return [4]uint16{w(c.R), w(c.G), w(c.B), w(c.A)}
		case color.NRGBA:
			return [4]uint16{w(c.R), w(c.G), w(c.B), w(c.A)}
		}
	}
	panic(fmt.Sprintf("image/png returned a %T", img))
}

// readAll reads every row of a PNG and the rest of the file.
func readAll(data []byte) (Header, [][]byte, error) {
	d, err := NewDecoder(bytes.NewReader(data))
	if err != nil {
		return Header{}, nil, err
	}
	var rows [][]byte
	for {
		row, err := d.ReadRow()
		if err == io.EOF {
			return d.Header(), rows, nil
		}
		if err != nil {
			return d.Header(), rows, err
		}
		rows = append(rows, bytes.Clone(row))
	}
}

// compareWithImagePNG checks that rows decoded from data are image/png's
// pixels. The alpha of a gray or RGB image with tRNS is image/png's own
// work, left out.
func compareWithImagePNG(t testing.TB, data []byte, h Header, rows [][]byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err, "image/png refuses a PNG this package reads")
	require.Equal(t, image.Rect(0, 0, h.Width, h.Height), img.Bounds())
	require.Len(t, rows, h.Height)
	for y, row := range rows {
		for x := range h.Width {
			got, want := rgba(h, row, x), straight(img, x, y)
			if h.Transparent {
				got[3], want[3] = 0, 0
			}
			if got != want {
				t.Fatalf("pixel (%d, %d) is %v, image/png says %v", x, y, got, want)
			}
		}
	}
}

func TestRowsMatchImagePNG(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for ct, ds := range depths {
		for _, depth := range ds {
			for _, trns := range []bool{false, true} {
				if trns && (ct == GrayAlpha || ct == RGBA) {
					continue
				}
				for _, size := range [][2]int{{1, 1}, {1, 7}, {5, 3}, {17, 11}, {64, 9}} {
					name := fmt.Sprintf("type %d depth %d tRNS %v %dx%d", ct, depth, trns, size[0], size[1])
					t.Run(name, func(t *testing.T) {
						p := randomPNG(rng, ct, depth, size[0], size[1], trns)
						data := p.Encode()
						h, rows, err := readAll(data)
						require.NoError(t, err)
						assert.Equal(t, p.Rows, rows, "the rows differ from those encoded")
						assert.Equal(t, trns && ct != Paletted, h.Transparent)
						compareWithImagePNG(t, data, h, rows)
					})
				}
			}
		}
	}
}

func TestImagePNGFilesRead(t *testing.T) {
	imgs := map[string]image.Image{
		"gray":    image.NewGray(image.Rect(0, 0, 33, 20)),
		"gray16":  image.NewGray16(image.Rect(0, 0, 33, 20)),
		"rgb":     image.NewRGBA(image.Rect(0, 0, 33, 20)),
		"rgba":    image.NewNRGBA(image.Rect(0, 0, 33, 20)),
		"rgb16":   image.NewRGBA64(image.Rect(0, 0, 33, 20)),
		"rgba16":  image.NewNRGBA64(image.Rect(0, 0, 33, 20)),
		"palette": image.NewPaletted(image.Rect(0, 0, 33, 20), color.Palette{color.Black, color.White, color.RGBA{9, 8, 7, 255}}),
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for name, img := range imgs {
		t.Run(name, func(t *testing.T) {
			fillRandom(img, rng)
			for _, level := range []png.CompressionLevel{png.NoCompression, png.BestSpeed, png.BestCompression} {
				var buf bytes.Buffer
				require.NoError(t, (&png.Encoder{CompressionLevel: level}).Encode(&buf, img))
				h, rows, err := readAll(buf.Bytes())
				require.NoError(t, err)
				compareWithImagePNG(t, buf.Bytes(), h, rows)
			}
		})
	}
}

// fillRandom fills an image's pixel slice with random bytes (indices below
// 3 for a paletted image).
func fillRandom(img image.Image, rng *rand.Rand) {
	var pix []byte
	switch m := img.(type) {
	case *image.Gray:
		pix = m.Pix
	case *image.Gray16:
		pix = m.Pix
	case *image.RGBA:
		pix = m.Pix
		defer func() { // opaque, so that image/png writes RGB
			for i := 3; i < len(pix); i += 4 {
				pix[i] = 0xff
			}
		}()
	case *image.NRGBA:
		pix = m.Pix
	case *image.RGBA64:
		pix = m.Pix
		defer func() {
			for i := 6; i < len(pix); i += 8 {
				pix[i], pix[i+1] = 0xff, 0xff
			}
		}()
	case *image.NRGBA64:
		pix = m.Pix
	case *image.Paletted:
		for i := range m.Pix {
			m.Pix[i] = byte(rng.IntN(3))
		}
		return
	}
	for i := range pix {
		pix[i] = byte(rng.Uint32())
	}
}

func TestHeader(t *testing.T) {
	p := randomPNG(rand.New(rand.NewPCG(5, 6)), Paletted, 4, 9, 4, true)
	p.Interlace = 1
	d, err := NewDecoder(bytes.NewReader(p.Encode()))
	require.NoError(t, err)
	h := d.Header()
	assert.Equal(t, Header{Width: 9, Height: 4, BitDepth: 4, ColorType: Paletted, Interlaced: true, Palette: p.Palette}, h)
	assert.Equal(t, 5, h.RowBytes())
	assert.Equal(t, 1, h.Channels())
	_, err = d.ReadRow()
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "interlaced")

	huge := Header{Width: 100000, Height: 100000, BitDepth: 8, ColorType: RGBA}
	assert.Equal(t, 400000, huge.RowBytes())
	assert.Equal(t, int64(100000*400001/1032), huge.MinSize())
	wide := Header{Width: 1<<31 - 1, Height: 1, BitDepth: 16, ColorType: RGBA}
	assert.Equal(t, (1<<31-1)*8, wide.RowBytes(), "no overflow")
}

// TestPixelDensity: a pHYs chunk in metres gives the pixel density; one
// giving only the aspect ratio, a second one, and one of the wrong length
// (skipped, as libpng skips it) give none.
func TestPixelDensity(t *testing.T) {
	phys := func(x, y uint32, unit byte) []byte {
		return pngtest.Chunk("pHYs", append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, x), y), unit))
	}
	tests := []struct {
		name   string
		before []byte
		want   [2]uint32
	}{
		{"none", nil, [2]uint32{}},
		{"metre", phys(4000, 2000, 1), [2]uint32{4000, 2000}},
		{"aspect ratio only", phys(4000, 2000, 0), [2]uint32{}},
		{"the first of two", append(phys(10, 20, 1), phys(30, 40, 1)...), [2]uint32{10, 20}},
		{"wrong length", pngtest.Chunk("pHYs", make([]byte, 8)), [2]uint32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := randomPNG(rand.New(rand.NewPCG(1, 2)), Gray, 8, 5, 3, false)
			p.Before = tt.before
			d, err := NewDecoder(bytes.NewReader(p.Encode()))
			require.NoError(t, err)
			assert.Equal(t, tt.want, d.Header().PixelsPerMetre)
			for range 3 {
				_, err = d.ReadRow()
				require.NoError(t, err)
			}
		})
	}
}

// corrupt returns a valid 6 x 4 RGB PNG changed by edit.
func corrupt(edit func(p *pngtest.Image)) []byte {
	p := randomPNG(rand.New(rand.NewPCG(7, 8)), RGB, 8, 6, 4, false)
	edit(&p)
	return p.Encode()
}

// replaceChunk returns data with the first chunk of type typ replaced by
// the chunk of type newType holding body, with a right CRC.
func replaceChunk(data []byte, typ, newType string, body []byte) []byte {
	i := bytes.Index(data, []byte(typ)) - 4
	n := int(binary.BigEndian.Uint32(data[i:]))
	return append(append(bytes.Clone(data[:i]), pngtest.Chunk(newType, body)...), data[i+12+n:]...)
}

func TestRefusesBadPNGs(t *testing.T) {
	good := corrupt(func(*pngtest.Image) {})
	flip := func(at int) []byte { b := bytes.Clone(good); b[at] ^= 1; return b }
	idat := bytes.Index(good, []byte("IDAT"))
	iend := bytes.Index(good, []byte("IEND"))
	tests := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrFormat, "unexpected EOF"},
		{"not a PNG", []byte("GIF89a and more bytes"), ErrFormat, "not a PNG file"},
		{"IHDR CRC", flip(8 + 4 + 4 + 2), ErrFormat, "IHDR chunk: bad CRC"},
		{"IDAT CRC", flip(idat + 6), ErrFormat, "IDAT chunk: bad CRC"},
		{"IEND CRC", flip(iend + 4), ErrFormat, "IEND chunk: bad CRC"},
		{"truncated in IDAT", good[:idat+10], ErrFormat, "not enough image data"},
		{"no IEND", good[:iend-4], ErrFormat, "unexpected EOF"},
		{"first chunk not IHDR", append([]byte(signature), pngtest.Chunk("gAMA", []byte{0, 0, 0, 1})...), ErrFormat, "not IHDR"},
		{"two IHDRs", corrupt(func(p *pngtest.Image) { p.Before = pngtest.Chunk("IHDR", make([]byte, 13)) }), ErrFormat, "second IHDR"},
		{"zero width", replaceChunk(good, "IHDR", "IHDR", []byte{0, 0, 0, 0, 0, 0, 0, 4, 8, 2, 0, 0, 0}), ErrFormat, "size 0 x 4"},
		{"bad depth", replaceChunk(good, "IHDR", "IHDR", []byte{0, 0, 0, 6, 0, 0, 0, 4, 4, 2, 0, 0, 0}), ErrFormat, "bit depth 4 with colour type 2"},
		{"bad interlace", replaceChunk(good, "IHDR", "IHDR", []byte{0, 0, 0, 6, 0, 0, 0, 4, 8, 2, 0, 0, 2}), ErrFormat, "interlace 2"},
		{"IHDR length", replaceChunk(good, "IHDR", "IHDR", make([]byte, 12)), ErrFormat, "IHDR length 12"},
		{"no image data", append(good[:idat-4:idat-4], pngtest.Chunk("IEND", nil)...), ErrFormat, "no image data"},
		{"unknown critical chunk", corrupt(func(p *pngtest.Image) { p.Before = pngtest.Chunk("ABCD", nil) }), ErrUnsupported, `critical chunk "ABCD"`},
		{"bad chunk type", corrupt(func(p *pngtest.Image) { p.Before = pngtest.Chunk("ab1d", nil) }), ErrFormat, "chunk type"},
		{"chunk length", corrupt(func(p *pngtest.Image) { p.Before = []byte{0x80, 0, 0, 0, 't', 'E', 'X', 't'} }), ErrFormat, "chunk length 2147483648"},
		{"PLTE in gray", corrupt(func(p *pngtest.Image) {
			p.ColorType, p.Rows = byte(Gray), [][]byte{{1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}}
			p.Palette = []color.NRGBA{{1, 2, 3, 255}}
		}), ErrFormat, "PLTE chunk in a gray image"},
		{"palette without PLTE", corrupt(func(p *pngtest.Image) { p.ColorType, p.Rows = byte(Paletted), [][]byte{make([]byte, 6)} }), ErrFormat, "without a PLTE"},
		{"two PLTEs", corrupt(func(p *pngtest.Image) {
			p.Before = pngtest.Chunk("PLTE", []byte{1, 2, 3})
			p.Palette = []color.NRGBA{{1, 2, 3, 255}}
		}), ErrFormat, "PLTE chunk out of order"},
		{"tRNS in RGBA", corrupt(func(p *pngtest.Image) {
			p.ColorType = byte(RGBA)
			for i := range p.Rows {
				p.Rows[i] = append(p.Rows[i], p.Rows[i]...)[:24]
			}
			p.TRNS = []byte{0, 0}
		}), ErrFormat, "tRNS chunk in an image with alpha"},
		{"tRNS length", corrupt(func(p *pngtest.Image) { p.TRNS = []byte{0, 1} }), ErrFormat, "tRNS length 2"},
		{"bad filter", corrupt(func(p *pngtest.Image) { p.Filter = func(y int) byte { return byte(y * 2) } }), ErrFormat, "row 3: filter type 6"},
		{"short image data", corrupt(func(p *pngtest.Image) { p.Rows = p.Rows[:3] }), ErrFormat, "not enough image data: 3 of 4 rows"},
		{"short last row", corrupt(func(p *pngtest.Image) { p.Rows[3] = p.Rows[3][:17] }), ErrFormat, "not enough image data: 3 of 4 rows"},
		{"too much image data", corrupt(func(p *pngtest.Image) { p.Rows = append(p.Rows, p.Rows[0]) }), ErrFormat, "too much image data"},
		{"data after the zlib stream", replaceChunk(good, "IDAT", "IDAT",
			append(corrupt(func(p *pngtest.Image) {})[idat+4:iend-8], 0)), ErrFormat, "data after the image's zlib stream"},
		{"IDAT after other chunks", corrupt(func(p *pngtest.Image) {
			p.After = append(pngtest.Chunk("tEXt", []byte("a\x00b")), pngtest.Chunk("IDAT", []byte{1})...)
		}),
			ErrFormat, "IDAT chunk after the image data"},
		{"PLTE after the image data", corrupt(func(p *pngtest.Image) { p.After = pngtest.Chunk("PLTE", []byte{1, 2, 3}) }), ErrFormat, "PLTE chunk after"},
		{"ancillary CRC after the data", corrupt(func(p *pngtest.Image) {
			p.After = pngtest.Chunk("tEXt", []byte("a\x00b"))
			p.After[len(p.After)-1] ^= 1
		}), ErrFormat, "tEXt chunk: bad CRC"},
		{"IEND length", append(good[:iend-4:iend-4], pngtest.Chunk("IEND", []byte{1})...), ErrFormat, "IEND length 1"},
		{"zlib checksum", func() []byte {
			z := corrupt(func(p *pngtest.Image) {})[idat+4 : iend-8]
			z = bytes.Clone(z)
			z[len(z)-1] ^= 1
			return replaceChunk(good, "IDAT", "IDAT", z)
		}(), ErrFormat, "zlib: invalid checksum"},
		{"zlib header", replaceChunk(good, "IDAT", "IDAT", []byte{0x78, 0x9d, 1, 2}), ErrFormat, "zlib: invalid header"},
		{"corrupt deflate", replaceChunk(good, "IDAT", "IDAT", []byte{0x78, 0x9c, 0xff, 0xff, 0xff}), ErrFormat, "corrupt input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readAll(tt.data)
			require.ErrorIs(t, err, tt.want)
			assert.ErrorContains(t, err, tt.msg)
		})
	}
	t.Run("valid", func(t *testing.T) {
		_, rows, err := readAll(good)
		require.NoError(t, err)
		assert.Len(t, rows, 4)
	})
	t.Run("ancillary chunks and empty IDATs", func(t *testing.T) {
		data := corrupt(func(p *pngtest.Image) {
			p.Before = pngtest.Chunk("gAMA", []byte{0, 0, 0, 1})
			p.After = append(pngtest.Chunk("tEXt", []byte("a\x00b")), pngtest.Chunk("zzZz", nil)...)
			p.IDATSize = 5
		})
		i := bytes.Index(data, []byte("IDAT")) - 4
		data = append(append(bytes.Clone(data[:i]), pngtest.Chunk("IDAT", nil)...), data[i:]...)       // an empty IDAT first
		data = append(append(bytes.Clone(data[:i+29]), pngtest.Chunk("IDAT", nil)...), data[i+29:]...) // and after the first with data
		_, rows, err := readAll(data)
		require.NoError(t, err)
		assert.Len(t, rows, 4)
		compareWithImagePNG(t, data, Header{Width: 6, Height: 4, BitDepth: 8, ColorType: RGB}, rows)
	})
	t.Run("errors are sticky", func(t *testing.T) {
		d, err := NewDecoder(bytes.NewReader(corrupt(func(p *pngtest.Image) { p.Filter = func(int) byte { return 9 } })))
		require.NoError(t, err)
		_, err = d.ReadRow()
		require.ErrorIs(t, err, ErrFormat)
		_, again := d.ReadRow()
		assert.Equal(t, err, again)
	})
	t.Run("read errors pass through", func(t *testing.T) {
		boom := errors.New("disk on fire")
		d, err := NewDecoder(io.MultiReader(bytes.NewReader(good[:idat+20]), iotestErr{boom}))
		require.NoError(t, err)
		_, err = d.ReadRow()
		assert.ErrorIs(t, err, boom)
		assert.NotErrorIs(t, err, ErrFormat)
	})
}

type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// strictRefusal tells whether err is one of the checks this package makes
// and image/png does not: the specification's rules on unknown critical
// chunks, chunk types and the order of IDAT chunks, and data after the
// zlib stream, which image/png's read-ahead can miss.
func strictRefusal(err error) bool {
	for _, s := range []string{"critical chunk", "chunk type", "chunk after the image data", "data after the image's zlib stream",
		"second IHDR", "PLTE chunk out of order", "tRNS chunk out of order"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// FuzzDecoder reads arbitrary bytes and compares what it reads with
// image/png: a PNG one reads, the other reads with the same pixels, but
// for the checks only this package makes.
func FuzzDecoder(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 10))
	for ct, ds := range depths {
		for _, depth := range ds {
			f.Add(randomPNG(rng, ct, depth, 3+rng.IntN(9), 1+rng.IntN(5), ct != GrayAlpha && ct != RGBA).Encode())
		}
	}
	dense := randomPNG(rng, RGB, 8, 4, 3, false)
	dense.Before = pngtest.Chunk("pHYs", []byte{0, 0, 0x0b, 0x13, 0, 0, 0x0b, 0x13, 1})
	f.Add(dense.Encode())
	var buf bytes.Buffer
	img := image.NewNRGBA(image.Rect(0, 0, 7, 5))
	fillRandom(img, rng)
	_ = png.Encode(&buf, img)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		compareFuzzed(t, data)
		compareFuzzed(t, fixCRCs(data)) // so that mutations reach past the CRCs
	})
}

// fixCRCs returns data with the CRC of every whole chunk after the
// signature recomputed.
func fixCRCs(data []byte) []byte {
	out := bytes.Clone(data)
	for i := len(signature); i+12 <= len(out); {
		n := int64(binary.BigEndian.Uint32(out[i:]))
		if n > int64(len(out)-i-12) {
			break
		}
		end := i + 8 + int(n)
		binary.BigEndian.PutUint32(out[end:], crc32.ChecksumIEEE(out[i+4:end]))
		i = end + 4
	}
	return out
}

// compareFuzzed reads data with both decoders and compares.
func compareFuzzed(t *testing.T, data []byte) {
	d, err := NewDecoder(bytes.NewReader(data))
	if err != nil {
		if _, cfgErr := png.DecodeConfig(bytes.NewReader(data)); cfgErr == nil && !strictRefusal(err) {
			require.ErrorIs(t, err, ErrFormat) // image/png reads headers this package refuses only as malformed
		}
		return
	}
	h := d.Header()
	if h.MinSize() > int64(len(data)) || h.Interlaced {
		return // the file cannot hold its image; callers check this first
	}
	_, rows, err := readAll(data)
	_, pngErr := png.Decode(bytes.NewReader(data))
	switch {
	case err == nil:
		compareWithImagePNG(t, data, h, rows)
	case pngErr == nil && !strictRefusal(err):
		t.Fatalf("image/png reads what this package refuses: %v", err)
	}
}

// BenchmarkReadRows reads a 2048 x 2048 RGB PNG of every filter row by
// row, against image/png decoding it whole.
func BenchmarkReadRows(b *testing.B) {
	p := randomPNG(rand.New(rand.NewPCG(15, 16)), RGB, 8, 2048, 2048, false)
	for y, row := range p.Rows { // compressible rows: a gradient with noise
		for i := range row {
			row[i] = byte(i/3+y) + row[i]&3
		}
	}
	p.IDATSize = 1 << 16
	data := p.Encode()
	b.Run("pngstream", func(b *testing.B) {
		b.SetBytes(2048 * 2048 * 3)
		b.ReportAllocs()
		for b.Loop() {
			d, err := NewDecoder(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := d.ReadRow(); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("image/png", func(b *testing.B) {
		b.SetBytes(2048 * 2048 * 3)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := png.Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
