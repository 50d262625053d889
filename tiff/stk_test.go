package tiff

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
)

// TestValueOffset: in every format, ValueOffset finds where a field's
// values lie, out of line or in the entry, and ReadBytes reads the bytes
// there; past the end of the file, ErrMalformed.
func TestValueOffset(t *testing.T) {
	for _, f := range []ifd.Format{{}, {Order: binary.BigEndian}, {BigTIFF: true}, {Order: binary.BigEndian, BigTIFF: true}} {
		var b ifd.Builder
		b.AddLong(TagImageWidth, 8)
		b.AddLong(TagUIC1, 0x01020304, 0x05060708, 0x090a0b0c) // out of line
		b.AddLong(TagUIC4, 0x11121314)                         // inline
		data := oneDirectory(t, &b, f)
		file, err := Read(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		p := file.Pages[0]
		for _, c := range []struct {
			tag  uint16
			want uint32
		}{{TagUIC1, 0x01020304}, {TagUIC4, 0x11121314}} {
			off, ok := p.ValueOffset(c.tag)
			require.True(t, ok)
			v, err := file.ReadBytes(off, 4)
			require.NoError(t, err)
			assert.Equal(t, c.want, file.Order.Uint32(v), "%+v: tag %d", f, c.tag)
		}
		_, ok := p.ValueOffset(TagUIC2)
		assert.False(t, ok)
		_, err = file.ReadBytes(uint64(len(data)-3), 4)
		assert.ErrorIs(t, err, ErrMalformed)
		_, err = file.ReadBytes(1<<63, 1<<30)
		assert.ErrorIs(t, err, ErrMalformed)
	}
}
