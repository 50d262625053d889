package iohandle

import (
	"bytes"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMapBufferSizes(t *testing.T) {
	for _, size := range []int{0, -1, 1 << 20, 2<<20 + 1, 3 << 20} {
		assert.Nil(t, mapBuffer(size), "size %d is not a multiple of 2 MiB", size)
	}
	if runtime.GOOS != "linux" {
		t.Skip("buffers are mapped on Linux only")
	}
	for _, size := range []int{2 << 20, 4 << 20} {
		buf := mapBuffer(size)
		require.NotNil(t, buf)
		assert.Equal(t, 0, len(buf))
		assert.Equal(t, size, cap(buf))
		full := buf[:size]
		full[0], full[size-1] = 1, 2 // every byte is usable
		unmapBuffer(buf)
	}
}

// TestMappedBufferLifecycle writes through a mapped buffer with every kind
// of operation, and releases it by each way a handle ends.
func TestMappedBufferLifecycle(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are mapped on Linux only")
	}
	for _, end := range []string{"commit", "abort", "close", "failure"} {
		t.Run(end, func(t *testing.T) {
			h, path := newFile(t, Options{BufferSize: BigBuffer, NoSync: true})
			if end == "failure" {
				h.f = &failingFile{osFile: h.f, failWrite: true}
			}
			want := bytes.Repeat([]byte("0123456789abcdef"), 3*BigBuffer/16/2)
			_, err := h.Write(want[:100])
			require.NoError(t, err)
			assert.NotNil(t, h.mapping, "a BigBuffer buffer is mapped")
			_, err = h.ReadFrom(bytes.NewReader(want[100:]))
			if end == "failure" {
				require.Error(t, err)
				assert.Nil(t, h.buf)
				assert.Nil(t, h.mapping, "a failed handle gives its mapping back")
				return
			}
			require.NoError(t, err)
			_, err = h.WriteAt([]byte("XY"), h.Len()-2) // still buffered
			require.NoError(t, err)
			copy(want[len(want)-2:], "XY")
			switch end {
			case "commit":
				require.NoError(t, h.Commit())
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, want, got)
			case "abort":
				require.NoError(t, h.Abort())
			case "close":
				require.NoError(t, h.Close())
			}
			assert.Nil(t, h.buf)
			assert.Nil(t, h.mapping, "the mapping is given back")
			require.NoError(t, h.Close(), "a second release is harmless")
		})
	}
}

// TestAvailableBuffer builds bytes in the room the buffer lends and hands
// them to Write: they land once, in order; a closed handle lends nothing.
func TestAvailableBuffer(t *testing.T) {
	h, path := newFile(t, Options{BufferSize: 64, NoSync: true})
	_, err := h.Write([]byte("head"))
	require.NoError(t, err)
	room := h.AvailableBuffer()
	assert.Equal(t, 0, len(room))
	assert.Equal(t, 60, cap(room))
	_, err = h.Write(append(room, "built in place"...))
	require.NoError(t, err)
	assert.Equal(t, Stats{}, h.Stats(), "still buffered")
	require.NoError(t, h.Commit())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "headbuilt in place", string(got))
	assert.Nil(t, h.AvailableBuffer())
}

// BenchmarkFirstTouch measures what a fresh 2 MiB buffer costs until every
// page of it has been written once: mapped by mapBuffer (on huge pages
// where the system gives them) or allocated on the Go heap.
func BenchmarkFirstTouch(b *testing.B) {
	for _, kind := range []string{"mapped", "heap"} {
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(BigBuffer)
			b.ReportAllocs()
			for b.Loop() {
				var buf []byte
				if kind == "mapped" {
					if buf = mapBuffer(BigBuffer); buf == nil {
						b.Skip("no mapped buffers on this system")
					}
				} else {
					buf = make([]byte, 0, BigBuffer)
				}
				full := buf[:BigBuffer]
				for i := 0; i < len(full); i += 4096 {
					full[i] = 1
				}
				if kind == "mapped" {
					unmapBuffer(buf)
				}
			}
		})
	}
}
