package pyramid

import (
	"fmt"
	"math"
	"strings"
)

// Quantity is a measured value with its unit, given as the OME schema's
// symbol for it: lengths in "nm", "µm", "mm", ... (the UnitsLength
// symbols, "pixel" and "reference frame" among them), times in "s", "ms",
// "µs", "min", ... (UnitsTime), powers in "mW", "W", ... (UnitsPower). A
// "u" or a Greek mu (U+03BC) is taken for the micro sign the schema's
// symbols use ("um", "us"), and written as it. The zero Quantity is not
// written; any other needs its Unit, so that 0 s and 0 µm can be written
// too.
type Quantity struct {
	Value float64
	Unit  string
}

// set reports whether the quantity is given.
func (q Quantity) set() bool { return q != Quantity{} }

// timeUnits and powerUnits are the OME UnitsTime and UnitsPower symbols.
var (
	timeUnits = unitSet("Ys", "Zs", "Es", "Ps", "Ts", "Gs", "Ms", "ks", "hs", "das", "s", "ds", "cs", "ms", "µs", "ns",
		"ps", "fs", "as", "zs", "ys", "min", "h", "d")
	powerUnits = unitSet("YW", "ZW", "EW", "PW", "TW", "GW", "MW", "kW", "hW", "daW", "W", "dW", "cW", "mW", "µW", "nW",
		"pW", "fW", "aW", "zW", "yW")
)

func unitSet(units ...string) map[string]bool {
	m := make(map[string]bool, len(units))
	for _, u := range units {
		m[u] = true
	}
	return m
}

// quantityKind checks a quantity of one kind.
type quantityKind struct {
	name     string
	units    func(string) bool
	positive bool // the schema's PositiveFloat
}

var (
	lengthKind   = quantityKind{name: "length", units: func(u string) bool { _, ok := lengthUnits[u]; return ok }}
	positiveKind = quantityKind{name: "length", units: lengthKind.units, positive: true}
	timeKind     = quantityKind{name: "time", units: func(u string) bool { return timeUnits[u] }}
	powerKind    = quantityKind{name: "power", units: func(u string) bool { return powerUnits[u] }}
)

// check validates q, the field named field.
func (k quantityKind) check(field string, q Quantity) error {
	switch {
	case !q.set():
		return nil
	case q.Unit == "":
		return fmt.Errorf("%w: %s %v has no unit", ErrMetadata, field, q.Value)
	case !k.units(microSign(q.Unit, k.units)):
		return fmt.Errorf("%w: %s: %q is not an OME %s unit", ErrMetadata, field, q.Unit, k.name)
	case math.IsNaN(q.Value) || math.IsInf(q.Value, 0) || math.Abs(q.Value) > math.MaxFloat32:
		return fmt.Errorf("%w: %s is %v", ErrMetadata, field, q.Value)
	case k.positive && (q.Value <= 0 || float32(q.Value) == 0): // xsd:float's positive values
		return fmt.Errorf("%w: %s is %v; it must be positive", ErrMetadata, field, q.Value)
	}
	return nil
}

// microSign returns unit with its first letter, "u" or a Greek mu
// (U+03BC), made the micro sign (U+00B5) that the OME schema's symbols
// use, if that makes it one of valid's; otherwise unit as it is.
func microSign(unit string, valid func(string) bool) string {
	for _, prefix := range []string{"u", "\u03bc"} {
		if rest, ok := strings.CutPrefix(unit, prefix); ok && rest != "" && valid("µ"+rest) {
			return "µ" + rest
		}
	}
	return unit
}

// omeUnit returns a quantity's unit, checked, as the schema writes it:
// with the micro sign for a "u" or a Greek mu (see Quantity).
func omeUnit(unit string) string {
	return microSign(unit, func(u string) bool {
		return lengthKind.units(u) || timeKind.units(u) || powerKind.units(u)
	})
}

// checkNumber validates a plain number field; 0 means not given.
func checkNumber(field string, v float64, positive bool) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 || positive && v < 0 {
		return fmt.Errorf("%w: %s is %v", ErrMetadata, field, v)
	}
	return nil
}

