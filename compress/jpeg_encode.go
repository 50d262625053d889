package compress

import (
	"encoding/binary"
	"math/bits"
)

// The baseline JPEG encoder: colour conversion and chroma subsampling in
// fixed point, the forward DCT of Arai, Agui and Nakajima (AAN) in
// integers, quantization by multiplication with the reciprocal, and Huffman
// coding that visits only the non-zero coefficients. It works on one MCU at
// a time straight from the tile, so nothing is converted or copied a second
// time, and in integers only, so its output is the same on every platform.

// Fixed-point formats of the encoder.
const (
	// jpegFracBits is the number of fractional bits of the samples the
	// DCT transforms: the colour conversion keeps them instead of rounding
	// to 8 bits.
	jpegFracBits = 2
	// jpegConstBits is the precision of the DCT's multipliers.
	jpegConstBits = 14
)

// The AAN multipliers, round(c * 2^jpegConstBits).
const (
	jpegC0707 = 11585 // cos(4*pi/16) = 0.707106781
	jpegC0382 = 6270  // cos(6*pi/16) = 0.382683433
	jpegC0541 = 8867  // cos(2*pi/16) - cos(6*pi/16) = 0.541196100
	jpegC1306 = 21407 // cos(2*pi/16) + cos(6*pi/16) = 1.306562965
)

// The JFIF colour conversion (ITU T.871), round(c * 2^16).
const (
	jpegYR  = 19595 // 0.299
	jpegYG  = 38470 // 0.587
	jpegYB  = 7471  // 0.114
	jpegCbR = 11059 // 0.168736
	jpegCbG = 21709 // 0.331264
	jpegCrG = 27439 // 0.418688
	jpegCrB = 5329  // 0.081312
	jpegC05 = 32768 // 0.5
)

// jpegState is the per-call state of an encoder, pooled.
type jpegState struct {
	blocks [6][64]int32  // an MCU: up to 4 Y, Cb and Cr; or R, G, B; or gray
	edge   [16 * 48]byte // a partial MCU padded to the full size
	dc     [3]int32      // the previous DC coefficient of each component
	buf    []byte        // the output
	acc    uint64        // bits not yet in buf, the last n of them
	n      uint
}

// jpegNatural is the inverse of jpegZigzag: the zigzag index of each
// natural position.
var jpegNatural = func() (n [64]uint8) {
	for k, i := range jpegZigzag {
		n[i] = uint8(k)
	}
	return n
}()

// encode appends the tile's stream to dst.
func (j *JPEG) encode(st *jpegState, dst, src []byte, height int) []byte {
	st.buf = j.appendHeaders(dst, height)
	st.acc, st.n, st.dc = 0, 0, [3]int32{}
	mcu := 8
	if j.samples == 3 && j.color == JPEGYCbCr420 {
		mcu = 16
	}
	stride := j.width * j.samples
	for y := 0; y < height; y += mcu {
		for x := 0; x < j.width; x += mcu {
			p, pstride := src[y*stride+x*j.samples:], stride
			if x+mcu > j.width || y+mcu > height {
				p, pstride = st.pad(src, stride, j.samples, x, y, min(mcu, j.width-x), min(mcu, height-y), mcu), mcu*j.samples
			}
			switch {
			case j.samples == 1:
				loadBlock(&st.blocks[0], p, pstride, 1)
				st.encodeBlock(&st.blocks[0], &j.quant[0], &j.huff[0], 0)
			case j.color == JPEGRGB:
				for c := range 3 {
					loadBlock(&st.blocks[c], p[c:], pstride, 3)
					st.encodeBlock(&st.blocks[c], &j.quant[0], &j.huff[0], c)
				}
			default:
				st.ycc420(p, pstride)
				for b := range 4 {
					st.encodeBlock(&st.blocks[b], &j.quant[0], &j.huff[0], 0)
				}
				st.encodeBlock(&st.blocks[4], &j.quant[1], &j.huff[1], 1)
				st.encodeBlock(&st.blocks[5], &j.quant[1], &j.huff[1], 2)
			}
		}
	}
	st.flush()
	dst = append(st.buf, 0xff, jpegEOI)
	st.buf = nil
	return dst
}

