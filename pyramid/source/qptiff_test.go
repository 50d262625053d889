package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/omexmltest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// qpiSoftware is the Software of a QPTIFF's pages, as a PhenoImager's.
var qpiSoftware = ascii(tiff.TagSoftware, "PerkinElmer-QPI")

// qpiXML is a QPTIFF page's description, as Akoya's writers make it (the
// encoding declared UTF-16, the text UTF-8): the root holding the fields
// given as name, value pairs, after DescriptionVersion and
// AcquisitionSoftware.
func qpiXML(fields ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-16"?>` + "\r\n<PerkinElmer-QPI-ImageDescription>\r\n" +
		"  <DescriptionVersion>2</DescriptionVersion>\r\n  <AcquisitionSoftware>PhenoImager HT</AcquisitionSoftware>\r\n")
	for i := 0; i+1 < len(fields); i += 2 {
		b.WriteString("  <" + fields[i] + ">" + fields[i+1] + "</" + fields[i] + ">\r\n")
	}
	b.WriteString("</PerkinElmer-QPI-ImageDescription>")
	return b.String()
}

// qpiChannel returns the description of a fluorescence channel.
func qpiChannel(name, biomarker, rgb, exposure string) string {
	f := []string{"ImageType", "FullResolution", "Identifier", "Identifier-" + name, "Name", name}
	if biomarker != "" {
		f = append(f, "Biomarker", biomarker)
	}
	return qpiXML(append(f, "Color", rgb, "ExposureTime", exposure, "Objective", "20x", "ValidationCode", "4-"+name)...)
}

// qpiPage returns a page of a QPTIFF: 8-bit, tiled, of the samples,
// with Software, resolution (per centimetre) and description; reduced
// marks it NewSubfileType 1.
func qpiPage(w, h, samples int, reduced bool, d string) testPage {
	more := []func(*ifd.Builder){qpiSoftware, description(d), rational(tiff.TagXResolution, 20000, 1),
		rational(tiff.TagYResolution, 20000, 1), short(tiff.TagResolutionUnit, tiff.ResolutionUnitCentimeter)}
	if reduced {
		more = append(more, long(tiff.TagNewSubfileType, tiff.SubfileReducedImage))
	}
	return testPage{width: w, height: h, samples: samples, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionLZW),
		seed: w + samples, more: fields(more...)}
}

// qpiFluorescence returns the pages of a 3-channel fluorescence QPTIFF:
// the channels (64 x 48), the RGB thumbnail, two levels of 3 pages, the
// overview and the label.
func qpiFluorescence() []testPage {
	ch := []string{qpiChannel("DAPI", "", "0,0,255", "2500"), qpiChannel("Opal 520", "CD8", "0,255,0", "12000"),
		qpiChannel("Opal 690", "PD-L1", "255,0,0", "8000")}
	var pages []testPage
	for _, d := range ch {
		pages = append(pages, qpiPage(64, 48, 1, false, d))
	}
	pages = append(pages, qpiPage(16, 12, 3, false, qpiXML("ImageType", "Thumbnail")))
	for _, size := range [][2]int{{32, 24}, {16, 12}} {
		for _, d := range ch {
			pages = append(pages, qpiPage(size[0], size[1], 1, true, strings.Replace(d, "FullResolution", "ReducedResolution", 1)))
		}
	}
	return append(pages, qpiPage(30, 20, 3, false, qpiXML("ImageType", "Overview")), qpiPage(20, 10, 3, false, qpiXML("ImageType", "Label")))
}

// qpiMask returns a uint16 page of a fluorescence image's channels' size.
func qpiMask() testPage {
	p := qpiPage(64, 48, 1, false, qpiXML("ImageType", "Mask"))
	p.bits = 16
	return p
}