// checkEnum validates an enumerated value; "" means not given.
func checkEnum[E ~string](field string, v E, allowed map[string]bool) error {
	if v != "" && !allowed[string(v)] {
		return fmt.Errorf("%w: %s %q is not one of the schema's values", ErrMetadata, field, string(v))
	}
	return nil
}

// Immersion is an objective's immersion (OME Objective@Immersion).
type Immersion string

// Immersions.
const (
	ImmersionOil          Immersion = "Oil"
	ImmersionWater        Immersion = "Water"
	ImmersionWaterDipping Immersion = "WaterDipping"
	ImmersionAir          Immersion = "Air"
	ImmersionMulti        Immersion = "Multi"
	ImmersionGlycerol     Immersion = "Glycerol"
	ImmersionOther        Immersion = "Other"
)

// AcquisitionMode is how a channel was acquired (OME
// Channel@AcquisitionMode).
type AcquisitionMode string

// Acquisition modes.
const (
	AcquisitionWideField                           AcquisitionMode = "WideField"
	AcquisitionLaserScanningConfocalMicroscopy     AcquisitionMode = "LaserScanningConfocalMicroscopy"
	AcquisitionSpinningDiskConfocal                AcquisitionMode = "SpinningDiskConfocal"
	AcquisitionSlitScanConfocal                    AcquisitionMode = "SlitScanConfocal"
	AcquisitionMultiPhotonMicroscopy               AcquisitionMode = "MultiPhotonMicroscopy"
	AcquisitionStructuredIllumination              AcquisitionMode = "StructuredIllumination"
	AcquisitionSingleMoleculeImaging               AcquisitionMode = "SingleMoleculeImaging"
	AcquisitionTotalInternalReflection             AcquisitionMode = "TotalInternalReflection"
	AcquisitionFluorescenceLifetime                AcquisitionMode = "FluorescenceLifetime"
	AcquisitionSpectralImaging                     AcquisitionMode = "SpectralImaging"
	AcquisitionFluorescenceCorrelationSpectroscopy AcquisitionMode = "FluorescenceCorrelationSpectroscopy"
	AcquisitionNearFieldScanningOpticalMicroscopy  AcquisitionMode = "NearFieldScanningOpticalMicroscopy"
	AcquisitionSecondHarmonicGenerationImaging     AcquisitionMode = "SecondHarmonicGenerationImaging"
	AcquisitionPALM                                AcquisitionMode = "PALM"
	AcquisitionSTORM                               AcquisitionMode = "STORM"
	AcquisitionSTED                                AcquisitionMode = "STED"
	AcquisitionTIRF                                AcquisitionMode = "TIRF"
	AcquisitionFSM                                 AcquisitionMode = "FSM"
	AcquisitionLCM                                 AcquisitionMode = "LCM"
	AcquisitionOther                               AcquisitionMode = "Other"
	AcquisitionBrightField                         AcquisitionMode = "BrightField"
	AcquisitionSweptFieldConfocal                  AcquisitionMode = "SweptFieldConfocal"
	AcquisitionSPIM                                AcquisitionMode = "SPIM"
)

// IlluminationType is how a channel's specimen was lit (OME
// Channel@IlluminationType).
type IlluminationType string

// Illumination types.
const (
	IlluminationTransmitted     IlluminationType = "Transmitted"
	IlluminationEpifluorescence IlluminationType = "Epifluorescence"
	IlluminationOblique         IlluminationType = "Oblique"
	IlluminationNonLinear       IlluminationType = "NonLinear"
	IlluminationOther           IlluminationType = "Other"
)

// ContrastMethod is how a channel's contrast was made (OME
// Channel@ContrastMethod).
type ContrastMethod string

// Contrast methods.
const (
	ContrastBrightfield         ContrastMethod = "Brightfield"
	ContrastPhase               ContrastMethod = "Phase"
	ContrastDIC                 ContrastMethod = "DIC"
	ContrastHoffmanModulation   ContrastMethod = "HoffmanModulation"
	ContrastObliqueIllumination ContrastMethod = "ObliqueIllumination"
	ContrastPolarizedLight      ContrastMethod = "PolarizedLight"
	ContrastDarkfield           ContrastMethod = "Darkfield"
	ContrastFluorescence        ContrastMethod = "Fluorescence"
	ContrastOther               ContrastMethod = "Other"
)

