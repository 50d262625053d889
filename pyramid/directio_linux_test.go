package pyramid

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/iohandle"
)

// TestDirectIO checks that a handle with iohandle.Options.DirectIO writes
// most of a file around the page cache and leaves the same bytes as
// writing through it.
func TestDirectIO(t *testing.T) {
	probe, err := os.OpenFile(filepath.Join(t.TempDir(), "probe"), os.O_WRONLY|os.O_CREATE|syscall.O_DIRECT, 0o600)
	if err != nil {
		t.Skipf("the temporary directory's file system has no direct I/O: %v", err)
	}
	require.NoError(t, probe.Close())
	spec := ImageSpec{SizeX: 1500, SizeY: 1000, SizeC: 3, PixelType: Uint16}
	write := func(direct bool) ([]byte, int64) {
		path := filepath.Join(t.TempDir(), "out.ome.tif")
		w := createNoSync(t, path, iohandle.Options{DirectIO: direct}, Options{Compression: LZW, TileSize: 128})
		im, err := w.AddImage(spec)
		require.NoError(t, err)
		for p := range spec.SizeC {
			require.NoError(t, im.WritePlane(0, p, 0, smooth(spec.SizeX, spec.SizeY, 1, Uint16, p).pix))
		}
		require.NoError(t, w.Close())
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		return got, w.Stats().DirectWrites
	}
	want, none := write(false)
	got, direct := write(true)
	assert.Zero(t, none)
	assert.Positive(t, direct)
	assert.Equal(t, int64(len(got))/iohandle.BigBuffer, direct, "every full buffer direct")
	assert.True(t, bytes.Equal(want, got), "the same bytes")
}
