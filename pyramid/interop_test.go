package pyramid

import (
	"encoding/json"
	"fmt"
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

// schemaPath finds the OME 2016-06 schema (interop.SchemaPath).
func schemaPath() string { return interop.SchemaPath() }

// needSchema skips the test unless xmllint and the OME schema are there,
// or fails it under OMETIFF_INTEROP, like interop.Need.
func needSchema(t *testing.T) {
	t.Helper()
	interop.NeedSchema(t)
}

// TestInteropOMEXMLSchema validates the OME-XML of every interop
// pyramid with xmllint against the OME 2016-06 schema, written both to
// memory (TiffData without UUID) and to a file whose name needs escaping
// (TiffData with UUID FileName). It runs in make test too. Without xmllint
// or the schema it skips there, and fails under make interop
// (OMETIFF_INTEROP), as CI runs it: CI clones the project beside shared/,
// where schemaPath finds the schema.
func TestInteropOMEXMLSchema(t *testing.T) {
	needSchema(t)
	for _, g := range interopPyramids() {
		t.Run(g.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, `"A&B" <1>.ome.tif`)
			g.writeFile(t, path)
			named, err := os.ReadFile(path)
			require.NoError(t, err)
			for name, data := range map[string][]byte{"memory": g.write(t), "file": named} {
				f, err := readback.Parse(data)
				require.NoError(t, err)
				description := f.IFDs[0].Text(tiff.TagImageDescription)
				if name == "file" {
					assert.Contains(t, description, `<UUID FileName="&quot;A&amp;B&quot; &lt;1&gt;.ome.tif">urn:uuid:`)
				} else {
					assert.NotContains(t, description, "<UUID")
				}
				xml := filepath.Join(dir, name+".xml")
				require.NoError(t, os.WriteFile(xml, []byte(description), 0o644))
				r := interop.Run("xmllint", "--noout", "--nonet", "--schema", schemaPath(), xml)
				require.NoError(t, r.Err, r.Stderr)
				assert.Contains(t, r.Stderr, "validates", name)
			}
		})
	}
}

// interopFile is a file written for the external readers, with what they
// should find in it.
type interopFile struct {
	path  string
	gold  goldenPyramid
	want  [][]refPlane // reference pyramids of the main chain
	pixel bool         // tifffile can decode it (none, deflate)
}

// interopPyramids are the goldens, each again as BigTIFF, and a pyramid
// of the pixel types and samples the goldens leave out, with odd sizes: what
// the external readers are given.
func interopPyramids() []goldenPyramid {
	all := goldenPyramids()
	for _, g := range goldenPyramids() {
		g.name += "-bigtiff"
		g.opts.BigTIFF = BigTIFFAlways
		all = append(all, g)
	}
	var types []goldenImage
	for i, s := range []struct {
		pt      PixelType
		samples int
	}{{Int8, 1}, {Uint32, 1}, {Int32, 1}, {Float64, 1}, {Uint16, 3}} {
		types = append(types, planesFor(ImageSpec{Name: fmt.Sprintf("type-%d", i), SizeX: 37 + i, SizeY: 29 - i, SizeC: 2,
			PixelType: s.pt, SamplesPerPixel: s.samples}))
	}
	return append(all, goldenPyramid{name: "every-type", opts: Options{TileSize: 16}, images: types})
}

// interopFiles writes every interop pyramid and a deflate and a none
// variant of each to dir: the pyramids with Create, so their OME-XML names
// the file, the variants from memory, so theirs does not.
func interopFiles(t *testing.T, dir string) []interopFile {
	var files []interopFile
	for _, g := range interopPyramids() {
		seen := map[Compression]bool{}
		for _, comp := range []Compression{g.opts.Compression, None, Deflate} {
			if seen[comp] {
				continue
			}
			seen[comp] = true
			v := g
			v.opts.Compression = comp
			if comp == None {
				v.opts.Predictor = PredictorNone
			}
			path := filepath.Join(dir, fmt.Sprintf("%s-%v.ome.tif", g.name, comp))
			if comp == g.opts.Compression {
				v.writeFile(t, path)
			} else {
				require.NoError(t, os.WriteFile(path, v.write(t), 0o644))
			}
			files = append(files, interopFile{path: path, gold: v, want: v.expected(t), pixel: comp == None || comp == Deflate && !isFloat(v)})
		}
	}
	return files
}

