package pyramid

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// conflict returns an ErrOMEConflict error about element n.
func (d *OMEDocument) conflict(n int32, attr, format string, args ...any) error {
	return &OMEError{Err: ErrOMEConflict, Element: d.path(n), Attr: attr, Line: int(d.nodes[n].line), Detail: fmt.Sprintf(format, args...)}
}

// xmlInt parses an xsd integer attribute value: optional whitespace and
// sign, then at most 18 digits.
func xmlInt(b []byte) (int, bool) {
	b = bytes.TrimSpace(b)
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// pixels returns the image's Pixels element.
func (m *OMEImage) pixels() int32 { return m.doc.child(m.node, "Pixels") }

// channels returns the Channel elements of the image's Pixels.
func (m *OMEImage) channels() []int32 {
	var out []int32
	for _, c := range m.doc.children(m.pixels()) {
		if m.doc.is(c, "Channel") {
			out = append(out, c)
		}
	}
	return out
}

// specChannels returns the Channel element each channel of s is written
// from: one each, or, for an image of one sample a pixel whose document
// gives a Channel several samples (tifffile's RGBA, or 2 or 5 samples a
// pixel), that Channel for each of its samples, since the writer stores
// samples other than RGB's as channels of their own. It is nil when the
// elements describe other channels; Check says how.
func (m *OMEImage) specChannels(s ImageSpec) []int32 {
	channels := m.channels()
	if len(channels) == 0 || len(channels) == s.SizeC {
		return channels
	}
	if max(s.SamplesPerPixel, 1) != 1 {
		return nil
	}
	var out []int32
	for _, c := range channels {
		n := 1
		if v, ok := m.doc.attr(c, "SamplesPerPixel"); ok {
			var valid bool
			if n, valid = xmlInt(v); !valid || n < 1 || n > s.SizeC {
				return nil
			}
		}
		for range n {
			out = append(out, c)
		}
		if len(out) > s.SizeC {
			return nil
		}
	}
	if len(out) != s.SizeC {
		return nil
	}
	return out
}

// Check reports whether the image's element describes the pixels of spec
// as AddImage requires of an ImageSpec.OME: its Pixels' sizes (SizeC
// counting samples) and Type, its Channel elements and their samples
// (one each, or, for a spec of one sample a pixel, a Channel of several
// samples for as many channels: the writer stores them so, each with the
// Channel's attributes), its Planes, and the quantities of its Pixels and
// Channels that spec's typed fields do not replace (a number; a unit of
// the schema's). It returns nil, or the *OMEError AddImage would return
// for spec with this element. A reader that maps a file's pages to specs
// checks with it that the file's document can be carried as it is. The
// element of a truncated image's Spec (Image.TruncateT) describes the
// time points kept: its SizeT is theirs.
func (m *OMEImage) Check(spec ImageSpec) error {
	_, err := m.check(spec.withDefaults())
	return err
}

// check verifies that the image's elements describe the pixels of spec
// (normalized): its sizes, pixel type and significant bits, its channels
// and samples, its planes. It returns the Plane elements by plane index
// (in spec's DimensionOrder).
func (m *OMEImage) check(s ImageSpec) (map[int]int32, error) {
	if m.doc == nil || !m.doc.parsed() {
		return nil, fmt.Errorf("%w: ImageSpec.OME is a zero OMEImage, not one OMEDocument.Image returned", ErrMetadata)
	}
	d := m.doc
	px := m.pixels()
	sizes := []struct {
		attr string
		want int
		what string
	}{{"SizeX", s.SizeX, "pixels wide"}, {"SizeY", s.SizeY, "pixels high"}, {"SizeZ", s.SizeZ, "focal planes"},
		{"SizeC", s.OMESizeC(), "samples in its channels"}, {"SizeT", s.SizeT, "time points"}}
	for _, size := range sizes {
		if size.attr == "SizeT" && m.keptT > 0 { // a view: the element said addedT when its image was added
			if m.keptT != s.SizeT {
				return nil, d.conflict(px, "SizeT", "%d, of which TruncateT kept %d; the image is %d time points", m.addedT, m.keptT, s.SizeT)
			}
			continue
		}
		v, ok := d.attr(px, size.attr)
		if !ok {
			continue
		}
		n, ok := xmlInt(v)
		if !ok || n <= 0 {
			return nil, d.invalid(px, size.attr, "%q is not a positive integer", v)
		}
		if n != size.want {
			return nil, d.conflict(px, size.attr, "%d; the image is %d %s", n, size.want, size.what)
		}
	}
	// A document's 1-bit pixels ("bit") are written as uint8 0 and 1, as
	// readers give them.
	if v, ok := d.attr(px, "Type"); ok && string(v) != s.PixelType.String() && (string(v) != "bit" || s.PixelType != Uint8) {
		return nil, d.conflict(px, "Type", "%q; the pixels are %v", v, s.PixelType)
	}
	if v, ok := d.attr(px, "SignificantBits"); ok {
		bits := 8 * s.PixelType.Size()
		n, ok := xmlInt(v)
		if !ok || n < 1 || n > bits || s.PixelType.Float() && n != bits {
			return nil, d.conflict(px, "SignificantBits", "%q; the pixels are %v", v, s.PixelType)
		}
	}
	// The Pixels' quantities the writer copies (the typed ones replace
	// theirs, value and unit) must be the schema's.
	pixelsQuantities := []struct {
		attr  string
		kind  quantityKind
		typed bool
	}{{"PhysicalSizeX", positiveKind, s.PhysicalSizeX > 0}, {"PhysicalSizeY", positiveKind, s.PhysicalSizeY > 0},
		{"PhysicalSizeZ", positiveKind, s.PhysicalSizeZ > 0}, {"TimeIncrement", timeKind, s.TimeIncrement.set()}}
	for _, q := range pixelsQuantities {
		if !q.typed {
			if err := m.checkQuantity(px, q.attr, q.kind); err != nil {
				return nil, err
			}
		}
	}
	// The writer copies the date as it is, unless the typed one replaces it.
	if n := d.child(m.node, "AcquisitionDate"); n >= 0 && s.AcquisitionDate.IsZero() {
		if text := d.collapsedText(n); !isXSDDateTime(text) {
			return nil, d.invalid(n, "", "%q is not a date and time (xsd:dateTime: 2006-01-02T15:04:05, a time zone optional)", truncate([]byte(text), 40))
		}
	}
	channels := m.specChannels(s)
	if all := m.channels(); len(all) > 0 && channels == nil {
		return nil, d.conflict(px, "", "%d Channel elements; the image has %d channels (SizeC) of %d samples",
			len(all), s.SizeC, s.SamplesPerPixel)
	}
	split := len(channels) != len(m.channels()) // a Channel's samples are channels
	for i, c := range channels {
		if v, ok := d.attr(c, "SamplesPerPixel"); ok && !split {
			if n, ok := xmlInt(v); !ok || n != s.SamplesPerPixel {
				return nil, d.conflict(c, "SamplesPerPixel", "%q; the image has %d samples per pixel", v, s.SamplesPerPixel)
			}
		}
		var typed Channel
		if i < len(s.Channels) {
			typed = s.Channels[i]
		}
		for _, q := range []struct {
			attr  string
			kind  quantityKind
			typed bool
		}{{"ExcitationWavelength", positiveKind, typed.ExcitationWavelength.set()}, {"EmissionWavelength", positiveKind, typed.EmissionWavelength.set()},
			{"PinholeSize", lengthKind, typed.PinholeSize.set()}} {
			if !q.typed {
				if err := m.checkQuantity(c, q.attr, q.kind); err != nil {
					return nil, err
				}
			}
		}
	}
	return m.planes(s)
}

// xsdDateTime matches the lexical form of an xsd:dateTime, as OME's
// Timestamp takes it (its whitespace collapsed): a year of 4 digits or
// more (not 0000), a month, a day of up to 31, a time (24:00:00 for the
// end of the day), fractions of a second and a time zone (up to 14
// hours) optional. Its groups are the year, the month and the day.
var xsdDateTime = regexp.MustCompile(`^-?([1-9][0-9]{3,}|0[0-9]{2}[1-9]|0[0-9][1-9][0-9]|0[1-9][0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])` +
	`T(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?|24:00:00(?:\.0+)?)(?:Z|[+-](?:(?:0[0-9]|1[0-3]):[0-5][0-9]|14:00))?$`)

// isXSDDateTime reports whether text is an xsd:dateTime that validators
// accept: of xsdDateTime's form, with a day its month has. A year is a
// leap year as libxml2 counts it, its digits as written (so -0004 is
// one, and -0100 is not); only its last four digits matter, since 400
// divides 10000.
func isXSDDateTime(text string) bool {
	m := xsdDateTime.FindStringSubmatch(text)
	if m == nil {
		return false
	}
	year, month, day := m[1], m[2], m[3]
	if len(year) > 18 { // libxml2's years are 64-bit integers
		return false
	}
	y, _ := strconv.Atoi(year[len(year)-4:])
	leap := y%4 == 0 && (y%100 != 0 || y%400 == 0)
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	mo, _ := strconv.Atoi(month)
	d, _ := strconv.Atoi(day)
	return d <= days[mo-1] || mo == 2 && leap && d == 29
}

// checkQuantity checks an element's quantity attribute attr and its unit
// (attr + "Unit") as the schema types them: a number (an xsd:float, "INF"
// and "NaN" too; positive for a PositiveFloat), a unit of its kind.
func (m *OMEImage) checkQuantity(n int32, attr string, k quantityKind) error {
	d := m.doc
	if v, ok := d.attr(n, attr); ok {
		f, ok := xsdFloat(string(v))
		if !ok || k.positive && !(float32(f) > 0) { // a PositiveFloat, compared as a float
			kind := "a number"
			if k.positive {
				kind = "a positive number"
			}
			return d.invalid(n, attr, "%q is not %s", v, kind)
		}
	}
	if v, ok := d.attr(n, attr+"Unit"); ok && !k.units(string(v)) {
		return d.invalid(n, attr+"Unit", "%q is not an OME %s unit", v, k.name)
	}
	return nil
}

// planes maps the image's Plane elements to the planes of spec, checking
// that each names a plane of its own. The TheC of a Plane counts the
// document's Channel elements: where one of them gives its samples to
// several channels of spec (specChannels), the Plane is theirs, each.
func (m *OMEImage) planes(s ImageSpec) (map[int]int32, error) {
	d := m.doc
	var planes map[int]int32
	size := s.sizes()
	if m.keptT > 0 { // a view: the Planes of the time points TruncateT dropped are left out
		size[2] = m.addedT
	}
	// specOf lists the channels of spec of each Channel element, when the
	// elements' samples are split.
	var specOf [][]int
	if all, channels := m.channels(), m.specChannels(s); len(all) > 0 && len(channels) != len(all) {
		specOf = make([][]int, len(all))
		k := 0
		for j, c := range channels {
			if c != all[k] {
				k++
			}
			specOf[k] = append(specOf[k], j)
		}
		size[1] = len(all)
	}
	for _, p := range d.children(m.pixels()) {
		if !d.is(p, "Plane") {
			continue
		}
		var at zct
		for i, attr := range []string{"TheZ", "TheC", "TheT"} {
			v, ok := d.attr(p, attr)
			if !ok {
				return nil, d.invalid(p, attr, "missing")
			}
			n, ok := xmlInt(v)
			if !ok || n < 0 {
				return nil, d.invalid(p, attr, "%q is not a non-negative integer", v)
			}
			if n >= size[i] {
				return nil, d.conflict(p, attr, "%d; the image has %d", n, size[i])
			}
			at[i] = n
		}
		if m.keptT > 0 && at[2] >= m.keptT {
			continue
		}
		cs := []int{at[1]}
		if specOf != nil {
			cs = specOf[at[1]]
		}
		for _, c := range cs {
			index, _ := s.PlaneIndex(at[0], c, at[2])
			if planes == nil {
				planes = map[int]int32{}
			}
			if prev, dup := planes[index]; dup {
				return nil, d.conflict(p, "", "a second Plane for z=%d c=%d t=%d (the first is line %d)", at[0], at[1], at[2], d.nodes[prev].line)
			}
			planes[index] = p
		}
	}
	return planes, nil
}

// name returns the Name the image's element gives it, if any; m may be
// nil.
func (m *OMEImage) name() (string, bool) {
	if m == nil {
		return "", false
	}
	v, ok := m.doc.attr(m.node, "Name")
	return string(v), ok
}

// xsdDecimal is the lexical form of an xsd:float but its special values.
var xsdDecimal = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// xsdFloat parses an xsd:float: a decimal, with an exponent or not, "INF",
// "-INF" or "NaN", with whitespace around it. Go's ParseFloat takes more
// ("Infinity", "0x1p-2", "1_000"), which a validator refuses.
func xsdFloat(v string) (float64, bool) {
	switch v = strings.Trim(v, " \t\r\n"); v { // XML's whitespace, not Unicode's
	case "INF":
		return math.Inf(1), true
	case "-INF":
		return math.Inf(-1), true
	case "NaN":
		return math.NaN(), true
	}
	if !xsdDecimal.MatchString(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64) // past float64's range: ±Inf, as a float
	return f, err == nil || errors.Is(err, strconv.ErrRange)
}
