package compress

import (
	"bytes"
	stdlzw "compress/lzw"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/tiff"
)

// toFileOrder returns little-endian samples of n bytes in order o.
func toFileOrder(le []byte, n int, o binary.ByteOrder) []byte {
	if o != binary.BigEndian || n == 1 {
		return bytes.Clone(le)
	}
	return swapSamples(le, n)
}

// TestDecoderRoundTrip encodes blocks of every pixel type, 1 to 4
// samples, both byte orders, every codec and predictor with this
// package's encoders, and decodes them: the little-endian samples must
// come back, for full blocks and a short last strip.
func TestDecoderRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const width, height = 13, 7
	for _, st := range sampleTypes {
		for samples := 1; samples <= 4; samples++ {
			for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
				f := st.format
				f.SamplesPerPixel, f.ByteOrder = samples, order
				n := f.BitsPerSample / 8
				for _, c := range []Codec{mustCodec(tiff.CompressionNone, 0), mustCodec(tiff.CompressionLZW, 0), mustCodec(tiff.CompressionDeflate, 0), mustCodec(tiff.CompressionZstd, 0)} { // levels do not matter to decoding
					for _, p := range predictorsFor(c, f) {
						for _, fl := range fillers {
							for _, rows := range []int{height, 3} {
								want := make([]byte, rows*width*samples*n)
								fl.fill(want, r)
								enc := &TileEncoder{Codec: c, Predictor: p, Format: f, Width: width}
								stored, err := enc.Encode(nil, toFileOrder(want, n, order))
								require.NoError(t, err)
								d, err := NewDecoder(BlockFormat{Compression: c.Compression(), Predictor: p, Format: f, Width: width, Height: height})
								require.NoError(t, err)
								got, err := d.DecodeRows([]byte("head"), stored, rows)
								require.NoError(t, err, "%s %d samples %v %s p%d %s", st.name, samples, order, codecName(c), p, fl.name)
								require.Equal(t, "head", string(got[:4]))
								require.Equal(t, want, got[4:], "%s %d samples %v %s p%d %s rows %d", st.name, samples, order, codecName(c), p, fl.name, rows)
							}
						}
					}
				}
			}
		}
	}
}

// TestDecodeFloat16Predictor undoes the floating-point predictor on 16-bit
// floats, which libtiff writes (this package's encoder does not).
func TestDecodeFloat16Predictor(t *testing.T) {
	// Two pixels of two float16 samples, little-endian: 0x3c00 (1.0),
	// 0xc000 (-2.0), 0x7bff, 0x0001.
	want := []byte{0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00}
	// Planes, most significant bytes first: 3c c0 7b 00 | 00 00 ff 01,
	// then each byte minus the byte two before it.
	planes := []byte{0x3c, 0xc0, 0x7b, 0x00, 0x00, 0x00, 0xff, 0x01}
	stored := bytes.Clone(planes)
	for i := len(stored) - 1; i >= 2; i-- {
		stored[i] -= stored[i-2]
	}
	d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionLZW, Predictor: tiff.PredictorFloatingPoint, Format: Format{BitsPerSample: 16, SamplesPerPixel: 2, Float: true, ByteOrder: binary.BigEndian}, Width: 2, Height: 1})
	require.NoError(t, err)
	got, err := d.Decode(nil, encoded(t, mustCodec(tiff.CompressionLZW, 0), stored))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	// Uncompressed, the predictor is ignored, as libtiff ignores it.
	none, err := NewDecoder(BlockFormat{Predictor: tiff.PredictorFloatingPoint, Format: Format{BitsPerSample: 8}, Width: 8, Height: 1})
	require.NoError(t, err)
	got, err = none.Decode(nil, stored)
	require.NoError(t, err)
	assert.Equal(t, stored, got)
}

// TestDecodePackBits decodes the example of TIFF 6.0 Section 9.
func TestDecodePackBits(t *testing.T) {
	stored := []byte{0xFE, 0xAA, 0x02, 0x80, 0x00, 0x2A, 0xFD, 0xAA, 0x03, 0x80, 0x00, 0x2A, 0x22, 0xF7, 0xAA, 0x80}
	want := []byte{0xAA, 0xAA, 0xAA, 0x80, 0x00, 0x2A, 0xAA, 0xAA, 0xAA, 0xAA, 0x80, 0x00, 0x2A, 0x22,
		0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA}
	d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionPackBits, Width: len(want), Height: 1})
	require.NoError(t, err)
	got, err := d.Decode(nil, stored)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// TestDecodePackedSamples decodes 2- and 4-bit samples, packed most
// significant first in rows that each start a byte, to their values.
func TestDecodePackedSamples(t *testing.T) {
	for _, tt := range []struct {
		bits   int
		packed []byte
		want   []byte
	}{
		{2, []byte{0b11100100, 0b01000000, 0b00011011, 0b10000000}, []byte{3, 2, 1, 0, 1, 0, 1, 2, 3, 2}},
		{4, []byte{0xf1, 0x20, 0x3e, 0x40}, []byte{15, 1, 2, 3, 14, 4}},
	} {
		width := len(tt.want) / 2
		d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionNone, Format: Format{BitsPerSample: tt.bits}, Width: width, Height: 2})
		require.NoError(t, err)
		got, err := d.Decode(nil, tt.packed)
		require.NoError(t, err, "%d bits", tt.bits)
		assert.Equal(t, tt.want, got, "%d bits", tt.bits)
	}
	_, err := NewDecoder(BlockFormat{Format: Format{BitsPerSample: 4, SamplesPerPixel: 3}, Width: 8, Height: 1})
	assert.ErrorIs(t, err, ErrFormat, "4-bit samples, 3 a pixel")
}

