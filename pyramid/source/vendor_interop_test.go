package source

import (
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
