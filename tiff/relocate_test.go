package tiff

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
)

// TestRelocated: a page's blocks moved where a reader corrects them to
// lie (past 4 GiB in a classic TIFF, as Zeiss LSM's wrapped offsets),
// read there; locations of another number of blocks, or past the end of
// the file, are ErrMalformed.
func TestRelocated(t *testing.T) {
	size := int64(1<<32 + 8192)
	p := stackPage(t, 16, 5, 2, []uint32{4096, 4128, 4160}, size)
	q, err := p.Relocated([]uint64{1<<32 + 100, 1<<32 + 200, 4096}, []uint64{32, 40, 16})
	require.NoError(t, err)
	blocks, err := q.Blocks()
	require.NoError(t, err)
	assert.Equal(t, []Block{{1<<32 + 100, 32}, {1<<32 + 200, 40}, {4096, 16}}, blocks)
	for tag, want := range map[uint16][]uint64{TagStripOffsets: {1<<32 + 100, 1<<32 + 200, 4096}, TagStripByteCounts: {32, 40, 16}} {
		e, ok := q.Field(tag)
		require.True(t, ok)
		assert.Equal(t, ifd.Long8, e.Type)
		v, err := e.Uints()
		require.NoError(t, err)
		assert.Equal(t, want, v, "the copy's %s", TagName(tag))
	}
	assert.Same(t, p, q.Original())
	got, err := q.ReadBlock(nil, 0)
	require.NoError(t, err)
	assert.Len(t, got, 32)
	e, _ := p.Field(TagStripOffsets)
	v, _ := e.Uints()
	assert.Equal(t, []uint64{4096, 4128, 4160}, v, "the page itself is unchanged")

	_, err = p.Relocated([]uint64{1, 2}, []uint64{1, 2})
	assert.ErrorIs(t, err, ErrMalformed, "two locations for three blocks")
	_, err = p.Relocated([]uint64{4096, 4096, uint64(size) - 8}, []uint64{32, 32, 16})
	assert.ErrorIs(t, err, ErrMalformed, "a block past the end")
}

// TestWithField: a copy of a page with a field replaced or added; the
// fields locating blocks are not replaced so.
func TestWithField(t *testing.T) {
	p := stackPage(t, 16, 5, 2, []uint32{4096, 4128, 4160}, 4200)
	bits := ifd.Entry{Tag: TagBitsPerSample, Type: ifd.Short, Count: 1, Value: []byte{16, 0}}
	q, err := p.WithField(bits)
	require.NoError(t, err)
	v, ok := q.Uint(TagBitsPerSample)
	assert.True(t, ok)
	assert.Equal(t, uint64(16), v)
	v, _ = p.Uint(TagBitsPerSample)
	assert.Equal(t, uint64(8), v, "the page itself is unchanged")
	assert.Same(t, p, q.Original())
	assert.Equal(t, len(p.Fields), len(q.Fields))

	q, err = p.WithField(ifd.Entry{Tag: TagSampleFormat, Type: ifd.Short, Count: 1, Value: []byte{1, 0}})
	require.NoError(t, err)
	assert.Len(t, q.Fields, len(p.Fields)+1)
	_, ok = q.Field(TagSampleFormat)
	assert.True(t, ok)

	for _, tag := range []uint16{TagStripOffsets, TagExifIFD} { // fields that point into the file
		_, err = p.WithField(ifd.Entry{Tag: tag, Type: ifd.Long, Count: 1, Value: []byte{0, 0, 0, 0}})
		assert.ErrorIs(t, err, ErrUnsupported, "tag %d", tag)
	}
}
