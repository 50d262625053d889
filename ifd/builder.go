package ifd

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Entry is one field of a directory. Value holds Count values of Type in
// little-endian order, whatever the file's byte order; Encode converts
// (and tiff.Read, which returns entries of this type).
type Entry struct {
	Tag   uint16
	Type  Type
	Count uint64
	Value []byte
}

// Fraction is the value of a RATIONAL field: Num / Den.
type Fraction struct{ Num, Den uint32 }

// Builder collects the fields of one directory. The zero value is an empty
// directory. Adders record the first error they meet (a duplicate tag, an
// empty list, an unknown type); Err, Size's callers and Encode report it.
//
// A Builder is not safe for concurrent use while it is modified (the
// adders, Remove, Reset). Once built, its reading methods (Encode, Size,
// Entries, Get, Len, Err, Clone, and AddAll into another builder) change
// nothing, so one builder may serve many directories and goroutines at
// once, as package tiff's directories share one.
type Builder struct {
	entries []Entry // sorted by tag
	err     error
}

// Err returns the first error an adder met.
func (b *Builder) Err() error { return b.err }

// Len returns the number of fields.
func (b *Builder) Len() int { return len(b.entries) }

// Reset empties the builder for reuse.
func (b *Builder) Reset() {
	clear(b.entries)
	b.entries = b.entries[:0]
	b.err = nil
}

// Clone returns an independent copy of the builder.
func (b *Builder) Clone() *Builder {
	size := 0
	for _, e := range b.entries {
		size += len(e.Value)
	}
	// Two allocations whatever the number of fields, with room for a few
	// more entries: writers clone a shared directory to add its offsets.
	c := &Builder{entries: make([]Entry, len(b.entries), len(b.entries)+4), err: b.err}
	values := make([]byte, 0, size)
	for i, e := range b.entries {
		start := len(values)
		values = append(values, e.Value...)
		e.Value = values[start:len(values):len(values)]
		c.entries[i] = e
	}
	return c
}

// AddAll adds every field of other. Values are shared, not copied: builders
// never modify a value once added. Into an empty builder this is a plain
// copy of the entries, so a reused builder (Reset, AddAll, then a few adds)
// derives directories from a shared template without allocating.
func (b *Builder) AddAll(other *Builder) {
	if other.err != nil {
		b.fail(other.err)
	}
	if len(b.entries) == 0 {
		b.entries = append(b.entries, other.entries...)
		return
	}
	for _, e := range other.entries {
		b.insert(e)
	}
}

// Entries returns the fields sorted by tag. The slice is the builder's own;
// do not modify it.
func (b *Builder) Entries() []Entry { return b.entries }

// Get returns the field with the tag, if present.
func (b *Builder) Get(tag uint16) (Entry, bool) {
	i, ok := b.find(tag)
	if !ok {
		return Entry{}, false
	}
	return b.entries[i], true
}

// Remove deletes the field with the tag, if present.
func (b *Builder) Remove(tag uint16) {
	if i, ok := b.find(tag); ok {
		b.entries = slices.Delete(b.entries, i, i+1)
	}
}

// find returns where the field with the tag is, or would be inserted, and
// whether it is there. Most fields arrive in tag order, so the end is
// tried first.
func (b *Builder) find(tag uint16) (int, bool) {
	n := len(b.entries)
	if n == 0 || b.entries[n-1].Tag < tag {
		return n, false
	}
	i, j := 0, n
	for i < j {
		h := int(uint(i+j) >> 1)
		if b.entries[h].Tag < tag {
			i = h + 1
		} else {
			j = h
		}
	}
	return i, b.entries[i].Tag == tag
}

// Add adds a field given as raw little-endian values. It checks that the
// type is known and that Value holds exactly Count values.
func (b *Builder) Add(e Entry) {
	switch {
	case !e.Type.Valid():
		b.fail(fmt.Errorf("%w: tag %d has type %d", ErrType, e.Tag, uint16(e.Type)))
	case e.Count == 0:
		b.fail(fmt.Errorf("%w: tag %d", ErrEmpty, e.Tag))
	case uint64(len(e.Value)) != e.Count*uint64(e.Type.Size()) || e.Count > math.MaxInt64/8:
		b.fail(fmt.Errorf("%w: tag %d holds %d bytes for %d %v values", ErrType, e.Tag, len(e.Value), e.Count, e.Type))
	default:
		b.insert(e)
	}
}