// TestDecodeBilevel decodes 1-bit samples, packed most significant bit
// first in rows that each start a byte, to bytes of 0 and 1, whatever the
// codec, and a last strip of fewer rows.
func TestDecodeBilevel(t *testing.T) {
	packed := []byte{0b10110000, 0b01000000, 0xff, 0xc0, 0b00000001, 0b10111111}
	want := []byte{
		1, 0, 1, 1, 0, 0, 0, 0, 0, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 1, 1, 0,
	}
	for _, c := range []uint16{tiff.CompressionNone, tiff.CompressionPackBits, tiff.CompressionLZW, tiff.CompressionDeflate, tiff.CompressionZstd} {
		stored := packed
		if c == tiff.CompressionPackBits {
			stored = []byte{5, 0b10110000, 0b01000000, 0xff, 0xc0, 0b00000001, 0b10111111}
		} else if c != tiff.CompressionNone {
			var err error
			stored, err = mustCodec(c, 0).Encode(nil, packed)
			require.NoError(t, err)
		}
		d, err := NewDecoder(BlockFormat{Compression: c, Format: Format{BitsPerSample: 1}, Width: 10, Height: 4})
		require.NoError(t, err)
		assert.Equal(t, 40, d.BlockBytes(4))
		got, err := d.DecodeRows([]byte{9}, stored, 3)
		require.NoError(t, err, "compression %d", c)
		assert.Equal(t, append([]byte{9}, want...), got, "compression %d", c)
		got, err = d.DecodeRows([]byte{9}, packed[:4], 3)
		if c == tiff.CompressionNone {
			assert.ErrorIs(t, err, ErrCorrupt, "too few bytes")
			assert.Equal(t, []byte{9}, got)
		}
	}
	for _, tt := range []struct {
		name string
		f    BlockFormat
		want error
	}{
		{"two samples", BlockFormat{Format: Format{BitsPerSample: 1, SamplesPerPixel: 2}, Width: 8, Height: 1}, ErrFormat},
		{"floats", BlockFormat{Format: Format{BitsPerSample: 1, Float: true}, Width: 8, Height: 1}, ErrFormat},
		{"JPEG", BlockFormat{Compression: tiff.CompressionJPEG, Format: Format{BitsPerSample: 1}, Width: 8, Height: 1}, ErrCompression},
		{"a predictor", BlockFormat{Compression: tiff.CompressionLZW, Predictor: tiff.PredictorHorizontal, Format: Format{BitsPerSample: 1}, Width: 8, Height: 1}, ErrPredictor},
	} {
		_, err := NewDecoder(tt.f)
		assert.ErrorIs(t, err, tt.want, tt.name)
	}
}

// TestDecodeOldStyleLZW decodes the LZW of libtiff before 1991:
// LSB-first codes without the early change, as compress/lzw writes them.
func TestDecodeOldStyleLZW(t *testing.T) {
	want := bytes.Repeat([]byte("old-style LZW, LSB first, no early change. "), 200)
	var b bytes.Buffer
	w := stdlzw.NewWriter(&b, stdlzw.LSB, 8)
	_, err := w.Write(want)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, []byte{0, 1}, []byte{b.Bytes()[0], b.Bytes()[1] & 1}, "the signature libtiff looks for")
	d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionLZW, Width: len(want), Height: 1})
	require.NoError(t, err)
	got, err := d.Decode(nil, b.Bytes())
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// encoded compresses data with a codec of this package.
func encoded(t *testing.T, c Codec, data []byte) []byte {
	t.Helper()
	out, err := c.Encode(nil, data)
	require.NoError(t, err)
	return out
}

// TestDecodeErrors: streams that do not decode, or decode to more or fewer
// bytes than the block, are ErrCorrupt; settings the decoder does not
// handle are refused by NewDecoder.
func TestDecodeErrors(t *testing.T) {
	block := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 32) // 256 bytes: 16 x 16 uint8
	more := append(bytes.Clone(block), 9)
	bigFrame, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	zstdHuge := bigFrame.EncodeAll(make([]byte, 1<<20), nil)
	tests := []struct {
		name        string
		compression uint16
		stored      []byte
		says        string
	}{
		{"none short", tiff.CompressionNone, block[:255], "255 bytes stored for 256"},
		{"LZW truncated", tiff.CompressionLZW, encoded(t, mustCodec(tiff.CompressionLZW, 0), block)[:20], "LZW stream decodes to"},
		{"LZW too long", tiff.CompressionLZW, encoded(t, mustCodec(tiff.CompressionLZW, 0), more), "more than 256"},
		{"LZW invalid code", tiff.CompressionLZW, []byte{0x80, 0xff, 0xff, 0xff, 0xff}, "LZW"},
		{"Deflate truncated", tiff.CompressionDeflate, encoded(t, mustCodec(tiff.CompressionDeflate, 0), block)[:10], "Deflate"},
		{"Deflate too long", tiff.CompressionDeflate, encoded(t, mustCodec(tiff.CompressionDeflate, 0), more), "more than 256"},
		{"Deflate garbage", tiff.CompressionDeflate, []byte("not a zlib stream"), "Deflate"},
		{"Deflate bad checksum", tiff.CompressionDeflate, func() []byte {
			p := encoded(t, mustCodec(tiff.CompressionDeflate, 0), block)
			p[len(p)-1] ^= 1
			return p
		}(), "checksum"},
		{"Zstd short", tiff.CompressionZstd, encoded(t, mustCodec(tiff.CompressionZstd, 0), block[:100]), "100 bytes of 256"},
		{"Zstd of a megabyte", tiff.CompressionZstd, zstdHuge, "Zstd"},
		{"Zstd garbage", tiff.CompressionZstd, []byte("not zstd"), "Zstd"},
		{"PackBits short", tiff.CompressionPackBits, []byte{0x02, 1, 2, 3}, "3 bytes of 256"},
		{"PackBits run too long", tiff.CompressionPackBits, []byte{0x81, 7, 0x81, 7, 0x81, 7}, "more than 256"},
		{"PackBits literal cut", tiff.CompressionPackBits, []byte{0x05, 1}, "past the end"},
		{"PackBits run cut", tiff.CompressionPackBits, []byte{0xfe}, "without its byte"},
		{"PackBits literal one byte short", tiff.CompressionPackBits, []byte{0x02, 1, 2}, "past the end"},
		{"PackBits run one byte too long", tiff.CompressionPackBits, []byte{0x81, 7, 0x82, 7, 0xff, 7}, "more than 256"}, // 128 + 127 + 2
		{"Deflate without its checksum", tiff.CompressionDeflate, func() []byte {
			p := encoded(t, mustCodec(tiff.CompressionDeflate, 0), block)
			return p[:len(p)-4]
		}(), "Deflate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDecoder(BlockFormat{Compression: tt.compression, Width: 16, Height: 16})
			require.NoError(t, err)
			got, err := d.Decode([]byte("x"), tt.stored)
			require.ErrorIs(t, err, ErrCorrupt)
			assert.Contains(t, err.Error(), tt.says)
			assert.Equal(t, []byte("x"), got, "dst as it was")
		})
	}

	settings := []struct {
		name string
		f    BlockFormat
		want error
	}{
		{"JPEG 2000", BlockFormat{Compression: tiff.CompressionJPEG2000Aperio, Width: 1, Height: 1}, ErrCompression},
		{"old JPEG", BlockFormat{Compression: tiff.CompressionOldJPEG, Width: 1, Height: 1}, ErrCompression},
		{"YCbCr in LZW", BlockFormat{Compression: tiff.CompressionLZW, Photometric: tiff.PhotometricYCbCr, Format: Format{SamplesPerPixel: 3}, Width: 1, Height: 1}, ErrCompression},
		{"16-bit JPEG", BlockFormat{Compression: tiff.CompressionJPEG, Format: Format{BitsPerSample: 16}, Width: 1, Height: 1}, ErrCompression},
		{"CMYK JPEG", BlockFormat{Compression: tiff.CompressionJPEG, Format: Format{SamplesPerPixel: 4}, Width: 1, Height: 1}, ErrCompression},
		{"float predictor on ints", BlockFormat{Compression: tiff.CompressionLZW, Predictor: 3, Format: Format{BitsPerSample: 32}, Width: 1, Height: 1}, ErrPredictor},
		{"predictor 4", BlockFormat{Compression: tiff.CompressionLZW, Predictor: 4, Width: 1, Height: 1}, ErrPredictor},
		{"12 bits", BlockFormat{Format: Format{BitsPerSample: 12}, Width: 1, Height: 1}, ErrFormat},
		{"no width", BlockFormat{Height: 1}, ErrFormat},
		{"no height", BlockFormat{Width: 1}, ErrFormat},
		{"YCbCr JPEG of one sample", BlockFormat{Compression: tiff.CompressionJPEG, Photometric: tiff.PhotometricYCbCr, Width: 8, Height: 8}, ErrFormat},
		{"overflowing block", BlockFormat{Format: Format{BitsPerSample: 64, SamplesPerPixel: 4}, Width: 1 << 31, Height: 1 << 31}, ErrFormat},
		{"JPEGTables without SOI", BlockFormat{Compression: tiff.CompressionJPEG, JPEGTables: []byte{1, 2, 3, 4}, Width: 1, Height: 1}, ErrCorrupt},
		{"JPEGTables of SOI alone", BlockFormat{Compression: tiff.CompressionJPEG, JPEGTables: []byte{0xff, 0xd8}, Width: 1, Height: 1}, ErrCorrupt},
	}
	for _, tt := range settings {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewDecoder(tt.f)
			assert.ErrorIs(t, err, tt.want)
		})
	}
	d, err := NewDecoder(BlockFormat{Width: 4, Height: 4})
	require.NoError(t, err)
	for _, rows := range []int{0, 5} {
		_, err = d.DecodeRows(nil, make([]byte, 16), rows)
		assert.ErrorIs(t, err, ErrFormat, "%d rows", rows)
	}
}

