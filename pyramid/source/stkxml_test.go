package source

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/pyramid"
)

// stkXMLPlane is one plane's MetaData XML in a test STK: its time
// (seconds after 09:25:18.123), z-position ("" for none), exposure lines
// (ms), and extra props.
type stkXMLPlane struct {
	secs      float64
	z         string
	exposures []string
	extra     []string
}

// doc is the plane's XML, its Description's lines separated as MetaMorph
// writes them ("&#13;&#10;" as text).
func (p stkXMLPlane) doc() string {
	at := time.Date(2006, 11, 22, 9, 25, 18, 123e6, time.UTC).Add(time.Duration(p.secs * float64(time.Second)))
	lines := []string{"Acquired by MetaMorph"}
	for _, e := range p.exposures {
		lines = append(lines, "Exposure: "+e+" ms")
	}
	lines = append(lines, "Binning: 2 x 2", "Camera Gain: 4x")
	kv := []string{"Description", strings.Join(lines, "&#13;&#10;"), "acquisition-time-local", at.Format("20060102 15:04:05.000"),
		"Temperature", "22.5"}
	if p.z != "" {
		kv = append(kv, "z-position", p.z)
	}
	return msDoc(append(kv, p.extra...)...)
}

// xmlSTK is an STK of 8 x 6 planes whose descriptions are the planes'
// XML, its UIC2 times a second apart and its Z distances 0.
func xmlSTK(planes ...stkXMLPlane) testSTK {
	s := testSTK{width: 8, height: 6, bits: 8}
	var docs []string
	for k, p := range planes {
		s.planes = append(s.planes, stkPlane{0, 1, 2451576, uint32(1000 * k)})
		docs = append(docs, p.doc())
	}
	s.description = strings.Join(docs, "\x00")
	return s
}

// planeValues returns each plane's DeltaT, ExposureTime and PositionZ,
// in plane order.
func planeValues(t *testing.T, im *Image) (deltaT, exposure, z []pyramid.Quantity) {
	n := im.Spec.Planes()
	deltaT, exposure, z = make([]pyramid.Quantity, n), make([]pyramid.Quantity, n), make([]pyramid.Quantity, n)
	for _, pl := range im.Spec.PlaneInfo {
		k, err := im.Spec.PlaneIndex(pl.Z, pl.C, pl.T)
		require.NoError(t, err)
		deltaT[k], exposure[k], z[k] = pl.DeltaT, pl.ExposureTime, pl.PositionZ
	}
	return deltaT, exposure, z
}

// annotations returns the image's annotations as a map.
func annotations(im *Image) map[string]string {
	kv := map[string]string{}
	for _, a := range im.Spec.Annotations {
		kv[a.Key] = a.Value
	}
	return kv
}

