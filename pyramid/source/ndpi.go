package source

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// isNDPI reports whether the file is a Hamamatsu NDPI slide: its first
// page has the NDPI format flag (65420) and a Make, as tifffile
// recognizes the format.
func isNDPI(f *tiff.File) bool {
	if f == nil || len(f.Pages) == 0 {
		return false
	}
	_, flag := f.Pages[0].Field(tiff.TagNDPIFormatFlag)
	_, make := f.Pages[0].Field(tiff.TagMake)
	return flag && make
}

// ndpiFloat returns a numeric field of an NDPI page as a number.
func ndpiFloat(p *tiff.Page, tag uint16) (float64, bool) {
	e, ok := p.Field(tag)
	if !ok {
		return 0, false
	}
	v, err := e.Floats()
	if err != nil || len(v) == 0 || math.IsNaN(v[0]) || math.IsInf(v[0], 0) {
		return 0, false
	}
	return v[0], true
}

// ndpi maps a Hamamatsu NDPI file as Bio-Formats' NDPIReader reads it:
//   - the first page whose magnification (NDPISourceLens, 65421) is
//     positive (page 0, as NDP.scan writes them) and the pages of its
//     size are the slide's focal planes, one image along Z in the order
//     of the file; NDP.scan writes each plane's levels after it. The
//     spacing of their offsets (NDPIZOffset, in nm) is the image's
//     PhysicalSizeZ when even;
//   - the smaller pages of its proportions are the scan's reduced levels,
//     left out: the writer computes its levels again;
//   - the page of magnification -1 is the macro image, and that of -2 the
//     map of the scanned area, images of their own so named, as OpenSlide
//     names them;
//   - any other page is an image of its own, named after its index.
//
// NDP.scan's 64-bit offsets, which address a file past 4 GiB, are read
// (tiff.File.NDPI). The slide's pages are each one JPEG strip of the
// whole plane; their restart intervals are read as tiles
// (tiff.Page.NDPITiles), so that a plane is decoded a band of tiles at a
// time. A strip without McuStarts is decoded whole.
//
// The image's pixel size comes from its resolution (in cm), the
// magnification of page 0 is its objective's nominal magnification, and
// the scanner's properties (NDPIProperties' "key=value" lines), the
// slide's reference and the offset of its centre become annotations, with
// the text fields (Make, Model, Software) a plain TIFF's images keep.
func (m *mapper) ndpi() error {
	pages := m.file.TIFF.Pages
	// The slide is the first page of a positive magnification (or none):
	// NDP.scan writes it first, but a file may start with its macro.
	slide := slices.IndexFunc(pages, func(p *tiff.Page) bool {
		mag, ok := ndpiFloat(p, tiff.TagNDPISourceLens)
		return !ok || mag > 0
	})
	var w0, h0 int
	if slide >= 0 {
		var err error
		if w0, h0, err = pageSize(pages[slide]); err != nil {
			return err
		}
	}
	var planes []*tiff.Page
	named := map[string]bool{}
	type other struct {
		page int
		name string
	}
	var others []other
	for i, p := range pages {
		mag, hasMag := ndpiFloat(p, tiff.TagNDPISourceLens)
		w, h, err := pageSize(p)
		scan := !hasMag || mag > 0
		switch {
		case hasMag && mag == -1 && !named["macro"]:
			others, named["macro"] = append(others, other{i, "macro"}), true
		case hasMag && mag == -2 && !named["map"]:
			others, named["map"] = append(others, other{i, "map"}), true
		case i == slide || scan && slide >= 0 && err == nil && w == w0 && h == h0:
			planes = append(planes, p)
		case scan && slide >= 0 && err == nil && w <= w0 && h <= h0 && sameProportions(w, h, w0, h0):
			// A reduced level: computed again.
		default:
			others = append(others, other{i, fmt.Sprintf("page %d", i)})
		}
	}
	if err := m.ndpiSlide(planes, slide); err != nil {
		return err
	}
	for _, o := range others {
		p, note, err := ndpiTiles(pages[o.page])
		if err != nil {
			return err
		}
		l, err := layoutOf(p)
		if err != nil {
			if err := m.skipImage(fmt.Errorf("the %s of the NDPI file (page %d): %w", o.name, o.page, err)); err != nil {
				return err
			}
			continue
		}
		im := genericImage([]*tiff.Page{p}, l, nil)
		im.Spec.Name = o.name
		if note != "" {
			im.Notes = []string{note}
		}
		m.add(im)
	}
	return nil
}

