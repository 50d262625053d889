package source

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image/color"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// mapPages stores the pages in a little-endian classic TIFF named
// "test.tif" and maps it.
func mapPages(t testing.TB, opts Options, pages ...testPage) (*File, [][]byte, error) {
	t.Helper()
	file, images := fileOf(t, binary.LittleEndian, false, pages...)
	f, err := mapFile(t, file, "test.tif", opts)
	return f, images, err
}

// mapFile maps data, a TIFF file named name, with opts.
func mapFile(t testing.TB, data []byte, name string, opts Options) (*File, error) {
	t.Helper()
	tf, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	return New(tf, name, opts)
}

// fields returns a hook adding fields to a test page's directory; a field
// already there is replaced.
func fields(add ...func(*ifd.Builder)) func(*ifd.Builder) {
	return func(b *ifd.Builder) {
		for _, a := range add {
			a(b)
		}
	}
}

func description(s string) func(*ifd.Builder) {
	return func(b *ifd.Builder) { b.AddASCII(tiff.TagImageDescription, s) }
}

func short(tag uint16, v ...uint16) func(*ifd.Builder) {
	return func(b *ifd.Builder) { b.Remove(tag); b.AddShort(tag, v...) }
}

func long(tag uint16, v uint32) func(*ifd.Builder) {
	return func(b *ifd.Builder) { b.Remove(tag); b.AddLong(tag, v) }
}

func rational(tag uint16, num, den uint32) func(*ifd.Builder) {
	return func(b *ifd.Builder) { b.AddRational(tag, ifd.Fraction{Num: num, Den: den}) }
}

func ascii(tag uint16, s string) func(*ifd.Builder) {
	return func(b *ifd.Builder) { b.AddASCII(tag, s) }
}

// asciiRaw sets an ASCII field to bytes AddASCII refuses: NULs inside.
func asciiRaw(tag uint16, s string) func(*ifd.Builder) {
	return func(b *ifd.Builder) {
		b.Add(ifd.Entry{Tag: tag, Type: ifd.ASCII, Count: uint64(len(s)), Value: []byte(s)})
	}
}

// summary describes the images of a file in one line each: name, size,
// dimensions, order, type, samples and each plane as page:sample (page
// indexes in the main chain, "*" for all samples).
func summary(f *File) []string {
	var out []string
	for _, im := range f.Images {
		s := im.Spec
		line := fmt.Sprintf("%q %dx%d Z%d C%d T%d %s %v x%d:", s.Name, s.SizeX, s.SizeY, s.SizeZ, s.SizeC, s.SizeT, s.DimensionOrder, s.PixelType, s.SamplesPerPixel)
		for _, p := range im.Planes {
			index := -1
			for i, q := range f.TIFF.Pages {
				if q == p.Page.Original() {
					index = i
				}
			}
			sample := "*"
			if p.Sample >= 0 {
				sample = fmt.Sprint(p.Sample)
			}
			line += fmt.Sprintf(" %d:%s", index, sample)
		}
		out = append(out, line)
	}
	return out
}

func gray(w, h int, more ...func(*ifd.Builder)) testPage {
	return testPage{width: w, height: h, samples: 1, bits: 16, rowsPerStrip: 8, codec: mustCodec(tiff.CompressionLZW), more: fields(more...)}
}

func TestGenericMapping(t *testing.T) {
	rgb := testPage{width: 20, height: 10, samples: 3, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionDeflate)}
	reduced := gray(10, 5, long(tiff.TagNewSubfileType, tiff.SubfileReducedImage))
	rgba := testPage{width: 8, height: 8, samples: 4, bits: 8, more: fields(short(tiff.TagPhotometricInterpretation, tiff.PhotometricRGB), short(tiff.TagExtraSamples, tiff.ExtraSampleUnassociatedAlpha))}
	tests := []struct {
		name  string
		pages []testPage
		want  []string
	}{
		{"one page", []testPage{gray(20, 10)}, []string{`"" 20x10 Z1 C1 T1 XYCZT uint16 x1: 0:*`}},
		{"pages of one shape along T, other shapes as images, reduced pages left out",
			[]testPage{gray(20, 10), gray(20, 10), reduced, rgb, gray(20, 10), gray(9, 9)},
			[]string{`"" 20x10 Z1 C1 T3 XYCZT uint16 x1: 0:* 1:* 4:*`, `"" 20x10 Z1 C1 T1 XYCZT uint8 x3: 3:*`, `"" 9x9 Z1 C1 T1 XYCZT uint16 x1: 5:*`}},
		{"two samples are two channels", []testPage{{width: 8, height: 4, samples: 2, bits: 8}, {width: 8, height: 4, samples: 2, bits: 8}},
			[]string{`"" 8x4 Z1 C2 T2 XYCZT uint8 x1: 0:0 0:1 1:0 1:1`}},
		{"RGBA is four channels", []testPage{rgba}, []string{`"" 8x8 Z1 C4 T1 XYCZT uint8 x1: 0:0 0:1 0:2 0:3`}},
		{"float RGB is three channels", []testPage{{width: 8, height: 8, samples: 3, bits: 32, float: true, planar: true}},
			[]string{`"" 8x8 Z1 C3 T1 XYCZT float x1: 0:0 0:1 0:2`}},
		{"16-bit RGB stays RGB", []testPage{{width: 8, height: 8, samples: 3, bits: 16, planar: true}}, []string{`"" 8x8 Z1 C1 T1 XYCZT uint16 x3: 0:*`}},
		{"signed", []testPage{{width: 8, height: 8, samples: 1, bits: 32, signed: true}}, []string{`"" 8x8 Z1 C1 T1 XYCZT int32 x1: 0:*`}},
		{"a mask is an image of its own", []testPage{gray(8, 8), gray(8, 8, long(tiff.TagNewSubfileType, tiff.SubfileMask))},
			[]string{`"" 8x8 Z1 C1 T1 XYCZT uint16 x1: 0:*`, `"" 8x8 Z1 C1 T1 XYCZT uint16 x1: 1:*`}},
		{"a single reduced page is the image", []testPage{reduced}, []string{`"" 10x5 Z1 C1 T1 XYCZT uint16 x1: 0:*`}},
		{"ImageJ hyperstack", []testPage{
			gray(8, 8, description("ImageJ=1.53t\nimages=6\nchannels=2\nslices=3\nhyperstack=true\nunit=micron\nspacing=0.5\n")),
			gray(8, 8), gray(8, 8), gray(8, 8), gray(8, 8), gray(8, 8)},
			[]string{`"" 8x8 Z3 C2 T1 XYCZT uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`}},
		{"XML of another kind is a description", []testPage{gray(8, 8, description(`<Settings><prop id="Description" value="OME is not named here"/></Settings>`))},
			[]string{`"" 8x8 Z1 C1 T1 XYCZT uint16 x1: 0:*`}},
		{"Bio-Formats' ImageJ description of RGB pages (images counts samples)", []testPage{
			{width: 8, height: 8, samples: 3, bits: 8, more: description("ImageJ=\nhyperstack=true\nimages=6\nchannels=3\nslices=2\nframes=1")},
			{width: 8, height: 8, samples: 3, bits: 8}},
			[]string{`"" 8x8 Z2 C1 T1 XYCZT uint8 x3: 0:* 1:*`}},
		{"Bio-Formats' ImageJ description of planar pages", []testPage{
			{width: 8, height: 8, samples: 2, bits: 8, planar: true, more: description("ImageJ=\nhyperstack=true\nimages=4\nchannels=2\nslices=2\nframes=1")},
			{width: 8, height: 8, samples: 2, bits: 8, planar: true}},
			[]string{`"" 8x8 Z2 C2 T1 XYCZT uint8 x1: 0:0 0:1 1:0 1:1`}},
		{"ImageJ sizes whose product overflows", []testPage{gray(8, 8, description("ImageJ=1.53t\nimages=4\nchannels=4611686018427387905\nslices=4\n")),
			gray(8, 8), gray(8, 8), gray(8, 8)}, []string{`"" 8x8 Z1 C1 T4 XYCZT uint16 x1: 0:* 1:* 2:* 3:*`}},
		{"ImageJ sizes that do not match stay on T", []testPage{gray(8, 8, description("ImageJ=1.53t\nimages=2\nchannels=4\n")), gray(8, 8)},
			[]string{`"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 1:*`}},
		// ImageJ (and tifffile) write an RGB hyperstack as a page per RGB
		// channel, images counting the pages (they were split into images
		// or put along T).
		{"ImageJ RGB hyperstack", []testPage{
			{width: 8, height: 8, samples: 3, bits: 8, more: description("ImageJ=1.11a\nimages=4\nchannels=2\nslices=2\nhyperstack=true")},
			{width: 8, height: 8, samples: 3, bits: 8}, {width: 8, height: 8, samples: 3, bits: 8}, {width: 8, height: 8, samples: 3, bits: 8}},
			[]string{`"" 8x8 Z2 C2 T1 XYCZT uint8 x3: 0:* 1:* 2:* 3:*`}},
		{"ImageJ RGB hyperstack of 3 channels", []testPage{
			{width: 8, height: 8, samples: 3, bits: 8, more: description("ImageJ=1.11a\nimages=3\nchannels=3\nhyperstack=true")},
			{width: 8, height: 8, samples: 3, bits: 8}, {width: 8, height: 8, samples: 3, bits: 8}},
			[]string{`"" 8x8 Z1 C3 T1 XYCZT uint8 x3: 0:* 1:* 2:*`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, tt.pages...)
			require.NoError(t, err)
			assert.Equal(t, TIFF, f.Kind)
			assert.Equal(t, tt.want, summary(f))
			assert.Empty(t, f.Skipped)
		})
	}
}

// TestImageJSizesNote: ImageJ sizes the pages do not fit leave the pages
// along T, and a note says so (the sizes were dropped silently).
func TestImageJSizesNote(t *testing.T) {
	f, _, err := mapPages(t, Options{}, gray(8, 8, description("ImageJ=1.53t\nimages=2\nchannels=4\n")), gray(8, 8))
	require.NoError(t, err)
	assert.Equal(t, []string{"the ImageJ description's channels=4 slices=1 frames=1 do not fit its 2 pages: they go along T"}, f.Images[0].Notes)
	f, _, err = mapPages(t, Options{}, gray(8, 8, description("ImageJ=1.53t\nimages=2\nslices=2\n")), gray(8, 8))
	require.NoError(t, err)
	assert.Empty(t, f.Images[0].Notes, "fitting")
}

