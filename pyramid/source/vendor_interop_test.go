package source

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
)

// tifffileSeries prints, for each series tifffile finds in a file, its
// name, shape and number of levels, a line each.
const tifffileSeries = `
import sys, tifffile
with tifffile.TiffFile(sys.argv[1]) as t:
    print(t.series[0].kind)
    for s in t.series:
        print(s.name, 'x'.join(map(str, s.shape)), len(s.levels))
`

// TestInteropVendors: the BIF and SCN files the tests map are ones
// OpenSlide takes for Ventana's and Leica's, and in which tifffile finds
// the same images, of the same shapes and levels, as the mapping.
func TestInteropVendors(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "openslide-show-properties", "tifffile")
	dir := t.TempDir()
	tests := []struct {
		name, vendor, kind string
		pages              []testPage
	}{
		{"slide.bif", "ventana", "bif", bifSlide()},
		{"slide.scn", "leica", "scn", scnBrightfieldPages()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, _ := fileOf(t, binary.LittleEndian, true, tt.pages...)
			path := filepath.Join(dir, tt.name)
			require.NoError(t, os.WriteFile(path, file, 0o644))
			assert.Contains(t, interop.MustRun(t, "openslide-show-properties", path), "openslide.vendor: '"+tt.vendor+"'")
			f, err := Open(path, Options{})
			require.NoError(t, err)
			defer f.Close()
			// tifffile warns that it does not stitch a BIF's tiles, as the
			// mapping notes: its stderr is not checked.
			r := interop.Run(interop.Python(), "-c", tifffileSeries, path)
			require.NoError(t, r.Err, r.Stderr)
			lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
			require.Equal(t, tt.kind, strings.ToLower(lines[0]), "tifffile's kind of series")
			var shapes, want []string
			for _, l := range lines[1:] {
				fields := strings.Fields(l)
				shapes = append(shapes, strings.Join(fields[len(fields)-2:], " "))
			}
			for _, im := range f.Images {
				s := im.Spec
				shape := fmt.Sprintf("%dx%d", s.SizeY, s.SizeX)
				if s.SamplesPerPixel > 1 {
					shape += fmt.Sprintf("x%d", s.SamplesPerPixel)
				}
				want = append(want, fmt.Sprintf("%s %d", shape, 1+len(im.Planes[0].Levels)))
			}
			assert.ElementsMatch(t, want, shapes, "each image's shape and levels, as tifffile reads the series")
		})
	}
}

// TestInteropQPTIFF: in the QPTIFF files the tests map (OpenSlide does
// not read QPTIFF), tifffile finds series of kind qpi of the same shapes
// and levels as the mapping's images: the channels along C, each level
// of as many pages, the thumbnail, macro (overview) and label.
func TestInteropQPTIFF(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	dir := t.TempDir()
	tests := []struct {
		name  string
		pages []testPage
		want  []string
	}{
		{"fluorescence.qptiff", qpiFluorescence(), []string{"Baseline 3x48x64 3", "Thumbnail 12x16x3 1", "Macro 20x30x3 1", "Label 10x20x3 1"}},
		{"brightfield.qptiff", qpiBrightfield(), []string{"Baseline 48x64x3 3", "Thumbnail 12x16x3 1", "Macro 20x30x3 1", "Label 10x20x3 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, _ := fileOf(t, binary.LittleEndian, false, tt.pages...)
			path := filepath.Join(dir, tt.name)
			require.NoError(t, os.WriteFile(path, file, 0o644))
			f, err := Open(path, Options{})
			require.NoError(t, err)
			defer f.Close()
			r := interop.Run(interop.Python(), "-c", tifffileSeries, path)
			require.NoError(t, r.Err, r.Stderr)
			lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
			require.Equal(t, "qpi", strings.ToLower(lines[0]), "tifffile's kind of series")
			assert.Equal(t, tt.want, lines[1:], "tifffile's series")
			var got []string
			for _, im := range f.Images {
				s := im.Spec
				shape := fmt.Sprintf("%dx%d", s.SizeY, s.SizeX)
				if s.SizeC > 1 {
					shape = fmt.Sprintf("%dx%s", s.SizeC, shape) // tifffile's C axis (squeezed when 1)
				}
				if s.SamplesPerPixel > 1 {
					shape += fmt.Sprintf("x%d", s.SamplesPerPixel)
				}
				got = append(got, fmt.Sprintf("%s %d", shape, 1+len(im.Planes[0].Levels)))
			}
			var want []string
			for _, l := range tt.want {
				want = append(want, l[strings.IndexByte(l, ' ')+1:])
			}
			assert.Equal(t, want, got, "each image's shape and levels, as tifffile reads the series")
		})
	}
}

// openslideAssociated prints, for each associated image OpenSlide reads
// from a slide, its name, size and RGB samples in hex, a line each, after
// the vendor.
const openslideAssociated = `
import sys, openslide
s = openslide.OpenSlide(sys.argv[1])
print(s.properties.get('openslide.vendor'))
for name, im in sorted(s.associated_images.items()):
    print(name, im.size[0], im.size[1], im.convert('RGB').tobytes().hex())
`

// TestInteropPhilips: the label and macro a Philips slide (a libvips
// pyramid, its description and Software set by tiffset) holds as base64
// JPEG in its XML are images of the sizes and samples OpenSlide reads.
func TestInteropPhilips(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips", "tiffset", "tifffile")
	dir := t.TempDir()
	path := filepath.Join(dir, "slide.tiff")
	interop.MustRun(t, "vips", "black", filepath.Join(dir, "black.v"), "512", "384", "--bands", "3")
	interop.MustRun(t, "vips", "tiffsave", filepath.Join(dir, "black.v"), path, "--tile", "--compression", "jpeg")
	enc := base64.StdEncoding.EncodeToString
	xml := philipsXML("LABELIMAGE", enc(philipsJPEG(t, 40, 24, false)), "MACROIMAGE", enc(philipsJPEG(t, 30, 20, true)))
	interop.MustRun(t, "tiffset", "-s", "270", xml, path)
	interop.MustRun(t, "tiffset", "-s", "305", "Philips DP v1.0", path)

	out := strings.Split(strings.TrimSpace(interop.RunPython(t, openslideAssociated, path)), "\n")
	require.Len(t, out, 3, "the vendor, the label and the macro")
	assert.Equal(t, "philips", out[0])
	f, err := Open(path, Options{})
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Images, 3)
	for i, line := range out[1:] {
		im := f.Images[i+1]
		var name string
		var w, h int
		var samples []byte
		_, err := fmt.Sscanf(line, "%s %d %d %x", &name, &w, &h, &samples)
		require.NoError(t, err)
		assert.Equal(t, [3]any{name, w, h}, [3]any{im.Spec.Name, im.Spec.SizeX, im.Spec.SizeY})
		got := readPlane(t, im.Planes[0].Page)
		worst := 0
		for p := range w * h {
			for c := range 3 {
				k := p*im.Spec.SamplesPerPixel + min(c, im.Spec.SamplesPerPixel-1) // gray: its one sample
				d := int(got[k]) - int(samples[3*p+c])
				worst = max(worst, d, -d)
			}
		}
		// libjpeg-turbo's IDCT and ours, both with the triangle filter.
		assert.LessOrEqual(t, worst, 4, "%s: the largest difference from OpenSlide's samples", name)
	}
}
