package pyramid

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// reduceFunc writes into dst one row of the next level: each output pixel
// is computed from the 2x2 block of rows a and b (b is nil for the last row
// of an odd height), w input pixels wide. dst holds (w+1)/2 pixels.
type reduceFunc func(dst, a, b []byte, w int)

// hostLittleEndian reports whether typed views of little-endian pixel
// bytes read the right values on this machine.
var hostLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// reducer returns the downsampling kernel for a pixel layout.
func reducer(p PixelType, spp int, method Downsampling) reduceFunc {
	switch method {
	case Nearest:
		switch p.Size() {
		case 1:
			return viewed(spp, nearest[uint8])
		case 2:
			return viewed(spp, nearest[uint16])
		case 4:
			return viewed(spp, nearest[uint32])
		}
		return viewed(spp, nearest[uint64])
	case Mode:
		switch p.Size() {
		case 1:
			return viewed(spp, mode[uint8])
		case 2:
			return viewed(spp, mode[uint16])
		case 4:
			return viewed(spp, mode[uint32])
		}
		return viewed(spp, mode[uint64])
	}
	switch p {
	case Uint8:
		return viewed(spp, meanInt[uint8])
	case Int8:
		return viewed(spp, meanInt[int8])
	case Uint16:
		return viewed(spp, meanInt[uint16])
	case Int16:
		return viewed(spp, meanInt[int16])
	case Uint32:
		return viewed(spp, meanInt[uint32])
	case Int32:
		return viewed(spp, meanInt[int32])
	case Float32:
		return viewed(spp, meanFloat[float32])
	}
	return viewed(spp, meanFloat[float64])
}

// viewed adapts a typed kernel to byte rows.
func viewed[T any](spp int, kernel func(dst, a, b []T, w, spp int)) reduceFunc {
	return func(dst, a, b []byte, w int) {
		var bt []T
		if b != nil {
			bt = view[T](b)
		}
		kernel(view[T](dst), view[T](a), bt, w, spp)
	}
}

// view reinterprets little-endian pixel bytes as samples. The bytes must be
// aligned for T; the writer keeps every row it reduces aligned. Views, not
// encoding/binary loads, because loads cost several times the kernels'
// time (BenchmarkDownsampleLoads): hence the refusal of big-endian hosts.
func view[T any](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(*new(T))))
}

// aligned reports whether b may be viewed as samples of size bytes.
func aligned(b []byte, size int) bool {
	return len(b) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(size) == 0
}

type integer interface {
	~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32
}

type float interface{ ~float32 | ~float64 }

// meanInt averages each block's samples, rounding half up exactly: 4
// samples as (sum+2)>>2, 2 as (sum+1)>>1.
func meanInt[T integer](dst, a, b []T, w, spp int) {
	pairs := w / 2 * spp
	if b == nil {
		for i := 0; i < pairs; i += spp {
			for s := range spp {
				j := 2*i + s
				dst[i+s] = T((int64(a[j]) + int64(a[j+spp]) + 1) >> 1)
			}
		}
	} else if !meanFast(dst[:pairs], a[:2*pairs], b[:2*pairs], spp) {
		a, b := a[:2*pairs], b[:2*pairs]
		for i := 0; i < pairs; i += spp {
			for s := range spp {
				j := 2*i + s
				dst[i+s] = T((int64(a[j]) + int64(a[j+spp]) + int64(b[j]) + int64(b[j+spp]) + 2) >> 2)
			}
		}
	}
	if w%2 == 1 { // the last column has no right neighbour
		for s := range spp {
			j := 2*pairs + s
			if b == nil {
				dst[pairs+s] = a[j]
			} else {
				dst[pairs+s] = T((int64(a[j]) + int64(b[j]) + 1) >> 1)
			}
		}
	}
}

