package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/omexmltest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// makeInputs is a Python script: tifffile writes into the folder named by
// its argument the sources the other tools start from (rgb8, u16 and f32
// .tif, uncompressed, and gray.tif, one channel of rgb8), and the
// tifffile inputs: OME-TIFFs of several series (3 channels x 5 z of 512 x
// 512 uint16 with channel names and physical sizes beside a 4096 x 4096
// image with SubIFD levels; RGB over time beside float32 in nm), an
// ImageJ hyperstack (and the same with one directory, its planes stored
// one after another, as ImageJ writes stacks past 4 GiB, and an 8-bit
// stack with a lookup table, stored as a palette image), shaped series
// (tifffile's JSON description: TZCYX, its channels a page's samples;
// TCZYX; QCZYX, Q along T; ZTYXS; ZYX truncated to one directory; two
// series of one shape), a bool mask (1-bit white-is-zero), a BigTIFF of float32 Deflate tiles, half floats in
// Deflate tiles, a big-endian
// int16 with the horizontal predictor, a multi-file OME-TIFF dataset as
// Bio-Formats lays one out (5 z in two files, each with the whole OME-XML,
// its TiffData naming the files by FileName and UUID), and the label and
// macro of the SVS-like slide.
const makeInputs = `
import sys, numpy as np, tifffile
d = sys.argv[1]
rng = np.random.default_rng(7)
def field(h, w, seed=0):
    y, x = np.mgrid[0:h, 0:w]
    return np.sin((x + seed*17)/23.)*np.cos((y - seed*5)/31.)
h, w = 600, 1000
y, x = np.mgrid[0:h, 0:w]
rgb = np.stack([128 + 100*field(h, w), 128 + 90*np.cos((x + y)/17.), (x*255//w + y*255//h)/2], -1)
rgb = (rgb + rng.normal(0, 6, rgb.shape)).clip(0, 255).astype(np.uint8)
u16 = (30000 + 20000*field(h, w, 1) + rng.normal(0, 300, (h, w))).clip(0, 65535).astype(np.uint16)
f32 = (field(h, w, 2)*1000 + rng.normal(0, 1, (h, w))).astype(np.float32)
for name, a in [('rgb8', rgb), ('u16', u16), ('f32', f32), ('gray', rgb[..., 1])]:
    tifffile.imwrite(f'{d}/{name}.tif', a, photometric='rgb' if a.ndim == 3 else 'minisblack', metadata=None)
def u16s(*shape, seed=0):
    return (30000 + 20000*field(*shape[-2:], seed) + rng.normal(0, 300, shape)).clip(0, 65535).astype(np.uint16)
stack = np.stack([np.stack([u16s(512, 512, seed=3*c + z) for z in range(5)]) for c in range(3)])
big = u16s(4096, 4096, seed=9)
with tifffile.TiffWriter(f'{d}/two-series.ome.tif', ome=True) as tw:
    tw.write(stack, tile=(256, 256), compression='zlib', metadata={'axes': 'CZYX', 'Name': 'stack',
        'Channel': {'Name': ['DAPI', 'GFP', 'RFP']}, 'PhysicalSizeX': 0.25, 'PhysicalSizeY': 0.25, 'PhysicalSizeZ': 1.5})
    tw.write(big, subifds=2, tile=(256, 256), compression='zlib', metadata={'axes': 'YX', 'Name': 'big', 'PhysicalSizeX': 0.5, 'PhysicalSizeY': 0.5})
    tw.write(big[::2, ::2], subfiletype=1, tile=(256, 256), compression='zlib')
    tw.write(big[::4, ::4], subfiletype=1, tile=(256, 256), compression='zlib')
with tifffile.TiffWriter(f'{d}/rgb-float.ome.tif', ome=True, bigtiff=True) as tw:
    tw.write(np.stack([rgb[:300, :400], rgb[300:, 500:900]]), photometric='rgb', compression='zlib',
        metadata={'axes': 'TYXS', 'Name': 'colour', 'Channel': {'Name': ['bright field']}})
    tw.write(np.stack([f32[:200, :300]*(z + 1) for z in range(3)]), tile=(128, 128),
        metadata={'axes': 'ZYX', 'Name': 'floats', 'PhysicalSizeX': 65.0, 'PhysicalSizeXUnit': 'nm', 'PhysicalSizeY': 65.0, 'PhysicalSizeYUnit': 'nm'})
hyper = np.stack([np.stack([u16s(200, 300, seed=2*z + c) for c in range(2)]) for z in range(3)])
tifffile.imwrite(f'{d}/imagej.tif', hyper, imagej=True, resolution=(4.0, 4.0), metadata={'axes': 'ZCYX', 'spacing': 2.5, 'unit': 'um'})
tifffile.imwrite(f'{d}/imagej-one-ifd.tif', hyper, imagej=True, truncate=True, metadata={'axes': 'ZCYX'})
tifffile.imwrite(f'{d}/shaped-samples.tif', np.stack([hyper[:, :, :64, :80]]*2), metadata={'axes': 'TZCYX'})
tifffile.imwrite(f'{d}/shaped-pages.tif', np.stack([hyper[:, :, :64, :80].transpose(1, 0, 2, 3)]*2), metadata={'axes': 'TCZYX'})
with tifffile.TiffWriter(f'{d}/shaped-series.tif') as tw:
    tw.write(hyper[:2, 0], metadata={'axes': 'ZYX'})
    tw.write(hyper.reshape(6, 200, 300)[:5], metadata={'axes': 'TYX'})
tifffile.imwrite(f'{d}/shaped-q.tif', np.stack([hyper[:, :, :64, :80].transpose(1, 0, 2, 3)]*2), metadata={'axes': 'QCZYX'})
tifffile.imwrite(f'{d}/shaped-truncated.tif', hyper[:, 0], truncate=True, metadata={'axes': 'ZYX'})
tifffile.imwrite(f'{d}/shaped-rgb.tif', np.stack([rgb[:64, :80]]*6).reshape(3, 2, 64, 80, 3), photometric='rgb', metadata={'axes': 'ZTYXS'})
lut = np.zeros((3, 256), np.uint16); lut[0] = lut[1] = np.arange(256)*257  # ImageJ's "Yellow"
tifffile.imwrite(f'{d}/imagej-lut.tif', (hyper[:, 0] >> 8).astype(np.uint8), imagej=True, colormap=lut, metadata={'axes': 'ZYX'})
tifffile.imwrite(f'{d}/palette.ome.tif', (hyper[:, 0] >> 8).astype(np.uint8), photometric='palette', colormap=lut, compression='zlib', metadata={'axes': 'ZYX'})
tifffile.imwrite(f'{d}/bool-mask.tif', u16 > 30000, metadata=None)
tifffile.imwrite(f'{d}/f32-bigtiff.tif', f32, bigtiff=True, tile=(128, 128), compression='zlib', metadata=None)
tifffile.imwrite(f'{d}/f16.tif', f32.astype(np.float16), tile=(128, 128), compression='zlib', metadata=None)
tifffile.imwrite(f'{d}/i16-be-p2.tif', (u16.astype(np.int32) - 32768).astype(np.int16), byteorder='>', compression='zlib', predictor=True, rowsperstrip=64, metadata=None)
uuids = ['urn:uuid:0b1e5e2a-0000-4000-8000-000000000001', 'urn:uuid:0b1e5e2a-0000-4000-8000-000000000002']
parts = ['multi_0.ome.tif', 'multi_1.ome.tif']
zs = np.stack([u16s(256, 320, seed=20 + z) for z in range(5)])
def multi_xml(i):
    tds = ''.join(f'<TiffData FirstZ="{z}" IFD="0" PlaneCount="{n}"><UUID FileName="{parts[k]}">{uuids[k]}</UUID></TiffData>' for k, (z, n) in enumerate([(0, 3), (3, 2)]))
    return ('<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" '
        f'UUID="{uuids[i]}"><Image ID="Image:0" Name="multi"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint16" '
        'SizeX="320" SizeY="256" SizeZ="5" SizeC="1" SizeT="1" PhysicalSizeX="0.5" PhysicalSizeY="0.5">'
        f'<Channel ID="Channel:0:0" SamplesPerPixel="1" Name="DAPI"/>{tds}</Pixels></Image></OME>')
for i, planes in enumerate([zs[:3], zs[3:]]):
    with tifffile.TiffWriter(f'{d}/{parts[i]}') as tw:
        for j, p in enumerate(planes):
            tw.write(p, tile=(128, 128), compression='zlib', description=multi_xml(i) if j == 0 else None, metadata=None)
tifffile.imwrite(f'{d}/label.tif', rgb[:150, :200], photometric='rgb', metadata=None)
tifffile.imwrite(f'{d}/macro.tif', rgb[::2, ::2], photometric='rgb', metadata=None)
`

