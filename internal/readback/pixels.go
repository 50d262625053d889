package readback

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Image is a decoded directory: the full image, without tile padding,
// samples interleaved and little-endian.
type Image struct {
	Width, Height, Samples, BytesPerSample int
	SampleFormat                           uint64 // 1 uint, 2 int, 3 float
	Pix                                    []byte
}

// geometry is what decoding a directory needs.
type geometry struct {
	width, height, samples, bps int
	blockW, blockH              int // tile size, or width x rows per strip
	tiled                       bool
	compression, predictor      uint64
}

func (f *File) geometry(d *IFD) (geometry, error) {
	g := geometry{
		width: int(d.Uint(256, 0)), height: int(d.Uint(257, 0)), samples: int(d.Uint(277, 1)),
		compression: d.Uint(259, 1), predictor: d.Uint(317, 1),
	}
	bits := d.Uints(258)
	if len(bits) == 0 || bits[0]%8 != 0 || len(bits) != g.samples {
		return g, fmt.Errorf("readback: BitsPerSample %v for %d samples", bits, g.samples)
	}
	g.bps = int(bits[0] / 8)
	if d.Uint(284, 1) != 1 {
		return g, fmt.Errorf("readback: only contiguous samples are supported")
	}
	g.tiled = d.Has(322)
	if g.tiled {
		g.blockW, g.blockH = int(d.Uint(322, 0)), int(d.Uint(323, 0))
	} else {
		g.blockW, g.blockH = g.width, int(min(d.Uint(278, uint64(g.height)), uint64(g.height)))
	}
	if g.width <= 0 || g.height <= 0 || g.blockW <= 0 || g.blockH <= 0 {
		return g, fmt.Errorf("readback: bad geometry %+v", g)
	}
	return g, nil
}

// blocks is what reading d's tiles or strips needs: its geometry, its
// decoder and where its blocks are.
type blocks struct {
	geometry
	decode          func([]byte) ([]byte, error)
	offsets, counts []uint64
}

// blocks returns what reading d's blocks needs, or why they cannot be read.
func (f *File) blocks(d *IFD) (blocks, error) {
	g, err := f.geometry(d)
	if err != nil {
		return blocks{}, err
	}
	decode, err := decoderFor(g.compression)
	if err != nil {
		return blocks{}, err
	}
	offTag, countTag := uint16(273), uint16(279)
	if g.tiled {
		offTag, countTag = 324, 325
	}
	return blocks{geometry: g, decode: decode, offsets: d.Uints(offTag), counts: d.Uints(countTag)}, nil
}

// read reads block i of b and decompresses it.
func (f *File) read(b blocks, i int) ([]byte, error) {
	raw, err := f.Block(b.offsets[i], b.counts[i])
	if err == nil {
		raw, err = b.decode(raw)
	}
	if err != nil {
		return nil, fmt.Errorf("readback: block %d: %w", i, err)
	}
	return raw, nil
}

// Image decodes every tile or strip of d and assembles the image.
func (f *File) Image(d *IFD) (*Image, error) {
	b, err := f.blocks(d)
	if err != nil {
		return nil, err
	}
	g := b.geometry
	across := (g.width + g.blockW - 1) / g.blockW
	down := (g.height + g.blockH - 1) / g.blockH
	if len(b.offsets) != across*down || len(b.counts) != len(b.offsets) {
		return nil, fmt.Errorf("readback: %d offsets and %d counts for %dx%d blocks", len(b.offsets), len(b.counts), across, down)
	}
	pixel := g.samples * g.bps
	im := &Image{Width: g.width, Height: g.height, Samples: g.samples, BytesPerSample: g.bps,
		SampleFormat: d.Uint(339, 1), Pix: make([]byte, g.width*g.height*pixel)}
	for i := range b.offsets {
		raw, err := f.read(b, i)
		if err != nil {
			return nil, err
		}
		bx, by := i%across, i/across
		rows := g.blockH
		if !g.tiled {
			rows = min(g.blockH, g.height-by*g.blockH)
		}
		if len(raw) != g.blockW*rows*pixel {
			return nil, fmt.Errorf("readback: block %d decodes to %d bytes, want %d", i, len(raw), g.blockW*rows*pixel)
		}
		block, err := f.unpredict(raw, g, rows)
		if err != nil {
			return nil, err
		}
		place(im, block, g, bx, by, rows)
	}
	return im, nil
}

