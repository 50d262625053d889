package pyramid

import (
	"image/color"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/omexmltest"
	"github.com/ometiff-go/ometiff/iohandle"
)

// typedInstrument is an instrument with one part of each kind the typed
// fields have.
func typedInstrument() *Instrument {
	return &Instrument{
		Microscope: &Microscope{Product: Product{Manufacturer: "Olympus", Model: "IX83"}, Type: MicroscopeInverted},
		LightSources: []LightSource{
			{Kind: LightSourceLaser, Product: Product{Model: "561 & co"}, Power: Quantity{15, "mW"}, Wavelength: Quantity{561, "nm"}},
			{Kind: LightSourceLED, Power: Quantity{0.5, "W"}},
		},
		Detectors:  []Detector{{Product: Product{Manufacturer: "Andor", SerialNumber: "X-1"}, Type: DetectorEMCCD, Gain: 300}},
		Objectives: []Objective{{Product: Product{Model: "UPLSAPO 100XO"}, NominalMagnification: 100, CalibratedMagnification: 99.6, LensNA: 1.4, Immersion: ImmersionOil, WorkingDistance: Quantity{0.13, "mm"}}},
	}
}

// typedSpec is a stack whose metadata is given in typed fields only.
func typedSpec() ImageSpec {
	return ImageSpec{
		Name: "typed", SizeX: 20, SizeY: 10, SizeZ: 2, SizeC: 2, SizeT: 1, PixelType: Uint16,
		TimeIncrement: Quantity{0.25, "min"},
		Instrument:    typedInstrument(),
		Channels: []Channel{
			{Name: "mCherry", Color: color.NRGBA{255, 0, 0, 255}, ExcitationWavelength: Quantity{561, "nm"}, EmissionWavelength: Quantity{0.61, "µm"},
				Fluor: "mCherry", AcquisitionMode: AcquisitionSpinningDiskConfocal, IlluminationType: IlluminationEpifluorescence, ContrastMethod: ContrastFluorescence,
				PinholeSize: Quantity{50, "µm"}, LightSourceSettings: &LightSourceSettings{LightSource: 0, Wavelength: Quantity{561, "nm"}},
				DetectorSettings: &DetectorSettings{Detector: 0, Gain: 200}},
			{Name: "phase", ContrastMethod: ContrastPhase, IlluminationType: IlluminationTransmitted, LightSourceSettings: &LightSourceSettings{LightSource: 1}},
		},
		PlaneInfo: []Plane{
			{Z: 1, C: 1, DeltaT: Quantity{0, "s"}, ExposureTime: Quantity{30, "ms"}, PositionX: Quantity{-12.5, "µm"}, PositionY: Quantity{3, "reference frame"}, PositionZ: Quantity{0, "µm"}},
			{Z: 0, C: 0, DeltaT: Quantity{2, "min"}},
		},
	}
}

