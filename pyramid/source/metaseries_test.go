package source

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// msDoc is a MetaSeries description of the props given as id, value
// pairs, as MetaMorph writes it: the Description prop at the top, the
// others in PlaneInfo (custom-prop for the ids starting "_").
func msDoc(kv ...string) string {
	var b strings.Builder
	b.WriteString("<MetaData>\n")
	var plane strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		var v strings.Builder
		_ = escapeXML(&v, kv[i+1])
		elem := "prop"
		if strings.HasPrefix(kv[i], "_") {
			elem = "custom-prop"
		}
		line := fmt.Sprintf("<%s id=%q type=\"string\" value=\"%s\"/>\n", elem, kv[i], v.String())
		if kv[i] == "Description" {
			b.WriteString(line)
		} else {
			plane.WriteString(line)
		}
	}
	b.WriteString("<PlaneInfo>\n" + plane.String() + "</PlaneInfo>\n<SetInfo>\n<prop id=\"number-of-planes\" type=\"int\" value=\"1\"/>\n</SetInfo>\n</MetaData>")
	return b.String()
}

// escapeXML writes s escaped as XML text.
func escapeXML(b *strings.Builder, s string) error {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	_, err := b.WriteString(r.Replace(s))
	return err
}

// msPlane is one page of a test MetaSeries file: its wavelength (0 for
// none, negative for a wavelength of 0), illumination setting, z-position
// ("" for none), time (seconds after 09:25:18.123), and stage position.
type msPlane struct {
	wave   int
	illum  string
	z      string
	secs   float64
	sx, sy string
}

// msProps returns the props of a page: the plane's and the extra ones.
func (p msPlane) props(extra ...string) []string {
	base := time.Date(2006, 11, 22, 9, 25, 18, 123e6, time.UTC).Add(time.Duration(p.secs * float64(time.Second)))
	kv := []string{"Description", "Exposure: 100 ms&#13;&#10;Binning: 2 x 2&#13;&#10;Gain: Gain 1 (4x)",
		"image-name", "cells", "acquisition-time-local", base.Format("20060102 15:04:05.000")}
	switch {
	case p.wave > 0:
		kv = append(kv, "wavelength", fmt.Sprint(p.wave))
	case p.wave < 0: // a wavelength of 0: transmitted light
		kv = append(kv, "wavelength", "0")
	}
	if p.illum != "" {
		kv = append(kv, "_IllumSetting_", p.illum)
	}
	if p.z != "" {
		kv = append(kv, "z-position", p.z)
	}
	if p.sx != "" {
		kv = append(kv, "stage-position-x", p.sx, "stage-position-y", p.sy, "stage-label", "Position "+p.sx)
	}
	return append(kv, extra...)
}

// msCalibrated are page 0's calibration props, in µm.
var msCalibrated = []string{"spatial-calibration-state", "on", "spatial-calibration-x", "0.5", "spatial-calibration-y", "0.25",
	"spatial-calibration-units", "um", "_MagNA_", "0.75", "Temperature", "22.5"}

// msPages returns 8 x 6 gray pages described by the docs, Software
// "MetaSeries".
func msPages(docs ...string) []testPage {
	var out []testPage
	for _, d := range docs {
		out = append(out, gray(8, 6, description(d), ascii(tiff.TagSoftware, "MetaSeries")))
	}
	return out
}

// msFile returns the pages of the planes, the first with the extra props.
func msFile(planes []msPlane, extra ...string) []testPage {
	var docs []string
	for i, p := range planes {
		if i == 0 {
			docs = append(docs, msDoc(p.props(extra...)...))
		} else {
			docs = append(docs, msDoc(p.props()...))
		}
	}
	return msPages(docs...)
}

