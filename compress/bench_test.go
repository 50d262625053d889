package compress

import (
	"bytes"
	stdzlib "compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/hhrutter/lzw"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/synth"
	"github.com/ometiff-go/ometiff/tiff"
)

// slideTiles returns n tiles of size x size pixels of the slide workload
// (one 8192 x 8192 uint16 plane, as examples/slide writes it),
// little-endian, spread over the plane so that background, tissue and
// nuclei are all represented.
func slideTiles(n, size int) [][]byte {
	tiles := make([][]byte, n)
	px := make([]uint16, size*size)
	perRow := 8192 / size
	for i := range tiles {
		k := (i * 7919) % (perRow * perRow) // a stride coprime with the grid
		synth.Pattern{Seed: 1}.Gray16(px, k%perRow*size, k/perRow*size, size, size)
		tiles[i] = make([]byte, 0, 2*len(px))
		for _, v := range px {
			tiles[i] = binary.LittleEndian.AppendUint16(tiles[i], v)
		}
	}
	return tiles
}

// benchCodecs are the codecs of the benchmarks, by name.
func benchCodecs(b *testing.B) []struct {
	name  string
	codec Codec
} {
	deflate6, err := NewCodec(tiff.CompressionDeflate, 6)
	require.NoError(b, err)
	return []struct {
		name  string
		codec Codec
	}{
		{"None", noneCodec{}},
		{"LZW", lzwCodec{}},
		{"Deflate3", mustCodec(tiff.CompressionDeflate, 0)},
		{"Deflate6", deflate6},
		{"Zstd", mustCodec(tiff.CompressionZstd, 0)},
	}
}

// BenchmarkTileEncoder encodes 256x256 uint16 slide tiles with each codec,
// with and without the horizontal predictor, and reports the compression
// ratio.
func BenchmarkTileEncoder(b *testing.B) {
	tiles := slideTiles(32, 256)
	for _, c := range benchCodecs(b) {
		for _, predictor := range predictorsFor(c.codec, Format{BitsPerSample: 16}) {
			b.Run(fmt.Sprintf("%s/predictor=%d", c.name, predictor), func(b *testing.B) {
				enc := &TileEncoder{Codec: c.codec, Predictor: predictor, Format: Format{BitsPerSample: 16}, Width: 256}
				benchmarkEncoder(b, enc, tiles)
			})
		}
	}
}

// BenchmarkFloatPredictor encodes float32 tiles made from the slide with
// the floating-point predictor and LZW.
func BenchmarkFloatPredictor(b *testing.B) {
	tiles := slideTiles(8, 256)
	for i, t := range tiles {
		f := make([]byte, 0, 2*len(t))
		for k := 0; k < len(t); k += 2 {
			f = binary.LittleEndian.AppendUint32(f, float32bits(float32(binary.LittleEndian.Uint16(t[k:]))/4096))
		}
		tiles[i] = f
	}
	enc := &TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorFloatingPoint, Format: Format{BitsPerSample: 32, Float: true}, Width: 256}
	benchmarkEncoder(b, enc, tiles)
}

func benchmarkEncoder(b *testing.B, enc Encoder, tiles [][]byte) {
	var dst []byte
	var in, out int64
	b.SetBytes(int64(len(tiles[0])))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		var err error
		t := tiles[i%len(tiles)]
		dst, err = enc.Encode(dst[:0], t)
		if err != nil {
			b.Fatal(err)
		}
		in += int64(len(t))
		out += int64(len(dst))
		i++
	}
	b.ReportMetric(float64(in)/float64(out), "ratio")
}