// testImage is a smooth RGB image with texture.
func testImage(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(3, 4))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.RGBA{byte(x*4 + r.IntN(9)), byte(y*5 + r.IntN(9)), byte((x + y) * 3), 255})
		}
	}
	return m
}

// TestDecodeJPEG decodes abbreviated JPEG streams with their tables
// spliced in: the same pixels as the whole stream, gray and YCbCr, and
// errors for frames of the wrong size and streams that do not decode.
func TestDecodeJPEG(t *testing.T) {
	var full bytes.Buffer
	require.NoError(t, jpeg.Encode(&full, testImage(32, 16), &jpeg.Options{Quality: 90}))
	tables, stream := splitJPEG(full.Bytes())
	rgb := BlockFormat{Compression: tiff.CompressionJPEG, Format: Format{SamplesPerPixel: 3}, Photometric: tiff.PhotometricYCbCr, Width: 32, Height: 16}
	whole, err := NewDecoder(rgb)
	require.NoError(t, err)
	want, err := whole.Decode(nil, full.Bytes())
	require.NoError(t, err)
	rgb.JPEGTables = tables
	d, err := NewDecoder(rgb)
	require.NoError(t, err)
	got, err := d.Decode(nil, stream)
	require.NoError(t, err)
	assert.Equal(t, want, got, "tables spliced in")
	src := testImage(32, 16)
	for i := 0; i < len(got); i += 3 { // the decoded image is near the source
		x, y := i/3%32, i/3/32
		c := src.RGBAAt(x, y)
		for k, v := range []byte{c.R, c.G, c.B} {
			assert.InDelta(t, int(v), int(got[i+k]), 24, "pixel %d,%d sample %d", x, y, k)
		}
	}

	// A frame of 32 x 16 where the block is 16 x 16, or 32 x 8 where it
	// is 32 x 16, is refused; a short last strip of 8 rows stored with all
	// 16, as some writers pad it, gives its first 8, as libtiff reads it.
	small := rgb
	small.Width = 16
	ds, err := NewDecoder(small)
	require.NoError(t, err)
	_, err = ds.Decode(nil, stream)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "JPEG frame of 32 x 16 in a block of 16 x 16")
	short, err := d.DecodeRows(nil, stream, 8)
	require.NoError(t, err)
	assert.Equal(t, got[:8*32*3], short)
	// A last strip of 8 rows in strips of 32, stored as a frame of 16 (a
	// writer padding to whole MCUs), gives its first 8 too, as libtiff
	// reads it; a frame taller than the strips, or shorter than the
	// rows, is refused.
	tall := rgb
	tall.Height = 32
	dt, err := NewDecoder(tall)
	require.NoError(t, err)
	short, err = dt.DecodeRows(nil, stream, 8)
	require.NoError(t, err)
	assert.Equal(t, got[:8*32*3], short)
	low := rgb
	low.Height = 12
	dl, err := NewDecoder(low)
	require.NoError(t, err)
	_, err = dl.DecodeRows(nil, stream, 8)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "JPEG frame of 32 x 16 in a block of 32 x 8")
	_, err = dt.DecodeRows(nil, stream, 24)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "JPEG frame of 32 x 16 in a block of 32 x 24")

	for name, bad := range map[string][]byte{
		"no SOI":    stream[2:],
		"truncated": stream[:len(stream)/2],
		"garbage":   append([]byte{0xff, 0xd8}, bytes.Repeat([]byte{0x42}, 100)...),
		"no tables": nil,
	} {
		dd := d
		if name == "no tables" {
			bad = stream
			dd = whole
		}
		_, err := dd.Decode(nil, bad)
		assert.ErrorIs(t, err, ErrCorrupt, name)
	}

	var gray bytes.Buffer
	g := image.NewGray(image.Rect(0, 0, 16, 8))
	for i := range g.Pix {
		g.Pix[i] = byte(i)
	}
	require.NoError(t, jpeg.Encode(&gray, g, &jpeg.Options{Quality: 100}))
	dg, err := NewDecoder(BlockFormat{Compression: tiff.CompressionJPEG, Width: 16, Height: 8})
	require.NoError(t, err)
	got, err = dg.Decode(nil, gray.Bytes())
	require.NoError(t, err)
	for i, v := range got {
		assert.InDelta(t, int(g.Pix[i]), int(v), 2, "gray sample %d", i)
	}
	_, err = d.Decode(nil, gray.Bytes())
	assert.True(t, errors.Is(err, ErrCorrupt), "a gray frame in an RGB block: %v", err)
}

