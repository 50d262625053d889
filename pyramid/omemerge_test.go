package pyramid

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/omexmltest"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// mustParseOME parses a document the test knows is good.
func mustParseOME(t testing.TB, doc string) *OMEDocument {
	t.Helper()
	d, err := ParseOME([]byte(doc))
	require.NoError(t, err)
	return d
}

// writeImages writes the images of specs, every plane, with opts, and
// returns the file.
func writeImages(t testing.TB, opts Options, specs ...ImageSpec) []byte {
	t.Helper()
	return writeMemory(t, opts, func(w *Writer) error {
		return addSpecs(w, specs)
	})
}

// addSpecs adds the images of specs and writes their planes.
func addSpecs(w *Writer, specs []ImageSpec) error {
	for _, s := range specs {
		g := planesFor(s)
		if err := (goldenPyramid{images: []goldenImage{g}}).add(w); err != nil {
			return err
		}
	}
	return nil
}

// descriptionOf returns the OME-XML of a file.
func descriptionOf(t testing.TB, data []byte) string {
	t.Helper()
	f, err := readback.Parse(data)
	require.NoError(t, err)
	return f.IFDs[0].Text(tiff.TagImageDescription)
}

// callerCases are caller documents and the images they describe.
func callerCases() []struct {
	name  string
	doc   string
	specs []ImageSpec
} {
	return []struct {
		name  string
		doc   string
		specs []ImageSpec
	}{
		{"tifffile", tifffileDoc(), []ImageSpec{tifffileSpec}},
		{"Bio-Formats", bioformatsDoc(), []ImageSpec{bioformatsSpec}},
		{"rich", omexmltest.RichDoc(), richSpecs},
	}
}

// TestCallerOMEKept: a caller's whole document, given in Options.OME,
// comes out with every element and attribute it had but what the writer
// owns, and what the writer owns is the writer's: the root's UUID and
// Creator, the Pixels' layout, one TiffData per image, a Plane per plane
// in DimensionOrder. The output is a document ParseOME accepts (unique
// IDs, references that resolve, the model's order where it rebuilds).
func TestCallerOMEKept(t *testing.T) {
	for _, tc := range callerCases() {
		t.Run(tc.name, func(t *testing.T) {
			data := writeImages(t, Options{TileSize: 16, OME: mustParseOME(t, tc.doc)}, tc.specs...)
			out := descriptionOf(t, data)
			checkTags(t, []byte(out))
			_, err := ParseOME([]byte(out))
			require.NoError(t, err, out)
			want, got := omexmltest.Parse(t, []byte(tc.doc)), omexmltest.Parse(t, []byte(out))
			assert.Empty(t, omexmltest.MissingFrom(want, got), out)
			assert.Equal(t, software, got.Attr("Creator"))
			assert.NotEqual(t, want.Attr("UUID"), got.Attr("UUID"))
			images := got.Children("Image")
			require.Len(t, images, len(tc.specs))
			for i, im := range images {
				s, err := tc.specs[i].normalized()
				require.NoError(t, err)
				px := im.Children("Pixels")[0]
				assert.Equal(t, "false", px.Attr("BigEndian"))
				assert.Equal(t, string(s.DimensionOrder), px.Attr("DimensionOrder"))
				assert.Len(t, px.Children("TiffData"), 1)
				assert.Empty(t, px.Children("BinData"))
				assert.Empty(t, px.Children("MetadataOnly"))
				planes := px.Children("Plane")
				require.Len(t, planes, s.Planes())
				for p, pl := range planes {
					z, c, tt := s.PlaneCoords(p)
					assert.Equal(t, []string{strconv.Itoa(z), strconv.Itoa(c), strconv.Itoa(tt)}, []string{pl.Attr("TheZ"), pl.Attr("TheC"), pl.Attr("TheT")}, "plane %d", p)
				}
				assert.Len(t, px.Children("Channel"), s.SizeC)
			}
		})
	}
}

// TestCallerOMEImages: images given one by one, ImageSpec.OME, take their
// documents' other elements with them, once per document; an image of the
// document the file does not have is left out with the references to it
// that the schema lets go (ImageRef), and a reference it does not is an
// error.
func TestCallerOMEImages(t *testing.T) {
	rich := mustParseOME(t, omexmltest.RichDoc())
	t.Run("one of two", func(t *testing.T) {
		spec := richSpecs[1]
		spec.OME = rich.Image(1)
		out := descriptionOf(t, writeImages(t, Options{TileSize: 16}, spec))
		_, err := ParseOME([]byte(out))
		require.NoError(t, err, out)
		got := omexmltest.Parse(t, []byte(out))
		require.Len(t, got.Children("Image"), 1)
		assert.Equal(t, "Image:overview", got.Children("Image")[0].Attr("ID"))
		assert.NotContains(t, out, `"Image:rich"`)
		for _, kind := range []string{"Rights", "Project", "Dataset", "Folder", "Experiment", "Experimenter", "ExperimenterGroup", "Instrument", "StructuredAnnotations", "ROI"} {
			assert.NotEmpty(t, got.Children(kind), kind)
		}
		assert.Len(t, got.Children("Dataset")[0].Children("ImageRef"), 1, "the ImageRef to Image:overview stays")
		assert.Empty(t, got.Children("Folder")[0].Children("ImageRef"))
	})
	t.Run("both, and an image without", func(t *testing.T) {
		a, b := richSpecs[0], richSpecs[1]
		a.OME, b.OME = rich.Image(0), rich.Image(1)
		out := descriptionOf(t, writeImages(t, Options{TileSize: 16}, b, ImageSpec{SizeX: 8, SizeY: 8}, a))
		_, err := ParseOME([]byte(out))
		require.NoError(t, err, out)
		got := omexmltest.Parse(t, []byte(out))
		assert.Empty(t, omexmltest.MissingFrom(omexmltest.Parse(t, []byte(omexmltest.RichDoc())), got), "everything of the document, once")
		assert.Len(t, got.Children("Instrument"), 1)
		var ids []string
		for _, im := range got.Children("Image") {
			ids = append(ids, im.Attr("ID"))
		}
		assert.Equal(t, []string{"Image:overview", "Image:1", "Image:rich"}, ids)
	})
	t.Run("a reference the schema does not let go", func(t *testing.T) {
		doc := mustParseOME(t, strings.Replace(omexmltest.RichDoc(), `<Folder ID="Folder:0" Name="plate A">`,
			`<Folder ID="Folder:0" Name="plate A"><ChannelRef ID="Channel:rich:0"/>`, 1))
		spec := richSpecs[1]
		spec.OME = doc.Image(1)
		w, err := New(iohandle.NewMemory(), Options{})
		require.NoError(t, err)
		require.NoError(t, addSpecs(w, []ImageSpec{spec}))
		err = w.Close()
		require.ErrorIs(t, err, ErrOMEInvalid)
		assert.Contains(t, err.Error(), `Folder/ChannelRef@ID`)
		assert.Contains(t, err.Error(), `in an Image the file does not have`)
	})
}

