package pyramid

import (
	"cmp"
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
	"github.com/ometiff-go/ometiff/tiff"
)

// jpegFile is a JPEG file for the external readers, with the reference
// pyramids of its main chain (levels reduced from the source pixels).
type jpegFile struct {
	path  string
	gold  goldenPyramid
	want  [][]refPlane
	ycbcr bool    // it has YCbCr tiles, which tiffinfo -D cannot display
	psnr  float64 // the least PSNR a reader decodes want with; 0 for jpegMinPSNR
}

// minPSNR is the least PSNR a reader must decode f's levels with.
func (f jpegFile) minPSNR() float64 { return cmp.Or(f.psnr, jpegMinPSNR) }

// jpegMinPSNR is the fidelity every reader must decode our JPEG test
// pyramids with, against the source pixels at every level: they are
// small and smooth, at quality 75 and 90.
const jpegMinPSNR = 35.0

// svsMinPSNR is how close every reader's decoding of the SVS-like copies
// must be to package compress's: libjpeg's IDCT differs from image/jpeg's
// by a level here and there, and geotiff.js repeats chroma samples where
// libjpeg interpolates them.
const svsMinPSNR = 38.0

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
		add(g.name+"-copied", g, copyFile(t, g, src, g.opts, nil, false))
		add(g.name+"-copied-levels", g, copyFile(t, g, src, Options{}, nil, true))
	}
	// The copies of an SVS-like slide: their levels as package compress
	// decodes them, which the readers must match up to their IDCTs and
	// chroma upsampling.
	svs := svsLike(t, dir, 1000, 700)
	for _, all := range []bool{false, true} {
		c := copySVS(t, svs, all)
		path := filepath.Join(dir, fmt.Sprintf("svs-copied-%v.ome.tif", all))
		require.NoError(t, os.WriteFile(path, c.data, 0o644))
		files = append(files, jpegFile{path: path, gold: goldenPyramid{images: []goldenImage{{spec: c.spec}}},
			want: readPyramids(t, c.data), ycbcr: true, psnr: svsMinPSNR})
	}
	return files
}

// svsLike writes an SVS-like slide to dir and returns its path: the
// slide's RGB rendering, width x height, as libvips writes a JPEG pyramid
// at quality 70 in 240 x 240 tiles (YCbCr 4:2:0, its levels halved and
// rounded down, in the main chain), with an Aperio description set by
// tiffset, as the reading side's tests make it.
func svsLike(t *testing.T, dir string, width, height int) string {
	interop.Need(t, "vips", "tiffset")
	src := slideRGBOf(max(width, height))
	raw, v, svs := filepath.Join(dir, "svs.raw"), filepath.Join(dir, "svs.v"), filepath.Join(dir, "slide.svs")
	rows := make([]byte, 0, width*height*3)
	for y := range height {
		rows = append(rows, src.pix[y*src.w*3:][:width*3]...)
	}
	require.NoError(t, os.WriteFile(raw, rows, 0o644))
	interop.MustRun(t, "vips", "rawload", raw, v, strconv.Itoa(width), strconv.Itoa(height), "3", "--format", "uchar", "--interpretation", "srgb")
	interop.MustRun(t, "vips", "tiffsave", v, svs, "--compression", "jpeg", "--Q", "70", "--tile", "--tile-width", "240", "--tile-height", "240", "--pyramid")
	interop.MustRun(t, "tiffset", "-s", "270", fmt.Sprintf("Aperio Image Library v12.0.15\n%dx%d [0,0 %dx%d] (240x240) JPEG/RGB Q=70|AppMag = 20|MPP = 0.4990", width, height, width, height), svs)
	return svs
}

// svsCopy is a copy of an SVS-like slide through AddEncodedImage, with the
// source's levels as they decode (the reference of its levels).
type svsCopy struct {
	data  []byte
	spec  ImageSpec
	want  []refPlane   // the copy's levels, as package compress decodes the source
	pages []*tiff.Page // the source's tiled pages, full resolution first
	src   *tiff.File
}