// describeScript is a Python script: tifffile opens the TIFF named by its
// first argument and prints, as JSON, its series (levels apart) and, for
// an OME-TIFF, each Image's sizes, physical sizes and channel names. With
// a second argument it opens that file too, an output, and compares its
// series with the first file's, pixel by pixel (the reference of series 0
// read from a raw file of little-endian samples when a third argument
// names one), each in the axes order TCZYXS ("I", tifffile's axis of
// pages, read as T); half floats are compared widened to the output's
// float32, and 1-bit samples (bool) as bytes of 0 and 1.
const describeScript = `
import sys, json, numpy as np, tifffile, xml.etree.ElementTree as ET
def describe(path):
    with tifffile.TiffFile(path) as tif:
        series = [{'name': s.name, 'axes': s.axes, 'shape': list(s.shape), 'dtype': str(s.dtype)} for s in tif.series]
        ome = None
        if tif.is_ome:
            root = ET.fromstring(tif.ome_metadata)
            ome = []
            for im in root:
                if not im.tag.endswith('}Image'):
                    continue
                px = next(e for e in im if e.tag.endswith('}Pixels'))
                a = px.attrib
                ome.append({'name': im.get('Name', ''), 'sizes': [int(a.get(k, 1)) for k in ('SizeZ', 'SizeC', 'SizeT')],
                    'physical': [float(a.get(k, 0)) for k in ('PhysicalSizeX', 'PhysicalSizeY', 'PhysicalSizeZ')],
                    'units': [a.get(k, 'µm') for k in ('PhysicalSizeXUnit', 'PhysicalSizeYUnit', 'PhysicalSizeZUnit')],
                    'channels': [c.get('Name', '') for c in px if c.tag.endswith('}Channel')]})
        return {'series': series, 'ome': ome}
def canonical(a, axes):
    axes = axes.replace('I', 'T').replace('Q', 'T')
    for ax in 'TCZYXS':
        if ax not in axes:
            a, axes = a[..., np.newaxis], axes + ax
    return np.transpose(a, [axes.index(ax) for ax in 'TCZYXS'])
out = {'source': describe(sys.argv[1])}
if len(sys.argv) > 2:
    out['output'] = describe(sys.argv[2])
    diffs = []
    with tifffile.TiffFile(sys.argv[1]) as src, tifffile.TiffFile(sys.argv[2]) as dst:
        for i, s in enumerate(dst.series):
            b = canonical(s.asarray(), s.axes)
            if i == 0 and len(sys.argv) > 3:
                a = np.fromfile(sys.argv[3], dtype=b.dtype.newbyteorder('<')).reshape(b.shape)
            else:
                try:
                    a = canonical(src.series[i].asarray(), src.series[i].axes)
                except Exception as e:
                    diffs.append({'error': str(e)})
                    continue
            if a.dtype == np.bool_:
                a = a.astype(np.uint8)  # 1-bit masks, as 0 and 1
            widened = a.dtype.kind == 'f' and a.dtype.itemsize < b.dtype.itemsize  # half floats as float32
            if a.shape != b.shape or a.dtype.kind != b.dtype.kind or a.dtype.itemsize != b.dtype.itemsize and not widened:
                diffs.append({'error': f'{a.shape} {a.dtype} against {b.shape} {b.dtype}'})
                continue
            a = a.astype(b.dtype)
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
            diffs.append({'max': float(d.max()), 'mean': float(d.mean()), 'equal': bool(np.array_equal(a, b, equal_nan=True))})
    out['diffs'] = diffs
print(json.dumps(out))
`

// Summaries of a file as describeScript prints them.
type (
	seriesInfo struct {
		Name, Axes, Dtype string
		Shape             []int
	}
	omeInfo struct {
		Name     string
		Sizes    []int
		Physical []float64
		Units    []string
		Channels []string
	}
	fileInfo struct {
		Series []seriesInfo
		OME    []omeInfo
	}
	comparison struct {
		Source, Output fileInfo
		Diffs          []struct {
			Max, Mean float64
			Equal     bool
			Error     string
		}
	}
)

// convertCase is an input made by another tool, converted and compared.
type convertCase struct {
	name string
	make func(t *testing.T, dir, in string)
	// ext is the input's extension (.tif by default).
	ext string
	// jpeg: compared within the difference between IDCTs; else exactly.
	jpeg bool
	// viaVips: tifffile cannot decode the input (LZW, JPEG, Zstd without
	// imagecodecs): its first image is decoded by libvips instead.
	viaVips bool
	// series is the number of images the output must have; 0: as many as
	// tifffile reports for the input.
	series int
}

// tool runs a command whose arguments IN, a source name (rgb8, u16, f32,
// gray) or a file the inputs script wrote stand for those files.
func tool(name string, args ...string) func(t *testing.T, dir, in string) {
	return func(t *testing.T, dir, in string) {
		full := make([]string, len(args))
		for i, a := range args {
			switch {
			case a == "IN":
				a = in
			case a == "rgb8" || a == "u16" || a == "f32" || a == "gray":
				a = filepath.Join(dir, a+".tif")
			case strings.HasSuffix(a, ".tif") && !strings.Contains(a, "/"):
				a = filepath.Join(dir, a)
			}
			full[i] = a
		}
		interop.MustRun(t, name, full...)
	}
}