// TestUpsampleRow checks the chroma upsampling on rows small enough to
// compute by hand: libjpeg's triangular filter across (2x1) and both ways
// (2x2), and repetition for the narrow planes and other ratios.
func TestUpsampleRow(t *testing.T) {
	plane := []byte{0, 40, 80, 120, // row 0
		200, 200, 200, 200} // row 1
	dst := make([]byte, 12)
	upsampleRow(dst, plane, 4, 8, 2, 2, 1, 0)
	// (3*in[x] + in[x±1] + 1 or 2) / 4, edges kept.
	assert.Equal(t, []byte{0, 10, 30, 50, 70, 90, 110, 120}, dst[:8])
	upsampleRow(dst, plane, 4, 8, 4, 2, 2, 1)
	// Output row 1 is nearest to input row 0, then row 1 below it: column
	// sums 3*row0 + row1 = 200, 320, 440, 560, then (3*this + other + 8
	// or 7) / 16, and (4*this + 8 or 7) / 16 at the edges.
	assert.Equal(t, []byte{50, 57, 73, 87, 103, 117, 133, 140}, dst[:8])
	upsampleRow(dst, plane, 4, 8, 4, 2, 2, 0)
	// Output row 0's far row is row -1, which repeats row 0: sums 4*row0.
	assert.Equal(t, []byte{0, 10, 30, 50, 70, 90, 110, 120}, dst[:8])
	upsampleRow(dst, plane, 4, 4, 2, 4, 1, 0)
	assert.Equal(t, []byte{0, 0, 0, 0}, dst[:4], "4x1: repetition")
}

// TestToRGB420: the fused 4:2:0 path writes the same bytes as upsampling
// row by row and converting, at every size around the edges of its
// filters (odd widths and heights, chroma planes of 3 samples and more).
func TestToRGB420(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, w := range []int{5, 6, 7, 8, 15, 16, 17, 240, 255} {
		for _, h := range []int{1, 2, 3, 16, 17, 240} {
			m := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
			for _, p := range [][]byte{m.Y, m.Cb, m.Cr} {
				for i := range p {
					p[i] = byte(r.Uint32())
				}
			}
			fused, rows := make([]byte, 3*w*h), make([]byte, 3*w*h)
			toRGB(fused, m, true)
			toRGBRows(rows, m, true, w, h, 2, 2)
			require.Equal(t, rows, fused, "%d x %d", w, h)
		}
	}
}

// BenchmarkToRGB converts a 256 x 256 YCbCr 4:2:0 tile to RGB, fused and
// row by row.
func BenchmarkToRGB(b *testing.B) {
	m := image.NewYCbCr(image.Rect(0, 0, 256, 256), image.YCbCrSubsampleRatio420)
	for i := range m.Y {
		m.Y[i] = byte(i * 7)
	}
	for i := range m.Cb {
		m.Cb[i], m.Cr[i] = byte(i*3), byte(i*5)
	}
	out := make([]byte, 3*256*256)
	for _, path := range []string{"fused", "rows"} {
		b.Run(path, func(b *testing.B) {
			b.SetBytes(int64(len(out)))
			for b.Loop() {
				if path == "fused" {
					toRGB(out, m, true)
				} else {
					toRGBRows(out, m, true, 256, 256, 2, 2)
				}
			}
		})
	}
}

// TestFrameSize reads the size in frame headers as image/jpeg's
// DecodeConfig does, and refuses streams without one.
func TestFrameSize(t *testing.T) {
	var full bytes.Buffer
	require.NoError(t, jpeg.Encode(&full, testImage(37, 21), &jpeg.Options{Quality: 80}))
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(full.Bytes()))
	require.NoError(t, err)
	w, h, comps, err := frameSize(full.Bytes())
	require.NoError(t, err)
	assert.Equal(t, [3]int{cfg.Width, cfg.Height, 3}, [3]int{w, h, comps})

	soi, sof := []byte{0xff, 0xd8}, []byte{0xff, 0xc2, 0, 11, 8, 0, 16, 1, 0, 1, 1, 0x11, 0}
	app := []byte{0xff, 0xe0, 0, 4, 'a', 'b'}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		data []byte
		w, h int
		err  string
	}{
		{"progressive, after an application segment", cat(soi, app, sof), 256, 16, ""},
		{"fill bytes and a restart marker", cat(soi, []byte{0xff, 0xff, 0xd3}, sof), 256, 16, ""},
		{"a frame header without its component count", cat(soi, []byte{0xff, 0xc0, 0, 7, 8, 0, 1, 0, 1, 0}), 0, 0, "frame header of 7 bytes"},
		{"no frame", cat(soi, app), 0, 0, "no frame header"},
		{"the scan first", cat(soi, []byte{0xff, 0xda, 0, 2}), 0, 0, "marker 0xda before the frame header"},
		{"not a marker", cat(soi, []byte{0x12, 0x34}), 0, 0, "where a marker was expected"},
		{"a segment past the end", cat(soi, []byte{0xff, 0xe1, 0x10, 0}), 0, 0, "of 4096 bytes"},
		{"a short frame header", cat(soi, []byte{0xff, 0xc0, 0, 5, 8, 0, 1}), 0, 0, "frame header of 5 bytes"},
		{"a cut marker", cat(soi, []byte{0xff, 0xe0, 0}), 0, 0, "cut short"},
		{"a segment one byte past the end", cat(soi, []byte{0xff, 0xe0, 0, 4, 'a'}), 0, 0, "segment 0xe0 of 4 bytes"},
		{"a frame header one byte past the end", cat(soi, sof[:len(sof)-1]), 0, 0, "segment 0xc2 of 11 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, h, comps, err := frameSize(tt.data)
			if tt.err != "" {
				assert.ErrorIs(t, err, ErrCorrupt)
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, [3]int{tt.w, tt.h, 1}, [3]int{w, h, comps})
		})
	}
}

