package pyramid

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/iohandle"
)

// TestWriteSamplesEveryType writes a plane of every sample type with
// WriteSamples, and streams it through a SampleWriter in bands that end
// inside rows: both files equal the one WritePlane writes from the bytes.
func TestWriteSamplesEveryType(t *testing.T) {
	checkType[uint8](t)
	checkType[int8](t)
	checkType[uint16](t)
	checkType[int16](t)
	checkType[uint32](t)
	checkType[int32](t)
	checkType[float32](t)
	checkType[float64](t)
}

func checkType[T Sample](t *testing.T) {
	pt := PixelTypeOf[T]()
	t.Run(pt.String(), func(t *testing.T) {
		const w, h = 37, 29
		spec := ImageSpec{SizeX: w, SizeY: h, SizeZ: 2, PixelType: pt}
		planes := [][]byte{randomPlane(w, h, 1, pt, 1, false).pix, randomPlane(w, h, 1, pt, 2, false).pix}
		opts := Options{TileSize: 16, Compression: Zstd}
		write := func(plane func(im *Image, z int, pix []byte) error) []byte {
			return writeMemory(t, opts, func(wr *Writer) error {
				im, err := wr.AddImage(spec)
				if err != nil {
					return err
				}
				for z, pix := range planes {
					if err := plane(im, z, pix); err != nil {
						return err
					}
				}
				return nil
			})
		}
		want := write(func(im *Image, z int, pix []byte) error { return im.WritePlane(z, 0, 0, pix) })
		whole := write(func(im *Image, z int, pix []byte) error { return WriteSamples(im, z, 0, 0, typed[T](pix)) })
		assert.True(t, bytes.Equal(want, whole), "WriteSamples")
		streamed := write(func(im *Image, z int, pix []byte) error {
			pw, err := im.Plane(z, 0, 0)
			if err != nil {
				return err
			}
			return streamSamples(pw, typed[T](pix), 50*pt.Size(), false)
		})
		assert.True(t, bytes.Equal(want, streamed), "SampleWriter")
	})
}

// TestSamplesOfAnotherType: samples whose type is not the image's, or of
// the wrong count, are ErrData naming both types, and take nothing.
func TestSamplesOfAnotherType(t *testing.T) {
	tests := []struct {
		name  string
		pt    PixelType
		write func(im *Image) error
		text  string
	}{
		{"int16 for uint16", Uint16, func(im *Image) error { return WriteSamples(im, 0, 0, 0, make([]int16, 64)) }, "[]int16 samples for an image of uint16 samples"},
		{"float32 for float64", Float64, func(im *Image) error { return WriteSamples(im, 0, 0, 0, make([]float32, 64)) }, "[]float32 samples for an image of float64 samples"},
		{"uint8 for int8", Int8, func(im *Image) error { return WriteSamples(im, 0, 0, 0, make([]uint8, 64)) }, "[]uint8 samples for an image of int8 samples"},
		{"uint32 for int32, streamed", Int32, func(im *Image) error {
			pw, err := im.Plane(0, 0, 0)
			if err != nil {
				return err
			}
			_, err = NewSampleWriter[uint32](pw)
			return err
		}, "[]uint32 samples for an image of int32 samples"},
		{"too few samples", Uint16, func(im *Image) error { return WriteSamples(im, 0, 0, 0, make([]uint16, 63)) }, "126 bytes for a plane of 128"},
		{"too many samples, streamed", Float32, func(im *Image) error {
			pw, err := im.Plane(0, 0, 0)
			if err != nil {
				return err
			}
			sw, err := NewSampleWriter[float32](pw)
			if err != nil {
				return err
			}
			n, err := sw.Write(make([]float32, 65))
			if n != 0 {
				t.Errorf("took %d samples", n)
			}
			return err
		}, "4 bytes past the end of the plane"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := New(iohandle.NewMemory(), Options{})
			require.NoError(t, err)
			im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 8, PixelType: tc.pt})
			require.NoError(t, err)
			err = tc.write(im)
			require.ErrorIs(t, err, ErrData)
			assert.ErrorContains(t, err, tc.text)
			require.NoError(t, w.Abort())
		})
	}
}

// TestSampleBytesShareMemory: typed samples reach the writer as their own
// memory, not a copy.
func TestSampleBytesShareMemory(t *testing.T) {
	s := []float64{1, 2.5, -3}
	b := sampleBytes(s)
	require.Len(t, b, 24)
	assert.Equal(t, unsafe.Pointer(&s[0]), unsafe.Pointer(&b[0]))
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, b[:8], "1.0, little-endian")
	assert.Empty(t, sampleBytes([]uint16(nil)))
}

func TestPixelTypeOf(t *testing.T) {
	assert.Equal(t, Uint8, PixelTypeOf[byte]())
	assert.Equal(t, Int8, PixelTypeOf[int8]())
	assert.Equal(t, Uint16, PixelTypeOf[uint16]())
	assert.Equal(t, Int16, PixelTypeOf[int16]())
	assert.Equal(t, Uint32, PixelTypeOf[uint32]())
	assert.Equal(t, Int32, PixelTypeOf[int32]())
	assert.Equal(t, Float32, PixelTypeOf[float32]())
	assert.Equal(t, Float64, PixelTypeOf[float64]())
}

// typed copies little-endian sample bytes into a slice of T.
func typed[T Sample](pix []byte) []T {
	out := make([]T, len(pix)/PixelTypeOf[T]().Size())
	copy(sampleBytes(out), pix)
	return out
}

// typedWriters write a plane given as little-endian sample bytes as the
// samples of one pixel type: whole through WriteSamples (write), or through
// a SampleWriter in bands of about band bytes, yielding between them when
// yield is set (stream).
type typedWriters struct {
	write  func(im *Image, z, c, t int, pix []byte) error
	stream func(pw *PlaneWriter, pix []byte, band int, yield bool) error
}

func typedWritersOf[T Sample]() typedWriters {
	return typedWriters{
		write: func(im *Image, z, c, t int, pix []byte) error {
			return WriteSamples(im, z, c, t, typed[T](pix))
		},
		stream: func(pw *PlaneWriter, pix []byte, band int, yield bool) error {
			return streamSamples(pw, typed[T](pix), band, yield)
		},
	}
}

// typedWritersFor are the typedWriters of each pixel type.
var typedWritersFor = map[PixelType]typedWriters{
	Uint8: typedWritersOf[uint8](), Int8: typedWritersOf[int8](), Uint16: typedWritersOf[uint16](), Int16: typedWritersOf[int16](),
	Uint32: typedWritersOf[uint32](), Int32: typedWritersOf[int32](), Float32: typedWritersOf[float32](), Float64: typedWritersOf[float64](),
}

func streamSamples[T Sample](pw *PlaneWriter, samples []T, band int, yield bool) error {
	sw, err := NewSampleWriter[T](pw)
	if err != nil {
		return err
	}
	band = max(1, band/PixelTypeOf[T]().Size())
	for len(samples) > 0 {
		n := min(band, len(samples))
		got, err := sw.Write(samples[:n])
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("SampleWriter took %d of %d samples", got, n)
		}
		samples = samples[n:]
		if yield {
			runtime.Gosched()
		}
	}
	return sw.Close()
}