// TestSTKXML: an STK whose plane descriptions are MetaData XML is read as
// Bio-Formats' MetamorphReader reads it: the XML's times, exposures, Z
// positions and step, pixel size, wavelength and gain where the UIC tags
// give none (the UIC tags' winning where they give them), the rest a map
// annotation; XML that does not parse is noted, the file still read.
func TestSTKXML(t *testing.T) {
	sec := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "s"} }
	rf := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "reference frame"} }
	cal := []string{"spatial-calibration-x", "0.5", "spatial-calibration-y", "0.25", "spatial-calibration-units", "um", "wavelength", "488"}
	timed := xmlSTK(stkXMLPlane{0, "", []string{"100"}, cal}, stkXMLPlane{2.5, "", []string{"100"}, nil}, stkXMLPlane{5, "", []string{"100"}, nil})
	uic1Cal := timed
	uic1Cal.uic1 = []uicEntry{{id: 4, data: uicRat(1, 10)}, {id: 5, data: uicRat(1, 10)}}
	uic1Cal.wavelengths = []uint32{520, 520, 520}
	// Four planes at distinct absolute Z (UIC4), their Z distances 0: the
	// XML's z-positions give the step.
	absZ := []byte{40, 0}
	for _, z := range []uint32{10, 12, 14, 16} {
		absZ = append(absZ, uicRat(z, 1)...)
	}
	stack := xmlSTK(stkXMLPlane{0, "10", []string{"100"}, nil}, stkXMLPlane{0, "10.5", []string{"100"}, nil},
		stkXMLPlane{0, "11", []string{"100"}, nil}, stkXMLPlane{0, "11.5", []string{"100"}, nil})
	stack.uic4 = append(absZ, 0, 0)
	// Z distances that are no numbers: the XML's Z positions are the
	// planes'.
	noDistances := xmlSTK(stkXMLPlane{0, "3", []string{"100"}, nil}, stkXMLPlane{0, "4", []string{"100"}, nil})
	noDistances.planes[0].zDen, noDistances.planes[1].zDen = 0, 0
	channels := xmlSTK(stkXMLPlane{0, "", []string{"100"}, nil}, stkXMLPlane{0, "", []string{"200"}, nil},
		stkXMLPlane{1, "", []string{"300"}, nil}, stkXMLPlane{1, "", []string{"400"}, nil})
	channels.wavelengths = []uint32{500, 600, 500, 600}
	twoLines := channels
	twoLines.description = strings.Replace(twoLines.description, "Exposure: 100 ms", "Exposure: 100 ms&amp;#13;&amp;#10;Exposure: 50 ms", 1)
	staged := xmlSTK(stkXMLPlane{0, "", nil, []string{"stage-position-x", "5", "stage-position-y", "-6"}},
		stkXMLPlane{1, "", nil, []string{"stage-position-x", "7", "stage-position-y", "8"}})
	badFirst := xmlSTK(stkXMLPlane{0, "", []string{"100"}, nil}, stkXMLPlane{1, "", []string{"100"}, nil})
	badFirst.description = "<MetaData><prop id=\"a\" value=\"1\"></MetaData>\x00plane 2"
	badLater := xmlSTK(stkXMLPlane{0, "", []string{"100"}, nil}, stkXMLPlane{2, "", []string{"100"}, nil}, stkXMLPlane{4, "", []string{"100"}, nil})
	parts := strings.Split(badLater.description, "\x00")
	parts[1] = "<MetaData><prop id=\"a\""
	badLater.description = strings.Join(parts, "\x00")

	for _, tt := range []struct {
		name  string
		stk   testSTK
		check func(t *testing.T, im *Image)
	}{
		{"times, exposures, description, calibration, wavelength, gain", timed, func(t *testing.T, im *Image) {
			s := im.Spec
			deltaT, exposure, _ := planeValues(t, im)
			assert.Equal(t, []pyramid.Quantity{sec(0), sec(2.5), sec(5)}, deltaT, "the XML's times, not UIC2's")
			assert.Equal(t, []pyramid.Quantity{sec(0.1), sec(0.1), sec(0.1)}, exposure)
			assert.Equal(t, "Acquired by MetaMorph", s.Description)
			assert.Equal(t, [4]any{0.5, 0.25, "µm", "µm"}, [4]any{s.PhysicalSizeX, s.PhysicalSizeY, s.PhysicalSizeXUnit, s.PhysicalSizeYUnit})
			require.Len(t, s.Channels, 1)
			assert.Equal(t, pyramid.Quantity{Value: 488, Unit: "nm"}, s.Channels[0].EmissionWavelength)
			require.NotNil(t, s.Instrument)
			assert.Equal(t, []pyramid.Detector{{Type: pyramid.DetectorOther}}, s.Instrument.Detectors)
			assert.Equal(t, &pyramid.DetectorSettings{Gain: 4}, s.Channels[0].DetectorSettings)
			kv := annotations(im)
			for k, v := range map[string]string{"Binning": "2 x 2", "Temperature": "22.5", "acquisition-time-local": "20061122 09:25:18.123",
				"spatial-calibration-units": "um", "PlaneDescription[1]": "Acquired by MetaMorph", "DatetimeCreated[1]": "2000-02-02T00:00:01.000"} {
				assert.Equal(t, v, kv[k], k)
			}
			for _, k := range []string{"Exposure", "Description", "spatial-calibration-x", "wavelength", "Camera Gain"} {
				assert.NotContains(t, kv, k, "carried")
			}
			assert.Contains(t, im.Notes, "the MetaData XML of its planes past the first is read for their times, Z positions, exposures and Description text only: their other props are not carried")
		}},
		{"the UIC tags' calibration and wavelengths win", uic1Cal, func(t *testing.T, im *Image) {
			s := im.Spec
			assert.Equal(t, [2]float64{0.1, 0.1}, [2]float64{s.PhysicalSizeX, s.PhysicalSizeY})
			require.Len(t, s.Channels, 1)
			assert.Equal(t, pyramid.Quantity{Value: 520, Unit: "nm"}, s.Channels[0].EmissionWavelength)
			kv := annotations(im)
			assert.Equal(t, "0.5", kv["spatial-calibration-x"], "not carried: an annotation")
			assert.Equal(t, "488", kv["wavelength"])
		}},
		{"the Z step of the XML's z-positions, UIC2 giving none", stack, func(t *testing.T, im *Image) {
			s := im.Spec
			assert.Equal(t, 4, s.SizeZ)
			assert.Equal(t, 0.5, s.PhysicalSizeZ)
			assert.Equal(t, "µm", s.PhysicalSizeZUnit)
			_, _, z := planeValues(t, im)
			assert.Equal(t, []pyramid.Quantity{rf(0), rf(0), rf(0), rf(0)}, z, "UIC2's, which Bio-Formats prefers")
		}},
		{"the XML's Z positions, UIC2's no numbers", noDistances, func(t *testing.T, im *Image) {
			_, _, z := planeValues(t, im)
			assert.Equal(t, []pyramid.Quantity{rf(3), rf(4)}, z)
			assert.Equal(t, 1.0, im.Spec.PhysicalSizeZ)
		}},
		{"one exposure, two channels: each channel's own", channels, func(t *testing.T, im *Image) {
			assert.Equal(t, [3]int{1, 2, 2}, [3]int{im.Spec.SizeZ, im.Spec.SizeC, im.Spec.SizeT})
			_, exposure, _ := planeValues(t, im)
			assert.Equal(t, []pyramid.Quantity{sec(0.1), sec(0.2), sec(0.1), sec(0.2)}, exposure)
			deltaT, _, _ := planeValues(t, im)
			assert.Equal(t, []pyramid.Quantity{sec(0), sec(0), sec(1), sec(1)}, deltaT)
		}},
		{"two exposure lines, two channels", twoLines, func(t *testing.T, im *Image) {
			_, exposure, _ := planeValues(t, im)
			assert.Equal(t, []pyramid.Quantity{sec(0.1), sec(0.05), sec(0.1), sec(0.05)}, exposure)
		}},
		{"each plane's stage position, UIC4 giving none", staged, func(t *testing.T, im *Image) {
			var got [][2]pyramid.Quantity
			for _, pl := range im.Spec.PlaneInfo {
				got = append(got, [2]pyramid.Quantity{pl.PositionX, pl.PositionY})
			}
			assert.Equal(t, [][2]pyramid.Quantity{{rf(5), rf(-6)}, {rf(7), rf(8)}}, got)
			_, exposure, _ := planeValues(t, im)
			assert.Equal(t, []pyramid.Quantity{{}, {}}, exposure, "no Exposure line")
		}},
		{"the first plane's XML malformed: read as text", badFirst, func(t *testing.T, im *Image) {
			assert.Contains(t, joined(im.Notes), "its first plane's description, MetaMorph's MetaData XML, cannot be read (")
			assert.Equal(t, "<MetaData><prop id=\"a\" value=\"1\"></MetaData>", im.Spec.Description)
			deltaT, exposure, _ := planeValues(t, im)
			assert.Equal(t, []pyramid.Quantity{sec(0), sec(1)}, deltaT, "UIC2's times")
			assert.Equal(t, []pyramid.Quantity{{}, {}}, exposure)
		}},
		{"a later plane's XML malformed: noted", badLater, func(t *testing.T, im *Image) {
			assert.Contains(t, joined(im.Notes), "the MetaData XML of 1 of its planes' descriptions (1) is not read (")
			deltaT, exposure, _ := planeValues(t, im)
			assert.Equal(t, []pyramid.Quantity{sec(0), {}, sec(4)}, deltaT)
			assert.Equal(t, []pyramid.Quantity{sec(0.1), sec(0.1), sec(0.1)}, exposure, "the first plane's, every plane's")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := mapFile(t, tt.stk.file(t), "a.stk", Options{})
			require.NoError(t, err)
			assert.Equal(t, STK, f.Kind)
			require.Len(t, f.Images, 1)
			tt.check(t, f.Images[0])
			mappedOK(t, f)
		})
	}
}

// TestSTKXMLBounds: the first plane's props past maxAnnotations are
// noted, not kept, and the file read.
func TestSTKXMLBounds(t *testing.T) {
	var extra []string
	for i := range maxMetaSeriesProps {
		extra = append(extra, fmt.Sprintf("p%d", i), "v")
	}
	s := xmlSTK(stkXMLPlane{0, "", []string{"100"}, extra})
	f, err := mapFile(t, s.file(t), "a.stk", Options{})
	require.NoError(t, err)
	im := f.Images[0]
	assert.LessOrEqual(t, len(im.Spec.Annotations), maxAnnotations+8, "the text tags past them")
	assert.Contains(t, joined(im.Notes), "props and Description lines not read or past the 1024 annotations kept")
	mappedOK(t, f)
}