// TestTypedMetadata: the typed fields are written where the schema wants
// them, with their units: the instrument's parts in its order, the image's
// references to it, the channels' settings, the planes' times and
// positions; two images share one *Instrument's element.
func TestTypedMetadata(t *testing.T) {
	second := typedSpec()
	second.Name, second.PlaneInfo = "second", nil
	second.Instrument = typedSpec().Instrument // another *Instrument: another element
	first := typedSpec()
	third := first // the same *Instrument
	third.Name = "third"
	out := descriptionOf(t, writeImages(t, Options{TileSize: 16}, first, second, third))
	_, err := ParseOME([]byte(out))
	require.NoError(t, err, out)
	got := omexmltest.Parse(t, []byte(out))
	require.Len(t, got.Children("Instrument"), 2)
	in := got.Element("Instrument")
	assert.Equal(t, "Instrument:0", in.Attr("ID"))
	assert.Equal(t, []string{"Microscope", "Laser", "LightEmittingDiode", "Detector", "Objective"}, in.ChildNames())
	for _, tc := range []struct {
		x     *omexmltest.Tree
		attrs map[string]string
	}{
		{in.Element("Microscope"), map[string]string{"Manufacturer": "Olympus", "Model": "IX83", "Type": "Inverted"}},
		{in.Element("Laser"), map[string]string{"ID": "LightSource:0:0", "Model": "561 & co", "Power": "15", "PowerUnit": "mW", "Wavelength": "561", "WavelengthUnit": "nm"}},
		{in.Element("LightEmittingDiode"), map[string]string{"ID": "LightSource:0:1", "Power": "0.5", "PowerUnit": "W"}},
		{in.Element("Detector"), map[string]string{"ID": "Detector:0:0", "Manufacturer": "Andor", "SerialNumber": "X-1", "Type": "EMCCD", "Gain": "300"}},
		{in.Element("Objective"), map[string]string{"ID": "Objective:0:0", "Model": "UPLSAPO 100XO", "NominalMagnification": "100", "CalibratedMagnification": "99.6",
			"LensNA": "1.4", "Immersion": "Oil", "WorkingDistance": "0.13", "WorkingDistanceUnit": "mm"}},
	} {
		require.NotNil(t, tc.x)
		for k, v := range tc.attrs {
			assert.Equal(t, v, tc.x.Attr(k), "%s@%s", tc.x.Name.Local, k)
		}
	}
	images := got.Children("Image")
	require.Len(t, images, 3)
	for i, want := range []string{"Instrument:0", "Instrument:1", "Instrument:0"} {
		assert.Equal(t, want, images[i].Element("InstrumentRef").Attr("ID"), "image %d", i)
		assert.Equal(t, []string{"InstrumentRef", "ObjectiveSettings", "Pixels"}, images[i].ChildNames())
	}
	assert.Equal(t, "Objective:1:0", images[1].Element("ObjectiveSettings").Attr("ID"), "a single objective is the image's")
	ch := images[0].Children("Pixels")[0].Children("Channel")
	require.Len(t, ch, 2)
	for k, v := range map[string]string{"Name": "mCherry", "Color": "-16776961", "ExcitationWavelength": "561", "ExcitationWavelengthUnit": "nm",
		"EmissionWavelength": "0.61", "EmissionWavelengthUnit": "µm", "Fluor": "mCherry", "AcquisitionMode": "SpinningDiskConfocal",
		"IlluminationType": "Epifluorescence", "ContrastMethod": "Fluorescence", "PinholeSize": "50", "PinholeSizeUnit": "µm"} {
		assert.Equal(t, v, ch[0].Attr(k), "Channel@%s", k)
	}
	assert.Equal(t, []string{"LightSourceSettings", "DetectorSettings"}, ch[0].ChildNames())
	assert.Equal(t, map[string]string{"ID": "LightSource:0:0", "Wavelength": "561", "WavelengthUnit": "nm"}, ch[0].Element("LightSourceSettings").PlainAttrs())
	assert.Equal(t, map[string]string{"ID": "Detector:0:0", "Gain": "200"}, ch[0].Element("DetectorSettings").PlainAttrs())
	assert.Equal(t, map[string]string{"ID": "LightSource:0:1"}, ch[1].Element("LightSourceSettings").PlainAttrs())
	assert.Equal(t, "0.25", images[0].Element("Pixels").Attr("TimeIncrement"))
	assert.Equal(t, "min", images[0].Element("Pixels").Attr("TimeIncrementUnit"))
	planes := images[0].Children("Pixels")[0].Children("Plane")
	require.Len(t, planes, 4)
	assert.Equal(t, map[string]string{"TheZ": "0", "TheC": "0", "TheT": "0", "DeltaT": "2", "DeltaTUnit": "min"}, planes[0].PlainAttrs())
	assert.Equal(t, map[string]string{"TheZ": "1", "TheC": "0", "TheT": "0"}, planes[1].PlainAttrs())
	assert.Equal(t, map[string]string{"TheZ": "1", "TheC": "1", "TheT": "0", "DeltaT": "0", "DeltaTUnit": "s", "ExposureTime": "30", "ExposureTimeUnit": "ms",
		"PositionX": "-12.5", "PositionXUnit": "µm", "PositionY": "3", "PositionYUnit": "reference frame", "PositionZ": "0", "PositionZUnit": "µm"}, planes[3].PlainAttrs())
}