// copied takes a file the inputs script wrote.
func copied(name string) func(t *testing.T, dir, in string) {
	return func(t *testing.T, dir, in string) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(in, data, 0o644))
	}
}

// svsHeader is the slide's Aperio description, as the brief's scanner
// writes it.
const svsHeader = "Aperio Image Library v12.0.5\n24576x16384 [0,100 24576x16384] (240x240) JPEG/RGB Q=70|AppMag = 20|StripeWidth = 2040|" +
	"ScanScope ID = SS1234|Filename = 1004|Date = 12/29/09|Time = 09:59:15|Time Zone = GMT-05:00|MPP = 0.4990|Left = 25.69|Top = 23.45"

// makeSVS writes an SVS-like slide as Aperio lays it out: a JPEG pyramid
// of 240 x 240 tiles at quality 70 from libvips (its levels in the main
// chain), a stripped JPEG thumbnail as page 1, then the label (LZW
// strips) and the macro (JPEG strips), each with an Aperio description
// set by tiffset.
func makeSVS(t *testing.T, dir, in string) {
	pyr := filepath.Join(dir, "svs-pyramid.tif")
	interop.MustRun(t, "vips", "tiffsave", filepath.Join(dir, "rgb8.tif"), pyr, "--compression", "jpeg", "--Q", "70",
		"--tile", "--tile-width", "240", "--tile-height", "240", "--pyramid")
	thumb := filepath.Join(dir, "svs-thumb.tif")
	interop.MustRun(t, "vips", "thumbnail", filepath.Join(dir, "rgb8.tif"), thumb+"[compression=jpeg,Q=70,strip]", "256")
	interop.MustRun(t, "tiffcp", "-c", "jpeg:70", pyr+",0", in)
	interop.MustRun(t, "tiffcp", "-a", "-s", "-r", "16", "-c", "jpeg:70", thumb, in)
	interop.MustRun(t, "tiffcp", "-a", "-c", "jpeg:70", pyr+",1,2", in)
	interop.MustRun(t, "tiffcp", "-a", "-s", "-c", "lzw", filepath.Join(dir, "label.tif"), in)
	interop.MustRun(t, "tiffcp", "-a", "-s", "-r", "16", "-c", "jpeg:70", filepath.Join(dir, "macro.tif"), in)
	descriptions := []string{svsHeader, "Aperio Image Library v12.0.5\n1000x600 -> 256x154 - |AppMag = 20|MPP = 0.4990", "", "",
		"Aperio Image Library v12.0.5\nlabel 200x150", "Aperio Image Library v12.0.5\nmacro 500x300"}
	for i, d := range descriptions {
		if d != "" {
			interop.MustRun(t, "tiffset", "-d", fmt.Sprint(i), "-s", "270", d, in)
		}
	}
}