// TestMetaSeries: a MetaSeries file's pages are laid along C, Z and T as
// Bio-Formats' MetamorphTiffReader counts its wavelengths and Z
// positions, each plane with its own time, exposure and positions, and
// the first page's other props a map annotation.
func TestMetaSeries(t *testing.T) {
	type want struct {
		z, c, t  int
		channels []string
		waves    []float64
		zStep    float64
		notes    []string
	}
	cases := []struct {
		name   string
		planes []msPlane
		want   want
	}{
		{"three wavelengths, two Z", []msPlane{
			{525, "FITC", "10", 0, "", ""}, {617, "TxRed", "10", 1, "", ""}, {450, "DAPI", "10", 2, "", ""},
			{525, "FITC", "12.5", 3, "", ""}, {617, "TxRed", "12.5", 4, "", ""}, {450, "DAPI", "12.5", 5, "", ""}},
			want{2, 3, 1, []string{"FITC", "TxRed", "DAPI"}, []float64{525, 617, 450}, 2.5, nil}},
		{"times only", []msPlane{{0, "", "", 0, "", ""}, {0, "", "", 1.5, "", ""}, {0, "", "", 3, "", ""}},
			want{1, 1, 3, nil, nil, 0, nil}},
		{"Z and T, one wavelength", []msPlane{
			{525, "GFP", "1", 0, "", ""}, {525, "GFP", "2", 1, "", ""}, {525, "GFP", "3", 2, "", ""},
			{525, "GFP", "1", 10, "", ""}, {525, "GFP", "2", 11, "", ""}, {525, "GFP", "3", 12, "", ""}},
			want{3, 1, 2, []string{"GFP"}, []float64{525}, 1, nil}},
		{"a Z offset for each channel", []msPlane{
			{525, "FITC", "10", 0, "", ""}, {617, "TxRed", "10.3", 1, "", ""},
			{525, "FITC", "11", 2, "", ""}, {617, "TxRed", "11.3", 3, "", ""}},
			want{2, 2, 1, []string{"FITC", "TxRed"}, []float64{525, 617}, 1, nil}},
		{"pages not a multiple of the wavelengths", []msPlane{
			{525, "FITC", "", 0, "", ""}, {617, "TxRed", "", 1, "", ""}, {525, "FITC", "", 2, "", ""}},
			want{1, 1, 3, []string{"FITC"}, nil, 0, []string{"its 3 pages are not a multiple of its 2 wavelengths: they are laid along T, the wavelengths not read as channels"}}},
		{"Z of its own for each channel, in the pages' order", []msPlane{
			{525, "FITC", "1", 0, "", ""}, {617, "TxRed", "2", 1, "", ""}, {525, "FITC", "3", 2, "", ""}, {617, "TxRed", "4", 3, "", ""}},
			want{2, 2, 1, []string{"FITC", "TxRed"}, []float64{525, 617}, 2, nil}},
		{"Z that does not fit", []msPlane{
			{525, "FITC", "1", 0, "", ""}, {617, "TxRed", "1", 1, "", ""}, {525, "FITC", "2", 2, "", ""}, {617, "TxRed", "2", 3, "", ""},
			{525, "FITC", "3", 4, "", ""}, {617, "TxRed", "4", 5, "", ""}},
			want{1, 2, 3, []string{"FITC", "TxRed"}, []float64{525, 617}, 0, []string{"its 6 pages are not its 2 wavelengths times 4 Z positions times a number of time points: they are laid along C and T, SizeZ 1"}}},
		{"a wavelength of 0 is a channel", []msPlane{
			{-1, "DIC", "", 0, "", ""}, {488, "GFP", "", 1, "", ""}, {-1, "DIC", "", 2, "", ""}, {488, "GFP", "", 3, "", ""}},
			want{1, 2, 2, []string{"DIC", "GFP"}, []float64{488}, 0, nil}},
		{"Z stored channel by channel", []msPlane{
			{525, "FITC", "0", 0, "", ""}, {525, "FITC", "1", 1, "", ""}, {525, "FITC", "2", 2, "", ""},
			{617, "TxRed", "0", 3, "", ""}, {617, "TxRed", "1", 4, "", ""}, {617, "TxRed", "2", 5, "", ""}},
			want{3, 2, 1, []string{"FITC", "TxRed"}, []float64{525, 617}, 1, []string{"its pages' wavelengths do not come in the order XYCZT (page 1's is 525 nm, its channel's 617 nm): laid as Bio-Formats lays them"}}},
		{"wavelengths out of order", []msPlane{
			{525, "FITC", "", 0, "", ""}, {525, "FITC", "", 1, "", ""}, {617, "TxRed", "", 2, "", ""}, {617, "TxRed", "", 3, "", ""}},
			want{1, 2, 2, []string{"FITC", "TxRed"}, []float64{525, 617}, 0, []string{"its pages' wavelengths do not come in the order XYCZT (page 1's is 525 nm, its channel's 617 nm): laid as Bio-Formats lays them"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, msFile(tc.planes, msCalibrated...)...)
			require.NoError(t, err)
			assert.Equal(t, MetaSeries, f.Kind)
			require.Len(t, f.Images, 1)
			im := f.Images[0]
			s := im.Spec
			assert.Equal(t, [3]int{tc.want.z, tc.want.c, tc.want.t}, [3]int{s.SizeZ, s.SizeC, s.SizeT})
			assert.Equal(t, pyramid.XYCZT, s.DimensionOrder)
			require.Len(t, im.Planes, len(tc.planes))
			for i, pl := range im.Planes {
				assert.Same(t, f.TIFF.Pages[i], pl.Page, "plane %d", i)
			}
			assert.Equal(t, "cells", s.Name)
			assert.Equal(t, time.Date(2006, 11, 22, 9, 25, 18, 123e6, pyramid.NoZone), s.AcquisitionDate)
			assert.Equal(t, [2]float64{0.5, 0.25}, [2]float64{s.PhysicalSizeX, s.PhysicalSizeY})
			assert.Equal(t, "µm", s.PhysicalSizeXUnit)
			assert.InDelta(t, tc.want.zStep, s.PhysicalSizeZ, 1e-9)
			var names []string
			var waves []float64
			for _, c := range s.Channels {
				names = append(names, c.Name)
				if c.EmissionWavelength.Value > 0 {
					waves = append(waves, c.EmissionWavelength.Value)
				}
			}
			assert.Equal(t, tc.want.channels, names)
			assert.Equal(t, tc.want.waves, waves)
			assert.Equal(t, tc.want.notes, im.Notes)
			require.Len(t, s.PlaneInfo, len(tc.planes))
			for i, pl := range s.PlaneInfo {
				z, c, tt := s.PlaneCoords(i)
				assert.Equal(t, [3]int{z, c, tt}, [3]int{pl.Z, pl.C, pl.T})
				assert.InDelta(t, tc.planes[i].secs, pl.DeltaT.Value, 1e-9, "plane %d", i)
				assert.Equal(t, pyramid.Quantity{Value: 0.1, Unit: "s"}, pl.ExposureTime)
				if tc.planes[i].z != "" {
					assert.Equal(t, "µm", pl.PositionZ.Unit)
				}
			}
			assert.Equal(t, []pyramid.KeyValue{{Key: "spatial-calibration-state", Value: "on"}, {Key: "spatial-calibration-units", Value: "um"},
				{Key: "_MagNA_", Value: "0.75"}, {Key: "Temperature", Value: "22.5"}, {Key: "number-of-planes", Value: "1"},
				{Key: "Binning", Value: "2 x 2"}, {Key: "Gain", Value: "Gain 1 (4x)"}, {Key: "Software", Value: "MetaSeries"}}, s.Annotations)
		})
	}
}

