package source

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/tiff"
)

// makeSources is a Python script: tifffile writes the source images into
// the folder named by its argument, uncompressed (rgb8, u16, i16, f32 .tif),
// each with its samples as little-endian raw bytes beside it (.raw); then
// a BigTIFF of f32 in Deflate tiles, a big-endian i16 with Deflate and
// the horizontal predictor, and an OME-TIFF of u16 with two SubIFD levels
// (each level's samples in u16-ome.N.raw).
const makeSources = `
import sys, numpy as np, tifffile
d = sys.argv[1]
rng = np.random.default_rng(7)
h, w = 600, 1000
y, x = np.mgrid[0:h, 0:w]
rgb = np.stack([128 + 100*np.sin(x/23.)*np.cos(y/31.), 128 + 90*np.cos((x + y)/17.), (x*255//w + y*255//h)/2], -1)
rgb = (rgb + rng.normal(0, 6, rgb.shape)).clip(0, 255).astype(np.uint8)
u16 = (30000 + 20000*np.sin(x/40.)*np.cos(y/25.) + rng.normal(0, 300, (h, w))).clip(0, 65535).astype(np.uint16)
i16 = (u16.astype(np.int32) - 32768).astype(np.int16)
f32 = (np.sin(x/50.)*np.cos(y/35.)*1000 + rng.normal(0, 1, (h, w))).astype(np.float32)
def raw(a, path):
    np.ascontiguousarray(a, dtype=a.dtype.newbyteorder('<')).tofile(path)
for name, a in [('rgb8', rgb), ('u16', u16), ('i16', i16), ('f32', f32)]:
    tifffile.imwrite(f'{d}/{name}.tif', a, photometric='rgb' if a.ndim == 3 else 'minisblack')
    raw(a, f'{d}/{name}.raw')
tifffile.imwrite(f'{d}/tifffile-f32-bigtiff.tif', f32, bigtiff=True, tile=(128, 128), compression='zlib')
tifffile.imwrite(f'{d}/tifffile-i16-be-p2.tif', i16, byteorder='>', compression='zlib', predictor=True, rowsperstrip=64)
levels = [u16, u16[::2, ::2], u16[::4, ::4]]
with tifffile.TiffWriter(f'{d}/tifffile-u16.ome.tif', ome=True) as tw:
    tw.write(levels[0], subifds=2, tile=(128, 128), compression='zlib', metadata={'axes': 'YX', 'PhysicalSizeX': 0.5})
    for level in levels[1:]:
        tw.write(level, subfiletype=1, tile=(128, 128), compression='zlib')
for i, level in enumerate(levels):
    raw(level, f'{d}/tifffile-u16.ome.{i}.raw')
`

// pageRef names a page: main is its index in the main chain, sub 0 the
// page itself and j+1 its SubIFD j.
type pageRef struct{ main, sub int }

// interopCase is a file written by another tool and the pages checked.
type interopCase struct {
	name  string
	tool  string
	make  func(t *testing.T, dir, out string)
	pages []pageRef
	// source names the .raw of the first page's pixels, for lossless
	// codecs; the other pages (reduced levels), and JPEG, are compared
	// with what libvips decodes.
	source string
	jpeg   bool
}

func run(name string, args ...string) func(t *testing.T, dir, out string) {
	return func(t *testing.T, dir, out string) {
		full := make([]string, len(args))
		for i, a := range args {
			switch a {
			case "OUT":
				a = out
			case "rgb8", "u16", "i16", "f32":
				a = filepath.Join(dir, a+".tif")
			}
			full[i] = a
		}
		interop.MustRun(t, name, full...)
	}
}

// copyOf takes a file the source script wrote.
func copyOf(name string) func(t *testing.T, dir, out string) {
	return func(t *testing.T, dir, out string) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(out, data, 0o644))
	}
}

func pages(n int) []pageRef {
	var p []pageRef
	for i := range n {
		p = append(p, pageRef{main: i})
	}
	return p
}

