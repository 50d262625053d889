package tiff

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ometiff-go/ometiff/internal/interop"
)

// TestInteropLibtiff has libtiff's tiffinfo decode every golden (-D reads
// every strip and tile) with nothing on stderr, and tiffdump list the
// SubIFDs.
func TestInteropLibtiff(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tiffinfo", "tiffdump")
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			out := interop.MustRun(t, "tiffinfo", "-D", goldenPath(g.name))
			assert.Equal(t, len(g.images), strings.Count(out, "TIFF Directory at offset"), "directories seen by tiffinfo")
			dump := interop.MustRun(t, "tiffdump", goldenPath(g.name))
			if strings.Contains(g.name, "subifds") {
				assert.Contains(t, dump, "SubIFD (330)")
			}
		})
	}
}

// TestInteropTifffile has tifffile read every directory of every golden
// and compares the pixels with the source.
func TestInteropTifffile(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			got := interop.RunPython(t, interop.TifffilePages, goldenPath(g.name))
			var want []byte
			for i := range g.images {
				want = append(want, g.imageAt(i).rawPixels()...)
			}
			assert.Equal(t, string(want), got)
		})
	}
}
