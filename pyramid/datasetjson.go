package pyramid

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"strconv"
	"strings"
	"time"
)

// MaxPlanSize is the longest plan ParseDataset reads, in bytes: room for
// an OME document of MaxOMEXMLSize escaped in JSON, and for the specs of
// its images beside it.
const MaxPlanSize = 4 * MaxOMEXMLSize

// planVersion is the version of the plan's JSON that this package writes
// and reads.
const planVersion = 1

// planJSON is a plan as JSON. Its keys are DatasetSpec's and ImageSpec's
// field names; the option types are written as their names ("lzw",
// "uint16"), colours as "#RRGGBBAA", times in RFC 3339 (without a zone
// in NoZone), and the instruments once, in Instruments, which images name
// by index.
type planJSON struct {
	Version     int
	Name        string
	Seed        string `json:",omitempty"`
	Companion   bool   `json:",omitempty"`
	Options     optionsJSON
	OME         string        `json:",omitempty"`
	Instruments []*Instrument `json:",omitempty"`
	Images      []imageJSON
	Files       []DatasetFile `json:",omitempty"`
	Split       *Split        `json:",omitempty"` // read only: written resolved, as Files
}

// optionsJSON are the writer options of a plan.
type optionsJSON struct {
	TileSize     int `json:",omitempty"`
	Compression  Compression
	Level        int       `json:",omitempty"`
	Quality      int       `json:",omitempty"`
	JPEGColor    JPEGColor `json:",omitempty"`
	Predictor    Predictor
	Levels       int `json:",omitempty"`
	Downsampling Downsampling
	BigTIFF      BigTIFF
}

// imageJSON is an ImageSpec as JSON.
type imageJSON struct {
	Name                                                    string `json:",omitempty"`
	SizeX, SizeY                                            int
	SizeZ, SizeC, SizeT                                     int            `json:",omitempty"`
	DimensionOrder                                          DimensionOrder `json:",omitempty"`
	PixelType                                               PixelType
	SamplesPerPixel                                         int                `json:",omitempty"`
	PhysicalSizeX, PhysicalSizeY, PhysicalSizeZ             float64            `json:",omitempty"`
	PhysicalSizeXUnit, PhysicalSizeYUnit, PhysicalSizeZUnit string             `json:",omitempty"`
	TimeIncrement                                           Quantity           `json:",omitzero"`
	Channels                                                []channelJSON      `json:",omitempty"`
	AcquisitionDate                                         planTime           `json:",omitzero"`
	Description                                             string             `json:",omitempty"`
	Annotations                                             []KeyValue         `json:",omitempty"`
	Instrument                                              *int               `json:",omitempty"`
	ObjectiveSettings                                       *ObjectiveSettings `json:",omitempty"`
	PlaneInfo                                               []planeJSON        `json:",omitempty"`
}

// channelJSON is a Channel as JSON.
type channelJSON struct {
	Name                                                  string               `json:",omitempty"`
	Color                                                 string               `json:",omitempty"`
	ExcitationWavelength, EmissionWavelength, PinholeSize Quantity             `json:",omitzero"`
	Fluor                                                 string               `json:",omitempty"`
	AcquisitionMode                                       AcquisitionMode      `json:",omitempty"`
	IlluminationType                                      IlluminationType     `json:",omitempty"`
	ContrastMethod                                        ContrastMethod       `json:",omitempty"`
	LightSourceSettings                                   *LightSourceSettings `json:",omitempty"`
	DetectorSettings                                      *DetectorSettings    `json:",omitempty"`
}

// planeJSON is a Plane as JSON.
type planeJSON struct {
	Z, C, T                                               int
	DeltaT, ExposureTime, PositionX, PositionY, PositionZ Quantity `json:",omitzero"`
}

