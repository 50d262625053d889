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
	size, err := b.check(pos, next, f)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = slices.Grow(dst, int(size))[:start+int(size)]
	out := dst[start:]
	clear(out) // the padding
	b.put(out, pos, next, f, nil)
	return dst, nil
}

// EncodeAgain turns enc, this directory as Encode wrote it for another
// position, into the directory at pos with next-IFD offset next, in
// place: it moves the offsets of the out-of-line values, and puts again
// the values of the fields tagged refresh, which may have changed since
// (with the same types and counts). Every other field must be as it was
// when enc was encoded; with no tag named, every field is put again. A
// directory like the one before it (the planes of a stack) then costs a
// few words instead of a whole encoding.
func (b *Builder) EncodeAgain(enc []byte, pos int64, next uint64, f Format, refresh ...uint16) error {
	size, err := b.check(pos, next, f)
	if err != nil {
		return err
	}
	if int64(len(enc)) != size {
		return fmt.Errorf("%w: %d bytes to encode again, the directory takes %d", ErrRange, len(enc), size)
	}
	b.put(enc, pos, next, f, refresh)
	return nil
}

// put writes the directory at position pos into out, which is exactly its
// size: every entry and value when refresh is nil, else only what moves
// with the position (the offsets of out-of-line values, the next offset)
// and the values of the fields tagged refresh. It writes no padding.
func (b *Builder) put(out []byte, pos int64, next uint64, f Format, refresh []uint16) {
	w := wordWriter{bigEndian: f.bigEndian()}
	slot := int(f.slotSize())
	at := int(f.countSize())
	values := int(f.tableSize(len(b.entries))) // where the next out-of-line value goes
	if refresh == nil {
		w.put(out, int(f.countSize()), uint64(len(b.entries)))
	}
	for _, e := range b.entries {
		if refresh == nil {
			w.put(out[at:], 2, uint64(e.Tag))
			w.put(out[at+2:], 2, uint64(e.Type))
			w.put(out[at+4:], slot, e.Count)
		}
		valueAt := at + 4 + slot
		if len(e.Value) > slot {
			w.put(out[valueAt:], slot, uint64(pos)+uint64(values))
			valueAt = values
			values += len(e.Value) + len(e.Value)&1
		}
		if refresh == nil || slices.Contains(refresh, e.Tag) {
			w.value(out[valueAt:], e)
		}
		at += int(f.entrySize())
	}
	w.put(out[at:], slot, next)
}

// wordWriter puts words in the file's byte order, with direct calls: this
// is the inner loop of writing thousands of directories.
type wordWriter struct{ bigEndian bool }

// put writes v in size bytes (2, 4 or 8) at the start of p.
func (w wordWriter) put(p []byte, size int, v uint64) {
	switch {
	case size == 2 && w.bigEndian:
		binary.BigEndian.PutUint16(p, uint16(v))
	case size == 2:
		binary.LittleEndian.PutUint16(p, uint16(v))
	case size == 4 && w.bigEndian:
		binary.BigEndian.PutUint32(p, uint32(v))
	case size == 4:
		binary.LittleEndian.PutUint32(p, uint32(v))
	case w.bigEndian:
		binary.BigEndian.PutUint64(p, v)
	default:
		binary.LittleEndian.PutUint64(p, v)
	}
}

// value writes e's little-endian value at the start of p, which has room
// for it, in the file's byte order.
func (w wordWriter) value(p []byte, e Entry) {
	appendInOrder(p[:0], e.Value, e.Type.word(), w.bigEndian)
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
		if !f.BigTIFF && e.Type.BigTIFFOnly() {
			return 0, fmt.Errorf("%w: tag %d has BigTIFF type %v", ErrRange, e.Tag, e.Type)
		}
		if e.Count > limit {
			return 0, fmt.Errorf("%w: tag %d has %d values", ErrRange, e.Tag, e.Count)
		}
		size += f.outOfLineSize(e)
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
