package pyramid

import (
	"fmt"
	"image/color"
	"math"
	"math/bits"
	"reflect"
	"time"

	"github.com/ometiff-go/ometiff/tiff"
)

// PixelType is the type of one sample.
type PixelType int

// Pixel types. The zero value is Uint8.
const (
	Uint8 PixelType = iota
	Int8
	Uint16
	Int16
	Uint32
	Int32
	Float32
	Float64
)

var pixelTypes = [...]struct {
	ome          string // OME PixelType
	size         int    // bytes per sample
	sampleFormat uint16 // TIFF SampleFormat
}{
	Uint8: {"uint8", 1, tiff.SampleFormatUint}, Int8: {"int8", 1, tiff.SampleFormatInt},
	Uint16: {"uint16", 2, tiff.SampleFormatUint}, Int16: {"int16", 2, tiff.SampleFormatInt},
	Uint32: {"uint32", 4, tiff.SampleFormatUint}, Int32: {"int32", 4, tiff.SampleFormatInt},
	Float32: {"float", 4, tiff.SampleFormatFloat}, Float64: {"double", 8, tiff.SampleFormatFloat},
}

func (p PixelType) valid() bool { return p >= Uint8 && p <= Float64 }

// Size is the number of bytes of one sample; 0 for a type that is none
// of the eight.
func (p PixelType) Size() int {
	if !p.valid() {
		return 0
	}
	return pixelTypes[p].size
}

// Float reports whether samples are floating point.
func (p PixelType) Float() bool { return p == Float32 || p == Float64 }

// String returns the OME name of the type ("uint16", "float", ...).
func (p PixelType) String() string {
	if !p.valid() {
		return fmt.Sprintf("PixelType(%d)", int(p))
	}
	return pixelTypes[p].ome
}

// invalid is the error of an order that is none of the six.
func (d DimensionOrder) invalid() error {
	return fmt.Errorf("%w: DimensionOrder %q is none of XYZCT, XYZTC, XYCTZ, XYCZT, XYTCZ and XYTZC", ErrMetadata, string(d))
}

// DimensionOrder is the order of the planes in the file, fastest first
// after X and Y, as OME spells it. The empty value means XYZCT.
type DimensionOrder string

// Dimension orders.
const (
	XYZCT DimensionOrder = "XYZCT"
	XYZTC DimensionOrder = "XYZTC"
	XYCTZ DimensionOrder = "XYCTZ"
	XYCZT DimensionOrder = "XYCZT"
	XYTCZ DimensionOrder = "XYTCZ"
	XYTZC DimensionOrder = "XYTZC"
)

// Channel describes one channel of an image. Zero fields are not written.
type Channel struct {
	Name string
	// Color is the channel's display colour, written as OME's RGBA; nil
	// writes none. color.RGBA is alpha-premultiplied: an opaque colour has
	// A 255 (color.RGBA{G: 255, A: 255}); one with a component above its
	// alpha is refused.
	Color color.Color
	// ExcitationWavelength and EmissionWavelength are the channel's
	// wavelengths (length units, positive), PinholeSize its pinhole's size
	// (length units).
	ExcitationWavelength, EmissionWavelength, PinholeSize Quantity
	// Fluor names the fluorophore.
	Fluor            string
	AcquisitionMode  AcquisitionMode
	IlluminationType IlluminationType
	ContrastMethod   ContrastMethod
	// LightSourceSettings and DetectorSettings name the light source and
	// the detector of ImageSpec.Instrument the channel was acquired with.
	LightSourceSettings *LightSourceSettings
	DetectorSettings    *DetectorSettings
}

// KeyValue is one entry of an image's key/value annotation.
type KeyValue struct{ Key, Value string }