func TestGenericMetadata(t *testing.T) {
	f, _, err := mapPages(t, Options{}, gray(8, 8,
		description("  scan of a leaf  "), ascii(tiff.TagPageName, "leaf"), ascii(tiff.TagDateTime, "2024:05:06 07:08:09"),
		rational(tiff.TagXResolution, 4000, 1), rational(tiff.TagYResolution, 2000, 1), short(tiff.TagResolutionUnit, tiff.ResolutionUnitCentimeter)))
	require.NoError(t, err)
	s := f.Images[0].Spec
	assert.Equal(t, "leaf", s.Name)
	assert.Equal(t, "scan of a leaf", s.Description)
	assert.Equal(t, time.Date(2024, 5, 6, 7, 8, 9, 0, pyramid.NoZone), s.AcquisitionDate, "DateTime has no zone: not UTC's")
	assert.InDelta(t, 2.5, s.PhysicalSizeX, 1e-12, "10,000 µm a centimeter over 4000 pixels")
	assert.InDelta(t, 5, s.PhysicalSizeY, 1e-12)

	assert.Empty(t, s.Annotations, "DateTime read as the date is not repeated")

	f, _, err = mapPages(t, Options{}, gray(8, 8, ascii(tiff.TagDateTime, "0000:01:01 00:00:00")))
	require.NoError(t, err)
	assert.Zero(t, f.Images[0].Spec.AcquisitionDate, "no xsd:dateTime has year 0")
	assert.Equal(t, []pyramid.KeyValue{{Key: "DateTime", Value: "0000:01:01 00:00:00"}}, f.Images[0].Spec.Annotations, "a date not read is kept as text")

	f, _, err = mapPages(t, Options{}, gray(8, 8, ascii(tiff.TagSoftware, " scanner 2.1 "), ascii(tiff.TagDateTime, "yesterday"),
		ascii(tiff.TagMake, "Acme"), asciiRaw(tiff.TagModel, "\x00"), asciiRaw(tiff.TagCopyright, "A. Photographer\x00 \x00B. Editor\x01\x00")))
	require.NoError(t, err)
	assert.Equal(t, []pyramid.KeyValue{{Key: "Make", Value: "Acme"}, {Key: "Software", Value: "scanner 2.1"}, {Key: "DateTime", Value: "yesterday"},
		{Key: "Copyright", Value: "A. Photographer; B. Editor"}}, f.Images[0].Spec.Annotations, "in tag order; empty ones left out")

	f, _, err = mapPages(t, Options{}, gray(8, 8, rational(tiff.TagXResolution, 254, 1), rational(tiff.TagYResolution, 254, 1)))
	require.NoError(t, err)
	assert.InDelta(t, 100, f.Images[0].Spec.PhysicalSizeX, 1e-12, "inches by default")

	f, _, err = mapPages(t, Options{}, gray(8, 8, rational(tiff.TagXResolution, 254, 1), short(tiff.TagResolutionUnit, tiff.ResolutionUnitNone)))
	require.NoError(t, err)
	assert.Zero(t, f.Images[0].Spec.PhysicalSizeX, "no unit, no size")

	ij := "ImageJ=1.53t\nimages=2\nslices=2\nunit=micron\nspacing=1.5\n"
	f, _, err = mapPages(t, Options{}, gray(8, 8, description(ij), rational(tiff.TagXResolution, 4, 1), rational(tiff.TagYResolution, 2, 1),
		short(tiff.TagResolutionUnit, tiff.ResolutionUnitNone)), gray(8, 8))
	require.NoError(t, err)
	s = f.Images[0].Spec
	assert.Equal(t, [4]any{0.25, "µm", 0.5, "µm"}, [4]any{s.PhysicalSizeX, s.PhysicalSizeXUnit, s.PhysicalSizeY, s.PhysicalSizeYUnit})
	assert.Equal(t, [2]any{1.5, "µm"}, [2]any{s.PhysicalSizeZ, s.PhysicalSizeZUnit})
	assert.Empty(t, s.Description, "ImageJ's description is its metadata")

	for tunit, want := range map[string]pyramid.Quantity{"": {Value: 0.25, Unit: "s"}, "tunit=min\n": {Value: 0.25, Unit: "min"}, "tunit=Min\n": {Value: 0.25, Unit: "min"},
		"tunit=nsec\n": {Value: 0.25, Unit: "ns"}, "tunit=\\u00B5s\n": {Value: 0.25, Unit: "µs"}, "tunit=parsec\n": {}, "tunit=frame\n": {},
		// Said again, the interval replaces the first; one no number, or
		// not positive, clears it (java.util.Properties keeps the last).
		"finterval=0.5\n": {Value: 0.5, Unit: "s"}, "finterval=soon\n": {}, "finterval=-1\n": {}} {
		f, _, err = mapPages(t, Options{}, gray(8, 8, description("ImageJ=1.53t\nimages=2\nframes=2\nfinterval=0.25\n"+tunit)), gray(8, 8))
		require.NoError(t, err)
		assert.Equal(t, want, f.Images[0].Spec.TimeIncrement, "%q: the frame interval", tunit)
	}
	for unit, want := range map[string][2]any{"unit=pixel\n": {0.0, ""}, "": {1.5, "µm"}, "unit=nm\n": {1.5, "nm"}, "unit=furlong\n": {0.0, ""}} {
		f, _, err = mapPages(t, Options{}, gray(8, 8, description("ImageJ=1.53t\nimages=2\nslices=2\nspacing=1.5\n"+unit)), gray(8, 8))
		require.NoError(t, err)
		s = f.Images[0].Spec
		assert.Equal(t, want, [2]any{s.PhysicalSizeZ, s.PhysicalSizeZUnit}, "%q: a spacing in pixels, or in a unit not known, is no length", unit)
	}
	// yunit and zunit, when said, are Y's and Z's own (ImageJ's
	// Calibration); one not known leaves that size out.
	for units, want := range map[string][4]any{
		"unit=um\nyunit=nm\nzunit=nm\n":    {0.5, "nm", 1.5, "nm"},
		"unit=um\nzunit=mm\n":              {0.5, "µm", 1.5, "mm"},
		"unit=um\nyunit=furlong\nzunit=\n": {0.0, "", 1.5, "µm"},
		"unit=um\nzunit=pixel\n":           {0.5, "µm", 0.0, ""},
	} {
		f, _, err = mapPages(t, Options{}, gray(8, 8, description("ImageJ=1.53t\nimages=2\nslices=2\nspacing=1.5\n"+units), rational(tiff.TagXResolution, 4, 1),
			rational(tiff.TagYResolution, 2, 1), short(tiff.TagResolutionUnit, tiff.ResolutionUnitNone)), gray(8, 8))
		require.NoError(t, err)
		s = f.Images[0].Spec
		assert.Equal(t, [2]any{0.25, "µm"}, [2]any{s.PhysicalSizeX, s.PhysicalSizeXUnit}, "%q", units)
		assert.Equal(t, want, [4]any{s.PhysicalSizeY, s.PhysicalSizeYUnit, s.PhysicalSizeZ, s.PhysicalSizeZUnit}, "%q", units)
	}

	// A spacing or an interval OME's float rounds to 0 is not known, not
	// 0 (the writer refused the spacing, and wrote the interval as 0).
	f, _, err = mapPages(t, Options{}, gray(8, 8, description("ImageJ=1.53t\nimages=4\nslices=2\nframes=2\nunit=micron\nspacing=1e-46\nfinterval=1e-300\n")),
		gray(8, 8), gray(8, 8), gray(8, 8))
	require.NoError(t, err)
	s = f.Images[0].Spec
	assert.Equal(t, [3]any{0.0, "", pyramid.Quantity{}}, [3]any{s.PhysicalSizeZ, s.PhysicalSizeZUnit, s.TimeIncrement})

	// ImageJ's unit holds whatever ResolutionUnit says, but for its own
	// rule ("um" of a resolution per centimeter is per centimeter), as
	// java.util.Properties reads it (spaces around it, \u escapes); one
	// OME does not have, or "pixel", leaves the sizes out. Without one,
	// the sizes are Bio-Formats': the resolution in ResolutionUnit's, the
	// spacing in µm. A negative spacing is its size, as ImageJ reads it.
	tests := []struct {
		unit    string
		resUnit uint16
		want    [6]any
	}{
		{"unit=micron\n", tiff.ResolutionUnitInch, [6]any{0.25, "µm", 0.5, "µm", 1.5, "µm"}},
		{"unit= \\u00b5m \n", tiff.ResolutionUnitInch, [6]any{0.25, "µm", 0.5, "µm", 1.5, "µm"}},
		{"unit=micron\nspacing=-1.5\n", tiff.ResolutionUnitNone, [6]any{0.25, "µm", 0.5, "µm", 1.5, "µm"}},
		{"unit=micron\nspacing=1_5\n", tiff.ResolutionUnitNone, [6]any{0.25, "µm", 0.5, "µm", 0.0, ""}},    // no number to ImageJ
		{"unit=micron\nspacing=2.5f\n", tiff.ResolutionUnitNone, [6]any{0.25, "µm", 0.5, "µm", 2.5, "µm"}}, // Java's suffixes
		{"unit=micron\nspacing=3E0D\n", tiff.ResolutionUnitNone, [6]any{0.25, "µm", 0.5, "µm", 3.0, "µm"}},
		{"unit=micron\nspacing=2.5ff\n", tiff.ResolutionUnitNone, [6]any{0.25, "µm", 0.5, "µm", 0.0, ""}},
		{"unit=micron\nspacing=inf\n", tiff.ResolutionUnitNone, [6]any{0.25, "µm", 0.5, "µm", 0.0, ""}},
		{"unit=um\n", tiff.ResolutionUnitCentimeter, [6]any{2500.0, "µm", 5000.0, "µm", 1.5, "µm"}},
		{"", tiff.ResolutionUnitCentimeter, [6]any{2500.0, "", 5000.0, "", 1.5, "µm"}},
		{"unit=furlong\n", tiff.ResolutionUnitCentimeter, [6]any{0.0, "", 0.0, "", 0.0, ""}},
		{"unit=pixel\n", tiff.ResolutionUnitInch, [6]any{0.0, "", 0.0, "", 0.0, ""}},
	}
	for _, tt := range tests {
		f, _, err = mapPages(t, Options{}, gray(8, 8, description("ImageJ=1.53t\nimages=2\nslices=2\nspacing=1.5\n"+tt.unit),
			rational(tiff.TagXResolution, 4, 1), rational(tiff.TagYResolution, 2, 1), short(tiff.TagResolutionUnit, tt.resUnit)), gray(8, 8))
		require.NoError(t, err)
		s = f.Images[0].Spec
		assert.Equal(t, tt.want, [6]any{s.PhysicalSizeX, s.PhysicalSizeXUnit, s.PhysicalSizeY, s.PhysicalSizeYUnit, s.PhysicalSizeZ, s.PhysicalSizeZUnit},
			"%q, ResolutionUnit %d", tt.unit, tt.resUnit)
	}
}

// TestBlocksPastTheEnd: a page whose block lies past the end of the file
// (a file cut short) is refused by New, before anything is converted,
// and left out with SkipUnsupported.
func TestBlocksPastTheEnd(t *testing.T) {
	p := testPage{width: 64, height: 64, samples: 1, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionLZW)}
	other := testPage{width: 8, height: 8, samples: 1, bits: 8}
	good, _ := fileOf(t, binary.LittleEndian, false, other, p)
	f, err := tiff.Read(bytes.NewReader(good), int64(len(good)))
	require.NoError(t, err)
	counts, _ := f.Pages[1].Field(tiff.TagTileByteCounts)
	at := bytes.Index(good, counts.Value) + 9*counts.Type.Size()
	cut := bytes.Clone(good)
	binary.LittleEndian.PutUint16(cut[at:], uint16(len(good)))
	_, err = mapFile(t, cut, "cut.tif", Options{})
	require.ErrorIs(t, err, tiff.ErrMalformed)
	assert.ErrorContains(t, err, "TileByteCounts[9]")
	assert.ErrorContains(t, err, "past the end of the")
	kept, err := mapFile(t, cut, "cut.tif", Options{SkipUnsupported: true})
	require.NoError(t, err)
	require.Len(t, kept.Images, 1)
	assert.Equal(t, 8, kept.Images[0].Spec.SizeX)
}

// TestWhiteIsZeroApart: white-is-zero pages, kept as stored, are no
// planes of black-is-zero pages of the same shape.
func TestWhiteIsZeroApart(t *testing.T) {
	inverted := gray(8, 8, short(tiff.TagPhotometricInterpretation, tiff.PhotometricWhiteIsZero))
	f, _, err := mapPages(t, Options{}, gray(8, 8), inverted, inverted, gray(8, 8))
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 3:*`, `"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 1:* 2:*`}, summary(f))
}

// TestUnsupportedPages checks that a page that cannot be converted fails
// New with a typed error naming its field, or with SkipUnsupported is
// left out and listed, its images' other pages kept.
func TestUnsupportedPages(t *testing.T) {
	tests := []struct {
		name string
		page testPage
		is   error
		says string
	}{
		{"palette without a ColorMap", gray(8, 8, short(tiff.TagPhotometricInterpretation, tiff.PhotometricPalette)), ErrMetadata, "PhotometricInterpretation palette"},
		{"CIELab", gray(8, 8, short(tiff.TagPhotometricInterpretation, 8)), ErrUnsupported, "PhotometricInterpretation 8"},
		{"YCbCr without JPEG", testPage{width: 8, height: 8, samples: 3, bits: 8, more: short(tiff.TagPhotometricInterpretation, tiff.PhotometricYCbCr)},
			ErrUnsupported, "PhotometricInterpretation YCbCr with Compression 1 (none) of the page at "},
		{"YCbCr of old-style JPEG", testPage{width: 8, height: 8, samples: 3, bits: 8,
			more: fields(short(tiff.TagPhotometricInterpretation, tiff.PhotometricYCbCr), short(tiff.TagCompression, tiff.CompressionOldJPEG))},
			ErrUnsupported, "PhotometricInterpretation YCbCr with Compression 6 (old JPEG) of the page"},
		{"64-bit integers", testPage{width: 8, height: 8, samples: 1, bits: 64}, ErrUnsupported, "BitsPerSample 64 of unsigned integer samples"},
		{"8-bit floats", testPage{width: 8, height: 8, samples: 1, bits: 8, more: short(tiff.TagSampleFormat, tiff.SampleFormatFloat)}, ErrUnsupported,
			"BitsPerSample 8 of floating-point samples"},
		{"12-bit", gray(8, 8, short(tiff.TagBitsPerSample, 12)), ErrUnsupported, "BitsPerSample 12"},
		{"FillOrder 2", gray(8, 8, short(tiff.TagFillOrder, 2)), ErrUnsupported, "FillOrder 2 of the page"},
		{"1-bit signed", testPage{width: 8, height: 8, samples: 1, bits: 8, more: fields(short(tiff.TagBitsPerSample, 1), short(tiff.TagSampleFormat, tiff.SampleFormatInt))},
			ErrUnsupported, "BitsPerSample 1 of integer samples"},
		{"JPEG 2000", gray(8, 8, short(tiff.TagCompression, tiff.CompressionJPEG2000Aperio)), ErrUnsupported, "Compression 33003 (JPEG 2000"},
		{"unknown compression", gray(8, 8, short(tiff.TagCompression, 34712)), ErrUnsupported, "34712 (JPEG 2000)"},
		{"volumetric", gray(8, 8, short(tiff.TagImageDepth, 4)), ErrUnsupported, "ImageDepth 4 of the page at"},
		{"volumetric tiles", gray(8, 8, short(tiff.TagTileDepth, 2)), ErrUnsupported, "TileDepth 2 of the page at"},
		{"complex", gray(8, 8, short(tiff.TagSampleFormat, 6)), tiff.ErrUnsupported, "is 6 (complex float)"},
		{"unknown predictor", gray(8, 8, short(tiff.TagPredictor, 5)), ErrUnsupported, "predictor"},
		{"too many samples", testPage{width: 2, height: 2, samples: 257, bits: 8}, ErrUnsupported, "SamplesPerPixel 257"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := mapPages(t, Options{}, gray(8, 8), tt.page)
			require.ErrorIs(t, err, tt.is)
			assert.ErrorContains(t, err, tt.says)
			assert.True(t, strings.HasPrefix(err.Error(), "page 1: source: "), err.Error())

			f, _, err := mapPages(t, Options{SkipUnsupported: true}, gray(8, 8), tt.page, gray(8, 8))
			require.NoError(t, err)
			assert.Equal(t, []string{`"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 2:*`}, summary(f))
			require.Len(t, f.Skipped, 1)
			assert.ErrorIs(t, f.Skipped[0], tt.is)
			// Of the kept pages' size, it might have been a plane of theirs.
			assert.Equal(t, tt.page.width != 8 || tt.page.height != 8, errors.Is(f.Skipped[0], ErrLeftOut), "left out whole")
			f, _, err = mapPages(t, Options{SkipUnsupported: true}, gray(12, 12), tt.page)
			require.NoError(t, err)
			require.Len(t, f.Skipped, 1)
			assert.ErrorIs(t, f.Skipped[0], ErrLeftOut, "a page of no kept page's size: an image left out whole")

			_, _, err = mapPages(t, Options{SkipUnsupported: true}, tt.page)
			assert.ErrorIs(t, err, ErrUnsupported, "no image left")
			assert.ErrorContains(t, err, "no image of the file can be read: page 0: ")
			assert.ErrorContains(t, err, tt.says, "the reason")
			assert.NotContains(t, err.Error(), "more)")

			_, _, err = mapPages(t, Options{SkipUnsupported: true}, tt.page, testPage{width: 9, height: 9, samples: 3, bits: 8,
				more: short(tiff.TagPhotometricInterpretation, tiff.PhotometricYCbCr)})
			assert.ErrorIs(t, err, ErrUnsupported, "no image left")
			assert.ErrorContains(t, err, tt.says, "the first reason")
			assert.ErrorContains(t, err, "(and 1 more)")
		})
	}
}

// TestImpossibleBlocks: a page whose one strip is 2^32-1 x 2^32-1 pixels
// is an image too large (ErrSize), as a band past MaxBandBytes is, not a
// layout the decoders refuse.
func TestImpossibleBlocks(t *testing.T) {
	file := rawPage(t, func(b *ifd.Builder) {
		b.AddLong(tiff.TagImageWidth, 1<<32-1)
		b.AddLong(tiff.TagImageLength, 1<<32-1)
		b.AddShort(tiff.TagBitsPerSample, 8)
		b.AddLong(tiff.TagStripOffsets, 200)
		b.AddLong(tiff.TagStripByteCounts, 10)
	})
	_, err := mapFile(t, file, "huge.tif", Options{})
	require.ErrorIs(t, err, ErrSize)
	assert.NotErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "blocks of 4294967295 x 4294967295 pixels of 1 bytes, more than 1099511627776 bytes")
}

// TestUnsupportedBitsSayWhatIsRead: the refusal of a sample size names
// the sizes read, of its kind.
func TestUnsupportedBitsSayWhatIsRead(t *testing.T) {
	_, _, err := mapPages(t, Options{}, testPage{width: 8, height: 8, samples: 1, bits: 8, more: short(tiff.TagSampleFormat, tiff.SampleFormatFloat)})
	assert.ErrorContains(t, err, "(16, 32 or 64 are read)")
	_, _, err = mapPages(t, Options{}, testPage{width: 8, height: 8, samples: 1, bits: 64})
	assert.ErrorContains(t, err, "BitsPerSample 64 of unsigned integer samples of the page at 528 (1, 2, 4, 8, 16 or 32 are read)")
	_, _, err = mapPages(t, Options{}, testPage{width: 8, height: 8, samples: 1, bits: 8, more: short(tiff.TagBitsPerSample, 12)})
	assert.ErrorContains(t, err, "BitsPerSample 12 of unsigned integer samples of the page at 80 (1, 2, 4, 8, 16 or 32 are read)")
	_, _, err = mapPages(t, Options{}, testPage{width: 8, height: 8, samples: 1, bits: 64, more: short(tiff.TagSampleFormat, tiff.SampleFormatInt)})
	assert.ErrorContains(t, err, "BitsPerSample 64 of integer samples of the page at 528 (8, 16 or 32 are read)")
}