// TestCallerOMEAnnotationsOfImagesLeftOut: a MapAnnotation only images the
// file does not have refer to goes with them; one an image written, or
// another element kept, refers to stays, and so does one nothing refers
// to, and an annotation of another kind. When none stays, there is no
// StructuredAnnotations element.
func TestCallerOMEAnnotationsOfImagesLeftOut(t *testing.T) {
	img := func(i int, refs string) string {
		return fmt.Sprintf(`<Image ID="Image:%d"><Pixels ID="Pixels:%d" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1">`+
			`<TiffData/></Pixels>%s</Image>`, i, i, refs)
	}
	mapOf := func(id string) string {
		return `<MapAnnotation ID="` + id + `"><Value><M K="k">` + id + `</M></Value></MapAnnotation>`
	}
	doc := mustParseOME(t, `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06">`+
		`<Dataset ID="Dataset:0"><AnnotationRef ID="Annotation:dataset"/></Dataset>`+
		img(0, `<AnnotationRef ID="Annotation:mine"/><AnnotationRef ID="Annotation:shared"/>`)+
		img(1, `<AnnotationRef ID="Annotation:theirs"/><AnnotationRef ID="Annotation:shared"/><AnnotationRef ID="Annotation:dataset"/><AnnotationRef ID="Annotation:note"/>`)+
		`<StructuredAnnotations>`+mapOf("Annotation:mine")+mapOf("Annotation:theirs")+mapOf("Annotation:shared")+mapOf("Annotation:dataset")+mapOf("Annotation:none")+
		`<CommentAnnotation ID="Annotation:note"><Value>slide cracked</Value></CommentAnnotation></StructuredAnnotations>`+omeEnd)
	for _, tt := range []struct {
		image      int
		kept, gone []string
	}{
		{0, []string{"mine", "shared", "dataset", "none", "note"}, []string{"theirs"}},
		{1, []string{"theirs", "shared", "dataset", "none", "note"}, []string{"mine"}},
	} {
		out := descriptionOf(t, writeImages(t, Options{TileSize: 16}, ImageSpec{SizeX: 8, SizeY: 6, OME: doc.Image(tt.image)}))
		_, err := ParseOME([]byte(out))
		require.NoError(t, err, out)
		for _, id := range tt.kept {
			assert.Contains(t, out, `Annotation ID="Annotation:`+id+`"`, "image %d", tt.image)
		}
		for _, id := range tt.gone {
			assert.NotContains(t, out, `"Annotation:`+id+`"`, "image %d", tt.image)
		}
	}

	only := mustParseOME(t, `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06">`+
		img(0, ``)+img(1, `<AnnotationRef ID="Annotation:theirs"/>`)+
		`<StructuredAnnotations>`+mapOf("Annotation:theirs")+`</StructuredAnnotations>`+omeEnd)
	out := descriptionOf(t, writeImages(t, Options{TileSize: 16}, ImageSpec{SizeX: 8, SizeY: 6, OME: only.Image(0)}))
	_, err := ParseOME([]byte(out))
	require.NoError(t, err, out)
	assert.NotContains(t, out, "StructuredAnnotations")
	out = descriptionOf(t, writeImages(t, Options{TileSize: 16}, ImageSpec{SizeX: 8, SizeY: 6, OME: only.Image(0), Annotations: []KeyValue{{"k", "v"}}}))
	assert.Equal(t, 1, strings.Count(out, "<StructuredAnnotations>"), out)
	assert.NotContains(t, out, "theirs")
}

