// Package ifd builds TIFF image file directories (IFDs).
//
// A Builder collects the fields of one directory with typed adders. Encode
// then serializes the whole directory (entry count, entries sorted by tag,
// the next-IFD offset and the out-of-line values, each on a word boundary)
// into one byte slice for a given file position, byte order and kind of
// file (classic TIFF or BigTIFF), so that the writer above can hand it to
// the output in a single write. Size, known before encoding, always equals
// the encoded length, which lets the writer plan every offset first.
//
// Values are never truncated: a value that the chosen Format cannot
// represent (a LONG8, or an offset past 4 GiB, in classic TIFF) is an
// error, and AddUint picks the smallest unsigned type that holds its values.
//
// Reading directories back is package tiff's (tiff.Read), whose pages
// hold their fields as Entry values that a Builder takes unchanged.
//
// The package imports nothing else of ometiff; the tiff package builds the
// file layout on top of it.
package ifd

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Type is a TIFF field type (TIFF 6.0 Section 2 "Types"; BigTIFF adds
// LONG8, SLONG8 and IFD8; IFD is from TIFF Technical Note 1).
type Type uint16

// Field types.
const (
	Byte      Type = 1  // 8-bit unsigned integer
	ASCII     Type = 2  // 8-bit bytes of text ending in NUL
	Short     Type = 3  // 16-bit unsigned integer
	Long      Type = 4  // 32-bit unsigned integer
	Rational  Type = 5  // two LONGs: numerator, denominator
	SByte     Type = 6  // 8-bit signed integer
	Undefined Type = 7  // 8-bit bytes of any meaning
	SShort    Type = 8  // 16-bit signed integer
	SLong     Type = 9  // 32-bit signed integer
	SRational Type = 10 // two SLONGs: numerator, denominator
	Float     Type = 11 // IEEE 754 single precision
	Double    Type = 12 // IEEE 754 double precision
	IFD       Type = 13 // 32-bit offset of a directory
	Long8     Type = 16 // 64-bit unsigned integer (BigTIFF)
	SLong8    Type = 17 // 64-bit signed integer (BigTIFF)
	IFD8      Type = 18 // 64-bit offset of a directory (BigTIFF)
)

// typeDesc describes a field type.
type typeDesc struct {
	name string
	size int // bytes per value
	word int // bytes per byte-order unit (a RATIONAL swaps as two LONGs)
}

// typeInfo describes each known type; the zero entry (size 0) marks the
// numbers that are no type. An array, not a map: Size is on the path of
// every value a directory holds.
var typeInfo = [IFD8 + 1]typeDesc{
	Byte: {"BYTE", 1, 1}, ASCII: {"ASCII", 1, 1}, Short: {"SHORT", 2, 2},
	Long: {"LONG", 4, 4}, Rational: {"RATIONAL", 8, 4}, SByte: {"SBYTE", 1, 1},
	Undefined: {"UNDEFINED", 1, 1}, SShort: {"SSHORT", 2, 2}, SLong: {"SLONG", 4, 4},
	SRational: {"SRATIONAL", 8, 4}, Float: {"FLOAT", 4, 4}, Double: {"DOUBLE", 8, 8},
	IFD: {"IFD", 4, 4}, Long8: {"LONG8", 8, 8}, SLong8: {"SLONG8", 8, 8}, IFD8: {"IFD8", 8, 8},
}

// desc returns the type's description, all zero for an unknown type.
func (t Type) desc() typeDesc {
	if int(t) >= len(typeInfo) {
		return typeDesc{}
	}
	return typeInfo[t]
}

// Size is the byte size of one value of the type, or 0 for an unknown type.
func (t Type) Size() int { return t.desc().size }

// word is the byte-order unit of the type's values: they are swapped in
// pieces of this many bytes.
func (t Type) word() int { return t.desc().word }

// Valid reports whether t is a field type this package knows.
func (t Type) Valid() bool { return t.Size() > 0 }

// bigTIFFOnly reports whether t exists only in BigTIFF files.
func (t Type) bigTIFFOnly() bool { return t == Long8 || t == SLong8 || t == IFD8 }

// String returns the type's name in the specification.
func (t Type) String() string {
	if t.Valid() {
		return t.desc().name
	}
	return fmt.Sprintf("TYPE(%d)", uint16(t))
}

// Format is how the file a directory lives in is written, as the writer
// resolved it: its byte order, and classic TIFF or BigTIFF.
type Format struct {
	// Order is the file's byte order: binary.BigEndian, or little-endian
	// for anything else (nil included).
	Order binary.ByteOrder
	// BigTIFF selects BigTIFF (64-bit counts and offsets) over classic
	// TIFF (32-bit).
	BigTIFF bool
}

// bigEndian reports whether the file is big-endian; any Order but
// binary.BigEndian means little-endian.
func (f Format) bigEndian() bool { return f.Order == binary.BigEndian }

// entrySize, countSize and slotSize give the directory geometry.
func (f Format) entrySize() int64 {
	if f.BigTIFF {
		return 20
	}
	return 12
}

func (f Format) countSize() int64 {
	if f.BigTIFF {
		return 8
	}
	return 2
}

// slotSize is the room for an inline value in an entry, and the size of an
// offset.
func (f Format) slotSize() int64 {
	if f.BigTIFF {
		return 8
	}
	return 4
}

// maxOffset is the largest offset or count the format can hold.
func (f Format) maxOffset() uint64 {
	if f.BigTIFF {
		return 1<<63 - 1
	}
	return 1<<32 - 1
}

// Errors. Each message starts with "ifd: "; test with errors.Is.
var (
	// ErrDuplicate is a tag added twice to one directory.
	ErrDuplicate = errors.New("ifd: duplicate tag")
	// ErrEmpty is a field with no values.
	ErrEmpty = errors.New("ifd: empty value list")
	// ErrType is an unknown field type or a value of the wrong length.
	ErrType = errors.New("ifd: bad field type or value length")
	// ErrText is ASCII text containing a NUL byte.
	ErrText = errors.New("ifd: NUL byte inside ASCII text")
	// ErrRange is a value, count or offset the format cannot represent.
	ErrRange = errors.New("ifd: value does not fit the format")
	// ErrAlign is a directory placed at an odd offset.
	ErrAlign = errors.New("ifd: directory not on a word boundary")
)
