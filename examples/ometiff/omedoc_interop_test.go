package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/omexmltest"
)

// makeRichOMETIFF is a Python script: tifffile writes, at the path its
// first argument names, an OME-TIFF of the images omexmltest.RichDoc
// describes, with the document in the file its second argument names as
// the first page's ImageDescription (UTF-8), as acquisition software
// writes its own OME-XML with tifffile: the stack's 12 planes of 48 x 32
// uint16, in its XYCZT order, as pages 0 to 11, then the RGB overview of
// 40 x 30 as page 12, uncompressed.
const makeRichOMETIFF = `
import sys, numpy as np, tifffile
path, doc = sys.argv[1], open(sys.argv[2], 'rb').read()
planes = (np.arange(12*32*48, dtype=np.uint32).reshape(12, 32, 48)*37 % 65521).astype(np.uint16)
rgb = (np.arange(30*40*3).reshape(30, 40, 3) % 251).astype(np.uint8)
with tifffile.TiffWriter(path, ome=False) as tw:
    tw.write(planes, photometric='minisblack', description=doc, metadata=None)
    tw.write(rgb, photometric='rgb', metadata=None)
`

// TestInteropConvertOMEDocument: a tifffile-written OME-TIFF whose
// document has most of the OME model (omexmltest.RichDoc: an instrument
// with objective, detector and light sources, channel settings, planes'
// exposures and positions, two ROIs, eleven kinds of structured
// annotation, experimenters, a project) is converted; in the output's
// OME-XML as tifffile reads it (ome_metadata), parsed as XML, every
// element and attribute of the input's document is there with its value
// but what the writer owns; xmllint validates it against the OME 2016-06
// schema; and tifffile reads the output's images with the input's
// pixels.
func TestInteropConvertOMEDocument(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	schema := interop.NeedSchema(t)
	dir := t.TempDir()
	doc := strings.Replace(omexmltest.RichDoc(), `<BinData BigEndian="true" Length="0"></BinData>`, `<TiffData IFD="0" PlaneCount="12"/>`, 1)
	require.NotEqual(t, omexmltest.RichDoc(), doc, "the stack's planes are in pages 0 to 11")
	docPath := filepath.Join(dir, "rich.xml")
	require.NoError(t, os.WriteFile(docPath, []byte(doc), 0o644))
	in := filepath.Join(dir, "rich.ome.tif")
	interop.RunPython(t, makeRichOMETIFF, in, docPath)

	out := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-compression", "deflate", in, out) // tifffile decodes LZW with imagecodecs only
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)

	got := interop.RunPython(t, interop.TifffileOMEXML, out)
	assert.Empty(t, omexmltest.MissingFrom(omexmltest.Parse(t, []byte(doc)), omexmltest.Parse(t, []byte(got))))
	outXML := filepath.Join(dir, "out.xml")
	require.NoError(t, os.WriteFile(outXML, []byte(got), 0o644))
	r := interop.Run("xmllint", "--noout", "--nonet", "--schema", schema, outXML)
	require.NoError(t, r.Err, r.Stderr)
	assert.Contains(t, r.Stderr, "validates")

	var c comparison
	require.NoError(t, json.Unmarshal([]byte(interop.RunPython(t, describeScript, in, out)), &c))
	require.Len(t, c.Source.OME, 2, "tifffile reads the input's document")
	assert.Equal(t, c.Source.OME, c.Output.OME)
	require.Len(t, c.Diffs, 2)
	for i, d := range c.Diffs {
		assert.Empty(t, d.Error, "image %d", i)
		assert.True(t, d.Equal, "image %d: max |difference| %g", i, d.Max)
	}
}