func TestKindString(t *testing.T) {
	assert.Equal(t, []string{"TIFF", "OME-TIFF", "SVS", "Kind(99)"}, []string{TIFF.String(), OMETIFF.String(), SVS.String(), Kind(99).String()})
	assert.Equal(t, "STK", STK.String())
	assert.Equal(t, "LSM", LSM.String())
}

func TestCleanText(t *testing.T) {
	assert.Equal(t, "a\uFFFDb\tc", pyramid.XMLText("a\xffb\x01\tc\x00"))
}

// omeDocument is an OME-XML document of the images, each given as its
// Image element's inside (Pixels and all); root holds the root element's
// attributes. The Pixels of image i gets the ID Pixels:i.
func omeDocument(root string, images ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" ` + root + `>`)
	for i, im := range images {
		im = strings.Replace(im, `<Pixels ID="Pixels:0"`, fmt.Sprintf(`<Pixels ID="Pixels:%d"`, i), 1)
		fmt.Fprintf(&b, `<Image ID="Image:%d" Name="im%d">%s</Image>`, i, i, im)
	}
	b.WriteString(`</OME>`)
	return b.String()
}

// pixels is a Pixels element of 8 x 8 uint16 with the sizes, order and
// inside given.
func pixels(z, c, t int, order, inside string) string {
	return fmt.Sprintf(`<Pixels ID="Pixels:0" DimensionOrder="%s" Type="uint16" SizeX="8" SizeY="8" SizeZ="%d" SizeC="%d" SizeT="%d">%s</Pixels>`,
		order, z, c, t, inside)
}

// grays returns n 8 x 8 uint16 pages, the first described by d.
func grays(n int, d string) []testPage {
	out := []testPage{gray(8, 8, description(d))}
	for range n - 1 {
		out = append(out, gray(8, 8))
	}
	return out
}

func TestOMEMapping(t *testing.T) {
	uuid := `UUID="urn:uuid:6f6d6574-6966-6600-0000-000000000001"`
	tests := []struct {
		name  string
		root  string
		pages int
		image []string
		want  []string
	}{
		{"a TiffData without attributes maps every plane", "", 6, []string{pixels(2, 3, 1, "XYZCT", `<TiffData/>`)},
			[]string{`"im0" 8x8 Z2 C3 T1 XYZCT uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`}},
		{"one image without TiffData has the pages in order", "", 6, []string{pixels(2, 3, 1, "XYZCT", ``)},
			[]string{`"im0" 8x8 Z2 C3 T1 XYZCT uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`}},
		{"one TiffData per plane, in any order", "", 4, []string{pixels(1, 2, 2, "XYCTZ",
			`<TiffData IFD="3" FirstC="0" FirstT="0"/><TiffData IFD="2" FirstC="1"/><TiffData IFD="1" FirstT="1"/><TiffData IFD="0" FirstC="1" FirstT="1" PlaneCount="1"/>`)},
			[]string{`"im0" 8x8 Z1 C2 T2 XYCTZ uint16 x1: 3:* 2:* 1:* 0:*`}},
		{"no DimensionOrder, planes along one axis", "", 3, []string{pixels(1, 1, 3, "", `<TiffData/>`)},
			[]string{`"im0" 8x8 Z1 C1 T3 XYZCT uint16 x1: 0:* 1:* 2:*`}},
		{"no DimensionOrder, each plane placed", "", 4, []string{pixels(1, 2, 2, "",
			`<TiffData IFD="3" PlaneCount="1"/><TiffData IFD="2" FirstC="1" PlaneCount="1"/><TiffData IFD="1" FirstT="1" PlaneCount="1"/><TiffData IFD="0" FirstC="1" FirstT="1" PlaneCount="1"/>`)},
			[]string{`"im0" 8x8 Z1 C2 T2 XYZCT uint16 x1: 3:* 2:* 1:* 0:*`}},
		{"PlaneCount", "", 4, []string{pixels(4, 1, 1, "XYZCT", `<TiffData IFD="2" FirstZ="2" PlaneCount="2"/><TiffData IFD="0" PlaneCount="2"/>`)},
			[]string{`"im0" 8x8 Z4 C1 T1 XYZCT uint16 x1: 0:* 1:* 2:* 3:*`}},
		{"a TiffData with an IFD and no PlaneCount maps the planes after it too", "", 4,
			[]string{pixels(4, 1, 1, "XYZCT", `<TiffData IFD="1"/><TiffData IFD="0" FirstZ="3" PlaneCount="1"/>`)},
			[]string{`"im0" 8x8 Z4 C1 T1 XYZCT uint16 x1: 1:* 2:* 3:* 0:*`}},
		{"indexes counted from 1", "", 2, []string{pixels(1, 2, 1, "XYZCT", `<TiffData IFD="0" FirstC="1" PlaneCount="1"/><TiffData IFD="1" FirstC="2" PlaneCount="1"/>`)},
			[]string{`"im0" 8x8 Z1 C2 T1 XYZCT uint16 x1: 0:* 1:*`}},
		{"two images", "", 3, []string{pixels(2, 1, 1, "XYZCT", `<TiffData IFD="0" PlaneCount="2"/>`), pixels(1, 1, 1, "XYCZT", `<TiffData IFD="2"/>`)},
			[]string{`"im0" 8x8 Z2 C1 T1 XYZCT uint16 x1: 0:* 1:*`, `"im1" 8x8 Z1 C1 T1 XYCZT uint16 x1: 2:*`}},
		{"UUIDs naming this file", uuid, 2, []string{pixels(1, 1, 2, "XYZCT",
			`<TiffData IFD="0" PlaneCount="1"><UUID FileName="test.tif">urn:uuid:0</UUID></TiffData>`+
				`<TiffData IFD="1" FirstT="1"><UUID FileName="renamed.ome.tif">urn:uuid:6f6d6574-6966-6600-0000-000000000001</UUID></TiffData>`)},
			[]string{`"im0" 8x8 Z1 C1 T2 XYZCT uint16 x1: 0:* 1:*`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, grays(tt.pages, omeDocument(tt.root, tt.image...))...)
			require.NoError(t, err)
			assert.Equal(t, OMETIFF, f.Kind)
			assert.Equal(t, tt.want, summary(f))
			assert.Equal(t, omeDocument(tt.root, tt.image...), f.OMEXML)
			// An order taken as XYZCT is noted; none otherwise.
			var notes []string
			if strings.HasPrefix(tt.name, "no DimensionOrder") {
				notes = []string{"no DimensionOrder: taken as XYZCT (its planes lie along one axis, or each TiffData places one)"}
			}
			assert.Equal(t, notes, f.Images[0].Notes)
		})
	}
}

// TestOMEMetadata: the typed fields an Image element maps to. When the
// document goes with the image (Spec.OME), its acquisition date and map
// annotations are left to it, and the description is as written; when
// it cannot (here, of another schema version, with SkipUnsupported), the
// typed fields restate all they can.
func TestOMEMetadata(t *testing.T) {
	doc := omeDocument(``, `<AcquisitionDate>2021-03-04T05:06:07.5</AcquisitionDate><Description> two &amp; more
</Description>`+
		`<Pixels ID="Pixels:0" DimensionOrder="XYCZT" Type="uint16" SizeX="8" SizeY="8" SizeZ="2" SizeC="2" SizeT="1" PhysicalSizeX="0.25" PhysicalSizeY="0.5" PhysicalSizeYUnit="nm" PhysicalSizeZ="2" PhysicalSizeZUnit="mm" TimeIncrement="2.5" TimeIncrementUnit="ms">`+
		`<Channel ID="Channel:0:0" Name="DAPI" Color="-16776961"/><Channel ID="Channel:0:1" Name="GFP"/><TiffData/></Pixels>`+
		`<AnnotationRef ID="Annotation:1"/>`) // Color: 0xFF0000FF, opaque red
	doc = strings.Replace(doc, `</OME>`, `<StructuredAnnotations><MapAnnotation ID="Annotation:0"><Value><M K="x">no</M></Value></MapAnnotation>`+
		`<MapAnnotation ID="Annotation:1"><Value><M K="stain">H&amp;E</M><M K="organ">liver</M></Value></MapAnnotation></StructuredAnnotations></OME>`, 1)
	tests := []struct {
		name        string
		doc         string
		carried     bool
		description string
		date        time.Time
		annotations []pyramid.KeyValue
	}{
		{"carried", doc, true, " two & more\n", time.Time{}, nil},
		// UTF-8's byte order mark before the document: OME-XML all the
		// same, as tifffile and Bio-Formats read it.
		{"byte order mark", "\uFEFF" + doc, true, " two & more\n", time.Time{}, nil},
		{"typed only", strings.Replace(doc, "2016-06", "2015-01", 1), false, "two & more", time.Date(2021, 3, 4, 5, 6, 7, 5e8, pyramid.NoZone),
			[]pyramid.KeyValue{{Key: "stain", Value: "H&E"}, {Key: "organ", Value: "liver"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, grays(4, tt.doc)...)
			require.NoError(t, err)
			s := f.Images[0].Spec
			assert.Equal(t, tt.carried, s.OME != nil)
			assert.Equal(t, "im0", s.Name)
			assert.Equal(t, tt.description, s.Description)
			assert.Equal(t, tt.date, s.AcquisitionDate)
			assert.Equal(t, [6]any{0.25, "", 0.5, "nm", 2.0, "mm"}, [6]any{s.PhysicalSizeX, s.PhysicalSizeXUnit, s.PhysicalSizeY, s.PhysicalSizeYUnit, s.PhysicalSizeZ, s.PhysicalSizeZUnit})
			assert.Equal(t, pyramid.Quantity{Value: 2.5, Unit: "ms"}, s.TimeIncrement)
			assert.Equal(t, []pyramid.Channel{{Name: "DAPI", Color: color.NRGBA{R: 255, A: 255}}, {Name: "GFP"}}, s.Channels)
			assert.Equal(t, tt.annotations, s.Annotations)
		})
	}
}

// TestOMETimeIncrement: the Pixels TimeIncrement values the typed field
// takes, and those it leaves to the carried Image element.
func TestOMETimeIncrement(t *testing.T) {
	tests := []struct {
		value, unit string
		want        pyramid.Quantity
	}{
		{"2", "", pyramid.Quantity{Value: 2, Unit: "s"}}, // OME's default unit
		{" 0.25 ", "min", pyramid.Quantity{Value: 0.25, Unit: "min"}},
		{"1e-3", "us", pyramid.Quantity{Value: 1e-3, Unit: "µs"}},
		{"5", "\u03bcs", pyramid.Quantity{Value: 5, Unit: "µs"}},
		{"", "s", pyramid.Quantity{}},
		{"0", "s", pyramid.Quantity{}},
		{"-1", "s", pyramid.Quantity{}},
		{"NaN", "s", pyramid.Quantity{}},
		{"1e39", "s", pyramid.Quantity{}},  // past float32, the schema's type
		{"1e-50", "s", pyramid.Quantity{}}, // 0 as a float32
		{"one", "s", pyramid.Quantity{}},
		{"1", "fortnight", pyramid.Quantity{}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, omeTimeIncrement(tt.value, tt.unit), "%q %q", tt.value, tt.unit)
	}
}

func TestOMESamples(t *testing.T) {
	rgb := func(d string) testPage {
		return testPage{width: 8, height: 8, samples: 3, bits: 8, more: description(d)}
	}
	two := func(d string) testPage {
		return testPage{width: 8, height: 8, samples: 2, bits: 8, more: description(d)}
	}
	px := func(c int, channels string) string {
		return fmt.Sprintf(`<Pixels DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="%d" SizeT="2">%s<TiffData/></Pixels>`, c, channels)
	}
	tests := []struct {
		name     string
		page     func(string) testPage
		image    string
		want     string
		channels []string
		// carried: the Image element describes the samples as the writer
		// writes them (SizeC counting samples, a Channel per channel of
		// the spec), so the document goes with the image; else the
		// element is what New refuses, or leaves out with
		// SkipUnsupported (ErrMetadata), naming what differs.
		carried bool
		says    string
	}{
		{"RGB", rgb, px(3, `<Channel Name="bright" SamplesPerPixel="3"/>`), `"im0" 8x8 Z1 C1 T2 XYZCT uint8 x3: 0:* 1:*`, []string{"bright"}, true, ""},
		{"RGB with SizeC 1", rgb, px(1, ``), `"im0" 8x8 Z1 C1 T2 XYZCT uint8 x3: 0:* 1:*`, nil, false, "Pixels@SizeC"},
		// Three Channels of one sample: the samples are those channels
		// (TestOMERGBSampleBySample).
		{"RGB described sample by sample", rgb, px(3, `<Channel Name="r"/><Channel Name="g"/><Channel Name="b"/>`), `"im0" 8x8 Z1 C3 T2 XYZCT uint8 x1: 0:0 0:1 0:2 1:0 1:1 1:2`,
			[]string{"r", "g", "b"}, true, ""},
		// One Channel of both samples: each sample a channel with its
		// attributes, as the writer stores them (pyramid.OMEImage.Check).
		{"two samples as channels", two, px(2, `<Channel Name="a" SamplesPerPixel="2"/>`), `"im0" 8x8 Z1 C2 T2 XYZCT uint8 x1: 0:0 0:1 1:0 1:1`, []string{"a", "a"},
			true, ""},
		{"two samples as channels, three said", two, px(2, `<Channel Name="a" SamplesPerPixel="3"/>`), `"im0" 8x8 Z1 C2 T2 XYZCT uint8 x1: 0:0 0:1 1:0 1:1`, []string{"a", "a"},
			false, "1 Channel elements"},
		{"two samples, a Channel each", two, px(2, `<Channel Name="a"/><Channel Name="b"/>`), `"im0" 8x8 Z1 C2 T2 XYZCT uint8 x1: 0:0 0:1 1:0 1:1`, []string{"a", "b"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := omeDocument("", tt.image)
			opts := Options{}
			if !tt.carried {
				_, _, err := mapPages(t, opts, tt.page(d), tt.page(""))
				require.ErrorIs(t, err, ErrMetadata)
				var oe *pyramid.OMEError
				require.ErrorAs(t, err, &oe)
				assert.ErrorIs(t, oe, pyramid.ErrOMEConflict)
				assert.ErrorContains(t, err, "the Image element of OME image 0 (Image:0) cannot be carried to the output")
				assert.ErrorContains(t, err, tt.says)
				opts.SkipUnsupported = true
			}
			f, _, err := mapPages(t, opts, tt.page(d), tt.page(""))
			require.NoError(t, err)
			assert.Equal(t, []string{tt.want}, summary(f))
			var names []string
			for _, c := range f.Images[0].Spec.Channels {
				names = append(names, c.Name)
			}
			assert.Equal(t, tt.channels, names)
			assert.Equal(t, tt.carried, f.Images[0].Spec.OME != nil)
			if !tt.carried {
				require.Len(t, f.Skipped, 1)
				assert.ErrorIs(t, f.Skipped[0], ErrMetadata)
				assert.NotErrorIs(t, f.Skipped[0], ErrLeftOut, "the image is kept")
				assert.ErrorContains(t, f.Skipped[0], "without it, the image keeps only its typed metadata")
			}
			// Either way the spec is one the writer takes.
			w, err := pyramid.New(iohandle.NewMemory(), pyramid.Options{})
			require.NoError(t, err)
			_, err = w.AddImage(f.Images[0].Spec)
			assert.NoError(t, err)
			require.NoError(t, w.Abort())
		})
	}
}

