//go:build unix

package tiff

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRegular: a regular file (and a link to one) opens and reads; a
// named pipe without a writer, a directory and a device are refused with
// ErrNotRegular, the pipe without blocking (it is opened non-blocking and
// told from its own stat, not from a look at the path before the open).
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "file.tif")
	require.NoError(t, os.WriteFile(regular, []byte("II*\x00"), 0o644))
	link := filepath.Join(dir, "link.tif")
	require.NoError(t, os.Symlink(regular, link))
	for _, name := range []string{regular, link} {
		f, err := OpenRegular(name)
		require.NoError(t, err, name)
		buf := make([]byte, 8)
		n, _ := f.Read(buf)
		assert.Equal(t, "II*\x00", string(buf[:n]), name)
		require.NoError(t, f.Close())
	}
	fifo := filepath.Join(dir, "fifo.tif")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	socket := filepath.Join(dir, "socket.tif") // which no open takes (ENXIO)
	l, err := net.Listen("unix", socket)
	require.NoError(t, err)
	defer l.Close()
	for _, name := range []string{fifo, dir, "/dev/null", socket} {
		done := make(chan error, 1)
		go func() {
			f, err := OpenRegular(name)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, ErrNotRegular, name)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the open blocked", name)
		}
	}
	_, err = OpenRegular(filepath.Join(dir, "missing.tif"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