// ImageSpec describes one image (an OME Image: one series of the file).
type ImageSpec struct {
	// Name of the image.
	Name string
	// SizeX and SizeY are the plane's width and height in pixels, at most
	// 2^31-1 as every size (OME's PositiveInt, a Java int in Bio-Formats).
	SizeX, SizeY int
	// SizeZ, SizeC and SizeT count focal planes, channels and time points;
	// 0 means 1. SizeC counts the planes along C, the c of WritePlane: an
	// RGB image (SamplesPerPixel 3) of one plane has SizeC 1. OME's Pixels
	// element counts samples instead (SizeC 3 for it, with one Channel of
	// SamplesPerPixel 3); OMESizeC gives that number.
	SizeZ, SizeC, SizeT int
	// DimensionOrder orders the planes; empty means XYZCT.
	DimensionOrder DimensionOrder
	// PixelType of each sample.
	PixelType PixelType
	// SamplesPerPixel is 1 (0 means 1), or 3 for interleaved RGB of Uint8
	// or Uint16.
	SamplesPerPixel int
	// PhysicalSizeX, Y and Z are the size of a pixel (Z: the step between
	// focal planes); 0 means unknown. Their units are OME length units;
	// empty means "µm", and "um" (or a Greek mu) is taken for it.
	PhysicalSizeX, PhysicalSizeY, PhysicalSizeZ             float64
	PhysicalSizeXUnit, PhysicalSizeYUnit, PhysicalSizeZUnit string
	// TimeIncrement is the time between time points (OME time units:
	// "s", "ms", "min", ...); zero means unknown.
	TimeIncrement Quantity
	// Channels names and colours the channels; empty or shorter than SizeC
	// leaves the rest unnamed.
	Channels []Channel
	// AcquisitionDate, when not zero, is written to the metadata: with
	// its zone's offset (Z for UTC), or as its clock reads, with no zone,
	// when its Location is NoZone.
	AcquisitionDate time.Time
	// Description of the image.
	Description string
	// Annotations are written as an OME MapAnnotation linked to the image.
	Annotations []KeyValue
	// Instrument, if set, is the microscope the image was acquired with.
	// Images that share one *Instrument share one OME Instrument.
	Instrument *Instrument
	// ObjectiveSettings names the objective of Instrument the image was
	// acquired with; when nil and Instrument has a single objective, that
	// one is named.
	ObjectiveSettings *ObjectiveSettings
	// PlaneInfo gives the acquisition times and stage positions of planes,
	// each at most once, in any order; planes left out have none.
	PlaneInfo []Plane
	// OME, if set, is the caller's metadata of the image: one Image element
	// of a parsed OME-XML document (see ParseOME and Options.OME). The
	// fields above, where set, take precedence over what it says.
	OME *OMEImage
	// Coding, if set, is how the writer encodes this image's tiles, in
	// place of the Options' Compression, Level, Quality, JPEGColor and
	// Predictor: a lossless label and macro beside a JPEG slide, or tiles
	// copied through (AddEncodedImage) in a file whose other images are
	// encoded otherwise. A writer of uncompressed tiles (Options.Compression
	// None) stores them without its encoding goroutines, and takes only
	// None here.
	Coding *Coding
}

// maxPlanes bounds SizeZ*SizeC*SizeT of one image.
const maxPlanes = 1 << 24

// normalized returns the spec with defaults filled in, or why it is bad.
func (s ImageSpec) normalized() (ImageSpec, error) {
	s = s.withDefaults()
	if s.Coding != nil { // the caller's may change after
		c := *s.Coding
		s.Coding = &c
	}
	for _, size := range []struct {
		name string
		v    int
		min  int
	}{{"SizeX", s.SizeX, 1}, {"SizeY", s.SizeY, 1}, {"SizeZ", s.SizeZ, 0}, {"SizeC", s.SizeC, 0}, {"SizeT", s.SizeT, 0}} {
		// OME's sizes are PositiveInt, at most 2^31-1 (larger ones would
		// make the OME-XML invalid, and Bio-Formats reads them as int).
		if size.v < size.min || size.v > math.MaxInt32 {
			return s, fmt.Errorf("%w: %s %d (image %d x %d, Z %d, C %d, T %d; OME allows 1 to 2^31-1)", ErrSize, size.name, size.v, s.SizeX, s.SizeY, s.SizeZ, s.SizeC, s.SizeT)
		}
	}
	if planes, ok := mul(s.SizeZ, s.SizeC, s.SizeT); !ok || planes > maxPlanes {
		return s, fmt.Errorf("%w: %d x %d x %d planes", ErrSize, s.SizeZ, s.SizeC, s.SizeT)
	}
	if !s.PixelType.valid() {
		return s, fmt.Errorf("%w: pixel type %d", ErrPixelType, int(s.PixelType))
	}
	switch {
	case s.SamplesPerPixel == 1:
	case s.SamplesPerPixel == 3 && (s.PixelType == Uint8 || s.PixelType == Uint16):
	default:
		return s, fmt.Errorf("%w: %d samples of %v (RGB takes uint8 or uint16)", ErrPixelType, s.SamplesPerPixel, s.PixelType)
	}
	if _, ok := planeStrides(s.DimensionOrder); !ok {
		return s, s.DimensionOrder.invalid()
	}
	if len(s.Channels) > s.SizeC {
		return s, fmt.Errorf("%w: %d channels described for SizeC %d", ErrMetadata, len(s.Channels), s.SizeC)
	}
	if err := s.checkPhysical(); err != nil {
		return s, err
	}
	if err := s.checkText(); err != nil {
		return s, err
	}
	for i, c := range s.Channels {
		// color.RGBA and RGBA64 are alpha-premultiplied: the natural
		// literal color.RGBA{G: 255} has no opacity, and would be written
		// as transparent black.
		if c.Color == nil {
			continue
		}
		if v := reflect.ValueOf(c.Color); v.Kind() == reflect.Pointer && v.IsNil() {
			return s, fmt.Errorf("%w: Channels[%d].Color is a nil %T", ErrMetadata, i, c.Color) // its RGBA would panic
		}
		if r, g, b, a := c.Color.RGBA(); r > a || g > a || b > a {
			return s, fmt.Errorf("%w: Channels[%d].Color %v has a component above its alpha, which an alpha-premultiplied colour cannot (color.RGBA{G: 255} is no opaque green: color.RGBA{G: 255, A: 255} is)",
				ErrMetadata, i, c.Color)
		}
	}
	if s.ObjectiveSettings == nil && s.Instrument != nil && len(s.Instrument.Objectives) == 1 {
		s.ObjectiveSettings = &ObjectiveSettings{}
	}
	if err := s.checkTyped(); err != nil {
		return s, err
	}
	if s.OME != nil {
		if _, err := s.OME.check(s); err != nil {
			return s, err
		}
	}
	return s, nil
}