// TestCallerOMERefused: what contradicts the pixels is ErrOption (through
// *OMEError, naming the element and attribute), what breaks the model is
// ErrMetadata, and either leaves no file.
func TestCallerOMERefused(t *testing.T) {
	image := func(pixels, inside string) string {
		return omeRoot + `<Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" ` + pixels + `>` + inside + `</Pixels></Image>` + omeEnd
	}
	sizes := `SizeX="8" SizeY="6" SizeZ="2" SizeC="1" SizeT="1"`
	spec := ImageSpec{SizeX: 8, SizeY: 6, SizeZ: 2}
	for _, tc := range []struct {
		name  string
		doc   string
		spec  ImageSpec
		want  error
		where string
	}{
		{"SizeX", image(strings.Replace(sizes, `SizeX="8"`, `SizeX="9"`, 1), ""), spec, ErrOMEConflict, "Image/Pixels@SizeX"},
		{"SizeZ", image(strings.Replace(sizes, `SizeZ="2"`, `SizeZ="1"`, 1), ""), spec, ErrOMEConflict, "Pixels@SizeZ"},
		{"SizeC of RGB", image(sizes, ""), ImageSpec{SizeX: 8, SizeY: 6, SizeZ: 2, SamplesPerPixel: 3}, ErrOMEConflict, "Pixels@SizeC"},
		{"Type", image(sizes, ""), ImageSpec{SizeX: 8, SizeY: 6, SizeZ: 2, PixelType: Uint16}, ErrOMEConflict, "Pixels@Type"},
		{"SignificantBits", image(sizes+` SignificantBits="12"`, ""), spec, ErrOMEConflict, "Pixels@SignificantBits"},
		{"not a size", image(strings.Replace(sizes, `SizeX="8"`, `SizeX="eight"`, 1), ""), spec, ErrOMEInvalid, "Pixels@SizeX"},
		{"channels", image(sizes, `<Channel ID="Channel:0:0"/><Channel ID="Channel:0:1"/>`), spec, ErrOMEConflict, "2 Channel elements"},
		{"samples", image(sizes, `<Channel ID="Channel:0:0" SamplesPerPixel="3"/>`), spec, ErrOMEConflict, "Channel@SamplesPerPixel"},
		{"a Plane outside", image(sizes, `<TiffData/><Plane TheZ="2" TheC="0" TheT="0"/>`), spec, ErrOMEConflict, "Plane@TheZ"},
		{"a Plane twice", image(sizes, `<TiffData/><Plane TheZ="1" TheC="0" TheT="0"/><Plane TheZ="1" TheC="0" TheT="0"/>`), spec, ErrOMEConflict, "a second Plane"},
		{"a Plane without TheT", image(sizes, `<TiffData/><Plane TheZ="1" TheC="0"/>`), spec, ErrOMEInvalid, "Plane@TheT"},
		{"a length unit", image(sizes+` PhysicalSizeX="0.5" PhysicalSizeXUnit="furlong"`, ""), spec, ErrOMEInvalid, `Pixels@PhysicalSizeXUnit (line 1): "furlong" is not an OME length unit`},
		{"a size not positive", image(sizes+` PhysicalSizeZ="-1"`, ""), spec, ErrOMEInvalid, `Pixels@PhysicalSizeZ (line 1): "-1" is not a positive number`},
		{"a size Go reads, not XML Schema", image(sizes+` PhysicalSizeX="Infinity"`, ""), spec, ErrOMEInvalid, `Pixels@PhysicalSizeX (line 1): "Infinity" is not a positive number`},
		{"a size 0 as a float", image(sizes+` PhysicalSizeY="1e-50"`, ""), spec, ErrOMEInvalid, `Pixels@PhysicalSizeY (line 1): "1e-50" is not a positive number`},
		{"a number in hex", image(sizes, `<Channel ID="Channel:0:0" PinholeSize="0x1p-2"/>`), spec, ErrOMEInvalid, `Channel@PinholeSize (line 1): "0x1p-2" is not a number`},
		{"a number after a no-break space", image(sizes, `<Channel ID="Channel:0:0" PinholeSize="&#xA0;1"/>`), spec, ErrOMEInvalid, `Channel@PinholeSize (line 1): "\u00a01" is not a number`},
		{"a time unit", image(sizes+` TimeIncrement="2" TimeIncrementUnit="sec"`, ""), spec, ErrOMEInvalid, `Pixels@TimeIncrementUnit (line 1): "sec" is not an OME time unit`},
		{"a wavelength unit", image(sizes, `<Channel ID="Channel:0:0" EmissionWavelength="520" EmissionWavelengthUnit="nanometers"/>`), spec, ErrOMEInvalid,
			`Channel@EmissionWavelengthUnit (line 1): "nanometers" is not an OME length unit`},
		{"not a number", image(sizes, `<Channel ID="Channel:0:0" PinholeSize="wide"/>`), spec, ErrOMEInvalid, `Channel@PinholeSize (line 1): "wide" is not a number`},
		// The writer copies the date's text: the schema's xsd:dateTime, or
		// an invalid file.
		{"a date that is none", strings.Replace(image(sizes, ""), `<Pixels`, `<AcquisitionDate>yesterday</AcquisitionDate><Pixels`, 1), spec, ErrOMEInvalid,
			`Image/AcquisitionDate (line 1): "yesterday" is not a date and time`},
		{"a date without its time", strings.Replace(image(sizes, ""), `<Pixels`, `<AcquisitionDate>2024-03-01</AcquisitionDate><Pixels`, 1), spec, ErrOMEInvalid,
			`Image/AcquisitionDate (line 1): "2024-03-01" is not a date and time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustParseOME(t, tc.doc)
			path := filepath.Join(t.TempDir(), "out.ome.tif")
			w, err := Create(path, Options{OME: doc})
			require.NoError(t, err)
			_, err = w.AddImage(tc.spec)
			require.ErrorIs(t, err, tc.want)
			var oe *OMEError
			require.ErrorAs(t, err, &oe)
			assert.Contains(t, err.Error(), tc.where)
			if tc.want == ErrOMEConflict {
				assert.ErrorIs(t, err, ErrOption)
			} else {
				assert.ErrorIs(t, err, ErrMetadata)
			}
			assert.Error(t, w.Close(), "no image, no file")
			entries, err := os.ReadDir(filepath.Dir(path))
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing is left behind")

			spec := tc.spec // the same document, given for the image
			spec.OME = doc.Image(0)
			w, err = New(iohandle.NewMemory(), Options{})
			require.NoError(t, err)
			_, err = w.AddImage(spec)
			require.ErrorIs(t, err, tc.want)
			require.NoError(t, w.Abort())

			checked := doc.Image(0).Check(tc.spec)
			require.ErrorIs(t, checked, tc.want)
			assert.Equal(t, err.Error(), checked.Error(), "Check says what AddImage says")
		})
	}
}

// TestOMEImageCheck: the elements of a document that describe the specs
// pass Check, zero sizes counting as 1; a quantity of the element that a
// typed field replaces, value and unit, is not checked.
func TestOMEImageCheck(t *testing.T) {
	rich := mustParseOME(t, omexmltest.RichDoc())
	for i, s := range richSpecs {
		assert.NoError(t, rich.Image(i).Check(s), "image %d", i)
	}
	assert.ErrorIs(t, rich.Image(1).Check(richSpecs[0]), ErrOMEConflict)

	doc := mustParseOME(t, omeRoot+`<Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1" `+
		`PhysicalSizeX="1" PhysicalSizeXUnit="furlong" PhysicalSizeY="INF"><Channel ID="Channel:0:0" ExcitationWavelength="0"/></Pixels></Image>`+omeEnd)
	spec := ImageSpec{SizeX: 8, SizeY: 6, PhysicalSizeX: 0.5, Channels: []Channel{{ExcitationWavelength: Quantity{488, "nm"}}}}
	assert.NoError(t, doc.Image(0).Check(spec), "the typed size and wavelength replace the element's; INF is an xsd:float")
	spec.PhysicalSizeX = 0
	assert.ErrorIs(t, doc.Image(0).Check(spec), ErrOMEInvalid)

	// Dates: the schema's forms pass, and a typed date replaces one that is
	// not.
	for date, ok := range map[string]bool{"2024-03-01T10:11:12": true, " 2024-03-01T10:11:12.25+05:30\n": true, "2024-03-01T10:11:12Z": true,
		"2024-03-01T24:00:00": true, "12024-03-01T10:11:12-14:00": true, "-0044-03-15T12:00:00": true, "2024-03-01T10:11:12&#x2B;01:00": true,
		"2024-03-01 10:11:12": false, "10:11:12": false, "": false, "2024-13-45T99:99:99": false, "0000-01-01T00:00:00": false,
		"02024-01-01T00:00:00": false, "2024-01-01T10:00:00+15:00": false, "2024-01-01T24:00:01": false, "2024-01-01T10:00:00\u00a0": false,
		// The days of each month, leap years as libxml2 counts them.
		"2024-02-29T00:00:00": true, "2000-02-29T00:00:00": true, "12024-02-29T00:00:00": true, "-0004-02-29T00:00:00": true, "-0400-02-29T00:00:00": true,
		"2024-01-31T00:00:00": true, "2024-12-31T00:00:00": true, "2024-04-30T00:00:00": true,
		"2023-02-29T00:00:00": false, "1900-02-29T00:00:00": false, "2024-02-30T00:00:00": false, "2024-04-31T00:00:00": false,
		"2024-06-31T00:00:00": false, "2024-09-31T00:00:00": false, "2024-11-31T00:00:00": false, "-0100-02-29T00:00:00": false, "-0003-02-29T00:00:00": false,
		"100000000000000000-01-01T00:00:00": true, "9223372036854775808-01-01T00:00:00": false} {
		doc := mustParseOME(t, omeRoot+`<Image ID="Image:0"><AcquisitionDate>`+date+`</AcquisitionDate><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1"><TiffData/></Pixels></Image>`+omeEnd)
		spec := ImageSpec{SizeX: 8, SizeY: 6}
		if err := doc.Image(0).Check(spec); ok {
			assert.NoError(t, err, "%q", date)
		} else {
			assert.ErrorIs(t, err, ErrOMEInvalid, "%q", date)
			spec.AcquisitionDate = time.Date(2024, 3, 1, 10, 11, 12, 0, time.UTC)
			assert.NoError(t, doc.Image(0).Check(spec), "%q, replaced", date)
		}
	}

	// A Channel of several samples, which the writer stores as channels of
	// one sample each: its element goes to each, the first keeping its ID.
	split := mustParseOME(t, omeRoot+`<Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="4" SizeT="1">`+
		`<Channel ID="Channel:rgba" SamplesPerPixel="4" Name="rgba" Fluor="none"/><TiffData/></Pixels></Image>`+omeEnd)
	four := ImageSpec{SizeX: 8, SizeY: 6, SizeC: 4}
	require.NoError(t, split.Image(0).Check(four))
	assert.Equal(t, []int32{split.Image(0).channels()[0], split.Image(0).channels()[0], split.Image(0).channels()[0], split.Image(0).channels()[0]},
		split.Image(0).specChannels(four))
	assert.ErrorIs(t, split.Image(0).Check(ImageSpec{SizeX: 8, SizeY: 6, SizeC: 3}), ErrOMEConflict, "samples for 4 channels, not 3")
	h := iohandle.NewMemory()
	w, err := New(h, Options{})
	require.NoError(t, err)
	four.OME = split.Image(0)
	im, err := w.AddImage(four)
	require.NoError(t, err)
	for c := range 4 {
		require.NoError(t, im.WritePlane(0, c, 0, make([]byte, 48)))
	}
	require.NoError(t, w.Close())
	written := descriptionOf(t, h.Bytes())
	for _, want := range []string{`<Channel ID="Channel:rgba" SamplesPerPixel="1" Name="rgba" Fluor="none"`, `SamplesPerPixel="1" Name="rgba" Fluor="none"`} {
		assert.Contains(t, written, want)
	}
	assert.Equal(t, 4, strings.Count(written, `Name="rgba" Fluor="none"`), "the Channel's attributes on each of its samples")
	assert.Equal(t, 1, strings.Count(written, `"Channel:rgba"`), "its ID on the first only")

	// 1-bit pixels are written as uint8 0 and 1, as readers give them.
	bits := mustParseOME(t, omeRoot+`<Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="bit" SignificantBits="1" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1"/></Image>`+omeEnd)
	assert.NoError(t, bits.Image(0).Check(ImageSpec{SizeX: 8, SizeY: 6, PixelType: Uint8}))
	assert.ErrorIs(t, bits.Image(0).Check(ImageSpec{SizeX: 8, SizeY: 6, PixelType: Uint16}), ErrOMEConflict)
}

// TestOMESplitChannelPlanes: the TheC of a Plane counts the document's
// Channel elements; where a Channel of several samples is written as a
// channel per sample, its Planes go to each of them.
func TestOMESplitChannelPlanes(t *testing.T) {
	text := omeRoot + `<Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYCZT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="4" SizeT="1">` +
		`<Channel ID="Channel:0:0" SamplesPerPixel="2" Name="first"/><Channel ID="Channel:0:1" SamplesPerPixel="2" Name="second"/>` +
		`<Plane TheZ="0" TheC="0" TheT="0" ExposureTime="11"/><Plane TheZ="0" TheC="1" TheT="0" ExposureTime="99"/></Pixels></Image>` + omeEnd
	doc := mustParseOME(t, text)
	spec := ImageSpec{SizeX: 8, SizeY: 6, SizeC: 4, DimensionOrder: XYCZT, OME: doc.Image(0)}
	h := iohandle.NewMemory()
	w, err := New(h, Options{})
	require.NoError(t, err)
	im, err := w.AddImage(spec)
	require.NoError(t, err)
	for c := range 4 {
		require.NoError(t, im.WritePlane(0, c, 0, make([]byte, 48)))
	}
	require.NoError(t, w.Close())
	px := omexmltest.Parse(t, []byte(descriptionOf(t, h.Bytes()))).Element("Image", "Pixels")
	var got []string
	for _, p := range px.Children("Plane") {
		got = append(got, p.Attr("TheC")+":"+p.Attr("ExposureTime"))
	}
	assert.Equal(t, []string{"0:11", "1:11", "2:99", "3:99"}, got)
	var ids []string
	for _, c := range px.Children("Channel") {
		ids = append(ids, c.Attr("ID"))
	}
	assert.Equal(t, []string{"Channel:0:0", "Channel:0:0:1", "Channel:0:1", "Channel:0:1:1"}, ids, "a Channel's other samples named after it")

	// TheC counts the 2 Channels, not the 4 samples.
	third := mustParseOME(t, strings.Replace(text, `TheC="1"`, `TheC="2"`, 1))
	spec.OME = third.Image(0)
	err = third.Image(0).Check(spec)
	assert.ErrorIs(t, err, ErrOMEConflict)
}

// TestCallerOMEImageCount: a document's Images are the images added, one
// for one: one more is refused at AddImage, one fewer at Close, and with
// Options.OME's images an ImageSpec.OME is refused too.
func TestCallerOMEImageCount(t *testing.T) {
	rich := mustParseOME(t, omexmltest.RichDoc())
	w, err := New(iohandle.NewMemory(), Options{OME: rich})
	require.NoError(t, err)
	require.NoError(t, addSpecs(w, richSpecs))
	_, err = w.AddImage(ImageSpec{SizeX: 8, SizeY: 8})
	require.ErrorIs(t, err, ErrOMEConflict)
	assert.Contains(t, err.Error(), "Options.OME has 2 Images")
	require.NoError(t, w.Close())

	path := filepath.Join(t.TempDir(), "fewer.ome.tif")
	w, err = Create(path, Options{OME: rich})
	require.NoError(t, err)
	require.NoError(t, addSpecs(w, richSpecs[:1]))
	err = w.Close()
	require.ErrorIs(t, err, ErrOMEConflict)
	require.ErrorIs(t, err, ErrOption)
	assert.NoFileExists(t, path)

	w, err = New(iohandle.NewMemory(), Options{OME: rich})
	require.NoError(t, err)
	spec := richSpecs[0]
	spec.OME = rich.Image(0)
	_, err = w.AddImage(spec)
	require.ErrorIs(t, err, ErrOption)
	require.NoError(t, w.Abort())
}

// mergedDocs are the images of documents that define the same IDs, as
// the OME-TIFFs of different files do: tifffile's, Bio-Formats', and
// another acquisition's of Bio-Formats (references by element, by
// Annotator and by settings), with an annotation whose text holds an ID.
func mergedDocs(t testing.TB) []ImageSpec {
	bf := strings.Replace(bioformatsDoc(), `<XMLAnnotation ID="Annotation:0"`, `<XMLAnnotation ID="Annotation:0" Annotator="Experimenter:0"`, 1)
	bf = strings.Replace(bf, `<Value><OriginalMetadata><Key>Exposure</Key>`, `<Value><OriginalMetadata ID="Annotation:0"><Key>Exposure</Key>`, 1)
	bf = strings.Replace(bf, `</Pixels></Image>`, `</Pixels><AnnotationRef ID="Annotation:1"/></Image>`, 1)
	bf = strings.Replace(bf, `<Value><OriginalMetadata><Key>Objective</Key>`, `<Value><AnnotationRef ID="Annotation:0"/><OriginalMetadata><Key>Objective</Key>`, 1)
	specs := []ImageSpec{tifffileSpec, bioformatsSpec, bioformatsSpec}
	specs[0].OME = mustParseOME(t, tifffileDoc()).Image(0)
	specs[1].OME = mustParseOME(t, bf).Image(0)
	// Another acquisition's: the same IDs, not the same document.
	specs[2].OME = mustParseOME(t, strings.Replace(bf, `Name="Lovelace"`, `Name="Byron"`, 1)).Image(0)
	return specs
}

// TestCallerOMEDocumentParsedTwice: images of a document parsed twice (as
// from two files of one dataset, each with its own UUID) share its
// objects, written once, each image's references to them kept; the same
// Image element from both is two images, of documents kept apart.
func TestCallerOMEDocumentParsedTwice(t *testing.T) {
	img := func(i int) string {
		return fmt.Sprintf(`<Image ID="Image:%d"><ExperimenterRef ID="Experimenter:0"/><Pixels ID="Pixels:%d" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1">`+
			`<TiffData/></Pixels><AnnotationRef ID="Annotation:0"/></Image>`, i, i)
	}
	doc := func(uuid string) string {
		return `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="urn:uuid:` + uuid + `">` +
			`<Plate ID="Plate:0"><Well ID="Well:0" Column="0" Row="0"><WellSample ID="WellSample:0" Index="0"><ImageRef ID="Image:0"/></WellSample>` +
			`<WellSample ID="WellSample:1" Index="1"><ImageRef ID="Image:1"/></WellSample></Well></Plate>` +
			`<Experimenter ID="Experimenter:0" LastName="Lovelace"/>` + img(0) + img(1) +
			`<StructuredAnnotations><CommentAnnotation ID="Annotation:0"><Value>shared</Value></CommentAnnotation></StructuredAnnotations>` + omeEnd
	}
	a := mustParseOME(t, doc("11111111-2222-3333-4444-555555555555"))
	b := mustParseOME(t, doc("66666666-7777-8888-9999-000000000000"))
	h := iohandle.NewMemory()
	w, err := New(h, Options{})
	require.NoError(t, err)
	for i, d := range []*OMEDocument{a, b} {
		im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 6, OME: d.Image(i)})
		require.NoError(t, err)
		require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 48)))
	}
	require.NoError(t, w.Close())
	out := descriptionOf(t, h.Bytes())
	_, err = ParseOME([]byte(out))
	require.NoError(t, err)
	for _, once := range []string{`<Plate ID="Plate:0">`, `<Experimenter ID="Experimenter:0"`, `<CommentAnnotation ID="Annotation:0">`, `<ImageRef ID="Image:0"/>`, `<ImageRef ID="Image:1"/>`} {
		assert.Equal(t, 1, strings.Count(out, once), once)
	}
	assert.Equal(t, 2, strings.Count(out, `<ExperimenterRef ID="Experimenter:0"/>`))
	assert.NotContains(t, out, ":0:1")

	// The same Image element of both is two acquisitions described alike
	// (tifffile's documents differ only in their UUIDs): separate, the
	// second's IDs renamed.
	h = iohandle.NewMemory()
	w, err = New(h, Options{})
	require.NoError(t, err)
	for _, d := range []*OMEDocument{a, b} {
		im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 6, OME: d.Image(0)})
		require.NoError(t, err)
		require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 48)))
	}
	require.NoError(t, w.Close())
	out = descriptionOf(t, h.Bytes())
	_, err = ParseOME([]byte(out))
	require.NoError(t, err)
	assert.Contains(t, out, `<Plate ID="Plate:0:1">`)
	assert.Contains(t, out, `<Image ID="Image:0:1" Name="">`)

	tf := tifffileSpec
	tf.OME = mustParseOME(t, strings.Replace(tifffileDoc(), "200f84c6", "300f84c6", 1)).Image(0)
	specs := []ImageSpec{tifffileSpec, tf}
	specs[0].OME = mustParseOME(t, tifffileDoc()).Image(0)
	h = iohandle.NewMemory()
	w, err = New(h, Options{})
	require.NoError(t, err)
	require.NoError(t, addSpecs(w, specs))
	require.NoError(t, w.Close(), "two tifffile files of one shape")
	assert.Contains(t, descriptionOf(t, h.Bytes()), `<Image ID="Image:0:1"`)
}

