package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/tiff"
)

// encodeAppending encodes tile with e after a prefix, checks that Encode
// appended to it and left tile alone, and returns the encoded tile.
func encodeAppending(t *testing.T, e Encoder, tile []byte) []byte {
	t.Helper()
	original := bytes.Clone(tile)
	prefix := []byte("prefix")
	encoded, err := e.Encode(bytes.Clone(prefix), tile)
	require.NoError(t, err)
	require.Equal(t, original, tile, "the caller's tile was modified")
	require.Equal(t, prefix, encoded[:len(prefix)], "Encode must append to dst")
	return encoded[len(prefix):]
}

// roundTrip encodes tile with e, decodes it independently and checks that
// the result equals tile, and that tile was not modified.
func roundTrip(t *testing.T, e *TileEncoder, tile []byte) {
	t.Helper()
	encoded := encodeAppending(t, e, tile)
	codec := e.Codec
	if codec == nil {
		codec = noneCodec{}
	}
	decoded, err := decode(codec.Compression(), encoded)
	require.NoError(t, err)
	unpredict(decoded, e.Predictor, e.Format, e.Width)
	require.True(t, bytes.Equal(tile, decoded), "round trip differs (%d bytes in, %d out)", len(tile), len(decoded))
}

func TestRoundTrip(t *testing.T) {
	shapes := []struct{ w, h int }{{16, 16}, {256, 1}, {64, 64}}
	orders := []binary.ByteOrder{nil, binary.BigEndian}
	r := rand.New(rand.NewPCG(1, 2))
	for _, codec := range testCodecs() {
		for _, st := range sampleTypes {
			for _, spp := range []int{1, 3} {
				for _, order := range orders {
					f := st.format
					f.SamplesPerPixel, f.ByteOrder = spp, order
					for _, predictor := range predictorsFor(codec, f) {
						for _, shape := range shapes {
							for _, filler := range fillers {
								name := fmt.Sprintf("%s/%s/spp=%d/big=%t/predictor=%d/%dx%d/%s",
									codecName(codec), st.name, spp, order != nil, predictor, shape.w, shape.h, filler.name)
								t.Run(name, func(t *testing.T) {
									e := &TileEncoder{Codec: codec, Predictor: predictor, Format: f, Width: shape.w}
									tile := make([]byte, shape.w*shape.h*spp*f.BitsPerSample/8)
									filler.fill(tile, r)
									roundTrip(t, e, tile)
								})
							}
						}
					}
				}
			}
		}
	}
}

// TestRoundTripLargeTiles covers 1024x1024 tiles: random data fills and
// resets the LZW code table hundreds of times.
func TestRoundTripLargeTiles(t *testing.T) {
	if testing.Short() {
		t.Skip("large tiles")
	}
	r := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name      string
		format    Format
		predictor uint16
	}{
		{"uint16", Format{BitsPerSample: 16}, tiff.PredictorHorizontal},
		{"rgb8", Format{SamplesPerPixel: 3}, tiff.PredictorHorizontal},
		{"float32", Format{BitsPerSample: 32, Float: true, ByteOrder: binary.BigEndian}, tiff.PredictorFloatingPoint},
	}
	for _, codec := range []Codec{lzwCodec{}, mustCodec(tiff.CompressionDeflate, 0), mustCodec(tiff.CompressionZstd, 0)} {
		for _, c := range cases {
			for _, filler := range fillers {
				t.Run(fmt.Sprintf("%s/%s/%s", codecName(codec), c.name, filler.name), func(t *testing.T) {
					e := &TileEncoder{Codec: codec, Predictor: c.predictor, Format: c.format, Width: 1024}
					l, err := c.format.layout()
					require.NoError(t, err)
					tile := make([]byte, 1024*1024*l.pixelBytes())
					filler.fill(tile, r)
					roundTrip(t, e, tile)
				})
			}
		}
	}
}

