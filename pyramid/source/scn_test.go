package source

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// scnDocument is Leica SCN XML of the later namespace (ns "" for it) whose
// collection, 75 x 25 mm, holds the images given.
func scnDocument(ns string, images ...string) string {
	if ns == "" {
		ns = scnNamespace2010b
	}
	return `<?xml version="1.0" encoding="utf-8"?>` + "\n" + `<scn xmlns="` + ns + `">` +
		`<collection name="demo" uuid="c-1" sizeX="75000000" sizeY="25000000"><barcode>` + base64.StdEncoding.EncodeToString([]byte("SLIDE-0042")) + `</barcode>` +
		strings.Join(images, "") + `</collection></scn>`
}

// scnImageXML is an image element named name, of the dimensions given
// (each "r c z ifd WxH"), its view (nm) and scan settings, as Leica's
// scanner writes them.
func scnImageXML(name, view, objective, na, source string, dims ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<image name="%s" uuid="u-%s"><creationDate>2012-03-04T10:11:12.13Z</creationDate>`, name, name)
	b.WriteString(`<device model="Leica SCN400;Leica SCN" version="1.5"/><pixels sizeX="0" sizeY="0">`)
	for _, d := range dims {
		var r, c, z, ifd, w, h int
		if _, err := fmt.Sscanf(d, "%d %d %d %d %dx%d", &r, &c, &z, &ifd, &w, &h); err != nil {
			panic(err)
		}
		fmt.Fprintf(&b, `<dimension sizeX="%d" sizeY="%d" r="%d" c="%d" z="%d" ifd="%d"/>`, w, h, r, c, z, ifd)
	}
	b.WriteString(`</pixels>` + view)
	fmt.Fprintf(&b, `<scanSettings><objectiveSettings><objective>%s</objective></objectiveSettings>`, objective)
	fmt.Fprintf(&b, `<illuminationSettings><numericalAperture>%s</numericalAperture><illuminationSource>%s</illuminationSource></illuminationSettings></scanSettings></image>`, na, source)
	return b.String()
}

// scnMacroView covers the whole collection, as OpenSlide recognizes the
// macro image; scnMainView is a region of it, 32 µm x 24 µm.
const (
	scnMacroView = `<view sizeX="75000000" sizeY="25000000" offsetX="0" offsetY="0" spacingZ="0"/>`
	scnMainView  = `<view sizeX="32000" sizeY="24000" offsetX="30000000" offsetY="10000000" spacingZ="0"/>`
)

// scnBrightfield is a brightfield slide's XML: its macro image (page 0,
// 60 x 20) and its main image (pages 1 to 3, 64 x 48 and its halves).
var scnBrightfield = scnDocument("",
	scnImageXML("macro", scnMacroView, "0.5", "0.02", "brightfield", "0 0 0 0 60x20"),
	scnImageXML("main", scnMainView, "20", "0.4", "brightfield", "0 0 0 1 64x48", "1 0 0 2 32x24", "2 0 0 3 16x12"))

// scnBrightfieldPages are the pages scnBrightfield describes.
func scnBrightfieldPages() []testPage {
	return []testPage{svsPage(60, 20, true, description(scnBrightfield)), svsPage(64, 48, true), svsPage(32, 24, true), svsPage(16, 12, true)}
}

// scnGray is a gray tiled page of an SCN, of seed seed.
func scnGray(w, h, seed int) testPage {
	return testPage{width: w, height: h, samples: 1, bits: 16, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionDeflate), seed: seed}
}

// withDescription returns p described by d.
func withDescription(p testPage, d string) testPage {
	p.more = description(d)
	return p
}

// levelSizes returns the sizes of a plane's levels.
func levelSizes(t *testing.T, pl Plane) [][2]int {
	var out [][2]int
	for _, p := range pl.Levels {
		l, err := p.Layout()
		require.NoError(t, err)
		out = append(out, [2]int{l.Width, l.Height})
	}
	return out
}

func TestSCNMapping(t *testing.T) {
	fluo := scnDocument("", scnImageXML("main", scnMainView, "20", "0.4", "fluorescence",
		"0 0 0 0 32x24", "0 1 0 1 32x24", "1 0 0 2 16x12", "1 1 0 3 16x12"))
	// The dimensions in another order than the pages': the XML says
	// which page is which.
	shuffled := scnDocument("", scnImageXML("main", scnMainView, "20", "0.4", "fluorescence",
		"1 1 0 0 16x12", "0 1 0 3 32x24", "1 0 0 1 16x12", "0 0 0 2 32x24"))
	stack := scnDocument("", scnImageXML("", scnMainView, "40", "0.8", "brightfield",
		"0 0 0 0 32x24", "0 0 1 1 32x24", "0 0 2 2 32x24", "1 0 0 3 16x12", "1 0 1 4 16x12", "1 0 2 5 16x12"))
	unnamedMacro := scnDocument(scnNamespace2010a, scnImageXML("", scnMacroView, "0.5", "0.02", "brightfield", "0 0 0 0 60x20"),
		scnImageXML("", scnMainView, "20", "0.4", "brightfield", "0 0 0 1 64x48"))
	tests := []struct {
		name   string
		pages  []testPage
		want   []string
		levels [][][2]int // of each image's first plane
	}{
		{"brightfield: the macro, the main image and its levels", scnBrightfieldPages(),
			[]string{`"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"main" 64x48 Z1 C1 T1 XYCZT uint8 x3: 1:*`},
			[][][2]int{nil, {{32, 24}, {16, 12}}}},
		{"fluorescence: channels along C", []testPage{withDescription(scnGray(32, 24, 0), fluo), scnGray(32, 24, 1), scnGray(16, 12, 2), scnGray(16, 12, 3)},
			[]string{`"main" 32x24 Z1 C2 T1 XYCZT uint16 x1: 0:* 1:*`}, [][][2]int{{{16, 12}}}},
		{"the pages in another order than the dimensions", []testPage{withDescription(scnGray(16, 12, 0), shuffled), scnGray(16, 12, 1), scnGray(32, 24, 2), scnGray(32, 24, 3)},
			[]string{`"main" 32x24 Z1 C2 T1 XYCZT uint16 x1: 2:* 3:*`}, [][][2]int{{{16, 12}}}},
		{"focal planes along Z, unnamed", []testPage{withDescription(scnGray(32, 24, 0), stack), scnGray(32, 24, 1), scnGray(32, 24, 2), scnGray(16, 12, 3), scnGray(16, 12, 4), scnGray(16, 12, 5)},
			[]string{`"" 32x24 Z3 C1 T1 XYCZT uint16 x1: 0:* 1:* 2:*`}, [][][2]int{{{16, 12}}}},
		{"an unnamed macro, of the first namespace", []testPage{svsPage(60, 20, true, description(unnamedMacro)), svsPage(64, 48, true)},
			[]string{`"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 1:*`}, [][][2]int{nil, nil}},
		{"a resolution missing: the levels up to it", []testPage{svsPage(64, 48, true, description(scnDocument("", scnImageXML("main", scnMainView, "20", "0.4", "brightfield",
			"0 0 0 0 64x48", "1 0 0 1 32x24", "3 0 0 2 8x6"), scnImageXML("macro", scnMacroView, "0.5", "0.02", "brightfield", "0 0 0 3 60x20")))),
			svsPage(32, 24, true), svsPage(8, 6, true), svsPage(60, 20, true)},
			[]string{`"main" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 3:*`}, [][][2]int{{{32, 24}}, nil}},
		{"a page the XML does not name", append(scnBrightfieldPages(), svsPage(20, 30, false)),
			[]string{`"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"main" 64x48 Z1 C1 T1 XYCZT uint8 x3: 1:*`, `"" 20x30 Z1 C1 T1 XYCZT uint8 x3: 4:*`},
			[][][2]int{nil, {{32, 24}, {16, 12}}, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, tt.pages...)
			require.NoError(t, err)
			assert.Equal(t, SCN, f.Kind)
			assert.Equal(t, tt.want, summary(f))
			require.Len(t, f.Images, len(tt.levels))
			for i, im := range f.Images {
				for _, pl := range im.Planes {
					assert.Equal(t, tt.levels[i], levelSizes(t, pl), "image %d", i)
				}
			}
			assert.Empty(t, f.Skipped)
			mappedOK(t, f)
		})
	}
	// A description naming Leica's namespace that is not XML, or OME-XML
	// that does, is not an SCN's.
	f, _, err := mapPages(t, Options{}, svsPage(60, 20, true, description("exported from "+scnNamespace2010b)))
	require.NoError(t, err)
	assert.Equal(t, TIFF, f.Kind)
	f, _, err = mapPages(t, Options{}, withDescription(gray(8, 8), omeDocument(`xmlns:l="`+scnNamespace2010b+`"`, pixels(1, 1, 1, "XYZCT", `<TiffData/>`))))
	require.NoError(t, err)
	assert.Equal(t, OMETIFF, f.Kind)
}