// meanFast is meanInt's mean of four samples for RGB (uint8 or uint16),
// written out so that the compiler drops the bounds checks and the loop
// over the samples (about a quarter faster: BenchmarkDownsample); it
// reports false for the other layouts, whose loop is as fast.
func meanFast[T integer](dst, a, b []T, spp int) bool {
	if spp != 3 {
		return false
	}
	switch d := any(dst).(type) {
	case []uint8:
		meanRGB(d, any(a).([]uint8), any(b).([]uint8))
		return true
	case []uint16:
		meanRGB(d, any(a).([]uint16), any(b).([]uint16))
		return true
	}
	return false
}

// meanRGB is meanFast for one sample type.
func meanRGB[U uint8 | uint16](d, a, b []U) {
	n := min(len(d)/3, len(a)/6, len(b)/6)
	for i := range n {
		p, q, o := a[6*i:6*i+6:6*i+6], b[6*i:6*i+6:6*i+6], d[3*i:3*i+3:3*i+3]
		o[0] = U((uint32(p[0]) + uint32(p[3]) + uint32(q[0]) + uint32(q[3]) + 2) >> 2)
		o[1] = U((uint32(p[1]) + uint32(p[4]) + uint32(q[1]) + uint32(q[4]) + 2) >> 2)
		o[2] = U((uint32(p[2]) + uint32(p[5]) + uint32(q[2]) + uint32(q[5]) + 2) >> 2)
	}
}

// meanFloat averages each block's samples in float64.
func meanFloat[T float](dst, a, b []T, w, spp int) {
	pairs := w / 2 * spp
	for i := 0; i < pairs; i += spp {
		for s := range spp {
			j := 2*i + s
			if b == nil {
				dst[i+s] = T(mean2(float64(a[j]), float64(a[j+spp])))
			} else {
				dst[i+s] = T(mean4(float64(a[j]), float64(a[j+spp]), float64(b[j]), float64(b[j+spp])))
			}
		}
	}
	if w%2 == 1 {
		for s := range spp {
			j := 2*pairs + s
			if b == nil {
				dst[pairs+s] = a[j]
			} else {
				dst[pairs+s] = T(mean2(float64(a[j]), float64(b[j])))
			}
		}
	}
}

// mean2 and mean4 are the means of two and four samples. Near float64's
// largest, the sum overflows where the mean does not: then the halves or
// quarters, exact but for subnormals, are added instead.
func mean2(a, b float64) float64 {
	if m := (a + b) / 2; !math.IsInf(m, 0) {
		return m
	}
	return a/2 + b/2
}

func mean4(a, b, c, d float64) float64 {
	if m := (a + b + c + d) / 4; !math.IsInf(m, 0) {
		return m
	}
	return a/4 + b/4 + c/4 + d/4
}

// nearest keeps the top-left pixel of each block.
func nearest[T any](dst, a, _ []T, w, spp int) {
	for x := range (w + 1) / 2 {
		copy(dst[x*spp:(x+1)*spp], a[2*x*spp:])
	}
}

// mode keeps each sample's most frequent value in the block; ties go to
// the first of top-left, top-right, bottom-left, bottom-right.
func mode[T comparable](dst, a, b []T, w, spp int) {
	var block [4]T
	for x := range (w + 1) / 2 {
		for s := range spp {
			j := 2*x*spp + s
			n := 0
			block[n], n = a[j], n+1
			if 2*x+1 < w {
				block[n], n = a[j+spp], n+1
			}
			if b != nil {
				block[n], n = b[j], n+1
				if 2*x+1 < w {
					block[n], n = b[j+spp], n+1
				}
			}
			dst[x*spp+s] = mostFrequent(block[:n])
		}
	}
}

// mostFrequent returns the value occurring most often in v, the first one
// on ties.
func mostFrequent[T comparable](v []T) T {
	best, bestCount := v[0], 0
	for i, x := range v {
		count := 0
		for _, y := range v[i:] {
			if x == y {
				count++
			}
		}
		if count > bestCount {
			best, bestCount = x, count
		}
	}
	return best
}