// DetectorType is the kind of a detector (OME Detector@Type).
type DetectorType string

// Detector types.
const (
	DetectorCCD                     DetectorType = "CCD"
	DetectorIntensifiedCCD          DetectorType = "IntensifiedCCD"
	DetectorAnalogVideo             DetectorType = "AnalogVideo"
	DetectorPMT                     DetectorType = "PMT"
	DetectorPhotodiode              DetectorType = "Photodiode"
	DetectorSpectroscopy            DetectorType = "Spectroscopy"
	DetectorLifetimeImaging         DetectorType = "LifetimeImaging"
	DetectorCorrelationSpectroscopy DetectorType = "CorrelationSpectroscopy"
	DetectorFTIR                    DetectorType = "FTIR"
	DetectorEMCCD                   DetectorType = "EMCCD"
	DetectorAPD                     DetectorType = "APD"
	DetectorCMOS                    DetectorType = "CMOS"
	DetectorEBCCD                   DetectorType = "EBCCD"
	DetectorOther                   DetectorType = "Other"
)

// MicroscopeType is the build of a microscope (OME Microscope@Type).
type MicroscopeType string

// Microscope types.
const (
	MicroscopeUpright           MicroscopeType = "Upright"
	MicroscopeInverted          MicroscopeType = "Inverted"
	MicroscopeDissection        MicroscopeType = "Dissection"
	MicroscopeElectrophysiology MicroscopeType = "Electrophysiology"
	MicroscopeOther             MicroscopeType = "Other"
)

// LightSourceKind is the kind of a light source: the name of its OME
// element.
type LightSourceKind string

// Light source kinds.
const (
	LightSourceLaser    LightSourceKind = "Laser"
	LightSourceArc      LightSourceKind = "Arc"
	LightSourceFilament LightSourceKind = "Filament"
	LightSourceLED      LightSourceKind = "LightEmittingDiode"
	LightSourceGeneric  LightSourceKind = "GenericExcitationSource"
)

var (
	immersions        = unitSet("Oil", "Water", "WaterDipping", "Air", "Multi", "Glycerol", "Other")
	acquisitionModes  = unitSet("WideField", "LaserScanningConfocalMicroscopy", "SpinningDiskConfocal", "SlitScanConfocal", "MultiPhotonMicroscopy", "StructuredIllumination", "SingleMoleculeImaging", "TotalInternalReflection", "FluorescenceLifetime", "SpectralImaging", "FluorescenceCorrelationSpectroscopy", "NearFieldScanningOpticalMicroscopy", "SecondHarmonicGenerationImaging", "PALM", "STORM", "STED", "TIRF", "FSM", "LCM", "Other", "BrightField", "SweptFieldConfocal", "SPIM")
	illuminationTypes = unitSet("Transmitted", "Epifluorescence", "Oblique", "NonLinear", "Other")
	contrastMethods   = unitSet("Brightfield", "Phase", "DIC", "HoffmanModulation", "ObliqueIllumination", "PolarizedLight", "Darkfield", "Fluorescence", "Other")
	detectorTypes     = unitSet("CCD", "IntensifiedCCD", "AnalogVideo", "PMT", "Photodiode", "Spectroscopy", "LifetimeImaging", "CorrelationSpectroscopy", "FTIR", "EMCCD", "APD", "CMOS", "EBCCD", "Other")
	microscopeTypes   = unitSet("Upright", "Inverted", "Dissection", "Electrophysiology", "Other")
	lightSourceKinds  = unitSet("Laser", "Arc", "Filament", "LightEmittingDiode", "GenericExcitationSource")
)

// Instrument is the microscope an image was acquired with: an OME
// Instrument, written once however many images share the same
// *Instrument, and referred to by each (InstrumentRef).
type Instrument struct {
	// Microscope, if set, is its stand.
	Microscope *Microscope
	// LightSources, Detectors and Objectives are its parts; a channel or
	// image refers to one by its index here.
	LightSources []LightSource
	Detectors    []Detector
	Objectives   []Objective
}

