package pyramid

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/iohandle"
)

// TestNoBandForWholeTileRows: a plane written in bands of one tile row, its
// last band short, is cut straight from the bands written: the first level
// never makes a band of its own (at 100,000 pixels of RGB it would be
// 73 MiB), and only the reduced levels, whose rows arrive in halves, do.
// The buffers are kept for the image's next plane, and dropped after its
// last.
func TestNoBandForWholeTileRows(t *testing.T) {
	const w, h, tile = 100, 150, 32
	wr, err := New(iohandle.NewMemory(), Options{TileSize: tile, Compression: None})
	require.NoError(t, err)
	im, err := wr.AddImage(ImageSpec{SizeX: w, SizeY: h, SizeZ: 2})
	require.NoError(t, err)
	pix := make([]byte, w*h)
	writePlane := func(z int) {
		pw, err := im.Plane(z, 0, 0)
		require.NoError(t, err)
		for y := 0; y < h; y += tile {
			_, err := pw.Write(pix[y*w : min(y+tile, h)*w])
			require.NoError(t, err)
		}
		require.NoError(t, pw.Close())
	}
	writePlane(0)
	require.Len(t, im.free, 1, "kept for plane 1")
	s := im.free[0]
	assert.Nil(t, s.levels[0].band, "level 0")
	assert.NotNil(t, s.levels[1].band, "level 1")
	for _, l := range s.levels[:len(s.levels)-1] {
		assert.LessOrEqual(t, len(l.reduced), reducedRows*l.next.rowBytes, "level %d", l.index)
	}
	writePlane(1)
	assert.Empty(t, im.free, "dropped after the last plane")
	require.NoError(t, wr.Close())
}

// TestFreeDroppedAtLastPlane: the buffers of planes that were open at once
// are kept for the planes to come, and dropped when the image's last plane
// starts, not at Close.
func TestFreeDroppedAtLastPlane(t *testing.T) {
	const w, h = 64, 64
	wr, err := New(iohandle.NewMemory(), Options{TileSize: 32, Compression: None})
	require.NoError(t, err)
	im, err := wr.AddImage(ImageSpec{SizeX: w, SizeY: h, SizeZ: 3})
	require.NoError(t, err)
	pix := make([]byte, w*h)
	var open []*PlaneWriter
	for z := range 2 {
		pw, err := im.Plane(z, 0, 0)
		require.NoError(t, err)
		open = append(open, pw)
	}
	for _, pw := range open {
		_, err := pw.Write(pix)
		require.NoError(t, err)
		require.NoError(t, pw.Close())
	}
	require.Len(t, im.free, 2, "both kept for plane 2")
	pw, err := im.Plane(2, 0, 0)
	require.NoError(t, err)
	assert.Empty(t, im.free, "no plane left to take the second")
	_, err = pw.Write(pix)
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	assert.Empty(t, im.free)
	require.NoError(t, wr.Close())
}
