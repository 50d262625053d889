package pyramid

import "github.com/ometiff-go/ometiff/tiff"

// blockChunk is how many tiles' places one chunk of a blockList holds
// (64 KiB of them).
const blockChunk = 1 << 12

// blockList is where every tile went, by sequence number, with the tile's
// fingerprint when the UUID derives from the content. It grows in chunks
// that never move: appending to a list of thousands of tiles copies
// nothing and allocates only the chunks (append on one slice would
// allocate, copy and fault in several times the final list), and the tiles
// of a plane stored in order are a piece of one chunk.
type blockList struct {
	chunks [][]tiff.Block
	sums   [][]uint64 // chunk by chunk as chunks; empty when not kept
	n      int64
}

// add appends the place of the next tile, and its fingerprint sum if
// hashed. known is how many tiles are known so far: the first chunk starts
// with room for them, so a file of a few tiles stays small; later chunks
// are whole.
func (l *blockList) add(b tiff.Block, sum uint64, hashed bool, known int64) {
	c := int(l.n / blockChunk)
	if c == len(l.chunks) {
		size := int64(blockChunk)
		if c == 0 {
			size = min(size, max(64, known))
		}
		l.chunks = append(l.chunks, make([]tiff.Block, 0, size))
		if hashed {
			l.sums = append(l.sums, make([]uint64, 0, size))
		}
	}
	l.chunks[c] = append(l.chunks[c], b)
	if hashed {
		l.sums[c] = append(l.sums[c], sum)
	}
	l.n++
}

// sum returns the fingerprint of tile seq.
func (l *blockList) sum(seq int64) uint64 {
	return l.sums[seq/blockChunk][seq%blockChunk]
}

// at returns the place of tile seq.
func (l *blockList) at(seq int64) tiff.Block {
	return l.chunks[seq/blockChunk][seq%blockChunk]
}

// of returns the places of the tiles seqs: a piece of a chunk when the
// numbers follow each other in one chunk (a plane that is one tile, or
// tiles stored in order), else a new slice.
func (l *blockList) of(seqs []int64) []tiff.Block {
	if len(seqs) == 0 {
		return nil
	}
	first, n := seqs[0], int64(len(seqs))
	inOrder := first%blockChunk+n <= blockChunk
	for i, seq := range seqs {
		inOrder = inOrder && seq == first+int64(i)
	}
	if inOrder {
		i := first % blockChunk
		return l.chunks[first/blockChunk][i : i+n : i+n]
	}
	blocks := make([]tiff.Block, len(seqs))
	for i, seq := range seqs {
		blocks[i] = l.at(seq)
	}
	return blocks
}