// Product names a part of an instrument; empty fields are not written.
type Product struct {
	Manufacturer, Model, SerialNumber string
}

// Microscope is an instrument's stand.
type Microscope struct {
	Product
	Type MicroscopeType
}

// LightSource is a laser, arc, filament, LED or other light source.
type LightSource struct {
	Product
	// Kind is the kind of source; it must be given.
	Kind LightSourceKind
	// Power is its output power (power units).
	Power Quantity
	// Wavelength is a laser's wavelength (length units); other kinds have
	// none.
	Wavelength Quantity
}

// Detector is a camera, photomultiplier or other detector.
type Detector struct {
	Product
	Type DetectorType
	// Gain is its gain; 0 is not written.
	Gain float64
}

// Objective is a lens.
type Objective struct {
	Product
	// NominalMagnification and CalibratedMagnification are its
	// magnifications (20 for 20x), LensNA its numerical aperture; 0 is not
	// written.
	NominalMagnification, CalibratedMagnification, LensNA float64
	Immersion                                             Immersion
	// WorkingDistance is its working distance (length units).
	WorkingDistance Quantity
}

// ObjectiveSettings names the objective of the image's Instrument an
// image was acquired with, by its index in Instrument.Objectives.
type ObjectiveSettings struct {
	Objective int
	// RefractiveIndex of the medium; 0 is not written.
	RefractiveIndex float64
}

// LightSourceSettings names the light source of the image's Instrument a
// channel was lit by, by its index in Instrument.LightSources.
type LightSourceSettings struct {
	LightSource int
	// Wavelength it was set to (length units).
	Wavelength Quantity
}

// DetectorSettings names the detector of the image's Instrument a channel
// was recorded by, by its index in Instrument.Detectors.
type DetectorSettings struct {
	Detector int
	// Gain it was set to; 0 is not written.
	Gain float64
}

// Plane is what was measured when one plane, (Z, C, T), was acquired: an
// OME Plane's attributes.
type Plane struct {
	Z, C, T int
	// DeltaT is the time since the start of the acquisition, ExposureTime
	// the exposure (time units).
	DeltaT, ExposureTime Quantity
	// PositionX, PositionY and PositionZ are the stage position (length
	// units; "reference frame" for uncalibrated ones).
	PositionX, PositionY, PositionZ Quantity
}

// check validates an instrument, named field in messages.
func (in *Instrument) check(field string) error {
	var errs []error
	if m := in.Microscope; m != nil {
		errs = append(errs, m.Product.check(field+".Microscope"), checkEnum(field+".Microscope.Type", m.Type, microscopeTypes))
	}
	for i, l := range in.LightSources {
		f := fmt.Sprintf("%s.LightSources[%d]", field, i)
		if !lightSourceKinds[string(l.Kind)] {
			errs = append(errs, fmt.Errorf("%w: %s.Kind %q is not a kind of light source", ErrMetadata, f, string(l.Kind)))
		}
		if l.Wavelength.set() && l.Kind != LightSourceLaser {
			errs = append(errs, fmt.Errorf("%w: %s.Wavelength: only a Laser has one", ErrMetadata, f))
		}
		errs = append(errs, l.Product.check(f), powerKind.check(f+".Power", l.Power), positiveKind.check(f+".Wavelength", l.Wavelength))
	}
	for i, d := range in.Detectors {
		f := fmt.Sprintf("%s.Detectors[%d]", field, i)
		errs = append(errs, d.Product.check(f), checkEnum(f+".Type", d.Type, detectorTypes), checkNumber(f+".Gain", d.Gain, false))
	}
	for i, o := range in.Objectives {
		f := fmt.Sprintf("%s.Objectives[%d]", field, i)
		errs = append(errs, o.Product.check(f), checkEnum(f+".Immersion", o.Immersion, immersions),
			checkNumber(f+".NominalMagnification", o.NominalMagnification, true),
			checkNumber(f+".CalibratedMagnification", o.CalibratedMagnification, true),
			checkNumber(f+".LensNA", o.LensNA, true), lengthKind.check(f+".WorkingDistance", o.WorkingDistance))
	}
	return firstError(errs)
}