// TestPredictorKnownValues pins the predictors to hand-computed residuals.
func TestPredictorKnownValues(t *testing.T) {
	cases := []struct {
		name      string
		format    Format
		predictor uint16
		width     int
		in, want  []byte
	}{
		{"uint8 rgb", Format{SamplesPerPixel: 3}, tiff.PredictorHorizontal, 2,
			[]byte{10, 20, 30, 11, 18, 255}, []byte{10, 20, 30, 1, 254, 225}},
		{"uint16 little endian", Format{BitsPerSample: 16}, tiff.PredictorHorizontal, 3,
			[]byte{0x00, 0x01, 0x01, 0x01, 0x00, 0x00}, []byte{0x00, 0x01, 0x01, 0x00, 0xff, 0xfe}},
		{"uint16 big endian", Format{BitsPerSample: 16, ByteOrder: binary.BigEndian}, tiff.PredictorHorizontal, 3,
			[]byte{0x01, 0x00, 0x01, 0x01, 0x00, 0x00}, []byte{0x01, 0x00, 0x00, 0x01, 0xfe, 0xff}},
		{"uint32 two rows", Format{BitsPerSample: 32}, tiff.PredictorHorizontal, 2,
			[]byte{1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 7, 0, 0, 0}, []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 5, 0, 0, 0, 2, 0, 0, 0}},
		{"float32 little endian", Format{BitsPerSample: 32, Float: true}, tiff.PredictorFloatingPoint, 2,
			// 1.0 = 3f800000, 2.0 = 40000000: planes 3f 40 | 80 00 | 00 00 | 00 00
			[]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40},
			[]byte{0x3f, 0x01, 0x40, 0x80, 0x00, 0x00, 0x00, 0x00}},
		{"float32 big endian", Format{BitsPerSample: 32, Float: true, ByteOrder: binary.BigEndian}, tiff.PredictorFloatingPoint, 2,
			[]byte{0x3f, 0x80, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00},
			[]byte{0x3f, 0x01, 0x40, 0x80, 0x00, 0x00, 0x00, 0x00}},
		{"float32 two samples", Format{BitsPerSample: 32, Float: true, SamplesPerPixel: 2}, tiff.PredictorFloatingPoint, 1,
			// planes 3f 40 | 80 00 | ...: differences two bytes apart
			[]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40},
			[]byte{0x3f, 0x40, 0x41, 0xc0, 0x80, 0x00, 0x00, 0x00}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &TileEncoder{Codec: passThrough{}, Predictor: c.predictor, Format: c.format, Width: c.width}
			got, err := e.Encode(nil, c.in)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestTileEncoderErrors(t *testing.T) {
	cases := []struct {
		name    string
		encoder TileEncoder
		tile    int
		want    error
	}{
		{"12 bits", TileEncoder{Format: Format{BitsPerSample: 12}}, 4, ErrFormat},
		{"24 bits", TileEncoder{Format: Format{BitsPerSample: 24}}, 6, ErrFormat},
		{"negative bits", TileEncoder{Format: Format{BitsPerSample: -8}}, 4, ErrFormat},
		{"8-bit float", TileEncoder{Format: Format{BitsPerSample: 8, Float: true}}, 4, ErrFormat},
		{"negative samples", TileEncoder{Format: Format{SamplesPerPixel: -1}}, 4, ErrFormat},
		{"too many samples", TileEncoder{Format: Format{SamplesPerPixel: 1 << 16}}, 4, ErrFormat},
		{"negative width", TileEncoder{Width: -1}, 4, ErrFormat},
		{"predictor without width", TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorHorizontal}, 4, ErrFormat},
		{"horizontal on floats", TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorHorizontal, Format: Format{BitsPerSample: 32, Float: true}, Width: 1}, 4, ErrPredictor},
		{"floating point on ints", TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorFloatingPoint, Format: Format{BitsPerSample: 32}, Width: 1}, 4, ErrPredictor},
		{"floating point on float16", TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorFloatingPoint, Format: Format{BitsPerSample: 16, Float: true}, Width: 1}, 4, ErrPredictor},
		{"unknown predictor", TileEncoder{Codec: lzwCodec{}, Predictor: 4, Width: 1}, 4, ErrPredictor},
		{"predictor without compression", TileEncoder{Predictor: tiff.PredictorHorizontal, Format: Format{BitsPerSample: 16}, Width: 1}, 2, ErrPredictor},
		{"predictor on JPEG", TileEncoder{Codec: mustJPEG(), Predictor: tiff.PredictorHorizontal, Width: 8}, 64, ErrPredictor},
		{"partial row", TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorHorizontal, Format: Format{BitsPerSample: 16}, Width: 3}, 8, ErrTileSize},
		{"partial pixel", TileEncoder{Format: Format{BitsPerSample: 16, SamplesPerPixel: 3}}, 7, ErrTileSize},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.encoder.Encode(nil, make([]byte, c.tile))
			assert.ErrorIs(t, err, c.want)
			assert.Contains(t, err.Error(), "compress: ")
		})
	}
}

func TestValidate(t *testing.T) {
	assert.NoError(t, (&TileEncoder{}).Validate())
	assert.NoError(t, (&TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorHorizontal, Format: Format{BitsPerSample: 16}, Width: 256}).Validate())
	assert.ErrorIs(t, (&TileEncoder{Predictor: 9, Width: 1}).Validate(), ErrPredictor)
}

