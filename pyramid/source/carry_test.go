package source

import (
	"image/color"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/omexmltest"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
)

// richSpecs are the images omexmltest.RichDoc describes.
var richSpecs = []pyramid.ImageSpec{
	{SizeX: 48, SizeY: 32, SizeZ: 3, SizeC: 2, SizeT: 2, PixelType: pyramid.Uint16, DimensionOrder: pyramid.XYCZT},
	{SizeX: 40, SizeY: 30, PixelType: pyramid.Uint8, SamplesPerPixel: 3},
}

// writeOMETIFF writes the images, their planes of zeros, with the pyramid
// writer and returns the file, mapped.
func writeOMETIFF(t *testing.T, opts pyramid.Options, specs ...pyramid.ImageSpec) *File {
	t.Helper()
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, opts)
	require.NoError(t, err)
	for _, s := range specs {
		im, err := w.AddImage(s)
		require.NoError(t, err)
		for p := range im.Spec().Planes() {
			z, c, tt := im.Spec().PlaneCoords(p)
			require.NoError(t, im.WritePlane(z, c, tt, make([]byte, im.PlaneBytes())))
		}
	}
	require.NoError(t, w.Close())
	return mapOME(t, h.Bytes())
}

// mapOME maps an OME-TIFF held in memory, named in.ome.tif.
func mapOME(t *testing.T, data []byte) *File {
	t.Helper()
	f, err := mapFile(t, data, "in.ome.tif", Options{})
	require.NoError(t, err)
	return f
}

// TestOMECarried: an OME-TIFF whose document has more than the typed
// fields say (an instrument and its settings, planes' positions and
// exposures, ROIs, structured annotations of every kind) is mapped with
// its document, and converted, the output keeps every element and
// attribute of it but what the writer owns; converted again, nothing is
// lost or added twice (the map annotations, restated, would be; the
// acquisition date, restated, would gain a zone).
func TestOMECarried(t *testing.T) {
	doc, err := pyramid.ParseOME([]byte(omexmltest.RichDoc()))
	require.NoError(t, err)
	in := writeOMETIFF(t, pyramid.Options{TileSize: 16, OME: doc}, richSpecs...)
	require.Len(t, in.Images, 2)
	for i, im := range in.Images {
		require.NotNil(t, im.Spec.OME, "image %d", i)
		assert.Same(t, in.Images[0].Spec.OME.Document(), im.Spec.OME.Document(), "one document for the file")
		assert.Empty(t, im.Spec.Annotations, "image %d: the document's, carried", i)
		assert.Zero(t, im.Spec.AcquisitionDate, "image %d: the document's, carried", i)
	}
	assert.Equal(t, `rich & "stack"`, in.Images[0].Spec.Name, "restated")
	assert.Equal(t, "two channels\nover time", in.Images[0].Spec.Description, "restated")
	assert.InDelta(t, 0.108, in.Images[0].Spec.PhysicalSizeX, 1e-12, "restated")

	rich := omexmltest.Parse(t, []byte(omexmltest.RichDoc()))
	first := convert(t, in, pyramid.Options{TileSize: 16}, Options{})
	once := omexmltest.Parse(t, []byte(mapOME(t, first).OMEXML))
	assert.Empty(t, omexmltest.MissingFrom(rich, once))
	second := omexmltest.Parse(t, []byte(mapOME(t, convert(t, mapOME(t, first), pyramid.Options{TileSize: 16}, Options{})).OMEXML))
	assert.Empty(t, omexmltest.MissingFrom(rich, second), "converted twice")
	assert.Empty(t, omexmltest.MissingFrom(once, second), "nothing lost")
	assert.Empty(t, omexmltest.MissingFrom(second, once), "nothing added")
	assert.Len(t, second.Element("StructuredAnnotations").Kids, 11)
}