func convertCases() []convertCase {
	return []convertCase{
		{name: "tifffile OME-TIFF of two series, SubIFD levels", make: copied("two-series.ome.tif"), ext: ".ome.tif"},
		{name: "tifffile OME-TIFF, RGB over T and float32 Z", make: copied("rgb-float.ome.tif"), ext: ".ome.tif"},
		{name: "tifffile ImageJ hyperstack", make: copied("imagej.tif")},
		{name: "tifffile ImageJ hyperstack of one directory", make: copied("imagej-one-ifd.tif")},
		{name: "tifffile ImageJ stack with a lookup table", make: copied("imagej-lut.tif")},
		{name: "tifffile OME-TIFF of palette pages (indices)", make: copied("palette.ome.tif"), ext: ".ome.tif"},
		{name: "tifffile shaped TZCYX, channels as samples", make: copied("shaped-samples.tif")},
		{name: "tifffile shaped TCZYX", make: copied("shaped-pages.tif")},
		{name: "tifffile shaped ZTYXS", make: copied("shaped-rgb.tif")},
		{name: "tifffile shaped ZYX truncated", make: copied("shaped-truncated.tif")},
		{name: "tifffile shaped QCZYX", make: copied("shaped-q.tif")},
		{name: "tifffile shaped series of one shape", make: copied("shaped-series.tif")},
		{name: "tifffile pages of a two-file OME-TIFF dataset", make: copied("multi_0.ome.tif"), ext: ".ome.tif"},
		{name: "tifffile bool mask", make: copied("bool-mask.tif")},
		{name: "tifffile BigTIFF float32 Deflate tiles", make: copied("f32-bigtiff.tif"), ext: ".btf"},
		{name: "tifffile half floats in Deflate tiles", make: copied("f16.tif")},
		{name: "tifffile big-endian int16 Deflate p2", make: copied("i16-be-p2.tif")},
		{name: "libtiff pages of two shapes", make: tool("tiffcp", "-c", "zip", "gray", "u16", "gray", "IN")},
		{name: "vips JPEG tiles", make: tool("vips", "tiffsave", "rgb8", "IN", "--compression", "jpeg", "--Q", "85", "--tile"), jpeg: true, viaVips: true},
		{name: "vips JPEG strips", make: tool("vips", "tiffsave", "rgb8", "IN", "--compression", "jpeg"), jpeg: true, viaVips: true},
		{name: "vips LZW tiles u16 BigTIFF", make: tool("vips", "tiffsave", "u16", "IN", "--compression", "lzw", "--tile", "--predictor", "horizontal", "--bigtiff"), viaVips: true},
		{name: "vips Deflate strips RGB", make: tool("vips", "tiffsave", "rgb8", "IN", "--compression", "deflate", "--predictor", "horizontal")},
		{name: "vips Zstd tiles float32", make: tool("vips", "tiffsave", "f32", "IN", "--compression", "zstd", "--tile", "--predictor", "float"), viaVips: true},
		{name: "vips LZW pyramid", make: tool("vips", "tiffsave", "rgb8", "IN", "--compression", "lzw", "--tile", "--pyramid"), viaVips: true},
		{name: "vips JPEG pyramid in SubIFDs", make: tool("vips", "tiffsave", "rgb8", "IN", "--compression", "jpeg", "--tile", "--pyramid", "--subifd"), jpeg: true, viaVips: true},
		{name: "libtiff LZW separate planes big-endian", make: tool("tiffcp", "-c", "lzw", "-p", "separate", "-B", "rgb8", "IN"), viaVips: true},
		{name: "libtiff Deflate separate tiles big-endian", make: tool("tiffcp", "-c", "zip", "-p", "separate", "-B", "-t", "-w", "128", "-l", "96", "rgb8", "IN")},
		{name: "libtiff LZW p2 tiles u16 big-endian", make: tool("tiffcp", "-c", "lzw:2", "-B", "-t", "u16", "IN"), viaVips: true},
		{name: "libtiff Deflate tiles u16 big-endian", make: tool("tiffcp", "-c", "zip", "-B", "-t", "-w", "128", "-l", "128", "u16", "IN")},
		{name: "libtiff JPEG RGB-coded", make: tool("tiffcp", "-c", "jpeg:r:90", "-t", "rgb8", "IN"), jpeg: true, viaVips: true},
		{name: "GDAL COG LZW", make: tool("gdal_translate", "-q", "-of", "COG", "-co", "BLOCKSIZE=256", "rgb8", "IN"), viaVips: true},
		{name: "GDAL COG Deflate with an internal mask", make: tool("gdal_translate", "-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "BLOCKSIZE=256", "-mask", "1", "rgb8", "IN")},
		{name: "GDAL COG JPEG", make: tool("gdal_translate", "-q", "-of", "COG", "-co", "COMPRESS=JPEG", "-co", "BLOCKSIZE=256", "rgb8", "IN"), jpeg: true, viaVips: true},
		{name: "SVS-like slide", make: makeSVS, ext: ".svs", jpeg: true, viaVips: true, series: 3},
	}
}

// TestInteropConvert converts files written by tifffile, libtiff, libvips
// and GDAL, and an SVS-like slide, and checks the output with tifffile:
// as many series as the input has for tifffile (levels apart; the SVS's
// thumbnail apart), the same Z, C and T sizes, channel names and physical
// sizes as the input's OME-XML, and every plane's pixels equal to the
// input's as tifffile or libvips decode them, exactly for lossless
// codecs, within the difference between IDCTs for JPEG.
func TestInteropConvert(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips", "tiffcp", "tiffset", "gdal_translate", "tifffile", "openslide-show-properties")
	dir := t.TempDir()
	interop.RunPython(t, makeInputs, dir)
	for i, c := range convertCases() {
		t.Run(c.name, func(t *testing.T) {
			in := filepath.Join(dir, fmt.Sprintf("in%d%s", i, cmpOr(c.ext, ".tif")))
			c.make(t, dir, in)
			out := filepath.Join(dir, fmt.Sprintf("out%d.ome.tif", i))
			// Deflate without a predictor: tifffile reads it without
			// imagecodecs.
			code, stdout, stderr := clitest.Run(runConvert, "-compression", "deflate", "-predictor", "none", in, out)
			require.Equal(t, 0, code, stderr)
			t.Log(strings.TrimSpace(stdout))
			args := []string{in, out}
			if c.viaVips {
				ref := filepath.Join(dir, "reference.v")
				interop.MustRun(t, "vips", "tiffload", in, ref, "--page", "0")
				interop.MustRun(t, "vips", "rawsave", ref, ref+".raw")
				args = append(args, ref+".raw")
			}
			var got comparison
			require.NoError(t, json.Unmarshal([]byte(interop.RunPython(t, describeScript, args...)), &got))
			checkSeries(t, c, got)
			checkPixels(t, c, got)
		})
	}
}

// checkSeries compares the output's series with the input's.
func checkSeries(t *testing.T, c convertCase, got comparison) {
	t.Helper()
	want := c.series
	if want == 0 {
		want = len(got.Source.Series)
	}
	require.Len(t, got.Output.Series, want, "series: input %+v", got.Source.Series)
	require.Len(t, got.Output.OME, want)
	for i, o := range got.Output.OME {
		if got.Source.OME != nil {
			s := got.Source.OME[i]
			assert.Equal(t, s.Sizes, o.Sizes, "image %d: Z, C, T", i)
			assert.Equal(t, s.Channels, o.Channels, "image %d: channel names", i)
			assert.Equal(t, s.Physical, o.Physical, "image %d: physical sizes", i)
			assert.Equal(t, s.Units, o.Units, "image %d: units", i)
			assert.Equal(t, s.Name, o.Name, "image %d: name", i)
			continue
		}
		// No OME-XML: tifffile's series have the planes of the image.
		if c.series == 0 {
			s, out := got.Source.Series[i], got.Output.Series[i]
			assert.Equal(t, product(s.Shape), product(out.Shape), "image %d: samples of %v against %v", i, s, out)
		}
	}
}

// checkPixels checks the comparison of every series' pixels.
func checkPixels(t *testing.T, c convertCase, got comparison) {
	t.Helper()
	require.Len(t, got.Diffs, len(got.Output.Series))
	for i, d := range got.Diffs {
		if d.Error != "" && c.viaVips && i > 0 {
			// tifffile cannot decode the input's other images, and only the
			// first is decoded by libvips: their pixels go unchecked here
			// (TestInteropConvertSVS checks an SVS's label and macro).
			continue
		}
		require.Empty(t, d.Error, "image %d", i)
		if c.jpeg && i == 0 {
			t.Logf("image %d: against libvips's JPEG decoding: max |difference| %g, mean %.4f", i, d.Max, d.Mean)
			assert.LessOrEqual(t, d.Max, 4.0, "image %d", i)
			assert.LessOrEqual(t, d.Mean, 0.1, "image %d", i)
			continue
		}
		assert.True(t, d.Equal, "image %d differs: max %g, mean %g", i, d.Max, d.Mean)
	}
}

// TestInteropConvertSVS converts the SVS-like slide: OpenSlide reports it
// as an Aperio slide, and the output has its image with its pixel size,
// its objective's magnification (AppMag) and its other fields, then the
// label (LZW, equal) and the macro (JPEG, within the difference between
// IDCTs) as libvips decodes them.
func TestInteropConvertSVS(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips", "tiffcp", "tiffset", "tifffile", "openslide-show-properties")
	dir := t.TempDir()
	interop.RunPython(t, makeInputs, dir)
	in := filepath.Join(dir, "slide.svs")
	makeSVS(t, dir, in)
	props := interop.MustRun(t, "openslide-show-properties", in)
	assert.Contains(t, props, "openslide.vendor: 'aperio'")
	assert.Contains(t, props, "openslide.mpp-x: '0.499'")
	assert.Contains(t, props, "aperio.AppMag: '20'")

	out := filepath.Join(dir, "slide.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-compression", "deflate", "-predictor", "none", in, out)
	require.Equal(t, 0, code, stderr)
	var got comparison
	require.NoError(t, json.Unmarshal([]byte(interop.RunPython(t, describeScript, out)), &got))
	images := got.Source.OME // the output, described alone
	require.Len(t, images, 3)
	assert.Equal(t, []string{"slide", "label", "macro"}, []string{images[0].Name, images[1].Name, images[2].Name})
	assert.Equal(t, []float64{0.499, 0.499, 0}, images[0].Physical)
	assert.Equal(t, []float64{0, 0, 0}, images[1].Physical)
	d := clitest.Describe(t, out, pyramid.InspectOptions{})
	for _, want := range []string{`"MPP" = "0.4990"`, `"ScanScope ID" = "SS1234"`, "acquired 2009-12-29T09:59:15-05:00",
		`"slide": 1000 x 600`, `"label": 200 x 150`, `"macro": 500 x 300`} {
		assert.Contains(t, d, want)
	}
	assert.NotContains(t, d, `"AppMag"`, "the objective's, not an annotation")
	doc := omexmltest.Parse(t, []byte(interop.RunPython(t, interop.TifffileOMEXML, out)))
	objective := doc.Element("Instrument", "Objective")
	require.NotNil(t, objective, "AppMag is the objective's nominal magnification")
	assert.Equal(t, "20", objective.Attr("NominalMagnification"))
	assert.Equal(t, objective.Attr("ID"), doc.Element("Image", "ObjectiveSettings").Attr("ID"), "the slide's objective")
	for _, im := range doc.Children("Image")[1:] {
		assert.Nil(t, im.Element("ObjectiveSettings"), "not the label's or the macro's")
	}
	for i, page := range map[int]int{1: 4, 2: 5} { // the label and the macro: pages 4 and 5 of the slide
		maxDiff, mean := vipsPageDiff(t, in, page, out, i)
		t.Logf("image %d: max |difference| %d, mean %.4f", i, maxDiff, mean)
		if i == 1 {
			assert.Zero(t, maxDiff, "the label is LZW: equal")
		} else {
			assert.LessOrEqual(t, maxDiff, 4)
			assert.LessOrEqual(t, mean, 0.1)
		}
	}
}

// vipsPageDiff decodes page a of file fa and page b of file fb with
// libvips, and returns the largest and the mean absolute difference of
// their samples.
func vipsPageDiff(t *testing.T, fa string, a int, fb string, b int) (int, float64) {
	t.Helper()
	raw := func(file string, page int) []byte {
		v := filepath.Join(t.TempDir(), "page.v")
		interop.MustRun(t, "vips", "tiffload", file, v, "--page", fmt.Sprint(page))
		interop.MustRun(t, "vips", "rawsave", v, v+".raw")
		data, err := os.ReadFile(v + ".raw")
		require.NoError(t, err)
		return data
	}
	pa, pb := raw(fa, a), raw(fb, b)
	require.Len(t, pb, len(pa))
	maxDiff, sum := 0, 0
	for k := range pa {
		d := int(pa[k]) - int(pb[k])
		maxDiff, sum = max(maxDiff, d, -d), sum+max(d, -d)
	}
	return maxDiff, float64(sum) / float64(len(pa))
}

func product(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// tileDigests is a Python script: tifffile reads the stored bytes of
// every tile of every level of the first series of each file named (or,
// for FILE:I,J,..., of the pages of those indices in the main chain), and
// prints, per file, each level's size, tile size, the SHA-256 of its
// tiles in order and of its JPEGTables.
const tileDigests = `
import sys, json, hashlib, tifffile
out = []
for arg in sys.argv[1:]:
    path, _, pages = arg.partition(':')
    levels = []
    with tifffile.TiffFile(path) as tif:
        fh = tif.filehandle
        if pages:
            chosen = [tif.pages[int(i)] for i in pages.split(',')]
        else:
            chosen = [level.pages[0] for level in tif.series[0].levels]
        for page in chosen:
            tiles = []
            for off, n in zip(page.dataoffsets, page.databytecounts):
                fh.seek(off)
                tiles.append(hashlib.sha256(fh.read(n)).hexdigest())
            tables = page.jpegtables or b''
            levels.append({'size': [page.imagewidth, page.imagelength], 'tile': [page.tilewidth, page.tilelength],
                           'tiles': tiles, 'tables': hashlib.sha256(tables).hexdigest() if tables else ''})
    out.append(levels)
print(json.dumps(out))
`

// digestLevel is one level as tileDigests prints it.
type digestLevel struct {
	Size   []int    `json:"size"`
	Tile   []int    `json:"tile"`
	Tiles  []string `json:"tiles"`
	Tables string   `json:"tables"`
}

// TestInteropConvertSVSCopy converts the SVS-like slide with its JPEG
// tiles copied through, as the converter does by default: tifffile finds
// every full-resolution tile byte for byte the source's, with the same
// JPEGTables and tile size, and the reduced levels computed (in JPEG at
// the source's quality, 70); with -copy-levels every level is the
// source's, tile for tile. libvips decodes the full resolution of both
// to the same pixels, and libtiff (tiffcp -c none) decodes every
// directory.
func TestInteropConvertSVSCopy(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips", "tiffcp", "tiffset", "tifffile")
	dir := t.TempDir()
	interop.RunPython(t, makeInputs, dir)
	in := filepath.Join(dir, "slide.svs")
	makeSVS(t, dir, in)
	computed, copied := filepath.Join(dir, "computed.ome.tif"), filepath.Join(dir, "copied.ome.tif")
	code, _, stderr := clitest.Run(runConvert, in, computed)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: JPEG tiles of 240 x 240 copied through, the levels computed at quality 70")
	assert.NotContains(t, stderr, "image 1:", "the label's LZW strips lose nothing encoded again: nothing to say")
	assert.Contains(t, stderr, "image 2: encoded again as LZW: its JPEG strips are not copied (tiles only)")
	code, _, stderr = clitest.Run(runConvert, "-copy-levels", in, copied)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: JPEG tiles of 240 x 240 copied through, 2 levels copied")

	var got [][]digestLevel
	require.NoError(t, json.Unmarshal([]byte(interop.RunPython(t, tileDigests, in+":0,2,3", computed, copied)), &got))
	require.Len(t, got, 3)
	src := got[0]
	require.Len(t, src, 3, "the slide's levels: pages 0, 2 and 3")
	for name, out := range map[string][]digestLevel{"computed": got[1], "copied": got[2]} {
		require.NotEmpty(t, out, name)
		assert.Equal(t, src[0], out[0], "%s: the full resolution's tiles and JPEGTables", name)
	}
	assert.Equal(t, src, got[2], "-copy-levels: every level")
	require.Len(t, got[1], 4, "the levels computed: 1000 x 600 halved until one tile")
	for k, l := range got[1][1:len(src)] {
		assert.Equal(t, src[k+1].Size, l.Size, "level %d", k+1)
		assert.NotEqual(t, src[k+1].Tiles, l.Tiles, "level %d computed, not copied", k+1)
	}

	raws := map[string][]byte{}
	for _, f := range []string{in, computed, copied} {
		v := f + ".v"
		interop.MustRun(t, "vips", "tiffload", f, v)
		interop.MustRun(t, "vips", "rawsave", v, v+".raw")
		data, err := os.ReadFile(v + ".raw")
		require.NoError(t, err)
		raws[f] = data
		if f != in { // libtiff decodes every directory (tiffinfo -D cannot show YCbCr tiles)
			interop.MustRun(t, "tiffcp", "-c", "none", f, f+".none.tif")
		}
	}
	assert.Equal(t, raws[in], raws[computed], "libvips decodes the copied tiles as the source's")
	assert.Equal(t, raws[in], raws[copied])

	// The label (LZW strips) and the macro (JPEG strips) cannot be copied:
	// they take the default LZW, not the slide's JPEG, and lose nothing
	// more.
	// (stderr is -copy-levels's, which says why for every image.)
	assert.Contains(t, stderr, "image 1: encoded again as LZW: its LZW strips are not copied (tiles only)")
	assert.Contains(t, stderr, "image 2: encoded again as LZW: its JPEG strips are not copied (tiles only)")
	f, err := tiff.Open(computed)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Pages, 3)
	for i, p := range f.Pages {
		layout, err := p.Layout()
		require.NoError(t, err)
		assert.Equal(t, map[bool]uint16{true: tiff.CompressionJPEG, false: tiff.CompressionLZW}[i == 0], layout.Compression, "image %d", i)
	}
	// Viv's loader reads the slide written alone (-images 0), every level;
	// of the whole file it misplaces the images after the RGB slide, as the
	// README says.
	alone := filepath.Join(dir, "alone.ome.tif")
	code, _, stderr = clitest.Run(runConvert, "-images", "0", in, alone)
	require.Equal(t, 0, code, stderr)
	script := interop.Viv(t)
	var viv []struct {
		Levels []struct{ Width, Height int } `json:"levels"`
	}
	out := interop.MustRun(t, "node", script, alone, filepath.Join(dir, "viv.raw"))
	require.NoError(t, json.Unmarshal([]byte(out), &viv), out)
	require.Len(t, viv, 1)
	require.Len(t, viv[0].Levels, len(got[1]))
	for l, lv := range viv[0].Levels {
		assert.Equal(t, got[1][l].Size, []int{lv.Width, lv.Height}, "Viv's level %d", l)
	}
	// It looks for the label at IFD 3: after the slide's, as if its 3
	// samples were 3 planes.
	whole := interop.Run("node", script, computed, filepath.Join(dir, "viv.raw"))
	require.Error(t, whole.Err, "Viv on the slide, label and macro")
	assert.Contains(t, whole.Stderr, "No image at index 3")

	for i, page := range map[int]int{1: 4, 2: 5} { // the label and the macro: pages 4 and 5 of the slide
		maxDiff, mean := vipsPageDiff(t, in, page, computed, i)
		t.Logf("image %d: max |difference| %d, mean %.4f", i, maxDiff, mean)
		if i == 1 {
			assert.Zero(t, maxDiff, "the label: equal")
		} else { // the source's JPEG as package compress and libvips decode it
			assert.LessOrEqual(t, maxDiff, 4)
			assert.LessOrEqual(t, mean, 0.1)
		}
	}
}

// TestInteropConvertSparseCOG converts a GDAL COG whose empty tiles are
// sparse (SPARSE_OK: 0 bytes at offset 0): its tiles are not copied
// through, the converter says why, and the output's pixels are the
// source's as tifffile decodes it (the sparse tiles as zeros), read back
// by libvips.
func TestInteropConvertSparseCOG(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips", "gdal_translate", "tifffile")
	dir := t.TempDir()
	interop.RunPython(t, makeInputs, dir)
	// rgb8 in the top left of a black canvas twice its size: three of its
	// quarters are empty tiles.
	canvas, in, out := filepath.Join(dir, "canvas.tif"), filepath.Join(dir, "sparse.tif"), filepath.Join(dir, "sparse.ome.tif")
	interop.MustRun(t, "vips", "embed", filepath.Join(dir, "rgb8.tif"), canvas, "0", "0", "2000", "1200")
	interop.MustRun(t, "gdal_translate", "-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "BLOCKSIZE=256", "-co", "SPARSE_OK=TRUE", canvas, in)
	counts := interop.RunPython(t, `import sys, tifffile
with tifffile.TiffFile(sys.argv[1]) as f:
    print(sum(1 for c in f.pages[0].databytecounts if c == 0))`, in)
	require.NotEqual(t, "0", strings.TrimSpace(counts), "GDAL wrote no sparse tile")

	code, _, stderr := clitest.Run(runConvert, in, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: encoded again as LZW: ")
	assert.Contains(t, stderr, "is sparse (0 bytes)")
	want := filepath.Join(dir, "want.raw")
	interop.RunPython(t, `import sys, tifffile
tifffile.imread(sys.argv[1]).tofile(sys.argv[2])`, in, want)
	v := filepath.Join(dir, "got.v")
	interop.MustRun(t, "vips", "tiffload", out, v)
	interop.MustRun(t, "vips", "rawsave", v, v+".raw")
	a, err := os.ReadFile(want)
	require.NoError(t, err)
	b, err := os.ReadFile(v + ".raw")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(a, b), "the output's pixels (%d bytes) are not the source's (%d)", len(b), len(a))
}

// TestInteropGDALMetadata converts a three-band GTiff that GDAL writes
// from a VRT with band descriptions, a scale and a no-data value: the
// output's channels are named as tifffile reads the bands' descriptions
// from the source, its map annotation holds the rest, and its pixels are
// the source's.
func TestInteropGDALMetadata(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "gdal_translate", "tifffile")
	dir := t.TempDir()
	bands, vrt, in, out := filepath.Join(dir, "bands.tif"), filepath.Join(dir, "bands.vrt"), filepath.Join(dir, "gdal.tif"), filepath.Join(dir, "gdal.ome.tif")
	interop.RunPython(t, `import sys, numpy as np, tifffile
tifffile.imwrite(sys.argv[1], np.random.default_rng(1).integers(0, 65535, (3, 40, 56), np.uint16), photometric='minisblack', planarconfig='separate')`, bands)
	band := func(n int, name, more string) string {
		return fmt.Sprintf(`<VRTRasterBand dataType="UInt16" band="%d"><Description>%s</Description><NoDataValue>0</NoDataValue>%s`+
			`<SimpleSource><SourceFilename relativeToVRT="1">bands.tif</SourceFilename><SourceBand>%d</SourceBand></SimpleSource></VRTRasterBand>`, n, name, more, n)
	}
	require.NoError(t, os.WriteFile(vrt, []byte(`<VRTDataset rasterXSize="56" rasterYSize="40"><Metadata><MDI key="STAIN">H&amp;E</MDI></Metadata>`+
		band(1, "DAPI", "<Scale>0.5</Scale>")+band(2, "GFP", "")+band(3, "RFP", "")+`</VRTDataset>`), 0o644))
	interop.MustRun(t, "gdal_translate", "-q", "-co", "PHOTOMETRIC=MINISBLACK", "-co", "INTERLEAVE=BAND", "-co", "COMPRESS=DEFLATE", vrt, in)

	code, _, stderr := clitest.Run(runConvert, "-compression", "deflate", "-predictor", "none", in, out)
	require.Equal(t, 0, code, stderr)
	var got struct {
		Descriptions []string
		Channels     []string
		Annotations  [][2]string
		Equal        bool
	}
	require.NoError(t, json.Unmarshal([]byte(interop.RunPython(t, `import sys, json, numpy as np, tifffile, xml.etree.ElementTree as ET
with tifffile.TiffFile(sys.argv[1]) as src, tifffile.TiffFile(sys.argv[2]) as dst:
    md = src.gdal_metadata
    descriptions = [md[k] for k in sorted(k for k in md if isinstance(k, tuple) and k[0] == 'DESCRIPTION')] if isinstance(md, dict) else []
    if not descriptions:  # the tifffile of the day may key bands otherwise: read the XML itself
        root = ET.fromstring(src.pages[0].tags[42112].value)
        descriptions = [i.text for i in root if i.get('role') == 'description']
    root = ET.fromstring(dst.ome_metadata)
    channels = [c.get('Name', '') for c in root.iter() if c.tag.endswith('}Channel')]
    annotations = [[m.get('K'), m.text] for m in root.iter() if m.tag.endswith('}M')]
    equal = bool(np.array_equal(src.asarray(), dst.series[0].asarray().reshape(src.asarray().shape)))
print(json.dumps({'Descriptions': descriptions, 'Channels': channels, 'Annotations': annotations, 'Equal': equal}))`, in, out)), &got))
	assert.Equal(t, []string{"DAPI", "GFP", "RFP"}, got.Descriptions, "tifffile reads GDAL's band descriptions")
	assert.Equal(t, got.Descriptions, got.Channels, "channel names")
	assert.Contains(t, got.Annotations, [2]string{"STAIN", "H&E"})
	assert.Contains(t, got.Annotations, [2]string{"SCALE (band 1)", "0.5"})
	assert.Contains(t, got.Annotations, [2]string{"GDAL_NODATA", "0"})
	assert.True(t, got.Equal, "the pixels differ")
}

// TestInteropSparseNoData converts a sparse GTiff that GDAL creates with a
// no-data value and no data at all: its empty tiles are that value in the
// output, as tifffile (and GDAL) read the source.
func TestInteropSparseNoData(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "gdal_create", "tifffile")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "sparse.tif"), filepath.Join(dir, "sparse.ome.tif")
	interop.MustRun(t, "gdal_create", "-of", "GTiff", "-outsize", "300", "200", "-bands", "2", "-ot", "Int16", "-a_nodata", "-5",
		"-co", "TILED=YES", "-co", "SPARSE_OK=TRUE", in)
	code, _, stderr := clitest.Run(runConvert, "-compression", "deflate", "-predictor", "none", in, out)
	require.Equal(t, 0, code, stderr)
	got := interop.RunPython(t, `import sys, numpy as np, tifffile
a, b = tifffile.imread(sys.argv[1]), tifffile.imread(sys.argv[2])  # YXS, and CYX: each band a channel
a = np.moveaxis(a, -1, 0)
print(a.shape == b.shape and bool(np.array_equal(a, b)), int(b.min()), int(b.max()))`, in, out)
	assert.Equal(t, "True -5 -5", strings.TrimSpace(got))
}

