package source

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ometiff-go/ometiff/pyramid"
)

// Newer MetaMorph versions write an STK's plane descriptions (the one
// ImageDescription, each plane's ended by a NUL) as MetaData XML, the
// MetaSeries TIFF's (see isMetaSeries), instead of "Exposure: 100 ms"
// lines. Bio-Formats' MetamorphReader reads a lone STK's description with
// its MetamorphHandler when it starts with "<MetaData>"; these are what
// the mapping takes of it (see stk).

// stkPlaneXML is what the mapping takes of one plane's MetaData XML.
type stkPlaneXML struct {
	at          time.Time // acquisition-time-local; zero for none
	z           float64   // z-position
	hasZ        bool
	exposure    float64 // the Description's first Exposure line, in seconds
	hasExposure bool
	description string  // the Description's free text
	stageX      float64 // stage-position-x and -y, when hasStage
	stageY      float64
	hasStage    bool
}

// stkExposureXML is one Exposure line of a Description, in seconds;
// false when it does not read (Bio-Formats keeps it, as no exposure).
type stkExposureXML struct {
	seconds float64
	ok      bool
}

// stkXML is what an STK's MetaData XML descriptions say.
type stkXML struct {
	first     msPage              // the first plane's, all its props
	planes    map[int]stkPlaneXML // by plane, those whose description is MetaData XML that parses
	exposures []stkExposureXML    // the first plane's Exposure lines, in order
	gain      float64             // the first key ending "Gain" whose value reads ("x" dropped), as Bio-Formats takes it
	gainKey   string
	bad       []int // planes whose XML does not parse
	why       error // the first of their errors
}

// isSTKXML reports whether a plane's description is MetaData XML, as
// Bio-Formats tells it: trimmed, it starts with "<MetaData>".
func isSTKXML(d string) bool { return strings.HasPrefix(strings.TrimSpace(d), "<"+msRoot+">") }

// stkExposureOf reads an Exposure line's value ("100 ms": milliseconds,
// up to a space), as Bio-Formats' handler reads it, for a MetaSeries
// page's Description (msPage.take) and an STK's XML descriptions alike.
func stkExposureOf(v string) stkExposureXML {
	v, _, _ = strings.Cut(strings.TrimSpace(v), " ")
	ms, ok := msFloat(v)
	return stkExposureXML{ms / 1000, ok}
}

// planeXML keeps what the mapping takes of a plane's parsed XML.
func planeXML(p msPage) stkPlaneXML {
	out := stkPlaneXML{at: p.at, z: p.z, hasZ: p.hasZ, description: p.description, stageX: p.stageX, stageY: p.stageY, hasStage: p.hasStage()}
	for _, kv := range p.lines {
		if kv.Key == "Exposure" {
			e := stkExposureOf(kv.Value)
			out.exposure, out.hasExposure = e.seconds, e.ok
			break
		}
	}
	return out
}

// readSTKXML reads the planes' descriptions (the first n) as MetaData
// XML when the first one is: nil when it is not, an error when it does
// not parse (by parseMetaSeries, which bounds it). Later planes' that do
// not parse are kept in bad; those that are not XML give nothing. Only
// the planes whose XML parses take room, each a few dozen bytes for the
// twenty or more of its description.
func readSTKXML(descriptions []string, n int) (*stkXML, error) {
	if !isSTKXML(descriptions[0]) {
		return nil, nil
	}
	first, err := parseMetaSeries(strings.TrimSpace(descriptions[0]))
	if err != nil {
		return nil, err
	}
	x := &stkXML{first: first, planes: map[int]stkPlaneXML{0: planeXML(first)}}
	for k := 1; k < min(n, len(descriptions)); k++ {
		if !isSTKXML(descriptions[k]) {
			continue
		}
		p, err := parseMetaSeries(strings.TrimSpace(descriptions[k]))
		if err != nil {
			x.bad = append(x.bad, k)
			if x.why == nil {
				x.why = err
			}
			continue
		}
		x.planes[k] = planeXML(p)
	}
	// The handler's keys in document order: the props, the Description's
	// lines where it stands.
	keyed := func(key, value string) {
		if key == "Exposure" {
			x.exposures = append(x.exposures, stkExposureOf(value))
		}
		if x.gainKey == "" && strings.HasSuffix(key, "Gain") {
			if g, ok := msFloat(strings.NewReplacer("x", "", "X", "").Replace(value)); ok {
				x.gain, x.gainKey = g, key
			}
		}
	}
	for _, p := range first.props {
		if p.id != "Description" {
			keyed(p.id, p.value)
			continue
		}
		for _, kv := range first.lines {
			keyed(kv.Key, kv.Value)
		}
	}
	return x, nil
}

