package ifd

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Size returns the encoded length of the directory in classic TIFF or
// BigTIFF: entry count, entries, next-IFD offset and out-of-line values,
// each padded to a word boundary. Encode produces exactly this many bytes.
func (b *Builder) Size(bigTIFF bool) int64 {
	f := Format{BigTIFF: bigTIFF}
	n := f.tableSize(len(b.entries))
	for _, e := range b.entries {
		n += f.outOfLineSize(e)
	}
	return n
}

// tableSize is the size of the entry count, n entries and the next offset.
func (f Format) tableSize(n int) int64 {
	return f.countSize() + int64(n)*f.entrySize() + f.slotSize()
}

// outOfLineSize is the room e's value takes after the table: none when it
// fits in the entry, else its length padded to a word boundary.
func (f Format) outOfLineSize(e Entry) int64 {
	n := int64(len(e.Value))
	if n <= f.slotSize() {
		return 0
	}
	return n + n&1
}

// Encode appends the directory to dst as it will sit at absolute file
// position pos, with next as its next-IFD offset. The bytes appended are
// exactly Size(f.BigTIFF) long. It fails on the builder's first error, an
// odd position, and anything the format cannot represent.
func (b *Builder) Encode(dst []byte, pos int64, next uint64, f Format) ([]byte, error) {
	if err := b.check(pos, next, f); err != nil {
		return dst, err
	}
	order := f.order()
	values := uint64(pos + f.tableSize(len(b.entries))) // where the next out-of-line value goes
	dst = appendUint(dst, order, f.countSize(), uint64(len(b.entries)))
	for _, e := range b.entries {
		dst = order.AppendUint16(dst, e.Tag)
		dst = order.AppendUint16(dst, uint16(e.Type))
		dst = appendUint(dst, order, f.slotSize(), e.Count)
		if room := f.outOfLineSize(e); room > 0 {
			dst = appendUint(dst, order, f.slotSize(), values)
			values += uint64(room)
			continue
		}
		dst = appendValue(dst, order, e)
		dst = append(dst, zeros[:f.slotSize()-int64(len(e.Value))]...)
	}
	dst = appendUint(dst, order, f.slotSize(), next)
	for _, e := range b.entries {
		if room := f.outOfLineSize(e); room > 0 {
			dst = appendValue(dst, order, e)
			dst = append(dst, zeros[:room-int64(len(e.Value))]...)
		}
	}
	return dst, nil
}

// zeros pads inline values and word-aligns out-of-line ones.
var zeros [8]byte

// check reports why the directory cannot be encoded at pos in format f.
func (b *Builder) check(pos int64, next uint64, f Format) error {
	if b.err != nil {
		return b.err
	}
	if pos < 0 || pos&1 != 0 {
		return fmt.Errorf("%w: %d", ErrAlign, pos)
	}
	limit := f.maxOffset()
	if !f.BigTIFF && len(b.entries) > math.MaxUint16 {
		return fmt.Errorf("%w: %d entries in a classic directory", ErrRange, len(b.entries))
	}
	if end := uint64(pos) + uint64(b.Size(f.BigTIFF)); end-1 > limit || next > limit {
		return fmt.Errorf("%w: directory at %d (next %d) past the %d-byte offset limit", ErrRange, pos, next, limit)
	}
	for _, e := range b.entries {
		if !f.BigTIFF && e.Type.BigTIFFOnly() {
			return fmt.Errorf("%w: tag %d has BigTIFF type %v", ErrRange, e.Tag, e.Type)
		}
		if e.Count > limit {
			return fmt.Errorf("%w: tag %d has %d values", ErrRange, e.Tag, e.Count)
		}
	}
	return nil
}

// appendUint appends v in size bytes (2, 4 or 8).
func appendUint(dst []byte, order byteOrder, size int64, v uint64) []byte {
	switch size {
	case 2:
		return order.AppendUint16(dst, uint16(v))
	case 4:
		return order.AppendUint32(dst, uint32(v))
	default:
		return order.AppendUint64(dst, v)
	}
}

// appendValue appends e's little-endian value in the file's byte order.
func appendValue(dst []byte, order byteOrder, e Entry) []byte {
	return appendInOrder(dst, order, e.Value, e.Type.word())
}

