package iohandle

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteback checks that a handle to be synced at Commit starts the
// writeback of every writebackChunk bytes appended through the page cache,
// whatever the sizes of the writes, and that one not to be synced leaves
// it to the system.
func TestWriteback(t *testing.T) {
	const total = 2*writebackChunk + writebackChunk/2
	cases := []struct {
		name       string
		opts       Options
		writebacks int64
	}{
		{"synced", Options{BufferSize: 2 << 20}, 3},
		{"synced, default buffer", Options{}, 3},
		{"NoSync", Options{BufferSize: 2 << 20, NoSync: true}, 0},
	}
	for _, kind := range tempKinds {
		for _, c := range cases {
			t.Run(kind.name+"/"+c.name, func(t *testing.T) {
				h, path := newFileOf(t, kind.unnamed, c.opts)
				model := NewMemory()
				for i := 0; model.Len() < total; i++ {
					mustWrite(t, h, model, pattern(min(100_000+i, total-int(model.Len())), i))
				}
				// Past the buffer: with the half chunk before it, a chunk
				// and a half more (one writeback).
				mustWrite(t, h, model, pattern(3*writebackChunk/2, 7))
				require.NoError(t, h.Commit())
				assert.Equal(t, c.writebacks, h.Stats().Writebacks)
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.True(t, bytes.Equal(model.Bytes(), got), "content differs")
			})
		}
	}
}
