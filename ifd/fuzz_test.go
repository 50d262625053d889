package ifd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzRoundTrip decodes random entry sets from the input, encodes them in
// the byte order and TIFF kind (classic or BigTIFF) the input picks and
// requires the promised size (package tiff's FuzzBuilderRoundTrip reads
// such directories back). Inputs the builder or the format rejects must
// give a typed error.
func FuzzRoundTrip(f *testing.F) {
	f.Add(byte(0), uint32(8), []byte{1, 1, 3, 2, 0xff, 0xff, 2, 1, 2, 5, 'h', 'i', 'x', 'y', 'z'})
	f.Add(byte(3), uint32(16), []byte{0x30, 1, 16, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, kind byte, pos uint32, data []byte) {
		format := Format{BigTIFF: kind&1 != 0}
		if kind&2 != 0 {
			format.Order = binary.BigEndian
		}
		b := entriesFrom(data)
		enc, err := b.Encode(make([]byte, pos%4096), int64(pos%4096), uint64(pos), format)
		if err != nil {
			if !typedError(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		start := int64(pos % 4096)
		if got := int64(len(enc)) - start; got != b.Size(format.BigTIFF) {
			t.Fatalf("encoded %d bytes, Size %d", got, b.Size(format.BigTIFF))
		}
	})
}

// entriesFrom reads entries from data: tag low byte, type, count, then the
// value bytes (cycled from the input when it runs short).
func entriesFrom(data []byte) *Builder {
	var b Builder
	for len(data) >= 3 {
		tag, count := uint16(data[0])<<4|uint16(data[1]&0xf), uint64(data[2]%40)
		typ := fuzzTypes[int(data[1]>>4)%len(fuzzTypes)]
		data = data[3:]
		n := int(count) * typ.Size()
		value := make([]byte, n)
		for i := range value {
			if len(data) > 0 {
				value[i] = data[i%len(data)]
			}
		}
		if typ == ASCII {
			value = bytes.ReplaceAll(value, []byte{0}, []byte{'.'})
			if len(value) > 0 {
				value[len(value)-1] = 0
			}
		}
		b.Add(Entry{Tag: tag, Type: typ, Count: count, Value: value})
		data = data[min(len(data), n):]
	}
	return &b
}

// fuzzTypes are the known types plus one unknown.
var fuzzTypes = []Type{Byte, ASCII, Short, Long, Rational, SByte, Undefined, SShort, SLong, SRational, Float, Double, IFD, Long8, SLong8, IFD8, 99}

func typedError(err error) bool {
	for _, e := range []error{ErrDuplicate, ErrEmpty, ErrType, ErrText, ErrRange, ErrAlign} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