func interopCases() []interopCase {
	first := pages(1)
	subs := []pageRef{{0, 0}, {0, 1}, {0, 2}}
	return []interopCase{
		{name: "vips JPEG tiles", tool: "vips", make: run("vips", "tiffsave", "rgb8", "OUT", "--compression", "jpeg", "--Q", "85", "--tile", "--tile-width", "256", "--tile-height", "256"), pages: first, jpeg: true},
		{name: "vips JPEG strips", tool: "vips", make: run("vips", "tiffsave", "rgb8", "OUT", "--compression", "jpeg", "--Q", "85"), pages: first, jpeg: true},
		{name: "vips LZW tiles u16 BigTIFF", tool: "vips", make: run("vips", "tiffsave", "u16", "OUT", "--compression", "lzw", "--tile", "--predictor", "horizontal", "--bigtiff"), pages: first, source: "u16"},
		{name: "vips Deflate strips RGB", tool: "vips", make: run("vips", "tiffsave", "rgb8", "OUT", "--compression", "deflate", "--predictor", "horizontal"), pages: first, source: "rgb8"},
		{name: "vips Zstd tiles f32", tool: "vips", make: run("vips", "tiffsave", "f32", "OUT", "--compression", "zstd", "--tile", "--predictor", "float"), pages: first, source: "f32"},
		{name: "vips LZW pyramid", tool: "vips", make: run("vips", "tiffsave", "rgb8", "OUT", "--compression", "lzw", "--tile", "--pyramid", "--tile-width", "256", "--tile-height", "256"), pages: pages(3), source: "rgb8"},
		{name: "vips JPEG pyramid SubIFDs", tool: "vips", make: run("vips", "tiffsave", "rgb8", "OUT", "--compression", "jpeg", "--tile", "--pyramid", "--subifd", "--tile-width", "256", "--tile-height", "256"), pages: subs, jpeg: true},
		{name: "tiffcp LZW separate big-endian", tool: "tiffcp", make: run("tiffcp", "-c", "lzw", "-p", "separate", "-B", "rgb8", "OUT"), pages: first, source: "rgb8"},
		{name: "tiffcp Deflate separate big-endian tiles", tool: "tiffcp", make: run("tiffcp", "-c", "zip", "-p", "separate", "-B", "-t", "-w", "128", "-l", "96", "rgb8", "OUT"), pages: first, source: "rgb8"},
		{name: "tiffcp PackBits big-endian short strip", tool: "tiffcp", make: run("tiffcp", "-c", "packbits", "-B", "-r", "7", "rgb8", "OUT"), pages: first, source: "rgb8"},
		{name: "tiffcp none separate big-endian tiles", tool: "tiffcp", make: run("tiffcp", "-c", "none", "-p", "separate", "-B", "-t", "-w", "64", "-l", "48", "rgb8", "OUT"), pages: first, source: "rgb8"},
		{name: "tiffcp u16 Deflate p2 big-endian", tool: "tiffcp", make: run("tiffcp", "-c", "zip:2", "-B", "u16", "OUT"), pages: first, source: "u16"},
		{name: "tiffcp i16 LZW p2", tool: "tiffcp", make: run("tiffcp", "-c", "lzw:2", "i16", "OUT"), pages: first, source: "i16"},
		// Not big-endian: libtiff 4.5 on a little-endian host writes the
		// byte planes of predictor 3 least significant first there, and
		// reads back neither its own files nor GDAL's.
		{name: "tiffcp f32 Deflate p3 tiles", tool: "tiffcp", make: run("tiffcp", "-c", "zip:3", "-t", "-w", "128", "-l", "128", "f32", "OUT"), pages: first, source: "f32"},
		{name: "tiffcp f32 LZW p3 strips", tool: "tiffcp", make: run("tiffcp", "-c", "lzw:3", "-r", "50", "f32", "OUT"), pages: first, source: "f32"},
		{name: "tiffcp JPEG RGB-coded tiles", tool: "tiffcp", make: run("tiffcp", "-c", "jpeg:r:90", "-t", "-w", "256", "-l", "256", "rgb8", "OUT"), pages: first, jpeg: true},
		{name: "tiffcp JPEG YCbCr short strip", tool: "tiffcp", make: run("tiffcp", "-c", "jpeg:90", "-r", "48", "rgb8", "OUT"), pages: first, jpeg: true},
		{name: "tiffcp JPEG gray", tool: "tiffcp", make: func(t *testing.T, dir, out string) {
			gray := filepath.Join(dir, "gray.tif")
			interop.MustRun(t, "vips", "extract_band", filepath.Join(dir, "rgb8.tif"), gray, "1")
			interop.MustRun(t, "tiffcp", "-c", "jpeg:80", "-t", "-w", "128", "-l", "128", gray, out)
		}, pages: first, jpeg: true},
		{name: "tifffile BigTIFF f32 Deflate tiles", tool: "tifffile", make: copyOf("tifffile-f32-bigtiff.tif"), pages: first, source: "f32"},
		{name: "tifffile i16 big-endian Deflate p2", tool: "tifffile", make: copyOf("tifffile-i16-be-p2.tif"), pages: first, source: "i16"},
		{name: "tifffile OME-TIFF SubIFDs", tool: "tifffile", make: copyOf("tifffile-u16.ome.tif"), pages: subs, source: "tifffile-u16.ome"},
		{name: "GDAL COG LZW", tool: "gdal_translate", make: run("gdal_translate", "-q", "-of", "COG", "-co", "BLOCKSIZE=256", "rgb8", "OUT"), pages: pages(3), source: "rgb8"},
		{name: "GDAL COG JPEG", tool: "gdal_translate", make: run("gdal_translate", "-q", "-of", "COG", "-co", "COMPRESS=JPEG", "-co", "BLOCKSIZE=256", "rgb8", "OUT"), pages: pages(3), jpeg: true},
	}
}