// TestQuantityMicroSpellings: a quantity's unit spelt with a "u" or a
// Greek mu for the micro sign is taken, as the physical sizes' are, and
// written with the micro sign.
func TestQuantityMicroSpellings(t *testing.T) {
	s := typedSpec()
	s.PlaneInfo[0].PositionX = Quantity{1.5, "um"}
	s.PlaneInfo[0].ExposureTime = Quantity{20, "us"}
	s.Channels[0].EmissionWavelength = Quantity{0.5, "\u03bcm"}
	out := descriptionOf(t, writeImages(t, Options{TileSize: 16}, s))
	got := omexmltest.Parse(t, []byte(out))
	px := got.Element("Image", "Pixels")
	assert.Equal(t, "µm", px.Children("Channel")[0].Attr("EmissionWavelengthUnit"))
	var plane *omexmltest.Tree
	for _, p := range px.Children("Plane") {
		if p.Attr("PositionX") == "1.5" {
			plane = p
		}
	}
	require.NotNil(t, plane, out)
	assert.Equal(t, [2]string{"µm", "µs"}, [2]string{plane.Attr("PositionXUnit"), plane.Attr("ExposureTimeUnit")})
}

// TestTypedMetadataRefused: typed values the schema cannot hold, or that
// name parts that are not there, are ErrMetadata at AddImage.
func TestTypedMetadataRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(s *ImageSpec)
		field string
	}{
		{"no unit", func(s *ImageSpec) { s.Channels[0].ExcitationWavelength = Quantity{Value: 488} }, "Channels[0].ExcitationWavelength 488 has no unit"},
		{"length unit for a time", func(s *ImageSpec) { s.PlaneInfo[0].ExposureTime = Quantity{1, "µm"} }, "PlaneInfo[0].ExposureTime"},
		{"unknown unit", func(s *ImageSpec) { s.PlaneInfo[0].PositionX = Quantity{1, "furlong"} }, `"furlong" is not an OME length unit`},
		{"a micro time for a length", func(s *ImageSpec) { s.PlaneInfo[0].PositionX = Quantity{1, "us"} }, `"us" is not an OME length unit`},
		{"negative wavelength", func(s *ImageSpec) { s.Channels[1].EmissionWavelength = Quantity{-1, "nm"} }, "must be positive"},
		{"NaN", func(s *ImageSpec) { s.Instrument.Objectives[0].LensNA = nan() }, "Objectives[0].LensNA"},
		{"float32 overflow", func(s *ImageSpec) { s.PlaneInfo[1].DeltaT = Quantity{1e39, "s"} }, "PlaneInfo[1].DeltaT"},
		{"a length for the time increment", func(s *ImageSpec) { s.TimeIncrement = Quantity{1, "nm"} }, `TimeIncrement: "nm" is not an OME time unit`},
		{"immersion", func(s *ImageSpec) { s.Instrument.Objectives[0].Immersion = "oil" }, `Immersion "oil"`},
		{"acquisition mode", func(s *ImageSpec) { s.Channels[0].AcquisitionMode = "Confocal" }, "AcquisitionMode"},
		{"light source kind", func(s *ImageSpec) { s.Instrument.LightSources[1].Kind = "" }, "LightSources[1].Kind"},
		{"wavelength of an LED", func(s *ImageSpec) { s.Instrument.LightSources[1].Wavelength = Quantity{470, "nm"} }, "only a Laser"},
		{"no such light source", func(s *ImageSpec) { s.Channels[1].LightSourceSettings.LightSource = 2 }, "LightSourceSettings.LightSource 2"},
		{"no such detector", func(s *ImageSpec) { s.Channels[0].DetectorSettings.Detector = -1 }, "DetectorSettings.Detector -1"},
		{"settings without instrument", func(s *ImageSpec) { s.Instrument, s.ObjectiveSettings = nil, nil }, "names no light source"},
		{"no such objective", func(s *ImageSpec) { s.ObjectiveSettings = &ObjectiveSettings{Objective: 1} }, "ObjectiveSettings.Objective 1"},
		{"plane outside", func(s *ImageSpec) { s.PlaneInfo[0].Z = 2 }, "PlaneInfo[0]: plane z=2"},
		{"plane twice", func(s *ImageSpec) { s.PlaneInfo[1] = s.PlaneInfo[0] }, "is PlaneInfo[0] already"},
		{"bad text", func(s *ImageSpec) { s.Instrument.Detectors[0].Model = "\x00" }, "(Instrument.Detectors[0].Model)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := typedSpec()
			tc.edit(&s)
			w, err := New(iohandle.NewMemory(), Options{})
			require.NoError(t, err)
			_, err = w.AddImage(s)
			require.ErrorIs(t, err, ErrMetadata)
			assert.Contains(t, err.Error(), tc.field)
			assert.True(t, strings.HasPrefix(err.Error(), "pyramid: bad metadata: "), err.Error())
			require.NoError(t, w.Abort())
		})
	}
}