// copySVS copies the slide at path: its full-resolution tiles as they are,
// and either its levels too (all) or levels computed from its decoded full
// resolution, as JPEG at quality 70 in 240 x 240 tiles.
func copySVS(t *testing.T, path string, all bool) svsCopy {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	c := svsCopy{src: readFile(t, data)}
	for _, p := range c.src.Pages {
		if l, err := p.Layout(); err == nil && l.Tiled {
			c.pages = append(c.pages, p)
		}
	}
	var levels []EncodedLevel
	for l, p := range c.pages {
		if l > 0 && !all {
			break
		}
		e, err := EncodedLevelOf(p)
		require.NoError(t, err)
		levels = append(levels, e)
	}
	full := decodePage(t, c.pages[0], nil)
	c.spec = ImageSpec{Name: "slide", SizeX: full.w, SizeY: full.h, SamplesPerPixel: 3}
	opts := Options{TileSize: 240, Compression: JPEG, Quality: 70}
	c.data = writeMemory(t, opts, func(w *Writer) error {
		im, err := w.AddEncodedImage(c.spec, levels...)
		if err != nil {
			return err
		}
		ep, err := im.EncodedPlane(0, 0, 0)
		if err != nil {
			return err
		}
		return copyPlane(t, ep, c.pages[0], c.pages[1:], all)
	})
	if all {
		for _, p := range c.pages {
			c.want = append(c.want, decodePage(t, p, nil))
		}
	} else {
		c.want = meanLevels(full, 1+len(readFile(t, c.data).Pages[0].SubIFDs))
	}
	return c
}

