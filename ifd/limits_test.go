package ifd

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddRefusesCountsThatOverflow: a Count whose byte size wraps past
// 2^64 (2^61 LONG8s are 2^64 bytes, so 0) would match an empty Value if
// Add only compared the product; such an entry must be ErrType at Add, and
// Encode must refuse it even in BigTIFF, whose counts reach 2^63-1.
func TestAddRefusesCountsThatOverflow(t *testing.T) {
	tests := []struct {
		name  string
		typ   Type
		count uint64
	}{
		{"LONG8 2^61", Long8, 1 << 61},
		{"SLONG8 2^61", SLong8, 1 << 61},
		{"IFD8 2^61", IFD8, 1 << 61},
		{"DOUBLE 2^61", Double, 1 << 61},
		{"RATIONAL 2^61", Rational, 1 << 61},
		{"LONG 2^62", Long, 1 << 62},
		{"SHORT 2^63", Short, 1 << 63},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b Builder
			b.Add(Entry{Tag: 324, Type: tt.typ, Count: tt.count})
			require.ErrorIs(t, b.Err(), ErrType)
			assert.Zero(t, b.Len(), "the entry is not kept")
			_, err := b.Encode(nil, 16, 0, bigLE)
			assert.ErrorIs(t, err, ErrType)
		})
	}
}

// putSRational returns the little-endian value of one SRATIONAL.
func putSRational(num, den int32) []byte {
	v := binary.LittleEndian.AppendUint32(nil, uint32(num))
	return binary.LittleEndian.AppendUint32(v, uint32(den))
}

// TestFloatsOfSRational: numerator and denominator of an SRATIONAL are
// signed; read as unsigned, -1/2 would be 4294967295/2.
func TestFloatsOfSRational(t *testing.T) {
	tests := []struct {
		num, den int32
		want     float64
	}{
		{-1, 2, -0.5},
		{1, -2, -0.5},
		{-3, -4, 0.75},
		{7, 2, 3.5},
		{-2147483648, 1, -2147483648},
	}
	for _, tt := range tests {
		var b Builder
		b.Add(Entry{Tag: 404, Type: SRational, Count: 1, Value: putSRational(tt.num, tt.den)})
		require.NoError(t, b.Err())
		e, _ := b.Get(404)
		got, err := e.Floats()
		require.NoError(t, err)
		assert.Equal(t, []float64{tt.want}, got, "%d/%d", tt.num, tt.den)
	}
}

// TestTextTrimsEveryTrailingNUL: writers pad ASCII values with several
// NULs (to an even length, or a fixed field size); Text drops them all,
// not only the terminating one.
func TestTextTrimsEveryTrailingNUL(t *testing.T) {
	tests := []struct {
		value string
		want  string
	}{
		{"abc\x00", "abc"},
		{"abc\x00\x00", "abc"},
		{"abc\x00\x00\x00\x00", "abc"},
		{"\x00\x00", ""},
		{"abc", "abc"}, // no terminator at all, as some writers leave it
	}
	for _, tt := range tests {
		e := Entry{Tag: 270, Type: ASCII, Count: uint64(len(tt.value)), Value: []byte(tt.value)}
		got, err := e.Text()
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, "%q", tt.value)
	}
}

// TestClassicEntryLimit: a classic directory counts its entries in a
// SHORT, so 65,535 is the most it holds; one more is ErrRange, never a
// count that wraps to 0. BigTIFF counts in a LONG8 and takes 65,536.
func TestClassicEntryLimit(t *testing.T) {
	tests := []struct {
		name    string
		entries int
		f       Format
		want    error
	}{
		{"65,535 classic LE", 65535, classicLE, nil},
		{"65,535 classic BE", 65535, classicBE, nil},
		{"65,536 classic LE", 65536, classicLE, ErrRange},
		{"65,536 classic BE", 65536, classicBE, ErrRange},
		{"65,536 BigTIFF", 65536, bigLE, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b Builder
			for tag := range tt.entries {
				b.AddShort(uint16(tag), 1)
			}
			require.NoError(t, b.Err())
			enc, err := b.Encode(nil, 16, 0, tt.f)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			require.Len(t, enc, int(b.Size(tt.f.BigTIFF)))
			var n uint64
			switch {
			case tt.f.BigTIFF:
				n = binary.LittleEndian.Uint64(enc)
			case tt.f.bigEndian():
				n = uint64(binary.BigEndian.Uint16(enc))
			default:
				n = uint64(binary.LittleEndian.Uint16(enc))
			}
			assert.Equal(t, uint64(tt.entries), n, "the entry count written")
		})
	}
}