// TestCallerOMEDocumentsClash: the IDs a document defines that another one
// given defines too are renamed, with ":1"... appended, where it defines
// them and where it refers to them, and nowhere else; two documents with
// Rights cannot go in one file (a file has one), nor an image of a
// document given twice.
func TestCallerOMEDocumentsClash(t *testing.T) {
	h := iohandle.NewMemory()
	w, err := New(h, Options{})
	require.NoError(t, err)
	require.NoError(t, addSpecs(w, mergedDocs(t)))
	require.NoError(t, w.Close())
	out := descriptionOf(t, h.Bytes())
	_, err = ParseOME([]byte(out))
	require.NoError(t, err, "every ID once, every reference resolved")
	for _, want := range []string{`<Image ID="Image:0" Name="Image0">`, `<Image ID="Image:0:1" Name="cells.czi #1">`, `<Image ID="Image:0:2" Name="cells.czi #1">`,
		`<Channel ID="Channel:0:0:1"`, `<Channel ID="Channel:0:0:2"`, `<Instrument ID="Instrument:0">`, `<Instrument ID="Instrument:0:1">`,
		`<InstrumentRef ID="Instrument:0"/>`, `<InstrumentRef ID="Instrument:0:1"/>`, `<ExperimenterRef ID="Experimenter:0:1"/>`,
		`<LightSourceSettings ID="LightSource:0:0:1"`, `<ObjectiveSettings ID="Objective:0:0:1"`, `<AnnotationRef ID="Annotation:1:1"/>`,
		`<XMLAnnotation ID="Annotation:0:1" Annotator="Experimenter:0:1" Namespace="openmicroscopy.org/OriginalMetadata">`,
		`<OriginalMetadata ID="Annotation:0">`} {
		assert.Contains(t, out, want)
	}
	assert.Equal(t, 2, strings.Count(out, `<OriginalMetadata ID="Annotation:0">`), "an annotation's content is its own, not an ID")
	assert.Equal(t, 1, strings.Count(out, `<Value><AnnotationRef ID="Annotation:0:1"/>`), "an AnnotationRef in an annotation's content refers, as the schema's keyref reads it")

	a, b := tifffileSpec, bioformatsSpec
	a.OME = mustParseOME(t, tifffileDoc()).Image(0)
	b.OME = mustParseOME(t, bioformatsDoc()).Image(0)
	w, err = New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	require.NoError(t, addSpecs(w, []ImageSpec{a, a}))
	err = w.Close()
	require.ErrorIs(t, err, ErrOMEInvalid)
	assert.Contains(t, err.Error(), "given to images 0 and 1")

	rights := omeRoot + `<Rights><RightsHolder>lab</RightsHolder></Rights>` + omeEnd
	w, err = New(iohandle.NewMemory(), Options{OME: mustParseOME(t, rights)})
	require.NoError(t, err)
	c := tifffileSpec
	c.OME = mustParseOME(t, strings.Replace(tifffileDoc(), `<Image `, `<Rights/><Image `, 1)).Image(0)
	require.NoError(t, addSpecs(w, []ImageSpec{c}))
	err = w.Close()
	require.ErrorIs(t, err, ErrOMEInvalid)
	assert.Contains(t, err.Error(), "another document given has Rights")
}

