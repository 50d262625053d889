package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/internal/omexmltest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// richImages are the images omexmltest.RichDoc describes: a stack of
// 3 focal planes, 2 channels and 2 time points of 48 x 32 uint16 in
// XYCZT order, and an RGB overview of 40 x 30.
var richImages = []pyramid.ImageSpec{
	{SizeX: 48, SizeY: 32, SizeZ: 3, SizeC: 2, SizeT: 2, PixelType: pyramid.Uint16, DimensionOrder: pyramid.XYCZT},
	{SizeX: 40, SizeY: 30, PixelType: pyramid.Uint8, SamplesPerPixel: 3},
}

// writeRichOMETIFF writes an OME-TIFF of richImages, their planes a
// pattern, with omexmltest.RichDoc as the file's document, at path.
func writeRichOMETIFF(t *testing.T, path string) {
	t.Helper()
	doc, err := pyramid.ParseOME([]byte(omexmltest.RichDoc()))
	require.NoError(t, err)
	w, err := pyramid.Create(path, pyramid.Options{TileSize: 16, OME: doc})
	require.NoError(t, err)
	for i, s := range richImages {
		im, err := w.AddImage(s)
		require.NoError(t, err)
		for p := range im.Spec().Planes() {
			pix := make([]byte, im.PlaneBytes())
			for k := range pix {
				pix[k] = byte(k*7 + p*31 + i)
			}
			z, c, tt := im.Spec().PlaneCoords(p)
			require.NoError(t, im.WritePlane(z, c, tt, pix))
		}
	}
	require.NoError(t, w.Close())
}

// omeXMLOf returns the OME-XML of an OME-TIFF: its first page's
// ImageDescription.
func omeXMLOf(t *testing.T, path string) string {
	t.Helper()
	f, err := tiff.Open(path)
	require.NoError(t, err)
	defer f.Close()
	return f.Pages[0].Description()
}

// TestConvertOMEDocument converts an OME-TIFF whose document has most of
// the OME model, much of it beyond what the writer's typed fields hold
// (an instrument and its settings, planes' exposures and positions, ROIs,
// structured annotations, experimenters and projects): the output keeps
// every element and attribute of it but what the writer owns, and a
// metadata flag overrides what it says and nothing else.
func TestConvertOMEDocument(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "rich.ome.tif")
	writeRichOMETIFF(t, in)
	out := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-tile", "16", in, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 1: LZW tiles of 16 x 16 copied through")
	want := omexmltest.Parse(t, []byte(omexmltest.RichDoc()))
	got := omexmltest.Parse(t, []byte(omeXMLOf(t, out)))
	assert.Empty(t, omexmltest.MissingFrom(want, got))
	// What only the document says, for a reader of this test:
	assert.Equal(t, "60", got.Element("Instrument", "Objective").Attr("NominalMagnification"))
	assert.Equal(t, "Objective:0:0", got.Element("Image", "ObjectiveSettings").Attr("ID"))
	assert.Len(t, got.Children("ROI"), 2)
	assert.Len(t, got.Element("StructuredAnnotations").Kids, 11, "each annotation once")
	px := got.Element("Image", "Pixels")
	assert.Empty(t, px.Children("BinData"), "the document's, replaced by the writer's TiffData")
	require.Len(t, px.Children("TiffData"), 1)
	assert.Equal(t, "12", px.Children("TiffData")[0].Attr("PlaneCount"))
	for _, p := range px.Children("Plane") {
		assert.NotEmpty(t, p.Attr("ExposureTime"), "plane %v", p.PlainAttrs())
	}

	code, _, stderr = clitest.Run(runConvert, "-tile", "16", "-force", "-name", "renamed", in, out)
	require.Equal(t, 0, code, stderr)
	got = omexmltest.Parse(t, []byte(omeXMLOf(t, out)))
	assert.Equal(t, []string{`OME/Image[Image:rich]@Name: want "rich & \"stack\"", got "renamed" (present true)`}, omexmltest.MissingFrom(want, got))
}

// TestConvertOMEDocumentRefused converts an OME-TIFF whose document the
// output cannot carry, of the 2015-01 schema: refused, leaving nothing,
// and with -skip-unsupported converted with the metadata the typed
// fields hold, what was left out reported.
func TestConvertOMEDocumentRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "old.ome.tif")
	doc := `<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2015-01">` +
		`<Image ID="Image:0" Name="old"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1" PhysicalSizeX="0.5">` +
		`<TiffData/></Pixels></Image></OME>`
	writeTIFF(t, in, page{width: 8, height: 6, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, description: doc})
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "source: bad metadata: the OME-XML cannot be carried to the output", in, "out.ome.tif")

	out := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-skip-unsupported", in, out)
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(stderr, convertName+": "+in+": left out (-skip-unsupported): source: bad metadata: the OME-XML cannot be carried to the output: "), stderr)
	assert.Contains(t, stderr, "2015-01")
	assert.Contains(t, stderr, "without it, the images keep only their typed metadata")
	got := omexmltest.Parse(t, []byte(omeXMLOf(t, out)))
	assert.Equal(t, "old", got.Element("Image").Attr("Name"))
	assert.Equal(t, "0.5", got.Element("Image", "Pixels").Attr("PhysicalSizeX"))
	assert.Equal(t, "http://www.openmicroscopy.org/Schemas/OME/2016-06", got.Name.Space)
}