// TestInteropPackedSamples converts 2- and 4-bit gray TIFFs that libvips
// writes (--bitdepth): the output holds the values as stored, as tifffile
// and Bio-Formats read them; libvips reads the source scaled to 0-255, so
// its values are the output's times 255 / (2^bits - 1).
func TestInteropPackedSamples(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips", "tifffile")
	dir := t.TempDir()
	ramp := filepath.Join(dir, "ramp.tif")
	interop.RunPython(t, `import sys, numpy as np, tifffile
tifffile.imwrite(sys.argv[1], (np.arange(23 * 37).reshape(23, 37) % 256).astype(np.uint8))`, ramp)
	for _, bits := range []int{2, 4} {
		in, out := filepath.Join(dir, fmt.Sprintf("b%d.tif", bits)), filepath.Join(dir, fmt.Sprintf("b%d.ome.tif", bits))
		interop.MustRun(t, "vips", "tiffsave", ramp, in, "--bitdepth", fmt.Sprint(bits), "--compression", "deflate", "--predictor", "none")
		code, _, stderr := clitest.Run(runConvert, "-compression", "deflate", "-predictor", "none", in, out)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, fmt.Sprintf("%d-bit samples are written as uint8, their values as stored", bits))
		ref := filepath.Join(dir, fmt.Sprintf("b%d.v", bits))
		interop.MustRun(t, "vips", "tiffload", in, ref)
		interop.MustRun(t, "vips", "rawsave", ref, ref+".raw")
		got := interop.RunPython(t, `import sys, numpy as np, tifffile
scale = 255 // (2 ** int(sys.argv[3]) - 1)
ref, out = np.fromfile(sys.argv[2], np.uint8).reshape(23, 37), tifffile.imread(sys.argv[1])
print(out.dtype, int(out.max()), bool(np.array_equal(ref, out * scale)))`, out, ref+".raw", fmt.Sprint(bits))
		assert.Equal(t, fmt.Sprintf("uint8 %d True", 1<<bits-1), strings.TrimSpace(got), "%d bits", bits)
	}
}