// TestInteropCopySVS copies an SVS-like slide (a libvips JPEG pyramid with
// an Aperio description, which OpenSlide reports as aperio) through
// AddEncodedImage: every full-resolution tile is the source's byte for
// byte, with its JPEGTables and YCbCr fields; the reduced levels are
// either computed from the decoded full resolution (the same bytes as
// writing the decoded pixels as a plain image) or the source's own,
// byte for byte, as SubIFDs of their sizes. The readers' tests
// (TestInteropJPEG...) read both copies at every level.
func TestInteropCopySVS(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "openslide-show-properties")
	dir := t.TempDir()
	svs := svsLike(t, dir, 1000, 700)
	assert.Contains(t, interop.MustRun(t, "openslide-show-properties", svs), "openslide.vendor: 'aperio'")
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprintf("levels copied %v", all), func(t *testing.T) {
			c := copySVS(t, svs, all)
			got := readFile(t, c.data)
			require.Len(t, got.Pages, 1)
			levels := levelsOf(got.Pages[0])
			sameTiles(t, c.pages[0], levels[0], "full resolution")
			if all {
				require.Len(t, levels, len(c.pages))
				for l := 1; l < len(levels); l++ {
					sameTiles(t, c.pages[l], levels[l], fmt.Sprintf("level %d", l))
				}
				return
			}
			full := decodePage(t, c.pages[0], nil)
			plain := readFile(t, writeMemory(t, Options{TileSize: 240, Compression: JPEG, Quality: 70}, func(w *Writer) error {
				im, err := w.AddImage(c.spec)
				if err != nil {
					return err
				}
				return im.WritePlane(0, 0, 0, full.pix)
			}))
			want := levelsOf(plain.Pages[0])
			require.Len(t, levels, len(want))
			for l := 1; l < len(levels); l++ {
				sameTiles(t, want[l], levels[l], fmt.Sprintf("level %d", l))
			}
		})
	}
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
			planes := libtiffPlanes(t, dir, f.path)
			require.Len(t, planes, len(f.want))
			for i, im := range planes {
				p := psnr(f.want[i][0].pix, im.Pix)
				t.Logf("plane %d: PSNR %.1f dB", i, p)
				assert.GreaterOrEqual(t, p, f.minPSNR(), "plane %d decoded by libtiff", i)
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
					p := psnr(lv.pix, got)
					t.Logf("plane %d level %d: PSNR %.1f dB", i, l, p)
					assert.GreaterOrEqual(t, p, f.minPSNR(), "plane %d level %d decoded by libvips", i, l)
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
					p := psnr(lv.pix, got)
					t.Logf("level %d: PSNR %.1f dB", l, p)
					assert.GreaterOrEqual(t, p, f.minPSNR(), "level %d decoded by GDAL", l)
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
			got, data := runViv(t, script, dir, f.path)
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
					assert.GreaterOrEqual(t, p, f.minPSNR(), "plane %d level %d decoded by Viv", plane, l)
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

// vipsJPEGPyramid has libvips write base as a JPEG SubIFD pyramid at
// quality, in 256 x 256 tiles, as the speed comparison runs it, and
// returns its path.
func vipsJPEGPyramid(t *testing.T, dir string, base refPlane, quality int) string {
	raw, v := filepath.Join(dir, "slide.raw"), filepath.Join(dir, "slide.v")
	if _, err := os.Stat(v); err != nil {
		require.NoError(t, os.WriteFile(raw, base.pix, 0o644))
		interop.MustRun(t, "vips", "rawload", raw, v, strconv.Itoa(base.w), strconv.Itoa(base.h), "3", "--format", "uchar", "--interpretation", "srgb")
	}
	out := filepath.Join(dir, fmt.Sprintf("vips-q%d.tif", quality))
	interop.MustRun(t, "vips", "tiffsave", v, out, "--compression", "jpeg", "--Q", strconv.Itoa(quality),
		"--tile", "--tile-width", "256", "--tile-height", "256", "--pyramid", "--subifd")
	return out
}

// vipsLevel is level l of the first plane of path as libvips decodes it.
func vipsLevel(t *testing.T, path string, l int) []byte {
	raw := path + ".level.raw"
	interop.MustRun(t, "vips", "rawsave", levelName(path, 0, l), raw)
	data, err := os.ReadFile(raw)
	require.NoError(t, err)
	return data
}

// TestInteropJPEGFidelity writes the slide RGB workload (8192 x 8192) as
// JPEG pyramids and measures every level against the source's levels,
// decoded by libvips (libtiff and libjpeg-turbo) and by package compress:
//
//   - at quality 90 the full resolution has at least 40 dB, as YCbCr
//     4:2:0 and as RGB;
//   - every level is at least as good as libvips's own pyramid at the same
//     quality and coding: quality 90, which libvips writes RGB-coded by
//     itself, against ours in JPEGRGB, and quality 85, YCbCr 4:2:0 for
//     both.
//
// The reduced levels of this workload hold denser detail than the full
// resolution, which JPEG at quality 90 keeps at less than 40 dB whoever
// encodes (libvips's own Q90 levels 3 to 5 included), and 4:2:0 chroma
// caps below 40 dB from level 3 even before quantization; the figures are
// logged.
func TestInteropJPEGFidelity(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips")
	const size = 8192
	dir := t.TempDir()
	base := slideRGBOf(size)
	cases := []struct {
		quality int
		color   JPEGColor
		peer    bool // libvips writes this coding at this quality
	}{
		{90, JPEGYCbCr420, false},
		{90, JPEGRGB, true},
		{85, JPEGYCbCr420, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("Q%d %v", c.quality, c.color), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("ours-q%d-%d.ome.tif", c.quality, c.color))
			data, want := writeSlideJPEG(t, path, size, c.quality, c.color)
			f := readFile(t, data)
			var theirs string
			if c.peer {
				theirs = vipsJPEGPyramid(t, dir, base, c.quality)
				photometric := map[JPEGColor]string{JPEGRGB: "RGB color", JPEGYCbCr420: "YCbCr"}[c.color]
				assert.Contains(t, interop.MustRun(t, "tiffinfo", theirs), "Photometric Interpretation: "+photometric, "libvips's coding at Q%d", c.quality)
			}
			for l, p := range levelsOf(f.Pages[0]) {
				ours := psnr(want[l].pix, decodePage(t, p, nil).pix)
				byVips := psnr(want[l].pix, vipsLevel(t, path, l))
				line := fmt.Sprintf("level %d (%d): ours %.2f dB (package compress), %.2f dB (libvips)", l, want[l].w, ours, byVips)
				if l == 0 && c.quality >= 90 {
					assert.GreaterOrEqual(t, ours, 40.0, "full resolution, package compress")
					assert.GreaterOrEqual(t, byVips, 40.0, "full resolution, libvips")
				}
				if c.peer {
					peer := psnr(want[l].pix, vipsLevel(t, theirs, l))
					line += fmt.Sprintf("; libvips's own %.2f dB", peer)
					assert.GreaterOrEqual(t, ours, peer-0.05, "level %d: ours (package compress) against libvips's own", l)
					assert.GreaterOrEqual(t, byVips, peer-0.05, "level %d: ours (libvips) against libvips's own", l)
				}
				t.Log(line)
			}
		})
	}
}