// TestJPEGDecodeScanLimit decodes progressive streams of one 8 x 8 gray
// block, in this build's decoder (image/jpeg, or libjpeg-turbo with the
// ometiff_turbo tag): 448 scans decode as image/jpeg decodes them, and 576,
// past the bound both builds keep, give ErrCompression instead of a pass
// over the frame for each.
func TestJPEGDecodeScanLimit(t *testing.T) {
	d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionJPEG, Width: 8, Height: 8})
	require.NoError(t, err)
	for _, c := range []struct {
		al, scans int
		ok        bool
	}{{6, 448, true}, {8, 576, false}} {
		stream, scans := progressiveJPEG(c.al)
		require.Equal(t, c.scans, scans)
		m, err := jpeg.Decode(bytes.NewReader(stream))
		require.NoError(t, err, "image/jpeg, %d scans", scans)
		got, err := d.Decode(nil, stream)
		if c.ok {
			require.NoError(t, err, "%d scans", scans)
			assert.Equal(t, m.(*image.Gray).Pix, got)
			continue
		}
		assert.ErrorIs(t, err, ErrCompression, "%d scans", scans)
		assert.Contains(t, err.Error(), "more than 500 scans")
	}
}

// TestJPEGScanLimit: a large frame may have fewer scans, each a pass over
// the frame in image/jpeg: 2^32 over its pixels, but never fewer than
// minJPEGScans nor more than maxJPEGScans. CheckJPEG refuses a stream of
// 448 scans of a frame that says it is 8000 x 8000 (64 allowed), and takes
// it as the 8 x 8 frame it is.
func TestJPEGScanLimit(t *testing.T) {
	for _, c := range []struct{ w, h, want int }{
		{8, 8, 500}, {0, 0, 500}, {2048, 2048, 500}, {4096, 4096, 256}, {8000, 8000, 67}, {65535, 65535, 32},
	} {
		assert.Equal(t, c.want, scanLimit(c.w, c.h), "%d x %d", c.w, c.h)
	}
	stream, scans := progressiveJPEG(6)
	require.Equal(t, 448, scans)
	require.NoError(t, CheckJPEG(stream))
	_, _, _, err := frameSize(stream)
	require.NoError(t, err)
	large := bytes.Clone(stream)
	at := bytes.Index(large, []byte{0xff, 0xc2}) // the progressive frame header: length, precision, height, width
	require.Positive(t, at)
	binary.BigEndian.PutUint16(large[at+5:], 8000)
	binary.BigEndian.PutUint16(large[at+7:], 8000)
	err = CheckJPEG(large)
	assert.ErrorIs(t, err, ErrCompression)
	assert.ErrorContains(t, err, "more than 67 scans of a 8000 x 8000 frame")
}

// TestJPEGDecodeScanLimitTables puts the scans in the page's JPEGTables,
// which are decoded in front of every block: a block of SOI and EOI alone
// must not make each decode a pass over 576 scans.
func TestJPEGDecodeScanLimitTables(t *testing.T) {
	stream, scans := progressiveJPEG(8)
	require.Equal(t, 576, scans)
	d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionJPEG, Width: 8, Height: 8, JPEGTables: stream})
	if err != nil {
		require.ErrorIs(t, err, ErrCorrupt) // tables that are an image may be refused up front
		return
	}
	_, err = d.Decode(nil, []byte{0xff, 0xd8, 0xff, 0xd9})
	require.Error(t, err)
	if jpegTurboDecode == nil {
		assert.ErrorIs(t, err, ErrCompression)
		assert.Contains(t, err.Error(), "more than 500 scans")
	}
}

// TestJPEGDecodeComponents refuses a JPEG block whose frame has more
// components than the page has samples before decoding it, since the
// memory planned for the block is that of the page's samples.
func TestJPEGDecodeComponents(t *testing.T) {
	var rgb bytes.Buffer
	require.NoError(t, jpeg.Encode(&rgb, testImage(16, 16), &jpeg.Options{Quality: 80}))
	d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionJPEG, Width: 16, Height: 16})
	require.NoError(t, err)
	_, err = d.Decode(nil, rgb.Bytes())
	require.ErrorIs(t, err, ErrCorrupt)
	assert.Contains(t, err.Error(), "3 components in a block of 1 samples per pixel")
}

// progressiveJPEG returns a progressive JPEG stream of one 8 x 8 gray block
// whose coefficients are all zero, sent by successive approximation from
// bit al down: a first and al refinement scans for the DC and for each of
// the 63 AC coefficients, and the number of scans.
func progressiveJPEG(al int) (stream []byte, scans int) {
	seg := func(marker byte, body ...byte) {
		n := len(body) + 2
		stream = append(append(stream, 0xff, marker, byte(n>>8), byte(n)), body...)
	}
	stream = []byte{0xff, 0xd8}
	seg(0xdb, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...)...)
	seg(0xc2, 8, 0, 8, 0, 8, 1, 1, 0x11, 0)
	oneCode := append([]byte{1}, make([]byte, 15)...) // one code of 1 bit: symbol 0
	seg(0xc4, append(append([]byte{0x00}, oneCode...), 0)...)
	seg(0xc4, append(append([]byte{0x10}, oneCode...), 0)...)
	scan := func(ss, se, ah, al int) {
		// Each scan codes its one block in a single 0 bit (a DC difference
		// of 0, an EOB, or a refinement bit of 0), padded with ones.
		seg(0xda, 1, 1, 0x00, byte(ss), byte(se), byte(ah<<4|al))
		stream = append(stream, 0x7f)
		scans++
	}
	for k := range 64 {
		scan(k, k, 0, al)
		for a := al; a > 0; a-- {
			scan(k, k, a, a-1)
		}
	}
	return append(stream, 0xff, 0xd9), scans
}