// BenchmarkLZWBareLoop is the reference the LZW codec is held to: a bare
// loop over github.com/hhrutter/lzw writing into a bytes.Buffer (wrapped in
// a bufio.Writer by the library), after horizontal differencing.
func BenchmarkLZWBareLoop(b *testing.B) {
	tiles := slideTiles(32, 256)
	predicted := make([]byte, len(tiles[0]))
	var buf bytes.Buffer
	b.SetBytes(int64(len(tiles[0])))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t := tiles[i%len(tiles)]
		for row := 0; row < len(t); row += 512 {
			diff16LE(predicted[row:row+512], t[row:row+512], layout{sampleBytes: 2, samples: 1})
		}
		buf.Reset()
		w := lzw.NewWriter(&buf, true)
		if _, err := w.Write(predicted); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPipeline runs LZW with the horizontal predictor over 8 MiB of
// slide tiles per operation at 1 and 2 workers, for big and small tiles.
func BenchmarkPipeline(b *testing.B) {
	const total = 8 << 20
	for _, size := range []int{256, 128, 16} {
		tiles := slideTiles(64, size)
		enc := &TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorHorizontal, Format: Format{BitsPerSample: 16}, Width: size}
		count := total / len(tiles[0])
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dx%d/workers=%d", size, size, workers), func(b *testing.B) {
				b.SetBytes(total)
				b.ReportAllocs()
				for b.Loop() {
					p := NewPipeline(context.Background(), Options{Workers: workers}, nil)
					for i := range count {
						t := tiles[i%len(tiles)]
						buf := p.Buffer(len(t))
						copy(buf, t)
						if err := p.Submit(enc, buf); err != nil {
							b.Fatal(err)
						}
					}
					if err := p.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func float32bits(f float32) uint32 { return math.Float32bits(f) }

// predictedSlideTiles returns 256x256 slide tiles after the horizontal
// predictor, as the codecs see them.
func predictedSlideTiles(b *testing.B) [][]byte {
	tiles := slideTiles(32, 256)
	for i, t := range tiles {
		var err error
		tiles[i], err = (&TileEncoder{Codec: passThrough{}, Predictor: tiff.PredictorHorizontal, Format: Format{BitsPerSample: 16}, Width: 256}).Encode(nil, t)
		require.NoError(b, err)
	}
	return tiles
}

// BenchmarkDeflateLevels measures every Deflate level on predicted slide
// tiles, and the standard library's compress/zlib for comparison: the
// figures behind deflateDefault.
func BenchmarkDeflateLevels(b *testing.B) {
	tiles := predictedSlideTiles(b)
	for level := 1; level <= deflateMax; level++ {
		d, err := NewCodec(tiff.CompressionDeflate, level)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("klauspost/%d", level), func(b *testing.B) { benchmarkEncoder(b, d, tiles) })
	}
	for _, level := range []int{1, 6} {
		b.Run(fmt.Sprintf("stdlib/%d", level), func(b *testing.B) {
			benchmarkEncoder(b, &stdlibDeflate{level: level}, tiles)
		})
	}
}

// stdlibDeflate is a Deflate codec over the standard library's zlib, for
// comparison only.
type stdlibDeflate struct {
	level int
	out   sink
	w     *stdzlib.Writer
}

func (s *stdlibDeflate) Encode(dst, src []byte) ([]byte, error) {
	s.out.buf = dst
	if s.w == nil {
		var err error
		if s.w, err = stdzlib.NewWriterLevel(&s.out, s.level); err != nil {
			return dst, err
		}
	} else {
		s.w.Reset(&s.out)
	}
	if _, err := s.w.Write(src); err != nil {
		return dst, err
	}
	err := s.w.Close()
	return s.out.take(), err
}

// BenchmarkZstdLevels measures representative zstd levels, one per speed
// of the encoder, on predicted slide tiles.
func BenchmarkZstdLevels(b *testing.B) {
	tiles := predictedSlideTiles(b)
	for _, level := range []int{1, 3, 6, 10} {
		z, err := NewCodec(tiff.CompressionZstd, level)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("%d", level), func(b *testing.B) { benchmarkEncoder(b, z, tiles) })
	}
}

// BenchmarkHorizontal applies predictor 2 alone to the slide's tiles, as
// 16-bit samples and as 8-bit RGB.
func BenchmarkHorizontal(b *testing.B) {
	tiles := slideTiles(8, 256)
	for _, c := range []struct {
		name   string
		format Format
		width  int
	}{
		{"uint16", Format{BitsPerSample: 16}, 256},
		{"uint16 big endian", Format{BitsPerSample: 16, ByteOrder: binary.BigEndian}, 256},
		{"rgb8", Format{SamplesPerPixel: 3}, 256 * 2 / 3},
	} {
		b.Run(c.name, func(b *testing.B) {
			l, err := c.format.layout()
			if err != nil {
				b.Fatal(err)
			}
			predict := l.horizontal()
			rowBytes := c.width * l.pixelBytes()
			dst := make([]byte, len(tiles[0]))
			b.SetBytes(int64(len(tiles[0]) / rowBytes * rowBytes))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				src := tiles[i%len(tiles)]
				for row := 0; row+rowBytes <= len(src); row += rowBytes {
					predict(dst[row:row+rowBytes], src[row:row+rowBytes], l)
				}
				i++
			}
		})
	}
}