// TestOMEPlaneCountOfSamples: a TiffData counting an RGB page's three
// Channels as three planes maps too many, and the error says that a plane
// is a page of all its samples.
func TestOMEPlaneCountOfSamples(t *testing.T) {
	d := omeDocument("", `<Pixels DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="3" SizeT="1">`+
		`<Channel Name="r"/><Channel Name="g"/><Channel Name="b"/><TiffData IFD="0" PlaneCount="3"/></Pixels>`)
	_, _, err := mapPages(t, Options{}, testPage{width: 8, height: 8, samples: 3, bits: 8, more: description(d)})
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, "TiffData 0 maps 3 planes from plane 0 of 1 to pages from 0 of 1 (a plane is a page of 3 samples, however many Channel elements describe them)")
}

// TestOMELengthUnits: "um" and ImageJ's "micron" are read as µm; a unit
// OME does not know is refused, and with SkipUnsupported only that
// physical size is left out, the image and its pixels kept.
func TestOMELengthUnits(t *testing.T) {
	withUnit := func(unit string) string {
		return omeDocument(``, strings.Replace(pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`), `<Pixels `,
			`<Pixels PhysicalSizeX="0.5" PhysicalSizeXUnit="`+unit+`" PhysicalSizeY="0.25" `, 1))
	}
	for _, unit := range []string{"um", "micron", "microns", "\u03bcm"} {
		f, _, err := mapPages(t, Options{SkipUnsupported: true}, grays(1, withUnit(unit))...)
		require.NoError(t, err, unit)
		require.Len(t, f.Images, 1)
		s := f.Images[0].Spec
		assert.Equal(t, [2]float64{0.5, 0.25}, [2]float64{s.PhysicalSizeX, s.PhysicalSizeY}, unit)
		assert.Equal(t, "µm", s.PhysicalSizeXUnit, unit)
	}

	_, _, err := mapPages(t, Options{}, grays(1, withUnit("furlong"))...)
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, `PhysicalSizeXUnit "furlong" is no OME length unit`)

	f, _, err := mapPages(t, Options{SkipUnsupported: true}, grays(1, withUnit("furlong"))...)
	require.NoError(t, err)
	require.Len(t, f.Images, 1, "the image is kept")
	s := f.Images[0].Spec
	assert.Equal(t, [2]float64{0, 0.25}, [2]float64{s.PhysicalSizeX, s.PhysicalSizeY}, "only the size in furlongs left out")
	assert.Empty(t, s.PhysicalSizeXUnit)
	require.NotEmpty(t, f.Skipped)
	assert.ErrorContains(t, f.Skipped[0], `OME image Image:0: PhysicalSizeXUnit "furlong" is no OME length unit (the physical size is left out)`)
	assert.Nil(t, s.OME, "the element, which has the unit, is not carried")
	require.Len(t, f.Skipped, 2)
	assert.ErrorContains(t, f.Skipped[1], `Pixels@PhysicalSizeXUnit (line 1): "furlong" is not an OME length unit`)

	// An image left out is listed once: not for its metadata too.
	left := strings.Replace(withUnit("furlong"), `SizeT="1"><TiffData IFD="0"/>`, `SizeT="100"><TiffData IFD="0"/>`, 1) // more planes than pages
	f, _, err = mapPages(t, Options{SkipUnsupported: true}, grays(2, strings.Replace(left, `</OME>`, `<Image ID="Image:1">`+pixels(1, 1, 1, "XYZCT", `<TiffData IFD="1"/>`)+`</Image></OME>`, 1))...)
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	require.NotEmpty(t, f.Skipped)
	assert.ErrorIs(t, f.Skipped[0], ErrLeftOut)
	for _, s := range f.Skipped {
		assert.NotContains(t, s.Error(), "the physical size is left out", "the image left out has no metadata entry")
	}
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, pyramid.Options{})
	require.NoError(t, err)
	dst, err := w.AddImage(s)
	require.NoError(t, err, "a spec the writer takes")
	require.NoError(t, f.Images[0].WritePlanes(context.Background(), dst, Options{}))
	require.NoError(t, w.Close())
	assert.NotContains(t, string(h.Bytes()), "furlong", "no unit the schema lacks in the output")
	assert.Contains(t, string(h.Bytes()), `PhysicalSizeY="0.25"`)
}

// TestOMERefused checks OME-TIFFs that cannot be mapped: each is refused
// with a typed error naming what, and with SkipUnsupported, the image is
// left out and the others kept.
func TestOMERefused(t *testing.T) {
	good := pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`)
	tests := []struct {
		name  string
		doc   string
		pages int
		is    error
		says  string
		kept  int // images kept with SkipUnsupported; -1: refused even then
		// skipped is the number of errors in File.Skipped then: 2 when
		// the image left out also makes the document one the writer
		// cannot carry.
		skipped int
	}{
		// A document that cannot be read: a plain TIFF with SkipUnsupported,
		// as one cut short (below).
		{"not XML", `<OME>oops</Image></OME>`, 1, ErrMetadata, "OME-XML", 1, 1},
		{"not OME", `<?xml version="1.0"?><Foo>OME>`, 1, ErrMetadata, "OME-XML", 1, 1},
		{"a root other than OME", `<Image></Image><!-- OME>`, 1, ErrMetadata, "the root element is Image", 1, 1},
		{"not UTF-8", strings.Replace(omeDocument(``, good), `Name="im0"`, "Name=\"Zo\xe9\"", 1), 1, ErrMetadata, "invalid UTF-8", 1, 1},
		{"nested too deep", strings.Replace(omeDocument(``, good), `</OME>`, strings.Repeat("<a>", 300)+strings.Repeat("</a>", 300)+`</OME>`, 1), 1, ErrMetadata, "nested deeper than 256", 1, 1},
		{"BinaryOnly", omeDocument(``, good)[:len(omeDocument(``, good))-6] + `<BinaryOnly MetadataFile="a.companion.ome" UUID="urn:uuid:1"/></OME>`, 1, ErrMultiFile, "BinaryOnly", -1, 1},
		{"another file", omeDocument(``, good, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"><UUID FileName="other.ome.tif">urn:uuid:2</UUID></TiffData>`)), 1,
			ErrMultiFile, `"other.ome.tif"`, 1, 1},
		{"a plane missing", omeDocument(``, good, pixels(2, 1, 1, "XYZCT", `<TiffData IFD="1" PlaneCount="1"/>`)), 2, ErrMetadata, "no TiffData maps plane z=1 c=0 t=0", 1, 1},
		{"a page two planes", omeDocument(``, pixels(3, 1, 1, "XYZCT", `<TiffData IFD="0"/><TiffData IFD="4" FirstZ="1" PlaneCount="1"/>`),
			pixels(2, 1, 1, "XYZCT", `<TiffData IFD="1" PlaneCount="2"/>`)), 5, ErrMetadata, "no TiffData maps plane z=2 c=0 t=0", 1, 1},
		{"PlaneCount 0", omeDocument(``, good, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="1" PlaneCount="0"/>`)), 2, ErrMetadata, "PlaneCount 0", 1, 1},
		{"a page past the end", omeDocument(``, good, pixels(1, 1, 2, "XYZCT", `<TiffData IFD="1" PlaneCount="2"/>`)), 2, ErrMetadata, "to pages from 1 of 2", 1, 1},
		{"a first page past the end", omeDocument(``, good, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="7"/>`)), 2, ErrMetadata, "TiffData IFD 7", 1, 1},
		{"a plane outside the sizes", omeDocument(``, good, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="1" FirstT="3"/>`)), 2, ErrMetadata,
			"TiffData 0 starts at FirstZ 0, FirstC 0, FirstT 3, outside Z 1, C 1, T 1", 1, 1},
		{"the last index", omeDocument(``, good, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="1" FirstT="4294967295"/>`)), 2, ErrMetadata,
			"FirstT 4294967295, outside", 1, 1},
		{"more planes than pages", omeDocument(``, good, pixels(100, 100, 100, "XYZCT", `<TiffData/>`)), 2, ErrMetadata, "Z 100 x C 100 x T 100 planes in a file of 2 pages", 1, 1},
		{"wrong size", omeDocument(``, good, strings.Replace(good, `SizeX="8"`, `SizeX="9"`, 1)), 2, ErrMetadata, "SizeX 9", 1, 1},
		{"wrong type", omeDocument(``, good, strings.Replace(good, `uint16`, `float`, 1)), 2, ErrMetadata, `Type "float"`, 1, 1},
		{"bad order", omeDocument(``, good, strings.Replace(good, `XYZCT`, `XYZZZ`, 1)), 2, ErrMetadata, `DimensionOrder "XYZZZ"`, 1, 1},
		// The schema requires DimensionOrder: without it, the order is
		// not known.
		{"no order, planes along two axes", omeDocument(``, good, pixels(2, 2, 1, "", `<TiffData IFD="1"/>`)), 5, ErrMetadata,
			"no DimensionOrder, and Z 2 x C 2 x T 1 planes: the order of its pages is not said", 1, 1},
		{"no order attribute, planes along two axes", omeDocument(``, good, strings.Replace(pixels(1, 2, 2, "", `<TiffData IFD="1"/>`), ` DimensionOrder=""`, ``, 1)), 5, ErrMetadata,
			"no DimensionOrder, and Z 1 x C 2 x T 2 planes", 1, 1},
		{"no order, a TiffData of no plane", omeDocument(``, good, pixels(1, 2, 2, "", `<TiffData IFD="1" PlaneCount="0"/>`)), 5, ErrMetadata, "PlaneCount 0", 1, 1},
		{"no order, a TiffData of two planes", omeDocument(``, good, pixels(1, 2, 2, "", `<TiffData IFD="1" PlaneCount="2"/><TiffData IFD="3" FirstT="1" PlaneCount="2"/>`)), 5, ErrMetadata,
			"no DimensionOrder, and Z 1 x C 2 x T 2 planes", 1, 1},
		{"no TiffData, beside another image", omeDocument(``, good, pixels(1, 1, 1, "XYZCT", ``)), 2, ErrUnsupported, "without TiffData, beside other images", 1, 1},
		{"BinData, beside another image", omeDocument(``, good, pixels(1, 1, 1, "XYZCT", `<BinData/>`)), 2, ErrUnsupported, "BinData: the image's pixels are in the OME-XML", 1, 1},
		{"MetadataOnly, beside another image", omeDocument(``, good, pixels(1, 1, 1, "XYZCT", `<MetadataOnly/>`)), 2, ErrUnsupported, "MetadataOnly: the image's pixels are in no file", 1, 1},
		{"no Pixels", omeDocument(``, good, ``), 2, ErrMetadata, "no Pixels", 1, 2},
		{"a negative index", omeDocument(``, strings.Replace(good, `IFD="0"`, `IFD="-1"`, 1)), 1, ErrMetadata, "OME-XML", 1, 1},
		{"an element of too many attributes", strings.Replace(omeDocument(``, good), `</OME>`, `<StructuredAnnotations><XMLAnnotation ID="Annotation:0"><Value><x`+
			strings.Repeat(` a="1"`, 1025)+`/></Value></XMLAnnotation></StructuredAnnotations></OME>`, 1), 1, pyramid.ErrOMETooLarge, "an element of more than 1024 attributes", 1, 1},
		{"an attribute twice, past 16", omeDocument(``, strings.Replace(good, `IFD="0"`, `IFD="0"`+strings.Repeat(` x="1"`, 1)+manyNamed(16)+` IFD="1"`, 1)), 2, ErrMetadata,
			"element <TiffData> has attribute IFD twice", 1, 1},
		{"an attribute twice", omeDocument(``, strings.Replace(good, `IFD="0"`, `IFD="0" IFD="1"`, 1)), 2, ErrMetadata, "element <TiffData> has attribute IFD twice", 1, 1},
		{"SizeC 0", omeDocument(``, good, pixels(1, 0, 1, "XYZCT", `<TiffData IFD="1"/>`)), 2, ErrMetadata, "Pixels SizeC 0 (the schema's sizes are at least 1)", 1, 1},
		{"no Image", `<?xml version="1.0"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"/>`, 1, ErrMetadata, "the OME-XML describes no Image", -1, 1},
		{"no Image, a prefix", "<?xml version=\"1.0\"?>\n<ome:OME xmlns:ome=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\"\n/>", 1, ErrMetadata, "the OME-XML describes no Image", -1, 1},
		// Read as a plain TIFF with SkipUnsupported, its pages along T.
		{"cut short", omeDocument(``, pixels(3, 1, 1, "XYZCT", `<TiffData/>`))[:150], 3, ErrMetadata, "begins as OME-XML but does not end with the OME element (150 bytes", 1, 1},
		{"cut short after an empty element", omeDocument(``, pixels(3, 1, 1, "XYZCT", `<TiffData/>`))[:len(omeDocument(``, pixels(3, 1, 1, "XYZCT", `<TiffData/>`)))-len(`</Pixels></Image></OME>`)],
			3, ErrMetadata, "begins as OME-XML but does not end with the OME element", 1, 1},
		{"cut short, after a byte order mark", "\uFEFF" + omeDocument(``, pixels(3, 1, 1, "XYZCT", `<TiffData/>`))[:150], 3, ErrMetadata, "begins as OME-XML", 1, 1},
		{"not OME, a long prolog", "<?xml version=\"1.0\"?><!--" + strings.Repeat(" ", 5000) + "--><Foo>OME>", 1, ErrMetadata, "the root element is Foo", 1, 1},
		{"cut short, no OME element yet", `<?xml version="1.0" encoding="UTF-8"?><!-- Warning: this comment is an OME-XML metadata block --><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" `,
			1, ErrMetadata, "begins as OME-XML", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := mapPages(t, Options{}, grays(tt.pages, tt.doc)...)
			require.ErrorIs(t, err, tt.is)
			assert.ErrorContains(t, err, tt.says)
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, grays(tt.pages, tt.doc)...)
			if tt.kept < 0 {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, f.Images, tt.kept)
			require.Len(t, f.Skipped, tt.skipped)
			assert.ErrorIs(t, f.Skipped[0], tt.is)
			for _, im := range f.Images {
				assert.Empty(t, im.Spec.Description, "the document read as a description")
			}
			if tt.skipped > 1 {
				assert.ErrorContains(t, f.Skipped[1], "the OME-XML cannot be carried to the output")
			}
		})
	}
}

// TestOMEEncodingDeclared: an OME-XML that declares an encoding other
// than UTF-8 is read as UTF-8, as Bio-Formats reads it.
func TestOMEEncodingDeclared(t *testing.T) {
	for _, enc := range []string{"UTF-16", "ISO-8859-1", "US-ASCII"} {
		doc := strings.Replace(omeDocument(``, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`)), `encoding="UTF-8"`, `encoding="`+enc+`"`, 1)
		f, _, err := mapPages(t, Options{}, grays(1, doc)...)
		require.NoError(t, err, enc)
		require.Len(t, f.Images, 1)
		assert.Equal(t, "im0", f.Images[0].Spec.Name)
	}
}

// TestOMEImageIndex checks that an image knows its Image element, when
// one before it is left out, and that other kinds have none.
func TestOMEImageIndex(t *testing.T) {
	doc := omeDocument("", pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"><UUID FileName="gone.ome.tif">urn:uuid:2</UUID></TiffData>`),
		pixels(1, 1, 1, "XYZCT", `<TiffData IFD="1"/>`))
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, grays(2, doc)...)
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	assert.Equal(t, 1, f.Images[0].OMEImage)
	f, _, err = mapPages(t, Options{}, gray(8, 8))
	require.NoError(t, err)
	assert.Equal(t, -1, f.Images[0].OMEImage)
}