// TestSCNPixels: the planes of a fluorescence SCN are its channels'
// pages, as the XML orders them.
func TestSCNPixels(t *testing.T) {
	doc := scnDocument("", scnImageXML("main", scnMainView, "20", "0.4", "fluorescence", "0 1 0 0 32x24", "0 0 0 1 32x24"))
	f, images, err := mapPages(t, Options{}, withDescription(scnGray(32, 24, 0), doc), scnGray(32, 24, 1))
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	require.Len(t, f.Images[0].Planes, 2)
	assert.Equal(t, images[1], planePixels(t, f.Images[0].Planes[0]), "channel 0 is page 1")
	assert.Equal(t, images[0], planePixels(t, f.Images[0].Planes[1]), "channel 1 is page 0")
}

func TestSCNMetadata(t *testing.T) {
	f, _, err := mapPages(t, Options{}, scnBrightfieldPages()...)
	require.NoError(t, err)
	require.Len(t, f.Images, 2)
	macro, main := f.Images[0].Spec, f.Images[1].Spec
	// 75 mm over 60 pixels; 32 µm over 64.
	assert.Equal(t, [4]any{1250.0, "µm", 1250.0, "µm"}, [4]any{macro.PhysicalSizeX, macro.PhysicalSizeXUnit, macro.PhysicalSizeY, macro.PhysicalSizeYUnit})
	assert.Equal(t, [4]any{0.5, "µm", 0.5, "µm"}, [4]any{main.PhysicalSizeX, main.PhysicalSizeXUnit, main.PhysicalSizeY, main.PhysicalSizeYUnit})
	assert.Zero(t, main.PhysicalSizeZ, "spacingZ 0: none")
	assert.True(t, time.Date(2012, 3, 4, 10, 11, 12, 130000000, time.UTC).Equal(main.AcquisitionDate), "%v", main.AcquisitionDate)
	assert.Equal(t, "Collection demo", main.Description)
	require.NotNil(t, main.Instrument)
	assert.Same(t, macro.Instrument, main.Instrument, "one instrument per device model")
	assert.Equal(t, []pyramid.Objective{{NominalMagnification: 0.5, CalibratedMagnification: 0.5, LensNA: 0.02},
		{NominalMagnification: 20, CalibratedMagnification: 20, LensNA: 0.4}}, main.Instrument.Objectives)
	assert.Equal(t, &pyramid.ObjectiveSettings{Objective: 0}, macro.ObjectiveSettings)
	assert.Equal(t, &pyramid.ObjectiveSettings{Objective: 1}, main.ObjectiveSettings)
	assert.Equal(t, []pyramid.Channel{{IlluminationType: pyramid.IlluminationTransmitted}}, main.Channels)
	assert.Equal(t, []pyramid.Plane{{PositionX: pyramid.Quantity{Value: 30000000, Unit: "reference frame"}, PositionY: pyramid.Quantity{Value: 10000000, Unit: "reference frame"}}}, main.PlaneInfo)
	assert.Equal(t, []pyramid.KeyValue{
		{Key: "collection.name", Value: "demo"}, {Key: "collection.uuid", Value: "c-1"}, {Key: "collection.sizeX", Value: "75000000"},
		{Key: "collection.sizeY", Value: "25000000"}, {Key: "collection.barcode", Value: "SLIDE-0042"},
		{Key: "uuid", Value: "u-main"}, {Key: "creationDate", Value: "2012-03-04T10:11:12.13Z"},
		{Key: "device.model", Value: "Leica SCN400;Leica SCN"}, {Key: "device.version", Value: "1.5"},
		{Key: "view.sizeX", Value: "32000"}, {Key: "view.sizeY", Value: "24000"}, {Key: "view.offsetX", Value: "30000000"},
		{Key: "view.offsetY", Value: "10000000"}, {Key: "view.spacingZ", Value: "0"},
		{Key: "scanSettings.illuminationSettings.illuminationSource", Value: "brightfield"},
	}, main.Annotations, "every scalar field but the name, objective and aperture mapped")

	// A z-stack's step, a fluorescence image's channels, a barcode of the
	// first namespace (an attribute, kept as written), an objective that
	// is no number (kept as an annotation) and a date without a zone.
	doc := strings.Replace(scnDocument(scnNamespace2010a, scnImageXML("z", strings.Replace(scnMainView, `spacingZ="0"`, `spacingZ="1500"`, 1), "x20", "", "fluorescence",
		"0 0 0 0 32x24", "0 1 0 1 32x24", "0 0 1 2 32x24", "0 1 1 3 32x24")), `name="demo"`, `name="demo" barcode="AB12"`, 1)
	doc = strings.Replace(doc, "10:11:12.13Z", "10:11:12", 1)
	f, _, err = mapPages(t, Options{}, withDescription(scnGray(32, 24, 0), doc), scnGray(32, 24, 1), scnGray(32, 24, 2), scnGray(32, 24, 3))
	require.NoError(t, err)
	s := f.Images[0].Spec
	assert.Equal(t, `"z" 32x24 Z2 C2 T1 XYCZT uint16 x1: 0:* 1:* 2:* 3:*`, summary(f)[0])
	assert.Equal(t, [2]any{1.5, "µm"}, [2]any{s.PhysicalSizeZ, s.PhysicalSizeZUnit})
	assert.Nil(t, s.Instrument)
	assert.Equal(t, time.Date(2012, 3, 4, 10, 11, 12, 0, pyramid.NoZone), s.AcquisitionDate)
	assert.Equal(t, []pyramid.Channel{{IlluminationType: pyramid.IlluminationOther}, {IlluminationType: pyramid.IlluminationOther}}, s.Channels)
	assert.Len(t, s.PlaneInfo, 4)
	assert.Contains(t, s.Annotations, pyramid.KeyValue{Key: "collection.barcode", Value: "AB12"})
	assert.Contains(t, s.Annotations, pyramid.KeyValue{Key: "scanSettings.objectiveSettings.objective", Value: "x20"})
	mappedOK(t, f)
}

