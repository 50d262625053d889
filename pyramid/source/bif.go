package source

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// tagXMP is the XMLPacket field (700, XMP), where Ventana's scanners put
// the iScan element (first page) and the EncodeInfo element (level 0).
const tagXMP uint16 = 700

// Descriptions of the pages of a Roche/Ventana BIF file (iScan, VENTANA
// DP scanners). tifffile's _series_bif names a page whose description
// starts "Label" the Label ("Label Image", "Label_Image": the photograph
// of the whole slide, label included), one described "Thumbnail" or
// starting "Probability" ("Probability_Image") a Thumbnail, and takes the
// pages whose description holds "level" ("level=0 mag=40 quality=90")
// for the Baseline and its levels.
const (
	bifLabelPrefix       = "Label"
	bifThumbnail         = "Thumbnail"
	bifProbabilityPrefix = "Probability"
)

// isBIF reports whether f is a BIF file. OpenSlide's ventana_detect
// takes a file whose first page's XMLPacket holds an iScan element, the
// root or a child of a Metadata root; tifffile's is_bif, a file whose
// first page has an XMLPacket and whose Software names Ventana or starts
// "ScanOutputManager", or whose description is "Label Image",
// "Label_Image" or "Probability_Image". Either makes a BIF here, and only
// with a page described "level=N" too (a level of the slide, as both
// readers take them): a plain TIFF that happens to have some XMP never
// passes.
func isBIF(f *tiff.File) bool {
	if f == nil || len(f.Pages) == 0 {
		return false
	}
	p := f.Pages[0]
	e, ok := p.Field(tagXMP)
	if !ok {
		return false
	}
	d, sw := p.Description(), p.Software()
	tifffile := strings.Contains(sw, "Ventana") || strings.HasPrefix(sw, "ScanOutputManager") ||
		d == "Label Image" || d == "Label_Image" || d == "Probability_Image"
	if !tifffile {
		if _, ok := parseIScan(e.Value); !ok {
			return false
		}
	}
	for _, q := range f.Pages {
		if _, _, ok := bifLevel(q.Description()); ok {
			return true
		}
	}
	return false
}

// iScan is what the mapping reads of the iScan element: its attributes,
// in order, and the names of its child elements (not carried).
type iScan struct {
	attrs    []pyramid.KeyValue
	children []string
}

// attr returns the value of the attribute named key.
func (s iScan) attr(key string) (string, bool) {
	for _, kv := range s.attrs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// xmpDecoder returns a decoder of an XMP packet: the field's bytes up to
// a NUL, the declared encoding taken as is (the text is cleaned after).
func xmpDecoder(packet []byte) *boundedXML {
	if i := bytes.IndexByte(packet, 0); i >= 0 {
		packet = packet[:i]
	}
	d := xml.NewDecoder(bytes.NewReader(packet))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	return &boundedXML{d: d}
}

// Bounds of the XMP packets read: Ventana's are a few elements deep, and
// a few thousand tokens (an EncodeInfo's tile joints).
const (
	maxXMPTokens = 1 << 20
	maxXMPDepth  = 32
)

// errXMPBounds is a packet past maxXMPTokens or maxXMPDepth, read no
// further; the errors of boundedXML wrap it, naming the bound passed.
var errXMPBounds = errors.New("XML past its bounds")

// boundedXML reads the tokens of an XMP packet within maxXMPTokens and
// maxXMPDepth, so that a hostile packet costs no more than a scanner's.
type boundedXML struct {
	d             *xml.Decoder
	tokens, depth int
}

// Token returns the next token, or errXMPBounds past the bounds.
func (b *boundedXML) Token() (xml.Token, error) {
	tok, err := b.d.Token()
	if err != nil {
		return tok, err // the end of the packet is no token
	}
	if b.tokens++; b.tokens > maxXMPTokens {
		return nil, fmt.Errorf("%w: more than %d tokens", errXMPBounds, maxXMPTokens)
	}
	switch tok.(type) {
	case xml.StartElement:
		if b.depth++; b.depth > maxXMPDepth {
			return nil, fmt.Errorf("%w: elements nested more than %d deep", errXMPBounds, maxXMPDepth)
		}
	case xml.EndElement:
		b.depth--
	}
	return tok, err
}

// Skip reads up to the end of the element whose start was read last.
func (b *boundedXML) Skip() error {
	for end := b.depth - 1; b.depth > end; {
		if _, err := b.Token(); err != nil {
			return err
		}
	}
	return nil
}

// parseIScan reads the iScan element of an XMLPacket, where OpenSlide
// looks for it: the root, or a child of a Metadata root. Its attributes
// with a value are kept (OpenSlide makes each a "ventana." property).
func parseIScan(packet []byte) (iScan, bool) {
	d := xmpDecoder(packet)
	depth := 0 // 1 or 2: the elements below the root's children are skipped
	for {
		tok, err := d.Token()
		if err != nil {
			return iScan{}, false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case t.Name.Local == "iScan":
				var out iScan
				for _, a := range t.Attr {
					if v := pyramid.XMLText(strings.TrimSpace(a.Value)); v != "" {
						out.attrs = append(out.attrs, pyramid.KeyValue{Key: pyramid.XMLText(a.Name.Local), Value: v})
					}
				}
				// A packet cut short within iScan keeps the attributes.
				_ = out.readChildren(d)
				return out, true
			case depth == 1 && t.Name.Local != "Metadata":
				return iScan{}, false
			case depth == 2:
				if err := d.Skip(); err != nil {
					return iScan{}, false
				}
				depth--
			}
		case xml.EndElement:
			depth--
		}
	}
}

