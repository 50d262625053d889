package iohandle

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileReadFrom: ReadFrom reads into the append buffer, so a copy of n
// bytes costs one write call per full buffer, whatever the reader's pieces.
func TestFileReadFrom(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000) // 16,000 bytes
	tests := []struct {
		name   string
		r      io.Reader
		writes int64
	}{
		{"whole reader", bytes.NewReader(data), 3},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(data)), 3},
		{"reads cut short", iotest.HalfReader(bytes.NewReader(data)), 3},
		{"EOF with the data", iotest.DataErrReader(bytes.NewReader(data)), 3},
		{"through io.CopyN's limit", io.LimitReader(bytes.NewReader(data), int64(len(data))), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newFile(t, Options{BufferSize: 4096, NoSync: true})
			_, err := h.Write([]byte("head"))
			require.NoError(t, err)
			n, err := h.ReadFrom(tt.r)
			require.NoError(t, err)
			assert.Equal(t, int64(len(data)), n)
			assert.Equal(t, int64(len(data)+4), h.Len())
			assert.Equal(t, tt.writes, h.Stats().Appends, "a write per full buffer, the rest buffered")
			require.NoError(t, h.Flush())
			assert.Equal(t, "head"+string(data), string(contentOnDisk(t, h)))
		})
	}
}

var errSource = errors.New("source broke")

// TestFileReadFromErrors: the reader's errors are returned and leave the
// handle usable; the output's fail it.
func TestFileReadFromErrors(t *testing.T) {
	t.Run("reader error", func(t *testing.T) {
		h, _ := newFile(t, Options{BufferSize: 64, NoSync: true})
		r := io.MultiReader(bytes.NewReader(make([]byte, 100)), iotest.ErrReader(errSource))
		n, err := h.ReadFrom(r)
		require.ErrorIs(t, err, errSource)
		assert.Equal(t, int64(100), n)
		assert.Equal(t, int64(100), h.Len(), "what was read stays appended")
		_, err = h.Write([]byte("more"))
		require.NoError(t, err, "the handle goes on")
	})
	t.Run("no progress", func(t *testing.T) {
		h, _ := newFile(t, Options{NoSync: true})
		_, err := h.ReadFrom(emptyReader{})
		require.ErrorIs(t, err, io.ErrNoProgress)
	})
	t.Run("reader claims too much", func(t *testing.T) {
		h, _ := newFile(t, Options{BufferSize: 64, NoSync: true})
		_, err := h.ReadFrom(liarReader{})
		require.ErrorContains(t, err, "iohandle: read from: reader returned")
	})
	t.Run("after close", func(t *testing.T) {
		h, _ := newFile(t, Options{NoSync: true})
		require.NoError(t, h.Close())
		_, err := h.ReadFrom(bytes.NewReader([]byte("x")))
		require.ErrorIs(t, err, ErrClosed)
	})
	t.Run("output fails", func(t *testing.T) {
		h, _ := newFile(t, Options{BufferSize: 64, NoSync: true})
		h.f = &failingFile{osFile: h.f, failWrite: true}
		_, err := h.ReadFrom(bytes.NewReader(make([]byte, 1000)))
		require.ErrorIs(t, err, errDisk)
		_, err = h.Write([]byte("x"))
		require.ErrorIs(t, err, errDisk, "sticky")
	})
}

// emptyReader never returns anything, nor an error.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// liarReader says it read more than it was given room for.
type liarReader struct{}

func (liarReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestMemoryReadFrom(t *testing.T) {
	m := NewMemory()
	_, err := m.Write([]byte("head"))
	require.NoError(t, err)
	n, err := io.Copy(m, iotest.HalfReader(bytes.NewReader([]byte("0123456789"))))
	require.NoError(t, err)
	assert.Equal(t, int64(10), n)
	assert.Equal(t, "head0123456789", string(m.Bytes()))
	assert.Equal(t, Stats{Appends: 2, Bytes: 14}, m.Stats())

	r := io.MultiReader(bytes.NewReader([]byte("ab")), iotest.ErrReader(errSource))
	_, err = m.ReadFrom(r)
	require.ErrorIs(t, err, errSource)
	assert.Equal(t, "head0123456789ab", string(m.Bytes()))

	_, err = m.ReadFrom(emptyReader{})
	require.ErrorIs(t, err, io.ErrNoProgress, "a reader that never ends is an error, not a hang")
	_, err = m.ReadFrom(liarReader{})
	require.ErrorContains(t, err, "iohandle: read from: reader returned", "a lying reader is an error, not a panic")

	require.NoError(t, m.Abort())
	_, err = m.ReadFrom(bytes.NewReader(nil))
	require.ErrorIs(t, err, ErrClosed)
}