// zStep returns the Z step the planes' z-positions give, as Bio-Formats
// takes it: with as many distinct ones (in the order they come) as
// SizeZ, more than 1, the distance from the first to the last over
// SizeZ − 1, to 10 significant digits; 0 for none.
func (x *stkXML) zStep(n, sizeZ int) float64 {
	if sizeZ < 2 {
		return 0
	}
	var zs []float64
	seen := map[float64]bool{}
	for k := range n {
		if p, ok := x.planes[k]; ok && p.hasZ && !seen[p.z] {
			seen[p.z] = true
			zs = append(zs, p.z)
		}
	}
	if len(zs) != sizeZ {
		return 0
	}
	step, err := strconv.ParseFloat(strconv.FormatFloat(math.Abs(zs[len(zs)-1]-zs[0])/float64(sizeZ-1), 'g', 10, 64), 64)
	if err != nil {
		return 0
	}
	return positive(step)
}

// channelExposures returns the exposures of the c channels, as
// Bio-Formats takes them: the first plane's Exposure lines, and when it
// has one and there are more channels, each other channel's from its
// own first plane (plane c, the planes going along C first).
func (x *stkXML) channelExposures(c int) []stkExposureXML {
	out := x.exposures
	if len(out) == 1 && c > 1 {
		out = []stkExposureXML{out[0]}
		for ch := 1; ch < c; ch++ {
			p := x.planes[ch]
			out = append(out, stkExposureXML{p.exposure, p.hasExposure})
		}
	}
	return out
}

// describeXML sets what the first plane's XML gives and the UIC tags do
// not (see stk): the pixel size when UIC1 has no calibration, and the
// detector's gain; it returns the props carried so, which the map
// annotation leaves out.
func (x *stkXML) describeXML(im *Image, meta stkMeta) map[string]bool {
	s := &im.Spec
	p := x.first
	carried := map[string]bool{"Description": true}
	_, hasX := meta.values["XCalibration"]
	_, hasY := meta.values["YCalibration"]
	if _, calibrated := stkUnit(meta.units); calibrated && !hasX && !hasY && (p.calX != 0 || p.calY != 0) {
		unit, ok := stkUnit(p.units)
		switch {
		case strings.EqualFold(p.state, "off"):
			im.Notes = append(im.Notes, "its XML's spatial-calibration-state is off: no physical pixel size")
		case !ok:
			im.Notes = append(im.Notes, fmt.Sprintf("its XML's spatial-calibration-units is %q: no physical pixel size", p.units))
		case positive(p.calX) > 0 && positive(p.calY) > 0:
			s.PhysicalSizeX, s.PhysicalSizeY = p.calX, p.calY
			s.PhysicalSizeXUnit, s.PhysicalSizeYUnit = unit, unit
			carried["spatial-calibration-x"], carried["spatial-calibration-y"] = true, true
		}
	}
	if x.gain != 0 {
		// Every channel's, as Bio-Formats sets it, of a detector of
		// type Other.
		s.Instrument = &pyramid.Instrument{Detectors: []pyramid.Detector{{Type: pyramid.DetectorOther}}}
		for len(s.Channels) < max(s.SizeC, 1) {
			s.Channels = append(s.Channels, pyramid.Channel{})
		}
		for i := range s.Channels {
			s.Channels[i].DetectorSettings = &pyramid.DetectorSettings{Gain: x.gain}
		}
		carried[x.gainKey] = true
	}
	return carried
}

// annotate adds the first plane's props and Description lines not
// carried to the map annotation, up to maxAnnotations in all, and notes
// the XML not read or not carried.
func (x *stkXML) annotate(im *Image, carried map[string]bool) {
	s := &im.Spec
	lost := x.first.lost
	add := func(k, v string) {
		if carried[k] || pyramid.XMLText(k) == "" {
			return
		}
		if len(s.Annotations) >= maxAnnotations {
			lost++
			return
		}
		s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: pyramid.XMLText(k), Value: pyramid.XMLText(v)})
	}
	for _, p := range x.first.props {
		add(p.id, p.value)
	}
	for _, kv := range x.first.lines {
		add(kv.Key, kv.Value)
	}
	if lost > 0 {
		im.Notes = append(im.Notes, fmt.Sprintf("its first plane's MetaData XML has %d props and Description lines not read or past the %d annotations kept", lost, maxAnnotations))
	}
	if len(x.bad) > 0 {
		list := make([]string, 0, 9)
		for _, k := range x.bad[:min(len(x.bad), 8)] {
			list = append(list, strconv.Itoa(k))
		}
		if len(x.bad) > 8 {
			list = append(list, "...")
		}
		im.Notes = append(im.Notes, fmt.Sprintf("the MetaData XML of %d of its planes' descriptions (%s) is not read (%v): they have no time, Z position or exposure of their own",
			len(x.bad), strings.Join(list, ", "), x.why))
	}
	if len(x.planes) > 1 {
		im.Notes = append(im.Notes, "the MetaData XML of its planes past the first is read for their times, Z positions, exposures and Description text only: their other props are not carried")
	}
}

// plane returns plane k's XML values; false when it has none (x nil, or
// its description not MetaData XML that parses).
func (x *stkXML) plane(k int) (stkPlaneXML, bool) {
	if x == nil {
		return stkPlaneXML{}, false
	}
	p, ok := x.planes[k]
	return p, ok
}
