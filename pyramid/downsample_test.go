package pyramid

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleAt reads sample i of little-endian pixel bytes as float64 (exact
// for every type but 64-bit integers, which pyramid has not).
func sampleAt(p PixelType, b []byte, i int) float64 {
	switch n := p.Size(); {
	case p == Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case p == Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	case p == Int8:
		return float64(int8(b[i]))
	case p == Int16:
		return float64(int16(binary.LittleEndian.Uint16(b[2*i:])))
	case p == Int32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case n == 1:
		return float64(b[i])
	case n == 2:
		return float64(binary.LittleEndian.Uint16(b[2*i:]))
	default:
		return float64(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// referenceReduce computes one output row the way the documentation of
// Downsampling says, sample by sample from the bytes: the mean rounded half
// up (in float64 for floating point), the top-left sample, or the most
// frequent sample of the block, ties to the first of top-left, top-right,
// bottom-left, bottom-right. It returns the samples as float64.
func referenceReduce(p PixelType, spp int, method Downsampling, a, b []byte, w int) []float64 {
	var out []float64
	for x := 0; x < w; x += 2 {
		for s := range spp {
			var block []float64
			for _, row := range [][]byte{a, b} {
				if row == nil {
					continue
				}
				block = append(block, sampleAt(p, row, x*spp+s))
				if x+1 < w {
					block = append(block, sampleAt(p, row, (x+1)*spp+s))
				}
			}
			// block holds top-left, top-right, bottom-left, bottom-right,
			// without those past the edges.
			switch method {
			case Nearest:
				out = append(out, block[0])
			case Mode: // the first of the samples seen most often
				counts := map[float64]int{}
				for _, v := range block {
					counts[v]++
				}
				best := block[0]
				for _, v := range block {
					if counts[v] > counts[best] {
						best = v
					}
				}
				out = append(out, best)
			default:
				sum := 0.0
				for _, v := range block {
					sum += v
				}
				if p.Float() {
					out = append(out, sum/float64(len(block)))
				} else {
					out = append(out, math.Floor((sum+float64(len(block)/2))/float64(len(block))))
				}
			}
		}
	}
	return out
}

// randomRow returns n samples of p as little-endian bytes, at offset 1 of
// a larger slice when unaligned, so that the reducers cannot rely on the
// alignment of their rows. Values repeat often, so that Mode has ties and
// majorities to find.
func randomRow(r *rand.Rand, p PixelType, n int, unaligned bool) []byte {
	size := p.Size()
	buf := make([]byte, n*size+1)
	row := buf[:n*size]
	if unaligned {
		row = buf[1:]
	}
	for i := range n {
		v := r.Uint64()
		if r.IntN(2) == 0 {
			v = uint64(r.IntN(3)) * 0x0101010101010101 // a few values, often equal
		}
		switch p {
		case Float32:
			binary.LittleEndian.PutUint32(row[4*i:], math.Float32bits(float32(int32(v))/7))
		case Float64:
			binary.LittleEndian.PutUint64(row[8*i:], math.Float64bits(float64(int64(v))/7))
		default:
			for k := range size {
				row[size*i+k] = byte(v >> (8 * k))
			}
		}
	}
	return row
}

// TestReducersAgainstReference runs every kernel (each pixel type, 1 to 4
// samples, every method, odd and even widths, with and without a second
// row, on aligned and unaligned rows) against referenceReduce.
func TestReducersAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for p := Uint8; p <= Float64; p++ {
		for spp := 1; spp <= 4; spp++ {
			for _, method := range []Downsampling{Mean, Nearest, Mode} {
				reduce := reducer(p, spp, method)
				for _, w := range []int{1, 2, 7, 16, 33} {
					for _, last := range []bool{false, true} {
						for _, unaligned := range []bool{false, true} {
							name := fmt.Sprintf("%v/spp=%d/%s/w=%d/last=%v/unaligned=%v", p, spp, downsamplingNames[method], w, last, unaligned)
							a := randomRow(r, p, w*spp, unaligned)
							var b []byte
							if !last {
								b = randomRow(r, p, w*spp, unaligned)
							}
							dst := randomRow(r, p, (w+1)/2*spp, unaligned)
							reduce(dst, a, b, w)
							want := referenceReduce(p, spp, method, a, b, w)
							got := make([]float64, len(want))
							for i := range got {
								got[i] = sampleAt(p, dst, i)
							}
							if p.Float() && method == Mean {
								require.InDeltaSlice(t, want, got, 1e-6*maxAbs(want), name)
							} else {
								require.Equal(t, want, got, name)
							}
						}
					}
				}
			}
		}
	}
}

func maxAbs(v []float64) float64 {
	m := 1.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// TestMeanFloatRange: the mean of float64 samples near the type's largest
// is theirs, not the +Inf of their sum; infinities stay infinite, and
// opposite ones make NaN.
func TestMeanFloatRange(t *testing.T) {
	const m = math.MaxFloat64
	inf := math.Inf(1)
	for _, c := range []struct {
		a, b []float64 // two rows of 3 pixels: two blocks, the second half
		want []float64
	}{
		{[]float64{m, m, m}, []float64{m, -0.0, m}, []float64{0.75 * m, m}},
		{[]float64{m, m, m}, []float64{m, m, m}, []float64{m, m}},
		{[]float64{m, m, 1}, []float64{-m, m, -1}, []float64{0.5 * m, 0}},
		{[]float64{-m, -m, -m}, nil, []float64{-m, -m}},
		{[]float64{inf, m, 1}, []float64{m, m, inf}, []float64{inf, inf}},
	} {
		dst := make([]float64, 2)
		meanFloat(dst, c.a, c.b, 3, 1)
		assert.Equal(t, c.want, dst, "%v %v", c.a, c.b)
	}
	dst := make([]float64, 1)
	meanFloat(dst, []float64{inf, -inf}, nil, 2, 1)
	assert.True(t, math.IsNaN(dst[0]))
}

// BenchmarkDownsample reduces pairs of 8192-pixel rows, as the slide
// workload's first reduction does (uint16 and RGB uint8 by mean), and the
// other types and methods; the bytes are those of the two input rows.
func BenchmarkDownsample(b *testing.B) {
	const width = 8192
	for _, c := range []struct {
		p      PixelType
		spp    int
		method Downsampling
	}{
		{Uint16, 1, Mean}, {Uint8, 3, Mean}, {Uint8, 1, Mean}, {Int16, 1, Mean},
		{Uint32, 1, Mean}, {Float32, 1, Mean}, {Float64, 1, Mean},
		{Uint16, 1, Nearest}, {Uint16, 1, Mode},
	} {
		b.Run(fmt.Sprintf("%v/spp=%d/%s", c.p, c.spp, downsamplingNames[c.method]), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			rowA := randomRow(r, c.p, width*c.spp, false)
			rowB := randomRow(r, c.p, width*c.spp, false)
			dst := make([]byte, width/2*c.spp*c.p.Size())
			reduce := reducer(c.p, c.spp, c.method)
			b.SetBytes(int64(len(rowA) + len(rowB)))
			b.ReportAllocs()
			for b.Loop() {
				reduce(dst, rowA, rowB, width)
			}
		})
	}
}

// BenchmarkDownsampleLoads is the uint16 mean of BenchmarkDownsample with
// the rows read and written through encoding/binary loads instead of typed
// views of the bytes: the price of dropping the unsafe views (and with them
// the refusal of big-endian hosts) while keeping one kernel generic over
// the sample type: the loads are not inlined there. (A kernel written for
// uint16 alone with loads still takes about 1.5 times the instructions of
// the views, and every type and method would need its own.)
func BenchmarkDownsampleLoads(b *testing.B) {
	const width = 8192
	r := rand.New(rand.NewPCG(3, 4))
	rowA := randomRow(r, Uint16, width, false)
	rowB := randomRow(r, Uint16, width, false)
	dst := make([]byte, width)
	b.SetBytes(int64(len(rowA) + len(rowB)))
	b.ReportAllocs()
	for b.Loop() {
		meanIntLoads[uint16](dst, rowA, rowB, width, 1)
	}
}

// meanIntLoads is meanInt on two full rows of byte samples.
func meanIntLoads[T integer](dst, a, b []byte, w, spp int) {
	pairs := w / 2 * spp
	for i := 0; i < pairs; i += spp {
		for s := range spp {
			j := 2*i + s
			sum := int64(load[T](a, j)) + int64(load[T](a, j+spp)) + int64(load[T](b, j)) + int64(load[T](b, j+spp))
			store(dst, i+s, T((sum+2)>>2))
		}
	}
}

// load reads little-endian sample i of p.
func load[T integer](p []byte, i int) T {
	switch any(T(0)).(type) {
	case uint8, int8:
		return T(p[i])
	case uint16, int16:
		return T(binary.LittleEndian.Uint16(p[2*i:]))
	}
	return T(binary.LittleEndian.Uint32(p[4*i:]))
}

// store writes v as little-endian sample i of p.
func store[T integer](p []byte, i int, v T) {
	switch any(v).(type) {
	case uint8, int8:
		p[i] = byte(v)
	case uint16, int16:
		binary.LittleEndian.PutUint16(p[2*i:], uint16(v))
	default:
		binary.LittleEndian.PutUint32(p[4*i:], uint32(v))
	}
}