// TestJPEGScanCount counts the scans of streams whose other bytes look
// like SOS markers: in a segment's payload, after fill bytes, and in
// entropy-coded data with stuffed bytes and restart markers.
func TestJPEGScanCount(t *testing.T) {
	sos := []byte{0xff, 0xda, 0x00, 0x08, 1, 1, 0x00, 0, 63, 0}
	app := []byte{0xff, 0xe1, 0x00, 0x06, 0xff, 0xda, 0xff, 0xda} // a payload of two SOS markers
	data := []byte{0x12, 0xff, 0x00, 0xda, 0xff, 0xd0, 0xff, 0x00, 0xff, 0xd7, 0x34}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, c := range []struct {
		name   string
		stream []byte
		limit  int
		want   int
	}{
		{"none", []byte{0xff, 0xd8, 0xff, 0xd9}, 10, 0},
		{"one", cat([]byte{0xff, 0xd8}, sos, data, []byte{0xff, 0xd9}), 10, 1},
		{"SOS bytes in an APP1 payload", cat([]byte{0xff, 0xd8}, app, sos, data, []byte{0xff, 0xd9}), 10, 1},
		{"fill bytes before markers", cat([]byte{0xff, 0xd8, 0xff, 0xff}, sos, data, []byte{0xff, 0xff, 0xff}, sos, data), 10, 2},
		{"three, stopped one past a limit of 1", cat(sos, data, sos, data, sos, data), 1, 2},
		{"a segment cut short", cat(sos, data, []byte{0xff, 0xda, 0x00}), 10, 1},
		{"a length past the end", cat(sos, []byte{0xff, 0xe0, 0xff, 0xff}, sos), 10, 1},
		{"a scan header's length, the stream's last bytes", cat(sos, data, []byte{0xff, 0xda, 0x00, 0x08}), 10, 2},
		{"EOI stands alone", cat(sos, data, []byte{0xff, 0xd9}, sos, data), 10, 2},
		{"SOI stands alone", cat([]byte{0xff, 0xd8}, sos, data), 10, 1},
	} {
		assert.Equal(t, c.want, scanCount(c.stream, c.limit), c.name)
	}
	stream, scans := progressiveJPEG(8)
	assert.Equal(t, scans, scanCount(stream, 1000))
}

// TestCheckJPEG: a whole stream passes with a frame header and up to 500
// scans, the Decoder's bounds; more scans, no SOI or no frame do not.
func TestCheckJPEG(t *testing.T) {
	var gray bytes.Buffer
	require.NoError(t, jpeg.Encode(&gray, image.NewGray(image.Rect(0, 0, 8, 8)), nil))
	fewer, _ := progressiveJPEG(6) // 448 scans
	more, n := progressiveJPEG(7)  // 512 scans
	require.Greater(t, n, maxJPEGScans)
	for _, c := range []struct {
		name   string
		stream []byte
		is     error
	}{
		{"baseline", gray.Bytes(), nil},
		{"448 scans", fewer, nil},
		{"512 scans", more, ErrCompression},
		{"no SOI", gray.Bytes()[2:], ErrCorrupt},
		{"no frame", []byte{0xff, 0xd8, 0xff, 0xd9}, ErrCorrupt},
		{"empty", nil, ErrCorrupt},
	} {
		err := CheckJPEG(c.stream)
		if c.is == nil {
			assert.NoError(t, err, c.name)
		} else {
			assert.ErrorIs(t, err, c.is, c.name)
		}
	}
}

// TestDecodePaddedLastStrip: a last strip stored with more rows than its
// own, up to all RowsPerStrip (as some writers pad it), decodes to its
// first rows in every codec, as libtiff reads it; a tile, or a strip
// stored with fewer rows than its own or more than the block's, is still
// refused.
func TestDecodePaddedLastStrip(t *testing.T) {
	const w, h, rows = 7, 10, 3
	f := Format{BitsPerSample: 16, SamplesPerPixel: 2}
	raw := make([]byte, w*h*4)
	for i := range raw {
		raw[i] = byte(i*7 + i/13)
	}
	for _, c := range []uint16{tiff.CompressionNone, tiff.CompressionLZW, tiff.CompressionDeflate, tiff.CompressionZstd, tiff.CompressionPackBits} {
		var stored []byte
		if c == tiff.CompressionPackBits {
			for i := 0; i < len(raw); i += 128 { // literal runs
				run := raw[i:min(i+128, len(raw))]
				stored = append(append(stored, byte(len(run)-1)), run...)
			}
		} else {
			codec, err := NewCodec(c, 0)
			require.NoError(t, err)
			stored, err = codec.Encode(nil, raw)
			require.NoError(t, err)
		}
		d, err := NewDecoder(BlockFormat{Compression: c, Format: f, Width: w, Height: h})
		require.NoError(t, err)
		got, err := d.DecodeRows(nil, stored, rows)
		require.NoError(t, err, "compression %d", c)
		assert.Equal(t, raw[:rows*w*4], got, "compression %d", c)
		// Stored with more rows than its own but fewer than the block's
		// (padded to a multiple of 8, say), too.
		d12, err := NewDecoder(BlockFormat{Compression: c, Format: f, Width: w, Height: h + 2})
		require.NoError(t, err)
		got, err = d12.DecodeRows(nil, stored, rows)
		require.NoError(t, err, "compression %d", c)
		assert.Equal(t, raw[:rows*w*4], got, "compression %d", c)
		// Stored with fewer rows than its own: refused; and cut short
		// (a zlib stream without its checksum, say), though its rows
		// come out before the cut: refused too (but LZW, whose decoder,
		// as libtiff's, takes a stream without its end code).
		_, err = d12.DecodeRows(nil, stored, h+1)
		assert.ErrorIs(t, err, ErrCorrupt, "compression %d", c)
		if c != tiff.CompressionNone && c != tiff.CompressionLZW {
			_, err = d12.DecodeRows(nil, stored[:len(stored)-4], rows)
			assert.ErrorIs(t, err, ErrCorrupt, "compression %d", c)
		}
		// Not a last strip's length: 2 rows' more, of a block of 8 rows.
		// Uncompressed bytes past the block are left, as libtiff leaves
		// them (a writer padding to an even length).
		d8, err := NewDecoder(BlockFormat{Compression: c, Format: f, Width: w, Height: h - 2})
		require.NoError(t, err)
		if c == tiff.CompressionNone {
			got, err := d8.Decode(nil, stored)
			require.NoError(t, err)
			assert.Equal(t, raw[:(h-2)*w*4], got)
			continue
		}
		_, err = d8.DecodeRows(nil, stored, rows)
		assert.ErrorIs(t, err, ErrCorrupt, "compression %d", c)
		_, err = d8.Decode(nil, stored)
		assert.ErrorIs(t, err, ErrCorrupt, "compression %d", c)
	}
}