func nan() float64 { return math.NaN() }

// TestTypedOverCaller: where the typed fields and the caller's document
// say the same thing, the typed fields win; the rest of the document
// stays.
func TestTypedOverCaller(t *testing.T) {
	doc := mustParseOME(t, bioformatsDoc())
	s := bioformatsSpec
	acquired := time.Date(2026, 7, 8, 9, 10, 11, 0, time.UTC)
	s.Name, s.Description, s.AcquisitionDate = "typed name", "typed description", acquired
	s.PhysicalSizeX = 0.2
	s.Instrument = &Instrument{Objectives: []Objective{{NominalMagnification: 20}}}
	s.Channels = []Channel{{Name: "typed GFP", ExcitationWavelength: Quantity{490, "nm"}, DetectorSettings: nil}}
	s.PlaneInfo = []Plane{{Z: 2, C: 1, DeltaT: Quantity{9, "s"}}}
	s.TimeIncrement = Quantity{3, "ms"}
	out := descriptionOf(t, writeImages(t, Options{TileSize: 16, OME: doc}, s))
	_, err := ParseOME([]byte(out))
	require.NoError(t, err, out)
	got := omexmltest.Parse(t, []byte(out))
	im := got.Element("Image")
	assert.Equal(t, "typed name", im.Attr("Name"))
	assert.Equal(t, "typed description", im.Element("Description").Text)
	assert.Equal(t, acquired.Format(time.RFC3339Nano), im.Element("AcquisitionDate").Text)
	assert.Equal(t, "Instrument:0:1", im.Element("InstrumentRef").Attr("ID"), "the typed instrument, under an ID the caller's does not have")
	assert.Equal(t, "Objective:0:0:1", im.Element("ObjectiveSettings").Attr("ID"))
	assert.Equal(t, "Experimenter:0", im.Element("ExperimenterRef").Attr("ID"), "the caller's other links stay")
	require.Len(t, got.Children("Instrument"), 2)
	px := im.Element("Pixels")
	assert.Equal(t, "0.2", px.Attr("PhysicalSizeX"))
	assert.Equal(t, "0.1", px.Attr("PhysicalSizeY"), "what the spec leaves out is the caller's")
	assert.Equal(t, "12", px.Attr("SignificantBits"))
	assert.Equal(t, [2]string{"3", "ms"}, [2]string{px.Attr("TimeIncrement"), px.Attr("TimeIncrementUnit")}, "the typed time increment over the caller's")
	ch := px.Children("Channel")
	assert.Equal(t, "typed GFP", ch[0].Attr("Name"))
	assert.Equal(t, "490", ch[0].Attr("ExcitationWavelength"))
	assert.Equal(t, "520.0", ch[0].Attr("EmissionWavelength"))
	assert.Equal(t, "GFP", ch[0].Attr("Fluor"))
	assert.Equal(t, []string{"LightSourceSettings", "DetectorSettings", "LightPath"}, ch[0].ChildNames())
	assert.Equal(t, "DAPI", ch[1].Attr("Name"))
	for _, p := range px.Children("Plane") {
		if p.Attr("TheZ") == "2" && p.Attr("TheC") == "1" {
			assert.Equal(t, "9", p.Attr("DeltaT"))
			assert.Equal(t, "s", p.Attr("DeltaTUnit"))
			assert.Equal(t, "100.0", p.Attr("ExposureTime"))
		}
	}
	assert.Equal(t, 1, strings.Count(out, `<XMLAnnotation ID="Annotation:0"`))
}

