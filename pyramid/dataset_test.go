package pyramid

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDatasetSplit: each rule resolves into the files it says, named from
// the dataset's Name, every plane once; explicit Files are kept.
func TestDatasetSplit(t *testing.T) {
	r := func(image, first, count int) PlaneRange { return PlaneRange{Image: image, First: first, Count: count} }
	three := stackPlan(3, 2, 2, 16, Split{}) // 3 images of 4 planes
	uneven := stackPlan(4, 1, 1, 16, Split{})
	for i, z := range []int{5, 1, 1, 5} {
		uneven.Images[i].SizeZ = z
	}
	tests := []struct {
		name  string
		spec  DatasetSpec
		split Split
		want  []DatasetFile
	}{
		{"one file", three, Split{}, []DatasetFile{{"stack.ome.tif", []PlaneRange{r(0, 0, 4), r(1, 0, 4), r(2, 0, 4)}}}},
		{"by plane count, even", three, Split{Files: 3}, []DatasetFile{
			{"stack_0.ome.tif", []PlaneRange{r(0, 0, 4)}}, {"stack_1.ome.tif", []PlaneRange{r(1, 0, 4)}}, {"stack_2.ome.tif", []PlaneRange{r(2, 0, 4)}}}},
		{"by plane count, images span files", three, Split{Files: 5}, []DatasetFile{
			{"stack_0.ome.tif", []PlaneRange{r(0, 0, 3)}}, {"stack_1.ome.tif", []PlaneRange{r(0, 3, 1), r(1, 0, 2)}},
			{"stack_2.ome.tif", []PlaneRange{r(1, 2, 2)}}, {"stack_3.ome.tif", []PlaneRange{r(2, 0, 2)}}, {"stack_4.ome.tif", []PlaneRange{r(2, 2, 2)}}}},
		{"one per image", three, Split{ByImage: true}, []DatasetFile{
			{"stack_0.ome.tif", []PlaneRange{r(0, 0, 4)}}, {"stack_1.ome.tif", []PlaneRange{r(1, 0, 4)}}, {"stack_2.ome.tif", []PlaneRange{r(2, 0, 4)}}}},
		{"whole images, balanced", uneven, Split{Files: 2, ByImage: true}, []DatasetFile{
			{"stack_0.ome.tif", []PlaneRange{r(0, 0, 5), r(1, 0, 1)}}, {"stack_1.ome.tif", []PlaneRange{r(2, 0, 1), r(3, 0, 5)}}}},
		{"whole images, closest cut", uneven, Split{Files: 3, ByImage: true}, []DatasetFile{
			{"stack_0.ome.tif", []PlaneRange{r(0, 0, 5)}}, {"stack_1.ome.tif", []PlaneRange{r(1, 0, 1), r(2, 0, 1)}}, {"stack_2.ome.tif", []PlaneRange{r(3, 0, 5)}}}},
		{"whole images, one each at least", uneven, Split{Files: 4, ByImage: true}, []DatasetFile{
			{"stack_0.ome.tif", []PlaneRange{r(0, 0, 5)}}, {"stack_1.ome.tif", []PlaneRange{r(1, 0, 1)}},
			{"stack_2.ome.tif", []PlaneRange{r(2, 0, 1)}}, {"stack_3.ome.tif", []PlaneRange{r(3, 0, 5)}}}},
		{"names padded to sort", stackPlan(11, 1, 1, 16, Split{}), Split{ByImage: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Split = tt.split
			d := mustDataset(t, tt.spec)
			if tt.want == nil {
				assert.Equal(t, "stack_00.ome.tif", d.File(0).Name)
				assert.Equal(t, "stack_10.ome.tif", d.File(10).Name)
				return
			}
			assert.Equal(t, tt.want, d.Spec().Files)
			assert.Equal(t, Split{}, d.Spec().Split)
		})
	}
}

// TestDatasetSplitStack: the stack workload in 8 files by plane count:
// 1890 planes each, 10.5 images, so that images span files.
func TestDatasetSplitStack(t *testing.T) {
	d := mustDataset(t, stackPlan(84, 90, 2, 128, Split{Files: 8}))
	require.Equal(t, 8, d.Files())
	for i := range 8 {
		n := 0
		for range d.Planes(i) {
			n++
		}
		assert.Equal(t, 1890, n, "file %d", i)
	}
	assert.Equal(t, []PlaneRange{{Image: 10, First: 90, Count: 90}, {Image: 11, Count: 180}}, d.File(1).Planes[:2])
}

