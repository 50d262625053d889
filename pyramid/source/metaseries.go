package source

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// MetaMorph and MetaXpress write "MetaSeries" TIFFs (plain .tif files,
// not STKs): every page's ImageDescription is an XML document, a MetaData
// root whose elements (prop and custom-prop, at its top or in its
// PlaneInfo and SetInfo groups) each give one value by their id, type
// (float, int, bool, time, guid, string...) and value attributes.
// Bio-Formats' MetamorphTiffReader takes a TIFF whose first description,
// trimmed, starts with "<MetaData>" and ends with "</MetaData>";
// tifffile's is_metaseries asks for Software "MetaSeries" too. The test is
// Bio-Formats', as every other mapping follows it; an STK (a UIC1tag)
// keeps the STK mapping, which comes first.
const (
	msRoot = "MetaData"
	// maxMetaSeriesXML bounds one page's description read as MetaSeries
	// XML: MetaMorph writes a few KiB. A longer one is not read (noted),
	// as one that does not parse.
	maxMetaSeriesXML = 1 << 20
	// maxMetaSeriesProps bounds the props (and the key-value lines of the
	// Description prop) read of one page; MetaMorph writes about a
	// hundred. The rest are noted, not read.
	maxMetaSeriesProps = 1024
	// msFieldStep is how far, in either axis, a page's stage position may
	// lie from its field's first one and still be of that field, as
	// Bio-Formats tells fields apart (in the stage's units).
	msFieldStep = 0.21
)

// isMetaSeries reports whether the file is a MetaSeries TIFF, as
// Bio-Formats tells one: its first page's description, trimmed, is a
// MetaData element.
func isMetaSeries(f *tiff.File) bool {
	if f == nil || len(f.Pages) == 0 {
		return false
	}
	d := strings.TrimSpace(f.Pages[0].Description())
	return strings.HasPrefix(d, "<"+msRoot+">") && strings.HasSuffix(d, "</"+msRoot+">")
}

// msProp is one prop of a page's XML: its id and value, as Bio-Formats'
// MetamorphHandler takes them (the type is not needed to read them).
type msProp struct{ id, value string }

// msPage is what the mapping takes of one page's MetaSeries XML. Each
// value is the last the page gives, as Bio-Formats keeps a scalar.
type msPage struct {
	props       []msProp           // in document order, Description's lines apart
	lines       []pyramid.KeyValue // Description's "Key: value" lines, from Exposure on
	description string             // Description's lines before those: free text
	lost        int                // props and lines past maxMetaSeriesProps
	name        string             // image-name
	illum       string             // _IllumSetting_: the channel's name
	at          time.Time          // acquisition-time-local; zero for none
	wavelength  float64            // nm, when hasWave
	hasWave     bool
	z           float64 // z-position, µm
	hasZ        bool
	stageX      float64 // stage-position-x and -y, the stage's units
	stageY      float64
	hasX, hasY  bool
	exposure    float64 // the Description's Exposure, in seconds
	hasExposure bool
	calX, calY  float64 // spatial-calibration-x and -y
	units       string  // spatial-calibration-units
	state       string  // spatial-calibration-state ("on", "off")
}

// hasStage reports whether the page gives its stage position, both axes.
func (p *msPage) hasStage() bool { return p.hasX && p.hasY }

// msTimeLayout is acquisition-time-local's, "20061122 09:25:18.123": its
// fraction of a second, of any digits, Go reads after the seconds.
const msTimeLayout = "20060102 15:04:05"

// msFloat reads a number as Bio-Formats' handler does ('+' signs dropped,
// "-1e+006"), within a float's range, as OME's values are.
func msFloat(v string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(v, "+", "")), 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) > math.MaxFloat32 {
		return 0, false
	}
	return f, true
}