func TestNewCodec(t *testing.T) {
	for _, c := range []struct {
		compression uint16
		levels      []int // accepted
		bad         []int
		name        string // of the codec at level 0
	}{
		{tiff.CompressionNone, []int{0}, []int{-1, 1}, "None"},
		{tiff.CompressionLZW, []int{0}, []int{-1, 1, 9}, "LZW"},
		{tiff.CompressionDeflate, []int{0, 1, 9}, []int{-1, 10}, "Deflate3"},
		{tiff.CompressionZstd, []int{0, 1, 22}, []int{-1, 23}, "Zstd3"},
	} {
		for _, level := range c.levels {
			codec, err := NewCodec(c.compression, level)
			require.NoError(t, err, "compression %d level %d", c.compression, level)
			assert.Equal(t, c.compression, codec.Compression())
			if level == 0 {
				assert.Equal(t, c.name, codecName(codec), "the default level")
			}
		}
		for _, level := range c.bad {
			_, err := NewCodec(c.compression, level)
			assert.ErrorIs(t, err, ErrLevel, "compression %d level %d", c.compression, level)
			assert.Equal(t, 1, strings.Count(err.Error(), "compress:"), "one prefix: %v", err)
		}
	}
	for _, compression := range []uint16{0, tiff.CompressionJPEG, tiff.CompressionPackBits, tiff.CompressionDeflateOld} {
		_, err := NewCodec(compression, 0)
		assert.ErrorIs(t, err, ErrCompression, "compression %d", compression)
	}
}

// TestEmptyTile checks that every codec encodes an empty tile as a valid,
// empty stream, which CheckFraming passes.
func TestEmptyTile(t *testing.T) {
	for _, codec := range testCodecs() {
		t.Run(codecName(codec), func(t *testing.T) {
			roundTrip(t, &TileEncoder{Codec: codec}, []byte{})
			// And framed as the codec's streams are: an empty zlib stream,
			// a Zstandard frame, Clear and the end code.
			out, err := codec.Encode(nil, nil)
			require.NoError(t, err)
			assert.NoError(t, CheckFraming(codec.Compression(), out))
		})
	}
}

// TestCodecsStartNoGoroutines makes and uses every codec in a synctest
// bubble, which fails the test if a goroutine is left blocked at its end.
func TestCodecsStartNoGoroutines(t *testing.T) {
	tile := slideTiles(1, 64)[0]
	synctest.Test(t, func(t *testing.T) {
		for _, codec := range testCodecs() {
			_, err := codec.Encode(nil, tile)
			require.NoError(t, err)
		}
	})
}