// unmarked returns the pages with NewSubfileType left unset, the levels
// told by their ImageType alone.
func unmarked(pages []testPage) []testPage {
	out := slices.Clone(pages)
	for i := range out {
		d := qpiXML("ImageType", "ReducedResolution")
		if i < 4 || i >= 10 {
			continue
		}
		out[i] = qpiPage(out[i].width, out[i].height, 1, false, d)
	}
	return out
}

// qpiBrightfield returns the pages of a brightfield QPTIFF: one RGB
// page, the thumbnail, two levels, the overview and the label.
func qpiBrightfield() []testPage {
	d := qpiXML("ImageType", "FullResolution", "Name", "RGB", "Objective", "40x")
	return []testPage{qpiPage(64, 48, 3, false, d), qpiPage(16, 12, 3, false, qpiXML("ImageType", "Thumbnail")),
		qpiPage(32, 24, 3, true, d), qpiPage(16, 12, 3, true, d),
		qpiPage(30, 20, 3, false, qpiXML("ImageType", "Overview")), qpiPage(20, 10, 3, false, qpiXML("ImageType", "Label"))}
}

// TestQPTIFFMapping: the pages of page 0's size are the image's channels
// along C; the page after them the thumbnail; groups of reduced pages its
// levels; the others images named by their ImageType.
func TestQPTIFFMapping(t *testing.T) {
	fl, bf := qpiFluorescence(), qpiBrightfield()
	untyped := []testPage{bf[0], bf[1], qpiPage(30, 20, 3, false, ""), qpiPage(24, 20, 3, false, qpiXML("Name", "x")), qpiPage(20, 10, 3, false, "")}
	// A level whose second page is of another size ends the levels.
	broken := append(slices.Clone(fl[:7]), qpiPage(32, 24, 1, true, ""), qpiPage(20, 24, 1, true, ""))
	tests := []struct {
		name   string
		pages  []testPage
		want   []string
		levels [][]int // of each plane of the image
	}{
		{"fluorescence", fl, []string{`"" 64x48 Z1 C3 T1 XYCZT uint8 x1: 0:* 1:* 2:*`, `"thumbnail" 16x12 Z1 C1 T1 XYCZT uint8 x3: 3:*`,
			`"macro" 30x20 Z1 C1 T1 XYCZT uint8 x3: 10:*`, `"label" 20x10 Z1 C1 T1 XYCZT uint8 x3: 11:*`},
			[][]int{{4, 7}, {5, 8}, {6, 9}}},
		{"brightfield", bf, []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"thumbnail" 16x12 Z1 C1 T1 XYCZT uint8 x3: 1:*`,
			`"macro" 30x20 Z1 C1 T1 XYCZT uint8 x3: 4:*`, `"label" 20x10 Z1 C1 T1 XYCZT uint8 x3: 5:*`}, [][]int{{2, 3}}},
		{"no levels, pages without ImageType: Bio-Formats' names", untyped, []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`,
			`"thumbnail" 16x12 Z1 C1 T1 XYCZT uint8 x3: 1:*`, `"macro" 30x20 Z1 C1 T1 XYCZT uint8 x3: 2:*`,
			`"page 3" 24x20 Z1 C1 T1 XYCZT uint8 x3: 3:*`, `"label" 20x10 Z1 C1 T1 XYCZT uint8 x3: 4:*`}, [][]int{nil}},
		{"a level of pages unlike each other", broken, []string{`"" 64x48 Z1 C3 T1 XYCZT uint8 x1: 0:* 1:* 2:*`,
			`"thumbnail" 16x12 Z1 C1 T1 XYCZT uint8 x3: 3:*`, `"macro" 32x24 Z1 C1 T1 XYCZT uint8 x1: 7:*`, `"label" 20x24 Z1 C1 T1 XYCZT uint8 x1: 8:*`},
			[][]int{{4}, {5}, {6}}},
		{"channels alone", fl[:3], []string{`"" 64x48 Z1 C3 T1 XYCZT uint8 x1: 0:* 1:* 2:*`}, [][]int{nil, nil, nil}},
		// A mask of the channels' size after them: an image of its own.
		{"a mask after the channels", slices.Insert(slices.Clone(fl), 3, qpiMask()), []string{`"" 64x48 Z1 C3 T1 XYCZT uint8 x1: 0:* 1:* 2:*`,
			`"Mask" 64x48 Z1 C1 T1 XYCZT uint16 x1: 3:*`, `"thumbnail" 16x12 Z1 C1 T1 XYCZT uint8 x3: 4:*`,
			`"macro" 30x20 Z1 C1 T1 XYCZT uint8 x3: 11:*`, `"label" 20x10 Z1 C1 T1 XYCZT uint8 x3: 12:*`},
			[][]int{{5, 8}, {6, 9}, {7, 10}}},
		{"no thumbnail", slices.Delete(slices.Clone(fl), 3, 4), []string{`"" 64x48 Z1 C3 T1 XYCZT uint8 x1: 0:* 1:* 2:*`,
			`"macro" 30x20 Z1 C1 T1 XYCZT uint8 x3: 9:*`, `"label" 20x10 Z1 C1 T1 XYCZT uint8 x3: 10:*`},
			[][]int{{3, 6}, {4, 7}, {5, 8}}},
		{"levels of ImageType alone", unmarked(fl), []string{`"" 64x48 Z1 C3 T1 XYCZT uint8 x1: 0:* 1:* 2:*`, `"thumbnail" 16x12 Z1 C1 T1 XYCZT uint8 x3: 3:*`,
			`"macro" 30x20 Z1 C1 T1 XYCZT uint8 x3: 10:*`, `"label" 20x10 Z1 C1 T1 XYCZT uint8 x3: 11:*`},
			[][]int{{4, 7}, {5, 8}, {6, 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, tt.pages...)
			require.NoError(t, err)
			assert.Equal(t, QPTIFF, f.Kind)
			assert.Equal(t, "QPTIFF", f.Kind.String())
			assert.Equal(t, tt.want, summary(f))
			var levels [][]int
			for _, pl := range f.Images[0].Planes {
				var l []int
				for _, p := range pl.Levels {
					l = append(l, slices.Index(f.TIFF.Pages, p))
				}
				levels = append(levels, l)
			}
			assert.Equal(t, tt.levels, levels)
			assert.Empty(t, f.Skipped)
		})
	}
}