// MarshalJSON returns the plan as JSON, resolved (see Spec): the canonical
// form the UUIDs derive from, which ParseDataset reads back into an equal
// Dataset. json.MarshalIndent makes it readable; the UUIDs do not depend on
// the layout of the JSON, only on what it says. A nil or zero Dataset has
// no plan to give: it is ErrPlan.
func (d *Dataset) MarshalJSON() ([]byte, error) {
	if d.unmade() {
		return nil, errUnmade
	}
	return bytes.Clone(d.canonical), nil
}

// marshal writes the resolved plan as compact JSON.
func (d *Dataset) marshal() ([]byte, error) {
	s := d.spec
	o := s.Options
	p := planJSON{Version: planVersion, Name: s.Name, Seed: s.Seed, Companion: s.Companion, OME: s.OME, Files: s.Files,
		Options: optionsJSON{TileSize: o.TileSize, Compression: o.Compression, Level: o.Level, Quality: o.Quality, JPEGColor: o.JPEGColor, Predictor: o.Predictor,
			Levels: o.Levels, Downsampling: o.Downsampling, BigTIFF: o.BigTIFF}}
	instruments := map[*Instrument]int{}
	for _, im := range s.Images {
		p.Images = append(p.Images, imageToJSON(im, instruments, &p.Instruments))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, planErrorf("JSON: %v", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// planTime is a date in a plan: as the OME-XML writes it, with its zone
// or, in NoZone, with none.
type planTime time.Time

// IsZero reports whether t is the zero time, which a plan leaves out.
func (t planTime) IsZero() bool { return time.Time(t).IsZero() }

// MarshalJSON writes t as the OME-XML does.
func (t planTime) MarshalJSON() ([]byte, error) {
	v := xsdTime(time.Time(t)) // of 4 digits of year: NewDataset refuses more
	if v.Location() != NoZone {
		return v.MarshalJSON()
	}
	return json.Marshal(xsdDate(v))
}

// UnmarshalJSON reads an RFC 3339 date or, in NoZone, one without a zone;
// null is no date.
func (t *planTime) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if v, err = time.ParseInLocation("2006-01-02T15:04:05.999999999", s, NoZone); err != nil {
			return fmt.Errorf("AcquisitionDate %q is no RFC 3339 date", s)
		}
	}
	*t = planTime(v)
	return nil
}

// imageToJSON converts s, adding its instrument to list on first use.
func imageToJSON(s ImageSpec, index map[*Instrument]int, list *[]*Instrument) imageJSON {
	j := imageJSON{Name: s.Name, SizeX: s.SizeX, SizeY: s.SizeY, SizeZ: s.SizeZ, SizeC: s.SizeC, SizeT: s.SizeT,
		DimensionOrder: s.DimensionOrder, PixelType: s.PixelType, SamplesPerPixel: s.SamplesPerPixel,
		PhysicalSizeX: s.PhysicalSizeX, PhysicalSizeY: s.PhysicalSizeY, PhysicalSizeZ: s.PhysicalSizeZ,
		PhysicalSizeXUnit: s.PhysicalSizeXUnit, PhysicalSizeYUnit: s.PhysicalSizeYUnit, PhysicalSizeZUnit: s.PhysicalSizeZUnit,
		TimeIncrement: s.TimeIncrement, AcquisitionDate: planTime(s.AcquisitionDate), Description: s.Description, Annotations: s.Annotations,
		ObjectiveSettings: s.ObjectiveSettings}
	for _, c := range s.Channels {
		cj := channelJSON{Name: c.Name, ExcitationWavelength: c.ExcitationWavelength, EmissionWavelength: c.EmissionWavelength,
			PinholeSize: c.PinholeSize, Fluor: c.Fluor, AcquisitionMode: c.AcquisitionMode, IlluminationType: c.IlluminationType,
			ContrastMethod: c.ContrastMethod, LightSourceSettings: c.LightSourceSettings, DetectorSettings: c.DetectorSettings}
		if c.Color != nil {
			n := color.NRGBAModel.Convert(c.Color).(color.NRGBA)
			cj.Color = fmt.Sprintf("#%02X%02X%02X%02X", n.R, n.G, n.B, n.A)
		}
		j.Channels = append(j.Channels, cj)
	}
	if s.Instrument != nil {
		k, ok := index[s.Instrument]
		if !ok {
			k = len(*list)
			index[s.Instrument] = k
			*list = append(*list, s.Instrument)
		}
		j.Instrument = &k
	}
	for _, pl := range s.PlaneInfo {
		j.PlaneInfo = append(j.PlaneInfo, planeJSON(pl))
	}
	return j
}

// ParseDataset reads a plan written as JSON (see MarshalJSON) and checks it
// as NewDataset does. Keys are DatasetSpec's and ImageSpec's field names,
// and "Version", which must be 1 (the plan format's version, which
// MarshalJSON writes); unknown keys are refused. Instead of Files, a plan
// may give Split, which ParseDataset resolves. A plan longer than
// MaxPlanSize is refused before it is parsed.
func ParseDataset(data []byte) (*Dataset, error) {
	if len(data) > MaxPlanSize {
		return nil, planErrorf("%d bytes of JSON, more than MaxPlanSize (%d)", len(data), MaxPlanSize)
	}
	if err := checkPlanCounts(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p planJSON
	if err := dec.Decode(&p); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, planErrorf("JSON: data after the plan")
	}
	if p.Version != planVersion {
		return nil, planErrorf("Version %d: this package reads version %d", p.Version, planVersion)
	}
	spec := DatasetSpec{Name: p.Name, Seed: p.Seed, Companion: p.Companion, OME: p.OME, Files: p.Files,
		Options: Options{TileSize: p.Options.TileSize, Compression: p.Options.Compression, Level: p.Options.Level,
			Quality: p.Options.Quality, JPEGColor: p.Options.JPEGColor,
			Predictor: p.Options.Predictor, Levels: p.Options.Levels, Downsampling: p.Options.Downsampling, BigTIFF: p.Options.BigTIFF}}
	if p.Split != nil {
		spec.Split = *p.Split
	}
	for i, in := range p.Instruments {
		if in == nil {
			return nil, planErrorf("Instruments[%d] is null", i)
		}
	}
	for i, j := range p.Images {
		s, err := imageFromJSON(j, p.Instruments)
		if err != nil {
			return nil, planError(fmt.Sprintf("Images[%d]", i), err)
		}
		spec.Images = append(spec.Images, s)
	}
	return NewDataset(spec)
}

// checkPlanCounts counts the elements of a plan's arrays, without keeping
// them (a slice of struct{} takes no memory an element), and refuses more
// than an OME-XML the readers take can describe, before the plan is
// decoded: decoded, a short plan of many small elements would take memory
// out of all proportion to it. A plan that is no JSON, or of the wrong
// shape, is left to the decoding to refuse.
func checkPlanCounts(data []byte) error {
	var top struct {
		Images, Instruments, Files []struct{}
	}
	_ = json.Unmarshal(data, &top)
	if err := checkImageCount(len(top.Images)); err != nil {
		return err
	}
	switch {
	case len(top.Files) > MaxDatasetFiles:
		return planErrorf("%d Files, more than MaxDatasetFiles (%d)", len(top.Files), MaxDatasetFiles)
	case len(top.Instruments) > MaxOMEXMLSize/minImageXML:
		return tooLarge("%d Instruments: more than an OME-XML of MaxOMEXMLSize (%d bytes) describes", len(top.Instruments), MaxOMEXMLSize)
	}
	// Now that there are few enough, what each holds.
	var inner struct {
		Images []struct{ Channels, Annotations, PlaneInfo []struct{} }
		Files  []struct{ Planes []struct{} }
	}
	_ = json.Unmarshal(data, &inner)
	count := map[string]int{}
	for _, im := range inner.Images {
		count["Channels"] += len(im.Channels)
		count["PlaneInfo"] += len(im.PlaneInfo)
		count["Annotations"] += len(im.Annotations) / 3 // an M element takes at least 12 bytes: three, minPlaneXML
	}
	for _, f := range inner.Files {
		count["Files' Planes"] += len(f.Planes)
	}
	for _, what := range []string{"Channels", "PlaneInfo", "Annotations", "Files' Planes"} {
		// Each is an element of the OME-XML of at least minPlaneXML bytes
		// (a Channel, a Plane, three M elements, a TiffData).
		if count[what] > MaxOMEXMLSize/minPlaneXML {
			return tooLarge("%s: more than an OME-XML of MaxOMEXMLSize (%d bytes) describes", what, MaxOMEXMLSize)
		}
	}
	return nil
}

// jsonError describes an error of encoding/json as a bad plan.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return planErrorf("JSON at byte %d: %v", syntax.Offset, err)
	}
	for _, kind := range kinds {
		if errors.Is(err, kind) { // a name an option type refused
			return planError("JSON", err)
		}
	}
	return planErrorf("JSON: %v", err)
}

