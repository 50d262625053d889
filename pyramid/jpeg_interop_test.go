package pyramid

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/tiff"
)

// jpegFile is a JPEG file for the external readers, with the reference
// pyramids of its main chain (levels reduced from the source pixels).
type jpegFile struct {
	path  string
	gold  goldenPyramid
	want  [][]refPlane
	ycbcr bool // it has YCbCr tiles, which tiffinfo -D cannot display
}

// jpegMinPSNR is the fidelity every reader must decode our JPEG test
// pyramids with, against the source pixels at every level: they are
// small and smooth, at quality 75 and 90.
const jpegMinPSNR = 35.0

// jpegFiles writes the JPEG pyramids to dir as the readers get them: each
// as written (with Create, so that its OME-XML names the file) and as
// BigTIFF, each of its images alone (Viv takes files of one interleaved
// image; see TestInteropJPEGViv), and copies of them through
// AddEncodedImage, the full resolution's tiles copied and the levels
// computed from its decoded pixels, or every level copied.
func jpegFiles(t *testing.T, dir string) []jpegFile {
	var files []jpegFile
	add := func(name string, g goldenPyramid, data []byte) {
		path := filepath.Join(dir, name+".ome.tif")
		if data == nil {
			g.writeFile(t, path)
		} else {
			require.NoError(t, os.WriteFile(path, data, 0o644))
		}
		files = append(files, jpegFile{path: path, gold: g, want: g.expected(t), ycbcr: g.opts.JPEGColor == JPEGYCbCr420 && hasRGB(g)})
	}
	for _, g := range jpegPyramids() {
		add(g.name, g, nil)
		big := g
		big.opts.BigTIFF = BigTIFFAlways
		add(g.name+"-bigtiff", big, big.write(t))
		for i, im := range g.images {
			one := g
			one.images = []goldenImage{im}
			add(fmt.Sprintf("%s-image%d", g.name, i), one, one.write(t))
		}
		src := g.write(t)
		add(g.name+"-copied", g, copyFile(t, g, src, g.opts, false))
		add(g.name+"-copied-levels", g, copyFile(t, g, src, Options{}, true))
	}
	return files
}

// levelName names level l of the plane at main-chain index page for
// libvips.
func levelName(path string, page, l int) string {
	return fmt.Sprintf("%s[page=%d,subifd=%d]", path, page, l-1)
}

// TestInteropJPEGLibtiff: tiffinfo walks every directory, SubIFDs
// included, and finds JPEG with JPEGTables in each; tiffinfo -D decodes
// every tile of files without YCbCr tiles with nothing on stderr (it
// cannot display subsampled YCbCr tiles, libvips's own included); and
// tiffcp -c none, which asks libjpeg for RGB (JPEGCOLORMODE), decodes the
// main chain close to the source.
func TestInteropJPEGLibtiff(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tiffinfo", "tiffcp")
	dir := t.TempDir()
	for _, f := range jpegFiles(t, dir) {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			out := interop.MustRun(t, "tiffinfo", f.path)
			directories := 0
			for _, levels := range f.want {
				directories += len(levels)
			}
			assert.Equal(t, directories, strings.Count(out, "TIFF Directory at offset"), "tiffinfo walks the SubIFDs")
			assert.Equal(t, directories, strings.Count(out, "Compression Scheme: JPEG"))
			assert.Equal(t, directories, strings.Count(out, "JPEG Tables: ("))
			if !f.ycbcr {
				interop.MustRun(t, "tiffinfo", "-D", f.path)
			}
			plain := filepath.Join(dir, "plain.tif")
			interop.MustRun(t, "tiffcp", "-c", "none", f.path, plain)
			data, err := os.ReadFile(plain)
			require.NoError(t, err)
			copied, err := readback.Parse(data)
			require.NoError(t, err)
			require.Len(t, copied.IFDs, len(f.want))
			for i, d := range copied.IFDs {
				assert.Equal(t, uint64(tiff.CompressionNone), d.Uint(tiff.TagCompression, 0))
				im, err := copied.Image(d)
				require.NoError(t, err)
				p := psnr(f.want[i][0].pix, im.Pix)
				t.Logf("plane %d: PSNR %.1f dB", i, p)
				assert.GreaterOrEqual(t, p, jpegMinPSNR, "plane %d decoded by libtiff", i)
			}
		})
	}
}

// TestInteropJPEGLibvips: libvips (libtiff and libjpeg-turbo) decodes
// every level of every plane close to the source.
func TestInteropJPEGLibvips(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips")
	dir := t.TempDir()
	for _, f := range jpegFiles(t, dir) {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			for i, levels := range f.want {
				for l, lv := range levels {
					raw := filepath.Join(dir, "level.raw")
					interop.MustRun(t, "vips", "rawsave", levelName(f.path, i, l), raw)
					got, err := os.ReadFile(raw)
					require.NoError(t, err)
					require.Len(t, got, len(lv.pix), "plane %d level %d", i, l)
					assert.GreaterOrEqual(t, psnr(lv.pix, got), jpegMinPSNR, "plane %d level %d decoded by libvips", i, l)
				}
			}
		})
	}
}