// TestQPTIFFDetection: a QPTIFF is told by page 0's Software, as
// Bio-Formats and tifffile tell it; the same pages with other Software are
// a plain TIFF's (channels along T, levels as levels).
func TestQPTIFFDetection(t *testing.T) {
	pages := qpiFluorescence()
	f, _, err := mapPages(t, Options{}, pages...)
	require.NoError(t, err)
	assert.Equal(t, QPTIFF, f.Kind)
	pages[0].more = fields(ascii(tiff.TagSoftware, "PerkinElmer"), description(qpiChannel("DAPI", "", "0,0,255", "1")))
	f, _, err = mapPages(t, Options{}, pages...)
	require.NoError(t, err)
	assert.Equal(t, TIFF, f.Kind)
	assert.Equal(t, 3, f.Images[0].Spec.SizeT)
}

// TestQPTIFFMetadata: channels named by Biomarker (Name its fluor) or
// Name, coloured by Color, exposed ExposureTime µs; the objective's model
// and magnification; the pixel size; the other fields a map annotation,
// those alike once, the others by channel; the other images their own.
func TestQPTIFFMetadata(t *testing.T) {
	pages := qpiFluorescence()
	pages[0].more = fields(pages[0].more, redescribe(qpiXML("ImageType", "FullResolution", "Name", "DAPI", "Color", "0,0,255",
		"ExposureTime", "2500", "Objective", "20x", "InstrumentType", "Vectra Polaris", "CameraType", "Sony",
		"CameraSettings", "<Gain>2</Gain><Binning>1</Binning>", "SampleDescription", "tonsil", "Responsivity", `<Filter><Name>DAPI</Name></Filter>`,
		"ScanProfile", `<root><Version>1</Version></root>`)))
	f, _, err := mapPages(t, Options{}, pages...)
	require.NoError(t, err)
	require.Empty(t, f.Skipped)
	s := f.Images[0].Spec
	assert.Equal(t, []pyramid.Channel{
		{Name: "DAPI", Color: color.NRGBA{0, 0, 255, 255}, DetectorSettings: &pyramid.DetectorSettings{Gain: 2}},
		{Name: "CD8", Fluor: "Opal 520", Color: color.NRGBA{0, 255, 0, 255}},
		{Name: "PD-L1", Fluor: "Opal 690", Color: color.NRGBA{255, 0, 0, 255}}}, s.Channels)
	assert.Equal(t, []pyramid.Plane{{C: 0, ExposureTime: pyramid.Quantity{Value: 2500, Unit: "µs"}},
		{C: 1, ExposureTime: pyramid.Quantity{Value: 12000, Unit: "µs"}}, {C: 2, ExposureTime: pyramid.Quantity{Value: 8000, Unit: "µs"}}}, s.PlaneInfo)
	assert.Equal(t, &pyramid.Instrument{Microscope: &pyramid.Microscope{Product: pyramid.Product{Model: "Vectra Polaris"}},
		Detectors:  []pyramid.Detector{{Product: pyramid.Product{Model: "Sony"}}},
		Objectives: []pyramid.Objective{{Product: pyramid.Product{Model: "20x"}, NominalMagnification: 20}}}, s.Instrument)
	assert.Equal(t, [2]float64{0.5, 0.5}, [2]float64{s.PhysicalSizeX, s.PhysicalSizeY})
	assert.Equal(t, "tonsil", s.Description)
	assert.Equal(t, []pyramid.KeyValue{{Key: "DescriptionVersion", Value: "2"}, {Key: "AcquisitionSoftware", Value: "PhenoImager HT"},
		{Key: "ImageType", Value: "FullResolution"},
		{Key: "CameraSettings.Binning #1", Value: "1"},
		{Key: "Responsivity.Filter.Name #1", Value: "DAPI"},
		{Key: "ScanProfile #1", Value: `<root><Version>1</Version></root>`},
		{Key: "Identifier #2", Value: "Identifier-Opal 520"}, {Key: "Identifier #3", Value: "Identifier-Opal 690"},
		{Key: "ValidationCode #2", Value: "4-Opal 520"}, {Key: "ValidationCode #3", Value: "4-Opal 690"},
		{Key: "Software", Value: "PerkinElmer-QPI"}}, s.Annotations)
	for _, im := range f.Images[1:] {
		assert.Empty(t, im.Spec.Description, im.Spec.Name)
		assert.Nil(t, im.Spec.Instrument, im.Spec.Name)
	}
	assert.Equal(t, []pyramid.KeyValue{{Key: "DescriptionVersion", Value: "2"}, {Key: "AcquisitionSoftware", Value: "PhenoImager HT"},
		{Key: "ImageType", Value: "Overview"}}, f.Images[2].Spec.Annotations)

	// The writer takes it all: the OME-XML has the channels' names,
	// fluors, colours, the exposures and the objective.
	doc := omexmltest.Parse(t, []byte(mapOME(t, convert(t, f, pyramid.Options{TileSize: 16}, Options{})).OMEXML))
	var names []string
	for _, ch := range doc.Element("Image", "Pixels").Children("Channel") {
		names = append(names, ch.Attr("Name")+"/"+ch.Attr("Fluor")+"/"+ch.Attr("Color"))
	}
	assert.Equal(t, []string{"DAPI//65535", "CD8/Opal 520/16711935", "PD-L1/Opal 690/-16776961"}, names)
	assert.Equal(t, "12000", doc.Element("Image", "Pixels").Children("Plane")[1].Attr("ExposureTime"))
	assert.Equal(t, "20", doc.Element("Instrument", "Objective").Attr("NominalMagnification"))
}