// withDefaults returns the spec with its zero sizes and samples per pixel
// as 1, and its empty DimensionOrder as XYZCT.
func (s ImageSpec) withDefaults() ImageSpec {
	for _, d := range []*int{&s.SizeZ, &s.SizeC, &s.SizeT, &s.SamplesPerPixel} {
		if *d == 0 {
			*d = 1
		}
	}
	if s.DimensionOrder == "" {
		s.DimensionOrder = XYZCT
	}
	return s
}

// checkPhysical validates physical sizes and fills in default units.
func (s *ImageSpec) checkPhysical() error {
	sizes := []struct {
		axis string
		v    float64
		unit *string
	}{{"X", s.PhysicalSizeX, &s.PhysicalSizeXUnit}, {"Y", s.PhysicalSizeY, &s.PhysicalSizeYUnit}, {"Z", s.PhysicalSizeZ, &s.PhysicalSizeZUnit}}
	for _, p := range sizes {
		// OME's sizes are xsd:float: a value that rounds to 0 in it is
		// none of the schema's positive ones, and one past its largest
		// would be written +Inf, which the schema refuses.
		if p.v < 0 || math.IsNaN(p.v) || p.v > math.MaxFloat32 || p.v > 0 && float32(p.v) == 0 {
			return fmt.Errorf("%w: PhysicalSize%s %v", ErrMetadata, p.axis, p.v)
		}
		if *p.unit == "" {
			*p.unit = "µm"
		}
		*p.unit = microSign(*p.unit, func(u string) bool { _, ok := lengthUnits[u]; return ok })
		if _, ok := lengthUnits[*p.unit]; !ok {
			return fmt.Errorf("%w: PhysicalSize%sUnit %q is no OME length unit", ErrMetadata, p.axis, *p.unit)
		}
	}
	// xsd:dateTime has no year 0, nor years before it.
	if !s.AcquisitionDate.IsZero() && xsdTime(s.AcquisitionDate).Year() < 1 {
		return fmt.Errorf("%w: AcquisitionDate %v is before year 1", ErrMetadata, s.AcquisitionDate)
	}
	return nil
}

// NoZone is the Location of a date whose time zone is not known, such as
// TIFF's DateTime tag gives: an AcquisitionDate in it is written as its
// clock reads, without a zone, as xsd:dateTime allows, where one in UTC
// is written with Z (which claims that its clock is UTC's). Make such a
// date with time.Date(year, month, day, hour, min, sec, nsec, NoZone);
// t.In(NoZone) would read t's instant on UTC's clock instead. The sources
// of package source give zone-less dates in it.
var NoZone = time.FixedZone("NoZone", 0) // named: time caches unnamed zones, so "+00:00" would parse to it

// xsdDate formats t as an xsd:dateTime: with its zone, or with none in
// NoZone.
func xsdDate(t time.Time) string {
	if t.Location() == NoZone {
		return t.Format("2006-01-02T15:04:05.999999999")
	}
	return xsdTime(t).Format(time.RFC3339Nano)
}