// TestCallerOMEIDs: the IDs the writer adds never collide with the
// caller's: where the caller's document uses one, the writer's gets a
// suffix.
func TestCallerOMEIDs(t *testing.T) {
	doc := mustParseOME(t, omeRoot+`<Instrument ID="Instrument:0"/>`+
		`<Image ID="Image:1"><Pixels ID="Pixels:1" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="1" SizeT="1"><Channel ID="Channel:1:0"/><TiffData/></Pixels></Image>`+
		`<StructuredAnnotations><TagAnnotation ID="Annotation:0"><Value>x</Value></TagAnnotation></StructuredAnnotations>`+omeEnd)
	own := ImageSpec{SizeX: 8, SizeY: 8, Annotations: []KeyValue{{"k", "v"}}, Instrument: &Instrument{Detectors: []Detector{{Type: DetectorCCD}}}}
	w, err := New(iohandle.NewMemory(), Options{TileSize: 16})
	require.NoError(t, err)
	callers := ImageSpec{SizeX: 8, SizeY: 8, OME: doc.Image(0)}
	require.NoError(t, addSpecs(w, []ImageSpec{callers, own}))
	require.NoError(t, w.Close())
	out := descriptionOf(t, w.h.(*iohandle.Memory).Bytes())
	_, err = ParseOME([]byte(out))
	require.NoError(t, err, "no ID twice:\n%s", out)
	got := omexmltest.Parse(t, []byte(out))
	images := got.Children("Image")
	require.Len(t, images, 2)
	assert.Equal(t, "Image:1", images[0].Attr("ID"))
	assert.Equal(t, "Image:1:1", images[1].Attr("ID"))
	assert.Equal(t, "Pixels:1:1", images[1].Element("Pixels").Attr("ID"))
	assert.Equal(t, "Channel:1:0:1", images[1].Element("Pixels", "Channel").Attr("ID"))
	assert.Equal(t, "Annotation:0:1", images[1].Element("AnnotationRef").Attr("ID"))
	assert.Equal(t, "Instrument:0:1", images[1].Element("InstrumentRef").Attr("ID"))
}

// TestOMEInterleaved: Pixels' Interleaved says whether the samples of one
// plane are stored together (RGBRGB): true for an RGB image, false for gray
// ones, of one or of several channels (each a plane of its own).
func TestOMEInterleaved(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec ImageSpec
		want string
	}{
		{"gray", ImageSpec{SizeX: 8, SizeY: 6}, "false"},
		{"gray channels", ImageSpec{SizeX: 8, SizeY: 6, SizeC: 3}, "false"},
		{"rgb", ImageSpec{SizeX: 8, SizeY: 6, SamplesPerPixel: 3}, "true"},
		{"rgb uint16", ImageSpec{SizeX: 8, SizeY: 6, SamplesPerPixel: 3, PixelType: Uint16}, "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := descriptionOf(t, writeImages(t, Options{TileSize: 16}, tc.spec))
			px := omexmltest.Parse(t, []byte(out)).Element("Image", "Pixels")
			require.NotNil(t, px, out)
			assert.Equal(t, tc.want, px.Attr("Interleaved"), out)
		})
	}
}
