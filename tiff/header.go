package tiff

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Header is the start of a TIFF file.
type Header struct {
	// Order is the byte order: binary.BigEndian, or little-endian for
	// anything else (nil included).
	Order binary.ByteOrder
	// BigTIFF selects the BigTIFF header and 64-bit offsets.
	BigTIFF bool
	// FirstIFD is the offset of the first directory.
	FirstIFD uint64
}

// bigEndian reports whether the header asks for big-endian order.
func (h Header) bigEndian() bool { return h.Order == binary.BigEndian }

// order returns the header's byte order in a form that can append.
func (h Header) order() binary.AppendByteOrder {
	if h.bigEndian() {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Size is the length of the encoded header: 8 bytes classic, 16 BigTIFF.
func (h Header) Size() int {
	if h.BigTIFF {
		return bigTIFFHeaderSize
	}
	return classicHeaderSize
}

// Append appends the encoded header to dst. A classic header cannot point
// past 4 GiB.
func (h Header) Append(dst []byte) ([]byte, error) {
	if !h.BigTIFF && h.FirstIFD > math.MaxUint32 {
		return dst, fmt.Errorf("%w: first IFD at %d in a classic TIFF", ErrTooLarge, h.FirstIFD)
	}
	if h.bigEndian() {
		dst = append(dst, orderBig...)
	} else {
		dst = append(dst, orderLittle...)
	}
	o := h.order()
	if !h.BigTIFF {
		dst = o.AppendUint16(dst, magicClassic)
		return o.AppendUint32(dst, uint32(h.FirstIFD)), nil
	}
	dst = o.AppendUint16(dst, magicBigTIFF)
	dst = o.AppendUint16(dst, bigTIFFOffsetSize)
	dst = o.AppendUint16(dst, 0)
	return o.AppendUint64(dst, h.FirstIFD), nil
}

// ParseHeader decodes the header at the start of p, which must hold at
// least 8 bytes (16 for BigTIFF).
func ParseHeader(p []byte) (Header, error) {
	if len(p) < classicHeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes", ErrNotTIFF, len(p))
	}
	var h Header
	var o binary.ByteOrder
	switch string(p[:2]) {
	case orderLittle:
		o = binary.LittleEndian
	case orderBig:
		o = binary.BigEndian
	default:
		return Header{}, fmt.Errorf("%w: byte order %q", ErrNotTIFF, p[:2])
	}
	h.Order = o
	switch o.Uint16(p[2:]) {
	case magicClassic:
		h.FirstIFD = uint64(o.Uint32(p[4:]))
	case magicBigTIFF:
		if len(p) < bigTIFFHeaderSize || o.Uint16(p[4:]) != bigTIFFOffsetSize || o.Uint16(p[6:]) != 0 {
			return Header{}, fmt.Errorf("%w: bad BigTIFF header", ErrNotTIFF)
		}
		h.BigTIFF = true
		h.FirstIFD = o.Uint64(p[8:])
	default:
		return Header{}, fmt.Errorf("%w: version %d", ErrNotTIFF, o.Uint16(p[2:]))
	}
	return h, nil
}