// TestInteropBandReader reads files written by libvips, libtiff, tifffile
// and GDAL with the band reader: every page checked must equal its source
// exactly for lossless codecs (or, for reduced levels, what libvips
// decodes), and JPEG must come within the difference between image/jpeg's
// IDCT and libjpeg-turbo's (through libvips).
func TestInteropBandReader(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips", "tiffcp", "gdal_translate", "tifffile")
	dir := t.TempDir()
	interop.RunPython(t, makeSources, dir)
	var jpegMax int
	var jpegSum float64
	var jpegN int64
	for i, c := range interopCases() {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprintf("case%d.tif", i))
			c.make(t, dir, out)
			rc, err := tiff.Open(out)
			require.NoError(t, err)
			defer rc.Close()
			for _, ref := range c.pages {
				require.Greater(t, len(rc.Pages), ref.main, "pages")
				page := rc.Pages[ref.main]
				if ref.sub > 0 {
					require.Greater(t, len(page.SubIFDs), ref.sub-1, "SubIFDs")
					page = page.SubIFDs[ref.sub-1]
				}
				got := readPage(t, page, 2)
				want := reference(t, dir, out, c, ref)
				require.Len(t, got, len(want), "page %+v", ref)
				if !c.jpeg {
					require.True(t, string(got) == string(want), "page %+v differs from its reference", ref)
					continue
				}
				maxDiff, sum := difference(got, want)
				jpegMax, jpegSum, jpegN = max(jpegMax, maxDiff), jpegSum+sum, jpegN+int64(len(got))
				mean := sum / float64(len(got))
				t.Logf("page %+v: JPEG against libvips: max |difference| %d, mean %.4f", ref, maxDiff, mean)
				assert.LessOrEqual(t, maxDiff, jpegMaxDifference, "page %+v", ref)
				assert.LessOrEqual(t, mean, jpegMeanDifference, "page %+v", ref)
			}
			one := readPage(t, rc.Pages[0], 1)
			assert.True(t, string(one) == string(readPage(t, rc.Pages[0], 3)), "the same at 1 and 3 workers")
		})
	}
	if jpegN > 0 {
		t.Logf("JPEG over every page: max |difference| %d, mean %.4f", jpegMax, jpegSum/float64(jpegN))
	}
}

// The difference allowed between image/jpeg with this package's color
// conversion and libjpeg-turbo through libvips, per sample: both upsample
// chroma and convert to RGB alike, and their inverse DCTs round
// differently. Measured on these files: at most 3, mean below 0.05.
// Builds with the ometiff_turbo tag decode with libjpeg-turbo too, and
// allow no difference (interop_turbo_test.go).
var (
	jpegMaxDifference  = 4
	jpegMeanDifference = 0.1
)

// readPage reads every row of a page with the band reader.
func readPage(t *testing.T, page *tiff.Page, workers int) []byte {
	t.Helper()
	r, err := NewBandReader(context.Background(), page, Options{Workers: workers})
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	return got
}

// reference returns the pixels a page must have: its source's for a
// lossless first page, else libvips's decoding of it.
func reference(t *testing.T, dir, path string, c interopCase, ref pageRef) []byte {
	t.Helper()
	if c.source == "tifffile-u16.ome" { // its levels, as tifffile wrote them
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s.%d.raw", c.source, ref.sub)))
		require.NoError(t, err)
		return data
	}
	if c.source != "" && ref == (pageRef{}) {
		data, err := os.ReadFile(filepath.Join(dir, c.source+".raw"))
		require.NoError(t, err)
		return data
	}
	option := fmt.Sprintf("[page=%d]", ref.main)
	if ref.sub > 0 {
		option = fmt.Sprintf("[subifd=%d]", ref.sub-1)
	}
	raw := filepath.Join(dir, "reference.raw")
	interop.MustRun(t, "vips", "rawsave", path+option, raw)
	data, err := os.ReadFile(raw)
	require.NoError(t, err)
	return data
}

// difference returns the largest and the sum of the absolute differences
// between two samples slices of equal length.
func difference(a, b []byte) (maxDiff int, sum float64) {
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d < 0 {
			d = -d
		}
		maxDiff = max(maxDiff, d)
		sum += float64(d)
	}
	return maxDiff, sum
}