// namespaceDocs bind prefixes in unusual ways: prefixes the content uses
// declared on the root, the OME namespace on a prefix and another one the
// default, xsi bound to another namespace, declarations below the root.
var namespaceDocs = []string{
	`<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" xmlns:x="urn:x" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
		omeImage0 + `<StructuredAnnotations><XMLAnnotation ID="Annotation:0"><Value><x:a xsi:type="x:T" x:k="v"><x:b/></x:a></Value></XMLAnnotation></StructuredAnnotations>` + omeEnd,
	`<ome:OME xmlns:ome="http://www.openmicroscopy.org/Schemas/OME/2016-06" xmlns="urn:default" xmlns:xsi="urn:not-xsi">` +
		`<ome:Image ID="Image:0"><ome:Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="1" SizeT="1"><ome:TiffData/></ome:Pixels></ome:Image>` +
		`<ome:StructuredAnnotations><ome:XMLAnnotation ID="Annotation:0"><ome:Value><thing xsi:k="2"><inner/></thing></ome:Value></ome:XMLAnnotation></ome:StructuredAnnotations></ome:OME>`,
	// (Prefixes declared on Pixels and Channel, where the schema allows
	// no attribute of theirs, bind nothing the writer keeps but the
	// declarations.)
	omeRoot + `<Image ID="Image:0"><Pixels xmlns:p="urn:p" ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="1" SizeT="1">` +
		`<Channel ID="Channel:0:0" xmlns:c="urn:c"><LightPath xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"/></Channel><TiffData/></Pixels></Image>` + omeEnd,
}