// TestSCNBadXML: an SCN's XML that does not parse, or does not fit the
// pages, is ErrMetadata; with SkipUnsupported the file is read as a plain
// TIFF, the error listed.
func TestSCNBadXML(t *testing.T) {
	main := func(dims ...string) string {
		return scnDocument("", scnImageXML("main", scnMainView, "20", "0.4", "brightfield", dims...))
	}
	deep := scnDocument("", strings.Repeat("<a>", 40)+strings.Repeat("</a>", 40))
	tests := []struct{ name, xml, says string }{
		{"not well-formed", strings.TrimSuffix(main("0 0 0 1 64x48"), "</scn>"), "unexpected EOF"},
		{"another root", `<other xmlns="` + scnNamespace2010b + `"/>`, "not Leica's scn"},
		{"another namespace", `<scn xmlns="urn:x"><collection note="` + scnNamespace2010b + `"/></scn>`, "not Leica's scn"},
		{"no image", scnDocument(""), "no image"},
		{"two collections", strings.Replace(main("0 0 0 1 64x48"), "</collection>", "</collection><collection/>", 1), "more than one collection"},
		{"a page the file lacks", main("0 0 0 9 64x48"), "of a file of 2 pages"},
		{"a page named twice", main("0 0 0 1 64x48", "1 0 0 1 64x48"), "named by two"},
		{"a size the page does not have", main("0 0 0 1 64x40"), "page 1 is 64 x 48"},
		{"a channel missing at resolution 0", main("0 1 0 1 64x48", "1 1 0 0 60x20"), "no page for channel 0"},
		{"no ifd", strings.Replace(main("0 0 0 1 64x48"), `ifd="1"`, "", 1), "without its ifd"},
		{"a view that is no number", strings.Replace(main("0 0 0 1 64x48"), `sizeX="32000"`, `sizeX="3e4"`, 1), "not an integer"},
		{"two pixels elements", strings.Replace(main("0 0 0 1 64x48"), `</pixels>`, `</pixels><pixels/>`, 1), "2 pixels elements"},
		{"nested too deep", deep, "nested more than"},
		{"a second root", main("0 0 0 1 64x48") + `<scn xmlns="` + scnNamespace2010b + `"/>`, "a second root"},
		{"another encoding", strings.Replace(main("0 0 0 1 64x48"), "utf-8", "utf-16", 1), "utf-16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pages := []testPage{svsPage(60, 20, true, description(tt.xml)), svsPage(64, 48, true)}
			_, _, err := mapPages(t, Options{}, pages...)
			require.ErrorIs(t, err, ErrMetadata)
			assert.ErrorContains(t, err, tt.says)
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, pages...)
			require.NoError(t, err)
			assert.Equal(t, TIFF, f.Kind)
			assert.Equal(t, []string{`"" 60x20 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 1:*`}, summary(f))
			require.Len(t, f.Skipped, 1)
			assert.ErrorIs(t, f.Skipped[0], ErrMetadata)
			assert.ErrorIs(t, f.Skipped[0], ErrNotCarried)
			assert.ErrorContains(t, f.Skipped[0], "read as a plain TIFF")
		})
	}
}