// TestOMENotCarried: a document the writer cannot carry, as ParseOME
// refuses it, fails New with ErrMetadata wrapping the *pyramid.OMEError;
// with SkipUnsupported, the images keep their typed metadata and the
// error is listed in File.Skipped.
func TestOMENotCarried(t *testing.T) {
	good := pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`)
	doc := omeDocument(``, good)
	tests := []struct {
		name string
		doc  string
		is   error
		says string
	}{
		{"another schema version", strings.Replace(doc, "2016-06", "2015-01", 1), pyramid.ErrOMEVersion, "2015-01"},
		{"a duplicate ID", strings.Replace(doc, `<Image ID="Image:0"`, `<Instrument ID="Image:0"/><Image ID="Image:0"`, 1), pyramid.ErrOMEInvalid, `"Image:0"`},
		{"a reference to nothing", omeDocument(``, `<InstrumentRef ID="Instrument:9"/>`+good), pyramid.ErrOMEInvalid, "Instrument:9"},
		{"an element the schema does not allow", omeDocument(``, good+`<Comment>hand-made</Comment>`), pyramid.ErrOMEInvalid, "Comment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := mapPages(t, Options{}, grays(1, tt.doc)...)
			require.ErrorIs(t, err, ErrMetadata)
			require.ErrorIs(t, err, tt.is)
			var oe *pyramid.OMEError
			require.ErrorAs(t, err, &oe)
			assert.ErrorContains(t, err, "the OME-XML cannot be carried to the output")
			assert.ErrorContains(t, err, tt.says)

			f, _, err := mapPages(t, Options{SkipUnsupported: true}, grays(1, tt.doc)...)
			require.NoError(t, err)
			assert.Equal(t, []string{`"im0" 8x8 Z1 C1 T1 XYZCT uint16 x1: 0:*`}, summary(f), "the images are there")
			assert.Nil(t, f.Images[0].Spec.OME)
			require.Len(t, f.Skipped, 1)
			assert.ErrorIs(t, f.Skipped[0], tt.is)
			assert.ErrorIs(t, f.Skipped[0], ErrNotCarried, "the image is kept")
			assert.NotErrorIs(t, f.Skipped[0], ErrLeftOut)
			assert.ErrorContains(t, f.Skipped[0], "without it, the images keep only their typed metadata")
			assert.Equal(t, tt.doc, f.OMEXML, "kept whole all the same")
		})
	}
}

// TestOMEImageNotCarried: with SkipUnsupported, an Image element unlike
// its pixels (an RGB page described with SizeC 1) is left out, its image
// written from the typed fields, and the other image carries the
// document, which the output keeps but for the element left out and the
// map annotation only it refers to, which the image has as a typed one
// (its other annotations stay).
func TestOMEImageNotCarried(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06">` +
		`<Instrument ID="Instrument:0"><Objective ID="Objective:0:0" NominalMagnification="40"/></Instrument>` +
		`<Image ID="Image:0" Name="im0"><InstrumentRef ID="Instrument:0"/>` + pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`) + `</Image>` +
		`<Image ID="Image:1" Name="im1"><Pixels ID="Pixels:1" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="1" SizeT="1">` +
		`<TiffData IFD="1"/></Pixels><AnnotationRef ID="Annotation:0"/><AnnotationRef ID="Annotation:1"/></Image>` +
		`<StructuredAnnotations><MapAnnotation ID="Annotation:0"><Value><M K="stain">eosin</M></Value></MapAnnotation>` +
		`<CommentAnnotation ID="Annotation:1"><Value>slide cracked</Value></CommentAnnotation></StructuredAnnotations></OME>`
	rgb := testPage{width: 8, height: 8, samples: 3, bits: 8}
	_, _, err := mapPages(t, Options{}, gray(8, 8, description(doc)), rgb)
	require.ErrorIs(t, err, pyramid.ErrOMEConflict)
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, gray(8, 8, description(doc)), rgb)
	require.NoError(t, err)
	require.Len(t, f.Images, 2)
	assert.NotNil(t, f.Images[0].Spec.OME)
	assert.Nil(t, f.Images[1].Spec.OME)
	require.Len(t, f.Skipped, 1)
	assert.ErrorContains(t, f.Skipped[0], "OME image 1 (Image:1) cannot be carried")
	assert.NotErrorIs(t, f.Skipped[0], ErrLeftOut, "the image is kept")

	got := omexmltest.Parse(t, []byte(mapOME(t, convert(t, f, pyramid.Options{TileSize: 16}, Options{})).OMEXML))
	assert.Equal(t, "40", got.Element("Instrument", "Objective").Attr("NominalMagnification"))
	images := got.Children("Image")
	require.Len(t, images, 2)
	assert.Equal(t, "Instrument:0", images[0].Element("InstrumentRef").Attr("ID"))
	assert.Equal(t, "im1", images[1].Attr("Name"), "typed")
	assert.Equal(t, "3", images[1].Element("Pixels").Attr("SizeC"), "the writer's, not the element's")
	// Its map annotation is its typed one, linked; the document's, which
	// only the element left out refers to, goes with it.
	maps := got.Element("StructuredAnnotations").Children("MapAnnotation")
	require.Len(t, maps, 1)
	assert.Equal(t, maps[0].Attr("ID"), images[1].Element("AnnotationRef").Attr("ID"))
	assert.Equal(t, "eosin", maps[0].Element("Value", "M").Text)
	// An annotation of another kind, which no typed field holds, stays.
	assert.Equal(t, "slide cracked", got.Element("StructuredAnnotations", "CommentAnnotation", "Value").Text)
}

// TestOMEChannelsMiscounted: an Image element with more Channel elements
// than the image has channels cannot be carried; its image keeps the
// typed metadata the message promises, channel c named after Channel c,
// as Bio-Formats reads them.
func TestOMEChannelsMiscounted(t *testing.T) {
	doc := omeDocument(``, pixels(1, 1, 1, "XYZCT", `<Channel ID="Channel:0:0" Name="DAPI" Color="-16776961"/><Channel ID="Channel:0:1" Name="GFP"/><TiffData IFD="0"/>`))
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, grays(1, doc)...)
	require.NoError(t, err)
	require.Len(t, f.Skipped, 1)
	assert.ErrorIs(t, f.Skipped[0], ErrNotCarried)
	assert.ErrorContains(t, f.Skipped[0], "channel names and colours")
	assert.Equal(t, []pyramid.Channel{{Name: "DAPI", Color: color.NRGBA{R: 255, A: 255}}}, f.Images[0].Spec.Channels)
}

// TestOMEChannelsBySamples: Channels of several samples each, carried as
// a channel per sample, give the typed channels their names, each for its
// samples.
func TestOMEChannelsBySamples(t *testing.T) {
	doc := omeDocument(``, `<Pixels ID="Pixels:0" DimensionOrder="XYCZT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="4" SizeT="1">`+
		`<Channel ID="Channel:0:0" Name="A" SamplesPerPixel="2"/><Channel ID="Channel:0:1" Name="B" SamplesPerPixel="2"/><TiffData IFD="0"/></Pixels>`)
	page := testPage{width: 8, height: 8, samples: 4, bits: 8, more: description(doc)}
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, page)
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	var names []string
	for _, c := range f.Images[0].Spec.Channels {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"A", "A", "B", "B"}, names, "by SamplesPerPixel")
}