// TestCallerOMENamespaces: whatever prefixes a caller's document binds,
// and wherever, every element and attribute comes out in its namespace:
// the writer's own elements are in the OME namespace without prefix, and
// the caller's get declarations for the bindings they inherited from the
// root, which the writer rewrites.
func TestCallerOMENamespaces(t *testing.T) {
	for i, doc := range namespaceDocs {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			out := descriptionOf(t, writeImages(t, Options{TileSize: 16, OME: mustParseOME(t, doc)}, ImageSpec{SizeX: 8, SizeY: 8}))
			checkTags(t, []byte(out))
			_, err := ParseOME([]byte(out))
			require.NoError(t, err, out)
			assert.Empty(t, omexmltest.MissingFrom(omexmltest.Parse(t, []byte(doc)), omexmltest.Parse(t, []byte(out))), out)
		})
	}
}

// TestCallerOMEWithoutImages: a document without Images gives the file
// its other elements, and the images are the writer's.
func TestCallerOMEWithoutImages(t *testing.T) {
	doc := omeRoot + `<Experimenter ID="Experimenter:0" FirstName="Ada"/><StructuredAnnotations><TagAnnotation ID="Annotation:0"><Value>t</Value></TagAnnotation></StructuredAnnotations>` + omeEnd
	out := descriptionOf(t, writeImages(t, Options{TileSize: 16, OME: mustParseOME(t, doc)},
		ImageSpec{SizeX: 8, SizeY: 8, Annotations: []KeyValue{{"k", "v"}}}, ImageSpec{SizeX: 4, SizeY: 4}))
	_, err := ParseOME([]byte(out))
	require.NoError(t, err, out)
	got := omexmltest.Parse(t, []byte(out))
	assert.Empty(t, omexmltest.MissingFrom(omexmltest.Parse(t, []byte(doc)), got))
	assert.Len(t, got.Children("Image"), 2)
	assert.Equal(t, []string{"TagAnnotation", "MapAnnotation"}, got.Element("StructuredAnnotations").ChildNames())
	assert.Equal(t, "Annotation:0:1", got.Element("StructuredAnnotations").Children("MapAnnotation")[0].Attr("ID"))
}

