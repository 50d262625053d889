package tiff

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
)

// nestedSubIFDs is a classic file of levels directories, each the only
// SubIFD of the one before: the main page at depth 0, the last at depth
// levels-1.
func nestedSubIFDs(levels int) []byte {
	dirs := make([]rawDir, levels)
	for i := range dirs {
		at := uint64(100 + 40*i)
		dirs[i] = rawDir{at: at, entries: []rawEntry{width}}
		if i+1 < levels {
			dirs[i].entries = append(dirs[i].entries, subIFDs(at+40))
		}
	}
	return littleTIFF(100, dirs...)
}

// TestReadSubIFDDepthLimit: SubIFDs may nest maxSubIFDDepth below the main
// chain and no deeper; the limit is exact, so that a bound one too lax or
// too strict fails here.
func TestReadSubIFDDepthLimit(t *testing.T) {
	tests := []struct {
		depth int // of the deepest directory
		ok    bool
	}{
		{maxSubIFDDepth - 1, true},
		{maxSubIFDDepth, true},
		{maxSubIFDDepth + 1, false},
		{maxSubIFDDepth + 2, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.depth), func(t *testing.T) {
			file := nestedSubIFDs(tt.depth + 1)
			f, err := Read(bytes.NewReader(file), int64(len(file)))
			if !tt.ok {
				require.ErrorIs(t, err, ErrMalformed)
				assert.ErrorContains(t, err, "deeper")
				return
			}
			require.NoError(t, err)
			depth := 0
			for p := f.Pages[0]; len(p.SubIFDs) > 0; p = p.SubIFDs[0] {
				depth++
			}
			assert.Equal(t, tt.depth, depth)
		})
	}
}

// TestReadDirectoryCountLimit: a file may hold maxPages directories and
// not one more. A file of a million directories is too slow and large for
// a unit test, so the walker is given the directories it has already
// seen (made-up offsets) and reads one more, a real one.
func TestReadDirectoryCountLimit(t *testing.T) {
	file := littleTIFF(100, rawDir{at: 100, entries: []rawEntry{width}})
	tests := []struct {
		seen int // directories read before
		ok   bool
	}{
		{maxPages - 1, true}, // this one is the maxPages-th
		{maxPages, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.seen), func(t *testing.T) {
			h, err := ParseHeader(file)
			require.NoError(t, err)
			w := newWalker(&File{Header: h, Size: int64(len(file)), r: bytes.NewReader(file)})
			for i := range tt.seen {
				w.seen[uint64(1<<40+2*i)] = true // nowhere in the file
			}
			p, err := w.page(100, 0)
			if !tt.ok {
				require.ErrorIs(t, err, ErrMalformed)
				assert.ErrorContains(t, err, fmt.Sprintf("more than %d directories", maxPages))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, int64(100), p.Offset)
		})
	}
}

// TestReadEntryCountLimit: a directory holds at most maxEntries (65,535)
// entries, as many as a classic one can count. A BigTIFF counts them in
// 64 bits, so there the limit is Read's own: 65,535 entries are read, and
// 65,536 are ErrMalformed even when the file holds them all.
func TestReadEntryCountLimit(t *testing.T) {
	tests := []struct {
		name    string
		bigTIFF bool
		entries int
		ok      bool
	}{
		{"classic 65,535", false, maxEntries, true},
		{"BigTIFF 65,535", true, maxEntries, true},
		{"BigTIFF 65,536", true, maxEntries + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every entry of one private tag: a tag the reader acts on
			// (SubIFDs, block locations) would need values of its own.
			d := rawDir{at: 16, entries: make([]rawEntry, tt.entries)}
			for i := range d.entries {
				d.entries[i] = rawEntry{40000, uint16(ifd.Short), 1, 7}
			}
			size := 16 + 2 + 12*tt.entries + 4
			if tt.bigTIFF {
				size = 16 + 8 + 20*tt.entries + 8
			}
			file := rawFile(tt.bigTIFF, binary.LittleEndian, size, 16, d)
			f, err := Read(bytes.NewReader(file), int64(len(file)))
			if !tt.ok {
				require.ErrorIs(t, err, ErrMalformed)
				assert.ErrorContains(t, err, fmt.Sprintf("claims %d entries", tt.entries))
				return
			}
			require.NoError(t, err)
			require.Len(t, f.Pages, 1)
			assert.Len(t, f.Pages[0].Fields, tt.entries)
		})
	}
}
