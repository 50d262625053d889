package source

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/omexmltest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// svsHead is the description of an SVS slide's image, as Aperio's
// library writes it (CMU-1.svs's, shortened).
const svsHead = "Aperio Image Library v10.0.51\r\n64x48 [0,100 64x48] (16x16) JPEG/RGB Q=30|AppMag = 20|StripeWidth = 2040|ScanScope ID = CPAPERIOCS|" +
	"Filename = CMU-1|Date = 12/29/09|Time = 09:59:15|Time Zone = GMT-05:00|User = b414003d|MPP = 0.4990|Left = 25.691574|Top = 23.449873"

// svsPage is an RGB page of an SVS file: tiled when tile, else stripped.
func svsPage(w, h int, tile bool, more ...func(*ifd.Builder)) testPage {
	p := testPage{width: w, height: h, samples: 3, bits: 8, codec: mustCodec(tiff.CompressionLZW), more: fields(more...)}
	if tile {
		p.tileW, p.tileH = 16, 16
	}
	return p
}

func TestSVSMapping(t *testing.T) {
	tests := []struct {
		name  string
		pages []testPage
		want  []string
	}{
		{"Aperio's layout", []testPage{
			svsPage(64, 48, true, description(svsHead)),
			svsPage(32, 24, false, description("Aperio Image Library v10.0.51\r\n64x48 -> 32x24 - |AppMag = 20|MPP = 0.4990")),
			svsPage(16, 12, true, description("Aperio Image Library v10.0.51\r\n64x48 -> 16x12 - |AppMag = 20")),
			svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\nlabel 20x30"), long(tiff.TagNewSubfileType, 1)),
			svsPage(60, 20, false, description("Aperio Image Library v10.0.51\r\nmacro 60x20"), long(tiff.TagNewSubfileType, 9)),
		}, []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 3:*`, `"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 4:*`}},
		{"the label and macro without descriptions, levels marked reduced", []testPage{
			svsPage(64, 48, true, description(svsHead)),
			svsPage(32, 24, true, long(tiff.TagNewSubfileType, tiff.SubfileReducedImage)),
			svsPage(16, 12, true, long(tiff.TagNewSubfileType, tiff.SubfileReducedImage)),
			svsPage(20, 30, false),
			svsPage(60, 20, false),
		}, []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 3:*`, `"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 4:*`}},
		// Bio-Formats' SVSReader takes a page whose description names
		// neither for the label, then the macro, by its NewSubfileType.
		{"the label and macro marked only by NewSubfileType", []testPage{
			svsPage(64, 48, true, description(svsHead)),
			svsPage(32, 24, true, description("Aperio Image Library v10.0.51\r\n64x48 -> 32x24 - |AppMag = 20")),
			svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\n20x30"), long(tiff.TagNewSubfileType, 1)),
			svsPage(60, 20, false, description("Aperio Image Library v10.0.51\r\n60x20"), long(tiff.TagNewSubfileType, 9)),
			svsPage(5, 60, false, description("Aperio Image Library v10.0.51\r\n5x60"), long(tiff.TagNewSubfileType, 1)),
		}, []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 2:*`, `"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 3:*`,
			`"page 4" 5x60 Z1 C1 T1 XYCZT uint8 x3: 4:*`}},
		// A Z stack: the focal planes in order of their OffsetZ, their
		// levels (pages of their own) left out.
		{"focal planes", []testPage{
			svsPage(64, 48, true, description(svsHead+"|TotalDepth = 3")),
			svsPage(16, 11, false, description("Aperio Image Library v10.0.51\r\n64x48 -> 16x11 - |AppMag = 20")),
			svsPage(64, 48, true, description(svsHead+"|OffsetZ = 2")),
			svsPage(32, 24, true, description("Aperio Image Library v10.0.51\r\n64x48 -> 32x24 - |OffsetZ = 2")),
			svsPage(64, 48, true, description(svsHead+"|OffsetZ = 1")),
			svsPage(32, 24, true, description("Aperio Image Library v10.0.51\r\n64x48 -> 32x24 - |OffsetZ = 1")),
			svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\nlabel 20x30"), long(tiff.TagNewSubfileType, 1)),
		}, []string{`"" 64x48 Z3 C1 T1 XYCZT uint8 x3: 0:* 4:* 2:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 6:*`}},
		{"the macro before the label", []testPage{
			svsPage(64, 48, true, description(svsHead)),
			svsPage(60, 20, false, description("Aperio Image Library v10.0.51\r\nmacro 60x20")),
			svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\nlabel 20x30")),
		}, []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 1:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 2:*`}},
		{"another page", []testPage{
			svsPage(64, 48, true, description(svsHead)),
			svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\nlabel 20x30")),
			svsPage(60, 20, false, description("Aperio Image Library v10.0.51\r\nmacro 60x20")),
			svsPage(5, 60, false, description("Aperio Image Library v10.0.51\r\nbarcode")),
		}, []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 1:*`, `"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 2:*`,
			`"page 3" 5x60 Z1 C1 T1 XYCZT uint8 x3: 3:*`}},
		{"one page", []testPage{svsPage(64, 48, true, description(svsHead))}, []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`}},
		// The GT450's descriptions, as tifffile and OpenSlide recognize
		// them ("Aperio "): its levels, thumbnail, label and macro.
		{"a GT450's", []testPage{
			svsPage(64, 48, true, description("Aperio Leica Biosystems GT450 v1.0.1\n64x48 [0,0,64x48] (16x16) JPEG/YCC Q=91|AppMag = 40|MPP = 0.263")),
			svsPage(16, 12, false, description("Aperio Leica Biosystems GT450 v1.0.1\n64x48 -> 16x12 - |AppMag = 40|MPP = 0.263")),
			svsPage(32, 24, true, description("Aperio Leica Biosystems GT450 v1.0.1\n64x48 -> 32x24 - |AppMag = 40|MPP = 0.263")),
			svsPage(20, 30, false, description("Aperio Leica Biosystems GT450 v1.0.1\nlabel 20x30"), long(tiff.TagNewSubfileType, 1)),
			svsPage(60, 20, false, description("Aperio Leica Biosystems GT450 v1.0.1\nmacro 60x20"), long(tiff.TagNewSubfileType, 9)),
		}, []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 3:*`, `"macro" 60x20 Z1 C1 T1 XYCZT uint8 x3: 4:*`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, tt.pages...)
			require.NoError(t, err)
			assert.Equal(t, SVS, f.Kind)
			assert.Equal(t, tt.want, summary(f))
		})
	}
	// Another export naming Aperio, without the scan's fields: a plain
	// TIFF, its pages of one shape planes along T.
	f, _, err := mapPages(t, Options{}, svsPage(64, 48, true, description("Aperio Versa export")), svsPage(64, 48, true), svsPage(64, 48, true))
	require.NoError(t, err)
	assert.Equal(t, TIFF, f.Kind)
	assert.Equal(t, []string{`"" 64x48 Z1 C1 T3 XYCZT uint8 x3: 0:* 1:* 2:*`}, summary(f))
}