// TestCallerOMEDateCollapsed: a caller's AcquisitionDate is written as its
// schema type reads it, whitespace collapsed: libxml2 refuses it otherwise.
func TestCallerOMEDateCollapsed(t *testing.T) {
	doc := mustParseOME(t, omeRoot+`<Image ID="Image:0"><AcquisitionDate>
	  2024-03-01T10:11:12.5Z  </AcquisitionDate><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="6" SizeZ="1" SizeC="1" SizeT="1"><TiffData/></Pixels></Image>`+omeEnd)
	data := writeMemory(t, Options{OME: doc}, func(w *Writer) error {
		im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 6})
		require.NoError(t, err)
		return im.WritePlane(0, 0, 0, make([]byte, 48))
	})
	f, err := readback.Parse(data)
	require.NoError(t, err)
	assert.Contains(t, f.IFDs[0].Text(tiff.TagImageDescription), `<AcquisitionDate>2024-03-01T10:11:12.5Z</AcquisitionDate>`)
}

// TestAcquisitionDateZones: a typed date is written with its zone's
// offset, and one in NoZone with none, as TIFF's DateTime gives it.
func TestAcquisitionDateZones(t *testing.T) {
	for _, tt := range []struct {
		date time.Time
		want string
	}{
		{time.Date(2024, 3, 1, 10, 11, 12, 0, NoZone), "2024-03-01T10:11:12"},
		{time.Date(2024, 3, 1, 10, 11, 12, 25e7, NoZone), "2024-03-01T10:11:12.25"},
		{time.Date(2024, 3, 1, 10, 11, 12, 0, time.UTC), "2024-03-01T10:11:12Z"},
		{time.Date(2024, 3, 1, 10, 11, 12, 0, time.FixedZone("", 0)), "2024-03-01T10:11:12Z"},
		{time.Date(2024, 3, 1, 10, 11, 12, 0, time.FixedZone("NoZone", 0)), "2024-03-01T10:11:12Z"},
		{mustParseTime(t, "2024-03-01T10:11:12+00:00"), "2024-03-01T10:11:12Z"},
		{time.Date(2024, 3, 1, 10, 11, 12, 0, time.FixedZone("IST", 5*3600+1800)), "2024-03-01T10:11:12+05:30"},
		{time.Date(2024, 3, 1, 10, 11, 12, 0, time.FixedZone("", -14*3600)), "2024-03-01T10:11:12-14:00"},
		// Offsets xsd:dateTime cannot say: the same instant in UTC.
		{time.Date(2024, 3, 1, 10, 11, 12, 0, time.FixedZone("", 15*3600)), "2024-02-29T19:11:12Z"},
		{time.Date(1900, 3, 1, 10, 11, 12, 0, time.FixedZone("AMT", 19*60+32)), "1900-03-01T09:51:40Z"},
	} {
		data := writeMemory(t, Options{}, func(w *Writer) error {
			im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 6, AcquisitionDate: tt.date})
			require.NoError(t, err)
			return im.WritePlane(0, 0, 0, make([]byte, 48))
		})
		f, err := readback.Parse(data)
		require.NoError(t, err)
		assert.Contains(t, f.IFDs[0].Text(tiff.TagImageDescription), `<AcquisitionDate>`+tt.want+`</AcquisitionDate>`)
	}
}

