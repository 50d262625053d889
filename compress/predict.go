package compress

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors of the sample layout and the predictors.
var (
	// ErrFormat reports a sample layout this package cannot encode.
	ErrFormat = errors.New("compress: invalid sample format")
	// ErrPredictor reports an unknown predictor, or one that does not
	// apply to the sample format or the codec (none, JPEG).
	ErrPredictor = errors.New("compress: invalid predictor")
	// ErrTileSize reports a tile whose length is not a whole number of rows.
	ErrTileSize = errors.New("compress: tile is not a whole number of rows")
)

// Format describes the samples of a tile as they are stored in the file.
// Samples of a pixel are interleaved (PlanarConfiguration 1). The zero value
// is one unsigned 8-bit sample per pixel.
type Format struct {
	// BitsPerSample is 8, 16, 32 or 64; 0 means 8. (Decoders read 1-,
	// 2- and 4-bit samples too, as NewDecoder says.)
	BitsPerSample int
	// SamplesPerPixel is the number of interleaved samples of a pixel;
	// 0 means 1.
	SamplesPerPixel int
	// Float marks IEEE 754 floating-point samples (SampleFormat 3) of 16,
	// 32 or 64 bits; otherwise samples are integers, signed or not (the
	// predictors treat both alike).
	Float bool
	// ByteOrder is the byte order of the samples in the tile, which is the
	// file's; nil means little endian.
	ByteOrder binary.ByteOrder
}

// Limits of the TIFF fields SamplesPerPixel (SHORT) and TileWidth (LONG).
const (
	maxSamplesPerPixel = 1<<16 - 1
	maxWidth           = 1<<32 - 1
)

// layout is a validated Format in the terms the predictors need.
type layout struct {
	sampleBytes int
	samples     int // per pixel
	float       bool
	bigEndian   bool
}

func (f Format) layout() (layout, error) {
	l := layout{sampleBytes: f.BitsPerSample / 8, samples: f.SamplesPerPixel, float: f.Float}
	if f.BitsPerSample == 0 {
		l.sampleBytes = 1
	}
	if l.samples == 0 {
		l.samples = 1
	}
	if f.ByteOrder != nil {
		var probe [2]byte
		f.ByteOrder.PutUint16(probe[:], 1)
		l.bigEndian = probe[0] == 0
	}
	switch {
	case f.BitsPerSample != 0 && f.BitsPerSample != 8*l.sampleBytes,
		l.sampleBytes != 1 && l.sampleBytes != 2 && l.sampleBytes != 4 && l.sampleBytes != 8:
		return l, fmt.Errorf("%w: %d bits per sample (want 8, 16, 32 or 64)", ErrFormat, f.BitsPerSample)
	case l.samples < 0 || l.samples > maxSamplesPerPixel:
		return l, fmt.Errorf("%w: %d samples per pixel", ErrFormat, f.SamplesPerPixel)
	case l.float && l.sampleBytes == 1:
		return l, fmt.Errorf("%w: 8-bit floating point", ErrFormat)
	}
	return l, nil
}

// pixelBytes returns the size of one pixel.
func (l layout) pixelBytes() int { return l.sampleBytes * l.samples }

// rowPredictor writes the prediction residuals of one row, src, of samples
// laid out as l into dst of the same length.
type rowPredictor func(dst, src []byte, l layout)

// predictor returns the row predictor for TIFF predictor p (tag 317) on
// samples of layout l; nil for no prediction.
func (l layout) predictor(p uint16) (rowPredictor, error) {
	switch p {
	case 0, 1:
		return nil, nil
	case 2:
		if l.float {
			return nil, fmt.Errorf("%w: horizontal differencing (2) is for integer samples", ErrPredictor)
		}
		return l.horizontal(), nil
	case 3:
		if !l.float || l.sampleBytes < 4 {
			return nil, fmt.Errorf("%w: the floating-point predictor (3) is for 32- and 64-bit floats", ErrPredictor)
		}
		return floatingPoint, nil
	}
	return nil, fmt.Errorf("%w: %d", ErrPredictor, p)
}

// horizontal returns predictor 2 (TIFF 6.0 Section 14): each sample minus
// the same sample of the previous pixel, modulo its width, in the file's
// byte order; the first pixel of a row is kept.
func (l layout) horizontal() rowPredictor {
	switch {
	case l.sampleBytes == 1:
		return diff8
	case l.sampleBytes == 2 && l.bigEndian:
		return diff16BE
	case l.sampleBytes == 2:
		return diff16LE
	case l.sampleBytes == 4 && l.bigEndian:
		return diff32BE
	case l.sampleBytes == 4:
		return diff32LE
	case l.bigEndian:
		return diff64BE
	default:
		return diff64LE
	}
}

// The diff functions write src[i] - src[i-stride] per sample into dst,
// stride being the pixel size in bytes, and copy the first pixel. Their
// loop conditions let the compiler drop the bounds checks. Those for 8-
// and 16-bit samples subtract eight bytes at a time (subWords), then the
// last few samples one by one.

func diff8(dst, src []byte, l layout) {
	cur, back, out := shifted(dst, src, l.pixelBytes())
	for i := subWords(cur, back, out, lanes8, false); i < len(cur) && i < len(back) && i < len(out); i++ {
		out[i] = cur[i] - back[i]
	}
}

