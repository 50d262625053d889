package pyramid

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/iohandle"
)

// TestCutOrder: cutOrder, which counts rows, gives the order in which
// writing a whole plane cuts the rows of tiles of every level, for sizes
// odd and even, tall and wide, with every level or a few.
func TestCutOrder(t *testing.T) {
	for _, tc := range []struct{ w, h, tile, levels int }{
		{69, 40, 16, 0}, {70, 61, 16, 0}, {300, 200, 64, 0}, {16, 16, 16, 0}, {1, 1, 16, 0},
		{5, 300, 16, 0}, {300, 5, 16, 0}, {33, 97, 16, 3}, {100, 129, 32, 0}, {77, 53, 16, 7},
		{150, 333, 64, 0}, {40, 1001, 96, 0}, {700, 500, 128, 0},
	} {
		t.Run(fmt.Sprintf("%dx%d tile %d levels %d", tc.w, tc.h, tc.tile, tc.levels), func(t *testing.T) {
			w, err := New(iohandle.NewMemory(), Options{TileSize: tc.tile, Levels: tc.levels, Compression: None})
			require.NoError(t, err)
			im, err := w.AddImage(ImageSpec{SizeX: tc.w, SizeY: tc.h})
			require.NoError(t, err)
			require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, tc.w*tc.h)))
			type cut struct {
				seq int64
				tileRow
			}
			var cuts []cut
			for l, d := range im.planes[0].dirs {
				for i, seq := range d.seqs {
					cuts = append(cuts, cut{seq, tileRow{l, i / im.levels[l].across}})
				}
			}
			slices.SortFunc(cuts, func(a, b cut) int { return int(a.seq - b.seq) })
			var want []tileRow
			for i, c := range cuts {
				if i == 0 || c.tileRow != cuts[i-1].tileRow {
					want = append(want, c.tileRow)
				}
			}
			assert.Equal(t, want, cutOrder(im.levels))
			require.NoError(t, w.Close())
		})
	}
}

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