// TestInteropPalette converts palette TIFFs that tifffile (8-bit indices
// in Deflate tiles, 16-bit ones, a map of 8-bit values, a map of grays), GDAL (1-, 2- and 4-bit
// indices, NBITS) and libtiff (LZW big-endian, Zstd tiles) write: every
// output equals the source as libvips decodes it (its colours, 8-bit from
// the map's high bytes or 16-bit, gray for a map of grays).
func TestInteropPalette(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips", "tiffcp", "gdal_translate", "tifffile")
	dir := t.TempDir()
	interop.RunPython(t, `import sys, numpy as np, tifffile
d = sys.argv[1]
rng = np.random.default_rng(5)
idx = rng.integers(0, 256, (150, 211), np.uint8)
tifffile.imwrite(d + '/p8.tif', idx, photometric='palette', colormap=rng.integers(0, 65536, (3, 256), np.uint16), compression='zlib', tile=(64, 64))
tifffile.imwrite(d + '/p16.tif', rng.integers(0, 65536, (40, 70), np.uint16), photometric='palette', colormap=rng.integers(0, 65536, (3, 65536), np.uint16))
tifffile.imwrite(d + '/low.tif', idx, photometric='palette', colormap=rng.integers(0, 256, (3, 256), np.uint16))
tifffile.imwrite(d + '/grays.tif', idx, photometric='palette', colormap=np.tile(np.arange(256, dtype=np.uint16)[::-1] * 257, (3, 1)))
for bits in (1, 2, 4):
    (idx % (1 << bits)).tofile('%s/idx%d.raw' % (d, bits))
    entries = ''.join('<Entry c1="%d" c2="%d" c3="%d" c4="255"/>' % tuple(rng.integers(0, 256, 3)) for _ in range(1 << bits))
    open('%s/pal%d.vrt' % (d, bits), 'w').write('<VRTDataset rasterXSize="211" rasterYSize="150"><VRTRasterBand dataType="Byte" band="1" '
        'subClass="VRTRawRasterBand"><ColorInterp>Palette</ColorInterp><ColorTable>' + entries + '</ColorTable><SourceFilename relativetoVRT="1">'
        'idx%d.raw</SourceFilename><ImageOffset>0</ImageOffset><PixelOffset>1</PixelOffset><LineOffset>211</LineOffset></VRTRasterBand></VRTDataset>' % bits)`, dir)
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, bits := range []string{"1", "2", "4"} {
		interop.MustRun(t, "gdal_translate", "-q", "-co", "NBITS="+bits, "-co", "COMPRESS=DEFLATE", "-co", "TILED=YES", "-co", "BLOCKXSIZE=64",
			"-co", "BLOCKYSIZE=64", in("pal"+bits+".vrt"), in("gdal"+bits+".tif"))
	}
	interop.MustRun(t, "tiffcp", "-c", "lzw", "-B", in("p8.tif"), in("lzw-be.tif"))
	interop.MustRun(t, "tiffcp", "-c", "zstd", "-t", "-w", "32", "-l", "32", in("p16.tif"), in("zstd.tif"))
	for _, name := range []string{"p8", "p16", "low", "grays", "gdal1", "gdal2", "gdal4", "lzw-be", "zstd"} {
		t.Run(name, func(t *testing.T) {
			out := in(name + ".ome.tif")
			code, _, stderr := clitest.Run(runConvert, "-compression", "deflate", "-predictor", "none", in(name+".tif"), out)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stderr, "a palette image: the colours of its ColorMap are written, as libvips reads it")
			ref := in(name + ".v")
			// libvips warns of the map of 8-bit values, which it reads so too.
			r := interop.Run("vips", "tiffload", in(name+".tif"), ref)
			require.NoError(t, r.Err, r.Stderr)
			if name != "low" {
				assert.Empty(t, r.Stderr)
			} else {
				assert.Contains(t, r.Stderr, "assuming 8-bit palette")
			}
			interop.MustRun(t, "vips", "rawsave", ref, ref+".raw")
			got := interop.RunPython(t, `import sys, numpy as np, tifffile
out = tifffile.imread(sys.argv[1])
ref = np.fromfile(sys.argv[2], out.dtype)
print(out.dtype, out.shape[2] if out.ndim == 3 else 1, ref.size == out.size and bool(np.array_equal(ref.reshape(out.shape), out)))`, out, ref+".raw")
			want := map[string]string{"p16": "uint16 3", "zstd": "uint16 3", "grays": "uint8 1"}[name]
			assert.Equal(t, cmpOr(want, "uint8 3")+" True", strings.TrimSpace(got))
		})
	}
}