// TestDecodeRefusesBeforeAllocating: a stream of 1 KB for a block of
// 16384 x 16384 (256 MiB) is refused, by the largest expansion of its
// codec or by its JPEG frame header (missing, or a row too tall), before
// the block is allocated.
func TestDecodeRefusesBeforeAllocating(t *testing.T) {
	src := bytes.Repeat([]byte{0xff, 0xd8, 0x42, 0x00}, 256)
	for _, c := range []uint16{tiff.CompressionNone, tiff.CompressionLZW, tiff.CompressionDeflate, tiff.CompressionDeflateOld,
		tiff.CompressionZstd, tiff.CompressionPackBits, tiff.CompressionJPEG} {
		d, err := NewDecoder(BlockFormat{Compression: c, Format: Format{BitsPerSample: 8, SamplesPerPixel: 1}, Width: 16384, Height: 16384})
		require.NoError(t, err)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = d.Decode(nil, src)
		runtime.ReadMemStats(&after)
		assert.ErrorIs(t, err, ErrCorrupt, "compression %d", c)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "compression %d: %v", c, err)
	}
	// A JPEG frame header of the block's width and one row more than its
	// height is refused from the header alone too.
	d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionJPEG, Width: 16384, Height: 16384})
	require.NoError(t, err)
	tall := []byte{0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, 0x40, 0x01, 0x40, 0x00, 1, 1, 0x11, 0, 0xff, 0xd9}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = d.Decode(nil, tall)
	runtime.ReadMemStats(&after)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "JPEG frame of 16384 x 16385 in a block of 16384 x 16384")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "a frame one row taller than the block: %v", err)
}

// TestDecodePackBitsLargestExpansion: a PackBits stream of nothing but
// runs of 128 bytes, the codec's largest expansion (64 bytes a stored
// byte), decodes, however large its block: the bound that refuses streams
// too short for their block before allocating it lets it through.
func TestDecodePackBitsLargestExpansion(t *testing.T) {
	for _, side := range []int{16, 256, 512, 1024} {
		want := bytes.Repeat([]byte{0x5a}, side*side)
		stored := bytes.Repeat([]byte{0x81, 0x5a}, len(want)/128)
		d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionPackBits, Width: side, Height: side})
		require.NoError(t, err)
		got, err := d.Decode(nil, stored)
		require.NoError(t, err, "%d x %d from %d bytes", side, side, len(stored))
		assert.Equal(t, want, got, "%d x %d", side, side)
	}
}

// TestDecodeBilevelWidths decodes rows of 1-, 2- and 4-bit samples whose
// bits end in every position of their last byte, the rest of which is
// padding, and widths of a single sample.
func TestDecodeBilevelWidths(t *testing.T) {
	for _, tt := range []struct {
		bits, width int
		packed      []byte // two rows
		want        []byte
	}{
		{1, 1, []byte{0x80, 0x7f}, []byte{1, 0}},
		{1, 7, []byte{0b10101011, 0b01010101}, []byte{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}},
		{1, 9, []byte{0xff, 0x80, 0x55, 0x7f}, []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}},
		{1, 17, []byte{0x00, 0x00, 0x80, 0xff, 0xff, 0x7f}, append(append(make([]byte, 16), 1), append(bytes.Repeat([]byte{1}, 16), 0)...)},
		{2, 1, []byte{0xc0, 0x7f}, []byte{3, 1}},
		{2, 5, []byte{0b11100100, 0b01111111, 0b00011011, 0b10111111}, []byte{3, 2, 1, 0, 1, 0, 1, 2, 3, 2}},
		{4, 1, []byte{0xe0, 0x7f}, []byte{14, 7}},
		{4, 3, []byte{0x12, 0x3f, 0xab, 0xcf}, []byte{1, 2, 3, 10, 11, 12}},
	} {
		d, err := NewDecoder(BlockFormat{Format: Format{BitsPerSample: tt.bits}, Width: tt.width, Height: 2})
		require.NoError(t, err, "%d bits, %d wide", tt.bits, tt.width)
		got, err := d.Decode(nil, tt.packed)
		require.NoError(t, err, "%d bits, %d wide", tt.bits, tt.width)
		assert.Equal(t, tt.want, got, "%d bits, %d wide", tt.bits, tt.width)
	}
}

// TestDecodeIgnoredPredictors: a Predictor that libtiff ignores (any
// predictor on uncompressed and PackBits blocks, 1 on every codec, of
// whole-byte samples and of 1-bit ones) is accepted and leaves the
// samples as stored.
func TestDecodeIgnoredPredictors(t *testing.T) {
	stored := []byte{1, 2, 3, 4, 0x80, 0x7f, 0xff, 0x01}
	packBits := append([]byte{byte(len(stored) - 1)}, stored...)
	lzw := encoded(t, mustCodec(tiff.CompressionLZW, 0), stored)
	for _, tt := range []struct {
		name        string
		compression uint16
		predictor   uint16
		bits        int
		src, want   []byte
	}{
		{"horizontal, uncompressed", tiff.CompressionNone, tiff.PredictorHorizontal, 8, stored, stored},
		{"horizontal, PackBits", tiff.CompressionPackBits, tiff.PredictorHorizontal, 8, packBits, stored},
		{"floating point, PackBits", tiff.CompressionPackBits, tiff.PredictorFloatingPoint, 8, packBits, stored},
		{"none, LZW", tiff.CompressionLZW, tiff.PredictorNone, 8, lzw, stored},
		{"1 bit, horizontal, uncompressed", tiff.CompressionNone, tiff.PredictorHorizontal, 1, stored[:2], []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0}},
		{"1 bit, horizontal, PackBits", tiff.CompressionPackBits, tiff.PredictorHorizontal, 1, []byte{1, 1, 2}, []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0}},
		{"1 bit, none, LZW", tiff.CompressionLZW, tiff.PredictorNone, 1, encoded(t, mustCodec(tiff.CompressionLZW, 0), stored[:2]), []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDecoder(BlockFormat{Compression: tt.compression, Predictor: tt.predictor, Format: Format{BitsPerSample: tt.bits}, Width: len(tt.want) / 2, Height: 2})
			require.NoError(t, err)
			got, err := d.Decode(nil, tt.src)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestDecodeJPEGLastStripRows: a last strip of rows rows stored as a frame
// of every height from rows to the strips' height gives its first rows,
// a frame of one row more included.
func TestDecodeJPEGLastStripRows(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 16, 16))
	for i := range g.Pix {
		g.Pix[i] = byte(i * 3)
	}
	for _, tt := range []struct{ frame, rows int }{{16, 15}, {16, 8}, {9, 8}, {8, 7}, {2, 1}, {1, 1}} {
		var b bytes.Buffer
		require.NoError(t, jpeg.Encode(&b, g.SubImage(image.Rect(0, 0, 16, tt.frame)), &jpeg.Options{Quality: 100}))
		d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionJPEG, Width: 16, Height: 16})
		require.NoError(t, err)
		full, err := d.DecodeRows(nil, b.Bytes(), tt.frame)
		require.NoError(t, err, "frame of %d rows", tt.frame)
		got, err := d.DecodeRows(nil, b.Bytes(), tt.rows)
		require.NoError(t, err, "frame of %d rows for %d", tt.frame, tt.rows)
		assert.Equal(t, full[:tt.rows*16], got, "frame of %d rows for %d", tt.frame, tt.rows)
	}
}

