package iohandle

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newDirectFile creates a DirectIO handle of the given kind with a 2 MiB
// (mapped, so aligned) buffer, skipping where the temporary directory's
// file system has no direct I/O.
func newDirectFile(t *testing.T, unnamed bool) (*File, string) {
	t.Helper()
	h, path := newFileOf(t, unnamed, Options{BufferSize: 2 << 20, NoSync: true, DirectIO: true})
	probe, err := os.OpenFile(filepath.Join(t.TempDir(), "probe"), os.O_WRONLY|os.O_CREATE|syscall.O_DIRECT, 0o600)
	if err != nil {
		t.Skipf("the file system of %s has no direct I/O: %v", path, err)
	}
	require.NoError(t, probe.Close())
	require.True(t, h.direct, "the file system has direct I/O, the handle does not use it")
	return h, path
}

// TestDirectIO checks that DirectIO writes full buffers around the page
// cache, goes through it from the first write it cannot align, and leaves
// the same bytes as any other write.
func TestDirectIO(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name   string
		ops    func(t *testing.T, h *File, model *Memory)
		direct int64 // writes around the page cache
		writes int64 // appends in all: one per write, none refused
	}{
		{"full buffers direct, the tail not", func(t *testing.T, h *File, model *Memory) {
			for i := range 50 { // 5,000,000 bytes: two full buffers and an unaligned tail
				mustWrite(t, h, model, pattern(100_000, i))
			}
		}, 2, 3},
		{"read from", func(t *testing.T, h *File, model *Memory) {
			p := pattern(5*mib+3, 1)
			_, err := h.ReadFrom(bytes.NewReader(p))
			require.NoError(t, err)
			_, _ = model.Write(p)
		}, 2, 3},
		{"an unaligned large write ends direct", func(t *testing.T, h *File, model *Memory) {
			mustWrite(t, h, model, pattern(mib, 1))
			mustWrite(t, h, model, pattern(mib, 2)) // fills the buffer: direct
			mustWrite(t, h, model, pattern(2*mib+1, 2))
			mustWrite(t, h, model, pattern(4*mib, 3))
		}, 1, 3},
		{"a patch ends direct", func(t *testing.T, h *File, model *Memory) {
			for i := range 21 { // one full buffer, direct, and some
				mustWrite(t, h, model, pattern(100_000, i))
			}
			p := []byte("patched")
			_, err := h.WriteAt(p, 10)
			require.NoError(t, err)
			_, _ = model.WriteAt(p, 10)
			mustWrite(t, h, model, pattern(4*mib, 2))
		}, 1, 3},
	}
	for _, kind := range tempKinds {
		for _, c := range cases {
			t.Run(kind.name+"/"+c.name, func(t *testing.T) {
				h, path := newDirectFile(t, kind.unnamed)
				model := NewMemory()
				c.ops(t, h, model)
				require.NoError(t, h.Commit())
				assert.Equal(t, c.direct, h.Stats().DirectWrites)
				assert.Equal(t, c.writes, h.Stats().Appends)
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.True(t, bytes.Equal(model.Bytes(), got), "content differs")
			})
		}
	}
}

// TestWithoutDirectIO checks that no write goes around the page cache
// unless asked.
func TestWithoutDirectIO(t *testing.T) {
	h, _ := newFile(t, Options{BufferSize: 2 << 20, NoSync: true})
	_, err := h.Write(pattern(5<<20, 0))
	require.NoError(t, err)
	require.NoError(t, h.Commit())
	assert.Zero(t, h.Stats().DirectWrites)
	assert.False(t, h.direct)
}

// refusingFile refuses its first write as a device with a larger
// alignment than directAlign does.
type refusingFile struct {
	*os.File
	refused bool
}

func (f *refusingFile) Write(p []byte) (int, error) {
	if !f.refused {
		f.refused = true
		return 0, syscall.EINVAL
	}
	return f.File.Write(p)
}

// TestDirectIORefused checks that a direct write the kernel refuses is
// written through the page cache instead.
func TestDirectIORefused(t *testing.T) {
	for _, kind := range tempKinds {
		t.Run(kind.name, func(t *testing.T) {
			h, path := newDirectFile(t, kind.unnamed)
			h.f = &refusingFile{File: h.f.(*os.File)}
			model := NewMemory()
			mustWrite(t, h, model, pattern(4<<20, 4)) // bypasses the buffer
			mustWrite(t, h, model, pattern(4<<20, 5))
			require.NoError(t, h.Commit())
			assert.Zero(t, h.Stats().DirectWrites)
			assert.Equal(t, int64(3), h.Stats().Appends, "the refused write, its retry and the next")
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(model.Bytes(), got), "content differs")
		})
	}
}