// TestSVSLevels takes for the image's levels the tiled reduced pages that
// make one pyramid: a thumbnail, stripped or tiled, is left out even when
// its size divides page 0's (384 / 24 = 16, 256 / 24 rounds up to 11).
func TestSVSLevels(t *testing.T) {
	base := svsPage(384, 256, true, description(svsHead))
	level := func(w, h int) testPage {
		return svsPage(w, h, true, description("Aperio Image Library v10.0.51\r\n384x256 -> reduced"))
	}
	tests := []struct {
		name  string
		pages []testPage
		want  [][2]int
	}{
		{"a stripped thumbnail", []testPage{base, svsPage(16, 11, false), level(96, 64), level(24, 16)}, [][2]int{{96, 64}, {24, 16}}},
		{"a tiled thumbnail", []testPage{base, level(16, 11), level(96, 64), level(24, 16)}, [][2]int{{96, 64}, {24, 16}}},
		{"a tiled thumbnail, one level", []testPage{base, level(16, 11), level(96, 64)}, [][2]int{{96, 64}}},
		{"factor 2, as libvips writes", []testPage{base, level(192, 128), level(96, 64), level(48, 32)}, [][2]int{{192, 128}, {96, 64}, {48, 32}}},
		{"a page of the proportions, but no integer factor", []testPage{base, level(150, 100)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, tt.pages...)
			require.NoError(t, err)
			require.NotEmpty(t, f.Images)
			var got [][2]int
			for _, p := range f.Images[0].Planes[0].Levels {
				l, err := p.Layout()
				require.NoError(t, err)
				got = append(got, [2]int{l.Width, l.Height})
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSVSMetadata(t *testing.T) {
	f, _, err := mapPages(t, Options{}, svsPage(64, 48, true, description(svsHead), rational(tiff.TagXResolution, 7, 1)),
		svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\nlabel 20x30"), rational(tiff.TagXResolution, 7, 1)))
	require.NoError(t, err)
	s := f.Images[0].Spec
	assert.Equal(t, "Aperio Image Library v10.0.51\n64x48 [0,100 64x48] (16x16) JPEG/RGB Q=30", s.Description)
	assert.Equal(t, [4]any{0.499, "µm", 0.499, "µm"}, [4]any{s.PhysicalSizeX, s.PhysicalSizeXUnit, s.PhysicalSizeY, s.PhysicalSizeYUnit})
	assert.True(t, time.Date(2009, 12, 29, 14, 59, 15, 0, time.UTC).Equal(s.AcquisitionDate), "%v", s.AcquisitionDate)
	assert.Equal(t, []pyramid.KeyValue{{Key: "StripeWidth", Value: "2040"}, {Key: "ScanScope ID", Value: "CPAPERIOCS"},
		{Key: "Filename", Value: "CMU-1"}, {Key: "Date", Value: "12/29/09"}, {Key: "Time", Value: "09:59:15"}, {Key: "Time Zone", Value: "GMT-05:00"},
		{Key: "User", Value: "b414003d"}, {Key: "MPP", Value: "0.4990"}, {Key: "Left", Value: "25.691574"}, {Key: "Top", Value: "23.449873"}}, s.Annotations,
		"every field but AppMag")
	assert.Equal(t, &pyramid.Instrument{Objectives: []pyramid.Objective{{NominalMagnification: 20}}}, s.Instrument)
	assert.Nil(t, s.OME)
	mm := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "mm"} }
	assert.Equal(t, []pyramid.Plane{{PositionX: mm(25.691574), PositionY: mm(23.449873)}}, s.PlaneInfo, "Left and Top, as Bio-Formats maps them")
	assert.Empty(t, s.Channels, "no wavelength or dye")
	label := f.Images[1].Spec
	assert.Equal(t, "Aperio Image Library v10.0.51\nlabel 20x30", label.Description)
	assert.Zero(t, label.PhysicalSizeX, "the label's pixels are not the slide's")
	assert.Empty(t, label.Annotations)
	assert.Nil(t, label.Instrument, "the label was not scanned with the objective")
	assert.Empty(t, label.PlaneInfo)

	// A fluorescence scan's channel, and a Z stack's positions.
	fl := "Aperio Image Library v12.0.15\r\n64x48 (16x16) JPEG/RGB Q=30|AppMag = 20|MPP = 0.5|Left = 1,5|Top = -2" +
		"|Emission Wavelength = 520|Excitation Wavelength = 495|Dye = FITC|Exposure Time = 100|DisplayColor = 16711680"
	gray := func(d string) testPage {
		return testPage{width: 64, height: 48, samples: 1, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionLZW), more: fields(description(d))}
	}
	f, _, err = mapPages(t, Options{}, gray(fl+"|OffsetZ = 0.5"), gray(fl+"|OffsetZ = -0.5"))
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	s = f.Images[0].Spec
	nm := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "nm"} }
	assert.Equal(t, []pyramid.Channel{{Name: "FITC", EmissionWavelength: nm(520), ExcitationWavelength: nm(495)}}, s.Channels)
	rf := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "reference frame"} }
	assert.Equal(t, []pyramid.Plane{{Z: 0, PositionX: mm(1.5), PositionY: mm(-2), PositionZ: rf(-0.5)}, {Z: 1, PositionX: mm(1.5), PositionY: mm(-2), PositionZ: rf(0.5)}},
		s.PlaneInfo)
	assert.Same(t, f.TIFF.Pages[1], f.Images[0].Planes[0].Page, "the lower offset first")
	assert.Contains(t, s.Annotations, pyramid.KeyValue{Key: "Dye", Value: "FITC"}, "mapped fields stay among the annotations")
}