// TestLevels checks the reduced resolutions each plane's page has in the
// file: the reduced pages following it in the main chain, an SVS's tiled
// levels without its thumbnail, or its SubIFDs.
func TestLevels(t *testing.T) {
	index := func(f *File, pages []*tiff.Page) []int {
		var out []int
		for _, p := range pages {
			for i, q := range f.TIFF.Pages {
				if p == q {
					out = append(out, i)
				}
			}
		}
		return out
	}
	reduced := func(w int) testPage { return gray(w, w, long(tiff.TagNewSubfileType, tiff.SubfileReducedImage)) }
	f, _, err := mapPages(t, Options{}, gray(32, 32), reduced(16), reduced(8), gray(32, 32), reduced(16))
	require.NoError(t, err)
	require.Len(t, f.Images[0].Planes, 2)
	assert.Equal(t, []int{1, 2}, index(f, f.Images[0].Planes[0].Levels))
	assert.Equal(t, []int{4}, index(f, f.Images[0].Planes[1].Levels))

	// Pages marked reduced that are no level of the pyramid (a label and
	// a macro, as some slide writers mark them: of another aspect, or as
	// large as the full page) are read as other pages are, as tifffile
	// reads them; a last level of a pixel or two is a level, and so is a
	// thumbnail of the aspect before the levels.
	levelOf := func(w, h int) testPage { return gray(w, h, long(tiff.TagNewSubfileType, tiff.SubfileReducedImage)) }
	f, _, err = mapPages(t, Options{}, gray(1000, 750), levelOf(125, 94), levelOf(500, 375), levelOf(250, 188), levelOf(2, 1), levelOf(1, 1),
		levelOf(60, 90), levelOf(200, 60), levelOf(1000, 750), levelOf(2, 2))
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 1000x750 Z1 C1 T2 XYCZT uint16 x1: 0:* 8:*`, `"" 60x90 Z1 C1 T1 XYCZT uint16 x1: 6:*`, `"" 200x60 Z1 C1 T1 XYCZT uint16 x1: 7:*`},
		summary(f), "the page as large as the full one is a plane like it")
	assert.Equal(t, []int{1, 2, 3, 4, 5, 9}, index(f, f.Images[0].Planes[0].Levels))
	// Levels padded to whole tiles along one side (Philips): levels; a
	// stripped page so padded is not.
	tiled := func(w, h int) testPage {
		p := levelOf(w, h)
		p.tileW, p.tileH, p.rowsPerStrip = 16, 16, 0
		return p
	}
	f, _, err = mapPages(t, Options{}, gray(100, 30), tiled(64, 16), tiled(32, 16), levelOf(16, 16))
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, index(f, f.Images[0].Planes[0].Levels))
	assert.Len(t, f.Images, 2)
	// A page of other samples marked reduced (a mask after an RGB
	// pyramid) is an image of its own.
	rgbLevel := testPage{width: 50, height: 15, samples: 3, bits: 8, rowsPerStrip: 8, codec: mustCodec(tiff.CompressionLZW), more: long(tiff.TagNewSubfileType, tiff.SubfileReducedImage)}
	rgbFull := rgbLevel
	rgbFull.width, rgbFull.height, rgbFull.more = 100, 30, nil
	f, _, err = mapPages(t, Options{}, rgbFull, rgbLevel, levelOf(25, 8))
	require.NoError(t, err)
	assert.Equal(t, []int{1}, index(f, f.Images[0].Planes[0].Levels))
	assert.Equal(t, []string{`"" 100x30 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"" 25x8 Z1 C1 T1 XYCZT uint16 x1: 2:*`}, summary(f))

	f, _, err = mapPages(t, Options{}, svsPage(64, 48, true, description(svsHead)), svsPage(32, 24, false), svsPage(16, 12, true),
		svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\nlabel 20x30")))
	require.NoError(t, err)
	assert.Equal(t, []int{2}, index(f, f.Images[0].Planes[0].Levels), "the tiled level, not the thumbnail")
	assert.Empty(t, f.Images[1].Planes[0].Levels, "the label has none")

	f = pyramidFile(t, pyramid.ImageSpec{SizeX: 40, SizeY: 40, SizeZ: 2}, pyramid.Options{TileSize: 16})
	for z, p := range f.Images[0].Planes {
		assert.Len(t, p.Levels, 2, "plane %d: 20 x 20 and 10 x 10 in SubIFDs", z)
		assert.Equal(t, p.Page.SubIFDs, p.Levels)
	}
}

// imageJStack is a file of n 8 x 8 uint16 uncompressed images stored one
// after another, as ImageJ stores stacks past 4 GiB: only the first has a
// directory, whose description is d. more changes the first page.
func imageJStack(t testing.TB, n int, d string, more ...func(*ifd.Builder)) ([]byte, [][]byte) {
	t.Helper()
	pages := make([]testPage, n)
	for i := range pages {
		pages[i] = testPage{width: 8, height: 8, samples: 1, bits: 16, rowsPerStrip: 3, seed: i}
	}
	pages[0].more = fields(append([]func(*ifd.Builder){description(d)}, more...)...)
	file, images := fileOf(t, binary.LittleEndian, false, pages...)
	tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	first := tf.Pages[0]
	binary.LittleEndian.PutUint32(file[first.Offset+2+12*int64(len(first.Fields)):], 0) // end the chain at the first page
	return file, images
}

// TestImageJJoined: two ImageJ stacks joined by tiffcp: the first's
// description counts its pages, the stack is read as it says, and the
// pages after it are a further image, not planes of one stack along T.
func TestImageJJoined(t *testing.T) {
	ij := "ImageJ=1.54f\nimages=6\nchannels=2\nslices=3\nhyperstack=true\nspacing=2\nunit=micron\n"
	f, _, err := mapPages(t, Options{}, grays(12, ij)...)
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 8x8 Z3 C2 T1 XYCZT uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`, `"" 8x8 Z1 C1 T6 XYCZT uint16 x1: 6:* 7:* 8:* 9:* 10:* 11:*`}, summary(f))
	assert.Equal(t, 2.0, f.Images[0].Spec.PhysicalSizeZ)
	assert.Zero(t, f.Images[1].Spec.PhysicalSizeZ, "the first stack's calibration")

	// A stack joined after it with its own description is read as that
	// says.
	second := "ImageJ=1.54f\nimages=6\nframes=3\nslices=2\nhyperstack=true\nspacing=9\nunit=nm\n"
	f, _, err = mapPages(t, Options{}, append(grays(6, ij), grays(6, second)...)...)
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 8x8 Z3 C2 T1 XYCZT uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`, `"" 8x8 Z2 C1 T3 XYCZT uint16 x1: 6:* 7:* 8:* 9:* 10:* 11:*`}, summary(f))
	assert.Equal(t, [2]any{9.0, "nm"}, [2]any{f.Images[1].Spec.PhysicalSizeZ, f.Images[1].Spec.PhysicalSizeZUnit})
}

// TestImageJContiguous reads the planes of an ImageJ stack stored past its
// one directory, and refuses a stack that does not hold what its
// description counts, or keeps what it holds with SkipUnsupported.
func TestImageJContiguous(t *testing.T) {
	file, images := imageJStack(t, 6, "ImageJ=1.54f\nimages=6\nchannels=2\nslices=3\nhyperstack=true\n")
	f, err := mapFile(t, file, "stack.tif", Options{})
	require.NoError(t, err)
	require.Len(t, f.TIFF.Pages, 1)
	require.Len(t, f.Images, 1)
	s := f.Images[0].Spec
	assert.Equal(t, [3]int{3, 2, 1}, [3]int{s.SizeZ, s.SizeC, s.SizeT})
	require.Len(t, f.Images[0].Planes, 6)
	for k, p := range f.Images[0].Planes {
		assert.Equal(t, images[k], planePixels(t, p), "plane %d", k)
	}

	tests := []struct {
		name  string
		file  []byte
		is    error
		says  string
		pages int // kept with SkipUnsupported
	}{
		{"more images than the file holds", first(imageJStack(t, 3, "ImageJ=1.54f\nimages=1000\n")), ErrMetadata, "past the end", 1},
		{"compressed", first(imageJStack(t, 3, "ImageJ=1.54f\nimages=3\n", short(tiff.TagCompression, tiff.CompressionDeflate))),
			ErrMetadata, "is compressed", 1},
		{"strips with a gap", first(imageJStack(t, 3, "ImageJ=1.54f\nimages=3\n", func(b *ifd.Builder) {
			e, _ := b.Get(tiff.TagStripOffsets)
			v, _ := e.Uints()
			b.Remove(tiff.TagStripOffsets)
			b.AddLong(tiff.TagStripOffsets, uint32(v[0]), uint32(v[1]+2), uint32(v[2]))
		})), ErrMetadata, "not right after block 0", 1},
		{"pages that are not the whole stack", first(mapPagesFile(t, grays(2, "ImageJ=1.54f\nimages=6\n")...)), ErrMetadata,
			"the ImageJ description (images=6) says 6 planes, and the file holds 2 pages of the first page's size and type", 2},
		{"more images than the file could hold", first(imageJStack(t, 1, "ImageJ=1.54f\nimages=100000000\n")), ErrSize, "says 100000000 planes of 3 blocks each", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mapFile(t, tt.file, "stack.tif", Options{})
			require.ErrorIs(t, err, tt.is)
			assert.ErrorContains(t, err, tt.says)

			f, err := mapFile(t, tt.file, "stack.tif", Options{SkipUnsupported: true})
			require.NoError(t, err)
			require.Len(t, f.Skipped, 1)
			assert.ErrorIs(t, f.Skipped[0], tt.is)
			assert.Len(t, f.Images[0].Planes, tt.pages)
			if !strings.Contains(tt.name, "compressed") && !strings.Contains(tt.name, "gap") {
				// The pages the file holds are kept; the description's count
				// of planes is what is lost.
				assert.ErrorIs(t, f.Skipped[0], ErrNotCarried)
			}
		})
	}
}

// TestShapedTruncated reads a shaped series tifffile truncated to its first
// directory, its other planes stored after that one's data.
func TestShapedTruncated(t *testing.T) {
	file, images := imageJStack(t, 5, `{"axes": "ZYX", "truncated": true, "shape": [5, 8, 8]}`)
	f, err := mapFile(t, file, "shaped.tif", Options{})
	require.NoError(t, err)
	s := f.Images[0].Spec
	assert.Equal(t, [3]int{5, 1, 1}, [3]int{s.SizeZ, s.SizeC, s.SizeT})
	for k, p := range f.Images[0].Planes {
		assert.Equal(t, images[k], planePixels(t, p), "plane %d", k)
	}
	file, _ = imageJStack(t, 1, `{"axes": "ZYX", "truncated": true, "shape": [50, 8, 8]}`)
	_, err = mapFile(t, file, "shaped.tif", Options{})
	assert.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, `tifffile's description (shape [50 8 8], axes "ZYX") says 50 planes, and the file holds 1 page of the first page's size and type`)
}

// TestStoredAfterCost: what the pages stored after a page's data would
// cost counts the planes each makes: a page of 64 samples, each a plane,
// repeated 200 times in a file of about 200 KB, is refused.
func TestStoredAfterCost(t *testing.T) {
	p := testPage{width: 1, height: 1, samples: 64, bits: 8, planar: true}
	pages := make([]testPage, 200)
	for i := range pages {
		pages[i] = p
	}
	pages[0].more = description(`{"shape": [200, 64, 1, 1], "axes": "QCYX"}`)
	file, _ := fileOf(t, binary.LittleEndian, false, pages...)
	tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	first := tf.Pages[0]
	binary.LittleEndian.PutUint32(file[first.Offset+2+12*int64(len(first.Fields)):], 0) // one directory
	_, err = mapFile(t, file, "cost.tif", Options{})
	require.ErrorIs(t, err, ErrSize)
	assert.ErrorContains(t, err, "says 200 planes of 64 blocks each")
}

// first returns the first of two values.
func first[A, B any](a A, _ B) A { return a }

// mapPagesFile stores the pages as mapPages does, without mapping them.
func mapPagesFile(t *testing.T, pages ...testPage) ([]byte, [][]byte) {
	return fileOf(t, binary.LittleEndian, false, pages...)
}

// TestImageJPalette: ImageJ's palette pages (an 8-bit image shown through a
// lookup table) are read as their indices, the table's highest colour the
// channel's; palette pages of other files are read as their colours
// (TestPaletteColours).
func TestImageJPalette(t *testing.T) {
	lut := make([]uint16, 3*256)
	for i := range 256 {
		lut[256+i] = uint16(i * 257) // ImageJ's "Green"
	}
	page := func(more ...func(*ifd.Builder)) testPage {
		more = append(more, short(tiff.TagPhotometricInterpretation, tiff.PhotometricPalette), short(tiff.TagColorMap, lut...))
		return testPage{width: 8, height: 8, samples: 1, bits: 8, more: fields(more...)}
	}
	file, images := fileOf(t, binary.LittleEndian, false, page(description("ImageJ=1.54f\nimages=2\nslices=2\n")), page())
	f, err := mapFile(t, file, "lut.tif", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 8x8 Z2 C1 T1 XYCZT uint8 x1: 0:* 1:*`}, summary(f))
	require.Len(t, f.Images[0].Spec.Channels, 1)
	assert.Equal(t, color.NRGBA{0, 255, 0, 255}, f.Images[0].Spec.Channels[0].Color)
	for k, p := range f.Images[0].Planes {
		assert.Equal(t, images[k], planePixels(t, p), "plane %d: the indices", k)
	}
}

// TestOMEPalette: the palette pages of an OME-TIFF are read as their
// indices, as its Pixels describe them and Bio-Formats reads them (they
// were refused), with a note that the ColorMap is not kept; written, the
// planes hold the indices.
func TestOMEPalette(t *testing.T) {
	lut := make([]uint16, 3*256)
	for i := range lut {
		lut[i] = uint16(i * 4099)
	}
	palette := fields(short(tiff.TagPhotometricInterpretation, tiff.PhotometricPalette), short(tiff.TagColorMap, lut...))
	doc := omeDocument("", `<Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="2" SizeC="1" SizeT="1"><TiffData/></Pixels>`)
	first := testPage{width: 8, height: 8, samples: 1, bits: 8, more: fields(palette, description(doc))}
	second := testPage{width: 8, height: 8, samples: 1, bits: 8, seed: 1, more: palette}
	file, images := fileOf(t, binary.LittleEndian, false, first, second)
	f, err := mapFile(t, file, "palette.ome.tif", Options{})
	require.NoError(t, err)
	assert.Equal(t, OMETIFF, f.Kind)
	assert.Equal(t, []string{`"im0" 8x8 Z2 C1 T1 XYZCT uint8 x1: 0:* 1:*`}, summary(f))
	assert.Contains(t, f.Images[0].Notes, "palette pages: their indices are written, as the Pixels describe them and Bio-Formats reads them; "+
		"the ColorMap is not kept (OME has no lookup table)")
	out := convert(t, f, pyramid.Options{TileSize: 16}, Options{})
	back, err := mapFile(t, out, "", Options{})
	require.NoError(t, err)
	for k, pl := range back.Images[0].Planes {
		assert.Equal(t, images[k], planePixels(t, pl), "plane %d: the indices", k)
	}
}