// Tile decodes block i of d, a tile or strip, alone: its samples
// little-endian, the predictor undone, a tile's padding kept. It reads a
// sample of a file too large to decode whole.
func (f *File) Tile(d *IFD, i int) ([]byte, error) {
	b, err := f.blocks(d)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(b.offsets) || i >= len(b.counts) {
		return nil, fmt.Errorf("readback: block %d of %d", i, len(b.offsets))
	}
	raw, err := f.read(b, i)
	if err != nil {
		return nil, err
	}
	rows := len(raw) / (b.blockW * b.samples * b.bps)
	return f.unpredict(raw, b.geometry, rows)
}

// Block reads the n bytes of a tile or strip at off.
func (f *File) Block(off, n uint64) ([]byte, error) {
	if off > uint64(f.size) || n > uint64(f.size)-off {
		return nil, fmt.Errorf("readback: block at %d+%d past the end (%d)", off, n, f.size)
	}
	p := make([]byte, n)
	if _, err := f.r.ReadAt(p, int64(off)); err != nil {
		return nil, err
	}
	return p, nil
}

// place copies a decoded block into the image, dropping tile padding.
func place(im *Image, block []byte, g geometry, bx, by, rows int) {
	pixel := g.samples * g.bps
	x0 := bx * g.blockW
	n := min(g.blockW, g.width-x0) * pixel
	for y := range rows {
		iy := by*g.blockH + y
		if iy >= g.height {
			return
		}
		copy(im.Pix[(iy*g.width+x0)*pixel:][:n], block[y*g.blockW*pixel:])
	}
}

// unpredict undoes the predictor row by row and returns little-endian
// samples.
func (f *File) unpredict(raw []byte, g geometry, rows int) ([]byte, error) {
	rowBytes := g.blockW * g.samples * g.bps
	switch g.predictor {
	case 1:
		return toLittle(raw, f.Order, g.bps), nil
	case 2:
		out := toLittle(raw, f.Order, g.bps)
		for y := range rows {
			undoHorizontal(out[y*rowBytes:(y+1)*rowBytes], g.samples, g.bps)
		}
		return out, nil
	case 3:
		out := make([]byte, len(raw))
		for y := range rows {
			undoFloatingPoint(out[y*rowBytes:(y+1)*rowBytes], raw[y*rowBytes:(y+1)*rowBytes], g.samples, g.bps)
		}
		return out, nil
	}
	return nil, fmt.Errorf("readback: predictor %d not supported", g.predictor)
}

// toLittle returns samples of size bps converted from order to little-endian.
func toLittle(p []byte, order binary.ByteOrder, bps int) []byte {
	out := append([]byte(nil), p...)
	if order == binary.LittleEndian || bps == 1 {
		return out
	}
	for i := 0; i+bps <= len(out); i += bps {
		for j := range bps / 2 {
			out[i+j], out[i+bps-1-j] = out[i+bps-1-j], out[i+j]
		}
	}
	return out
}

// undoHorizontal adds each sample to the same sample of the pixel before,
// modulo the sample size, on little-endian samples.
func undoHorizontal(row []byte, samples, bps int) {
	stride := samples * bps
	for i := stride; i+bps <= len(row); i += bps {
		var carry uint16
		for j := range bps {
			sum := uint16(row[i+j]) + uint16(row[i-stride+j]) + carry
			row[i+j], carry = byte(sum), sum>>8
		}
	}
}

// undoFloatingPoint reverses TIFF Technical Note 3: the row's bytes were
// split into planes, most significant byte first, and byte-differenced
// with a stride of one pixel's samples.
func undoFloatingPoint(dst, row []byte, samples, bps int) {
	acc := append([]byte(nil), row...)
	for i := samples; i < len(acc); i++ {
		acc[i] += acc[i-samples]
	}
	values := len(row) / bps
	for k := range values {
		for j := range bps { // j: significance, 0 = least
			dst[k*bps+j] = acc[(bps-1-j)*values+k]
		}
	}
}

// PSNR returns the peak signal-to-noise ratio of 8-bit samples b against
// a, in dB (+Inf for equal slices): how lossy codecs' output is compared
// with its source. Slices of different lengths, or empty, have none: NaN,
// which fails every comparison a test makes of it (-Inf would pass one
// that a PSNR be at least another's).
func PSNR(a, b []byte) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return math.NaN()
	}
	var sum float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		sum += d * d
	}
	if sum == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255*float64(len(a))/sum)
}