// TestSVSFieldsBound: the fields of a description past maxAnnotations are
// refused (ErrMetadata), or with SkipUnsupported left out and reported,
// the image kept with the first maxAnnotations.
func TestSVSFieldsBound(t *testing.T) {
	const head = "Aperio Image Library v12.0.5\r\n64x48 [0,0 64x48] (240x240) JPEG/RGB Q=70"
	fields := strings.Repeat("|k = v", maxAnnotations+3)
	_, _, err := mapPages(t, Options{}, svsPage(64, 48, true, description(head+fields)))
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, "the Aperio description has 3 more fields than the 1024 kept as annotations")
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, svsPage(64, 48, true, description(head+fields)))
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	assert.Len(t, f.Images[0].Spec.Annotations, maxAnnotations)
	require.Len(t, f.Skipped, 1)
	assert.ErrorIs(t, f.Skipped[0], ErrMetadata)
	_, _, err = mapPages(t, Options{}, svsPage(64, 48, true, description(head+strings.Repeat("|k = v", maxAnnotations))))
	assert.NoError(t, err, "maxAnnotations fields")
}

// TestSVSFieldsAsOpenSlide: MPP with a decimal comma (a scanner in a
// European locale) is a pixel size, and a field given twice is its last
// value, as OpenSlide reads them; both stay in the annotation.
func TestSVSFieldsAsOpenSlide(t *testing.T) {
	const head = "Aperio Image Library v12.0.5\r\n64x48 [0,0 64x48] (240x240) JPEG/RGB Q=70"
	tests := []struct {
		fields string
		mpp    float64
		mag    float64
	}{
		{"|MPP = 0,2500", 0.25, 0},
		{"|MPP = 1,000.5", 0, 0}, // no number
		{"|MPP = 0.499|AppMag = 20\n|MPP = 0.25|AppMag = 40", 0.25, 40},
	}
	for _, tt := range tests {
		f, _, err := mapPages(t, Options{}, svsPage(64, 48, true, description(head+tt.fields)))
		require.NoError(t, err)
		s := f.Images[0].Spec
		assert.Equal(t, tt.mpp, s.PhysicalSizeX, tt.fields)
		if tt.mag > 0 {
			require.NotNil(t, s.Instrument, tt.fields)
			assert.Equal(t, tt.mag, s.Instrument.Objectives[0].NominalMagnification, tt.fields)
			assert.Contains(t, s.Annotations, pyramid.KeyValue{Key: "AppMag", Value: "20"}, "the other AppMag stays a field")
			assert.NotContains(t, s.Annotations, pyramid.KeyValue{Key: "AppMag", Value: "40"})
		}
	}
}