// pad copies the w x h pixels at (x, y) into an MCU of size x size pixels,
// repeating the last column and row, and returns it.
func (st *jpegState) pad(src []byte, stride, samples, x, y, w, h, size int) []byte {
	out := st.edge[:size*size*samples]
	for r := range size {
		row := src[(y+min(r, h-1))*stride+x*samples:][:w*samples]
		o := out[r*size*samples:][:size*samples]
		copy(o, row)
		last := row[len(row)-samples:]
		for c := w; c < size; c++ {
			copy(o[c*samples:], last)
		}
	}
	return out
}

// loadBlock level-shifts the 8x8 samples at p, step bytes apart in rows of
// stride bytes, into b.
func loadBlock(b *[64]int32, p []byte, stride, step int) {
	for r := range 8 {
		row := p[r*stride:][:7*step+1]
		o := b[8*r : 8*r+8 : 8*r+8]
		for c := range o {
			o[c] = (int32(row[c*step]) - 128) << jpegFracBits
		}
	}
}

// ycc420 converts the 16x16 RGB pixels at p, in rows of stride bytes, to
// the four luminance blocks and the two chrominance blocks of a 4:2:0 MCU,
// level-shifted, with jpegFracBits fractional bits. Chroma is converted
// once from the sums of each 2x2 pixels, the exact mean of the full
// resolution conversion. Luma and chroma take separate passes over the
// pixels, which keeps each loop's values in registers.
func (st *jpegState) ycc420(p []byte, stride int) {
	const (
		yShift  = 16 - jpegFracBits
		yOffset = 1<<(yShift-1) - 128<<16 // rounding, level shift
		cShift  = 16 + 2 - jpegFracBits   // 2: the sum of 4 pixels
		cOffset = 1 << (cShift - 1)
	)
	for r := range 16 {
		row := (*[48]byte)(p[r*stride:])
		left := (*[8]int32)(st.blocks[r>>3*2][r&7*8:])
		right := (*[8]int32)(st.blocks[r>>3*2+1][r&7*8:])
		for x := range 8 {
			i := 3 * x
			left[x] = (jpegYR*int32(row[i]) + jpegYG*int32(row[i+1]) + jpegYB*int32(row[i+2]) + yOffset) >> yShift
			right[x] = (jpegYR*int32(row[24+i]) + jpegYG*int32(row[25+i]) + jpegYB*int32(row[26+i]) + yOffset) >> yShift
		}
	}
	for r := 0; r < 16; r += 2 {
		row0 := (*[48]byte)(p[r*stride:])
		row1 := (*[48]byte)(p[(r+1)*stride:])
		cb := (*[8]int32)(st.blocks[4][r/2*8:])
		cr := (*[8]int32)(st.blocks[5][r/2*8:])
		for x := range 8 {
			i := 6 * x
			rs := int32(row0[i]) + int32(row0[i+3]) + int32(row1[i]) + int32(row1[i+3])
			gs := int32(row0[i+1]) + int32(row0[i+4]) + int32(row1[i+1]) + int32(row1[i+4])
			bs := int32(row0[i+2]) + int32(row0[i+5]) + int32(row1[i+2]) + int32(row1[i+5])
			cb[x] = (-jpegCbR*rs - jpegCbG*gs + jpegC05*bs + cOffset) >> cShift
			cr[x] = (jpegC05*rs - jpegCrG*gs - jpegCrB*bs + cOffset) >> cShift
		}
	}
}

// jpegMul multiplies x by the AAN multiplier c, rounding.
func jpegMul(x, c int32) int32 { return (x*c + 1<<(jpegConstBits-1)) >> jpegConstBits }

