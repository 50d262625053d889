package pyramid

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ometiff-go/ometiff/tiff"
)

// TestBlockList fills a list across several chunks and reads runs back:
// in order within a chunk they are pieces of it, across a chunk boundary
// or out of order they are copies, and every place and fingerprint is the
// one added.
func TestBlockList(t *testing.T) {
	var l blockList
	const n = 3*blockChunk + 5
	for i := range int64(n) {
		l.add(tiff.Block{Offset: uint64(100 * i), Size: uint64(i + 1)}, uint64(7*i+1), true, 10)
	}
	place := func(seq int64) tiff.Block { return tiff.Block{Offset: uint64(100 * seq), Size: uint64(seq + 1)} }
	for _, seqs := range [][]int64{
		{0}, {n - 1}, {5, 6, 7}, {blockChunk - 2, blockChunk - 1, blockChunk, blockChunk + 1},
		{9, 3, 4}, {2*blockChunk + 1, 2*blockChunk + 3},
	} {
		got := l.of(seqs)
		assert.Len(t, got, len(seqs))
		for i, seq := range seqs {
			assert.Equal(t, place(seq), got[i], "tile %d", seq)
			assert.Equal(t, uint64(7*seq+1), l.sum(seq), "fingerprint of tile %d", seq)
		}
	}
	piece := l.of([]int64{5, 6, 7})
	assert.Equal(t, 3, cap(piece), "a run in one chunk is a piece of it, capped")
	assert.Same(t, &l.chunks[0][5], &piece[0])
	assert.Len(t, l.chunks, 4)
	assert.Len(t, l.sums, 4)
	assert.Nil(t, l.of(nil))
}