// TestSCNUnnamedPages: pages no dimension names are read as a plain
// TIFF's, and what is not read of them is said: a page marked reduced
// following none of them (a note), a page that cannot be read (an entry
// of File.Skipped naming them).
func TestSCNUnnamedPages(t *testing.T) {
	pages := append(scnBrightfieldPages(), svsPage(8, 6, true, long(tiff.TagNewSubfileType, tiff.SubfileReducedImage)),
		svsPage(5, 5, false, short(tiff.TagPhotometricInterpretation, tiff.PhotometricSeparated+10)), svsPage(20, 30, false))
	_, _, err := mapPages(t, Options{}, pages...)
	require.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "the pages of the SCN file its XML does not name ([4 5 6]), numbered among them: page 1:")
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, pages...)
	require.NoError(t, err)
	assert.Equal(t, SCN, f.Kind)
	assert.Equal(t, []string{`"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"main" 64x48 Z1 C1 T1 XYCZT uint8 x3: 1:*`, `"" 20x30 Z1 C1 T1 XYCZT uint8 x3: 6:*`}, summary(f))
	assert.Equal(t, []string{"pages [4 5 6] of the SCN file are named by no dimension of its XML: they are read as a plain TIFF's"}, f.Images[2].Notes)
	assert.Empty(t, f.Images[1].Notes)
	assert.Equal(t, []string{"page 4 of the SCN file, named by no dimension of its XML and marked reduced, is a level of no page read: it is not read"}, f.Notes)
	require.Len(t, f.Skipped, 1)
	assert.ErrorIs(t, f.Skipped[0], ErrLeftOut)
	assert.ErrorContains(t, f.Skipped[0], "does not name ([4 5 6])")
}

