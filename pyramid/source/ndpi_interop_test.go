package source

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/ndpitest"
)

// tifffileNDPI prints what tifffile makes of page 0 of an NDPI file: its
// is_ndpi flag, its tile size (from the restart intervals, as it cuts
// them), and the offsets and byte counts of its tiles.
const tifffileNDPI = `
import sys, tifffile
p = tifffile.TiffFile(sys.argv[1]).pages[0]
print(p.is_ndpi, p.tilewidth, p.tilelength)
print(' '.join(map(str, p.dataoffsets)))
print(' '.join(map(str, p.databytecounts)))
`

// TestInteropNDPI: an NDPI file as ndpitest writes it, in NDP.scan's
// 64-bit layout, below 4 GiB and past it (a sparse file of 5 GiB), is one
// OpenSlide takes for Hamamatsu's and tifffile for NDPI, cut into the
// same tiles as NDPITiles cuts it, at the same offsets; its first plane,
// read tile by tile, has the samples libjpeg-turbo's djpeg decodes from
// the whole strip (within the IDCTs' difference), but at the tiles'
// edges, whose chroma upsampling lacks the next tile's.
func TestInteropNDPI(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "openslide-show-properties", "djpeg", "tifffile")
	for _, tt := range []struct {
		name string
		hole int64
	}{{"slide.ndpi", 0}, {"big.ndpi", 5 << 30}} {
		t.Run(tt.name, func(t *testing.T) { interopNDPI(t, tt.name, tt.hole) })
	}
}

func interopNDPI(t *testing.T, name string, hole int64) {
	dir := t.TempDir()
	const w, h = 512, 256
	file, err := ndpitest.Layout{Hole: hole}.File(ndpitest.Page{Width: w, Height: h, RGB: ndpitest.Pattern(w, h, 0), Interval: 4, Magnification: 20, PixelsPerCm: 20000},
		ndpitest.Page{Width: 120, Height: 40, RGB: ndpitest.Pattern(120, 40, 1), Magnification: -1})
	require.NoError(t, err)
	// tifffile reads a .ndpi file in the 64-bit layout.
	path := filepath.Join(dir, name)
	require.NoError(t, file.WriteFile(path))

	assert.Contains(t, interop.MustRun(t, "openslide-show-properties", path), "openslide.vendor: 'hamamatsu'")

	f, err := Open(path, Options{})
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, NDPI, f.Kind)
	require.True(t, f.TIFF.NDPI)
	page := f.Images[0].Planes[0].Page
	l, err := page.Layout()
	require.NoError(t, err)
	blocks, err := page.Blocks()
	require.NoError(t, err)
	var offsets, counts []string
	for _, b := range blocks {
		offsets, counts = append(offsets, fmt.Sprint(b.Offset)), append(counts, fmt.Sprint(b.Size))
	}
	out := strings.Split(strings.TrimSpace(interop.RunPython(t, tifffileNDPI, path)), "\n")
	require.Len(t, out, 3)
	assert.Equal(t, fmt.Sprintf("True %d %d", l.BlockWidth, l.BlockHeight), out[0])
	assert.Equal(t, strings.Join(offsets, " "), out[1], "the tiles' offsets")
	assert.Equal(t, strings.Join(counts, " "), out[2], "the tiles' byte counts")

	strip, err := f.TIFF.Pages[0].ReadBlock(nil, 0)
	require.NoError(t, err)
	jpg := filepath.Join(dir, "strip.jpg")
	require.NoError(t, os.WriteFile(jpg, strip, 0o644))
	ppm := filepath.Join(dir, "strip.ppm")
	interop.MustRun(t, "djpeg", "-outfile", ppm, jpg)
	want, err := os.ReadFile(ppm)
	require.NoError(t, err)
	header := fmt.Sprintf("P6\n%d %d\n255\n", w, h)
	require.True(t, bytes.HasPrefix(want, []byte(header)), "djpeg's PPM header")
	want = want[len(header):]

	r, err := NewBandReader(context.Background(), page, Options{})
	require.NoError(t, err)
	defer r.Close()
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	worst, sum, n := 0, 0, 0
	for i := range got {
		x, y := i/3%w, i/3/w
		if x%l.BlockWidth == 0 || x%l.BlockWidth == l.BlockWidth-1 || y%l.BlockHeight == 0 || y%l.BlockHeight == l.BlockHeight-1 {
			continue
		}
		d := max(int(got[i])-int(want[i]), int(want[i])-int(got[i]))
		worst, sum, n = max(worst, d), sum+d, n+1
	}
	assert.LessOrEqual(t, worst, 4, "the largest difference inside the tiles")
	assert.Less(t, float64(sum)/float64(n), 0.1, "the mean difference inside the tiles")
}