// xsdTime is t in a zone xsd:dateTime can say: its own, or UTC's for an
// offset past 14 hours or of seconds (a local mean time, such as
// Amsterdam's +00:19:32 before 1937), which the offset's form would cut,
// moving the instant.
func xsdTime(t time.Time) time.Time {
	if t.Location() == NoZone {
		return t
	}
	_, offset := t.Zone()
	if offset%60 != 0 || offset > 14*3600 || offset < -14*3600 {
		return t.UTC()
	}
	return t
}

// checkText validates every string that goes into the OME-XML.
func (s *ImageSpec) checkText() error {
	errs := []error{checkTextField("Name", s.Name), checkTextField("Description", s.Description)}
	for i, c := range s.Channels {
		errs = append(errs, checkTextField(fmt.Sprintf("Channels[%d].Name", i), c.Name))
	}
	for i, kv := range s.Annotations {
		errs = append(errs, checkTextField(fmt.Sprintf("Annotations[%d].Key", i), kv.Key), checkTextField(fmt.Sprintf("Annotations[%d].Value", i), kv.Value))
	}
	return firstError(errs)
}

// Planes is the number of planes of the image: SizeZ x SizeC x SizeT,
// each 0 counting as 1.
func (s ImageSpec) Planes() int { return s.sizes()[0] * s.sizes()[1] * s.sizes()[2] }

// OMESizeC is the SizeC of the image's OME Pixels element: the samples of
// all its channels, SizeC x SamplesPerPixel (0 counting as 1), as OME
// counts them. The OME-XML has SizeC Channel elements, each with
// SamplesPerPixel samples.
func (s ImageSpec) OMESizeC() int { return s.sizes()[1] * max(s.SamplesPerPixel, 1) }

// pixelBytes is the size of one pixel.
func (s ImageSpec) pixelBytes() int { return max(s.SamplesPerPixel, 1) * s.PixelType.Size() }

// PlaneIndex returns the position of plane (z, c, t) among the image's
// planes, in DimensionOrder: its place in the file's main chain relative to
// the image's first plane.
func (s ImageSpec) PlaneIndex(z, c, t int) (int, error) {
	size := s.sizes()
	if z < 0 || z >= size[0] || c < 0 || c >= size[1] || t < 0 || t >= size[2] {
		return 0, fmt.Errorf("%w: plane z=%d c=%d t=%d outside Z %d, C %d, T %d", ErrPlane, z, c, t, size[0], size[1], size[2])
	}
	order, ok := planeStrides(s.DimensionOrder)
	if !ok {
		return 0, s.DimensionOrder.invalid()
	}
	coords := zct{z, c, t}
	index, stride := 0, 1
	for _, d := range order {
		index += coords.get(d) * stride
		stride *= size.get(d)
	}
	return index, nil
}

// PlaneCoords returns the plane at position index in DimensionOrder; it is
// the inverse of PlaneIndex. An index outside [0, s.Planes()) has no
// plane: PlaneCoords returns -1, -1, -1.
func (s ImageSpec) PlaneCoords(index int) (z, c, t int) {
	if index < 0 || index >= s.Planes() {
		return -1, -1, -1
	}
	order, _ := planeStrides(s.DimensionOrder)
	size := s.sizes()
	var coords zct
	for _, d := range order {
		coords.set(d, index%size.get(d))
		index /= size.get(d)
	}
	return coords[0], coords[1], coords[2]
}

// zct holds a value per dimension Z, C and T.
type zct [3]int

// sizes returns SizeZ, SizeC and SizeT, 0 counting as 1.
func (s ImageSpec) sizes() zct { return zct{max(s.SizeZ, 1), max(s.SizeC, 1), max(s.SizeT, 1)} }

// dimIndex maps 'Z', 'C' and 'T' to 0, 1 and 2.
func dimIndex(d byte) int {
	switch d {
	case 'Z':
		return 0
	case 'C':
		return 1
	}
	return 2
}

func (v zct) get(d byte) int     { return v[dimIndex(d)] }
func (v *zct) set(d byte, x int) { v[dimIndex(d)] = x }

// planeStrides returns the dimensions of order after XY, fastest first;
// the empty order is XYZCT.
func planeStrides(order DimensionOrder) ([3]byte, bool) {
	switch order {
	case "":
		return [3]byte{'Z', 'C', 'T'}, true
	case XYZCT, XYZTC, XYCTZ, XYCZT, XYTCZ, XYTZC:
		return [3]byte{order[2], order[3], order[4]}, true
	}
	return [3]byte{}, false
}

// mul multiplies positive ints, reporting overflow.
func mul(v ...int) (int, bool) {
	p := 1
	for _, x := range v {
		if x < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(uint64(p), uint64(x))
		if hi != 0 || lo > math.MaxInt {
			return 0, false
		}
		p = int(lo)
	}
	return p, true
}