// check validates the strings of a product.
func (p Product) check(field string) error {
	return firstError([]error{checkTextField(field+".Manufacturer", p.Manufacturer),
		checkTextField(field+".Model", p.Model), checkTextField(field+".SerialNumber", p.SerialNumber)})
}

// checkTextField is checkXMLText naming the field.
func checkTextField(field, s string) error {
	if err := checkXMLText(s); err != nil {
		return fmt.Errorf("%w (%s)", err, field)
	}
	return nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkTyped validates the typed metadata of a normalized spec: the
// channels' settings, the instrument, the objective and the planes.
func (s *ImageSpec) checkTyped() error {
	errs := []error{timeKind.check("TimeIncrement", s.TimeIncrement)}
	if s.Instrument != nil {
		errs = append(errs, s.Instrument.check("Instrument"))
	}
	if o := s.ObjectiveSettings; o != nil {
		if s.Instrument == nil || o.Objective < 0 || o.Objective >= len(s.Instrument.Objectives) {
			errs = append(errs, fmt.Errorf("%w: ObjectiveSettings.Objective %d names no objective of Instrument", ErrMetadata, o.Objective))
		}
		errs = append(errs, checkNumber("ObjectiveSettings.RefractiveIndex", o.RefractiveIndex, true))
	}
	for c, ch := range s.Channels {
		f := fmt.Sprintf("Channels[%d]", c)
		errs = append(errs, positiveKind.check(f+".ExcitationWavelength", ch.ExcitationWavelength),
			positiveKind.check(f+".EmissionWavelength", ch.EmissionWavelength),
			lengthKind.check(f+".PinholeSize", ch.PinholeSize), checkTextField(f+".Fluor", ch.Fluor),
			checkEnum(f+".AcquisitionMode", ch.AcquisitionMode, acquisitionModes),
			checkEnum(f+".IlluminationType", ch.IlluminationType, illuminationTypes),
			checkEnum(f+".ContrastMethod", ch.ContrastMethod, contrastMethods))
		if l := ch.LightSourceSettings; l != nil {
			if s.Instrument == nil || l.LightSource < 0 || l.LightSource >= len(s.Instrument.LightSources) {
				errs = append(errs, fmt.Errorf("%w: %s.LightSourceSettings.LightSource %d names no light source of Instrument", ErrMetadata, f, l.LightSource))
			}
			errs = append(errs, positiveKind.check(f+".LightSourceSettings.Wavelength", l.Wavelength))
		}
		if d := ch.DetectorSettings; d != nil {
			if s.Instrument == nil || d.Detector < 0 || d.Detector >= len(s.Instrument.Detectors) {
				errs = append(errs, fmt.Errorf("%w: %s.DetectorSettings.Detector %d names no detector of Instrument", ErrMetadata, f, d.Detector))
			}
			errs = append(errs, checkNumber(f+".DetectorSettings.Gain", d.Gain, false))
		}
	}
	size := s.sizes()
	seen := make(map[zct]int, len(s.PlaneInfo))
	for i, p := range s.PlaneInfo {
		f := fmt.Sprintf("PlaneInfo[%d]", i)
		coords := zct{p.Z, p.C, p.T}
		for d := range coords {
			if coords[d] < 0 || coords[d] >= size[d] {
				errs = append(errs, fmt.Errorf("%w: %s: plane z=%d c=%d t=%d outside Z %d, C %d, T %d", ErrMetadata, f, p.Z, p.C, p.T, size[0], size[1], size[2]))
				break
			}
		}
		if j, dup := seen[coords]; dup {
			errs = append(errs, fmt.Errorf("%w: %s: plane z=%d c=%d t=%d is PlaneInfo[%d] already", ErrMetadata, f, p.Z, p.C, p.T, j))
		}
		seen[coords] = i
		errs = append(errs, timeKind.check(f+".DeltaT", p.DeltaT), timeKind.check(f+".ExposureTime", p.ExposureTime),
			lengthKind.check(f+".PositionX", p.PositionX), lengthKind.check(f+".PositionY", p.PositionY),
			lengthKind.check(f+".PositionZ", p.PositionZ))
	}
	return firstError(errs)
}