// TestMaskLevels: the reduced pages of a COG with an internal mask (image,
// mask, the image's overviews, then the mask's, as GDAL writes them) are
// the levels of the page of their kind.
func TestMaskLevels(t *testing.T) {
	subfile := func(v uint32) func(*ifd.Builder) { return long(tiff.TagNewSubfileType, v) }
	f, _, err := mapPages(t, Options{},
		gray(32, 16), gray(32, 16, subfile(tiff.SubfileMask)),
		gray(16, 8, subfile(tiff.SubfileReducedImage)), gray(8, 4, subfile(tiff.SubfileReducedImage)),
		gray(16, 8, subfile(tiff.SubfileReducedImage|tiff.SubfileMask)), gray(8, 4, subfile(tiff.SubfileReducedImage|tiff.SubfileMask)))
	require.NoError(t, err)
	require.Len(t, f.Images, 2)
	pages := f.TIFF.Pages
	assert.Equal(t, []*tiff.Page{pages[2], pages[3]}, f.Images[0].Planes[0].Levels, "the image's overviews")
	assert.Equal(t, []*tiff.Page{pages[4], pages[5]}, f.Images[1].Planes[0].Levels, "the mask's")
}

// TestShapedMapping: tifffile's JSON description of a shaped series spreads
// the pages over Z, C and T in its axes' order, when they say so
// unambiguously; otherwise the pages stay along T.
func TestShapedMapping(t *testing.T) {
	two := testPage{width: 8, height: 8, samples: 2, bits: 8}
	planar2 := testPage{width: 8, height: 8, samples: 2, bits: 8, planar: true}
	rgb := testPage{width: 8, height: 8, samples: 3, bits: 8, planar: true, more: short(tiff.TagPhotometricInterpretation, tiff.PhotometricRGB)}
	withDescription := func(p testPage, d string, n int) []testPage {
		first := p
		first.more = description(d)
		if p.more != nil {
			first.more = fields(description(d), p.more)
		}
		out := []testPage{first}
		for range n - 1 {
			out = append(out, p)
		}
		return out
	}
	tests := []struct {
		name  string
		pages []testPage
		want  string
	}{
		{"Z then C", grays(6, `{"axes": "ZCYX", "shape": [2, 3, 8, 8]}`), `"" 8x8 Z2 C3 T1 XYCZT uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`},
		{"C then Z", grays(6, `{"axes": "CZYX", "shape": [2, 3, 8, 8]}`), `"" 8x8 Z3 C2 T1 XYZCT uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`},
		{"one axis", grays(3, `{"shape": [3, 8, 8], "axes": "ZYX", "other": {"k": [1]}}`), `"" 8x8 Z3 C1 T1 XYCZT uint16 x1: 0:* 1:* 2:*`},
		{"axes of size 1", grays(2, `{"axes": "QTCYX", "shape": [1, 2, 1, 8, 8]}`), `"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 1:*`},
		{"samples as channels", withDescription(two, `{"axes": "TCYX", "shape": [3, 2, 8, 8]}`, 3), `"" 8x8 Z1 C2 T3 XYCTZ uint8 x1: 0:0 0:1 1:0 1:1 2:0 2:1`},
		{"planar RGB samples along Z", withDescription(rgb, `{"axes": "TZYX", "shape": [2, 3, 8, 8]}`, 2), `"" 8x8 Z3 C1 T2 XYZTC uint8 x1: 0:0 0:1 0:2 1:0 1:1 1:2`},
		{"RGB samples", withDescription(rgb, `{"axes": "ZYXS", "shape": [2, 8, 8, 3]}`, 2), `"" 8x8 Z2 C1 T1 XYCZT uint8 x3: 0:* 1:*`},
		{"unknown axis", grays(2, `{"axes": "QYX", "shape": [2, 8, 8]}`), `"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 1:*`},
		{"an axis OME lacks along T", grays(6, `{"axes": "QCZYX", "shape": [2, 1, 3, 8, 8]}`), `"" 8x8 Z3 C1 T2 XYZTC uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`},
		{"two axes OME lacks, next to one another, along T", grays(8, `{"axes": "QRZYX", "shape": [2, 2, 2, 8, 8]}`),
			`"" 8x8 Z2 C1 T4 XYZTC uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:* 6:* 7:*`},
		{"an axis OME lacks beside T", grays(4, `{"axes": "TQYX", "shape": [2, 2, 8, 8]}`), `"" 8x8 Z1 C1 T4 XYCZT uint16 x1: 0:* 1:* 2:* 3:*`},
		{"axes OME lacks, apart, along T", grays(8, `{"axes": "QZRYX", "shape": [2, 2, 2, 8, 8]}`), `"" 8x8 Z2 C1 T4 XYTZC uint16 x1: 0:* 1:* 4:* 5:* 2:* 3:* 6:* 7:*`},
		// tifffile's axes of a stage position (Q) over a time-lapse of
		// channels, which went along T whole before.
		{"an axis OME lacks before T and C", grays(24, `{"axes": "QTCYX", "shape": [3, 2, 4, 8, 8]}`),
			`"" 8x8 Z1 C4 T6 XYCTZ uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:* 6:* 7:* 8:* 9:* 10:* 11:* 12:* 13:* 14:* 15:* 16:* 17:* 18:* 19:* 20:* 21:* 22:* 23:*`},
		{"an axis OME lacks after T and C", grays(12, `{"axes": "TCQYX", "shape": [2, 2, 3, 8, 8]}`),
			`"" 8x8 Z1 C2 T6 XYTCZ uint16 x1: 0:* 1:* 2:* 6:* 7:* 8:* 3:* 4:* 5:* 9:* 10:* 11:*`},
		{"an axis OME lacks between T and Z", grays(8, `{"axes": "TPZYX", "shape": [2, 2, 2, 8, 8]}`),
			`"" 8x8 Z2 C1 T4 XYZTC uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:* 6:* 7:*`},
		{"C twice", grays(4, `{"axes": "CQCYX", "shape": [2, 1, 2, 8, 8]}`), `"" 8x8 Z1 C1 T4 XYCZT uint16 x1: 0:* 1:* 2:* 3:*`},
		{"no axes", grays(2, `{"shape": [2, 8, 8]}`), `"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 1:*`},
		{"sizes that do not multiply to the pages", grays(6, `{"axes": "ZYX", "shape": [5, 8, 8]}`), `"" 8x8 Z1 C1 T6 XYCZT uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`},
		{"an axis twice", grays(6, `{"axes": "ZZYX", "shape": [2, 3, 8, 8]}`), `"" 8x8 Z1 C1 T6 XYCZT uint16 x1: 0:* 1:* 2:* 3:* 4:* 5:*`},
		{"axes that are not the page's", grays(2, `{"axes": "ZXY", "shape": [2, 8, 8]}`), `"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 1:*`},
		{"not JSON", grays(2, `{"axes": "ZYX", `), `"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 1:*`},
		{"no axes (tifffile's default), RGB", withDescription(rgb, `{"shape": [2, 3, 8, 8]}`, 2), `"" 8x8 Z1 C1 T2 XYCZT uint8 x3: 0:* 1:*`},
		{"no axes, samples as channels", withDescription(planar2, `{"shape": [3, 2, 8, 8]}`, 3), `"" 8x8 Z1 C2 T3 XYCTZ uint8 x1: 0:0 0:1 1:0 1:1 2:0 2:1`},
		{"planar RGB samples along T, beside an axis OME lacks", withDescription(rgb, `{"axes": "QTYX", "shape": [2, 3, 8, 8]}`, 2),
			`"" 8x8 Z1 C1 T6 XYCZT uint8 x1: 0:0 0:1 0:2 1:0 1:1 1:2`},
		{"planar RGB samples along Z, the other axes unmapped", withDescription(rgb, `{"axes": "TQZYX", "shape": [2, 2, 3, 8, 8]}`, 4),
			`"" 8x8 Z3 C1 T4 XYZTC uint8 x1: 0:0 0:1 0:2 1:0 1:1 1:2 2:0 2:1 2:2 3:0 3:1 3:2`},
		{"Y and X not the page's", grays(2, `{"axes": "ZYX", "shape": [2, 8, 9]}`), `"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 1:*`},
		{"contiguous samples as channels after YX", withDescription(two, `{"axes": "ZYXC", "shape": [3, 8, 8, 2]}`, 3), `"" 8x8 Z3 C2 T1 XYCZT uint8 x1: 0:0 0:1 1:0 1:1 2:0 2:1`},
		{"samples along an axis OME lacks", withDescription(two, `{"axes": "ZYXR", "shape": [3, 8, 8, 2]}`, 3), `"" 8x8 Z3 C2 T1 XYCZT uint8 x1: 0:0 0:1 1:0 1:1 2:0 2:1`},
		// Samples after an axis C are channels within each of its
		// channels, C x S, as an OME-TIFF of such pages counts them (the
		// pages went along T, noted as axes that do not fit).
		{"C then samples", withDescription(two, `{"axes": "ZCYXS", "shape": [2, 3, 8, 8, 2]}`, 6),
			`"" 8x8 Z2 C6 T1 XYCZT uint8 x1: 0:0 0:1 1:0 1:1 2:0 2:1 3:0 3:1 4:0 4:1 5:0 5:1`},
		{"C, Z, then samples", withDescription(two, `{"axes": "CZYXS", "shape": [3, 2, 8, 8, 2]}`, 6),
			`"" 8x8 Z2 C6 T1 XYCZT uint8 x1: 0:0 0:1 2:0 2:1 4:0 4:1 1:0 1:1 3:0 3:1 5:0 5:1`},
	}
	// What the mapping reads otherwise than the axes say is noted: axes
	// OME lacks put along T, axes that do not fit.
	notes := map[string]string{
		"unknown axis":              "tifffile's axes QYX (shape [2 8 8]): Q (2) put along T, as OME has no such axis",
		"an axis OME lacks along T": "tifffile's axes QCZYX (shape [2 1 3 8 8]): Q (2) put along T, as OME has no such axis",
		"two axes OME lacks, next to one another, along T":     "tifffile's axes QRZYX (shape [2 2 2 8 8]): Q (2), R (2) put along T, as OME has no such axis",
		"an axis OME lacks beside T":                           "tifffile's axes TQYX (shape [2 2 8 8]): Q (2) put along T, as OME has no such axis",
		"axes OME lacks, apart, along T":                       "tifffile's axes QZRYX (shape [2 2 2 8 8]): Q (2), R (2) put along T, as OME has no such axis",
		"an axis OME lacks before T and C":                     "tifffile's axes QTCYX (shape [3 2 4 8 8]): Q (3) put along T, as OME has no such axis",
		"an axis OME lacks after T and C":                      "tifffile's axes TCQYX (shape [2 2 3 8 8]): Q (3) put along T, as OME has no such axis",
		"an axis OME lacks between T and Z":                    "tifffile's axes TPZYX (shape [2 2 2 8 8]): P (2) put along T, as OME has no such axis",
		"C twice":                                              "tifffile's axes CQCYX (shape [2 1 2 8 8]) do not fit its 4 pages: they go along T",
		"sizes that do not multiply to the pages":              "tifffile's axes ZYX (shape [5 8 8]) do not fit its 6 pages: they go along T",
		"an axis twice":                                        "tifffile's axes ZZYX (shape [2 3 8 8]) do not fit its 6 pages: they go along T",
		"axes that are not the page's":                         "tifffile's axes ZXY (shape [2 8 8]) do not fit its 2 pages: they go along T",
		"planar RGB samples along T, beside an axis OME lacks": "tifffile's axes QTYX (shape [2 3 8 8]): Q (2) put along T, as OME has no such axis",
		"planar RGB samples along Z, the other axes unmapped":  "tifffile's axes TQZYX (shape [2 2 3 8 8]): Q (2) put along T, as OME has no such axis",
		"Y and X not the page's":                               "tifffile's axes ZYX (shape [2 8 9]) do not fit its 2 pages: they go along T",
		"samples along an axis OME lacks":                      "tifffile's axes ZYXR (shape [3 8 8 2]): R (2), the samples of each page, put along C, as OME has no such axis",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, tt.pages...)
			require.NoError(t, err)
			assert.Equal(t, []string{tt.want}, summary(f))
			var want []string
			if n, ok := notes[tt.name]; ok {
				want = []string{n}
			}
			assert.Equal(t, want, f.Images[0].Notes)
		})
	}
	noAxes := append(grays(2, `{"shape": [2, 8, 8]}`), grays(3, `{"shape": [3, 8, 8]}`)...)
	f, _, err := mapPages(t, Options{}, noAxes...)
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 8x8 Z1 C1 T2 XYCZT uint16 x1: 0:* 1:*`, `"" 8x8 Z1 C1 T3 XYCZT uint16 x1: 2:* 3:* 4:*`}, summary(f),
		"two series without axes: two images")
	series := append(grays(2, `{"axes": "ZYX", "shape": [2, 8, 8]}`), grays(3, `{"axes": "TYX", "shape": [3, 8, 8]}`)...)
	f, _, err = mapPages(t, Options{}, series...)
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 8x8 Z2 C1 T1 XYCZT uint16 x1: 0:* 1:*`, `"" 8x8 Z1 C1 T3 XYCZT uint16 x1: 2:* 3:* 4:*`}, summary(f),
		"two series of one shape: two images, as tifffile reads them")
}

// TestOMERGBSampleBySample: RGB pages whose document describes them as
// three Channels of one sample each (SizeC 3) are read as those three
// channels, each a sample of the page, and the Image element is carried;
// described as one Channel of three samples, they stay RGB.
func TestOMERGBSampleBySample(t *testing.T) {
	rgb := func(d string) testPage {
		return testPage{width: 8, height: 8, samples: 3, bits: 16, rowsPerStrip: 8, codec: mustCodec(tiff.CompressionLZW),
			more: fields(description(d), short(tiff.TagPhotometricInterpretation, tiff.PhotometricRGB))}
	}
	channels := `<Channel ID="Channel:0:0" Name="R" SamplesPerPixel="1"/><Channel ID="Channel:0:1" Name="G" SamplesPerPixel="1"/><Channel ID="Channel:0:2" Name="B"/><TiffData/>`
	f, _, err := mapPages(t, Options{}, rgb(omeDocument(``, pixels(1, 3, 1, "XYCZT", channels))))
	require.NoError(t, err)
	assert.Equal(t, []string{`"im0" 8x8 Z1 C3 T1 XYCZT uint16 x1: 0:0 0:1 0:2`}, summary(f))
	assert.NotNil(t, f.Images[0].Spec.OME, "the Image element is carried")
	assert.Equal(t, []pyramid.Channel{{Name: "R"}, {Name: "G"}, {Name: "B"}}, f.Images[0].Spec.Channels)
	assert.Empty(t, f.Skipped)

	// JPEG pages stay RGB, their tiles copied: apart they would be
	// encoded again, lossless, many times larger.
	jpegCodec, err := compress.NewJPEG(compress.Format{SamplesPerPixel: 3}, 16, compress.JPEGOptions{Color: compress.JPEGRGB})
	require.NoError(t, err)
	jpegRGB := testPage{width: 32, height: 16, samples: 3, bits: 8, tileW: 16, tileH: 16, codec: jpegCodec,
		more: fields(description(strings.ReplaceAll(omeDocument(``, pixels(1, 3, 1, "XYCZT", channels)), `Type="uint16" SizeX="8" SizeY="8"`, `Type="uint8" SizeX="32" SizeY="16"`)),
			short(tiff.TagPhotometricInterpretation, tiff.PhotometricRGB))}
	f, _, err = mapPages(t, Options{SkipUnsupported: true}, jpegRGB)
	require.NoError(t, err)
	assert.Equal(t, []string{`"im0" 32x16 Z1 C1 T1 XYCZT uint8 x3: 0:*`}, summary(f))

	one := `<Channel ID="Channel:0:0" Name="RGB" SamplesPerPixel="3"/><TiffData/>`
	f, _, err = mapPages(t, Options{}, rgb(omeDocument(``, pixels(1, 3, 1, "XYCZT", one))))
	require.NoError(t, err)
	assert.Equal(t, []string{`"im0" 8x8 Z1 C1 T1 XYCZT uint16 x3: 0:*`}, summary(f))
	assert.NotNil(t, f.Images[0].Spec.OME)
}