func mustParseTime(t *testing.T, s string) time.Time {
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

// TestCallerOMEXSIType: an xsi:type or xsi:nil on an element of the OME
// schema is left out of the file (a name a validator cannot resolve made
// it invalid); one in foreign content is kept, its value's prefix
// declared.
func TestCallerOMEXSIType(t *testing.T) {
	const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	doc := omeRoot + strings.Replace(omeImage0, `<Pixels ID="Pixels:0"`, `<Pixels `+xsi+` xsi:type="Foo" xsi:nil="false" ID="Pixels:0"`, 1) +
		`<StructuredAnnotations xmlns:xsd="http://www.w3.org/2001/XMLSchema"><XMLAnnotation ID="Annotation:0"><Value>` +
		`<x:a xmlns:x="urn:x" ` + xsi + ` xsi:type="xsd:string"/></Value></XMLAnnotation></StructuredAnnotations>` + omeEnd
	data := writeImages(t, Options{TileSize: 16, OME: mustParseOME(t, doc)}, ImageSpec{SizeX: 8, SizeY: 8})
	out := descriptionOf(t, data)
	assert.Equal(t, 1, strings.Count(out, "xsi:type"), out)
	assert.NotContains(t, out, "xsi:nil")
	// The value's prefix, declared on StructuredAnnotations, which the
	// writer writes itself, is declared where the attribute is.
	assert.Contains(t, out, `xmlns:xsd="http://www.w3.org/2001/XMLSchema" xsi:type="xsd:string"`, out)
	_, err := ParseOME([]byte(out))
	require.NoError(t, err)
}

// TestPlaneHashOfBytesStoredOtherwise: a Plane's HashSHA1 is of its bytes
// as the document's Pixels store them; where the file stores them
// otherwise (big-endian samples wider than a byte, samples not
// interleaved), it would be wrong and is left out. Otherwise it is kept.
func TestPlaneHashOfBytesStoredOtherwise(t *testing.T) {
	const hash = `<HashSHA1>0123456789abcdef0123456789abcdef01234567</HashSHA1>`
	doc := func(typ string, spp int, pixelsAttrs string) string {
		return `<?xml version="1.0"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0">` +
			fmt.Sprintf(`<Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="%s" SizeX="16" SizeY="16" SizeZ="1" SizeC="%d" SizeT="1"%s>`, typ, spp, pixelsAttrs) +
			fmt.Sprintf(`<Channel ID="Channel:0:0" SamplesPerPixel="%d"/><TiffData/><Plane TheZ="0" TheC="0" TheT="0">%s</Plane></Pixels></Image></OME>`, spp, hash)
	}
	for _, tc := range []struct {
		name     string
		typ      string
		pixelTyp PixelType
		spp      int
		attrs    string
		kept     bool
	}{
		{"little-endian uint16", "uint16", Uint16, 1, ` BigEndian="false"`, true},
		{"big-endian uint16", "uint16", Uint16, 1, ` BigEndian="true"`, false},
		{"big-endian uint16, xsd's 1", "uint16", Uint16, 1, ` BigEndian="1"`, false},
		{"big-endian uint8", "uint8", Uint8, 1, ` BigEndian="true"`, true},
		{"RGB interleaved", "uint8", Uint8, 3, ` Interleaved="true"`, true},
		{"RGB planar", "uint8", Uint8, 3, ` Interleaved="false"`, false},
		{"RGB, interleaving not said", "uint8", Uint8, 3, ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParseOME(t, doc(tc.typ, tc.spp, tc.attrs))
			spec := ImageSpec{SizeX: 16, SizeY: 16, PixelType: tc.pixelTyp, SamplesPerPixel: tc.spp, OME: d.Image(0)}
			out := descriptionOf(t, writeImages(t, Options{TileSize: 16}, spec))
			assert.Equal(t, tc.kept, strings.Contains(out, hash), out)
		})
	}
}
