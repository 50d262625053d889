package tiff

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/iohandle/iohandletest"
)

var errSource = errors.New("source broke")

// stalledReader returns nothing and no error, for ever: the handle's
// ReadFrom gives up with io.ErrNoProgress (as bufio does).
type stalledReader struct{}

func (stalledReader) Read([]byte) (int, error) { return 0, nil }

// TestReadBlock: ReadBlock appends n bytes of a reader as one block; an
// input that ends or fails early leaves the writer going, a failing output
// stops it.
func TestReadBlock(t *testing.T) {
	data := []byte("0123456789")
	tests := []struct {
		name    string
		r       io.Reader
		want    Block
		wantErr error
	}{
		{"whole", bytes.NewReader(data), Block{reservedHeaderSize, 8}, nil},
		{"in pieces", iotest.OneByteReader(bytes.NewReader(data)), Block{reservedHeaderSize, 8}, nil},
		{"ends early", bytes.NewReader(data[:5]), Block{reservedHeaderSize, 5}, io.ErrUnexpectedEOF},
		{"fails", io.MultiReader(bytes.NewReader(data[:3]), iotest.ErrReader(errSource)), Block{reservedHeaderSize, 3}, errSource},
		// io.ErrNoProgress comes from the handle, but is the input's fault
		// (it stopped giving bytes without an error): the writer goes on.
		{"stalls", io.MultiReader(bytes.NewReader(data[:3]), stalledReader{}), Block{reservedHeaderSize, 3}, io.ErrNoProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := iohandle.NewMemory()
			w, err := NewWriter(h, Options{})
			require.NoError(t, err)
			b, err := w.ReadBlock(tt.r, 8)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, tt.want, b)
			assert.Equal(t, string(data[:b.Size]), string(h.Bytes()[b.Offset:]))
			next, err := w.WriteBlock([]byte("x"))
			require.NoError(t, err, "the writer goes on")
			assert.Equal(t, b.Offset+b.Size, next.Offset)
		})
	}
	t.Run("negative size", func(t *testing.T) {
		h := iohandle.NewMemory()
		w, err := NewWriter(h, Options{})
		require.NoError(t, err)
		_, err = w.ReadBlock(bytes.NewReader(data), -5)
		require.ErrorIs(t, err, ErrOption) // was a sparse block and no error
		_, err = w.WriteBlock([]byte("x"))
		require.NoError(t, err, "the writer goes on")
	})
	t.Run("output fails", func(t *testing.T) {
		h := iohandletest.NewFaulty(iohandle.NewMemory(), iohandletest.Faults{Write: 2})
		w, err := NewWriter(h, Options{})
		require.NoError(t, err)
		_, err = w.ReadBlock(bytes.NewReader(data), 8)
		require.ErrorIs(t, err, iohandletest.ErrInjected)
		_, err = w.WriteBlock([]byte("x"))
		require.ErrorIs(t, err, iohandletest.ErrInjected, "the writer stopped")
	})
	t.Run("after close", func(t *testing.T) {
		w, err := NewWriter(iohandle.NewMemory(), Options{})
		require.NoError(t, err)
		require.NoError(t, w.AddDirectory(tinyDirectory(t, w)))
		require.NoError(t, w.Close())
		_, err = w.ReadBlock(bytes.NewReader(data), 8)
		require.ErrorIs(t, err, ErrClosed)
	})
}