// TestMetaSeriesFields: pages whose stage positions differ by more than
// 0.21 are separate fields, each an image named as Bio-Formats names its
// series, its planes' positions the pages'.
func TestMetaSeriesFields(t *testing.T) {
	planes := []msPlane{
		{525, "FITC", "", 0, "100", "200"}, {617, "TxRed", "", 1, "100.1", "200"},
		{525, "FITC", "", 2, "300", "200"}, {617, "TxRed", "", 3, "300", "200.2"},
		{525, "FITC", "", 4, "300", "500"}, {617, "TxRed", "", 5, "300", "500"}}
	f, _, err := mapPages(t, Options{}, msFile(planes)...)
	require.NoError(t, err)
	require.Len(t, f.Images, 3)
	for i, im := range f.Images {
		s := im.Spec
		assert.Equal(t, fmt.Sprintf("Field %c1, Well 1: cells", 'A'+i), s.Name)
		assert.Equal(t, [3]int{1, 2, 1}, [3]int{s.SizeZ, s.SizeC, s.SizeT})
		assert.Equal(t, []*tiff.Page{f.TIFF.Pages[2*i], f.TIFF.Pages[2*i+1]}, []*tiff.Page{im.Planes[0].Page, im.Planes[1].Page})
		require.Len(t, s.PlaneInfo, 2)
		for k, pl := range s.PlaneInfo {
			p := planes[2*i+k]
			assert.Equal(t, "reference frame", pl.PositionX.Unit)
			assert.Equal(t, p.sx, fmt.Sprint(pl.PositionX.Value))
			assert.Equal(t, p.sy, fmt.Sprint(pl.PositionY.Value))
			assert.InDelta(t, float64(k), pl.DeltaT.Value, 1e-9, "DeltaT from the field's first page")
		}
		assert.Contains(t, s.Annotations, pyramid.KeyValue{Key: "stage-label", Value: "Position " + planes[2*i].sx})
		assert.Equal(t, time.Date(2006, 11, 22, 9, 25, 18+2*i, 123e6, pyramid.NoZone), s.AcquisitionDate)
	}
}