// fdctQuant transforms b in place into its quantized coefficients, in
// natural order, and returns the mask of the non-zero ones, bit k for
// zigzag index k.
//
// The rows, then the columns, go through the one-dimensional forward DCT of
// Arai, Agui and Nakajima (1988; Pennebaker and Mitchell, JPEG, Figure 4-8)
// with five multiplications. It leaves output u of a row or column scaled by
// sqrt(8)*jpegDCTScale[u] against the orthonormal DCT; q's reciprocals divide
// that scale out with the quantizer. The column pass quantizes its outputs
// at once, so the block is read back only once. The two passes spell the
// butterfly out rather than call a function for it: Go does not inline one
// that large, and the calls cost about 10 % more instructions per block.
func fdctQuant(b *[64]int32, q *jpegQuant) (mask uint64) {
	for r := 0; r < 64; r += 8 {
		d := (*[8]int32)(b[r:])
		t0, t7 := d[0]+d[7], d[0]-d[7]
		t1, t6 := d[1]+d[6], d[1]-d[6]
		t2, t5 := d[2]+d[5], d[2]-d[5]
		t3, t4 := d[3]+d[4], d[3]-d[4]
		t10, t13 := t0+t3, t0-t3
		t11, t12 := t1+t2, t1-t2
		d[0], d[4] = t10+t11, t10-t11
		z1 := jpegMul(t12+t13, jpegC0707)
		d[2], d[6] = t13+z1, t13-z1
		t10, t11, t12 = t4+t5, t5+t6, t6+t7
		z5 := jpegMul(t10-t12, jpegC0382)
		z2 := jpegMul(t10, jpegC0541) + z5
		z4 := jpegMul(t12, jpegC1306) + z5
		z3 := jpegMul(t11, jpegC0707)
		z11, z13 := t7+z3, t7-z3
		d[5], d[3] = z13+z2, z13-z2
		d[1], d[7] = z11+z4, z11-z4
	}
	for u := range 8 {
		t0, t7 := b[u]+b[56+u], b[u]-b[56+u]
		t1, t6 := b[8+u]+b[48+u], b[8+u]-b[48+u]
		t2, t5 := b[16+u]+b[40+u], b[16+u]-b[40+u]
		t3, t4 := b[24+u]+b[32+u], b[24+u]-b[32+u]
		t10, t13 := t0+t3, t0-t3
		t11, t12 := t1+t2, t1-t2
		z1 := jpegMul(t12+t13, jpegC0707)
		b[u] = jpegQuantize(t10+t11, q.recip[u])
		b[32+u] = jpegQuantize(t10-t11, q.recip[32+u])
		b[16+u] = jpegQuantize(t13+z1, q.recip[16+u])
		b[48+u] = jpegQuantize(t13-z1, q.recip[48+u])
		t10, t11, t12 = t4+t5, t5+t6, t6+t7
		z5 := jpegMul(t10-t12, jpegC0382)
		z2 := jpegMul(t10, jpegC0541) + z5
		z4 := jpegMul(t12, jpegC1306) + z5
		z3 := jpegMul(t11, jpegC0707)
		z11, z13 := t7+z3, t7-z3
		b[40+u] = jpegQuantize(z13+z2, q.recip[40+u])
		b[24+u] = jpegQuantize(z13-z2, q.recip[24+u])
		b[8+u] = jpegQuantize(z11+z4, q.recip[8+u])
		b[56+u] = jpegQuantize(z11-z4, q.recip[56+u])
		column := nonZero(b[u]) | nonZero(b[8+u])<<1 | nonZero(b[16+u])<<2 | nonZero(b[24+u])<<3 |
			nonZero(b[32+u])<<4 | nonZero(b[40+u])<<5 | nonZero(b[48+u])<<6 | nonZero(b[56+u])<<7
		mask |= jpegColumnMask[u][column&0xff]
	}
	return mask
}

// jpegQuantize divides x by a divisor given as 2^jpegQuantBits over it,
// rounding half up.
func jpegQuantize(x int32, recip int64) int32 {
	return int32((int64(x)*recip + 1<<(jpegQuantBits-1)) >> jpegQuantBits)
}

// nonZero returns 1 if c is not 0, else 0.
func nonZero(c int32) uint32 { return uint32(c|-c) >> 31 }

// jpegColumnMask[u][m] has the bit of zigzag index k set for every
// coefficient of column u whose row v is set in m: it turns the non-zero
// coefficients of a column into their bits of the block's zigzag mask.
var jpegColumnMask = func() (t [8][256]uint64) {
	for u := range t {
		for m := range t[u] {
			for v := range 8 {
				if m>>v&1 != 0 {
					t[u][m] |= 1 << jpegNatural[8*v+u]
				}
			}
		}
	}
	return t
}()