// TestQPTIFFBadXML: a description that is not QPTIFF's XML (not XML, of
// another root, past the bounds) loses its image the fields, reported
// (ErrMetadata, and ErrNotCarried with SkipUnsupported); the pages are
// mapped as its structure says.
func TestQPTIFFBadXML(t *testing.T) {
	tests := []struct{ name, d, says string }{
		{"not XML", "DAPI 20x", "not its XML"},
		{"another root", "<Other><Name>DAPI</Name></Other>", "the root element is Other"},
		{"nested too deep", "<PerkinElmer-QPI-ImageDescription>" + strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100) + "</PerkinElmer-QPI-ImageDescription>",
			"nested more than 32 deep"},
		{"cut short", "<PerkinElmer-QPI-ImageDescription><Name>DAPI</Name>", "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pages := qpiFluorescence()
			pages[1].more = fields(pages[1].more, redescribe(tt.d))
			_, _, err := mapPages(t, Options{}, pages...)
			require.ErrorIs(t, err, ErrMetadata)
			assert.ErrorContains(t, err, "page 1 of the QPTIFF file")
			assert.ErrorContains(t, err, tt.says)
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, pages...)
			require.NoError(t, err)
			require.Len(t, f.Skipped, 1)
			assert.ErrorIs(t, f.Skipped[0], ErrNotCarried)
			assert.Same(t, f.Images[0], SkippedImage(f.Skipped[0]))
			assert.Len(t, f.Images, 4)
			assert.Equal(t, "", f.Images[0].Spec.Channels[1].Name)
			assert.Equal(t, "PD-L1", f.Images[0].Spec.Channels[2].Name)
		})
	}
}