// TestDecodeJPEGRGBCoded: a block of Photometric RGB is RGB-coded whatever
// its markers say: a stream without the Adobe marker, whose components
// image/jpeg then takes for YCbCr, decodes to its R, G and B unconverted.
func TestDecodeJPEGRGBCoded(t *testing.T) {
	const w, h = 16, 16
	src := testImage(w, h)
	raw := make([]byte, 0, w*h*3)
	for i := 0; i < len(src.Pix); i += 4 {
		raw = append(raw, src.Pix[i:i+3]...)
	}
	enc, err := NewJPEG(Format{SamplesPerPixel: 3}, w, JPEGOptions{Quality: 95, Color: JPEGRGB})
	require.NoError(t, err)
	withAdobe, err := enc.Encode(nil, raw)
	require.NoError(t, err)
	// Without APP14, and with components 1, 2, 3 instead of 'R', 'G', 'B'.
	require.Equal(t, []byte{0xff, jpegAPP14}, withAdobe[2:4])
	plain := append([]byte{0xff, 0xd8}, withAdobe[4+(int(withAdobe[4])<<8|int(withAdobe[5])):]...)
	plain = bytes.Replace(plain, []byte{'R', 0x11, 0, 'G', 0x11, 0, 'B', 0x11, 0}, []byte{1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0}, 1)
	plain = bytes.Replace(plain, []byte{3, 'R', 0, 'G', 0, 'B', 0}, []byte{3, 1, 0, 2, 0, 3, 0}, 1)
	require.NotContains(t, string(plain), "Adobe")
	d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionJPEG, Format: Format{SamplesPerPixel: 3}, Photometric: tiff.PhotometricRGB,
		Width: w, Height: h, JPEGTables: enc.Tables()})
	require.NoError(t, err)
	for name, stream := range map[string][]byte{"with the Adobe marker": withAdobe, "without": plain} {
		got, err := d.Decode(nil, stream)
		require.NoError(t, err, name)
		for i := range got {
			require.InDelta(t, int(raw[i]), int(got[i]), 12, "%s: pixel %d sample %d", name, i/3, i%3)
		}
	}
}

// TestToRGBNarrowChroma: chroma planes of 1 or 2 samples a row (blocks
// of up to 4 pixels, subsampled 2 across) are upsampled by repetition,
// both ways, as libjpeg does, not by its triangular filter: the same
// pixels as the block with its chroma repeated into a 4:4:4 image.
func TestToRGBNarrowChroma(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, ratio := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio422} {
		hs, vs := subsampling(ratio)
		for w := 1; w <= 4; w++ {
			for _, h := range []int{1, 2, 3, 4} {
				m := image.NewYCbCr(image.Rect(0, 0, w, h), ratio)
				for _, p := range [][]byte{m.Y, m.Cb, m.Cr} {
					for i := range p {
						p[i] = byte(r.Uint32())
					}
				}
				full := image.NewYCbCr(m.Rect, image.YCbCrSubsampleRatio444)
				copy(full.Y, m.Y)
				for y := range h {
					for x := range w {
						full.Cb[y*full.CStride+x] = m.Cb[y/vs*m.CStride+x/hs]
						full.Cr[y*full.CStride+x] = m.Cr[y/vs*m.CStride+x/hs]
					}
				}
				got, want := make([]byte, 3*w*h), make([]byte, 3*w*h)
				toRGB(got, m, true)
				toRGB(want, full, true)
				require.Equal(t, want, got, "%v, %d x %d", ratio, w, h)
			}
		}
	}
}

// lzwCodes packs 9-bit LZW codes most significant bit first, as TIFF's LZW
// stores the first 253 codes after a Clear.
func lzwCodes(codes ...int) []byte {
	var out []byte
	acc, n := uint32(0), 0
	for _, c := range codes {
		acc, n = acc<<9|uint32(c), n+9
		for ; n >= 8; n -= 8 {
			out = append(out, byte(acc>>(n-8)))
		}
	}
	if n > 0 {
		out = append(out, byte(acc<<(8-n)))
	}
	return out
}

// TestDecodeLZWAfterTheBlock: an LZW stream is read up to its end code
// even when its block is full: an invalid code or a literal after the
// block's bytes is ErrCorrupt, not a stream cut where the block ends. A
// stream without an end code decodes, as libtiff reads it.
func TestDecodeLZWAfterTheBlock(t *testing.T) {
	const clear, eoi = 256, 257
	for _, tt := range []struct {
		name   string
		stream []byte
		says   string // "" for the block's bytes, 0 and 1
	}{
		{"the block", lzwCodes(clear, 0, 1, eoi), ""},
		{"no end code", lzwCodes(clear, 0, 1), ""},
		{"a code not yet in the table after it", lzwCodes(clear, 0, 1, 300, eoi), "invalid code"},
		{"the largest 9-bit code after it", lzwCodes(clear, 0, 1, 511, eoi), "invalid code"},
		{"a literal after it", lzwCodes(clear, 0, 1, 2, eoi), "more than 2 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionLZW, Width: 2, Height: 1})
			require.NoError(t, err)
			got, err := d.Decode([]byte("x"), tt.stream)
			if tt.says == "" {
				require.NoError(t, err)
				assert.Equal(t, []byte{'x', 0, 1}, got)
				return
			}
			require.ErrorIs(t, err, ErrCorrupt)
			assert.ErrorContains(t, err, tt.says)
			assert.Equal(t, []byte("x"), got)
		})
	}
}