// TestMetaSeriesCalibration: the calibration's units, and a state or
// units that say none.
func TestMetaSeriesCalibration(t *testing.T) {
	cases := []struct {
		name  string
		props []string
		size  float64
		unit  string
		notes []string
	}{
		{"µm", []string{"spatial-calibration-x", "0.5", "spatial-calibration-y", "0.5", "spatial-calibration-units", "um"}, 0.5, "µm", nil},
		{"no units", []string{"spatial-calibration-x", "0.5", "spatial-calibration-y", "0.5"}, 0.5, "µm", nil},
		{"nm", []string{"spatial-calibration-x", "+6.5e+002", "spatial-calibration-y", "650", "spatial-calibration-units", "nm"}, 650, "nm", nil},
		{"pixels", []string{"spatial-calibration-x", "1", "spatial-calibration-y", "1", "spatial-calibration-units", "pixels"}, 0, "",
			[]string{`its spatial-calibration-units is "pixels": no physical pixel size`}},
		{"off", []string{"spatial-calibration-state", "off", "spatial-calibration-x", "1", "spatial-calibration-y", "1", "spatial-calibration-units", "um"}, 0, "",
			[]string{"its spatial-calibration-state is off: no physical pixel size"}},
		{"not a number", []string{"spatial-calibration-x", "NaN", "spatial-calibration-y", "1"}, 0, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, msFile([]msPlane{{}}, tc.props...)...)
			require.NoError(t, err)
			s := f.Images[0].Spec
			assert.Equal(t, tc.size, s.PhysicalSizeX)
			assert.Equal(t, tc.size, s.PhysicalSizeY)
			assert.Equal(t, tc.unit, s.PhysicalSizeXUnit)
			assert.Equal(t, tc.notes, f.Images[0].Notes)
		})
	}
}