// TestInteropJPEGGDAL: GDAL opens every plane (GTIFF_DIR) with its
// SubIFDs as overviews and checksums them without an error, and decodes
// every level of the first plane close to the source.
func TestInteropJPEGGDAL(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "gdalinfo", "gdal_translate")
	dir := t.TempDir()
	for _, f := range jpegFiles(t, dir) {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			for i, levels := range f.want {
				name := fmt.Sprintf("GTIFF_DIR:%d:%s", i+1, f.path)
				r := interop.Run("gdalinfo", "-checksum", name)
				require.NoError(t, r.Err, r.Stderr)
				assert.NotContains(t, r.Stderr+r.Stdout, "ERROR")
				assert.Contains(t, r.Stdout, fmt.Sprintf("Size is %d, %d", levels[0].w, levels[0].h))
				if len(levels) > 1 {
					var sizes []string
					for _, lv := range levels[1:] {
						sizes = append(sizes, fmt.Sprintf("%dx%d", lv.w, lv.h))
					}
					assert.Contains(t, r.Stdout, "Overviews: "+strings.Join(sizes, ", "), "plane %d", i)
				}
				if i > 0 {
					continue
				}
				for l, lv := range levels {
					raw := filepath.Join(dir, "level.raw")
					args := []string{"-q", "-of", "ENVI", "-co", "INTERLEAVE=BIP"}
					if l > 0 {
						args = append(args, "-ovr", strconv.Itoa(l-1))
					}
					interop.MustRun(t, "gdal_translate", append(args, name, raw)...)
					got, err := os.ReadFile(raw)
					require.NoError(t, err)
					require.Len(t, got, len(lv.pix), "level %d", l)
					assert.GreaterOrEqual(t, psnr(lv.pix, got), jpegMinPSNR, "level %d decoded by GDAL", l)
				}
			}
		})
	}
}

// TestInteropJPEGViv: Viv's loader (geotiff.js and its JPEG decoder)
// decodes every level of every plane close to the source, as Viv shows
// it: geotiff.js hands YCbCr tiles over as YCbCr (its decoder converts no
// colour and repeats each chroma sample), and Viv's layers convert them to
// RGB in their shader, which vivYCbCrToRGB does here. It is given the
// files of one image: with several images, Viv counts an interleaved RGB
// image's planes by SizeC (3) and takes the levels of every image from
// the first's SubIFDs, whatever the codec, so it misplaces the images
// after an RGB one.
func TestInteropJPEGViv(t *testing.T) {
	interop.Selected(t)
	script := interop.Viv(t)
	dir := t.TempDir()
	for _, f := range jpegFiles(t, dir) {
		if len(f.gold.images) > 1 {
			continue
		}
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			raw := filepath.Join(dir, "viv.raw")
			var got []vivImage
			out := interop.MustRun(t, "node", script, f.path, raw)
			require.NoError(t, json.Unmarshal([]byte(out), &got), out)
			data, err := os.ReadFile(raw)
			require.NoError(t, err)
			require.Len(t, got, 1)
			spec, _ := f.gold.images[0].spec.normalized()
			require.Equal(t, spec.Planes(), got[0].Planes)
			require.Len(t, got[0].Levels, len(f.want[0]))
			for plane := range spec.Planes() {
				for l, lv := range f.want[plane] {
					assert.Equal(t, [2]int{lv.w, lv.h}, [2]int{got[0].Levels[l].Width, got[0].Levels[l].Height}, "level %d size", l)
					n := min(len(lv.pix), len(data))
					raster := data[:n]
					if got[0].Photometric == int(tiff.PhotometricYCbCr) {
						raster = vivYCbCrToRGB(raster)
					}
					p := psnr(lv.pix, raster)
					t.Logf("plane %d level %d: PSNR %.1f dB", plane, l, p)
					assert.GreaterOrEqual(t, p, jpegMinPSNR, "plane %d level %d decoded by Viv", plane, l)
					data = data[n:]
				}
			}
			assert.Empty(t, data, "rasters past the expected ones")
		})
	}
}

// vivYCbCrToRGB converts interleaved YCbCr samples to RGB as the shader of
// Viv's layers does (full-range JFIF coefficients, on values in [0, 1]).
func vivYCbCrToRGB(ycc []byte) []byte {
	out := make([]byte, len(ycc))
	clamp := func(v float64) byte { return byte(math.Round(math.Min(math.Max(v, 0), 1) * 255)) }
	for i := 0; i+2 < len(ycc); i += 3 {
		y, cb, cr := float64(ycc[i])/255, float64(ycc[i+1])/255-0.5, float64(ycc[i+2])/255-0.5
		out[i] = clamp(y + 1.402*cr)
		out[i+1] = clamp(y - 0.34414*cb - 0.71414*cr)
		out[i+2] = clamp(y + 1.772*cb)
	}
	return out
}

// TestInteropJPEGTifffile: tifffile finds an OME-TIFF with every series
// at its shape and levels. (Decoding JPEG needs imagecodecs, which is not
// installed.)
func TestInteropJPEGTifffile(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	for _, f := range jpegFiles(t, t.TempDir()) {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			tifffileSeriesOf(t, f.path, f.gold, f.want)
		})
	}
}