func hasRGB(g goldenPyramid) bool {
	for _, im := range g.images {
		if im.spec.SamplesPerPixel == 3 {
			return true
		}
	}
	return false
}

func isFloat(g goldenPyramid) bool {
	for _, im := range g.images {
		if im.spec.PixelType.Float() {
			return true
		}
	}
	return false
}

// tifffileSummary is a Python script printing, as JSON, what tifffile sees
// in an OME-TIFF: is_ome, and per series its shape, dtype and level shapes;
// with a second argument it also writes level L of series S, as raw
// little-endian samples, to the file named by the third.
const tifffileSummary = `
import json, sys, numpy as np, tifffile
with tifffile.TiffFile(sys.argv[1]) as tif:
    out = {"is_ome": tif.is_ome, "series": [
        {"shape": list(s.shape), "dtype": str(s.dtype), "axes": s.axes,
         "levels": [list(l.shape) for l in s.levels]} for s in tif.series]}
    if len(sys.argv) > 2:
        s, l = map(int, sys.argv[2].split(","))
        a = tif.series[s].levels[l].asarray()
        open(sys.argv[3], "wb").write(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes())
    print(json.dumps(out))
`

type tifffileSeries struct {
	Shape  []int   `json:"shape"`
	Dtype  string  `json:"dtype"`
	Axes   string  `json:"axes"`
	Levels [][]int `json:"levels"`
}

// TestInteropTifffile: tifffile sees an OME-TIFF with every series at the
// right shape, dtype and number of levels, and reads pixels equal to the
// source where it can decode them without imagecodecs.
func TestInteropTifffile(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	dir := t.TempDir()
	for _, f := range interopFiles(t, dir) {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			series := tifffileSeriesOf(t, f.path, f.gold, f.want)
			if !f.pixel {
				return
			}
			plane := 0
			for s, gi := range f.gold.images {
				spec, _ := gi.spec.normalized()
				for l := range f.want[plane] {
					raw := filepath.Join(dir, "pixels.raw")
					interop.RunPython(t, tifffileSummary, f.path, fmt.Sprintf("%d,%d", s, l), raw)
					data, err := os.ReadFile(raw)
					require.NoError(t, err)
					var want []byte
					for p := range spec.Planes() {
						want = append(want, f.want[plane+p][l].pix...)
					}
					assert.True(t, string(want) == string(data), "series %d level %d pixels (%s)", s, l, series[s].Axes)
				}
				plane += spec.Planes()
			}
		})
	}
}