// TestSVSMagnification: AppMag, a positive number, is the nominal
// magnification of the objective, which the output's OME-XML has, linked
// to the image; another AppMag stays a field of the map annotation.
func TestSVSMagnification(t *testing.T) {
	const head = "Aperio Image Library v12.0.5\r\n64x48 [0,0 64x48] (240x240) JPEG/RGB Q=70|MPP = 0.5"
	tests := []struct {
		name   string
		fields string
		mag    float64 // 0: no instrument
		kept   []string
	}{
		{"AppMag 20", "|AppMag = 20", 20, []string{"MPP"}},
		{"AppMag 40, between other fields", "|StripeWidth = 2040|AppMag = 40|User = me", 40, []string{"MPP", "StripeWidth", "User"}},
		{"AppMag 2.5", "|AppMag = 2.5", 2.5, []string{"MPP"}},
		{"no AppMag", "", 0, []string{"MPP"}},
		{"AppMag not a number", "|AppMag = 20x", 0, []string{"MPP", "AppMag"}},
		{"AppMag 0", "|AppMag = 0", 0, []string{"MPP", "AppMag"}},
		{"AppMag infinite", "|AppMag = +Inf", 0, []string{"MPP", "AppMag"}},
		{"AppMag past a float's range", "|AppMag = 1e39", 0, []string{"MPP", "AppMag"}},
		{"AppMag 0 as a float", "|AppMag = 1e-50", 0, []string{"MPP", "AppMag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, svsPage(64, 48, true, description(head+tt.fields)))
			require.NoError(t, err)
			s := f.Images[0].Spec
			var keys []string
			for _, kv := range s.Annotations {
				keys = append(keys, kv.Key)
			}
			assert.Equal(t, tt.kept, keys)
			doc := omexmltest.Parse(t, []byte(mapOME(t, convert(t, f, pyramid.Options{TileSize: 16}, Options{})).OMEXML))
			if tt.mag == 0 {
				assert.Nil(t, s.Instrument)
				assert.Nil(t, doc.Element("Instrument"))
				return
			}
			assert.Equal(t, &pyramid.Instrument{Objectives: []pyramid.Objective{{NominalMagnification: tt.mag}}}, s.Instrument)
			objective := doc.Element("Instrument", "Objective")
			require.NotNil(t, objective)
			assert.Equal(t, strconv.FormatFloat(tt.mag, 'g', -1, 64), objective.Attr("NominalMagnification"))
			assert.Equal(t, doc.Element("Instrument").Attr("ID"), doc.Element("Image", "InstrumentRef").Attr("ID"))
			assert.Equal(t, objective.Attr("ID"), doc.Element("Image", "ObjectiveSettings").Attr("ID"))
		})
	}
}