// readChildren notes the names of the iScan element's child elements
// (the areas of interest of some scanners), up to its end.
func (s *iScan) readChildren(d *boundedXML) error {
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(s.children) < maxNamedChildren {
				s.children = append(s.children, pyramid.XMLText(t.Name.Local))
			} else if len(s.children) == maxNamedChildren {
				s.children = append(s.children, "...")
			}
			if err := d.Skip(); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

// maxNamedChildren bounds the child elements of iScan a note names.
const maxNamedChildren = 8

// bifOverlaps reads level 0's EncodeInfo (its XMLPacket): how many of
// the joints between its tiles (TileJointInfo elements joined, FlagJoined
// "1") overlap, and by how many pixels at most. OpenSlide and
// Bio-Formats place the tiles by these overlaps; tifffile reads the page
// as stored.
func bifOverlaps(packet []byte) (joints int, maxX, maxY float64) {
	d := xmpDecoder(packet)
	for {
		tok, err := d.Token()
		if err != nil {
			return joints, maxX, maxY
		}
		t, ok := tok.(xml.StartElement)
		if !ok || t.Name.Local != "TileJointInfo" {
			continue
		}
		var joined bool
		var x, y float64
		for _, a := range t.Attr {
			v, _ := strconv.ParseFloat(strings.TrimSpace(a.Value), 64)
			switch a.Name.Local {
			case "FlagJoined":
				joined = strings.TrimSpace(a.Value) == "1"
			case "OverlapX":
				x = math.Abs(v)
			case "OverlapY":
				y = math.Abs(v)
			}
		}
		if joined && (x > 0 || y > 0) {
			joints++
			maxX, maxY = max(maxX, x), max(maxY, y)
		}
	}
}

// bifLevel reads a level's description, "level=N mag=M quality=Q": fields
// "key=value" separated by spaces, as OpenSlide's parse_level_info and
// Bio-Formats split it. ok is false without a "level" field of an
// integer; mag is the "mag" field ("" without).
func bifLevel(d string) (level int, mag string, ok bool) {
	for token := range strings.SplitSeq(d, " ") {
		key, value, found := strings.Cut(token, "=")
		if !found {
			continue
		}
		switch key {
		case "level":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 && !ok {
				level, ok = n, true
			}
		case "mag":
			if mag == "" {
				mag = value
			}
		}
	}
	return level, mag, ok
}

// bif maps a Roche/Ventana BIF file:
//   - the slide is the page described "level=0" (the lowest level number),
//     its other "level=N" pages its reduced levels in the order of their
//     numbers (which OpenSlide requires to be 0, 1, 2... in file order, the
//     "mag" decreasing): the writer computes its levels again, or copies
//     these when they make an OME pyramid. A page that repeats a level's
//     number is not read (another focal plane: neither OpenSlide nor
//     Bio-Formats reads several). The slide is unnamed, as Bio-Formats
//     leaves its first series: the ometiff command names it after the
//     file. ScanRes, an attribute of the first page's iScan element, is
//     its pixel size in µm (Bio-Formats' PhysicalSizeX and Y in
//     micrometres, OpenSlide's mpp-x and mpp-y); without it, the page's
//     resolution fields give it, as Bio-Formats' TIFF reader under its
//     Ventana reader has them. Level 0's "mag" is the
//     nominal magnification of its objective, as Bio-Formats reads the
//     first "mag" field; failing that, iScan's Magnification, OpenSlide's
//     objective power. The iScan attributes (but a Magnification so
//     carried) and the page's text fields (Software...) become map
//     annotations;
//   - the page described "Label..." is an image named "macro": it is the
//     photograph of the whole slide, label included (Bio-Formats names it
//     "overview image", OpenSlide's associated image "macro"), which the
//     SVS mapping names "macro" too; "Thumbnail" is an image named
//     "thumbnail" (OpenSlide's associated image, tifffile's Thumbnail): a
//     small picture of the scanned area, not one of the levels;
//     "Probability..." is an image named "probability", after its
//     description (tifffile calls it a Thumbnail too, Bio-Formats names
//     the page in its place "mask image"). Their pixel sizes are what
//     their own resolution fields say, not ScanRes: Bio-Formats gives every
//     series ScanRes, but these pictures were not taken at the slide's
//     resolution;
//   - any other page (a second label, a description naming none of these)
//     is an image of its own, named after its index, as tifffile makes it a
//     series of its own ("Unknown").
//
// Pages never become planes of one image: each is described as something
// else. Level 0 is read as stored, tile after tile, as tifffile reads it:
// OpenSlide and Bio-Formats move its tiles by the overlaps level 0's
// EncodeInfo gives the joints between them (and Bio-Formats crops the
// image by them), so when those are not zero the slide's image says so in
// a note.
func (m *mapper) bif() error {
	pages := m.file.TIFF.Pages
	kinds := make([]string, len(pages))
	type level struct{ page, n int }
	var levels []level
	found := map[string]bool{}
	for i, p := range pages {
		d := p.Description()
		var kind string
		if n, _, ok := bifLevel(d); ok {
			levels = append(levels, level{i, n})
			kinds[i] = "level"
			continue
		}
		switch {
		case strings.HasPrefix(d, bifLabelPrefix):
			kind = "macro"
		case d == bifThumbnail:
			kind = "thumbnail"
		case strings.HasPrefix(d, bifProbabilityPrefix):
			kind = "probability"
		}
		if kind == "" || found[kind] {
			kind = fmt.Sprintf("page %d", i)
		}
		kinds[i], found[kind] = kind, true
	}
	slices.SortStableFunc(levels, func(a, b level) int { return cmp.Compare(a.n, b.n) })
	var reduced []*tiff.Page
	for k, lv := range levels {
		if k > 0 && lv.n == levels[k-1].n {
			err := fmt.Errorf("%w: page %d of the BIF file repeats level=%d of page %d (focal planes of a BIF are not read)",
				ErrUnsupported, lv.page, lv.n, levels[k-1].page)
			if err := m.skip(err); err != nil {
				return err
			}
			continue
		}
		if k > 0 {
			reduced = append(reduced, pages[lv.page])
		}
	}
	var xmp iScan
	if e, ok := pages[0].Field(tagXMP); ok {
		xmp, _ = parseIScan(e.Value)
	}
	if len(levels) > 0 {
		if err := m.bifSlide(pages[levels[0].page], levels[0].page, reduced, xmp); err != nil {
			return err
		}
	}
	for i, p := range pages {
		if kinds[i] == "level" {
			continue
		}
		l, err := m.layout(p)
		if err != nil {
			if err := m.skipImage(fmt.Errorf("the %s of the BIF file (page %d): %w", kinds[i], i, err)); err != nil {
				return err
			}
			continue
		}
		im := genericImage([]*tiff.Page{p}, l, nil)
		im.Spec.Name = kinds[i]
		m.add(im)
	}
	return nil
}

// bifSlide adds the slide's image: page p (the index i), its reduced
// levels, the metadata of the iScan element.
func (m *mapper) bifSlide(p *tiff.Page, i int, reduced []*tiff.Page, xmp iScan) error {
	l, err := m.layout(p)
	if err != nil {
		return m.skipImage(fmt.Errorf("the slide of the BIF file (page %d, level 0): %w", i, err))
	}
	im := genericImage([]*tiff.Page{p}, l, map[*tiff.Page][]*tiff.Page{p: reduced})
	s := &im.Spec
	s.Name = ""
	if v, ok := xmp.attr("ScanRes"); ok {
		if mpp, ok := positiveDecimal(v); ok {
			s.PhysicalSizeX, s.PhysicalSizeY = mpp, mpp
			s.PhysicalSizeXUnit, s.PhysicalSizeYUnit = "µm", "µm"
		}
	}
	s.Annotations = xmp.attrs
	_, mag, _ := bifLevel(p.Description())
	fromISCan := false
	if v, ok := positiveDecimal(mag); ok {
		s.Instrument = objective(v)
	} else if text, ok := xmp.attr("Magnification"); ok {
		if v, ok := positiveDecimal(text); ok {
			s.Instrument = objective(v)
			fromISCan = true
		}
	}
	if fromISCan {
		s.Annotations = slices.DeleteFunc(slices.Clone(s.Annotations), func(kv pyramid.KeyValue) bool { return kv.Key == "Magnification" })
	}
	if err := m.boundAnnotations(im, "the iScan element"); err != nil {
		return err
	}
	textTags(im)
	if len(xmp.children) > 0 {
		im.Notes = append(im.Notes, fmt.Sprintf("the iScan element's child elements (%s) are not carried: only its attributes are, as a map annotation",
			strings.Join(xmp.children, ", ")))
	}
	if e, ok := p.Field(tagXMP); ok {
		if joints, x, y := bifOverlaps(e.Value); joints > 0 {
			what := fmt.Sprintf("%d joints", joints)
			if joints == 1 {
				what = "1 joint"
			}
			im.Notes = append(im.Notes, fmt.Sprintf("level 0's tiles are read as stored, not stitched, as tifffile reads them: its EncodeInfo gives %s "+
				"between them overlapping by up to %g x %g pixels, by which OpenSlide and Bio-Formats move the tiles (and Bio-Formats crops the image)",
				what, x, y))
		}
	}
	m.add(im)
	return nil
}