// TestQPTIFFBounds: the fields past qpiMaxFields of a description are
// counted and reported, not kept.
func TestQPTIFFBounds(t *testing.T) {
	var many []string
	for range qpiMaxFields + 5 {
		many = append(many, "F", "v")
	}
	got, err := parseQPI(qpiXML(many...))
	require.NoError(t, err)
	assert.Len(t, got.fields, qpiMaxFields)
	assert.Equal(t, 7, got.lost, "the 2 fields before them, and 5 past")
	pages := qpiBrightfield()
	pages[0].more = fields(pages[0].more, redescribe(qpiXML(many...)))
	_, _, err = mapPages(t, Options{}, pages...)
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, "7 more fields than the 1024 kept")
}

// TestQPTIFFRefused: a channel page unlike page 0, or an image whose page
// cannot be read, is refused, or left out with SkipUnsupported, the
// other images kept.
func TestQPTIFFRefused(t *testing.T) {
	fl := qpiFluorescence()
	other := fl[1]
	other.bits = 16
	jp2 := fl[10]
	jp2.more = fields(jp2.more, short(tiff.TagCompression, tiff.CompressionJPEG2000AperioRGB))
	tests := []struct {
		name  string
		pages []testPage
		says  string
		kept  []string
	}{
		{"a channel of 16 bits", append([]testPage{fl[0], other}, fl[2:]...), "channel 1 of the image of the QPTIFF file (page 1)",
			[]string{`"thumbnail" 16x12 Z1 C1 T1 XYCZT uint8 x3: 3:*`, `"macro" 30x20 Z1 C1 T1 XYCZT uint8 x3: 10:*`, `"label" 20x10 Z1 C1 T1 XYCZT uint8 x3: 11:*`}},
		{"a JPEG 2000 overview", append(slices.Clone(fl[:10]), jp2, fl[11]), "the macro of the QPTIFF file (page 10)",
			[]string{`"" 64x48 Z1 C3 T1 XYCZT uint8 x1: 0:* 1:* 2:*`, `"thumbnail" 16x12 Z1 C1 T1 XYCZT uint8 x3: 3:*`, `"label" 20x10 Z1 C1 T1 XYCZT uint8 x3: 11:*`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := mapPages(t, Options{}, tt.pages...)
			require.ErrorIs(t, err, ErrUnsupported)
			assert.ErrorContains(t, err, tt.says)
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, tt.pages...)
			require.NoError(t, err)
			assert.Equal(t, tt.kept, summary(f))
			require.Len(t, f.Skipped, 1)
			assert.True(t, errors.Is(f.Skipped[0], ErrLeftOut))
		})
	}
}