// tifffileSeriesOf has tifffile read the structure of the file at path,
// written from gold, and checks that it is an OME-TIFF of gold's series,
// each of its type and with the levels of want, the reference pyramids of
// the main chain. It returns the series.
func tifffileSeriesOf(t *testing.T, path string, gold goldenPyramid, want [][]refPlane) []tifffileSeries {
	t.Helper()
	out := interop.RunPython(t, tifffileSummary, path)
	var got struct {
		IsOME  bool             `json:"is_ome"`
		Series []tifffileSeries `json:"series"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.True(t, got.IsOME)
	require.Len(t, got.Series, len(gold.images))
	plane := 0
	for s, gi := range gold.images {
		spec, _ := gi.spec.normalized()
		ser := got.Series[s]
		assert.Equal(t, map[PixelType]string{Uint8: "uint8", Int8: "int8", Uint16: "uint16", Int16: "int16", Uint32: "uint32", Int32: "int32", Float32: "float32", Float64: "float64"}[spec.PixelType], ser.Dtype)
		levels := want[plane]
		require.Len(t, ser.Levels, len(levels), "levels of series %d", s)
		for l, lv := range levels {
			shape := ser.Levels[l]
			yx := shape[len(shape)-2:]
			if spec.SamplesPerPixel == 3 {
				yx = shape[len(shape)-3 : len(shape)-1]
			}
			assert.Equal(t, []int{lv.h, lv.w}, yx, "series %d level %d", s, l)
		}
		plane += spec.Planes()
	}
	return got.Series
}

// TestInteropLibvips: libvips opens every SubIFD level at the right size
// and decodes it (vips avg reads every pixel).
func TestInteropLibvips(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips", "vipsheader")
	for _, f := range interopFiles(t, t.TempDir()) {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			for l, lv := range f.want[0] {
				name := fmt.Sprintf("%s[subifd=%d]", f.path, l-1)
				w := strings.TrimSpace(interop.MustRun(t, "vipsheader", "-f", "width", name))
				h := strings.TrimSpace(interop.MustRun(t, "vipsheader", "-f", "height", name))
				assert.Equal(t, strconv.Itoa(lv.w), w, "level %d width", l)
				assert.Equal(t, strconv.Itoa(lv.h), h, "level %d height", l)
				interop.MustRun(t, "vips", "avg", name)
			}
		})
	}
}

// TestInteropLibtiff: tiffinfo -D decodes every tile of the main chain with
// nothing on stderr, and tiffdump shows the SubIFDs.
func TestInteropLibtiff(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tiffinfo", "tiffdump")
	for _, f := range interopFiles(t, t.TempDir()) {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			out := interop.MustRun(t, "tiffinfo", "-D", f.path)
			directories := 0
			for _, levels := range f.want {
				directories += len(levels)
			}
			assert.Equal(t, directories, strings.Count(out, "TIFF Directory at offset"), "tiffinfo walks the SubIFDs too")
			if len(f.want[0]) > 1 {
				assert.Contains(t, interop.MustRun(t, "tiffdump", f.path), "SubIFD (330)")
			}
		})
	}
}

// TestInteropGDAL: gdalinfo opens every file and checksums its first image.
func TestInteropGDAL(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "gdalinfo")
	for _, f := range interopFiles(t, t.TempDir()) {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			r := interop.Run("gdalinfo", "-checksum", f.path)
			require.NoError(t, r.Err, r.Stderr)
			assert.NotContains(t, r.Stderr, "ERROR")
			assert.Contains(t, r.Stdout, fmt.Sprintf("Size is %d, %d", f.want[0][0].w, f.want[0][0].h))
			assert.Contains(t, r.Stdout, "Checksum=")
		})
	}
}

// TestInteropLibtiffPixels: libtiff decodes every codec and predictor to
// the source pixels: the main chain through `tiffcp -c none` (read back
// uncompressed), and every level of the first plane through libvips's
// rawsave, which decodes with libtiff.
func TestInteropLibtiffPixels(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tiffcp", "vips")
	dir := t.TempDir()
	files := interopFiles(t, dir)
	for _, g := range goldenPyramids() { // every codec on the first golden
		for _, comp := range []Compression{LZW, Zstd} {
			v := g
			v.opts.Compression = comp
			path := filepath.Join(dir, fmt.Sprintf("%s-%v-extra.ome.tif", g.name, comp))
			require.NoError(t, os.WriteFile(path, v.write(t), 0o644))
			files = append(files, interopFile{path: path, gold: v, want: v.expected(t)})
		}
	}
	for _, f := range files {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			planes := libtiffPlanes(t, dir, f.path)
			require.Len(t, planes, len(f.want))
			for i, im := range planes {
				assert.True(t, string(f.want[i][0].pix) == string(im.Pix), "plane %d decoded by libtiff", i)
			}
			for l, lv := range f.want[0] {
				raw := filepath.Join(dir, "level.raw")
				interop.MustRun(t, "vips", "rawsave", fmt.Sprintf("%s[subifd=%d]", f.path, l-1), raw)
				got, err := os.ReadFile(raw)
				require.NoError(t, err)
				assert.True(t, string(lv.pix) == string(got), "level %d decoded by libvips/libtiff", l)
			}
		})
	}
}

// libtiffPlanes has libtiff decode the main chain of the file at path
// (tiffcp -c none, into dir) and returns its directories as readback
// decodes them, each checked to be uncompressed.
func libtiffPlanes(t *testing.T, dir, path string) []*readback.Image {
	t.Helper()
	plain := filepath.Join(dir, "plain.tif")
	interop.MustRun(t, "tiffcp", "-c", "none", path, plain)
	data, err := os.ReadFile(plain)
	require.NoError(t, err)
	copied, err := readback.Parse(data)
	require.NoError(t, err)
	var planes []*readback.Image
	for _, d := range copied.IFDs {
		assert.Equal(t, uint64(tiff.CompressionNone), d.Uint(tiff.TagCompression, 0))
		im, err := copied.Image(d)
		require.NoError(t, err)
		planes = append(planes, im)
	}
	return planes
}

// vivImage is what internal/interop/viv/read.mjs reports of one image.
type vivImage struct {
	Name   string   `json:"name"`
	Dtype  string   `json:"dtype"`
	Labels []string `json:"labels"`
	Order  string   `json:"order"`
	// Photometric is the interpretation Viv's layers render with.
	Photometric int `json:"photometric"`
	Planes      int `json:"planes"`
	Levels      []struct {
		Shape         []int `json:"shape"`
		Width, Height int
	} `json:"levels"`
}

// runViv has Viv's loader (script, from interop.Viv) read the file at
// path, and returns what it reports of each image and the rasters it
// decoded (written into dir): every level of every plane, in order.
func runViv(t *testing.T, script, dir, path string) ([]vivImage, []byte) {
	t.Helper()
	raw := filepath.Join(dir, "viv.raw")
	var got []vivImage
	out := interop.MustRun(t, "node", script, path, raw)
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	data, err := os.ReadFile(raw)
	require.NoError(t, err)
	return got, data
}

// TestInteropViv: Viv's loader (the OME-TIFF reader of Avivator and
// Vizarr: its own OME-XML parser over geotiff.js, with a WebAssembly LZW
// decoder) finds every image with its name, type and levels, and decodes
// every level of every plane to the source pixels. Left out: Zstd, which
// geotiff.js 2 cannot decode, and LZW with 3 samples per pixel, which Viv's
// LZW decoder cannot either, whoever wrote the file: it sizes its output
// as TileWidth x TileLength x bytes per sample, one sample per pixel.
func TestInteropViv(t *testing.T) {
	interop.Selected(t)
	script := interop.Viv(t)
	dir := t.TempDir()
	files := interopFiles(t, dir)
	for _, g := range interopPyramids() {
		if g.opts.Compression != LZW {
			v := g
			v.opts.Compression = LZW
			path := filepath.Join(dir, fmt.Sprintf("%s-%v-viv.ome.tif", g.name, LZW))
			require.NoError(t, os.WriteFile(path, v.write(t), 0o644))
			files = append(files, interopFile{path: path, gold: v, want: v.expected(t)})
		}
	}
	dtypes := map[PixelType]string{Uint8: "Uint8", Int8: "Int8", Uint16: "Uint16", Int16: "Int16", Uint32: "Uint32", Int32: "Int32", Float32: "Float32", Float64: "Float64"}
	for _, f := range files {
		if f.gold.opts.Compression == Zstd || f.gold.opts.Compression == LZW && hasRGB(f.gold) {
			continue
		}
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			got, data := runViv(t, script, dir, f.path)
			require.Len(t, got, len(f.gold.images))
			plane := 0
			for i, gi := range f.gold.images {
				spec, _ := gi.spec.normalized()
				im := got[i]
				assert.Equal(t, spec.Name, im.Name, "image %d name", i)
				assert.Equal(t, dtypes[spec.PixelType], im.Dtype, "image %d type", i)
				assert.Equal(t, string(spec.DimensionOrder), im.Order, "image %d", i)
				require.Equal(t, spec.Planes(), im.Planes, "image %d planes", i)
				require.Len(t, im.Levels, len(f.want[plane]), "image %d levels", i)
				for p := range spec.Planes() {
					for l, lv := range f.want[plane+p] {
						assert.Equal(t, [2]int{lv.w, lv.h}, [2]int{im.Levels[l].Width, im.Levels[l].Height}, "image %d level %d size", i, l)
						n := min(len(lv.pix), len(data))
						assert.True(t, string(lv.pix) == string(data[:n]), "image %d plane %d level %d pixels", i, p, l)
						data = data[n:]
					}
				}
				plane += spec.Planes()
			}
			assert.Empty(t, data, "rasters past the expected ones")
		})
	}
}