// appendInOrder appends src, made of little-endian words of the given
// size, in byte order order. Decoding and encoding are the same swap.
func appendInOrder(dst []byte, order byteOrder, src []byte, word int) []byte {
	if word <= 1 || order == byteOrder(binary.LittleEndian) {
		return append(dst, src...)
	}
	for i := 0; i+word <= len(src); i += word {
		for j := word - 1; j >= 0; j-- {
			dst = append(dst, src[i+j])
		}
	}
	return dst
}

// Directory is a parsed IFD.
type Directory struct {
	Entries []Entry // in file order
	Next    uint64  // offset of the next directory; 0 ends the chain
}

// Get returns the entry with the tag, if present.
func (d *Directory) Get(tag uint16) (Entry, bool) {
	for _, e := range d.Entries {
		if e.Tag == tag {
			return e, true
		}
	}
	return Entry{}, false
}

// maxEntries bounds the entries of a parsed BigTIFF directory.
const maxEntries = 1 << 16

// Decode parses the directory at pos in a file of size bytes read through r.
// Entries of unknown types are returned with a nil Value. Every count and
// offset is checked against size; a violation is ErrMalformed.
func Decode(r io.ReaderAt, size, pos int64, f Format) (*Directory, error) {
	order := f.order()
	if pos < 0 || pos > size-f.countSize() {
		return nil, fmt.Errorf("%w: directory offset %d outside a %d-byte file", ErrMalformed, pos, size)
	}
	head, err := readAt(r, pos, f.countSize())
	if err != nil {
		return nil, err
	}
	n := readUint(head, order)
	if n > maxEntries || int64(n) > (size-pos)/f.entrySize() {
		return nil, fmt.Errorf("%w: %d entries at %d", ErrMalformed, n, pos)
	}
	table, err := readAt(r, pos+f.countSize(), int64(n)*f.entrySize()+f.slotSize())
	if err != nil {
		return nil, err
	}
	d := &Directory{Entries: make([]Entry, n)}
	for i := range d.Entries {
		raw := table[int64(i)*f.entrySize():][:f.entrySize()]
		if d.Entries[i], err = decodeEntry(r, size, raw, f); err != nil {
			return nil, err
		}
	}
	d.Next = readUint(table[int64(n)*f.entrySize():], order)
	return d, nil
}

// decodeEntry parses one entry and reads its value.
func decodeEntry(r io.ReaderAt, size int64, raw []byte, f Format) (Entry, error) {
	order := f.order()
	e := Entry{Tag: order.Uint16(raw), Type: Type(order.Uint16(raw[2:]))}
	e.Count = readUint(raw[4:4+f.slotSize()], order)
	slot := raw[4+f.slotSize():]
	if !e.Type.Valid() {
		return e, nil
	}
	if e.Count > uint64(size)/uint64(e.Type.Size()) {
		return e, fmt.Errorf("%w: tag %d has %d values in a %d-byte file", ErrMalformed, e.Tag, e.Count, size)
	}
	n := int64(e.Count) * int64(e.Type.Size())
	value := slot[:min(n, f.slotSize())]
	if n > f.slotSize() {
		off := readUint(slot, order)
		if off > uint64(size) || n > size-int64(off) {
			return e, fmt.Errorf("%w: tag %d value at %d+%d past the end (%d)", ErrMalformed, e.Tag, off, n, size)
		}
		var err error
		if value, err = readAt(r, int64(off), n); err != nil {
			return e, err
		}
	}
	e.Value = appendInOrder(make([]byte, 0, n), order, value, e.Type.word())
	return e, nil
}

// readUint reads a 2-, 4- or 8-byte unsigned integer filling p.
func readUint(p []byte, order binary.ByteOrder) uint64 {
	switch len(p) {
	case 2:
		return uint64(order.Uint16(p))
	case 4:
		return uint64(order.Uint32(p))
	default:
		return order.Uint64(p[:8])
	}
}

// readAt reads exactly n bytes at off.
func readAt(r io.ReaderAt, off, n int64) ([]byte, error) {
	p := make([]byte, n)
	if _, err := r.ReadAt(p, off); err != nil {
		return nil, fmt.Errorf("%w: reading %d bytes at %d: %v", ErrMalformed, n, off, err)
	}
	return p, nil
}