// TestOMEPagesInNoTiffData: pages no TiffData places, as in the OME-TIFF
// specification's own examples, are noted and not converted, as the
// specification has readers ignore them; a reduced page is no such page.
func TestOMEPagesInNoTiffData(t *testing.T) {
	doc := omeDocument(``, pixels(1, 1, 2, "XYZCT", `<TiffData IFD="1" PlaneCount="1"/><TiffData IFD="4" FirstT="1" PlaneCount="1"/>`))
	pages := grays(12, doc)
	pages[3].more = fields(long(tiff.TagNewSubfileType, tiff.SubfileReducedImage))
	f, _, err := mapPages(t, Options{}, pages...)
	require.NoError(t, err)
	assert.Equal(t, []string{`"im0" 8x8 Z1 C1 T2 XYZCT uint16 x1: 1:* 4:*`}, summary(f))
	assert.Empty(t, f.Skipped)
	assert.Equal(t, []string{"9 pages (0, 2, 5-11) of the OME-TIFF, in no image's TiffData, not converted: ignored, as the OME-TIFF specification asks"}, f.Notes)
	f, _, err = mapPages(t, Options{}, grays(2, omeDocument(``, pixels(1, 1, 2, "XYZCT", `<TiffData/>`)))...)
	require.NoError(t, err)
	assert.Empty(t, f.Notes, "every page placed")
	// Nor is the order of one plane noted when the document leaves it out.
	f, _, err = mapPages(t, Options{}, grays(1, omeDocument(``, pixels(1, 1, 1, "", `<TiffData/>`)))...)
	require.NoError(t, err)
	assert.Empty(t, f.Images[0].Notes)
}

// TestOMECommentAfter: OME-XML followed by a comment is OME-XML, as
// Bio-Formats reads it; one cut short is refused (TestOMERefused).
func TestOMECommentAfter(t *testing.T) {
	doc := omeDocument("", pixels(2, 1, 1, "XYZCT", `<TiffData/>`)) + "\n<!-- written by a tool -->\n"
	f, _, err := mapPages(t, Options{}, grays(2, doc)...)
	require.NoError(t, err)
	assert.Equal(t, OMETIFF, f.Kind)
	assert.Equal(t, []string{`"im0" 8x8 Z2 C1 T1 XYZCT uint16 x1: 0:* 1:*`}, summary(f))
}

// ijMetadata returns the fields of ImageJ's metadata blocks: a header of
// the kinds given (each kind and its blocks), in the byte order.
func ijMetadata(order binary.AppendByteOrder, blocks map[string][][]byte, kinds ...string) func(*ifd.Builder) {
	magic := "IJIJ"
	if order.String() == binary.LittleEndian.String() {
		magic = "JIJI"
	}
	data := []byte(magic)
	for _, k := range kinds {
		data = order.AppendUint32(data, binary.BigEndian.Uint32([]byte(k)))
		data = order.AppendUint32(data, uint32(len(blocks[k])))
	}
	counts := []uint32{uint32(len(data))}
	for _, k := range kinds {
		for _, b := range blocks[k] {
			data, counts = append(data, b...), append(counts, uint32(len(b)))
		}
	}
	return func(b *ifd.Builder) {
		b.AddLong(tiff.TagIJMetadataByteCounts, counts...)
		b.AddByte(tiff.TagIJMetadata, data...)
	}
}

// TestImageJText: the Info (the first), properties and labels of an
// ImageJ page's metadata (UTF-16 in the blocks' byte order) go to the map
// annotation; empty labels do not, nor labels past the stack's planes,
// nor properties past maxImageJProperties.
func TestImageJText(t *testing.T) {
	d := "ImageJ=1.54f\nimages=3\nslices=3\n"
	for _, order := range []binary.AppendByteOrder{binary.BigEndian, binary.LittleEndian} {
		text := func(s string) []byte {
			var b []byte
			for _, u := range utf16.Encode([]rune(s)) {
				b = order.AppendUint16(b, u)
			}
			return b
		}
		blocks := map[string][][]byte{"info": {text("Objective = 40x\nµm = 1"), text("a second Info, which ImageJ does not read")}, "prop": {text("Exposure"), text("100 ms"), text("Gain"), text("2"), text("Empty"), {}},
			"labl": {text("first.tif"), {}, text("third 𝄞.tif"), text("a fourth, of no plane")}, "rang": {make([]byte, 16)}}
		first := gray(8, 8, description(d), ijMetadata(order, blocks, "info", "labl", "rang", "prop"))
		f, _, err := mapPages(t, Options{}, first, gray(8, 8), gray(8, 8))
		require.NoError(t, err)
		assert.Equal(t, []pyramid.KeyValue{{Key: "Info", Value: "Objective = 40x\nµm = 1"}, {Key: "Exposure", Value: "100 ms"}, {Key: "Gain", Value: "2"}, {Key: "Empty"},
			{Key: "Label 1", Value: "first.tif"}, {Key: "Label 3", Value: "third 𝄞.tif"}}, f.Images[0].Spec.Annotations, "%v", order)
	}
	// Properties past maxImageJProperties are not read: the file is
	// refused, or read without them and said with SkipUnsupported.
	var props [][]byte
	for i := range maxImageJProperties + 10 {
		props = append(props, []byte{0, 'k'}, binary.BigEndian.AppendUint16(nil, uint16('0'+i%10)))
	}
	first := gray(8, 8, description(d), ijMetadata(binary.BigEndian, map[string][][]byte{"prop": props}, "prop"))
	_, _, err := mapPages(t, Options{}, first, gray(8, 8), gray(8, 8))
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, "4106 properties, and only the first 4096")
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, first, gray(8, 8), gray(8, 8))
	require.NoError(t, err)
	assert.Len(t, f.Images[0].Spec.Annotations, maxImageJProperties)
	require.Len(t, f.Skipped, 1)
	assert.ErrorIs(t, f.Skipped[0], ErrNotCarried)
	assert.NotErrorIs(t, f.Skipped[0], ErrLeftOut)
	// As many as are kept: nothing said.
	first = gray(8, 8, description(d), ijMetadata(binary.BigEndian, map[string][][]byte{"prop": props[:2*maxImageJProperties]}, "prop"))
	f, _, err = mapPages(t, Options{}, first, gray(8, 8), gray(8, 8))
	require.NoError(t, err)
	assert.Len(t, f.Images[0].Spec.Annotations, maxImageJProperties)
	assert.Empty(t, f.Skipped)

	// Text past maxImageJText is not read (the output's OME-XML would
	// pass what this package reads): refused, or said with
	// SkipUnsupported; the text before it is kept.
	huge := bytes.Repeat([]byte{0, 'a'}, maxImageJText+1)
	first = gray(8, 8, description(d), ijMetadata(binary.BigEndian, map[string][][]byte{"prop": {[]byte{0, 'k'}, []byte{0, 'v'}, []byte{0, 'K'}, huge}}, "prop"))
	_, _, err = mapPages(t, Options{}, first, gray(8, 8), gray(8, 8))
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, fmt.Sprintf("kept to %d bytes: %d characters of it past those are left out", maxImageJText, maxImageJText+1))
	f, _, err = mapPages(t, Options{SkipUnsupported: true}, first, gray(8, 8), gray(8, 8))
	require.NoError(t, err)
	assert.Equal(t, []pyramid.KeyValue{{Key: "k", Value: "v"}, {Key: "K"}}, f.Images[0].Spec.Annotations)
	require.Len(t, f.Skipped, 1)
	assert.ErrorIs(t, f.Skipped[0], ErrNotCarried)
	// A key left out takes its value with it, counted.
	first = gray(8, 8, description(d), ijMetadata(binary.BigEndian, map[string][][]byte{"prop": {huge, []byte{0, 'v', 0, 'w'}}}, "prop"))
	_, _, err = mapPages(t, Options{}, first, gray(8, 8), gray(8, 8))
	assert.ErrorContains(t, err, fmt.Sprintf("%d characters of it past those are left out", maxImageJText+3))
}

// lut is an ImageJ lookup table from black to the colour.
func lut(r, g, b byte) []byte {
	out := make([]byte, 768)
	for i := range 256 {
		out[i], out[256+i], out[512+i] = byte(int(r)*i/255), byte(int(g)*i/255), byte(int(b)*i/255)
	}
	return out
}

// TestImageJLUTs: the lookup tables of a composite image's ImageJ metadata
// give its channels' colours, in either byte order, after blocks of other
// kinds; metadata that does not add up gives none.
func TestImageJLUTs(t *testing.T) {
	d := "ImageJ=1.54f\nimages=4\nchannels=2\nslices=2\nhyperstack=true\nmode=composite\n"
	blocks := map[string][][]byte{"labl": {[]byte("a\x00"), []byte("b\x00"), {}, []byte("d\x00")}, "luts": {lut(0, 255, 0), lut(255, 0, 255)}, "rang": {make([]byte, 32)}}
	want := []color.Color{color.NRGBA{0, 255, 0, 255}, color.NRGBA{255, 0, 255, 255}}
	for _, order := range []binary.AppendByteOrder{binary.BigEndian, binary.LittleEndian} {
		f, _, err := mapPages(t, Options{}, grays(4, d)[0], gray(8, 8), gray(8, 8), gray(8, 8))
		require.NoError(t, err)
		assert.Empty(t, f.Images[0].Spec.Channels, "no metadata, no colours")

		first := gray(8, 8, description(d), ijMetadata(order, blocks, "labl", "rang", "luts"))
		f, _, err = mapPages(t, Options{}, first, gray(8, 8), gray(8, 8), gray(8, 8))
		require.NoError(t, err)
		var got []color.Color
		for _, c := range f.Images[0].Spec.Channels {
			got = append(got, c.Color)
		}
		assert.Equal(t, want, got, "%v", order)
	}
	bad := map[string]func(*ifd.Builder){
		"more blocks than counts": func(b *ifd.Builder) {
			ijMetadata(binary.BigEndian, blocks, "luts")(b)
			b.Remove(tiff.TagIJMetadataByteCounts)
			b.AddLong(tiff.TagIJMetadataByteCounts, 12, 768)
		},
		"a count past the data": func(b *ifd.Builder) {
			ijMetadata(binary.BigEndian, blocks, "luts")(b)
			b.Remove(tiff.TagIJMetadataByteCounts)
			b.AddLong(tiff.TagIJMetadataByteCounts, 12, 768, 1<<31)
		},
		"another magic": func(b *ifd.Builder) {
			ijMetadata(binary.BigEndian, blocks, "luts")(b)
			e, _ := b.Get(tiff.TagIJMetadata)
			v := slices.Clone(e.Value)
			copy(v, "XXXX")
			b.Remove(tiff.TagIJMetadata)
			b.AddByte(tiff.TagIJMetadata, v...)
		},
		"one table for two channels": ijMetadata(binary.BigEndian, map[string][][]byte{"luts": {lut(0, 255, 0)}}, "luts"),
	}
	for name, fields := range bad {
		f, _, err := mapPages(t, Options{}, gray(8, 8, description(d), fields), gray(8, 8), gray(8, 8), gray(8, 8))
		require.NoError(t, err, name)
		assert.Empty(t, f.Images[0].Spec.Channels, name)
	}
}

// TestOMEPageTwice: a page is one plane of an image; TiffData elements
// that map it to two overlap, and are refused. Images sharing a page are
// read, as Bio-Formats reads them, unless they decode to far more than
// the file's size (TestSharedBlocksBomb).
func TestOMEPageTwice(t *testing.T) {
	twoImages := omeDocument("", pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`), pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`))
	f, _, err := mapPages(t, Options{}, grays(1, twoImages)...)
	require.NoError(t, err)
	require.Len(t, f.Images, 2)
	assert.Equal(t, f.Images[0].Planes[0].Page, f.Images[1].Planes[0].Page)

	overlap := omeDocument("", pixels(3, 1, 1, "XYZCT", `<TiffData IFD="0" PlaneCount="2"/><TiffData IFD="1" FirstZ="2"/>`))
	_, _, err = mapPages(t, Options{}, grays(3, overlap)...)
	assert.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, "page 1 is a plane of OME image 0 twice (its TiffData elements overlap)")
}

// TestSharedBlocksBomb: a page whose strips are all stored at one offset,
// overlap, or store nothing, decoding to far more than the file's size,
// is refused as a decompression bomb; the same strips stored apart, or
// few enough to decode to little, are read.
func TestSharedBlocksBomb(t *testing.T) {
	const (
		apart = iota
		shared
		overlapping // each a byte after the last, 10 bytes long
		sparse      // of 0 bytes
	)
	page := func(height int, how int, description ...string) []byte {
		return rawPage(t, func(b *ifd.Builder) {
			if len(description) > 0 {
				b.AddASCII(tiff.TagImageDescription, description[0])
			}
			b.AddLong(tiff.TagImageWidth, 4096)
			b.AddLong(tiff.TagImageLength, uint32(height))
			b.AddShort(tiff.TagCompression, tiff.CompressionDeflate)
			b.AddLong(tiff.TagRowsPerStrip, 64)
			strips := (height + 63) / 64
			offsets, counts := make([]uint32, strips), make([]uint32, strips)
			for i := range offsets {
				offsets[i], counts[i] = 300, 10
				switch how {
				case apart:
					offsets[i] += 10 * uint32(i)
				case overlapping:
					offsets[i] += uint32(i)
				case sparse:
					offsets[i], counts[i] = 0, 0
				}
			}
			b.AddLong(tiff.TagStripOffsets, offsets...)
			b.AddLong(tiff.TagStripByteCounts, counts...)
		})
	}
	for how, says := range map[int]string{
		shared:      "their blocks share their data (block 1 of the page at 8, stored at 300, overlaps block 0 of the page at 8, stored at 300, 10 bytes)",
		overlapping: "their blocks share their data (block 1 of the page at 8, stored at 301, overlaps block 0 of the page at 8, stored at 300, 10 bytes)",
		sparse:      "1025 of their blocks store nothing (sparse: the page at 8 has one)",
	} {
		_, err := mapFile(t, page(65600, how), "bomb.tif", Options{})
		assert.ErrorIs(t, err, ErrSize)
		assert.ErrorIs(t, err, ErrBomb)
		assert.ErrorContains(t, err, "source: decompression bomb: the images decode to 268697600 bytes or more from ")
		assert.ErrorContains(t, err, "bytes of files, more than 1024 times their size, and "+says)
		// A trusted file: no bound, or one above its ratio (about 30,000).
		_, err = mapFile(t, page(65600, how), "bomb.tif", Options{MaxDecodeRatio: -1})
		assert.NoError(t, err, "no bound")
		_, err = mapFile(t, page(65600, how), "bomb.tif", Options{MaxDecodeRatio: 100000})
		assert.NoError(t, err, "a bound above the ratio")
		_, err = mapFile(t, page(65600, how), "bomb.tif", Options{MaxDecodeRatio: 10000})
		assert.ErrorContains(t, err, "more than 10000 times their size", "a bound below it")
		_, err = mapFile(t, page(65600, how), "bomb.tif", Options{SkipUnsupported: true})
		assert.ErrorIs(t, err, ErrSize, "even so")
		_, err = mapFile(t, page(4096, how), "small.tif", Options{})
		assert.NoError(t, err, "decoding to 16 MiB, under sharedFloor")
	}

	_, err := mapFile(t, page(65600, apart), "apart.tif", Options{})
	assert.NoError(t, err, "stored apart")
	px := `<Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="4096" SizeY="65600" SizeZ="1" SizeC="1" SizeT="1"><TiffData IFD="0"/></Pixels>`
	_, err = mapFile(t, page(65600, apart, omeDocument("", px, px)), "images.ome.tif", Options{}) // two OME images of one such page
	assert.ErrorIs(t, err, ErrSize)
	assert.ErrorIs(t, err, ErrBomb)
	assert.ErrorContains(t, err, "and the page at 8 is a plane of two of them")
}