// TestSCNUnreadableImage: an image whose pages cannot be read is left out
// with SkipUnsupported, the others kept; so is one whose planes are of two
// layouts.
func TestSCNUnreadableImage(t *testing.T) {
	doc := scnDocument("", scnImageXML("macro", scnMacroView, "0.5", "0.02", "brightfield", "0 0 0 0 60x20"),
		scnImageXML("main", scnMainView, "20", "0.4", "fluorescence", "0 0 0 1 32x24", "0 1 0 2 32x24"))
	pages := []testPage{svsPage(60, 20, true, description(doc)), scnGray(32, 24, 1), scnGray(32, 24, 2)}
	pages[2].bits = 8
	_, _, err := mapPages(t, Options{}, pages...)
	require.ErrorIs(t, err, ErrMetadata)
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, pages...)
	require.NoError(t, err)
	assert.Equal(t, SCN, f.Kind)
	assert.Equal(t, []string{`"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 0:*`}, summary(f))
	require.Len(t, f.Skipped, 1)
	assert.ErrorIs(t, f.Skipped[0], ErrLeftOut)
	assert.ErrorContains(t, f.Skipped[0], `"main"`)

	pages[2].bits, pages[2].more = 16, short(tiff.TagPhotometricInterpretation, tiff.PhotometricPalette)
	_, _, err = mapPages(t, Options{}, pages...)
	require.ErrorIs(t, err, ErrUnsupported)
}

