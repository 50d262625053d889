package source

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ometiff-go/ometiff/tiff"
)

// paletteTable is a palette page's ColorMap made ready to apply: the
// pixel each index stands for, as the image's spec has it.
type paletteTable struct {
	pix        []byte // pixelBytes a pixel, by index: of every index a band can hold
	pixelBytes int    // 3 or 1 sample of 1 byte, or of 2 for 16-bit indices
	indexBytes int    // 1, or 2 for 16-bit indices
	gray       bool   // every colour is a gray: one sample a pixel
}

// paletteOf reads the ColorMap of a palette page of one sample of 1, 2,
// 4, 8 or 16 bits, as libvips reads it: indices of up to 8 bits stand
// for colours of 8 bits, the map's high bytes (its low bytes when every
// high byte is 0, as writers of 8-bit maps store them), and 16-bit
// indices for colours of 16 bits; a map whose colours are all grays
// gives a gray image. The map must hold 3 × 2^BitsPerSample values, as
// libtiff requires.
func paletteOf(p *tiff.Page, l tiff.Layout) (*paletteTable, error) {
	switch {
	case l.SamplesPerPixel != 1:
		return nil, fmt.Errorf("%w: PhotometricInterpretation palette (ColorMap) with SamplesPerPixel %d of the page at %d (one index a pixel is read)",
			ErrUnsupported, l.SamplesPerPixel, p.Offset)
	case l.SampleFormat != tiff.SampleFormatUint || l.BitsPerSample > 16 || 16%l.BitsPerSample != 0:
		return nil, fmt.Errorf("%w: PhotometricInterpretation palette (ColorMap) with indices of %d bits of SampleFormat %d of the page at %d (unsigned 1, 2, 4, 8 or 16 bits are read)",
			ErrUnsupported, l.BitsPerSample, l.SampleFormat, p.Offset)
	}
	n := 1 << l.BitsPerSample
	e, ok := p.Field(tiff.TagColorMap)
	if !ok || e.Count != uint64(3*n) {
		count := "none"
		if ok {
			count = fmt.Sprint(e.Count, " values")
		}
		return nil, fmt.Errorf("%w: PhotometricInterpretation palette of the page at %d: ColorMap of %s, not 3 × 2^%d (BitsPerSample)",
			ErrMetadata, p.Offset, count, l.BitsPerSample)
	}
	v, err := e.Uints() // bounded by the file: the field's values were read from it
	if err != nil {
		return nil, fmt.Errorf("%w: ColorMap of the page at %d: %w", ErrMetadata, p.Offset, err)
	}
	if i := slices.IndexFunc(v, func(c uint64) bool { return c > 0xffff }); i >= 0 {
		// Stored as LONG: libtiff ignores such a map ("Incorrect value").
		return nil, fmt.Errorf("%w: ColorMap of the page at %d: value %d is %d, past 16 bits", ErrMetadata, p.Offset, i, v[i])
	}
	t := &paletteTable{gray: true, pixelBytes: 1}
	eightBit := true // every high byte 0
	for i := range n {
		r, g, b := v[i], v[n+i], v[2*n+i]
		if r != g || g != b {
			t.gray = false
		}
		if (r|g|b)>>8 != 0 {
			eightBit = false
		}
	}
	samples := 3
	if t.gray {
		samples = 1
	}
	size := 1
	if l.BitsPerSample == 16 {
		size = 2
	}
	t.pixelBytes, t.indexBytes = samples*size, size
	// Every byte's entry, so that no index of a band is past the table
	// (those past the map's, which a BandReader does not give, are black).
	t.pix = make([]byte, max(n, 256)*t.pixelBytes)
	for i := range n {
		for s := range samples {
			c := v[s*n+i]
			at := i*t.pixelBytes + s*size
			switch {
			case size == 2:
				binary.LittleEndian.PutUint16(t.pix[at:], uint16(c))
			case eightBit:
				t.pix[at] = byte(c)
			default:
				t.pix[at] = byte(c >> 8)
			}
		}
	}
	return t, nil
}

// apply returns the pixels the indices of band stand for (a byte each,
// or little-endian uint16s for 16-bit indices, as a BandReader gives
// them), in out's buffer when it is large enough.
func (t *paletteTable) apply(out, band []byte) []byte {
	size := t.indexBytes
	n := len(band) / size
	if cap(out) < n*t.pixelBytes {
		out = make([]byte, n*t.pixelBytes)
	}
	out = out[:n*t.pixelBytes]
	pix := t.pix
	switch {
	case size == 1 && t.pixelBytes == 1:
		for i, idx := range band {
			out[i] = pix[idx]
		}
	case size == 1 && t.pixelBytes == 3:
		for i, idx := range band {
			c := pix[3*int(idx):][:3]
			o := out[3*i:][:3]
			o[0], o[1], o[2] = c[0], c[1], c[2]
		}
	default:
		pb := t.pixelBytes
		for i := range n {
			idx := int(binary.LittleEndian.Uint16(band[2*i:]))
			copy(out[i*pb:(i+1)*pb], pix[idx*pb:])
		}
	}
	return out
}
