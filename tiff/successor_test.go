package tiff

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
)

// zeroTail reads data, then zeros up to size: a large file that costs
// nothing.
type zeroTail struct {
	data []byte
	size int64
}

func (z zeroTail) ReadAt(p []byte, off int64) (int, error) {
	if off >= z.size {
		return 0, io.EOF
	}
	n := 0
	if off < int64(len(z.data)) {
		n = copy(p, z.data[off:])
	}
	end := min(int64(len(p)), z.size-off)
	clear(p[n:end])
	if end < int64(len(p)) {
		return int(end), io.EOF
	}
	return int(end), nil
}

// stackPage returns the first page of a classic TIFF of one directory
// of a width x height 8-bit image in strips of rows, whose data starts at
// 4096, in a file of size bytes (zeros past the directory). more adds or
// replaces fields.
func stackPage(t *testing.T, width, height, rows uint32, offsets []uint32, size int64, more ...func(*ifd.Builder)) *Page {
	t.Helper()
	var b ifd.Builder
	b.AddLong(TagImageWidth, width)
	b.AddLong(TagImageLength, height)
	b.AddShort(TagBitsPerSample, 8)
	b.AddShort(TagCompression, CompressionNone)
	b.AddShort(TagPhotometricInterpretation, PhotometricBlackIsZero)
	b.AddLong(TagRowsPerStrip, rows)
	b.AddLong(TagStripOffsets, offsets...)
	counts := make([]uint32, len(offsets))
	for i := range counts {
		counts[i] = width * min(rows, height-uint32(i)*rows)
	}
	b.AddLong(TagStripByteCounts, counts...)
	for _, m := range more {
		m(&b)
	}
	data := oneDirectory(t, &b, ifd.Format{})
	f, err := Read(zeroTail{data, size}, size)
	require.NoError(t, err)
	return f.Pages[0]
}

// TestSuccessor checks the pages of the images stored after a page's
// data, as ImageJ stores stacks past 4 GiB, and the pages that have none.
func TestSuccessor(t *testing.T) {
	p := stackPage(t, 16, 5, 2, []uint32{4096, 4128, 4160}, 4096+16*5*4)
	for k, want := range map[int][]uint64{1: {4176, 4208, 4240}, 3: {4336, 4368, 4400}} {
		q, err := p.Successor(k)
		require.NoError(t, err)
		blocks, err := q.Blocks()
		require.NoError(t, err)
		assert.Equal(t, []Block{{want[0], 32}, {want[1], 32}, {want[2], 16}}, blocks, "successor %d", k)
		e, ok := q.Field(TagStripOffsets)
		require.True(t, ok)
		assert.Equal(t, ifd.Long8, e.Type)
		v, err := e.Uints()
		require.NoError(t, err)
		assert.Equal(t, want, v, "the successor's field gives its offsets")
		l, err := q.Layout()
		require.NoError(t, err)
		assert.Equal(t, 3, l.Blocks())
		assert.Equal(t, p.Offset, q.Offset)
	}
	e, _ := p.Field(TagStripOffsets)
	v, _ := e.Uints()
	assert.Equal(t, []uint64{4096, 4128, 4160}, v, "the page itself is unchanged")

	tests := []struct {
		name string
		page *Page
		k    int
		is   error
		says string
	}{
		{"past the end", p, 4, ErrMalformed, "image 4 after the page"},
		{"not a successor", p, 0, ErrMalformed, "successor 0"},
		{"compressed", stackPage(t, 16, 4, 4, []uint32{4096}, 8192, func(b *ifd.Builder) {
			b.Remove(TagCompression)
			b.AddShort(TagCompression, CompressionLZW)
		}), 1, ErrUnsupported, "Compression 5"},
		{"an empty block", stackPage(t, 16, 4, 2, []uint32{4096, 4128}, 8192, func(b *ifd.Builder) {
			b.Remove(TagStripByteCounts)
			b.AddLong(TagStripByteCounts, 32, 0)
		}), 1, ErrMalformed, "StripByteCounts[1] of the page at 16: 0 bytes at 4128 (a sparse block lies at offset 0)"},
		{"a sparse block", stackPage(t, 16, 4, 2, []uint32{4096, 0}, 8192, func(b *ifd.Builder) {
			b.Remove(TagStripByteCounts)
			b.AddLong(TagStripByteCounts, 32, 0)
		}), 1, ErrUnsupported, "block 1 of the page at 16 is empty"},
		{"a gap between blocks", stackPage(t, 16, 4, 2, []uint32{4096, 4130}, 8192), 1, ErrUnsupported, "block 1 of the page"},
		{"blocks out of order", stackPage(t, 16, 4, 2, []uint32{4128, 4096}, 8192), 1, ErrUnsupported, "not right after block 0"},
		{"a block past the end", stackPage(t, 16, 4, 2, []uint32{4096, 8180}, 8192), 1, ErrMalformed, "past the end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := tt.page.Successor(tt.k)
			require.ErrorIs(t, err, tt.is)
			assert.ErrorContains(t, err, tt.says)
			assert.Nil(t, q)
		})
	}
}

// TestSuccessorPast4GiB: the images of a classic TIFF's stack lie past
// 4 GiB, where LONG offsets cannot reach, and are read there.
func TestSuccessorPast4GiB(t *testing.T) {
	const side = 1 << 15 // a 1 GiB image
	size := int64(4096 + 6*side*side)
	p := stackPage(t, side, side, side, []uint32{4096}, size)
	q, err := p.Successor(5)
	require.NoError(t, err)
	b, err := q.Block(0)
	require.NoError(t, err)
	assert.Equal(t, Block{4096 + 5<<30, 1 << 30}, b)
	_, err = p.Successor(6)
	assert.ErrorIs(t, err, ErrMalformed)
	_, err = p.Successor(1 << 40)
	assert.ErrorIs(t, err, ErrMalformed, "a shift that overflows")

	small := stackPage(t, 16, 1, 1, []uint32{4096}, 4096+16*3)
	q, err = small.Successor(2)
	require.NoError(t, err)
	got, err := q.ReadBlock(nil, 0)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(make([]byte, 16), got))
}
