package source

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// svsPrefix starts the ImageDescription of the first page of an Aperio
// SVS file, as tifffile and OpenSlide recognize the format: "Aperio Image
// Library v12.0.5", and the GT450's "Aperio Leica Biosystems GT450 v1.0.1".
const svsPrefix = "Aperio "

// isSVS reports whether the first page's description is an SVS file's:
// Aperio's library, or another Aperio writer whose description has the
// scan's "|"-separated fields (not some other export naming Aperio).
func isSVS(d string) bool {
	return strings.HasPrefix(d, "Aperio Image") || strings.HasPrefix(d, svsPrefix) && strings.Contains(d, "|")
}

// aperio is an Aperio ImageDescription: lines of text, then "|"-separated
// "key = value" fields.
type aperio struct {
	// text is what is not a field: the library's name and version, the
	// size and coding of the scan; lines joined with "\n".
	text string
	// fields are the "key = value" fields, in order, trimmed.
	fields []pyramid.KeyValue
	// label and macro are set when a token without "=" names the page
	// so, as Bio-Formats recognizes the label and macro images.
	label, macro bool
}

// parseAperio splits an Aperio ImageDescription into its text and its
// fields: each line is cut at "|"; its first token is text (the scan's
// size and coding, "46920x33014 [0,100 46000x32914] (256x256) JPEG/RGB
// Q=30"), and a later token with "=" is a field.
func parseAperio(d string) aperio {
	var a aperio
	var text []string
	for line := range strings.SplitSeq(d, "\n") {
		for i, token := range strings.Split(line, "|") {
			token = strings.TrimSpace(token)
			if key, value, ok := strings.Cut(token, "="); ok && i > 0 {
				a.fields = append(a.fields, pyramid.KeyValue{Key: pyramid.XMLText(strings.TrimSpace(key)), Value: pyramid.XMLText(strings.TrimSpace(value))})
				continue
			}
			if !strings.Contains(token, "=") {
				lower := strings.ToLower(token)
				a.label = a.label || strings.Contains(lower, "label")
				a.macro = a.macro || strings.Contains(lower, "macro")
			}
			if token != "" {
				text = append(text, pyramid.XMLText(token))
			}
		}
	}
	a.text = strings.Join(text, "\n")
	return a
}

// field returns the value of the field named key: the last, as
// OpenSlide reads a key given twice.
func (a aperio) field(key string) (string, bool) {
	for i := len(a.fields) - 1; i >= 0; i-- {
		if a.fields[i].Key == key {
			return a.fields[i].Value, true
		}
	}
	return "", false
}

