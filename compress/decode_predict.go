package compress

import (
	"encoding/binary"
	"fmt"

	"github.com/ometiff-go/ometiff/tiff"
)

// checkPredictor accepts the predictors a decoder can undo on its samples,
// as libtiff does: horizontal differencing (2) on 8-, 16-, 32- and 64-bit
// samples of any format (it differences their bit patterns as integers),
// the floating-point predictor (3) on 16-, 32- and 64-bit floats. Like
// libtiff, it ignores the Predictor of codecs that have none (no
// compression, PackBits, JPEG).
func (d *Decoder) checkPredictor() error {
	switch d.f.Compression {
	case 0, tiff.CompressionNone, tiff.CompressionPackBits, tiff.CompressionJPEG:
		d.f.Predictor = tiff.PredictorNone
	}
	switch p := d.f.Predictor; {
	case p == 0 || p == tiff.PredictorNone || p == tiff.PredictorHorizontal:
		return nil
	case p == tiff.PredictorFloatingPoint && d.l.float:
		return nil
	case p == tiff.PredictorFloatingPoint:
		return fmt.Errorf("%w: the floating-point predictor (3) on integer samples", ErrPredictor)
	}
	return fmt.Errorf("%w: %d", ErrPredictor, d.f.Predictor)
}

// unpredict undoes the predictor of a decoded block, row by row, and puts
// its samples in little-endian order.
func (d *Decoder) unpredict(out []byte) {
	l := d.l
	if d.f.Predictor == tiff.PredictorFloatingPoint {
		s := getScratch(d.rowBytes)
		for row := 0; row+d.rowBytes <= len(out); row += d.rowBytes {
			undoFloatingPoint(out[row:row+d.rowBytes], s.buf, l)
		}
		scratches.Put(s)
		return // the regrouped bytes come out little-endian
	}
	if l.bigEndian && l.sampleBytes > 1 {
		swapToLittleEndian(out, l.sampleBytes)
	}
	if d.f.Predictor == tiff.PredictorHorizontal {
		for row := 0; row+d.rowBytes <= len(out); row += d.rowBytes {
			undoHorizontal(out[row:row+d.rowBytes], l)
		}
	}
}

// swapToLittleEndian reverses the bytes of every sample of size n.
func swapToLittleEndian(p []byte, n int) {
	switch n {
	case 2:
		for i := 0; i+1 < len(p); i += 2 {
			p[i], p[i+1] = p[i+1], p[i]
		}
	case 4:
		for i := 0; i+3 < len(p); i += 4 {
			binary.LittleEndian.PutUint32(p[i:], binary.BigEndian.Uint32(p[i:]))
		}
	default:
		for i := 0; i+7 < len(p); i += 8 {
			binary.LittleEndian.PutUint64(p[i:], binary.BigEndian.Uint64(p[i:]))
		}
	}
}

// undoHorizontal undoes predictor 2 on one row of little-endian samples:
// each sample plus the same sample of the pixel before it, modulo its
// width. (Addition modulo 2^n gives the same bits whichever byte order
// the samples were differenced in, so the row is swapped first.)
func undoHorizontal(row []byte, l layout) {
	stride := l.pixelBytes()
	if l.samples == 1 {
		undoHorizontal1(row, l.sampleBytes)
		return
	}
	le := binary.LittleEndian
	switch l.sampleBytes {
	case 1:
		for i := stride; i < len(row); i++ {
			row[i] += row[i-stride]
		}
	case 2:
		for i := stride; i+1 < len(row); i += 2 {
			le.PutUint16(row[i:], le.Uint16(row[i:])+le.Uint16(row[i-stride:]))
		}
	case 4:
		for i := stride; i+3 < len(row); i += 4 {
			le.PutUint32(row[i:], le.Uint32(row[i:])+le.Uint32(row[i-stride:]))
		}
	default:
		for i := stride; i+7 < len(row); i += 8 {
			le.PutUint64(row[i:], le.Uint64(row[i:])+le.Uint64(row[i-stride:]))
		}
	}
}

// undoHorizontal1 is undoHorizontal for one sample per pixel: a running
// sum kept in a register instead of read back from the row.
func undoHorizontal1(row []byte, n int) {
	le := binary.LittleEndian
	switch n {
	case 1:
		var acc byte
		for i, v := range row {
			acc += v
			row[i] = acc
		}
	case 2:
		var acc uint16
		for i := 0; i+1 < len(row); i += 2 {
			acc += le.Uint16(row[i:])
			le.PutUint16(row[i:], acc)
		}
	case 4:
		var acc uint32
		for i := 0; i+3 < len(row); i += 4 {
			acc += le.Uint32(row[i:])
			le.PutUint32(row[i:], acc)
		}
	default:
		var acc uint64
		for i := 0; i+7 < len(row); i += 8 {
			acc += le.Uint64(row[i:])
			le.PutUint64(row[i:], acc)
		}
	}
}

// undoFloatingPoint undoes predictor 3 on one row, as libtiff's fpAcc
// does: each byte plus the byte one pixel's worth of samples before it,
// then the bytes regrouped from planes (the most significant byte of every
// sample first, whatever the file's byte order, as Technical Note 3 has
// it) into samples, here little-endian. tmp is scratch of the row's
// length. (libtiff 4.5 on little-endian hosts writes big-endian files
// with the planes least significant first, and reads them back wrong
// itself; such files decode here to byte-swapped samples.)
func undoFloatingPoint(row, tmp []byte, l layout) {
	for i := l.samples; i < len(row); i++ {
		row[i] += row[i-l.samples]
	}
	copy(tmp, row)
	n := len(row) / l.sampleBytes
	for plane := range l.sampleBytes {
		significance := l.sampleBytes - 1 - plane
		in := tmp[plane*n : (plane+1)*n]
		for k, b := range in {
			row[k*l.sampleBytes+significance] = b
		}
	}
}