// TestNewDatasetRefuses: a plan that cannot be written is refused, naming
// the field, with ErrPlan and the kind of a bad image or option.
func TestNewDatasetRefuses(t *testing.T) {
	good := func() DatasetSpec { return stackPlan(2, 2, 1, 16, Split{}) }
	with := func(change func(s *DatasetSpec)) DatasetSpec {
		s := good()
		change(&s)
		return s
	}
	files := func(f ...DatasetFile) func(s *DatasetSpec) { return func(s *DatasetSpec) { s.Files = f } }
	r := func(image, first, count int) PlaneRange { return PlaneRange{Image: image, First: first, Count: count} }
	tests := []struct {
		name string
		spec DatasetSpec
		also error // the kind besides ErrPlan
		want string
	}{
		{"no name", with(func(s *DatasetSpec) { s.Name = "" }), nil, "Name is empty"},
		{"name with a slash", with(func(s *DatasetSpec) { s.Name = "a/b" }), nil, `Name "a/b.ome.tif" is not a file name`},
		{"no images", with(func(s *DatasetSpec) { s.Images = nil }), nil, "no images"},
		{"bad image", with(func(s *DatasetSpec) { s.Images[1].SizeX = 0 }), ErrSize, "Images[1]: bad image size: SizeX 0 (image 0 x 16"},
		{"image past OME's sizes", with(func(s *DatasetSpec) { s.Images[1].SizeX = 1 << 31 }), ErrSize, "Images[1]: bad image size: SizeX 2147483648 (image"},
		{"bad metadata", with(func(s *DatasetSpec) { s.Images[0].PhysicalSizeXUnit = "parsec" }), ErrMetadata, `Images[0]: bad metadata: PhysicalSizeXUnit "parsec" is no OME length unit`},
		{"image with OME", with(func(s *DatasetSpec) { s.Images[0].OME = &OMEImage{} }), nil, "Images[0].OME is set"},
		{"workers", with(func(s *DatasetSpec) { s.Options.Workers = 2 }), ErrOption, "Options.Workers: bad option: set, but"},
		{"uuid", with(func(s *DatasetSpec) { s.Options.UUID = "x" }), ErrOption, "Options.UUID: bad option: set, but"},
		{"bad option", with(func(s *DatasetSpec) { s.Options.TileSize = 17 }), ErrOption, "Options: bad option: TileSize 17"},
		{"bad level", with(func(s *DatasetSpec) { s.Options.Compression, s.Options.Level = Deflate, 99 }), ErrOption, "Options: bad option: Level 99"},
		{"predictor of floats", with(func(s *DatasetSpec) { s.Options.Predictor = PredictorFloatingPoint }), ErrOption, "Images[0]: bad option: floating-point predictor on uint16"},
		{"OME of another image count", with(func(s *DatasetSpec) { s.OME = tifffileDoc() }), ErrOMEConflict, "OME: OME-XML contradicts the pixels"},
		{"OME not parsed", with(func(s *DatasetSpec) { s.OME = "<OME" }), ErrOMESyntax, "OME: OME-XML is not well-formed"},
		{"files and split", with(func(s *DatasetSpec) { s.Split.Files = 2; s.Files = []DatasetFile{{Planes: []PlaneRange{r(0, 0, 2)}}} }), nil, "both Files and Split"},
		{"negative split", with(func(s *DatasetSpec) { s.Split.Files = -1 }), nil, "Split.Files -1 is negative"},
		{"more files than planes", with(func(s *DatasetSpec) { s.Split.Files = 5 }), nil, "Split.Files 5: more files than the 4 planes"},
		{"more files than images", with(func(s *DatasetSpec) { s.Split = Split{Files: 3, ByImage: true} }), nil, "Split.Files 3 with ByImage: more files than the 2 images"},
		{"plane in no file", with(files(DatasetFile{Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 1)}})), nil, "image 1: plane 1 is in no file"},
		{"plane twice", with(files(DatasetFile{Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}}, DatasetFile{Planes: []PlaneRange{r(1, 1, 1)}})),
			nil, "image 1: plane 1 is in stack_1.ome.tif and stack_0.ome.tif"},
		{"range outside the image", with(files(DatasetFile{Planes: []PlaneRange{r(0, 0, 3), r(1, 0, 2)}})), nil, "Files[0].Planes[0]: 3 planes from 0, of an image of 2"},
		{"unknown image", with(files(DatasetFile{Planes: []PlaneRange{r(2, 0, 1)}})), nil, "Files[0].Planes[0]: image 2 of 2"},
		{"empty file", with(files(DatasetFile{Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}}, DatasetFile{})), nil, "Files[1] (stack_1.ome.tif) holds no planes"},
		{"same names", with(files(DatasetFile{Name: "A.tif", Planes: []PlaneRange{r(0, 0, 2)}}, DatasetFile{Name: "a.tif", Planes: []PlaneRange{r(1, 0, 2)}})),
			nil, `Files[1].Name "a.tif" is the name of Files[0] too`},
		{"a file named as the companion", with(func(s *DatasetSpec) {
			s.Companion = true
			files(DatasetFile{Name: "stack.companion.ome", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})(s)
		}), nil, `Files[0].Name "stack.companion.ome" does not end in .tif, .tiff, .btf, .tf2 or .tf8`},
		{"not a TIFF's name", with(files(DatasetFile{Name: "a.png", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil,
			`Files[0].Name "a.png" does not end in .tif, .tiff, .btf, .tf2 or .tf8: Bio-Formats goes by the name`},
		{"no extension", with(files(DatasetFile{Name: "a", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil, `Files[0].Name "a" does not end in .tif`},
		{"dot dot", with(files(DatasetFile{Name: "..", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil, `Files[0].Name ".." is not a file name`},
		{"a Windows device", with(files(DatasetFile{Name: "nul.ome.tif", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil,
			`Files[0].Name "nul.ome.tif" is not a file name on Windows, where it names a device (whatever its extension)`},
		{"another Windows device", with(files(DatasetFile{Name: "Com7 .tif", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil, `names a device`},
		{"a final dot", with(files(DatasetFile{Name: "stack.", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil, `which drops a final dot or space`},
		// Names the readers (this module's, Bio-Formats' on Windows) would
		// take for others: they were written, and checked complete.
		{"a drive", with(files(DatasetFile{Name: "C:x.ome.tif", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil,
			`Files[0].Name "C:x.ome.tif" is not a file name on Windows, which refuses : * ? " < > | and control characters in one`},
		{"a tab", with(files(DatasetFile{Name: "a\tb.ome.tif", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil, `which refuses : * ? " < > | and control characters`},
		{"a star", with(files(DatasetFile{Name: "a*.ome.tif", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil, `which refuses : * ? " < > | and control characters`},
		{"a first space", with(files(DatasetFile{Name: " lead.ome.tif", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil,
			`Files[0].Name " lead.ome.tif" starts with a space, which readers of TiffData's FileName trim`},
		{"a dataset name that starts with a space", with(func(s *DatasetSpec) { s.Name = " lead" }), nil, `starts with a space`},
		{"a superscript device", with(files(DatasetFile{Name: "COM¹.ome.tif", Planes: []PlaneRange{r(0, 0, 2), r(1, 0, 2)}})), nil, `names a device`},
		{"names equal but for normalization", with(files(DatasetFile{Name: "caf\u00e9.tif", Planes: []PlaneRange{r(0, 0, 2)}}, DatasetFile{Name: "cafe\u0301.tif", Planes: []PlaneRange{r(1, 0, 2)}})),
			nil, "Files[1].Name \"cafe\u0301.tif\" is the name of Files[0] too"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewDataset(tt.spec)
			require.ErrorIs(t, err, ErrPlan)
			if tt.also != nil {
				require.ErrorIs(t, err, tt.also)
			}
			assert.Contains(t, err.Error(), tt.want)
			requireOnePrefix(t, err)
		})
	}
}

// richPlan is a plan with every kind of metadata a plan holds: typed
// metadata, an instrument two images share, a caller's OME document, a
// seed and the companion layout.
func richPlan() DatasetSpec {
	in := &Instrument{Microscope: &Microscope{Product: Product{Manufacturer: "Zeiss"}, Type: MicroscopeInverted},
		LightSources: []LightSource{{Kind: LightSourceLaser, Wavelength: Quantity{488, "nm"}, Power: Quantity{5, "mW"}}},
		Detectors:    []Detector{{Type: DetectorCMOS, Gain: 1.5}},
		Objectives:   []Objective{{NominalMagnification: 63, LensNA: 1.4, Immersion: ImmersionOil}}}
	spec := DatasetSpec{Name: "rich", Seed: "acquisition 42", Companion: true,
		Options: Options{TileSize: 32, Compression: Zstd, Level: 5, Downsampling: Nearest, Levels: 2},
		OME:     `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Experimenter ID="Experimenter:0" FirstName="Ada"/></OME>`,
		Split:   Split{Files: 3}}
	for i := range 2 {
		spec.Images = append(spec.Images, ImageSpec{Name: fmt.Sprintf("well %d", i), SizeX: 40, SizeY: 33, SizeZ: 2, SizeT: 2, SizeC: 2,
			DimensionOrder: XYCTZ, PixelType: Uint16, PhysicalSizeX: 0.1, PhysicalSizeY: 0.2, PhysicalSizeZ: 3, PhysicalSizeZUnit: "nm",
			Channels: []Channel{{Name: "GFP", Color: color.RGBA{0, 255, 0, 255}, EmissionWavelength: Quantity{520, "nm"},
				LightSourceSettings: &LightSourceSettings{Wavelength: Quantity{488, "nm"}}, DetectorSettings: &DetectorSettings{Gain: 2},
				AcquisitionMode: AcquisitionWideField}},
			AcquisitionDate: time.Date(2026, 12, 3, 10, 30, 0, 5e8, time.FixedZone("", 3600)),
			Description:     "<b>&</b>", Annotations: []KeyValue{{"well", "A1"}},
			Instrument: in, ObjectiveSettings: &ObjectiveSettings{RefractiveIndex: 1.5},
			PlaneInfo: []Plane{{Z: 1, C: 1, T: 0, DeltaT: Quantity{2.5, "s"}, PositionX: Quantity{100, "µm"}}}})
	}
	spec.Images[1].AcquisitionDate = time.Date(2026, 12, 3, 10, 30, 0, 5e8, NoZone)
	return spec
}

// TestDatasetJSONRoundTrip: a plan's JSON reads back into the same
// plan: the same canonical JSON, UUIDs, files and OME-XML, the shared
// instrument written once.
func TestDatasetJSONRoundTrip(t *testing.T) {
	for name, spec := range map[string]DatasetSpec{"stack": stackPlan(5, 3, 2, 40, Split{Files: 4}), "rich": richPlan()} {
		t.Run(name, func(t *testing.T) {
			d := mustDataset(t, spec)
			data, err := json.MarshalIndent(d, "", "  ")
			require.NoError(t, err)
			back, err := ParseDataset(data)
			require.NoError(t, err)
			again, err := json.Marshal(back)
			require.NoError(t, err)
			compact, err := json.Marshal(d)
			require.NoError(t, err)
			assert.Equal(t, string(compact), string(again))
			require.Equal(t, d.Files(), back.Files())
			for i := range d.Files() {
				assert.Equal(t, d.UUID(i), back.UUID(i))
				assert.Equal(t, d.File(i), back.File(i))
				want, err := d.description(i)
				require.NoError(t, err)
				got, err := back.description(i)
				require.NoError(t, err)
				assert.Equal(t, string(want), string(got))
			}
			want, err := d.companionXML()
			require.NoError(t, err)
			got, err := back.companionXML()
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			if name == "rich" {
				assert.Equal(t, 1, strings.Count(string(data), `"Microscope"`), "the shared instrument is written once")
				assert.Contains(t, string(data), `"Color": "#00FF00FF"`)
				assert.Contains(t, string(data), `"AcquisitionDate": "2026-12-03T10:30:00.5+01:00"`)
				assert.Contains(t, string(data), `"AcquisitionDate": "2026-12-03T10:30:00.5"`, "a date of no zone stays without one")
				assert.Equal(t, NoZone, back.Spec().Images[1].AcquisitionDate.Location())
				assert.Equal(t, 1, strings.Count(string(want), "<Instrument "), "the shared instrument is in the OME-XML once")
				assert.Contains(t, string(want), `<Experimenter ID="Experimenter:0" FirstName="Ada"/>`)
			}
		})
	}
}

// TestPlanDates: a plan refuses a date its JSON cannot give back (a
// year past 9999, in UTC or of no zone), and reads null as no date.
func TestPlanDates(t *testing.T) {
	for _, loc := range []*time.Location{time.UTC, NoZone} {
		spec := stackPlan(1, 1, 1, 8, Split{Files: 1})
		spec.Images[0].AcquisitionDate = time.Date(12024, 1, 2, 3, 4, 5, 0, loc)
		_, err := NewDataset(spec)
		assert.ErrorIs(t, err, ErrPlan)
		assert.ErrorContains(t, err, "image 0: AcquisitionDate 12024-01-02T03:04:05", "%v", loc)
		assert.NotContains(t, err.Error(), "MarshalJSON")
	}
	d, err := ParseDataset([]byte(`{"Version": 1, "Name": "s", "Options": {"Compression": "lzw"},
		"Images": [{"SizeX": 8, "SizeY": 8, "PixelType": "uint8", "AcquisitionDate": null}], "Split": {"Files": 1}}`))
	require.NoError(t, err)
	assert.True(t, d.Spec().Images[0].AcquisitionDate.IsZero())
}

// TestParseDatasetSplitAndDefaults: a hand-written plan with a rule and
// without the defaults resolves to the same dataset as its resolved JSON.
func TestParseDatasetSplitAndDefaults(t *testing.T) {
	plan := `{"Version": 1, "Name": "stack", "Options": {"Compression": "zlib"},
		"Images": [{"SizeX": 64, "SizeY": 64, "SizeZ": 3, "PixelType": "uint16"}, {"SizeX": 64, "SizeY": 64, "SizeC": 2, "PixelType": "float"}],
		"Split": {"Files": 2}}`
	d, err := ParseDataset([]byte(plan))
	require.NoError(t, err)
	assert.Equal(t, []PlaneRange{{Image: 0, First: 0, Count: 3}}, d.File(0).Planes)
	assert.Equal(t, []PlaneRange{{Image: 1, First: 0, Count: 2}}, d.File(1).Planes)
	resolved, err := json.Marshal(d)
	require.NoError(t, err)
	assert.NotContains(t, string(resolved), "Split")
	assert.Contains(t, string(resolved), `"Compression":"deflate"`)
	back, err := ParseDataset(resolved)
	require.NoError(t, err)
	assert.Equal(t, d.UUID(1), back.UUID(1))
	same := mustDataset(t, DatasetSpec{Name: "stack", Options: Options{Compression: Deflate}, Split: Split{Files: 2},
		Images: []ImageSpec{{SizeX: 64, SizeY: 64, SizeZ: 3, PixelType: Uint16}, {SizeX: 64, SizeY: 64, SizeC: 2, PixelType: Float32}}})
	assert.Equal(t, d.UUID(0), same.UUID(0), "a plan made in Go and its JSON are the same dataset")
}

// TestParseDatasetRefuses: JSON that is no plan is refused with ErrPlan,
// saying why, and with the kind of a name an option type refuses.
func TestParseDatasetRefuses(t *testing.T) {
	image := `{"SizeX": 8, "SizeY": 8}`
	tests := []struct {
		name, plan string
		also       error
		want       string
	}{
		{"syntax", `{"Version": 1,,}`, nil, "JSON at byte 15: invalid character ','"},
		{"cut short", `{"Version": 1,`, nil, "JSON: unexpected EOF"},
		{"not an object", `[]`, nil, "JSON: json: cannot unmarshal array"},
		{"trailing data", `{"Version": 1, "Name": "a", "Images": [` + image + `]} {}`, nil, "data after the plan"},
		{"unknown key", `{"Version": 1, "Name": "a", "Images": [` + image + `], "Tiles": 3}`, nil, `unknown field "Tiles"`},
		{"unknown key of an image", `{"Version": 1, "Name": "a", "Images": [{"SizeX": 8, "SizeY": 8, "Colour": 1}]}`, nil, `unknown field "Colour"`},
		{"no version", `{"Name": "a", "Images": [` + image + `]}`, nil, "Version 0: this package reads version 1"},
		{"unknown compression", `{"Version": 1, "Name": "a", "Options": {"Compression": "jpeg2000"}, "Images": [` + image + `]}`, ErrOption, `unknown compression "jpeg2000"`},
		{"unknown pixel type", `{"Version": 1, "Name": "a", "Images": [{"SizeX": 8, "SizeY": 8, "PixelType": "bit"}]}`, ErrOption, `unknown pixel type "bit"`},
		{"bad colour", `{"Version": 1, "Name": "a", "Images": [{"SizeX": 8, "SizeY": 8, "Channels": [{"Color": "green"}]}]}`, ErrMetadata, `Images[0]: bad metadata: Channels[0].Color "green"`},
		{"unknown instrument", `{"Version": 1, "Name": "a", "Images": [{"SizeX": 8, "SizeY": 8, "Instrument": 0}]}`, ErrMetadata, "Instrument 0 of the plan's 0"},
		{"null instrument", `{"Version": 1, "Name": "a", "Instruments": [null], "Images": [` + image + `]}`, nil, "Instruments[0] is null"},
		{"huge number", `{"Version": 1, "Name": "a", "Images": [{"SizeX": 1e30, "SizeY": 8}]}`, nil, "cannot unmarshal number 1e30"},
		{"too many files", `{"Version": 1, "Name": "a", "Images": [{"SizeX": 8, "SizeY": 8, "SizeZ": 100000}], "Split": {"Files": 70000}}`, nil, "Split.Files 70000: more than MaxDatasetFiles (4096)"},
		{"more files than planes", `{"Version": 1, "Name": "a", "Images": [{"SizeX": 8, "SizeY": 8, "SizeZ": 100000}], "Split": {"Files": 1000000}}`, nil, "Split.Files 1000000: more files than the 100000 planes"},
		{"OME-XML past its bound, many planes", `{"Version": 1, "Name": "a", "Images": [{"SizeX": 8, "SizeY": 8, "SizeZ": 16777216}]}`, nil,
			"the OME-XML of 1 image takes more than MaxOMEXMLSize (67108864 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDataset([]byte(tt.plan))
			require.ErrorIs(t, err, ErrPlan)
			if tt.also != nil {
				require.ErrorIs(t, err, tt.also)
			}
			assert.Contains(t, err.Error(), tt.want)
			requireOnePrefix(t, err)
		})
	}
	_, err := ParseDataset(make([]byte, MaxPlanSize+1))
	require.ErrorIs(t, err, ErrPlan)
	assert.Contains(t, err.Error(), "more than MaxPlanSize")
}

// uuidRE is a version 8 UUID of the RFC 9562 variant, as a URN.
var uuidRE = regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestDatasetUUIDs: the UUIDs derive from the plan: equal plans give equal
// UUIDs, each file its own; a different seed, name, assignment, option or
// image gives others.
func TestDatasetUUIDs(t *testing.T) {
	base := func() DatasetSpec { return stackPlan(3, 2, 2, 16, Split{Files: 3}) }
	d := mustDataset(t, base())
	seen := map[string]bool{}
	for i := range d.Files() {
		require.Regexp(t, uuidRE, d.UUID(i))
		require.False(t, seen[d.UUID(i)], "file %d's UUID is another's", i)
		seen[d.UUID(i)] = true
	}
	assert.Equal(t, d.UUID(1), mustDataset(t, base()).UUID(1), "an equal plan gives equal UUIDs")
	name, uuid := mustDataset(t, base()).Companion()
	assert.Empty(t, name+uuid)
	changes := map[string]func(s *DatasetSpec){
		"seed":        func(s *DatasetSpec) { s.Seed = "other slide" },
		"name":        func(s *DatasetSpec) { s.Name = "other" },
		"assignment":  func(s *DatasetSpec) { s.Split.Files = 4 },
		"option":      func(s *DatasetSpec) { s.Options.Compression = None },
		"image name":  func(s *DatasetSpec) { s.Images[2].Name = "x" },
		"companion":   func(s *DatasetSpec) { s.Companion = true },
		"OME":         func(s *DatasetSpec) { s.OME = `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"/>` },
		"channel":     func(s *DatasetSpec) { s.Images[0].Channels[1].Color = color.White },
		"physical Z":  func(s *DatasetSpec) { s.Images[0].PhysicalSizeZ = 2 },
		"time points": func(s *DatasetSpec) { s.Images[1].SizeT = 2 },
	}
	for what, change := range changes {
		s := base()
		change(&s)
		other := mustDataset(t, s)
		assert.NotEqual(t, d.UUID(0), other.UUID(0), what)
	}
	unchanged := map[string]func(s *DatasetSpec){
		"defaults spelled out": func(s *DatasetSpec) {
			s.Options.TileSize = 256
			for i := range s.Images {
				s.Images[i].SizeT, s.Images[i].DimensionOrder, s.Images[i].PhysicalSizeXUnit = 1, XYZCT, "µm"
			}
		},
		"the rule resolved": func(s *DatasetSpec) { s.Split, s.Files = Split{}, d.Spec().Files },
	}
	for what, change := range unchanged {
		s := base()
		change(&s)
		assert.Equal(t, d.UUID(0), mustDataset(t, s).UUID(0), what)
	}
	c := mustDataset(t, richPlan())
	name, uuid = c.Companion()
	assert.Equal(t, "rich.companion.ome", name)
	assert.Regexp(t, uuidRE, uuid)
}

// TestDatasetPlanesOrder: Planes lists a file's planes in the order of its
// IFDs, in each image's DimensionOrder.
func TestDatasetPlanesOrder(t *testing.T) {
	spec := richPlan() // XYCTZ: C fastest, then T, then Z
	d := mustDataset(t, spec)
	var got []PlaneRef
	for ref := range d.Planes(0) {
		got = append(got, ref)
	}
	assert.Equal(t, []PlaneRef{{0, 0, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}, {0, 0, 1, 1}, {0, 1, 0, 0}, {0, 1, 1, 0}}, got)
}

// TestDatasetUUIDsStable pins the UUIDs of a plan: they are part of the
// format, since the parts of one dataset may be written by processes
// running different versions of this package (a part written again after
// an upgrade must keep the UUID the others name).
func TestDatasetUUIDsStable(t *testing.T) {
	spec := stackPlan(3, 2, 2, 16, Split{Files: 2})
	spec.Seed, spec.Companion = "pinned", true
	d := mustDataset(t, spec)
	_, companion := d.Companion()
	assert.Equal(t, []string{"urn:uuid:b37b5e3b-4686-82df-bc47-49b37de6045c", "urn:uuid:5f6b7878-9be1-8679-bf09-a0ce5e3c8a5d", "urn:uuid:9ecb6832-1fd0-85e5-8960-94bd7c4a1cc7"}, []string{d.UUID(0), d.UUID(1), companion})
}

// TestPlanOptionsCoverEveryOption: each field of Options is either one of
// the plan's (in its JSON) or one planOptions refuses in a plan, so that
// an option added later is given its place, not dropped from plans.
func TestPlanOptionsCoverEveryOption(t *testing.T) {
	inPlan := map[string]bool{}
	for f := range reflect.TypeFor[optionsJSON]().Fields() {
		inPlan[f.Name] = true
	}
	refused := map[string]func(o *Options){
		"Workers": func(o *Options) { o.Workers = 1 }, "Progress": func(o *Options) { o.Progress = func(Progress) {} },
		"UUID": func(o *Options) { o.UUID = "x" }, "OME": func(o *Options) { o.OME = &OMEDocument{} },
	}
	for f := range reflect.TypeFor[Options]().Fields() {
		set := refused[f.Name]
		assert.True(t, inPlan[f.Name] != (set != nil), "Options.%s: in the plan's JSON %v, refused %v", f.Name, inPlan[f.Name], set != nil)
		if set != nil {
			spec := stackPlan(1, 1, 1, 16, Split{})
			set(&spec.Options)
			_, err := NewDataset(spec)
			assert.ErrorContains(t, err, "Options."+f.Name+": bad option: set")
			assert.ErrorIs(t, err, ErrOption)
		}
	}
}

// TestDatasetXMLBound: minImageXML and minPlaneXML are no more than what
// the smallest image and plane add to a dataset's OME-XML, so that
// checkXMLBound refuses no plan the readers take; a plan within the bound
// whose OME-XML is larger than MaxOMEXMLSize is refused too.
func TestDatasetXMLBound(t *testing.T) {
	size := func(images ...ImageSpec) int {
		t.Helper()
		d, err := NewDataset(DatasetSpec{Name: "a", Images: images})
		require.NoError(t, err)
		xml, err := d.metadata(d.UUID(0))
		require.NoError(t, err)
		return len(xml)
	}
	tiny := ImageSpec{SizeX: 1, SizeY: 1}
	one := size(tiny)
	assert.GreaterOrEqual(t, size(tiny, tiny)-one, minImageXML+minPlaneXML, "an image of one plane")
	assert.GreaterOrEqual(t, size(ImageSpec{SizeX: 1, SizeY: 1, SizeZ: 2})-one, minPlaneXML, "a plane")

	// 1.8 million planes pass the bound, and make about 75 MB of Plane
	// elements.
	_, err := NewDataset(DatasetSpec{Name: "a", Images: []ImageSpec{{SizeX: 1, SizeY: 1, SizeZ: 1_800_000}}})
	assert.ErrorIs(t, err, ErrPlan)
	assert.ErrorIs(t, err, ErrOMETooLarge)
	assert.Equal(t, "pyramid: bad dataset plan: the OME-XML is 72689624 bytes, more than MaxOMEXMLSize (67108864), which the readers of the set take", err.Error())

	// Too many images are refused before any is decoded (the first is bad).
	n := MaxOMEXMLSize/minImageXML + 1
	plan := `{"Version": 1, "Name": "a", "Images": [{"SizeX": "wide"}` + strings.Repeat(`,{}`, n-1) + `]}`
	_, err = ParseDataset([]byte(plan))
	assert.ErrorIs(t, err, ErrPlan)
	assert.ErrorContains(t, err, fmt.Sprintf("%d images: more than an OME-XML of MaxOMEXMLSize", n))
	_, err = ParseDataset([]byte(strings.Replace(plan, `,{}`, ``, 1)))
	assert.ErrorContains(t, err, "JSON: json: cannot unmarshal string into Go struct field imageJSON.Images.SizeX", "one fewer: decoded")

	// So are too many elements of other arrays, before they are decoded
	// (each one is bad).
	many := func(n int) string { return `{"Bad": 1}` + strings.Repeat(`,{"Bad": 1}`, n-1) }
	for _, tt := range []struct{ plan, want string }{
		{`{"Version": 1, "Name": "a", "Images": [{"SizeX": 1, "SizeY": 1, "PlaneInfo": [` + many(MaxOMEXMLSize/minPlaneXML+1) + `]}]}`,
			"PlaneInfo: more than an OME-XML of MaxOMEXMLSize"},
		{`{"Version": 1, "Name": "a", "Images": [{"SizeX": 1, "SizeY": 1, "Channels": [` + many(MaxOMEXMLSize/minPlaneXML+1) + `]}]}`,
			"Channels: more than an OME-XML of MaxOMEXMLSize"},
		{`{"Version": 1, "Name": "a", "Images": [{"SizeX": 1, "SizeY": 1, "Annotations": [` + many(3*(MaxOMEXMLSize/minPlaneXML)+3) + `]}]}`,
			"Annotations: more than an OME-XML of MaxOMEXMLSize"},
		{`{"Version": 1, "Name": "a", "Images": [{"SizeX": 1, "SizeY": 1}], "Files": [` + many(MaxDatasetFiles+1) + `]}`,
			"4097 Files, more than MaxDatasetFiles (4096)"},
		{`{"Version": 1, "Name": "a", "Images": [{"SizeX": 1, "SizeY": 1}], "Files": [{"Planes": [` + many(MaxOMEXMLSize/minPlaneXML+1) + `]}]}`,
			"Files' Planes: more than an OME-XML of MaxOMEXMLSize"},
		{`{"Version": 1, "Name": "a", "Images": [{"SizeX": 1, "SizeY": 1}], "Instruments": [` + many(MaxOMEXMLSize/minImageXML+1) + `]}`,
			"223697 Instruments: more than an OME-XML of MaxOMEXMLSize"},
	} {
		_, err = ParseDataset([]byte(tt.plan))
		assert.ErrorIs(t, err, ErrPlan)
		if !strings.Contains(tt.want, "MaxDatasetFiles") {
			assert.ErrorIs(t, err, ErrOMETooLarge)
		}
		assert.ErrorContains(t, err, tt.want)
	}
}

// TestDatasetZeroAndNil: a nil or zero Dataset's methods and a nil Part's
// give errors or zero values, not panics (Files, Spec, Companion and
// CreatePart panicked on nil; MarshalJSON gave no bytes and no error, which
// json.Marshal reported as "unexpected end of JSON input").
func TestDatasetZeroAndNil(t *testing.T) {
	for name, d := range map[string]*Dataset{"zero": {}, "nil": nil} {
		_, err := d.Check(t.TempDir())
		assert.ErrorIs(t, err, ErrPlan, name)
		assert.Zero(t, d.Files(), name)
		assert.Zero(t, d.Spec(), name)
		file, uuid := d.Companion()
		assert.Equal(t, [2]string{}, [2]string{file, uuid}, name)
		data, err := json.Marshal(d)
		if d == nil {
			assert.Equal(t, "null", string(data), "encoding/json's nil pointer")
		} else {
			assert.ErrorIs(t, err, ErrPlan, name)
		}
		_, err = d.CreatePart(context.Background(), t.TempDir(), 0, PartOptions{})
		assert.ErrorIs(t, err, ErrPlan, name)
		_, err = d.NewPart(context.Background(), iohandle.NewMemory(), 0, PartOptions{})
		assert.ErrorIs(t, err, ErrPlan, name)
		assert.ErrorIs(t, d.WritePart(context.Background(), t.TempDir(), 0, PartOptions{}, func(PlaneRef, []byte) error { return nil }), ErrPlan, name)
		assert.ErrorIs(t, d.WriteCompanion(t.TempDir(), iohandle.Options{}), ErrPlan, name)
	}
	var p *Part
	assert.ErrorIs(t, p.Close(), ErrClosed)
	assert.ErrorIs(t, p.Abort(), ErrClosed)
	assert.Zero(t, p.Stats())
}

// TestDatasetDoesNotChange: a Dataset never changes once made, whatever
// its caller does to the slices and pointers of the spec it was made
// from, or of the Spec it returns: the same plan, made again, has the same
// UUIDs (channels, annotations, planes and the instrument changed it).
func TestDatasetDoesNotChange(t *testing.T) {
	spec := richPlan()
	d := mustDataset(t, spec)
	before, uuid := d.Spec(), d.UUID(0)
	for i := range spec.Images {
		im := &spec.Images[i]
		if len(im.Channels) > 0 {
			im.Channels[0].Name = "changed"
			if ls := im.Channels[0].LightSourceSettings; ls != nil {
				ls.Wavelength.Value = 561
			}
			if ds := im.Channels[0].DetectorSettings; ds != nil {
				ds.Gain = 9
			}
		}
		if im.ObjectiveSettings != nil {
			im.ObjectiveSettings.RefractiveIndex = 1.33
		}
		if len(im.Annotations) > 0 {
			im.Annotations[0].Value = "changed"
		}
		if len(im.PlaneInfo) > 0 {
			im.PlaneInfo[0].Z = 99
		}
		if im.Instrument != nil && len(im.Instrument.Objectives) > 0 {
			im.Instrument.Objectives[0].LensNA = 0.123
		}
	}
	got := d.Spec()
	for i := range got.Images {
		if len(got.Images[i].Channels) > 0 {
			got.Images[i].Channels[0].Name = "changed through Spec"
		}
	}
	assert.Equal(t, before, d.Spec())
	again := mustDataset(t, d.Spec())
	assert.Equal(t, uuid, again.UUID(0))
	// Images sharing one instrument still share it.
	shared := map[*Instrument]int{}
	for _, im := range d.Spec().Images {
		if im.Instrument != nil {
			shared[im.Instrument]++
		}
	}
	for _, im := range richPlan().Images {
		if im.Instrument != nil {
			assert.Len(t, shared, 1, "one instrument, shared")
			break
		}
	}
}