// TestInteropOMESamplesAsChannels converts tifffile OME-TIFFs whose one
// Channel holds 4 (RGBA) or 5 samples: each sample becomes a channel of
// its own, the Channel's attributes on each, the pixels equal.
func TestInteropOMESamplesAsChannels(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	dir := t.TempDir()
	interop.RunPython(t, `import sys, numpy as np, tifffile
rng = np.random.default_rng(3)
tifffile.imwrite(sys.argv[1] + '/s5.ome.tif', rng.integers(0, 65535, (60, 80, 5), np.uint16), photometric='minisblack', planarconfig='contig',
    compression='zlib', metadata={'axes': 'YXS', 'Channel': {'Name': 'five'}})
tifffile.imwrite(sys.argv[1] + '/rgba.ome.tif', rng.integers(0, 255, (60, 80, 4), np.uint8), photometric='rgb', compression='zlib', metadata={'axes': 'YXS'})`, dir)
	for name, want := range map[string]string{"s5": "5 five", "rgba": "4"} {
		in, out := filepath.Join(dir, name+".ome.tif"), filepath.Join(dir, name+".out.ome.tif")
		code, _, stderr := clitest.Run(runConvert, "-compression", "deflate", "-predictor", "none", in, out)
		require.Equal(t, 0, code, stderr)
		assert.Empty(t, stderr, "the Channel is carried: nothing is left out")
		got := interop.RunPython(t, `import sys, numpy as np, tifffile, xml.etree.ElementTree as ET
with tifffile.TiffFile(sys.argv[1]) as src, tifffile.TiffFile(sys.argv[2]) as dst:
    channels = [c for c in ET.fromstring(dst.ome_metadata).iter() if c.tag.endswith('}Channel')]
    names = {c.get('Name', '') for c in channels}
    equal = np.array_equal(np.moveaxis(src.asarray(), -1, 0), dst.asarray())
    print(len(channels), *names, equal)`, in, out)
		assert.Equal(t, want+" True", strings.TrimSpace(strings.ReplaceAll(got, "  ", " ")), name)
	}
}