// parseMetaSeries reads a page's MetaSeries XML: every element below the
// MetaData root with an id and a value attribute is a prop, as
// Bio-Formats' handler takes them, at any depth. XML that does not parse
// (encoding/xml, strict: no entity but XML's own is expanded), with
// another root, past maxMetaSeriesXML bytes, or past boundedXML's tokens
// and depth is an error.
func parseMetaSeries(d string) (msPage, error) {
	var out msPage
	if len(d) > maxMetaSeriesXML {
		return out, fmt.Errorf("%d bytes, more than %d", len(d), maxMetaSeriesXML)
	}
	dec := xml.NewDecoder(strings.NewReader(d))
	b := &boundedXML{d: dec}
	rooted := false
	for {
		tok, err := b.Token()
		if errors.Is(err, io.EOF) {
			if !rooted {
				return msPage{}, errors.New("no root element")
			}
			break
		}
		if err != nil {
			return msPage{}, err
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if b.depth == 1 {
			if rooted {
				return msPage{}, errors.New("a second root element")
			}
			if t.Name.Local != msRoot {
				return msPage{}, fmt.Errorf("the root element is %s, not %s", t.Name.Local, msRoot)
			}
			rooted = true
			continue
		}
		var id, value string
		var hasID, hasValue bool
		for _, a := range t.Attr {
			switch a.Name.Local {
			case "id":
				id, hasID = a.Value, true
			case "value":
				value, hasValue = a.Value, true
			}
		}
		if !hasID || !hasValue {
			continue
		}
		if len(out.props) >= maxMetaSeriesProps {
			out.lost++
			continue
		}
		out.props = append(out.props, msProp{id, value})
	}
	for _, p := range out.props {
		if p.id == "Description" {
			out.readDescription(p.value)
			continue
		}
		out.take(p.id, p.value)
	}
	return out, nil
}

// readDescription reads the Description prop as Bio-Formats does: its
// lines (separated by "&#13;&#10;" as text, which MetaMorph writes
// escaped, or by CR LF) before one starting "Exposure: " are free text,
// and from it on each "Key: value" line is a value ("Exposure: 100 ms",
// "Binning: 1 x 1", "Gain: ..."). With no Exposure line it is all free
// text (Bio-Formats splits a single line at its colons; that is not done).
func (p *msPage) readDescription(v string) {
	v = strings.ReplaceAll(v, "&#13;&#10;", "\n")
	v = strings.ReplaceAll(v, "\r\n", "\n")
	var free []string
	keyed := false
	for line := range strings.SplitSeq(v, "\n") {
		if strings.HasPrefix(line, "Exposure: ") {
			keyed = true
		}
		if !keyed {
			free = append(free, line)
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			continue
		}
		if len(p.props)+len(p.lines) >= maxMetaSeriesProps {
			p.lost++
			continue
		}
		p.lines = append(p.lines, pyramid.KeyValue{Key: key, Value: value})
		p.take(key, value)
	}
	p.description = strings.TrimSpace(strings.Join(free, "\n"))
}

// take keeps a value the mapping uses, by its key, as Bio-Formats'
// handler reads them; a value that does not read as its kind is left.
func (p *msPage) take(key, value string) {
	switch key {
	case "image-name":
		p.name = strings.TrimSpace(value)
	case "_IllumSetting_":
		p.illum = strings.TrimSpace(value)
	case "acquisition-time-local":
		if t, err := time.ParseInLocation(msTimeLayout, strings.TrimSpace(value), pyramid.NoZone); err == nil && t.Year() >= 1 {
			p.at = t
		}
	case "wavelength":
		// An int, in nm (Bio-Formats parses it as one, and fails on
		// anything else); read as a number here. 0 is a wavelength as
		// any other, as Bio-Formats counts it (transmitted light, say):
		// a channel of its own, with no emission wavelength.
		if w, ok := msFloat(value); ok {
			p.wavelength, p.hasWave = w, true
		}
	case "z-position":
		p.z, p.hasZ = msFloat(value)
	case "stage-position-x":
		p.stageX, p.hasX = msFloat(value)
	case "stage-position-y":
		p.stageY, p.hasY = msFloat(value)
	case "Exposure":
		if e := stkExposureOf(value); e.ok {
			p.exposure, p.hasExposure = e.seconds, true
		}
	case "spatial-calibration-x":
		p.calX, _ = msFloat(value)
	case "spatial-calibration-y":
		p.calY, _ = msFloat(value)
	case "spatial-calibration-units":
		p.units = strings.TrimSpace(value)
	case "spatial-calibration-state":
		p.state = strings.TrimSpace(value)
	}
}

// metaSeries maps a MetaSeries TIFF of one file, as Bio-Formats'
// MetamorphTiffReader reads one (its search for the other files of a
// plate, when the file's name is an integer, is not done: each file is
// read alone). Every page of page 0's shape is a plane, page i plane i,
// in the order XYCZT (MinimalTiffReader's, which that reader keeps); pages
// of other shapes are further images, as a plain TIFF's.
//
// The pages are cut into fields by their stage positions
// (stage-position-x and -y, in the stage's units): a page more than 0.21
// from its field's first position in either axis starts the next field,
// as Bio-Formats compares each page with the last position it kept and
// makes each field a series. Each field is an image of its own, named as
// Bio-Formats names such series ("Field B1, Well 1: " and the image's
// name), rather than one image of all: OME gives a plane one position,
// and the writer cannot say which planes share a field otherwise. A page
// without a position is of its predecessor's field. A position visited
// again after another starts another field, as in Bio-Formats. Unlike
// Bio-Formats, which counts the axes over the whole file and reads field
// s's planes from page s × SizeZ × SizeT on, each field's axes are
// counted from its own pages.
//
// A field's axes, as Bio-Formats counts them: SizeC is the number of
// distinct wavelengths (wavelength, nm) of its pages, 1 for none, times
// the channels of a page (its samples, unless RGB); SizeZ the number of
// distinct z-positions when more than 1, divided by SizeC when each
// channel has Z positions of its own (SizeC × SizeZ over the pages, as
// Bio-Formats tests it); SizeT the pages left. Counts that do not
// multiply to the pages fall back to SizeZ 1 (Bio-Formats' fallback,
// which drops the planes past the product), and then to every page along
// T, noted; no plane is dropped. Channel c is the c-th distinct
// wavelength, the first page of it giving its name (_IllumSetting_), and
// the wavelength its emission wavelength; pages whose wavelengths do not
// follow the order are noted.
//
// Metadata, from each field's first page: image-name the name (tifffile
// and Bio-Formats both read it), acquisition-time-local the acquisition
// date ("20061122 09:25:18.123", no zone; Bio-Formats takes the last
// page's), spatial-calibration-x and -y the pixel size, in µm as
// Bio-Formats takes it, or in the spatial-calibration-units when OME knows
// them (as an STK's); a spatial-calibration-state "off" or units of pixels
// leave the image uncalibrated, noted. PhysicalSizeZ is the distance
// between the lowest and highest z-positions over SizeZ − 1 (Bio-Formats
// takes the first and last), of the first channel's pages: those of its
// wavelength, in whatever order the pages come (Bio-Formats takes every page's,
// and divides by the Z count before it halves it for channels at Z
// offsets of their own, which makes too small a step). Each plane's own
// page gives its DeltaT (its acquisition-time-local less the image's
// first, in seconds), its
// ExposureTime (the Description's "Exposure: 100 ms"), its PositionX and
// PositionY (the stage position, in reference frame units, as Bio-Formats
// sets them) and PositionZ (its z-position, in µm). The Description's
// free text before its Exposure line is the image's description; its
// other "Key: value" lines and the first page's other props (by id:
// _MagNA_, Temperature, Binning, camera gain, stage-label...) go into
// the map annotation, as Bio-Formats keeps them in its original metadata.
//
// A first page whose XML does not parse is ErrMetadata, or, with
// SkipUnsupported, the file is read as a plain TIFF, as an LSM's
// unreadable CZ_LSMINFO is. A later page's that does not parse gives its
// plane no values (and counts as no wavelength and no Z), noted.
func (m *mapper) metaSeries() error {
	pages := m.file.TIFF.Pages
	first, err := parseMetaSeries(strings.TrimSpace(pages[0].Description()))
	if err != nil {
		return m.plainTIFF(fmt.Errorf("%w: the MetaSeries XML of the first page's ImageDescription cannot be read (%v)", ErrMetadata, err))
	}
	m.file.Kind = MetaSeries
	l, err := m.layout(pages[0])
	if err != nil {
		return m.genericPages(pages) // which says why page 0 is not read
	}
	var planes, others []*tiff.Page
	for _, p := range pages {
		if pl, err := m.layout(p); err == nil && sameShape(pl, l) && p.NewSubfileType()&tiff.SubfileReducedImage == 0 {
			planes = append(planes, p)
		} else {
			others = append(others, p)
		}
	}
	metas := make([]msPage, len(planes))
	metas[0] = first
	var bad []int // the planes whose XML is not read
	var why error
	for k := 1; k < len(planes); k++ {
		if metas[k], err = parseMetaSeries(strings.TrimSpace(planes[k].Description())); err != nil {
			bad = append(bad, k)
			if why == nil {
				why = err
			}
		}
		// Only a field's first page gives more than the values taken,
		// read again below: the props of all would hold every page's XML
		// at once.
		metas[k].props, metas[k].lines, metas[k].description = nil, nil, ""
	}
	fields := msFields(metas)
	for i, f := range fields {
		if f[0] > 0 {
			metas[f[0]], _ = parseMetaSeries(strings.TrimSpace(planes[f[0]].Description()))
		}
		im := msImage(planes[f[0]:f[1]], metas[f[0]:f[1]], l)
		if len(fields) > 1 {
			name := fmt.Sprintf("Field %s1, Well 1", wellRowName(i))
			if im.Spec.Name != "" {
				name += ": " + im.Spec.Name
			}
			im.Spec.Name = name
		}
		var unread []string
		for _, k := range bad {
			if k >= f[0] && k < f[1] {
				unread = append(unread, strconv.Itoa(k))
			}
		}
		if len(unread) > 0 {
			if len(unread) > 8 {
				unread = append(unread[:8], "...")
			}
			im.Notes = append(im.Notes, fmt.Sprintf("the MetaSeries XML of %d of its pages (%s) is not read (%v): their planes have no wavelength, Z position, time, exposure or stage position",
				len(unread), strings.Join(unread, ", "), why))
		}
		if err := m.boundAnnotations(im, "the MetaSeries XML's first page"); err != nil {
			return err
		}
		m.add(im)
	}
	if len(others) > 0 {
		return m.genericPages(others)
	}
	return nil
}

// wellRowName names a row of wells as Bio-Formats does: A to Z, then AA
// to ZZ; past those, the row's number.
func wellRowName(row int) string {
	switch {
	case row < 26:
		return string(rune('A' + row))
	case row < 27*26:
		return string(rune('A'+row/26-1)) + string(rune('A'+row%26))
	}
	return strconv.Itoa(row + 1)
}

// msFields cuts the pages into fields by their stage positions (see
// metaSeries): the runs [start, end) of pages.
func msFields(metas []msPage) [][2]int {
	var fields [][2]int
	start := 0
	var refX, refY float64
	hasRef := false
	for k, p := range metas {
		if !p.hasStage() {
			continue
		}
		if !hasRef {
			refX, refY, hasRef = p.stageX, p.stageY, true
			continue
		}
		if math.Abs(p.stageX-refX) > msFieldStep || math.Abs(p.stageY-refY) > msFieldStep {
			fields = append(fields, [2]int{start, k})
			start, refX, refY = k, p.stageX, p.stageY
		}
	}
	return append(fields, [2]int{start, len(metas)})
}

// msAxes counts a field's wavelengths (SizeC, less the samples), Z and T
// as Bio-Formats does (see metaSeries), with the distinct wavelengths in
// the order they come; note says how counts that do not fit were read.
func msAxes(metas []msPage) (waves []float64, z, t int, note string) {
	n := len(metas)
	// By maps, not by searching the lists: a file of a page per
	// wavelength would otherwise cost time in the square of its pages.
	seenWave, seenZ := map[float64]bool{}, map[float64]bool{}
	for _, p := range metas {
		if p.hasWave && !seenWave[p.wavelength] {
			seenWave[p.wavelength] = true
			waves = append(waves, p.wavelength)
		}
		if p.hasZ {
			seenZ[p.z] = true
		}
	}
	c := max(len(waves), 1)
	z = 1
	if len(seenZ) > 1 {
		z = len(seenZ)
	}
	// Z positions of their own for each channel: as many Z as pages.
	if c*z > n && (c*(z/c) == n || c == n) {
		if z >= c {
			z /= c
		} else {
			z = 1
		}
	}
	t = max(n/(c*z), 1)
	if c*z*t == n {
		return waves, z, t, ""
	}
	if n%c == 0 {
		return waves, 1, n / c, fmt.Sprintf("its %d pages are not its %d wavelengths times %d Z positions times a number of time points: they are laid along C and T, SizeZ 1",
			n, c, z)
	}
	return nil, 1, n, fmt.Sprintf("its %d pages are not a multiple of its %d wavelengths: they are laid along T, the wavelengths not read as channels", n, c)
}

// msImage makes the image of a field's pages, each of layout l, and
// their XML (see metaSeries).
func msImage(pages []*tiff.Page, metas []msPage, l pageLayout) *Image {
	im := genericImage(pages, l, nil)
	s := &im.Spec
	first := metas[0]
	waves, z, t, note := msAxes(metas)
	c := max(len(waves), 1)
	if note != "" {
		im.Notes = append(im.Notes, note)
	}
	ppp := l.planesPerPage()
	s.SizeZ, s.SizeC, s.SizeT, s.DimensionOrder = z, c*ppp, t, pyramid.XYCZT
	if first.name != "" {
		s.Name = pyramid.XMLText(first.name)
	}
	s.Description = pyramid.XMLText(first.description)
	if !first.at.IsZero() {
		s.AcquisitionDate = first.at
	}
	carried := map[string]bool{"Description": true, "image-name": first.name != "", "acquisition-time-local": !first.at.IsZero(),
		"wavelength": first.hasWave, "z-position": first.hasZ, "_IllumSetting_": true,
		"stage-position-x": first.hasStage(), "stage-position-y": first.hasStage()}
	unit, calibrated := stkUnit(first.units)
	switch {
	case strings.EqualFold(first.state, "off"):
		s.PhysicalSizeX, s.PhysicalSizeY = 0, 0
		im.Notes = append(im.Notes, "its spatial-calibration-state is off: no physical pixel size")
	case !calibrated:
		s.PhysicalSizeX, s.PhysicalSizeY = 0, 0
		im.Notes = append(im.Notes, fmt.Sprintf("its spatial-calibration-units is %q: no physical pixel size", first.units))
	case positive(first.calX) > 0 && positive(first.calY) > 0:
		s.PhysicalSizeX, s.PhysicalSizeY = first.calX, first.calY
		s.PhysicalSizeXUnit, s.PhysicalSizeYUnit = unit, unit
		carried["spatial-calibration-x"], carried["spatial-calibration-y"] = true, true
	}
	if z > 1 {
		// The first channel's positions (its wavelength's pages, however
		// the pages are ordered): channels at Z offsets of their own (a
		// chromatic correction) would widen the range.
		lo, hi, n := math.Inf(1), math.Inf(-1), 0
		for _, p := range metas {
			if p.hasZ && (len(waves) == 0 || p.hasWave && p.wavelength == waves[0]) {
				lo, hi, n = min(lo, p.z), max(hi, p.z), n+1
			}
		}
		if step := positive((hi - lo) / float64(z-1)); n >= 2 && step > 0 {
			s.PhysicalSizeZ, s.PhysicalSizeZUnit = step, "µm"
		}
	}
	// The channels: channel c is page c's (the planes go along C first).
	if len(waves) > 0 || first.illum != "" {
		s.Channels = make([]pyramid.Channel, c*ppp)
		// The first page of the channel's wavelength names it: page c
		// when the pages come in order, as Bio-Formats takes it.
		names := map[float64]string{}
		for _, p := range slices.Backward(metas) {
			if p.hasWave {
				names[p.wavelength] = p.illum
			}
		}
		for i := range s.Channels {
			illum := first.illum
			if len(waves) > 0 {
				w := waves[i/ppp]
				illum = names[w]
				if positive(w) > 0 {
					s.Channels[i].EmissionWavelength = pyramid.Quantity{Value: w, Unit: "nm"}
				}
			}
			s.Channels[i].Name = pyramid.XMLText(illum)
		}
		for k, p := range metas {
			if len(waves) > 0 && p.hasWave && p.wavelength != waves[k%c] {
				im.Notes = append(im.Notes, fmt.Sprintf("its pages' wavelengths do not come in the order XYCZT (page %d's is %g nm, its channel's %g nm): laid as Bio-Formats lays them",
					k, p.wavelength, waves[k%c]))
				break
			}
		}
	}
	for i := range len(pages) * ppp {
		p := metas[i/ppp]
		zi, ci, ti := s.PlaneCoords(i)
		pl := pyramid.Plane{Z: zi, C: ci, T: ti}
		if !p.at.IsZero() && !first.at.IsZero() {
			// In milliseconds, not a time.Duration, which 292 years overflow.
			pl.DeltaT = pyramid.Quantity{Value: float64(p.at.UnixMilli()-first.at.UnixMilli()) / 1000, Unit: "s"}
		}
		if p.hasExposure {
			pl.ExposureTime = pyramid.Quantity{Value: p.exposure, Unit: "s"}
		}
		if p.hasStage() {
			pl.PositionX = pyramid.Quantity{Value: p.stageX, Unit: "reference frame"}
			pl.PositionY = pyramid.Quantity{Value: p.stageY, Unit: "reference frame"}
		}
		if p.hasZ {
			pl.PositionZ = pyramid.Quantity{Value: p.z, Unit: "µm"}
		}
		if pl != (pyramid.Plane{Z: zi, C: ci, T: ti}) {
			s.PlaneInfo = append(s.PlaneInfo, pl)
		}
	}
	// The rest of the first page's props, then the Description's lines,
	// then the TIFF's text fields (Software...).
	s.Annotations = nil
	for _, p := range first.props {
		if !carried[p.id] && pyramid.XMLText(p.id) != "" {
			s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: pyramid.XMLText(p.id), Value: pyramid.XMLText(p.value)})
		}
	}
	for _, kv := range first.lines {
		if (kv.Key != "Exposure" || !first.hasExposure) && pyramid.XMLText(kv.Key) != "" {
			s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: pyramid.XMLText(kv.Key), Value: pyramid.XMLText(kv.Value)})
		}
	}
	if first.lost > 0 {
		im.Notes = append(im.Notes, fmt.Sprintf("its first page's MetaSeries XML has %d props and Description lines past the first %d, not read", first.lost, maxMetaSeriesProps))
	}
	textTags(im)
	return im
}