// TestQPTIFFColor reads Color as Bio-Formats does, "R,G,B" (of "R,G,B,A"
// too, the first three); anything else is no colour (and stays in the
// annotations).
func TestQPTIFFColor(t *testing.T) {
	for v, want := range map[string]color.Color{"255,128,0": color.NRGBA{255, 128, 0, 255}, " 1, 2 ,3": color.NRGBA{1, 2, 3, 255},
		"256,0,0": nil, "1,2": nil, "red": nil, "1,2,3,4": color.NRGBA{1, 2, 3, 255}} {
		c, ok := qpiColor(v)
		assert.Equal(t, want, c, v)
		assert.Equal(t, want != nil, ok, v)
	}
	pages := qpiBrightfield()
	pages[0].more = fields(pages[0].more, redescribe(qpiXML("Name", "RGB", "Color", "white")))
	f, _, err := mapPages(t, Options{}, pages...)
	require.NoError(t, err)
	assert.Nil(t, f.Images[0].Spec.Channels[0].Color)
	assert.Contains(t, f.Images[0].Spec.Annotations, pyramid.KeyValue{Key: "Color", Value: "white"})
}

// redescribe replaces a page's ImageDescription.
func redescribe(d string) func(*ifd.Builder) {
	return func(b *ifd.Builder) { b.Remove(tiff.TagImageDescription); b.AddASCII(tiff.TagImageDescription, d) }
}

// TestQPTIFFManyChannels: the annotations of an image of many channels,
// each with fields of its own, are bounded by qpiMaxFields, the rest
// reported.
func TestQPTIFFManyChannels(t *testing.T) {
	var pages []testPage
	for c := range 40 {
		var f []string
		for k := range 30 {
			f = append(f, fmt.Sprintf("F%d_%d", c, k), "v")
		}
		pages = append(pages, qpiPage(4, 4, 1, false, qpiXML(f...)))
	}
	_, _, err := mapPages(t, Options{}, pages...)
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, "178 more fields than the 1024 kept", "40 x 30 + 2 alike, less 1024")
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, pages...)
	require.NoError(t, err)
	assert.Equal(t, 40, f.Images[0].Spec.SizeC)
	assert.Len(t, f.Images[0].Spec.Annotations, qpiMaxFields+1, "and the Software")
}

