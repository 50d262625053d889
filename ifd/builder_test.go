package ifd

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	classicLE = Format{}
	classicBE = Format{Order: binary.BigEndian}
	bigLE     = Format{BigTIFF: true}
	bigBE     = Format{Order: binary.BigEndian, BigTIFF: true}
)

func TestEncodeKnownBytes(t *testing.T) {
	var b Builder
	b.AddASCII(305, "ometiff") // out of line, added first: entries get sorted
	b.AddLong(273, 8)
	b.AddShort(256, 100)

	got, err := b.Encode(nil, 8, 0, classicLE)
	require.NoError(t, err)
	want := "0300" +
		"0001" + "0300" + "01000000" + "64000000" +
		"1101" + "0400" + "01000000" + "08000000" +
		"3101" + "0200" + "08000000" + "32000000" +
		"00000000" +
		hex.EncodeToString([]byte("ometiff\x00"))
	assert.Equal(t, want, hex.EncodeToString(got))
	assert.Equal(t, int64(len(got)), b.Size(false))

	got, err = b.Encode(nil, 16, 0x1234, bigBE)
	require.NoError(t, err)
	want = "0000000000000003" +
		"0100" + "0003" + "0000000000000001" + "0064000000000000" +
		"0111" + "0004" + "0000000000000001" + "0000000800000000" +
		"0131" + "0002" + "0000000000000008" + "6f6d657469666600" + // 8 bytes fit inline in BigTIFF
		"0000000000001234"
	assert.Equal(t, want, hex.EncodeToString(got))
}

// sample builds a directory with every adder and values in and out of line.
func sample() *Builder {
	var b Builder
	b.AddShort(256, 70000%65536)
	b.AddUint(257, 70000)
	b.AddShort(258, 16, 16, 16)
	b.AddByte(400, 1, 2, 3, 4, 5)
	b.AddASCII(270, "<OME>déjà vu</OME>")
	b.AddASCII(305, "")
	b.AddLong(324, 16, 1<<31, 1<<32-1)
	b.AddRational(282, Fraction{10000, 1}, Fraction{3, 7})
	b.AddFloat(401, 1.5, float32(math.Inf(-1)))
	b.AddDouble(402, math.Pi)
	b.Add(Entry{Tag: 330, Type: IFD, Count: 2, Value: []byte{0xe8, 3, 0, 0, 0xd0, 7, 0, 0}})
	b.Add(Entry{Tag: 403, Type: SShort, Count: 2, Value: []byte{0xff, 0xff, 1, 0}})
	b.Add(Entry{Tag: 404, Type: SRational, Count: 1, Value: []byte{0xfe, 0xff, 0xff, 0xff, 3, 0, 0, 0}})
	return &b
}

func TestOutOfLineValuesAreWordAligned(t *testing.T) {
	var b Builder
	b.AddASCII(270, "odd") // 4 bytes: inline in classic
	b.AddASCII(271, "oddly")
	b.AddByte(272, 1, 2, 3, 4, 5, 6, 7)
	b.AddASCII(273, "x")
	enc, err := b.Encode(nil, 0, 0, classicLE)
	require.NoError(t, err)
	for _, off := range []int{2 + 1*12 + 8, 2 + 2*12 + 8} {
		assert.Zero(t, binary.LittleEndian.Uint32(enc[off:])&1, "value offset in entry at %d is even", off)
	}
	assert.Zero(t, len(enc)&1)
}

func TestAddUintPicksSmallestType(t *testing.T) {
	tests := []struct {
		values []uint64
		want   Type
	}{
		{[]uint64{0, 65535}, Short},
		{[]uint64{65536}, Long},
		{[]uint64{1, 1<<32 - 1}, Long},
		{[]uint64{1 << 32}, Long8},
	}
	for _, tt := range tests {
		var b Builder
		b.AddUint(256, tt.values...)
		e, ok := b.Get(256)
		require.True(t, ok)
		assert.Equal(t, tt.want, e.Type, "%v", tt.values)
		got, err := e.Uints()
		require.NoError(t, err)
		assert.Equal(t, tt.values, got, "nothing truncated")
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func(b *Builder)
		pos   int64
		next  uint64
		f     Format
		want  error
	}{
		{"duplicate", func(b *Builder) { b.AddShort(256, 1); b.AddLong(256, 2) }, 8, 0, classicLE, ErrDuplicate},
		{"empty list", func(b *Builder) { b.AddShort(256) }, 8, 0, classicLE, ErrEmpty},
		{"empty raw", func(b *Builder) { b.Add(Entry{Tag: 1, Type: Byte}) }, 8, 0, classicLE, ErrEmpty},
		{"unknown type", func(b *Builder) { b.Add(Entry{Tag: 1, Type: 99, Count: 1, Value: []byte{0}}) }, 8, 0, classicLE, ErrType},
		{"short value", func(b *Builder) { b.Add(Entry{Tag: 1, Type: Long, Count: 2, Value: []byte{0}}) }, 8, 0, classicLE, ErrType},
		{"NUL in text", func(b *Builder) { b.AddASCII(270, "a\x00b") }, 8, 0, classicLE, ErrText},
		{"LONG8 in classic", func(b *Builder) { b.Add(Entry{Tag: 324, Type: Long8, Count: 1, Value: make([]byte, 8)}) }, 8, 0, classicLE, ErrRange},
		{"IFD8 in classic", func(b *Builder) { b.Add(Entry{Tag: 330, Type: IFD8, Count: 1, Value: make([]byte, 8)}) }, 8, 0, classicLE, ErrRange},
		{"large AddUint in classic", func(b *Builder) { b.AddUint(324, 1<<32) }, 8, 0, classicLE, ErrRange},
		{"directory past 4 GiB", func(b *Builder) { b.AddShort(256, 1) }, 1 << 32, 0, classicLE, ErrRange},
		{"values cross 4 GiB", func(b *Builder) { b.AddASCII(270, "long text") }, 1<<32 - 20, 0, classicLE, ErrRange},
		{"next past 4 GiB", func(b *Builder) { b.AddShort(256, 1) }, 8, 1 << 32, classicLE, ErrRange},
		{"odd position", func(b *Builder) { b.AddShort(256, 1) }, 9, 0, classicLE, ErrAlign},
		{"negative position", func(b *Builder) { b.AddShort(256, 1) }, -2, 0, bigLE, ErrAlign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b Builder
			tt.build(&b)
			_, err := b.Encode(nil, tt.pos, tt.next, tt.f)
			assert.ErrorIs(t, err, tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "ifd: "), err.Error())
		})
	}
}

