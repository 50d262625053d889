package compress

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/image/tiff/lzw"

	"github.com/ometiff-go/ometiff/tiff"
)

// decode decompresses b with an implementation independent of the
// encoders under test: golang.org/x/image/tiff/lzw (which implements TIFF's
// early change), the standard library's compress/zlib, and the klauspost
// zstd decoder.
func decode(compression uint16, b []byte) ([]byte, error) {
	switch compression {
	case tiff.CompressionNone:
		return bytes.Clone(b), nil
	case tiff.CompressionLZW:
		r := lzw.NewReader(bytes.NewReader(b), lzw.MSB, 8)
		defer r.Close()
		return io.ReadAll(r)
	case tiff.CompressionDeflate:
		r, err := zlib.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(r)
	case tiff.CompressionZstd:
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return d.DecodeAll(b, nil)
	}
	return nil, fmt.Errorf("no decoder for compression %d", compression)
}

// unpredict undoes predictor p on a decoded tile in place, written plainly
// from the specifications (TIFF 6.0 Section 14; Adobe Photoshop TIFF
// Technical Note 3) rather than mirroring the encoder's code.
func unpredict(tile []byte, p uint16, f Format, width int) {
	bytesPerSample := max(f.BitsPerSample, 8) / 8
	spp := max(f.SamplesPerPixel, 1)
	samplesPerRow := width * spp
	rowBytes := samplesPerRow * bytesPerSample
	if rowBytes == 0 {
		return
	}
	for start := 0; start+rowBytes <= len(tile); start += rowBytes {
		row := tile[start : start+rowBytes]
		switch p {
		case tiff.PredictorHorizontal:
			mask := ^uint64(0) >> (64 - 8*bytesPerSample)
			for s := spp; s < samplesPerRow; s++ {
				sum := readSample(row, s, bytesPerSample, f.ByteOrder) + readSample(row, s-spp, bytesPerSample, f.ByteOrder)
				writeSample(row, s, bytesPerSample, f.ByteOrder, sum&mask)
			}
		case tiff.PredictorFloatingPoint:
			for i := spp; i < len(row); i++ {
				row[i] += row[i-spp]
			}
			planes := bytes.Clone(row)
			for s := range samplesPerRow {
				var v uint64
				for plane := range bytesPerSample { // most significant first
					v = v<<8 | uint64(planes[plane*samplesPerRow+s])
				}
				writeSample(row, s, bytesPerSample, f.ByteOrder, v)
			}
		}
	}
}

// readSample returns sample s of row, of n bytes in byte order o (nil:
// little endian).
func readSample(row []byte, s, n int, o binary.ByteOrder) uint64 {
	var v uint64
	for k := range n {
		b := uint64(row[s*n+k])
		if o == binary.BigEndian {
			v = v<<8 | b
		} else {
			v |= b << (8 * k)
		}
	}
	return v
}

// writeSample stores v as sample s of row, of n bytes in byte order o.
func writeSample(row []byte, s, n int, o binary.ByteOrder, v uint64) {
	for k := range n {
		shift := 8 * k
		if o == binary.BigEndian {
			shift = 8 * (n - 1 - k)
		}
		row[s*n+k] = byte(v >> shift)
	}
}

// Tile contents of the round-trip tests.
var fillers = []struct {
	name string
	fill func(b []byte, r *rand.Rand)
}{
	{"random", func(b []byte, r *rand.Rand) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}},
	{"constant", func(b []byte, _ *rand.Rand) {
		for i := range b {
			b[i] = 0x5a
		}
	}},
	{"smooth", func(b []byte, r *rand.Rand) { // a slow ramp with a little noise
		for i := range b {
			b[i] = byte(i/97 + int(r.Uint32()%3))
		}
	}},
}

// sampleTypes are the pixel types of the round-trip tests.
var sampleTypes = []struct {
	name   string
	format Format
}{
	{"uint8", Format{BitsPerSample: 8}},
	{"int8", Format{BitsPerSample: 8}},
	{"uint16", Format{BitsPerSample: 16}},
	{"int16", Format{BitsPerSample: 16}},
	{"uint32", Format{BitsPerSample: 32}},
	{"int32", Format{BitsPerSample: 32}},
	{"uint64", Format{BitsPerSample: 64}},
	{"float32", Format{BitsPerSample: 32, Float: true}},
	{"float64", Format{BitsPerSample: 64, Float: true}},
}

// testCodecs returns every codec at its default and at a non-default level.
func testCodecs() []Codec {
	deflate9, err := NewCodec(tiff.CompressionDeflate, 9)
	if err != nil {
		panic(err)
	}
	zstd19, err := NewCodec(tiff.CompressionZstd, 19)
	if err != nil {
		panic(err)
	}
	return []Codec{noneCodec{}, lzwCodec{}, mustCodec(tiff.CompressionDeflate, 0), deflate9, mustCodec(tiff.CompressionZstd, 0), zstd19}
}

// mustCodec returns NewCodec(compression, level), which must succeed.
func mustCodec(compression uint16, level int) Codec {
	c, err := NewCodec(compression, level)
	if err != nil {
		panic(err)
	}
	return c
}

// codecName names a codec in subtest names.
func codecName(c Codec) string {
	switch c := c.(type) {
	case noneCodec:
		return "None"
	case lzwCodec:
		return "LZW"
	case *deflateCodec:
		return fmt.Sprintf("Deflate%d", c.level)
	case *zstdCodec:
		return fmt.Sprintf("Zstd%d", c.level)
	}
	return fmt.Sprintf("%T", c)
}

// predictorsFor returns the predictors that apply to f compressed by c:
// none without compression.
func predictorsFor(c Codec, f Format) []uint16 {
	switch {
	case c.Compression() == tiff.CompressionNone:
		return []uint16{tiff.PredictorNone}
	case f.Float:
		return []uint16{tiff.PredictorNone, tiff.PredictorFloatingPoint}
	}
	return []uint16{tiff.PredictorNone, tiff.PredictorHorizontal}
}
