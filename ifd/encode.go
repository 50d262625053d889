package ifd

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Size returns the encoded length of the directory in classic TIFF or
// BigTIFF: entry count, entries, next-IFD offset and out-of-line values,
// each padded to a word boundary. Encode produces exactly this many bytes.
func (b *Builder) Size(bigTIFF bool) int64 {
	f := Format{BigTIFF: bigTIFF}
	n := f.tableSize(len(b.entries))
	for i := range b.entries {
		n += f.outOfLineSize(len(b.entries[i].Value))
	}
	return n
}

// tableSize is the size of the entry count, n entries and the next offset.
func (f Format) tableSize(n int) int64 {
	return f.countSize() + int64(n)*f.entrySize() + f.slotSize()
}

// outOfLineSize is the room a value of n bytes takes after the table: none
// when it fits in its entry, else n padded to a word boundary.
func (f Format) outOfLineSize(n int) int64 {
	if int64(n) <= f.slotSize() {
		return 0
	}
	return int64(n + n&1)
}

// Encode appends the directory to dst as it will sit at absolute file
// position pos, with next as its next-IFD offset. The bytes appended are
// exactly Size(f.BigTIFF) long. It fails on the builder's first error, an
// odd position, and anything the format cannot represent.
func (b *Builder) Encode(dst []byte, pos int64, next uint64, f Format) ([]byte, error) {
	size, err := b.check(pos, next, f)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = slices.Grow(dst, int(size))[:start+int(size)]
	out := dst[start:]
	clear(out) // the padding
	b.put(out, pos, next, f)
	return dst, nil
}

// put writes the directory at position pos into out, which is exactly its
// size and zeroed.
func (b *Builder) put(out []byte, pos int64, next uint64, f Format) {
	w := wordWriter{bigEndian: f.bigEndian(), long8: f.BigTIFF}
	slot := int(f.slotSize())
	at := int(f.countSize())
	values := int(f.tableSize(len(b.entries))) // where the next out-of-line value goes
	// The entry count: a SHORT, or a LONG8 in BigTIFF.
	switch {
	case f.BigTIFF:
		w.slot(out, uint64(len(b.entries)))
	case w.bigEndian:
		binary.BigEndian.PutUint16(out, uint16(len(b.entries)))
	default:
		binary.LittleEndian.PutUint16(out, uint16(len(b.entries)))
	}
	for i := range b.entries {
		e := &b.entries[i]
		w.tagType(out[at:], e.Tag, uint16(e.Type))
		w.slot(out[at+4:], e.Count)
		valueAt := at + 4 + slot
		if len(e.Value) > slot {
			w.slot(out[valueAt:], uint64(pos)+uint64(values))
			valueAt = values
			values += len(e.Value) + len(e.Value)&1
		}
		w.value(out[valueAt:], e)
		at += 4 + 2*slot
	}
	w.slot(out[at:], next)
}

// wordWriter puts words in the file's byte order, with direct calls and
// few branches: this is the inner loop of writing thousands of
// directories.
type wordWriter struct {
	bigEndian bool
	long8     bool // slots (counts, offsets, inline values) are 8 bytes, else 4
}

// tagType writes two SHORTs, a and b, at the start of p.
func (w wordWriter) tagType(p []byte, a, b uint16) {
	if w.bigEndian {
		binary.BigEndian.PutUint32(p, uint32(a)<<16|uint32(b))
	} else {
		binary.LittleEndian.PutUint32(p, uint32(a)|uint32(b)<<16)
	}
}

// slot writes v as a LONG or a LONG8 at the start of p.
func (w wordWriter) slot(p []byte, v uint64) {
	switch {
	case w.long8 && w.bigEndian:
		binary.BigEndian.PutUint64(p, v)
	case w.long8:
		binary.LittleEndian.PutUint64(p, v)
	case w.bigEndian:
		binary.BigEndian.PutUint32(p, uint32(v))
	default:
		binary.LittleEndian.PutUint32(p, uint32(v))
	}
}

// value writes e's little-endian value at the start of p, which has room
// for it, in the file's byte order.
func (w wordWriter) value(p []byte, e *Entry) {
	if !w.bigEndian {
		copy(p, e.Value)
		return
	}
	appendInOrder(p[:0], e.Value, e.Type.word(), true)
}

// check reports why the directory cannot be encoded at pos in format f,
// and otherwise returns its encoded size.
func (b *Builder) check(pos int64, next uint64, f Format) (int64, error) {
	if b.err != nil {
		return 0, b.err
	}
	if pos < 0 || pos&1 != 0 {
		return 0, fmt.Errorf("%w: %d", ErrAlign, pos)
	}
	limit := f.maxOffset()
	if !f.BigTIFF && len(b.entries) > math.MaxUint16 {
		return 0, fmt.Errorf("%w: %d entries in a classic directory", ErrRange, len(b.entries))
	}
	size := f.tableSize(len(b.entries))
	for _, e := range b.entries {
		if !f.BigTIFF && e.Type.bigTIFFOnly() {
			return 0, fmt.Errorf("%w: tag %d has BigTIFF type %v", ErrRange, e.Tag, e.Type)
		}
		if e.Count > limit {
			return 0, fmt.Errorf("%w: tag %d has %d values", ErrRange, e.Tag, e.Count)
		}
		size += f.outOfLineSize(len(e.Value))
	}
	if end := uint64(pos) + uint64(size); end-1 > limit || next > limit {
		return 0, fmt.Errorf("%w: directory at %d (next %d) past the %d-byte offset limit", ErrRange, pos, next, limit)
	}
	return size, nil
}

// appendInOrder appends src, made of little-endian words of the given
// size, in the file's byte order: big-endian when bigEndian.
func appendInOrder(dst, src []byte, word int, bigEndian bool) []byte {
	if word <= 1 || !bigEndian {
		return append(dst, src...)
	}
	for i := 0; i+word <= len(src); i += word {
		for j := word - 1; j >= 0; j-- {
			dst = append(dst, src[i+j])
		}
	}
	return dst
}
