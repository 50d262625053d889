package pyramid

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// This file computes expected pyramids the slow, obvious way, sample by
// sample in float64, to check the writer's kernels against.

// sampleCodec reads and writes one sample of a pixel type as float64.
type sampleCodec struct {
	size  int
	read  func(p []byte) float64
	write func(p []byte, v float64)
	float bool
}

func codecOf(t PixelType) sampleCodec {
	le := binary.LittleEndian
	switch t {
	case Uint8:
		return sampleCodec{1, func(p []byte) float64 { return float64(p[0]) }, func(p []byte, v float64) { p[0] = uint8(v) }, false}
	case Int8:
		return sampleCodec{1, func(p []byte) float64 { return float64(int8(p[0])) }, func(p []byte, v float64) { p[0] = uint8(int8(v)) }, false}
	case Uint16:
		return sampleCodec{2, func(p []byte) float64 { return float64(le.Uint16(p)) }, func(p []byte, v float64) { le.PutUint16(p, uint16(v)) }, false}
	case Int16:
		return sampleCodec{2, func(p []byte) float64 { return float64(int16(le.Uint16(p))) }, func(p []byte, v float64) { le.PutUint16(p, uint16(int16(v))) }, false}
	case Uint32:
		return sampleCodec{4, func(p []byte) float64 { return float64(le.Uint32(p)) }, func(p []byte, v float64) { le.PutUint32(p, uint32(v)) }, false}
	case Int32:
		return sampleCodec{4, func(p []byte) float64 { return float64(int32(le.Uint32(p))) }, func(p []byte, v float64) { le.PutUint32(p, uint32(int32(v))) }, false}
	case Float32:
		return sampleCodec{4, func(p []byte) float64 { return float64(math.Float32frombits(le.Uint32(p))) },
			func(p []byte, v float64) { le.PutUint32(p, math.Float32bits(float32(v))) }, true}
	}
	return sampleCodec{8, func(p []byte) float64 { return math.Float64frombits(le.Uint64(p)) },
		func(p []byte, v float64) { le.PutUint64(p, math.Float64bits(v)) }, true}
}

// refPlane is one level of one plane: little-endian samples.
type refPlane struct {
	w, h, spp int
	pix       []byte
}

// referencePyramid computes every level of a plane, down to the size of
// the last, with the given method.
func referencePyramid(base refPlane, t PixelType, method Downsampling, levels int) []refPlane {
	out := []refPlane{base}
	for len(out) < levels {
		out = append(out, reduceReference(out[len(out)-1], t, method))
	}
	return out
}

func reduceReference(src refPlane, t PixelType, method Downsampling) refPlane {
	c := codecOf(t)
	dst := refPlane{w: (src.w + 1) / 2, h: (src.h + 1) / 2, spp: src.spp}
	dst.pix = make([]byte, dst.w*dst.h*dst.spp*c.size)
	at := func(x, y, s int) []byte { return src.pix[((y*src.w+x)*src.spp+s)*c.size:] }
	for y := range dst.h {
		for x := range dst.w {
			for s := range src.spp {
				// The block's samples that exist: TL, TR, BL, BR.
				var vals [][]byte
				for _, d := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
					sx, sy := 2*x+d[0], 2*y+d[1]
					if sx < src.w && sy < src.h {
						vals = append(vals, at(sx, sy, s))
					}
				}
				o := dst.pix[((y*dst.w+x)*dst.spp+s)*c.size:]
				switch method {
				case Nearest:
					copy(o[:c.size], vals[0])
				case Mode:
					copy(o[:c.size], modeReference(vals, c.size))
				default:
					sum := 0.0
					for _, v := range vals {
						sum += c.read(v)
					}
					n := float64(len(vals))
					if c.float {
						c.write(o, sum/n)
					} else {
						c.write(o, math.Floor((sum+math.Floor(n/2))/n))
					}
				}
			}
		}
	}
	return dst
}

// modeReference returns the most frequent sample, the earliest on ties.
func modeReference(vals [][]byte, size int) []byte {
	best, bestCount := vals[0], 0
	for _, v := range vals {
		count := 0
		for _, u := range vals {
			if string(u[:size]) == string(v[:size]) {
				count++
			}
		}
		if count > bestCount {
			best, bestCount = v, count
		}
	}
	return best[:size]
}

// randomPlane fills a plane with values that exercise rounding and sign:
// for integers the full range, for floats a mix of magnitudes. Labels
// (few distinct values) when labels is set, to exercise Mode.
func randomPlane(w, h, spp int, t PixelType, seed uint64, labels bool) refPlane {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := codecOf(t)
	p := refPlane{w: w, h: h, spp: spp, pix: make([]byte, w*h*spp*c.size)}
	for i := 0; i < len(p.pix); i += c.size {
		switch {
		case labels:
			c.write(p.pix[i:], float64(r.IntN(4)))
		case c.float:
			c.write(p.pix[i:], (r.Float64()-0.5)*math.Pow(10, float64(r.IntN(6))))
		default:
			for j := range c.size {
				p.pix[i+j] = byte(r.Uint32())
			}
		}
	}
	return p
}