// TestMetaSeriesHostile: XML that does not read, on the first page or a
// later one, and files that are not MetaSeries.
func TestMetaSeriesHostile(t *testing.T) {
	good := msDoc(msPlane{525, "FITC", "1", 0, "", ""}.props()...)
	t.Run("first page's XML does not parse", func(t *testing.T) {
		for _, d := range []string{
			"<MetaData><prop id=\"a\" value=\"&x;\"/></MetaData>",
			"<MetaData><prop id=\"a\" value=\"1\"></MetaData>",
			"<MetaData></MetaData><MetaData></MetaData>",
			"<MetaData>" + strings.Repeat("<a>", 40) + strings.Repeat("</a>", 40) + "</MetaData>",
			"<MetaData><prop id=\"a\" value=\"" + strings.Repeat("x", maxMetaSeriesXML) + "\"/></MetaData>",
		} {
			_, _, err := mapPages(t, Options{}, msPages(d, good)...)
			require.ErrorIs(t, err, ErrMetadata)
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, msPages(d, good)...)
			require.NoError(t, err)
			assert.Equal(t, TIFF, f.Kind)
			require.Len(t, f.Skipped, 1)
			assert.ErrorIs(t, f.Skipped[0], ErrNotCarried)
			assert.Contains(t, f.Skipped[0].Error(), "the file is read as a plain TIFF")
			assert.Equal(t, 2, f.Images[0].Spec.SizeT)
		}
	})
	t.Run("a later page's XML does not parse", func(t *testing.T) {
		f, _, err := mapPages(t, Options{}, msPages(good, "<MetaData><prop id=\"z-position\" value=\"2\"></MetaData>", good)...)
		require.NoError(t, err)
		assert.Equal(t, MetaSeries, f.Kind)
		im := f.Images[0]
		assert.Equal(t, [3]int{1, 1, 3}, [3]int{im.Spec.SizeZ, im.Spec.SizeC, im.Spec.SizeT})
		require.Len(t, im.Notes, 1)
		assert.Contains(t, im.Notes[0], "the MetaSeries XML of 1 of its pages (1) is not read")
		// Plane 1 has none of its page's values, so no Plane element.
		require.Len(t, im.Spec.PlaneInfo, 2)
		assert.Equal(t, []int{0, 2}, []int{im.Spec.PlaneInfo[0].T, im.Spec.PlaneInfo[1].T})
		assert.Equal(t, 1.0, im.Spec.PlaneInfo[1].PositionZ.Value)
	})
	t.Run("pages of another shape", func(t *testing.T) {
		pages := msPages(good, good)
		pages = append(pages, testPage{width: 4, height: 4, samples: 3, bits: 8, more: description(good)})
		f, _, err := mapPages(t, Options{}, pages...)
		require.NoError(t, err)
		require.Len(t, f.Images, 2)
		assert.Equal(t, 2, f.Images[0].Spec.SizeT)
		assert.Equal(t, 4, f.Images[1].Spec.SizeX)
	})
	t.Run("not MetaSeries", func(t *testing.T) {
		for _, d := range []string{"<MetaData><prop id=\"a\" value=\"1\"/>", "<Meta><prop/></Meta>", "MetaData"} {
			f, _, err := mapPages(t, Options{}, msPages(d)...)
			require.NoError(t, err)
			assert.Equal(t, TIFF, f.Kind, d)
		}
	})
	t.Run("an STK stays one", func(t *testing.T) {
		s := zStack()
		s.description = good
		f, err := mapFile(t, s.file(t), "test.tif", Options{})
		require.NoError(t, err)
		assert.Equal(t, STK, f.Kind)
	})
	t.Run("too many props", func(t *testing.T) {
		kv := msPlane{}.props()
		for i := range maxMetaSeriesProps {
			kv = append(kv, fmt.Sprint("k", i), "v")
		}
		f, _, err := mapPages(t, Options{SkipUnsupported: true}, msPages(msDoc(kv...))...)
		require.NoError(t, err)
		assert.Contains(t, f.Images[0].Notes,
			// 1028 props (number-of-planes too), and the Description's 3 lines.
			fmt.Sprintf("its first page's MetaSeries XML has 7 props and Description lines past the first %d, not read", maxMetaSeriesProps))
	})
}