// svs maps an Aperio SVS file, as Bio-Formats' SVSReader reads it:
//   - page 0 is the image. MPP gives its pixel size in µm, Date and Time
//     its acquisition date, AppMag (the magnification of the objective
//     it was scanned with) its instrument's objective's nominal
//     magnification, and every other "key = value" field of its
//     description (the scanner's fields, MPP itself) becomes an
//     annotation (an OME MapAnnotation); the rest of the description is
//     its description;
//   - a page whose description has a token naming "label" or "macro"
//     (without "=") is the label or the macro image, an image of its own
//     so named; failing that, the first pages without a description, or
//     whose NewSubfileType is not 0, are taken for the label, then the
//     macro;
//   - the other pages, smaller than page 0 and of its proportions, are the
//     thumbnail and the reduced levels, which are left out (the writer
//     computes its levels again);
//   - pages of page 0's size whose descriptions, as page 0's, give an
//     OffsetZ (page 0's may give TotalDepth instead, its offset 0) are
//     the focal planes of a Z stack: the image's planes along Z, in order
//     of their offsets, each offset the plane's PositionZ (in "reference
//     frame", as Bio-Formats gives it), each plane's levels the reduced
//     pages after it. Another page of page 0's size is not supported, nor
//     two at one offset, nor a focal plane of another layout; any other
//     page becomes an image of its own, named after its index.
//
// The scan's fields Bio-Formats maps go to the image too (and stay among
// its annotations): Emission Wavelength and Excitation Wavelength (nm)
// to every channel, Dye to the name of a single channel, and Left and
// Top (the scan's position on the slide, mm) to every plane's PositionX
// and PositionY.
//
// JPEG 2000 pages (Compression 33003 and 33005) are refused, naming the
// compression.
func (m *mapper) svs() error {
	pages := m.file.TIFF.Pages
	kinds := make([]string, len(pages))
	kinds[0] = "image"
	w0, h0, err := pageSize(pages[0])
	if err != nil {
		return err
	}
	z0, stacked := svsOffsetZ(parseAperio(pages[0].Description()))
	stack := []svsPlane{{page: 0, z: z0}} // page 0 and its focal planes
	found := map[string]bool{}
	for i, p := range pages[1:] {
		a := parseAperio(p.Description())
		switch {
		case a.label && !found["label"]:
			kinds[i+1] = "label"
		case a.macro && !found["macro"]:
			kinds[i+1] = "macro"
		default:
			continue
		}
		found[kinds[i+1]] = true
	}
	for i, p := range pages[1:] {
		if kinds[i+1] != "" {
			continue
		}
		w, h, err := pageSize(p)
		unnamed := p.Description() == "" || p.NewSubfileType() != 0
		switch {
		case err == nil && w == w0 && h == h0:
			z, ok := svsOffsetZ(parseAperio(p.Description()))
			if ok && stacked {
				kinds[i+1] = "focal plane"
				stack = append(stack, svsPlane{page: i + 1, z: z})
				continue
			}
			why := "and no OffsetZ of a focal plane (channels of an SVS are not read)"
			if ok {
				why = "at an OffsetZ, but page 0 gives none (nor TotalDepth): no Z stack"
			}
			err := fmt.Errorf("%w: page %d of the SVS file has the size of page 0, %s", ErrUnsupported, i+1, why)
			if err := m.skip(err); err != nil {
				return err
			}
			kinds[i+1] = "skipped"
		case err == nil && w <= w0 && h <= h0 && sameProportions(w, h, w0, h0):
			kinds[i+1] = "level"
		case unnamed && !found["label"]:
			kinds[i+1], found["label"] = "label", true
		case unnamed && !found["macro"]:
			kinds[i+1], found["macro"] = "macro", true
		default:
			kinds[i+1] = fmt.Sprintf("page %d", i+1)
		}
	}
	stack, err = m.svsStack(pages, stack)
	if err != nil {
		return err
	}
	for i, p := range pages {
		if kinds[i] == "level" || kinds[i] == "skipped" || kinds[i] == "focal plane" {
			continue
		}
		l, err := layoutOf(p)
		if err != nil {
			if err := m.skipImage(fmt.Errorf("the %s of the SVS file (page %d): %w", kinds[i], i, err)); err != nil {
				return err
			}
			continue
		}
		planes := []*tiff.Page{p}
		var levels map[*tiff.Page][]*tiff.Page
		switch {
		case i == 0 && len(stack) > 1:
			if planes, err = m.svsFocalPlanes(pages, kinds, stack, l); err != nil {
				return err
			}
			levels = map[*tiff.Page][]*tiff.Page{}
			for _, f := range stack {
				levels[pages[f.page]] = svsPlaneLevels(pages, kinds, f.page)
			}
			if len(planes) < len(stack) {
				stack = slices.DeleteFunc(stack, func(f svsPlane) bool { return !slices.Contains(planes, pages[f.page]) })
			}
		case i == 0:
			levels = map[*tiff.Page][]*tiff.Page{p: svsLevels(pages, kinds)}
		}
		im := genericImage(planes, l, levels)
		if i == 0 {
			im.Spec.SizeZ, im.Spec.SizeT = len(planes), 1
		}
		im.Spec.Name, im.Spec.PhysicalSizeX, im.Spec.PhysicalSizeY = kinds[i], 0, 0
		if i == 0 {
			im.Spec.Name = ""
		}
		a := parseAperio(p.Description())
		im.Spec.Description = a.text
		if i == 0 {
			a.describe(&im.Spec, stack)
		}
		m.add(im)
		if err := m.boundAnnotations(im, "the Aperio description"); err != nil {
			return err
		}
	}
	return nil
}

// svsLevels returns the tiled pages classified as levels that make one
// pyramid below page 0: the slide's reduced resolutions, largest first,
// one integer factor apart (4 in Aperio's files), equal in X and Y. The
// thumbnail is left out, stripped as Aperio writes it or tiled: of the
// chains the pages make, the longest is taken, the one of the smaller
// factor among equals, so that a thumbnail whose size happens to divide
// page 0's does not break the chain of the levels after it.
func svsLevels(pages []*tiff.Page, kinds []string) []*tiff.Page {
	type sized struct {
		p    *tiff.Page
		w, h int
	}
	var cand []sized
	for i, p := range pages {
		if kinds[i] != "level" {
			continue
		}
		if l, err := p.Layout(); err == nil && l.Tiled {
			cand = append(cand, sized{p, l.Width, l.Height})
		}
	}
	w0, h0, err := pageSize(pages[0])
	if err != nil {
		return nil
	}
	var best []*tiff.Page
	bestFactor := 0
	// The pyramid starts at one of the first reduced pages (Aperio's
	// thumbnail comes before the levels): trying only those as its start
	// keeps the work linear in a file of thousands of pages.
	for i, c := range cand[:min(len(cand), svsLevelStarts)] {
		if c.w == 0 {
			continue
		}
		f := int(math.Round(float64(w0) / float64(c.w)))
		if f < 2 || !divided(w0, c.w, f) || !divided(h0, c.h, f) {
			continue
		}
		chain, last := []*tiff.Page{c.p}, c
		for _, n := range cand[i+1:] {
			if divided(last.w, n.w, f) && divided(last.h, n.h, f) {
				chain, last = append(chain, n.p), n
			}
		}
		if len(chain) > len(best) || len(chain) == len(best) && f < bestFactor {
			best, bestFactor = chain, f
		}
	}
	return best
}