func TestAperioTime(t *testing.T) {
	tests := []struct {
		date, clock, zone string
		want              time.Time
		ok                bool
	}{
		{"12/29/09", "09:59:15", "", time.Date(2009, 12, 29, 9, 59, 15, 0, pyramid.NoZone), true},
		{"01/02/21", "23:00:00", "GMT+0100", time.Date(2021, 1, 2, 22, 0, 0, 0, time.UTC), true},
		{"01/02/21", "23:00:00", "GMT+01", time.Date(2021, 1, 2, 22, 0, 0, 0, time.UTC), true},
		{"01/02/21", "23:00:00", "somewhere", time.Date(2021, 1, 2, 23, 0, 0, 0, pyramid.NoZone), true},
		{"2021-01-02", "23:00:00", "", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := aperioTime(tt.date, tt.clock, tt.zone)
		assert.Equal(t, tt.ok, ok, "%+v", tt)
		assert.True(t, tt.want.Equal(got), "%+v: %v", tt, got)
		assert.Equal(t, tt.want.Location() == pyramid.NoZone, got.Location() == pyramid.NoZone, "%+v: a zone is known or not", tt)
	}
}

func TestSVSRefused(t *testing.T) {
	label := svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\nlabel 20x30"))
	tests := []struct {
		name  string
		pages []testPage
		says  string
		kept  []string
		whole bool // an image left out (ErrLeftOut), not pages of one
	}{
		{"JPEG 2000", []testPage{svsPage(64, 48, true, description(svsHead), short(tiff.TagCompression, tiff.CompressionJPEG2000AperioRGB)), label},
			"the image of the SVS file (page 0): source: unsupported layout: Compression 33005 (JPEG 2000", []string{`"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 1:*`}, true},
		{"focal planes", []testPage{svsPage(64, 48, true, description(svsHead)), svsPage(64, 48, true, description(svsHead)), label},
			"page 1 of the SVS file has the size of page 0", []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 2:*`}, false},
		{"focal planes at one offset", []testPage{svsPage(64, 48, true, description(svsHead+"|OffsetZ = 0")), svsPage(64, 48, true, description(svsHead+"|OffsetZ = 1")),
			svsPage(64, 48, true, description(svsHead+"|OffsetZ = 1")), label},
			"page 2 of the SVS file is a focal plane at OffsetZ 1, as page 1 is", []string{`"" 64x48 Z2 C1 T1 XYCZT uint8 x3: 0:* 1:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 3:*`}, false},
		{"a page of page 0's size, page 0 at no offset", []testPage{svsPage(64, 48, true, description(svsHead)), svsPage(64, 48, true, description(svsHead+"|OffsetZ = 1")), label},
			"page 1 of the SVS file has the size of page 0, at an OffsetZ, but page 0 gives none (nor TotalDepth)", []string{`"" 64x48 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 2:*`}, false},
	}
	gray := testPage{width: 64, height: 48, samples: 1, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionLZW), more: fields(description(svsHead + "|OffsetZ = 1"))}
	tests = append(tests, struct {
		name  string
		pages []testPage
		says  string
		kept  []string
		whole bool
	}{"a focal plane of another layout", []testPage{svsPage(64, 48, true, description(svsHead+"|TotalDepth = 3")), gray,
		svsPage(64, 48, true, description(svsHead+"|OffsetZ = 2")), label},
		"the focal plane at OffsetZ 1 of the SVS file (page 1): source: unsupported layout: it is 64 x 48, 1 samples of uint8, page 0 64 x 48, 3 samples of uint8, RGB",
		[]string{`"" 64x48 Z2 C1 T1 XYCZT uint8 x3: 0:* 2:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint8 x3: 3:*`}, false})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := mapPages(t, Options{}, tt.pages...)
			require.ErrorIs(t, err, ErrUnsupported)
			assert.ErrorContains(t, err, tt.says)
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, tt.pages...)
			require.NoError(t, err)
			assert.Equal(t, tt.kept, summary(f))
			require.Len(t, f.Skipped, 1)
			assert.Equal(t, tt.whole, errors.Is(f.Skipped[0], ErrLeftOut))
		})
	}
}

// TestSVSFocalPlaneLevels: each focal plane of a Z stack has for its levels
// the reduced pages after it, as Aperio stores them and Bio-Formats'
// SVSReader reads them (resolution r of plane z at IFD r + 1 + z × the
// resolutions), page 0's after its thumbnail.
func TestSVSFocalPlaneLevels(t *testing.T) {
	level := func(z string) testPage {
		return svsPage(32, 24, true, description("Aperio Image Library v10.0.51\r\n64x48 -> 32x24 - |OffsetZ = "+z))
	}
	f, _, err := mapPages(t, Options{}, svsPage(64, 48, true, description(svsHead+"|TotalDepth = 3|OffsetZ = 0")), svsPage(16, 11, false), level("0"),
		svsPage(64, 48, true, description(svsHead+"|OffsetZ = 2")), level("2"),
		svsPage(64, 48, true, description(svsHead+"|OffsetZ = 1")), level("1"))
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	im := f.Images[0]
	for z, want := range [][2]int{{0, 2}, {5, 6}, {3, 4}} { // the plane's page, its level's
		require.Len(t, im.Planes[z].Levels, 1, "plane %d", z)
		assert.Same(t, f.TIFF.Pages[want[0]], im.Planes[z].Page, "plane %d", z)
		assert.Same(t, f.TIFF.Pages[want[1]], im.Planes[z].Levels[0], "plane %d", z)
	}
}

// TestSVSOffsetZ: of a page's OffsetZ and TotalDepth, the last gives its
// offset, as Bio-Formats reads them in order; an OffsetZ that is no number
// gives none.
func TestSVSOffsetZ(t *testing.T) {
	for d, want := range map[string]float64{"|OffsetZ = 2": 2, "|TotalDepth = 3": 0, "|OffsetZ = 2|TotalDepth = 3": 0, "|TotalDepth = 3|OffsetZ = 2": 2,
		"|TotalDepth = 3|OffsetZ = 0.0.1": 0, "|OffsetZ = -1,5": -1.5, "|OffsetZ = x": -99, "": -99} {
		z, ok := svsOffsetZ(parseAperio(svsHead + d))
		if want == -99 {
			assert.False(t, ok, d)
			continue
		}
		assert.True(t, ok, d)
		assert.Equal(t, want, z, d)
	}
}