// TestInteropConvertChromaHint: JPEG tiles of YCbCr 4:4:4 (tifffile's
// uncompressed YCbCr, JPEG-compressed by libtiff's tiffcp), copied,
// encoded again, or encoded with -compression jpeg, give levels or tiles
// in YCbCr 4:2:0, and stderr says so, with the remedy, in every case: the
// last two once said nothing.
func TestInteropConvertChromaHint(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tiffcp", "tifffile")
	dir := t.TempDir()
	raw, in := filepath.Join(dir, "ycc.tif"), filepath.Join(dir, "ycc444.tif")
	interop.RunPython(t, `import sys, numpy as np, tifffile
tifffile.imwrite(sys.argv[1], np.random.default_rng(1).integers(0, 255, (200, 300, 3), np.uint8), photometric='ycbcr', subsampling=(1, 1))`, raw)
	interop.MustRun(t, "tiffcp", "-c", "jpeg:90", "-t", "-w", "64", "-l", "64", raw, in)
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{nil, "image 0: JPEG tiles of 64 x 64 copied through, the levels computed at quality 90 in YCbCr 4:2:0 (the source's subsampling is 1 x 1; -jpeg-color rgb keeps the full chroma, but encodes every level again)"},
		{[]string{"-tile", "128"}, "image 0: encoded again as JPEG at quality 90 in YCbCr 4:2:0 (the source's subsampling is 1 x 1; -jpeg-color rgb keeps the full chroma): -tile 128, the source's are 64 x 64\n"},
		{[]string{"-compression", "jpeg", "-quality", "90", "-tile", "64"}, "image 0: encoded as JPEG in YCbCr 4:2:0 (the source's subsampling is 1 x 1; -jpeg-color rgb keeps the full chroma)\n"},
	} {
		out := filepath.Join(dir, fmt.Sprintf("out%d.ome.tif", len(tc.args)))
		code, _, stderr := clitest.Run(runConvert, append(tc.args, in, out)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, tc.stderr)
	}
}