// TestQPTIFFPosition: XPosition and YPosition, in ResolutionUnit, are
// every plane's stage position in µm (page 0's for the image's, as
// Bio-Formats gives them), with the exposures; the other images have
// their own page's.
func TestQPTIFFPosition(t *testing.T) {
	pages := qpiFluorescence()
	pages[0].more = fields(pages[0].more, rational(tiff.TagXPosition, 3, 2), rational(tiff.TagYPosition, 1, 4))
	pages[10].more = fields(pages[10].more, rational(tiff.TagXPosition, 1, 1), rational(tiff.TagYPosition, 2, 1))
	pages[11].more = fields(pages[11].more, rational(tiff.TagXPosition, 1, 1)) // no YPosition: none
	f, _, err := mapPages(t, Options{}, pages...)
	require.NoError(t, err)
	x, y := pyramid.Quantity{Value: 15000, Unit: "µm"}, pyramid.Quantity{Value: 2500, Unit: "µm"}
	assert.Equal(t, []pyramid.Plane{{C: 0, ExposureTime: pyramid.Quantity{Value: 2500, Unit: "µs"}, PositionX: x, PositionY: y},
		{C: 1, ExposureTime: pyramid.Quantity{Value: 12000, Unit: "µs"}, PositionX: x, PositionY: y},
		{C: 2, ExposureTime: pyramid.Quantity{Value: 8000, Unit: "µs"}, PositionX: x, PositionY: y}}, f.Images[0].Spec.PlaneInfo)
	assert.Equal(t, []pyramid.Plane{{PositionX: pyramid.Quantity{Value: 10000, Unit: "µm"}, PositionY: pyramid.Quantity{Value: 20000, Unit: "µm"}}},
		f.Images[2].Spec.PlaneInfo)
	assert.Empty(t, f.Images[3].Spec.PlaneInfo)
	doc := omexmltest.Parse(t, []byte(mapOME(t, convert(t, f, pyramid.Options{TileSize: 16}, Options{})).OMEXML))
	assert.Equal(t, "15000", doc.Element("Image", "Pixels").Children("Plane")[2].Attr("PositionX"))
}

// TestQPTIFFRepeated: elements of the same name under one parent (a
// filter's Bands, Responsivity's Filters) are each kept, numbered from
// the second: none is lost to the first.
func TestQPTIFFRepeated(t *testing.T) {
	pages := qpiBrightfield()
	pages[0].more = fields(pages[0].more, redescribe(qpiXML("Name", "RGB",
		"ExcitationFilter", "<Bands><Band><Cuton>350</Cuton></Band><Band><Cuton>500</Cuton></Band></Bands>",
		"Responsivity", "<Filter><Name>DAPI</Name></Filter><Filter><Name>FITC</Name></Filter><Filter><Name>Cy5</Name></Filter>")))
	f, _, err := mapPages(t, Options{}, pages...)
	require.NoError(t, err)
	for _, kv := range []pyramid.KeyValue{{Key: "ExcitationFilter.Bands.Band.Cuton", Value: "350"}, {Key: "ExcitationFilter.Bands.Band[2].Cuton", Value: "500"},
		{Key: "Responsivity.Filter.Name", Value: "DAPI"}, {Key: "Responsivity.Filter[2].Name", Value: "FITC"}, {Key: "Responsivity.Filter[3].Name", Value: "Cy5"}} {
		assert.Contains(t, f.Images[0].Spec.Annotations, kv)
	}
}

// FuzzQPTIFFDescription maps a fluorescence QPTIFF (qpiFluorescence)
// whose page at gives an arbitrary description: a channel's, the
// thumbnail's, a level's or the label's in the seeds.
func FuzzQPTIFFDescription(f *testing.F) {
	pages := qpiFluorescence()
	f.Add(qpiChannel("DAPI", "", "0,0,255", "2500"), uint8(0), false)
	f.Add(qpiChannel("Opal 520", "CD8", "0,255,0,255", "1e400"), uint8(1), true)
	f.Add(qpiXML("ImageType", "Thumbnail"), uint8(3), false)
	f.Add(strings.Replace(qpiChannel("DAPI", "", "0,0,255", "2500"), "FullResolution", "ReducedResolution", 1), uint8(4), false)
	f.Add(qpiXML("ImageType", "Label"), uint8(11), false)
	f.Fuzz(func(t *testing.T, d string, at uint8, skip bool) {
		if strings.ContainsRune(d, 0) {
			return // ASCII fields end at NUL
		}
		ps := slices.Clone(pages)
		i := int(at) % len(ps)
		ps[i] = qpiPage(ps[i].width, ps[i].height, ps[i].samples, i >= 4 && i < 10, d)
		file, _ := fileOf(t, binary.LittleEndian, false, ps...)
		mapFuzzed(t, file, skip)
	})
}