// TestBigTIFFTakesWhatClassicCannot encodes a directory with a LONG8, past
// 4 GiB and pointing past 4 GiB, which classic TIFF refuses, and reads the
// BigTIFF bytes back by hand: every 64-bit count, value and offset must be
// there whole.
func TestBigTIFFTakesWhatClassicCannot(t *testing.T) {
	var b Builder
	b.AddUint(324, 1<<40)
	b.AddASCII(270, "long text") // 10 bytes: out of line in BigTIFF too
	const pos, next = 1 << 33, 1 << 34
	for _, f := range []Format{classicLE, classicBE} {
		_, err := b.Encode(nil, pos, next, f)
		assert.ErrorIs(t, err, ErrRange)
	}
	for name, f := range map[string]Format{"LE": bigLE, "BE": bigBE} {
		enc, err := b.Encode(nil, pos, next, f)
		require.NoError(t, err, name)
		var o binary.ByteOrder = binary.LittleEndian
		if f.bigEndian() {
			o = binary.BigEndian
		}
		require.Len(t, enc, 8+2*20+8+10, name)
		assert.Equal(t, uint64(2), o.Uint64(enc), name)
		type entry struct {
			tag, typ     uint16
			count, value uint64
		}
		var got []entry
		for i := range 2 {
			e := enc[8+20*i:]
			got = append(got, entry{o.Uint16(e), o.Uint16(e[2:]), o.Uint64(e[4:]), o.Uint64(e[12:])})
		}
		valueAt := uint64(pos + 8 + 2*20 + 8)
		assert.Equal(t, []entry{{270, uint16(ASCII), 10, valueAt}, {324, uint16(Long8), 1, 1 << 40}}, got, name)
		assert.Equal(t, uint64(next), o.Uint64(enc[8+2*20:]), name)
		assert.Equal(t, "long text\x00", string(enc[valueAt-pos:]), name)
	}
}

func TestFirstErrorIsSticky(t *testing.T) {
	var b Builder
	b.AddShort(256)
	b.AddShort(256, 1)
	b.AddShort(256, 2)
	assert.ErrorIs(t, b.Err(), ErrEmpty)
	b.Reset()
	assert.NoError(t, b.Err())
	assert.Zero(t, b.Len())
}

func TestCloneIsIndependent(t *testing.T) {
	b := sample()
	c := b.Clone()
	c.AddShort(259, 5)
	c.Remove(256)
	c.Entries()[0].Value[0] ^= 0xff
	assert.Equal(t, sample().Entries(), b.Entries())
	_, ok := c.Get(256)
	assert.False(t, ok)
}

func TestEntryAccessors(t *testing.T) {
	b := sample()
	e, _ := b.Get(282)
	f, err := e.Floats()
	require.NoError(t, err)
	assert.Equal(t, []float64{10000, 3.0 / 7}, f)
	e, _ = b.Get(270)
	s, err := e.Text()
	require.NoError(t, err)
	assert.Equal(t, "<OME>déjà vu</OME>", s)
	_, err = e.Uints()
	assert.ErrorIs(t, err, ErrType)
	e, _ = b.Get(403)
	f, err = e.Floats()
	require.NoError(t, err)
	assert.Equal(t, []float64{-1, 1}, f)
	e, _ = b.Get(258)
	v, err := e.Uint()
	require.NoError(t, err)
	assert.Equal(t, uint64(16), v)
}

func TestAddAll(t *testing.T) {
	template := sample()
	var b Builder
	b.AddAll(template)
	assert.Equal(t, template.Entries(), b.Entries())
	b.AddLong(9000, 1)
	b.AddShort(1, 2)
	assert.Equal(t, sample().Entries(), template.Entries(), "the template is untouched")
	assert.Equal(t, uint16(1), b.Entries()[0].Tag, "still sorted")

	var c Builder
	c.AddShort(8000, 1)
	c.AddAll(template)
	assert.Equal(t, template.Len()+1, c.Len())
	c.AddAll(template)
	assert.ErrorIs(t, c.Err(), ErrDuplicate)

	b.Reset()
	b.AddAll(template)
	assert.Equal(t, template.Entries(), b.Entries(), "reused after Reset")
}