// ndpiSlide adds the image of the slide's focal planes, the first page
// slide: or, when they cannot be read, says so (m.skipImage) and leaves
// the file's other pages to be read.
func (m *mapper) ndpiSlide(planes []*tiff.Page, slide int) error {
	if len(planes) == 0 {
		return nil
	}
	var notes []string
	for i, p := range planes {
		var note string
		var err error
		if planes[i], note, err = ndpiTiles(p); err != nil {
			return err
		}
		if note != "" {
			notes = append(notes, fmt.Sprintf("focal plane %d: %s", i, note))
		}
	}
	l, err := layoutOf(planes[0])
	if err != nil {
		return m.skipImage(fmt.Errorf("the slide of the NDPI file (page %d): %w", slide, err))
	}
	for i, p := range planes[1:] {
		if pl, err := layoutOf(p); err != nil || !sameShape(pl, l) {
			return m.skipImage(fmt.Errorf("%w: focal plane %d of the NDPI file (the page at %d) is not stored as its first is", ErrUnsupported, i+1, p.Offset))
		}
	}
	im := genericImage(planes, l, nil)
	im.Spec.SizeZ, im.Spec.SizeT = len(planes), 1
	if why := m.file.TIFF.NDPIFallback; why != nil {
		notes = append(notes, fmt.Sprintf("its directories are read as a classic TIFF's, as Bio-Formats reads an NDPI below 4 GiB: "+
			"its first is in NDP.scan's 64-bit layout, but the chain is not throughout (%v)", why))
	}
	im.Notes = notes
	describeNDPI(im, planes)
	m.add(im)
	return nil
}

// ndpiTiles returns the page read as tiles (tiff.Page.NDPITiles) when it
// has McuStarts, else the page itself. McuStarts that cannot be read as
// tiles leave the strip to be decoded whole, which the note says.
func ndpiTiles(p *tiff.Page) (q *tiff.Page, note string, err error) {
	if _, ok := p.Field(tiff.TagNDPIMcuStarts); !ok {
		return p, "", nil
	}
	q, err = p.NDPITiles()
	switch {
	case err == nil:
		return q, "", nil
	case errors.Is(err, tiff.ErrMalformed) || errors.Is(err, tiff.ErrUnsupported):
		return p, fmt.Sprintf("its restart intervals are not read as tiles (%v): its JPEG strip is decoded whole", err), nil
	}
	return nil, "", err
}

// describeNDPI sets what the NDPI fields of the slide's first plane say:
// its objective's nominal magnification (NDPISourceLens), its
// annotations, and the spacing of the focal planes.
func describeNDPI(im *Image, planes []*tiff.Page) {
	s := &im.Spec
	p := planes[0]
	if mag, ok := ndpiFloat(p, tiff.TagNDPISourceLens); ok && positive(mag) > 0 {
		s.Instrument = objective(mag)
	}
	textTags(im)
	if v, ok := p.Text(tiff.TagNDPIReference); ok && strings.TrimSpace(v) != "" {
		s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: "Reference", Value: pyramid.XMLText(strings.TrimSpace(v))})
	}
	for _, f := range []struct {
		tag uint16
		key string
	}{{tiff.TagNDPIXOffset, "XOffsetFromSlideCentre"}, {tiff.TagNDPIYOffset, "YOffsetFromSlideCentre"}} {
		if v, ok := ndpiFloat(p, f.tag); ok {
			s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: f.key, Value: strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	if v, ok := p.Text(tiff.TagNDPIProperties); ok {
		for line := range strings.Lines(v) {
			key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
			if key = pyramid.XMLText(strings.TrimSpace(key)); ok && key != "" {
				s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: key, Value: pyramid.XMLText(strings.TrimSpace(value))})
			}
		}
	}
	if len(planes) < 2 {
		return
	}
	var offsets []float64
	for _, q := range planes {
		z, ok := ndpiFloat(q, tiff.TagNDPIZOffset)
		if !ok {
			return
		}
		offsets = append(offsets, z)
	}
	step := offsets[1] - offsets[0]
	for i := 2; i < len(offsets); i++ {
		if offsets[i]-offsets[i-1] != step {
			step = 0
		}
	}
	if step = positive(step / 1000); step > 0 {
		s.PhysicalSizeZ, s.PhysicalSizeZUnit = step, "µm"
		return
	}
	im.Notes = append(im.Notes, fmt.Sprintf("its focal planes lie at %v nm from the focus, not evenly spaced: no PhysicalSizeZ", offsets))
}