func (b *Builder) insert(e Entry) {
	i, dup := b.find(e.Tag)
	if dup {
		b.fail(fmt.Errorf("%w: %d", ErrDuplicate, e.Tag))
		return
	}
	b.entries = slices.Insert(b.entries, i, e)
}

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// AddByte adds a BYTE field.
func (b *Builder) AddByte(tag uint16, v ...byte) {
	b.Add(Entry{Tag: tag, Type: Byte, Count: uint64(len(v)), Value: slices.Clone(v)})
}

// AddASCII adds an ASCII field holding s and the terminating NUL. TIFF
// says 7-bit ASCII; UTF-8 (as OME-XML uses) passes through unchanged. A
// NUL inside s is an error.
func (b *Builder) AddASCII(tag uint16, s string) {
	if strings.IndexByte(s, 0) >= 0 {
		b.fail(fmt.Errorf("%w: tag %d", ErrText, tag))
		return
	}
	v := make([]byte, len(s)+1)
	copy(v, s)
	b.Add(Entry{Tag: tag, Type: ASCII, Count: uint64(len(v)), Value: v})
}

// AddShort adds a SHORT field.
func (b *Builder) AddShort(tag uint16, v ...uint16) {
	b.addWords(tag, Short, len(v), func(p []byte, i int) { binary.LittleEndian.PutUint16(p, v[i]) })
}

// AddLong adds a LONG field.
func (b *Builder) AddLong(tag uint16, v ...uint32) {
	b.addWords(tag, Long, len(v), func(p []byte, i int) { binary.LittleEndian.PutUint32(p, v[i]) })
}

// AddRational adds a RATIONAL field.
func (b *Builder) AddRational(tag uint16, v ...Fraction) {
	b.addWords(tag, Rational, len(v), func(p []byte, i int) {
		binary.LittleEndian.PutUint32(p, v[i].Num)
		binary.LittleEndian.PutUint32(p[4:], v[i].Den)
	})
}

// AddFloat adds a FLOAT field.
func (b *Builder) AddFloat(tag uint16, v ...float32) {
	b.addWords(tag, Float, len(v), func(p []byte, i int) { binary.LittleEndian.PutUint32(p, math.Float32bits(v[i])) })
}

// AddDouble adds a DOUBLE field.
func (b *Builder) AddDouble(tag uint16, v ...float64) {
	b.addWords(tag, Double, len(v), func(p []byte, i int) { binary.LittleEndian.PutUint64(p, math.Float64bits(v[i])) })
}

// AddUint adds unsigned integers as SHORT, LONG or LONG8: the smallest type
// that holds every value. A LONG8 field makes the directory BigTIFF-only.
// (Other types, IFD offsets among them, go through Add; the offsets of
// SubIFDs are the tiff writer's to place.)
func (b *Builder) AddUint(tag uint16, v ...uint64) {
	var largest uint64
	for _, x := range v {
		largest = max(largest, x)
	}
	switch {
	case largest <= math.MaxUint16:
		b.addWords(tag, Short, len(v), func(p []byte, i int) { binary.LittleEndian.PutUint16(p, uint16(v[i])) })
	case largest <= math.MaxUint32:
		b.addWords(tag, Long, len(v), func(p []byte, i int) { binary.LittleEndian.PutUint32(p, uint32(v[i])) })
	default:
		b.addWords(tag, Long8, len(v), func(p []byte, i int) { binary.LittleEndian.PutUint64(p, v[i]) })
	}
}

// addWords adds n values of t, each put by put into its slot.
func (b *Builder) addWords(tag uint16, t Type, n int, put func(p []byte, i int)) {
	size := t.Size()
	value := make([]byte, n*size)
	for i := range n {
		put(value[i*size:], i)
	}
	b.Add(Entry{Tag: tag, Type: t, Count: uint64(n), Value: value})
}