// imageFromJSON converts j, whose instrument is an index in instruments.
func imageFromJSON(j imageJSON, instruments []*Instrument) (ImageSpec, error) {
	s := ImageSpec{Name: j.Name, SizeX: j.SizeX, SizeY: j.SizeY, SizeZ: j.SizeZ, SizeC: j.SizeC, SizeT: j.SizeT,
		DimensionOrder: j.DimensionOrder, PixelType: j.PixelType, SamplesPerPixel: j.SamplesPerPixel,
		PhysicalSizeX: j.PhysicalSizeX, PhysicalSizeY: j.PhysicalSizeY, PhysicalSizeZ: j.PhysicalSizeZ,
		PhysicalSizeXUnit: j.PhysicalSizeXUnit, PhysicalSizeYUnit: j.PhysicalSizeYUnit, PhysicalSizeZUnit: j.PhysicalSizeZUnit,
		TimeIncrement: j.TimeIncrement, AcquisitionDate: time.Time(j.AcquisitionDate), Description: j.Description, Annotations: j.Annotations,
		ObjectiveSettings: j.ObjectiveSettings}
	for c, cj := range j.Channels {
		ch := Channel{Name: cj.Name, ExcitationWavelength: cj.ExcitationWavelength, EmissionWavelength: cj.EmissionWavelength,
			PinholeSize: cj.PinholeSize, Fluor: cj.Fluor, AcquisitionMode: cj.AcquisitionMode, IlluminationType: cj.IlluminationType,
			ContrastMethod: cj.ContrastMethod, LightSourceSettings: cj.LightSourceSettings, DetectorSettings: cj.DetectorSettings}
		if cj.Color != "" {
			rgba, err := parseColor(cj.Color)
			if err != nil {
				return s, fmt.Errorf("%w: Channels[%d].Color %q is not #RRGGBB or #RRGGBBAA", ErrMetadata, c, cj.Color)
			}
			ch.Color = rgba
		}
		s.Channels = append(s.Channels, ch)
	}
	if j.Instrument != nil {
		k := *j.Instrument
		if k < 0 || k >= len(instruments) {
			return s, fmt.Errorf("%w: Instrument %d of the plan's %d", ErrMetadata, k, len(instruments))
		}
		s.Instrument = instruments[k]
	}
	for _, pl := range j.PlaneInfo {
		s.PlaneInfo = append(s.PlaneInfo, Plane(pl))
	}
	return s, nil
}

// parseColor reads "#RRGGBB" (opaque) or "#RRGGBBAA", in either case.
func parseColor(s string) (color.NRGBA, error) {
	hex, ok := strings.CutPrefix(s, "#")
	if !ok || len(hex) != 6 && len(hex) != 8 {
		return color.NRGBA{}, strconv.ErrSyntax
	}
	if len(hex) == 6 {
		hex += "ff"
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil {
		return color.NRGBA{}, err
	}
	return color.NRGBA{R: uint8(v >> 24), G: uint8(v >> 16), B: uint8(v >> 8), A: uint8(v)}, nil
}