// TestMetaSeriesDescription: the Description prop's free text is the
// image's description, its lines from Exposure on values, the exposure in
// seconds, whether its lines are separated by "&#13;&#10;" or CR LF.
func TestMetaSeriesDescription(t *testing.T) {
	for _, sep := range []string{"&#13;&#10;", "\r\n"} {
		d := msDoc("Description", strings.Join([]string{"Acquired with care", "second line", "Exposure: 250 ms", "Binning: 1 x 1", "no colon"}, sep))
		f, _, err := mapPages(t, Options{}, msPages(d)...)
		require.NoError(t, err)
		s := f.Images[0].Spec
		assert.Equal(t, "Acquired with care\nsecond line", s.Description)
		require.Len(t, s.PlaneInfo, 1)
		assert.Equal(t, pyramid.Quantity{Value: 0.25, Unit: "s"}, s.PlaneInfo[0].ExposureTime)
		assert.Equal(t, []pyramid.KeyValue{{Key: "number-of-planes", Value: "1"}, {Key: "Binning", Value: "1 x 1"}, {Key: "Software", Value: "MetaSeries"}}, s.Annotations)
	}
}

// FuzzMetaSeriesDescription maps MetaSeries files of three pages, the
// first one's XML arbitrary, the others MetaMorph's of two wavelengths,
// seeded with MetaMorph's.
func FuzzMetaSeriesDescription(f *testing.F) {
	planes := []msPlane{{525, "FITC", "1", 0, "10", "20"}, {617, "TxRed", "1", 1, "10", "20"}, {525, "FITC", "2", 2, "30", "20"}}
	pages := msFile(planes, msCalibrated...)
	seeds := []string{msDoc(planes[0].props(msCalibrated...)...), msDoc(planes[0].props("spatial-calibration-units", "pixel")...),
		"<MetaData><prop id=\"Description\" value=\"a&#13;&#10;Exposure: 1e+003 ms\"/><PlaneInfo><prop id=\"z-position\" value=\"-1e+006\"/></PlaneInfo></MetaData>"}
	fuzzDescription(f, seeds, pages...)
}

// tifffileMetaSeries prints whether tifffile takes a file for MetaSeries,
// then of each page's XML (metaseries_description_metadata) its
// wavelength, z-position, image-name and the Description's lines.
const tifffileMetaSeries = `
import sys, tifffile
with tifffile.TiffFile(sys.argv[1]) as t:
    print(t.is_metaseries)
    for p in t.pages:
        m = tifffile.tifffile.metaseries_description_metadata(p.description)
        i = m['PlaneInfo']
        print(i['wavelength'], i['z-position'], i['image-name'], m['Description'].split('\n'))
`

// TestInteropMetaSeries: tifffile takes the MetaSeries files the tests
// build for MetaSeries, and reads the values of their XML the mapping
// reads.
func TestInteropMetaSeries(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	planes := []msPlane{{525, "FITC", "10", 0, "", ""}, {617, "TxRed", "12.5", 1, "", ""}}
	file, _ := fileOf(t, binary.LittleEndian, false, msFile(planes)...)
	path := filepath.Join(t.TempDir(), "ms.tif")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	out := strings.Split(strings.TrimSpace(interop.RunPython(t, tifffileMetaSeries, path)), "\n")
	require.Len(t, out, 3)
	assert.Equal(t, "True", out[0])
	f, err := Open(path, Options{})
	require.NoError(t, err)
	defer f.Close()
	s := f.Images[0].Spec
	for i, line := range out[1:] {
		assert.Equal(t, fmt.Sprintf("%d %s %s ['Exposure: 100 ms', 'Binning: 2 x 2', 'Gain: Gain 1 (4x)']",
			int(s.Channels[i].EmissionWavelength.Value), fmt.Sprint(s.PlaneInfo[i].PositionZ.Value), s.Name), line)
	}
}
