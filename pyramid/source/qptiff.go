package source

import (
	"encoding/xml"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// Akoya (formerly PerkinElmer) QPTIFF files, as Vectra, PhenoImager
// (Polaris) and PhenoCycler (CODEX) write them. Bio-Formats' VectraReader
// and tifffile's is_qpi take a file whose first page's Software starts
// "PerkinElmer-QPI"; every page's ImageDescription is then XML whose root
// is a PerkinElmer-QPI-ImageDescription element, its child elements the
// page's fields (DescriptionVersion, AcquisitionSoftware, ImageType,
// Identifier, Name, Biomarker, Color, ExposureTime, Objective,
// ScanProfile, ValidationCode...).
const (
	qpiSoftwarePrefix = "PerkinElmer-QPI"
	qpiRoot           = "PerkinElmer-QPI-ImageDescription"
)

// qpiMaxFields bounds the fields kept of one page's description, and the
// annotations of one image; the rest are reported (ErrMetadata). Akoya's
// descriptions hold a few dozen fields. The XML is read within the
// bounds of an XMP packet's (boundedXML: 2^20 tokens, 32 deep).
const qpiMaxFields = 1024

// isQPTIFF reports whether f is a QPTIFF file: its first page's Software
// starts "PerkinElmer-QPI", as Bio-Formats and tifffile test it.
func isQPTIFF(f *tiff.File) bool {
	return f != nil && len(f.Pages) > 0 && strings.HasPrefix(f.Pages[0].Software(), qpiSoftwarePrefix)
}

// qpiFields are the fields of a page's description, in document order:
// the text of each element below the root that holds no element,
// keyed by its path from the root's child ("Name", "CameraSettings.Gain"),
// and the attributes of each element ("path.attribute"). A ScanProfile
// of elements is one field, its XML as written, as Bio-Formats keeps it.
type qpiFields struct {
	fields []pyramid.KeyValue
	lost   int // fields past qpiMaxFields
}

// get returns the value of the first field named key.
func (q qpiFields) get(key string) (string, bool) {
	for _, f := range q.fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// parseQPI reads a page's description. An empty one has no fields; one
// that does not parse, is past the bounds or whose root is not
// PerkinElmer-QPI-ImageDescription is an error (ErrMetadata). The
// encoding the XML declares is not taken: Akoya's writers declare
// "utf-16" and write UTF-8, as Bio-Formats reads them.
func parseQPI(d string) (qpiFields, error) {
	var out qpiFields
	if strings.TrimSpace(d) == "" {
		return out, nil
	}
	dec := xml.NewDecoder(strings.NewReader(d))
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	b := &boundedXML{d: dec}
	var path []string
	type open struct {
		text     strings.Builder
		children bool
		seen     map[string]int // the children of each name so far
	}
	var stack []*open
	add := func(key, value string) {
		if len(out.fields) >= qpiMaxFields {
			out.lost++
			return
		}
		out.fields = append(out.fields, pyramid.KeyValue{Key: pyramid.XMLText(key), Value: pyramid.XMLText(strings.TrimSpace(value))})
	}
	rooted := false
	var profileAt int64 // where a ScanProfile's content starts, 0 when none is open
	last := int64(0)    // the decoder's offset before the token read
	for {
		last = dec.InputOffset()
		tok, err := b.Token()
		if errors.Is(err, io.EOF) {
			if !rooted {
				return qpiFields{}, errors.New("no root element")
			}
			return out, nil
		}
		if err != nil {
			return qpiFields{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				if rooted {
					return qpiFields{}, errors.New("a second root element")
				}
				if t.Name.Local != qpiRoot {
					return qpiFields{}, fmt.Errorf("the root element is %s, not %s", t.Name.Local, qpiRoot)
				}
				rooted = true
				stack = append(stack, &open{})
				continue
			}
			parent := stack[len(stack)-1]
			parent.children = true
			if parent.seen == nil {
				parent.seen = map[string]int{}
			}
			parent.seen[t.Name.Local]++
			// A sibling of the same name again (a filter's second Band,
			// Responsivity's Filters) is numbered: "Band[2]".
			name := t.Name.Local
			if k := parent.seen[name]; k > 1 {
				name = fmt.Sprintf("%s[%d]", name, k)
			}
			stack = append(stack, &open{})
			path = append(path, name)
			if len(path) == 1 && t.Name.Local == "ScanProfile" {
				profileAt = dec.InputOffset()
			}
			if profileAt > 0 && len(path) > 1 {
				continue // within a ScanProfile: kept whole
			}
			for _, a := range t.Attr {
				add(strings.Join(path, ".")+"."+a.Name.Local, a.Value)
			}
		case xml.CharData:
			if len(stack) > 1 {
				stack[len(stack)-1].text.Write(t)
			}
		case xml.EndElement:
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				continue // the root's end
			}
			switch {
			case len(path) == 1 && profileAt > 0:
				value := top.text.String()
				if top.children && profileAt <= last && last <= int64(len(d)) {
					value = d[profileAt:last]
				}
				add(path[0], value)
				profileAt = 0
			case profileAt > 0:
			case !top.children:
				add(strings.Join(path, "."), top.text.String())
			}
			path = path[:len(path)-1]
		}
	}
}

// qptiff maps a QPTIFF file as Bio-Formats' VectraReader does:
//   - the image is page 0 and the pages after it of its size, its channels
//     along C, each page one (a brightfield scan's one RGB page, or page 0
//     alone when it has several samples: its samples are the channels).
//     It is unnamed, as the other vendors' slides here (Bio-Formats names
//     it "resolution #1", tifffile "Baseline"): the ometiff command names
//     it after the file. Each channel is named by its page's Biomarker,
//     or failing that its Name (the Name then its fluorophore), coloured by
//     its Color ("R,G,B"); its ExposureTime (µs) is its plane's exposure,
//     page 0's XPosition and YPosition every plane's stage position;
//     the first channel's Objective is the objective's model, its number
//     (the "x" dropped: "20x") its nominal magnification; InstrumentType
//     the microscope's model, CameraType the detector's, CameraSettings'
//     Gain the channel's detector setting; SampleDescription the image's
//     description. The pixel size is the resolution fields'. The other
//     fields of the channels' descriptions are a map annotation: a field
//     every channel gives alike once, under its name, others under "name
//     #c", c counting channels from 1 (Bio-Formats' original metadata);
//   - the page after the pages of the channels' size is an image named
//     "thumbnail" (unless it is a level: a file without one); a page of
//     that size but another layout after the channels (a mask) is an
//     image of its own;
//   - then groups of as many pages as channels, the first marked reduced
//     (NewSubfileType 1) or of ImageType ReducedResolution, are the
//     image's reduced resolutions: the writer
//     computes the levels again, or copies these when they make an OME
//     pyramid. A group that does not continue the pyramid (of other
//     samples, of another aspect, of sizes unlike each other's: tifffile
//     takes a group of half the size above, Bio-Formats does not check)
//     ends the levels, as in both readers, and its pages are images of
//     their own;
//   - the other pages are images of their own, named by their ImageType:
//     "macro" for Overview (as the other vendors name the slide's
//     overview), "label" for Label, Bio-Formats' name otherwise (the type
//     as written; without one, "label" for the last page, "macro" for
//     others). A name taken already is "page N", N the page's index.
//     Their descriptions' fields are their map annotations, their
//     XPosition and YPosition their stage positions.
//
// A description that is not QPTIFF's XML loses the image its fields
// (ErrMetadata; with SkipUnsupported the image is kept without them). An
// image whose page cannot be read is refused, or left out with
// SkipUnsupported.
func (m *mapper) qptiff() error {
	pages := m.file.TIFF.Pages
	n, run := m.qpiChannels(pages)
	// The thumbnail follows the pages of the channels' size, unless the
	// page there is a level already (a file without one).
	thumb, first := run, run+1
	if run < len(pages) && qpiReduced(pages[run]) && continuesPyramid(pages[0], pages[run]) {
		thumb, first = -1, run
	}
	groups := qpiLevels(pages, n, first)
	if err := m.qpiImage(pages[:n], groups); err != nil {
		return err
	}
	levels := n * len(groups)
	used := map[string]bool{}
	for i := n; i < len(pages); i++ {
		if i >= first && i < first+levels {
			continue // a level
		}
		p := pages[i]
		fields, perr := parseQPI(p.Description())
		name := "thumbnail"
		if i != thumb {
			name = qpiName(fields, i == len(pages)-1)
		}
		if used[name] {
			name = fmt.Sprintf("page %d", i)
		}
		used[name] = true
		l, err := m.layout(p)
		if err != nil {
			if err := m.skipImage(fmt.Errorf("the %s of the QPTIFF file (page %d): %w", name, i, err)); err != nil {
				return err
			}
			continue
		}
		im := genericImage([]*tiff.Page{p}, l, nil)
		im.Spec.Name, im.Spec.Description = name, ""
		if x, y, ok := qpiPosition(p); ok {
			im.Spec.PlaneInfo = []pyramid.Plane{{PositionX: x, PositionY: y}}
		}
		if err := m.qpiAnnotate(im, []qpiFields{fields}, []error{perr}, []int{i}, nil); err != nil {
			return err
		}
		m.add(im)
	}
	return nil
}

// qpiChannels returns how many pages the image's channels are: page 0
// and the pages right after it of its width and height, when page 0 has
// one sample (Bio-Formats' count); 1 otherwise. Pages of that size but
// another layout (samples, pixel type) at the end of the run (a mask
// after the channels) are not channels but images of their own, where
// Bio-Formats would take them for channels of page 0's type; one amid
// the channels is (qpiImage refuses the image).
//
// It returns too how many pages are of page 0's size (run): the
// thumbnail follows them.
func (m *mapper) qpiChannels(pages []*tiff.Page) (n, run int) {
	if s, ok := pages[0].Uint(tiff.TagSamplesPerPixel); ok && s != 1 {
		return 1, 1
	}
	w, h := qpiSize(pages[0])
	n = 1
	for n < len(pages) {
		if pw, ph := qpiSize(pages[n]); pw != w || ph != h {
			break
		}
		n++
	}
	run = n
	l0, err := m.layout(pages[0])
	for err == nil && n > 1 {
		if l, err := m.layout(pages[n-1]); err == nil && sameShape(l0, l) {
			break
		}
		n--
	}
	return n, run
}

// qpiSize returns a page's width and height, 0 when absent.
func qpiSize(p *tiff.Page) (w, h uint64) {
	w, _ = p.Uint(tiff.TagImageWidth)
	h, _ = p.Uint(tiff.TagImageLength)
	return w, h
}

// qpiLevels returns the groups of n pages from page first (after the
// thumbnail, page n, if any) that are the image's reduced resolutions,
// largest first: each group's first page marked reduced (Bio-Formats'
// test) or of ImageType ReducedResolution, its pages of one size, each
// continuing the pyramid of page 0 (continuesPyramid, as a plain TIFF's
// levels: its samples, its aspect) and smaller than the group before.
func qpiLevels(pages []*tiff.Page, n, first int) [][]*tiff.Page {
	var out [][]*tiff.Page
	above := pages[:n]
	for start := first; start+n <= len(pages); start += n {
		g := pages[start : start+n]
		if !qpiReduced(g[0]) {
			break
		}
		w, h := qpiSize(g[0])
		aw, ah := qpiSize(above[0])
		ok := w < aw || h < ah
		for _, p := range g {
			pw, ph := qpiSize(p)
			ok = ok && pw == w && ph == h && continuesPyramid(pages[0], p)
		}
		if !ok {
			break
		}
		out = append(out, g)
		above = g
	}
	return out
}

// qpiReduced reports whether a page is a reduced resolution: marked so
// (NewSubfileType 1, not a mask), or of ImageType ReducedResolution, as
// writers that leave NewSubfileType unset describe their levels.
func qpiReduced(p *tiff.Page) bool {
	if p.NewSubfileType()&(tiff.SubfileReducedImage|tiff.SubfileMask) == tiff.SubfileReducedImage {
		return true
	}
	fields, err := parseQPI(p.Description())
	t, _ := fields.get("ImageType")
	return err == nil && strings.TrimSpace(t) == "ReducedResolution"
}

// qpiName names a page after the image, the thumbnail and the levels by
// its ImageType, as Bio-Formats does: "macro" for Overview and "label"
// for Label (named as the other vendors' are), the type as written for
// others; without one, "label" for the file's last page and "macro" for
// the others.
func qpiName(fields qpiFields, last bool) string {
	t, _ := fields.get("ImageType")
	switch t = strings.TrimSpace(t); t {
	case "Overview":
		return "macro"
	case "Label":
		return "label"
	case "Thumbnail":
		return "thumbnail"
	case "":
		if last {
			return "label"
		}
		return "macro"
	}
	return t
}

// qpiImage adds the image of the channel pages, with the levels (groups
// of as many pages, one a channel).
func (m *mapper) qpiImage(channels []*tiff.Page, levelGroups [][]*tiff.Page) error {
	l, err := m.layout(channels[0])
	if err != nil {
		return m.skipImage(fmt.Errorf("the image of the QPTIFF file (page 0): %w", err))
	}
	for c, p := range channels[1:] {
		lc, err := m.layout(p)
		if err == nil && !sameShape(l, lc) {
			err = fmt.Errorf("%w: page %d (%v) is unlike page 0 (%v)", ErrUnsupported, c+1, lc, l)
		}
		if err != nil {
			return m.skipImage(fmt.Errorf("channel %d of the image of the QPTIFF file (page %d): %w", c+1, c+1, err))
		}
	}
	levels := map[*tiff.Page][]*tiff.Page{}
	for _, g := range levelGroups {
		for c, p := range g {
			levels[channels[c]] = append(levels[channels[c]], p)
		}
	}
	im := genericImage(channels, l, levels)
	s := &im.Spec
	s.Name, s.Description = "", ""
	s.SizeC, s.SizeT = len(channels)*l.planesPerPage(), 1
	fields := make([]qpiFields, len(channels))
	errs := make([]error, len(channels))
	index := make([]int, len(channels))
	for c, p := range channels {
		fields[c], errs[c] = parseQPI(p.Description())
		index[c] = c
	}
	// The typed fields: what each channel's description gives of them is
	// left out of the annotations.
	mapped := make([]map[string]bool, len(channels))
	for c := range mapped {
		mapped[c] = map[string]bool{}
	}
	exposures := make([]pyramid.Quantity, s.SizeC)
	if len(channels) == s.SizeC { // a page a channel
		s.Channels = make([]pyramid.Channel, s.SizeC)
		for c, f := range fields {
			ch := &s.Channels[c]
			name, _ := f.get("Name")
			biomarker, _ := f.get("Biomarker")
			mapped[c]["Name"], mapped[c]["Biomarker"] = true, true
			if biomarker != "" {
				ch.Name, ch.Fluor = biomarker, name
			} else {
				ch.Name = name
			}
			if v, ok := f.get("Color"); ok {
				if col, ok := qpiColor(v); ok {
					ch.Color, mapped[c]["Color"] = col, true
				}
			}
			if v, ok := f.get("ExposureTime"); ok {
				if t, ok := positiveDecimal(v); ok {
					exposures[c] = pyramid.Quantity{Value: t, Unit: "µs"}
					mapped[c]["ExposureTime"] = true
				}
			}
		}
	}
	x, y, positioned := qpiPosition(channels[0])
	for c, e := range exposures {
		if e != (pyramid.Quantity{}) || positioned {
			pl := pyramid.Plane{C: c, ExposureTime: e}
			if positioned {
				pl.PositionX, pl.PositionY = x, y
			}
			s.PlaneInfo = append(s.PlaneInfo, pl)
		}
	}
	first := fields[0]
	// Fields of the image as a whole, read from the first channel and
	// left out of the others' annotations where they say the same.
	whole := map[string]string{}
	in := &pyramid.Instrument{}
	if v, ok := first.get("Objective"); ok && strings.TrimSpace(v) != "" {
		o := pyramid.Objective{Product: pyramid.Product{Model: strings.TrimSpace(v)}}
		o.NominalMagnification, _ = positiveDecimal(strings.ReplaceAll(strings.ToLower(v), "x", ""))
		in.Objectives, whole["Objective"] = []pyramid.Objective{o}, v
	}
	if v, ok := first.get("InstrumentType"); ok && strings.TrimSpace(v) != "" {
		in.Microscope, whole["InstrumentType"] = &pyramid.Microscope{Product: pyramid.Product{Model: strings.TrimSpace(v)}}, v
	}
	if v, ok := first.get("CameraType"); ok && strings.TrimSpace(v) != "" {
		in.Detectors, whole["CameraType"] = []pyramid.Detector{{Product: pyramid.Product{Model: strings.TrimSpace(v)}}}, v
	}
	if v, ok := first.get("SampleDescription"); ok {
		s.Description, whole["SampleDescription"] = v, v
	}
	if len(in.Objectives) > 0 || in.Microscope != nil || len(in.Detectors) > 0 {
		s.Instrument = in
	}
	if len(in.Detectors) > 0 && len(s.Channels) == len(fields) {
		for c, f := range fields {
			if v, ok := f.get("CameraSettings.Gain"); ok {
				if g, ok := positiveDecimal(v); ok {
					s.Channels[c].DetectorSettings = &pyramid.DetectorSettings{Gain: g}
					mapped[c]["CameraSettings.Gain"] = true
				}
			}
		}
	}
	for c, f := range fields {
		for key, v := range whole {
			if w, ok := f.get(key); ok && w == v {
				mapped[c][key] = true
			}
		}
	}
	if err := m.qpiAnnotate(im, fields, errs, index, mapped); err != nil {
		return err
	}
	textTags(im)
	m.add(im)
	return nil
}

// qpiPosition returns the stage position of a page, its XPosition and
// YPosition (in ResolutionUnit: inch by default, as the TIFF
// specification has it, or centimeter) in µm, as Bio-Formats gives every
// plane of an image its first page's; false without both, or with
// ResolutionUnit none.
func qpiPosition(p *tiff.Page) (x, y pyramid.Quantity, ok bool) {
	unit, found := p.Uint(tiff.TagResolutionUnit)
	if !found {
		unit = uint64(tiff.ResolutionUnitInch)
	}
	perUnit := map[uint64]float64{uint64(tiff.ResolutionUnitInch): 25400, uint64(tiff.ResolutionUnitCentimeter): 10000}[unit]
	read := func(tag uint16) (pyramid.Quantity, bool) {
		e, ok := p.Field(tag)
		if !ok {
			return pyramid.Quantity{}, false
		}
		v, err := e.Floats()
		if err != nil || len(v) == 0 || math.IsNaN(v[0]) || math.IsInf(v[0], 0) {
			return pyramid.Quantity{}, false
		}
		um := v[0] * perUnit
		if math.Abs(um) > math.MaxFloat32 { // past OME's float
			return pyramid.Quantity{}, false
		}
		return pyramid.Quantity{Value: um, Unit: "µm"}, true
	}
	x, okX := read(tiff.TagXPosition)
	y, okY := read(tiff.TagYPosition)
	return x, y, okX && okY && perUnit > 0
}

// qpiColor reads a Color field, "R,G,B" of 0 to 255 each, as an opaque
// colour.
func qpiColor(v string) (color.Color, bool) {
	parts := strings.Split(v, ",")
	if len(parts) == 4 {
		parts = parts[:3] // R,G,B,A: Bio-Formats reads the first three
	}
	if len(parts) != 3 {
		return nil, false
	}
	var rgb [3]uint8
	for i, p := range parts {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 8)
		if err != nil {
			return nil, false
		}
		rgb[i] = uint8(n)
	}
	return color.NRGBA{rgb[0], rgb[1], rgb[2], 0xff}, true
}

