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

// openslideLevel0 writes the RGB samples OpenSlide reads of a slide's
// level 0, whole, to a file.
const openslideLevel0 = `
import sys, openslide
s = openslide.OpenSlide(sys.argv[1])
open(sys.argv[2], 'wb').write(s.read_region((0, 0), 0, s.dimensions).convert('RGB').tobytes())
`

// TestInteropNDPISampling: an NDPI slide whose strip libjpeg-turbo's cjpeg
// encoded, with restart markers and the chroma subsampling given, reads
// tile by tile to the samples OpenSlide reads at level 0, which cuts it
// into the same tiles (within the IDCTs' difference). OpenSlide sizes the
// frame to the tile after libjpeg has read the header, so at 4:2:0 libjpeg
// looks for a next row of MCUs past the tile and fails ("found marker 0xd9
// instead of RST0"): 4:2:0 is left to the tests against djpeg and tifffile.
func TestInteropNDPISampling(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "cjpeg", "openslide-show-properties")
	const w, h = 512, 192
	rgb := ndpitest.Pattern(w, h, 2)
	for _, tt := range []struct{ sample, restart string }{
		{"1x1", "16B"}, // 4:4:4: MCUs of 8 x 8, tiles of 128 x 8
		{"2x1", "8B"},  // 4:2:2: MCUs of 16 x 8, tiles of 128 x 8
	} {
		t.Run(tt.sample, func(t *testing.T) {
			dir := t.TempDir()
			ppm := filepath.Join(dir, "in.ppm")
			require.NoError(t, os.WriteFile(ppm, append(fmt.Appendf(nil, "P6\n%d %d\n255\n", w, h), rgb...), 0o644))
			jpg := filepath.Join(dir, "in.jpg")
			interop.MustRun(t, "cjpeg", "-quality", "90", "-sample", tt.sample+",1x1,1x1", "-restart", tt.restart, "-outfile", jpg, ppm)
			strip, err := os.ReadFile(jpg)
			require.NoError(t, err)
			file, err := ndpitest.Layout{}.File(ndpitest.Page{Width: w, Height: h, JPEG: strip, Magnification: 20, PixelsPerCm: 20000})
			require.NoError(t, err)
			path := filepath.Join(dir, "slide.ndpi")
			require.NoError(t, file.WriteFile(path))

			f, err := Open(path, Options{})
			require.NoError(t, err)
			defer f.Close()
			require.Equal(t, NDPI, f.Kind)
			page := f.Images[0].Planes[0].Page
			l, err := page.Layout()
			require.NoError(t, err)
			assert.Equal(t, [2]int{128, 8}, [2]int{l.BlockWidth, l.BlockHeight}, "the tiles: restart intervals")
			r, err := NewBandReader(context.Background(), page, Options{})
			require.NoError(t, err)
			defer r.Close()
			got, err := io.ReadAll(r)
			require.NoError(t, err)

			out := filepath.Join(dir, "openslide.rgb")
			interop.RunPython(t, openslideLevel0, path, out)
			want, err := os.ReadFile(out)
			require.NoError(t, err)
			require.Len(t, got, len(want))
			worst, sum := 0, 0
			for i := range got {
				d := max(int(got[i])-int(want[i]), int(want[i])-int(got[i]))
				worst, sum = max(worst, d), sum+d
			}
			assert.LessOrEqual(t, worst, 4, "the largest difference from OpenSlide's samples")
			assert.Less(t, float64(sum)/float64(len(got)), 0.2, "the mean difference from OpenSlide's samples")
		})
	}
}