// TestCopiesBounded: tiles whose blocks share their data are not copied
// through when copying them would write more than copyRatio times the
// file (and copyFloor): Encoded says why, and the tiles are decoded
// instead, within checkShared's bound. The same tiles stored apart, or
// sharing blocks that add up to little, are copied.
func TestCopiesBounded(t *testing.T) {
	const block = 300 << 10 // 256 tiles of it: 75 MiB
	page := func(shared bool) []byte {
		data := rawPage(t, func(b *ifd.Builder) {
			b.AddLong(tiff.TagImageWidth, 4096)
			b.AddLong(tiff.TagImageLength, 4096)
			b.AddShort(tiff.TagBitsPerSample, 8)
			b.AddShort(tiff.TagCompression, tiff.CompressionDeflate)
			b.AddShort(tiff.TagTileWidth, 256)
			b.AddShort(tiff.TagTileLength, 256)
			offsets, counts := make([]uint32, 256), make([]uint32, 256)
			for i := range offsets {
				offsets[i], counts[i] = 4096, block
				if !shared {
					offsets[i] += uint32(i * block)
				}
			}
			b.AddLong(tiff.TagTileOffsets, offsets...)
			b.AddLong(tiff.TagTileByteCounts, counts...)
		})
		blocks := 256
		if shared {
			blocks = 1
		}
		data = append(data, make([]byte, blocks*block)...)
		for i := range blocks { // framed as zlib streams (compress.CheckFraming), not decoded here
			data[4096+i*block], data[4096+i*block+1] = 0x78, 0x9c
		}
		return data
	}
	f, err := mapFile(t, page(true), "shared.tif", Options{})
	require.NoError(t, err, "decoded, 16 MiB: within checkShared's bound")
	_, err = f.Images[0].Encoded(false)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "tiles copied through: the blocks of the images' pages hold 78643200 bytes, more than 16 times the")
	f, err = mapFile(t, page(false), "apart.tif", Options{})
	require.NoError(t, err)
	_, err = f.Images[0].Encoded(false)
	assert.NoError(t, err, "stored apart")
}

// TestCarriedTextBounded: descriptions and annotations whose text, escaped
// for XML, is past maxCarriedText are refused (ErrMetadata), or with
// SkipUnsupported left out and listed: the OME-XML written of them would
// be more than this package reads back. Text within it is kept.
func TestCarriedTextBounded(t *testing.T) {
	amps := func(n int) string { return strings.Repeat("&", n) } // 5 bytes each, escaped
	big := maxCarriedText/5 + 1
	tests := []struct {
		name        string
		page        testPage
		says        string
		description bool     // kept
		keys        []string // the annotations kept
	}{
		{"a description", gray(8, 8, description(amps(big))),
			"the description of image 0, 16777220 bytes as XML, is past what is left of the 16777216 bytes of text carried", false, nil},
		{"a name", gray(8, 8, description("small"), ascii(tiff.TagPageName, amps(big))),
			"the name of image 0, 16777220 bytes as XML, is past what is left of the 16777216 bytes of text carried", true, nil},
		{"annotations", gray(8, 8, description("small"), ascii(tiff.TagMake, amps(big/2)), ascii(tiff.TagModel, amps(big/2))),
			`1 of the 2 annotations of image 0, from "Model" on, are past what is left of the 16777216 bytes of text carried`, true, []string{"Make"}},
		{"within", gray(8, 8, description(amps(big/2)), ascii(tiff.TagMake, amps(big/3))), "", true, []string{"Make"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := mapPages(t, Options{}, tt.page)
			if tt.says != "" {
				require.ErrorIs(t, err, ErrMetadata)
				assert.ErrorContains(t, err, tt.says)
			} else {
				require.NoError(t, err)
			}
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, tt.page)
			require.NoError(t, err)
			s := f.Images[0].Spec
			assert.Equal(t, tt.description, s.Description != "")
			var keys []string
			for _, kv := range s.Annotations {
				keys = append(keys, kv.Key)
			}
			assert.Equal(t, tt.keys, keys)
			if tt.says != "" {
				require.Len(t, f.Skipped, 1)
				assert.ErrorContains(t, f.Skipped[0], tt.says)
			}
		})
	}
}

// TestOMENumbers: an attribute that is no number of its type is refused
// saying so, and near which line.
func TestOMENumbers(t *testing.T) {
	for value, says := range map[string]string{
		`IFD="-1"`:                `"-1", the value of a numeric attribute (a size, IFD, PlaneCount, First..., PhysicalSize...), is not a whole number of 0 or more`,
		`PlaneCount="two"`:        `"two", the value of a numeric attribute (a size, IFD, PlaneCount, First..., PhysicalSize...), is not a whole number of 0 or more`,
		`PlaneCount="4294967296"`: `"4294967296", the value of a numeric attribute (a size, IFD, PlaneCount, First..., PhysicalSize...), is not a whole number of 0 to 4294967295 (it is too large)`,
	} {
		doc := omeDocument("", pixels(1, 1, 1, "XYZCT", `<TiffData `+value+`/>`))
		_, _, err := mapPages(t, Options{}, grays(1, doc)...)
		assert.ErrorIs(t, err, ErrMetadata)
		assert.ErrorContains(t, err, "OME-XML, by line 1: "+says)
	}
}

// TestNoImageReason: a file whose OME-XML cannot be read and whose one
// page cannot be read either is refused, with SkipUnsupported too, for
// its page: the refusal names that reason, not the metadata it would
// have gone without.
func TestNoImageReason(t *testing.T) {
	page := gray(8, 8, description(`<OME>oops</Image></OME>`), short(tiff.TagFillOrder, 2))
	_, _, err := mapPages(t, Options{SkipUnsupported: true}, page)
	require.ErrorIs(t, err, ErrUnsupported)
	assert.NotErrorIs(t, err, ErrNotCarried)
	assert.ErrorContains(t, err, "FillOrder")
	assert.ErrorContains(t, err, "(and 1 more)")
}

// TestOMEClaimsBounded: what a small document claims costs in proportion
// to the document, not to the claim: a SizeC of 2^32-1 in a file of one
// page is refused before a channel is made, and a map referred to 30,000
// times is read once.
func TestOMEClaimsBounded(t *testing.T) {
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for _, c := range []int{1 << 22, 4294967295} { // the first fails fast without the check
		doc := omeDocument(``, pixels(1, c, 1, "XYZCT", `<Channel ID="Channel:0:0" Name="DAPI"/><TiffData/>`))
		pages := grays(1, doc)
		var err error
		used := allocated(func() { _, _, err = mapPages(t, Options{}, pages...) })
		assert.ErrorIs(t, err, ErrMetadata)
		assert.ErrorContains(t, err, fmt.Sprintf("Z 1 x C %d x T 1 planes in a file of 1 pages", c))
		assert.Less(t, used, uint64(32<<20), "bytes allocated")
	}

	var entries strings.Builder
	for k := range 100 {
		fmt.Fprintf(&entries, `<M K="k%d">v</M>`, k)
	}
	refs := strings.Repeat(`<AnnotationRef ID="Annotation:0"/>`, 30000)
	doc := omeDocument(``, pixels(1, 1, 1, "XYZCT", `<TiffData/>`))
	doc = strings.Replace(doc, `<Pixels`, refs+`<Pixels`, 1)
	doc = strings.Replace(doc, `</OME>`, `<StructuredAnnotations><MapAnnotation ID="Annotation:0"><Value>`+entries.String()+`</Value></MapAnnotation></StructuredAnnotations></OME>`, 1)
	var (
		f   *File
		err error
	)
	used := allocated(func() { f, _, err = mapPages(t, Options{SkipUnsupported: true}, grays(1, doc)...) })
	require.NoError(t, err)
	assert.Less(t, used, uint64(64<<20), "bytes allocated")
	require.Len(t, f.Images, 1)

	// 2,000 images of one page, each referring to the one map of 2,000
	// entries, share it; referring to two maps, they copy them only as far
	// as the document's size allows, and say so.
	var big strings.Builder
	for k := range 2000 {
		fmt.Fprintf(&big, `<M K="%d"/>`, k)
	}
	images := make([]string, 2000)
	for i := range images {
		images[i] = `<AnnotationRef ID="Annotation:0"/>` + pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`)
	}
	maps := `<StructuredAnnotations><MapAnnotation ID="Annotation:0"><Value>` + big.String() + `</Value></MapAnnotation>` +
		`<MapAnnotation ID="Annotation:1"><Value><M K="x">y</M></Value></MapAnnotation></StructuredAnnotations></OME>`
	doc = strings.Replace(omeDocument(``, images...), `</OME>`, maps, 1)
	used = allocated(func() { f, _, err = mapPages(t, Options{SkipUnsupported: true}, grays(1, doc)...) })
	require.NoError(t, err)
	assert.Less(t, used, uint64(128<<20), "bytes allocated")
	require.Len(t, f.Images, 2000)
	assert.Empty(t, f.Skipped)

	// Referring to two maps, they copy them only as far as the document's
	// size allows; the images whose Image element is carried have them
	// there, and those whose element is not say they go without.
	doc = strings.ReplaceAll(doc, `<AnnotationRef ID="Annotation:0"/>`, `<AnnotationRef ID="Annotation:0"/><AnnotationRef ID="Annotation:1"/>`)
	used = allocated(func() { f, _, err = mapPages(t, Options{SkipUnsupported: true}, grays(1, doc)...) })
	require.NoError(t, err)
	assert.Less(t, used, uint64(128<<20), "bytes allocated")
	require.Len(t, f.Images, 2000)
	assert.Empty(t, f.Skipped, "every Image element is carried")
	uncarried := strings.Replace(doc, `<M K="x">y</M>`, `<M K="x">y</M></Value></MapAnnotation><Oops/><MapAnnotation ID="Annotation:2"><Value>`, 1)
	f, _, err = mapPages(t, Options{SkipUnsupported: true}, grays(1, uncarried)...)
	require.NoError(t, err)
	require.NotEmpty(t, f.Skipped)
	assert.ErrorContains(t, f.Skipped[0], "the OME-XML cannot be carried")
	assert.ErrorContains(t, f.Skipped[len(f.Skipped)-1], "its 2 map annotations hold 2001 entries, more than the images may copy")
	assert.Len(t, f.Images[0].Spec.Annotations, 2001, "the first images have them")
	assert.Empty(t, f.Images[1999].Spec.Annotations)
}

// TestOMEImageIDShownPlain: an Image ID that is more than one printable
// line is quoted in messages.
func TestOMEImageIDShownPlain(t *testing.T) {
	doc := omeDocument(``, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="7"/>`))
	doc = strings.Replace(doc, `ID="Image:0"`, `ID="Image:0&#10;forged"`, 1)
	_, _, err := mapPages(t, Options{}, grays(1, doc)...)
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, `OME image 0 ("Image:0\nforged"): `)
	assert.NotContains(t, err.Error(), "\n")
}

// manyNamed returns n attributes of different names: a0="1" a1="1" ...
func manyNamed(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, ` a%d="1"`, i)
	}
	return b.String()
}

// TestOMEPrefixedAttribute: an attribute of another namespace with the
// local name of one the mapping reads is not that attribute (the schema's
// are unqualified).
func TestOMEPrefixedAttribute(t *testing.T) {
	doc := omeDocument(``, pixels(1, 1, 1, "XYZCT", `<TiffData xmlns:x="urn:x" IFD="0" x:IFD="1" PlaneCount="1"/>`))
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, grays(2, doc)...)
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	assert.Same(t, f.TIFF.Pages[0], f.Images[0].Planes[0].Page, "the plane is page 0, as IFD says")
}

// TestOMEShapeRefusedAsMetadata: a document CheckOMEXML refuses is bad
// metadata of the file, as every unreadable document is.
func TestOMEShapeRefusedAsMetadata(t *testing.T) {
	doc := strings.Replace(omeDocument(``, pixels(1, 1, 1, "XYZCT", `<TiffData/>`)), `</OME>`,
		`<StructuredAnnotations><XMLAnnotation ID="Annotation:0"><Value><x`+manyNamed(1025)+`/></Value></XMLAnnotation></StructuredAnnotations></OME>`, 1)
	_, _, err := mapPages(t, Options{}, grays(1, doc)...)
	assert.ErrorIs(t, err, ErrMetadata)
	assert.ErrorIs(t, err, pyramid.ErrOMETooLarge)
	assert.ErrorContains(t, err, "source: bad metadata: OME-XML: pyramid: OME-XML is too large (line 1): an element of more than 1024 attributes")
}

// TestPixelNotes: what a page holds that the output does not carry, or
// writes otherwise than a viewer expects, is noted on its image, for a
// library caller as for the command (which alone said it).
func TestPixelNotes(t *testing.T) {
	icc := func(b *ifd.Builder) { b.AddByte(tiff.TagICCProfile, 1, 2, 3, 4) }
	tests := []struct {
		name string
		page testPage
		want []string
	}{
		{"none", gray(8, 8), nil},
		{"an ICC profile and an orientation", gray(8, 8, icc, short(tiff.TagOrientation, 6)), []string{
			"its ICC colour profile is not kept (OME has no field for it)",
			"Orientation 6 is not applied: the pixels are written as stored, as tifffile and Bio-Formats read them"}},
		{"white-is-zero", gray(8, 8, short(tiff.TagPhotometricInterpretation, tiff.PhotometricWhiteIsZero)), []string{
			"stored white-is-zero (PhotometricInterpretation 0): its values are kept, so viewers show it inverted"}},
		{"the default orientation", gray(8, 8, short(tiff.TagOrientation, 1)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, tt.page)
			require.NoError(t, err)
			require.Len(t, f.Images, 1)
			assert.Equal(t, tt.want, f.Images[0].Notes)
		})
	}
}