// qpiAnnotate adds the fields of the descriptions of an image's pages
// (one a channel, pages their indices) to its map annotation, but those
// mapped (by channel; nil for none): a field every page gives alike
// once, under its name; others, when there are several pages, under
// "name #c" for each page c (from 1) that gives one. A description that
// does not parse, and the fields past the bounds, are reported.
func (m *mapper) qpiAnnotate(im *Image, fields []qpiFields, errs []error, pages []int, mapped []map[string]bool) error {
	for c, err := range errs {
		if err != nil {
			if err := m.skipImageMetadata(im, fmt.Errorf("%w: the ImageDescription of page %d of the QPTIFF file is not its XML (%v): its fields are not kept",
				ErrMetadata, pages[c], err)); err != nil {
				return err
			}
		}
	}
	// The pages' values of each key, in page order: as many as the fields
	// read, whatever the number of pages.
	type value struct {
		page int
		text string
	}
	var keys []string
	byKey := map[string][]value{}
	for c, f := range fields {
		for _, kv := range f.fields {
			if mapped != nil && mapped[c][kv.Key] {
				continue
			}
			vs := byKey[kv.Key]
			if vs == nil {
				keys = append(keys, kv.Key)
			}
			if len(vs) == 0 || vs[len(vs)-1].page != c { // the first of a key repeated in one page
				byKey[kv.Key] = append(vs, value{c, kv.Value})
			}
		}
	}
	lost := 0
	for _, f := range fields {
		lost += f.lost
	}
	var out []pyramid.KeyValue
	put := func(kv pyramid.KeyValue) {
		if len(out) >= qpiMaxFields {
			lost++
			return
		}
		if kv.Value != "" {
			out = append(out, kv)
		}
	}
	for _, k := range keys {
		vs := byKey[k]
		alike := len(vs) == len(fields)
		for _, v := range vs[1:] {
			alike = alike && v.text == vs[0].text
		}
		if alike {
			put(pyramid.KeyValue{Key: k, Value: vs[0].text})
			continue
		}
		for _, v := range vs {
			put(pyramid.KeyValue{Key: k + " #" + strconv.Itoa(v.page+1), Value: v.text})
		}
	}
	im.Spec.Annotations = append(im.Spec.Annotations, out...)
	if lost > 0 {
		return m.skipImageMetadata(im, fmt.Errorf("%w: the QPTIFF descriptions of the image's pages have %d more fields than the %d kept as annotations",
			ErrMetadata, lost, qpiMaxFields))
	}
	return nil
}