func diff16LE(dst, src []byte, l layout) {
	cur, back, out := shifted(dst, src, l.pixelBytes())
	o := binary.LittleEndian
	for i := subWords(cur, back, out, lanes16, false); i+1 < len(cur) && i+1 < len(back) && i+1 < len(out); i += 2 {
		o.PutUint16(out[i:i+2], o.Uint16(cur[i:i+2])-o.Uint16(back[i:i+2]))
	}
}

func diff16BE(dst, src []byte, l layout) {
	cur, back, out := shifted(dst, src, l.pixelBytes())
	o := binary.BigEndian
	for i := subWords(cur, back, out, lanes16, true); i+1 < len(cur) && i+1 < len(back) && i+1 < len(out); i += 2 {
		o.PutUint16(out[i:i+2], o.Uint16(cur[i:i+2])-o.Uint16(back[i:i+2]))
	}
}

func diff32LE(dst, src []byte, l layout) {
	cur, back, out := shifted(dst, src, l.pixelBytes())
	o := binary.LittleEndian
	for i := 0; i+3 < len(cur) && i+3 < len(back) && i+3 < len(out); i += 4 {
		o.PutUint32(out[i:i+4], o.Uint32(cur[i:i+4])-o.Uint32(back[i:i+4]))
	}
}

func diff32BE(dst, src []byte, l layout) {
	cur, back, out := shifted(dst, src, l.pixelBytes())
	o := binary.BigEndian
	for i := 0; i+3 < len(cur) && i+3 < len(back) && i+3 < len(out); i += 4 {
		o.PutUint32(out[i:i+4], o.Uint32(cur[i:i+4])-o.Uint32(back[i:i+4]))
	}
}

func diff64LE(dst, src []byte, l layout) {
	cur, back, out := shifted(dst, src, l.pixelBytes())
	o := binary.LittleEndian
	for i := 0; i+7 < len(cur) && i+7 < len(back) && i+7 < len(out); i += 8 {
		o.PutUint64(out[i:i+8], o.Uint64(cur[i:i+8])-o.Uint64(back[i:i+8]))
	}
}

func diff64BE(dst, src []byte, l layout) {
	cur, back, out := shifted(dst, src, l.pixelBytes())
	o := binary.BigEndian
	for i := 0; i+7 < len(cur) && i+7 < len(back) && i+7 < len(out); i += 8 {
		o.PutUint64(out[i:i+8], o.Uint64(cur[i:i+8])-o.Uint64(back[i:i+8]))
	}
}

// Lane-wise subtraction in a 64-bit word: the top bit of every 8- or
// 16-bit lane. (A stride of whole samples keeps the lanes of cur and back
// on the same samples.)
const (
	lanes8  = 0x8080808080808080
	lanes16 = 0x8000800080008000
)

// subWords writes cur - back into out lane by lane, eight bytes at a time,
// reading and writing the words in the samples' byte order, and returns
// how many bytes it did: all but the last 0 to 7. Setting each lane's top
// bit in the minuend and clearing it in the subtrahend keeps borrows
// inside the lanes; the last XOR puts the top bits right. Its loop keeps
// bounds checks: bounding it by the three slices' lengths instead, as the
// diff functions do, ran about 15 % slower (BenchmarkHorizontal).
func subWords(cur, back, out []byte, high uint64, bigEndian bool) int {
	n := min(len(cur), len(back), len(out)) &^ 7
	sub := func(a, b uint64) uint64 { return ((a | high) - (b &^ high)) ^ ((a ^ ^b) & high) }
	if bigEndian {
		o := binary.BigEndian
		for i := 0; i < n; i += 8 {
			o.PutUint64(out[i:i+8], sub(o.Uint64(cur[i:i+8]), o.Uint64(back[i:i+8])))
		}
		return n
	}
	o := binary.LittleEndian
	for i := 0; i < n; i += 8 {
		o.PutUint64(out[i:i+8], sub(o.Uint64(cur[i:i+8]), o.Uint64(back[i:i+8])))
	}
	return n
}

// shifted copies the first pixel of src, stride bytes, to dst and returns
// the rest of src, the same length of src one pixel earlier, and the rest
// of dst.
func shifted(dst, src []byte, stride int) (cur, back, out []byte) {
	dst = dst[:len(src)]
	n := copy(dst[:min(stride, len(src))], src)
	return src[n:], src[:len(src)-n], dst[n:]
}

// floatingPoint is predictor 3 (Adobe Photoshop TIFF Technical Note 3), as
// libtiff's fpDiff computes it: the bytes of the row's samples are
// regrouped into planes, most significant byte of every sample first, then
// each byte of the regrouped row minus the byte one pixel's worth of
// samples before it. The planes do not depend on the file's byte order.
func floatingPoint(dst, src []byte, l layout) {
	dst = dst[:len(src)]
	n := len(src) / l.sampleBytes // samples in the row
	for plane := range l.sampleBytes {
		significance := l.sampleBytes - 1 - plane // byte index, little endian
		if l.bigEndian {
			significance = plane
		}
		out := dst[plane*n : (plane+1)*n]
		for k := range out {
			out[k] = src[k*l.sampleBytes+significance]
		}
	}
	for i := len(dst) - 1; i >= l.samples; i-- {
		dst[i] -= dst[i-l.samples]
	}
}