// TestSCNFieldsBounded: an image's fields past scnMaxFields are not kept,
// and said so.
func TestSCNFieldsBounded(t *testing.T) {
	many := strings.Repeat(`<note>x</note>`, scnMaxFields+5)
	doc := strings.Replace(scnBrightfield, `<creationDate>`, many+`<creationDate>`, 1)
	pages := scnBrightfieldPages()
	pages[0].more = description(doc)
	_, _, err := mapPages(t, Options{}, pages...)
	require.ErrorIs(t, err, ErrMetadata)
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, pages...)
	require.NoError(t, err)
	assert.Len(t, f.Images[0].Spec.Annotations, 5+scnMaxFields)
	require.Len(t, f.Skipped, 1)
	assert.Same(t, f.Images[0], SkippedImage(f.Skipped[0]))
	assert.True(t, errors.Is(f.Skipped[0], ErrNotCarried))
}

// TestSCNCollectionFieldsBounded: the collection's fields, which every
// image takes, are bounded as an image's are, and said so once: a file
// of many images and fields does not cost their product.
func TestSCNCollectionFieldsBounded(t *testing.T) {
	many := strings.Repeat(`<n>x</n>`, scnMaxFields+5)
	doc := strings.Replace(scnBrightfield, `<barcode>`, many+`<barcode>`, 1)
	pages := scnBrightfieldPages()
	pages[0].more = description(doc)
	_, _, err := mapPages(t, Options{}, pages...)
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, "the collection of the SCN file has 10 more fields than the 1024 kept as annotations")
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, pages...)
	require.NoError(t, err)
	require.Len(t, f.Images, 2)
	for _, im := range f.Images {
		assert.LessOrEqual(t, len(im.Spec.Annotations), 2*scnMaxFields)
	}
	require.Len(t, f.Skipped, 1, "said once")
}

// TestSCNResolutionGap: a resolution after a missing one is no level of
// the pyramid, and a note says so.
func TestSCNResolutionGap(t *testing.T) {
	doc := scnDocument("", scnImageXML("macro", scnMacroView, "0.5", "0.02", "brightfield", "0 0 0 0 60x20"),
		scnImageXML("main", scnMainView, "20", "0.4", "brightfield", "0 0 0 1 64x48", "2 0 0 2 16x12"))
	f, _, err := mapPages(t, Options{}, svsPage(60, 20, true, description(doc)), svsPage(64, 48, true), svsPage(16, 12, true))
	require.NoError(t, err)
	require.Len(t, f.Images, 2)
	assert.Empty(t, f.Images[1].Planes[0].Levels)
	assert.Equal(t, []string{"its resolutions of channel 0, focal plane 0, past resolution 0 are not read: resolution 1 is missing"}, f.Images[1].Notes)
}

// FuzzSCNDescription maps SCN files of a macro, a main image and its
// level whose XML is arbitrary, seeded with Leica's.
func FuzzSCNDescription(f *testing.F) {
	fuzzDescription(f, []string{scnBrightfield, scnDocument(scnNamespace2010a, scnImageXML("", scnMainView, "x", "", "", "0 0 0 1 64x48", "0 1 0 2 32x24"))},
		scnBrightfieldPages()...)
}