// TestConcurrentUse runs one encoder per codec from several goroutines and
// checks every result against a sequential encoding.
func TestConcurrentUse(t *testing.T) {
	tiles := slideTiles(8, 64)
	for _, codec := range testCodecs() {
		predictor := predictorsFor(codec, Format{BitsPerSample: 16})
		e := &TileEncoder{Codec: codec, Predictor: predictor[len(predictor)-1], Format: Format{BitsPerSample: 16}, Width: 64}
		want := make([][]byte, len(tiles))
		for i, tile := range tiles {
			var err error
			want[i], err = e.Encode(nil, tile)
			require.NoError(t, err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				for round := range 5 {
					for i, tile := range tiles {
						got, err := e.Encode(nil, tile)
						if err == nil && !bytes.Equal(got, want[i]) {
							err = fmt.Errorf("%s round %d tile %d differs", codecName(codec), round, i)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// FuzzTileEncoder encodes arbitrary data in arbitrary formats: the result
// is either one of the package's errors or a stream that decodes back to
// the data.
func FuzzTileEncoder(f *testing.F) {
	f.Add([]byte("hello, tiff"), uint8(8), uint8(1), false, false, uint8(2), uint16(11), uint8(1))
	f.Add(bytes.Repeat([]byte{1, 2, 3, 4}, 64), uint8(32), uint8(2), true, true, uint8(3), uint16(8), uint8(2))
	f.Add(bytes.Repeat([]byte{9, 8}, 300), uint8(16), uint8(3), false, true, uint8(2), uint16(100), uint8(3))
	codecs := testCodecs()
	f.Fuzz(func(t *testing.T, data []byte, bits, spp uint8, float, big bool, predictor uint8, width uint16, codec uint8) {
		format := Format{BitsPerSample: int(bits), SamplesPerPixel: int(spp), Float: float}
		if big {
			format.ByteOrder = binary.BigEndian
		}
		e := &TileEncoder{Codec: codecs[int(codec)%len(codecs)], Predictor: uint16(predictor), Format: format, Width: int(width)}
		encoded, err := e.Encode(nil, data)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrPredictor) && !errors.Is(err, ErrTileSize) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		decoded, err := decode(e.Codec.Compression(), encoded)
		if err != nil {
			t.Fatalf("decoding: %v", err)
		}
		unpredict(decoded, e.Predictor, e.Format, e.Width)
		if !bytes.Equal(decoded, data) {
			t.Fatalf("round trip differs")
		}
	})
}

// passThrough is a codec that claims a compression but stores tiles
// unchanged, so tests can see what the predictor made of them.
type passThrough struct{}

func (passThrough) Compression() uint16 { return tiff.CompressionDeflate }

func (passThrough) Encode(dst, src []byte) ([]byte, error) { return append(dst, src...), nil }

// TestHorizontalEveryWidth checks predictor 2 on rows of every width up to
// 19 pixels against the specification's undoing (unpredict): the word-wise
// subtraction of 8- and 16-bit samples and its sample-wise tail must meet
// at every offset, for every pixel size and byte order.
func TestHorizontalEveryWidth(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, bits := range []int{8, 16, 32, 64} {
		for spp := 1; spp <= 4; spp++ {
			for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
				f := Format{BitsPerSample: bits, SamplesPerPixel: spp, ByteOrder: order}
				l, err := f.layout()
				require.NoError(t, err)
				predict := l.horizontal()
				for width := 1; width <= 19; width++ {
					row := make([]byte, width*l.pixelBytes())
					for i := range row {
						row[i] = byte(r.Uint32())
					}
					got := make([]byte, len(row))
					predict(got, row, l)
					unpredict(got, tiff.PredictorHorizontal, f, width)
					require.Equal(t, row, got, "%d bits, %d samples, %v, width %d", bits, spp, order, width)
				}
			}
		}
	}
}

// mustJPEG is a JPEG encoder of 8 x 8 gray tiles.
func mustJPEG() *JPEG {
	j, err := NewJPEG(Format{}, 8, JPEGOptions{})
	if err != nil {
		panic(err)
	}
	return j
}

// TestValidateBounds: the settings at the limits of the TIFF fields are
// valid, and a predictor is refused on tiles stored unchanged, by a nil
// codec or by NewCodec's None.
func TestValidateBounds(t *testing.T) {
	for _, tt := range []struct {
		name    string
		encoder TileEncoder
		want    error
	}{
		{"65535 samples a pixel", TileEncoder{Format: Format{SamplesPerPixel: maxSamplesPerPixel}}, nil},
		{"65535 samples a pixel, predicted", TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorHorizontal, Format: Format{SamplesPerPixel: maxSamplesPerPixel}, Width: 1}, nil},
		{"65536 samples a pixel", TileEncoder{Format: Format{SamplesPerPixel: maxSamplesPerPixel + 1}}, ErrFormat},
		{"a width of 2^32 - 1", TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorHorizontal, Width: maxWidth}, nil},
		{"a width of 2^32", TileEncoder{Codec: lzwCodec{}, Predictor: tiff.PredictorHorizontal, Width: maxWidth + 1}, ErrFormat},
		{"a predictor with no codec", TileEncoder{Predictor: tiff.PredictorHorizontal, Width: 1}, ErrPredictor},
		{"a predictor with None", TileEncoder{Codec: mustCodec(tiff.CompressionNone, 0), Predictor: tiff.PredictorHorizontal, Width: 1}, ErrPredictor},
		{"a float predictor with None", TileEncoder{Codec: mustCodec(tiff.CompressionNone, 0), Predictor: tiff.PredictorFloatingPoint, Format: Format{BitsPerSample: 32, Float: true}, Width: 1}, ErrPredictor},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.encoder.Validate()
			if tt.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.want)
			}
		})
	}
	// The decoder takes as many samples.
	_, err := NewDecoder(BlockFormat{Format: Format{SamplesPerPixel: maxSamplesPerPixel}, Width: 1, Height: 1})
	assert.NoError(t, err)
}

// TestTileEncoderGrowingTiles predicts tiles one byte longer each time,
// with one goroutine, so that each borrows the pooled scratch buffer the
// one before returned, a byte too short for it: each is the horizontal
// difference of its row.
func TestTileEncoderGrowingTiles(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    Format
	}{
		{"8-bit", Format{}},
		{"16-bit", Format{BitsPerSample: 16}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := max(tt.f.BitsPerSample/8, 1)
			for width := 1; width <= 300; width++ {
				src := make([]byte, width*n)
				for i := range src {
					src[i] = byte(i*i + width)
				}
				e := &TileEncoder{Codec: passThrough{}, Predictor: tiff.PredictorHorizontal, Format: tt.f, Width: width}
				got, err := e.Encode(nil, src)
				require.NoError(t, err, "width %d", width)
				unpredict(got, tiff.PredictorHorizontal, tt.f, width)
				require.Equal(t, src, got, "width %d", width)
			}
		})
	}
}