// svsLevelStarts is how many of an SVS's first reduced pages are tried as
// the start of its pyramid.
const svsLevelStarts = 4

// divided reports whether small is large divided by factor, rounded down
// or up, as the levels of an OME pyramid are (pyramid.CheckEncodedLevels).
func divided(large, small, factor int) bool {
	return small == large/factor || small == (large+factor-1)/factor
}

// describe sets what the fields of the image's description say: the
// pixel size (MPP, in µm), the acquisition date (Date and Time, with Time
// Zone when given), the objective's nominal magnification (AppMag, when
// a positive number OME's float holds) and the annotations (every field
// but AppMag so mapped).
func (a aperio) describe(s *pyramid.ImageSpec, stack []svsPlane) {
	s.Annotations = a.fields
	a.describeScan(s, stack)
	if v, ok := a.field("AppMag"); ok {
		if mag, ok := positiveDecimal(v); ok {
			s.Instrument = objective(mag)
			i := len(a.fields) - 1 // the field read: the last so named
			for a.fields[i].Key != "AppMag" {
				i--
			}
			s.Annotations = slices.Delete(slices.Clone(a.fields), i, i+1)
		}
	}
	if v, ok := a.field("MPP"); ok {
		if mpp, ok := positiveDecimal(v); ok {
			s.PhysicalSizeX, s.PhysicalSizeY = mpp, mpp
			s.PhysicalSizeXUnit, s.PhysicalSizeYUnit = "µm", "µm"
		}
	}
	date, ok1 := a.field("Date")
	clock, ok2 := a.field("Time")
	if !ok1 || !ok2 {
		return
	}
	zone, _ := a.field("Time Zone")
	if t, ok := aperioTime(date, clock, zone); ok && t.Year() >= 1 { // xsd:dateTime's years
		s.AcquisitionDate = t
	}
}

// aperioTime reads Aperio's Date ("MM/DD/YY"), Time ("HH:MM:SS") and
// Time Zone ("GMT-05:00", "GMT+0100"; pyramid.NoZone when absent or not
// understood).
func aperioTime(date, clock, zone string) (time.Time, bool) {
	t, err := time.ParseInLocation("01/02/06 15:04:05", date+" "+clock, pyramid.NoZone)
	if err != nil {
		return time.Time{}, false
	}
	z := strings.TrimPrefix(strings.TrimSpace(zone), "GMT")
	if z == "" {
		return t, true
	}
	for _, layout := range []string{"-07:00", "-0700", "-07"} {
		if zt, err := time.Parse(layout, z); err == nil {
			_, offset := zt.Zone()
			return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.FixedZone("GMT"+z, offset)), true
		}
	}
	return t, true
}

// pageSize returns a page's width and height.
func pageSize(p *tiff.Page) (int, int, error) {
	l, err := p.Layout()
	if err != nil {
		return 0, 0, fmt.Errorf("source: %w", err)
	}
	return l.Width, l.Height, nil
}

// sameProportions reports whether a w x h page is a reduced copy of a
// w0 x h0 one: the same proportions within the rounding of its size.
func sameProportions(w, h, w0, h0 int) bool {
	scale := float64(w0) / float64(w)
	return math.Abs(float64(h)*scale-float64(h0)) <= scale+0.02*float64(h0)
}

// svsPlane is a focal plane of an SVS file: its page, at Z offset z.
type svsPlane struct {
	page int
	z    float64
}

// svsOffsetZ returns the Z offset of an SVS page, as Bio-Formats reads
// it: of its OffsetZ and TotalDepth fields, the last (TotalDepth giving
// 0, the first focal plane); an OffsetZ that is no number gives none.
func svsOffsetZ(a aperio) (z float64, ok bool) {
	for _, f := range a.fields {
		switch f.Key {
		case "TotalDepth":
			z, ok = 0, true
		case "OffsetZ":
			if v, valid := decimal(f.Value); valid {
				z, ok = v, true
			}
		}
	}
	return z, ok
}