// encodeBlock transforms, quantizes and Huffman-codes one block of
// component comp. The bit buffer lives in locals meanwhile.
func (st *jpegState) encodeBlock(b *[64]int32, q *jpegQuant, h *jpegCoders, comp int) {
	mask := fdctQuant(b, q)
	buf, acc, n := st.buf, st.acc, st.n

	// jpegPut, written out where it matters: it is too large to inline.
	dc := b[0]
	v, l := jpegCode(&h.dc, 0, dc-st.dc[comp])
	if acc, n = acc<<l|v, n+l; n >= 32 {
		buf, n = jpegAppend32(buf, acc, n)
	}
	st.dc[comp] = dc

	k := 1
	for m := mask >> 1; m != 0; {
		zeros := bits.TrailingZeros64(m)
		m >>= zeros + 1
		k += zeros
		run := zeros
		for ; run >= 16; run -= 16 { // ZRL: 16 zeros
			buf, acc, n = jpegPut(buf, acc, n, uint64(h.ac[0xf0]&0xffffff), uint(h.ac[0xf0]>>24))
		}
		v, l := jpegCode(&h.ac, run<<4, b[jpegZigzag[k&63]])
		if acc, n = acc<<l|v, n+l; n >= 32 {
			buf, n = jpegAppend32(buf, acc, n)
		}
		k++
	}
	if k < 64 { // EOB
		buf, acc, n = jpegPut(buf, acc, n, uint64(h.ac[0]&0xffffff), uint(h.ac[0]>>24))
	}
	st.buf, st.acc, st.n = buf, acc, n
}

// jpegCode returns the bits that code value x after zero run run<<4 (0 for
// DC): the code of symbol run<<4|size, size the magnitude category of x,
// then x's size low bits, in one's complement if x is negative (ITU T.81
// F.1.2.1); and their number.
func jpegCode(codes *[256]uint32, run int, x int32) (v uint64, l uint) {
	s := x >> 31 // 0 or -1
	size := uint(bits.Len32(uint32((x ^ s) - s)))
	c := codes[(run|int(size))&0xff]
	return uint64(c&0xffffff)<<size | uint64(uint32(x+s))&(1<<size-1), uint(c>>24) + size
}

// jpegPut appends the l (at most 32) low bits of v to the bits acc, of
// which the last n are pending, and moves 32 of them to buf when it has as
// many.
func jpegPut(buf []byte, acc uint64, n uint, v uint64, l uint) ([]byte, uint64, uint) {
	acc, n = acc<<l|v, n+l
	if n >= 32 {
		buf, n = jpegAppend32(buf, acc, n)
	}
	return buf, acc, n
}

// jpegAppend32 appends the first 32 of the last n bits of acc to buf, with
// a 0 after each 0xff byte (byte stuffing, ITU T.81 B.1.1.5), and returns
// the number of bits left. It is not inlined: most calls of
// jpegPut do not reach it.
//
//go:noinline
func jpegAppend32(buf []byte, acc uint64, n uint) ([]byte, uint) {
	n -= 32
	w := uint32(acc >> n)
	if x := ^w; (x-0x01010101)&^x&0x80808080 == 0 { // no 0xff byte
		return binary.BigEndian.AppendUint32(buf, w), n
	}
	for s := 24; s >= 0; s -= 8 {
		buf = jpegAppendByte(buf, byte(w>>s))
	}
	return buf, n
}

// jpegAppendByte appends a byte of entropy-coded data, stuffed.
func jpegAppendByte(buf []byte, c byte) []byte {
	if c == 0xff {
		return append(buf, c, 0)
	}
	return append(buf, c)
}

// flush pads the last byte with 1 bits (ITU T.81 F.1.2.3) and writes the
// bits left.
func (st *jpegState) flush() {
	pad := (8 - st.n%8) % 8
	st.buf, st.acc, st.n = jpegPut(st.buf, st.acc, st.n, 1<<pad-1, pad)
	for st.n > 0 {
		st.n -= 8
		st.buf = jpegAppendByte(st.buf, byte(st.acc>>st.n))
	}
}