// svsStack sorts the focal planes of an SVS file by their offsets. Two
// pages at one offset are not supported: the later ones are refused, or
// with SkipUnsupported left out and reported.
func (m *mapper) svsStack(pages []*tiff.Page, stack []svsPlane) ([]svsPlane, error) {
	slices.SortStableFunc(stack, func(a, b svsPlane) int { return cmp.Compare(a.z, b.z) })
	var out []svsPlane
	for _, f := range stack {
		if len(out) > 0 && f.z == out[len(out)-1].z {
			err := fmt.Errorf("%w: page %d of the SVS file is a focal plane at OffsetZ %g, as page %d is", ErrUnsupported, f.page, f.z, out[len(out)-1].page)
			if err := m.skip(err); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// svsFocalPlanes returns the pages of the focal planes of the stack, in
// its order, page 0's layout l; a focal plane of another layout is
// refused, or with SkipUnsupported left out and reported.
func (m *mapper) svsFocalPlanes(pages []*tiff.Page, kinds []string, stack []svsPlane, l pageLayout) ([]*tiff.Page, error) {
	var planes []*tiff.Page
	for _, f := range stack {
		pl, err := layoutOf(pages[f.page])
		if err == nil && !sameShape(pl, l) {
			err = fmt.Errorf("%w: it is %v, page 0 %v", ErrUnsupported, pl, l)
		}
		if err != nil {
			if err := m.skip(fmt.Errorf("the focal plane at OffsetZ %g of the SVS file (page %d): %w", f.z, f.page, err)); err != nil {
				return nil, err
			}
			kinds[f.page] = "skipped"
			continue
		}
		planes = append(planes, pages[f.page])
	}
	return planes, nil
}

// svsPlaneLevels returns the levels of the focal plane of page p of a Z
// stack: the pyramid svsLevels finds among the pages after it, up to the
// next focal plane's, where Aperio stores each plane's (Bio-Formats'
// SVSReader takes resolution r of plane z at IFD r + 1 + z × the
// resolutions; page 0's come after the thumbnail).
func svsPlaneLevels(pages []*tiff.Page, kinds []string, p int) []*tiff.Page {
	end := p + 1
	for end < len(pages) && kinds[end] != "focal plane" && kinds[end] != "skipped" {
		end++
	}
	return svsLevels(pages[p:end], kinds[p:end])
}

// describeScan maps the fields of an SVS image's description Bio-Formats
// maps besides its size, date and magnification (see svs): the channels'
// wavelengths and dye, and the planes' positions.
func (a aperio) describeScan(s *pyramid.ImageSpec, stack []svsPlane) {
	// quantity is the field key as a quantity of unit, if read: none
	// (zero) for a field missing, or one parse does not read.
	quantity := func(key, unit string, parse func(string) (float64, bool)) pyramid.Quantity {
		if v, ok := a.field(key); ok {
			if f, ok := parse(v); ok {
				return pyramid.Quantity{Value: f, Unit: unit}
			}
		}
		return pyramid.Quantity{}
	}
	ch := pyramid.Channel{EmissionWavelength: quantity("Emission Wavelength", "nm", positiveDecimal),
		ExcitationWavelength: quantity("Excitation Wavelength", "nm", positiveDecimal)}
	if v, ok := a.field("Dye"); ok && s.SizeC == 1 {
		ch.Name = v
	}
	if ch != (pyramid.Channel{}) {
		s.Channels = make([]pyramid.Channel, s.SizeC)
		for c := range s.Channels {
			s.Channels[c] = ch
			if c > 0 {
				s.Channels[c].Name = ""
			}
		}
	}
	at := pyramid.Plane{PositionX: quantity("Left", "mm", decimal), PositionY: quantity("Top", "mm", decimal)}
	if at == (pyramid.Plane{}) && len(stack) < 2 {
		return
	}
	s.PlaneInfo = make([]pyramid.Plane, 0, s.Planes())
	for p := range s.Planes() {
		z, c, t := s.PlaneCoords(p)
		pl := at
		pl.Z, pl.C, pl.T = z, c, t
		if len(stack) > 1 {
			pl.PositionZ = pyramid.Quantity{Value: stack[z].z, Unit: "reference frame"}
		}
		s.PlaneInfo = append(s.PlaneInfo, pl)
	}
}

// decimal reads a number of a scanner's metadata as positiveDecimal does,
// of any sign: finite, of magnitude below 10^12 (one below float32's
// least, as OME's floats are, is written as 0).
func decimal(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	if strings.Count(v, ",") == 1 && !strings.Contains(v, ".") {
		v = strings.Replace(v, ",", ".", 1)
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil && math.Abs(f) < 1e12 && !math.IsNaN(f)
}
