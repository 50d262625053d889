package source

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// Leica's namespaces of the XML an SCN file's first page describes itself
// with: the SCN400's first software, and its later versions' (which store
// the barcode as an element). Bio-Formats and OpenSlide read both.
const (
	scnNamespace2010a = "http://www.leica-microsystems.com/scn/2010/03/10"
	scnNamespace2010b = "http://www.leica-microsystems.com/scn/2010/10/01"
)

// Limits of the SCN XML parser: the description is the file's, so its
// cost is bounded by the file's size, and these bound the work besides.
const (
	// scnMaxTokens bounds the XML tokens read.
	scnMaxTokens = 1 << 22
	// scnMaxDepth bounds the nesting of elements: Leica's is 6 deep.
	scnMaxDepth = 32
	// scnMaxFields bounds the annotations of one image taken from the
	// XML, and those of the collection (which every image takes); the
	// rest are reported (ErrMetadata), not kept.
	scnMaxFields = 1024
)

// isSCN reports whether the first page's description is Leica SCN XML:
// XML naming one of Leica's namespaces, as OpenSlide tests it before
// parsing it (tifffile looks for the scn element's end tag).
func isSCN(d string) bool {
	return strings.HasPrefix(strings.TrimSpace(d), "<") && (strings.Contains(d, scnNamespace2010a) || strings.Contains(d, scnNamespace2010b))
}

// scnDoc is what the mapping takes of an SCN's XML: its collection's
// fields and its images.
type scnDoc struct {
	collectionName string
	// fields are the collection's scalar fields, its attributes and the
	// text of its elements other than images, keyed by their path from
	// the collection ("collection.name", "collection.barcode").
	fields []pyramid.KeyValue
	images []*scnImage
	// lost counts the collection's fields past scnMaxFields.
	lost int
	// sizeX and sizeY are the collection's (the slide's) size, in nm; 0
	// when not said.
	sizeX, sizeY int64
}

// scnImage is one image element: a scan of a region of the slide, or the
// macro image of the whole slide.
type scnImage struct {
	name string
	// fields are the image's scalar fields (attributes and text but for
	// its pixels element's), keyed by their path from the image
	// ("uuid", "creationDate", "device.model", "view.sizeX",
	// "scanSettings.objectiveSettings.objective").
	fields []pyramid.KeyValue
	// lost counts the fields past scnMaxFields.
	lost   int
	pixels int // pixels elements
	dims   []scnDimension
	// view is the region of the slide the image shows, in nm.
	view     scnView
	viewSeen bool
}

// scnView is an image's view element: its size and offset on the slide,
// in nm, and the spacing of its focal planes.
type scnView struct{ sizeX, sizeY, offsetX, offsetY, spacingZ int64 }

// scnDimension is a dimension element: the page (ifd) holding one
// resolution (r, 0 the full one) of one channel (c) and focal plane (z).
type scnDimension struct {
	sizeX, sizeY int64
	r, c, z, ifd int
}

// field returns the value of the image's field key.
func (im *scnImage) field(key string) (string, bool) {
	for _, f := range im.fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// parseSCN reads an SCN's XML with encoding/xml, bounded (scnMaxTokens,
// scnMaxDepth, and dimensions naming pages of the file, each once): its
// root must be Leica's scn element, holding one collection of images. A
// document that does not parse, or is not so, is ErrMetadata.
func parseSCN(d string, pages int) (*scnDoc, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: the Leica SCN XML of the first page's ImageDescription: %s", ErrMetadata, fmt.Sprintf(format, args...))
	}
	dec := xml.NewDecoder(strings.NewReader(d))
	doc := &scnDoc{}
	type frame struct {
		name     string
		text     strings.Builder
		children bool
	}
	var stack []*frame
	var image *scnImage // the image element open, if any
	imageDepth, collections, rooted := 0, 0, false
	usedIFD := map[int]bool{}
	// path returns the path of the open element (without the root), from
	// the image when one is open.
	path := func() string {
		from := 1
		if image != nil {
			from = imageDepth + 1
		}
		names := make([]string, 0, len(stack))
		for _, f := range stack[from:] {
			names = append(names, f.name)
		}
		return strings.Join(names, ".")
	}
	add := func(key, value string) {
		kv := pyramid.KeyValue{Key: pyramid.XMLText(key), Value: pyramid.XMLText(strings.TrimSpace(value))}
		if image == nil {
			// Every image takes the collection's fields: bounded as an
			// image's are, they cost no more than its own.
			if len(doc.fields) >= scnMaxFields {
				doc.lost++
				return
			}
			doc.fields = append(doc.fields, kv)
			return
		}
		if len(image.fields) >= scnMaxFields {
			image.lost++
			return
		}
		image.fields = append(image.fields, kv)
	}
	for tokens := 0; ; tokens++ {
		if tokens >= scnMaxTokens {
			return nil, bad("more than %d XML tokens", scnMaxTokens)
		}
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, bad("%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				if t.Name.Local != "scn" || t.Name.Space != scnNamespace2010a && t.Name.Space != scnNamespace2010b {
					return nil, bad("the root element is {%s}%s, not Leica's scn", t.Name.Space, t.Name.Local)
				}
				if rooted {
					return nil, bad("a second root element")
				}
				rooted = true
			} else {
				stack[len(stack)-1].children = true
			}
			if len(stack) >= scnMaxDepth {
				return nil, bad("elements nested more than %d deep", scnMaxDepth)
			}
			stack = append(stack, &frame{name: t.Name.Local})
			inPixels := image != nil && len(stack) > imageDepth+1 && stack[imageDepth+1].name == "pixels"
			switch {
			case len(stack) == 2 && t.Name.Local == "collection":
				if collections++; collections > 1 {
					return nil, bad("more than one collection")
				}
			case len(stack) == 3 && stack[1].name == "collection" && t.Name.Local == "image":
				image, imageDepth = &scnImage{}, 2
				doc.images = append(doc.images, image)
			case image != nil && len(stack) == imageDepth+2 && t.Name.Local == "pixels":
				image.pixels++
				continue // its sizes are those of its first dimension
			case inPixels && len(stack) == imageDepth+3 && t.Name.Local == "dimension":
				dim, err := scnDimensionOf(t.Attr, pages)
				if err != nil {
					return nil, bad("image %d: %v", len(doc.images)-1, err)
				}
				if usedIFD[dim.ifd] {
					return nil, bad("image %d: page %d is named by two dimension elements", len(doc.images)-1, dim.ifd)
				}
				usedIFD[dim.ifd] = true
				image.dims = append(image.dims, dim)
				continue
			case image != nil && len(stack) == imageDepth+2 && t.Name.Local == "view":
				if image.viewSeen {
					return nil, bad("image %d has two view elements", len(doc.images)-1)
				}
				v, err := scnViewOf(t.Attr)
				if err != nil {
					return nil, bad("image %d: %v", len(doc.images)-1, err)
				}
				image.view, image.viewSeen = v, true
			}
			if inPixels {
				continue
			}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
					continue
				}
				key := path()
				if len(stack) == imageDepth+1 && image != nil {
					if a.Name.Local == "name" {
						image.name = pyramid.XMLText(strings.TrimSpace(a.Value))
						continue
					}
					key = a.Name.Local
				} else if key == "" { // the root's
					key = a.Name.Local
				} else {
					key += "." + a.Name.Local
				}
				if len(stack) == 2 && t.Name.Local == "collection" {
					if err := doc.collectionAttr(a); err != nil {
						return nil, bad("%v", err)
					}
				}
				add(key, a.Value)
			}
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		case xml.EndElement:
			f := stack[len(stack)-1]
			inPixels := image != nil && len(stack) > imageDepth+1 && stack[imageDepth+1].name == "pixels"
			if text := strings.TrimSpace(f.text.String()); !f.children && text != "" && !inPixels && len(stack) > 1 {
				key := path()
				if image == nil && key == "collection.barcode" {
					text = scnBarcode(text)
				}
				add(key, text)
			}
			stack = stack[:len(stack)-1]
			if image != nil && len(stack) == imageDepth {
				image = nil
			}
		}
	}
	if collections == 0 {
		return nil, bad("no collection element")
	}
	if len(doc.images) == 0 {
		return nil, bad("no image element")
	}
	return doc, nil
}

// collectionAttr reads the collection's name and size.
func (doc *scnDoc) collectionAttr(a xml.Attr) error {
	var err error
	switch a.Name.Local {
	case "name":
		doc.collectionName = pyramid.XMLText(strings.TrimSpace(a.Value))
	case "sizeX":
		doc.sizeX, err = scnInt(a)
	case "sizeY":
		doc.sizeY, err = scnInt(a)
	}
	return err
}

// scnBarcode decodes the barcode element of Leica's later namespace,
// Base64-encoded as OpenSlide reads it; text that is not Base64 of UTF-8
// is kept as written.
func scnBarcode(s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || !utf8.Valid(b) || strings.TrimSpace(string(b)) == "" {
		return s
	}
	return strings.TrimSpace(string(b))
}

// scnInt reads an integer attribute, as Bio-Formats' Long.parseLong does.
func scnInt(a xml.Attr) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(a.Value), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not an integer", a.Name.Local, a.Value)
	}
	return v, nil
}

// scnDimensionOf reads a dimension element: ifd, sizeX and sizeY are
// required (as tifffile requires them), r, c and z are 0 when absent (as
// Bio-Formats and tifffile take them). The page must be one of the
// file's pages; r, c and z are below their count, as each names a page of
// its own.
func scnDimensionOf(attrs []xml.Attr, pages int) (scnDimension, error) {
	d := scnDimension{ifd: -1}
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		var target *int
		switch a.Name.Local {
		case "sizeX", "sizeY":
			v, err := scnInt(a)
			if err != nil {
				return d, err
			}
			if v < 1 || v > 1<<32 {
				return d, fmt.Errorf("dimension %s=%d", a.Name.Local, v)
			}
			if a.Name.Local == "sizeX" {
				d.sizeX = v
			} else {
				d.sizeY = v
			}
			continue
		case "r":
			target = &d.r
		case "c":
			target = &d.c
		case "z":
			target = &d.z
		case "ifd":
			target = &d.ifd
		default:
			continue
		}
		v, err := scnInt(a)
		if err != nil {
			return d, err
		}
		if v < 0 || v >= int64(pages) {
			return d, fmt.Errorf("dimension %s=%d, of a file of %d pages", a.Name.Local, v, pages)
		}
		*target = int(v)
	}
	if d.ifd < 0 || d.sizeX == 0 || d.sizeY == 0 {
		return d, errors.New("a dimension element without its ifd, sizeX or sizeY")
	}
	return d, nil
}

// scnViewOf reads a view element's integers (nm), 0 when absent.
func scnViewOf(attrs []xml.Attr) (scnView, error) {
	var v scnView
	for _, a := range attrs {
		var target *int64
		switch a.Name.Local {
		case "sizeX":
			target = &v.sizeX
		case "sizeY":
			target = &v.sizeY
		case "offsetX":
			target = &v.offsetX
		case "offsetY":
			target = &v.offsetY
		case "spacingZ":
			target = &v.spacingZ
		default:
			continue
		}
		n, err := scnInt(a)
		if err != nil {
			return v, fmt.Errorf("view %w", err)
		}
		*target = n
	}
	return v, nil
}

// scnPlan is an image of the XML checked against the pages: the page of
// each channel and focal plane at each resolution.
type scnPlan struct {
	im           *scnImage
	sizeC, sizeZ int
	// planes[c*sizeZ+z] is the page of channel c, plane z at resolution
	// 0; levels[{r, c*sizeZ+z}] its page at resolution r > 0, where the
	// XML names one (kept sparse: the XML may name few of many).
	planes []*tiff.Page
	levels map[[2]int]*tiff.Page
}

// planSCN checks each image of the XML against the file's pages: one
// pixels element; a page for every channel and focal plane at resolution
// 0 (sizeC and sizeZ the largest c and z plus one, as Bio-Formats counts
// them), none named twice; each page of the size its dimension says (as
// Bio-Formats requires). A failure is ErrMetadata.
func planSCN(doc *scnDoc, pages []*tiff.Page) ([]scnPlan, error) {
	var plans []scnPlan
	for i, im := range doc.images {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: the Leica SCN XML of the first page's ImageDescription: image %d (%q): %s",
				ErrMetadata, i, im.name, fmt.Sprintf(format, args...))
		}
		if im.pixels != 1 || len(im.dims) == 0 {
			return nil, bad("%d pixels elements and %d dimensions (one pixels element with dimensions is read)", im.pixels, len(im.dims))
		}
		p := scnPlan{im: im}
		for _, d := range im.dims {
			p.sizeC, p.sizeZ = max(p.sizeC, d.c+1), max(p.sizeZ, d.z+1)
		}
		// Each (c, z) of resolution 0 is a dimension of its own: their
		// product is at most the image's dimensions (so the planes'
		// slice is no larger than the XML).
		if p.sizeC*p.sizeZ > len(im.dims) {
			return nil, bad("channels up to c=%d and planes up to z=%d, and %d dimensions", p.sizeC-1, p.sizeZ-1, len(im.dims))
		}
		p.planes, p.levels = make([]*tiff.Page, p.sizeC*p.sizeZ), map[[2]int]*tiff.Page{}
		for _, d := range im.dims {
			k := d.c*p.sizeZ + d.z
			if d.r == 0 && p.planes[k] != nil || d.r > 0 && p.levels[[2]int{d.r, k}] != nil {
				return nil, bad("two dimensions of r=%d c=%d z=%d", d.r, d.c, d.z)
			}
			page := pages[d.ifd]
			w, okW := page.Uint(tiff.TagImageWidth)
			h, okH := page.Uint(tiff.TagImageLength)
			if !okW || !okH || int64(w) != d.sizeX || int64(h) != d.sizeY {
				return nil, bad("page %d is %d x %d, and its dimension says %d x %d", d.ifd, w, h, d.sizeX, d.sizeY)
			}
			if d.r == 0 {
				p.planes[k] = page
			} else {
				p.levels[[2]int{d.r, k}] = page
			}
		}
		for k, page := range p.planes {
			if page == nil {
				return nil, bad("no page for channel %d, plane %d at resolution 0", k/p.sizeZ, k%p.sizeZ)
			}
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// scn maps a Leica SCN file, as Bio-Formats' LeicaSCNReader and
// tifffile read it, its XML (the first page's ImageDescription) parsed by
// parseSCN:
//   - each image element is an image, in the order of the XML, named as
//     the XML names it (Bio-Formats appends " (R0)", naming the
//     resolution of its series: here the resolutions are the image's
//     levels, and the name is the file's, as the SVS mapping names the
//     label and macro as the file does). An image without a name whose
//     view covers the whole collection (at offset 0), as OpenSlide
//     recognizes the macro image, is named "macro", as the SVS mapping
//     and OpenSlide name theirs; the others are left unnamed;
//   - its resolution 0 pages are its planes, channel c (of its
//     dimension's c attribute) along C, focal plane z along Z; its pages
//     of resolution r > 0 are the levels of each plane, largest first,
//     up to the first resolution missing (the writer computes its levels
//     again, or copies these when they form an OME pyramid);
//   - its pixel size is its view's size (nm) over its resolution 0's
//     size, in µm, its Z step the view's spacingZ, as Bio-Formats
//     computes them; its planes' positions are the view's offset, in
//     Bio-Formats' "reference frame" (OpenSlide takes them for nm);
//   - creationDate is its acquisition date; the objective (the
//     magnification it was scanned at) is its objective's nominal and
//     calibrated magnification, numericalAperture its lens NA, as
//     Bio-Formats maps them, in one instrument per device model (which
//     images of one model share); illuminationSource "brightfield" makes
//     its channels' illumination transmitted, another "other";
//   - its description is "Collection NAME", as Bio-Formats writes it; the
//     collection's fields (name, uuid, size, the barcode decoded from
//     Base64 as OpenSlide decodes it) and its own (uuid, creationDate,
//     device, view, scan settings but the objective and aperture mapped)
//     are its annotations.
//
// Pages no dimension names are read as a plain TIFF's would be, further
// images noted so. An XML that does not parse or does not fit the pages
// (planSCN) is ErrMetadata; with Options.SkipUnsupported, the file is
// then read as a plain TIFF and the error listed in File.Skipped. An image
// whose pages cannot be read is left out (ErrLeftOut) with
// SkipUnsupported, as the SVS mapping leaves one out.
func (m *mapper) scn(description string) error {
	pages := m.file.TIFF.Pages
	doc, err := parseSCN(description, len(pages))
	var plans []scnPlan
	if err == nil {
		plans, err = planSCN(doc, pages)
	}
	if err != nil {
		if !m.opts.SkipUnsupported {
			return err
		}
		return m.plainTIFF(err)
	}
	m.file.Kind = SCN
	instruments := map[string]*pyramid.Instrument{}
	named := map[*tiff.Page]bool{}
	for _, d := range doc.images {
		for _, dim := range d.dims {
			named[pages[dim.ifd]] = true
		}
	}
	for _, p := range plans {
		im, err := m.scnImage(doc, p, instruments)
		if err != nil {
			return err
		}
		if im != nil {
			m.add(im)
		}
	}
	var rest []*tiff.Page
	var restIndex []int
	for i, p := range pages {
		if !named[p] {
			rest, restIndex = append(rest, p), append(restIndex, i)
		}
	}
	if len(rest) > 0 {
		return m.scnRest(rest, restIndex)
	}
	return nil
}

// scnRest maps the pages no dimension names, at restIndex in the file, as
// a plain TIFF's: their images are noted so, the errors about them say
// which pages they are (numbered among them), and a page marked reduced
// that follows none it could be a level of is noted as not read.
func (m *mapper) scnRest(rest []*tiff.Page, restIndex []int) error {
	which := fmt.Sprint(restIndex[:min(len(restIndex), 8)])
	if len(restIndex) > 8 {
		which = fmt.Sprintf("%s... (%d pages)", strings.TrimSuffix(which, "]"), len(restIndex))
	}
	images, skipped := len(m.file.Images), len(m.file.Skipped)
	if err := m.genericPages(rest); err != nil {
		return fmt.Errorf("the pages of the SCN file its XML does not name (%s), numbered among them: %w", which, err)
	}
	for i, err := range m.file.Skipped[skipped:] {
		m.file.Skipped[skipped+i] = fmt.Errorf("the pages of the SCN file its XML does not name (%s), numbered among them: %w", which, err)
	}
	read := map[*tiff.Page]bool{}
	for _, im := range m.file.Images[images:] {
		im.Notes = append(im.Notes, fmt.Sprintf("pages %s of the SCN file are named by no dimension of its XML: they are read as a plain TIFF's", which))
		for _, pl := range im.Planes {
			read[pl.Page] = true
			for _, l := range pl.Levels {
				read[l] = true
			}
		}
	}
	for i, p := range rest {
		if !read[p] && p.NewSubfileType()&tiff.SubfileReducedImage != 0 {
			m.file.Notes = append(m.file.Notes, fmt.Sprintf("page %d of the SCN file, named by no dimension of its XML and marked reduced, is a level of no page read: it is not read", restIndex[i]))
		}
	}
	return nil
}

// scnImage makes the image of a plan, or nil when its pages cannot be
// read and SkipUnsupported leaves it out.
func (m *mapper) scnImage(doc *scnDoc, p scnPlan, instruments map[string]*pyramid.Instrument) (*Image, error) {
	im := p.im
	l, err := m.layout(p.planes[0])
	for _, page := range p.planes[1:] {
		if err != nil {
			break
		}
		var lp pageLayout
		if lp, err = m.layout(page); err == nil && !sameShape(l, lp) {
			err = fmt.Errorf("%w: its pages are of two layouts (%v; %v)", ErrMetadata, l, lp)
		}
	}
	if err != nil {
		return nil, m.skipImage(fmt.Errorf("the image %q of the SCN file: %w", im.name, err))
	}
	spec := pyramid.ImageSpec{
		Name:  im.name,
		SizeX: l.width, SizeY: l.height, SizeZ: p.sizeZ, SizeC: p.sizeC * l.planesPerPage(), SizeT: 1,
		DimensionOrder: pyramid.XYCZT, PixelType: l.pixelType, SamplesPerPixel: l.specSamples(),
	}
	out := &Image{OMEImage: -1}
	for z := range p.sizeZ {
		for c := range p.sizeC {
			k := c*p.sizeZ + z
			var levels []*tiff.Page
			r := 1
			for ; p.levels[[2]int{r, k}] != nil; r++ {
				levels = append(levels, p.levels[[2]int{r, k}])
			}
			// Resolutions after a missing one are no levels of a pyramid:
			// said, not dropped without a word.
			for q := range p.levels {
				if q[1] == k && q[0] > r {
					out.Notes = append(out.Notes, fmt.Sprintf("its resolutions of channel %d, focal plane %d, past resolution %d are not read: resolution %d is missing",
						c, z, r-1, r))
					break
				}
			}
			out.Planes = append(out.Planes, planesOf(p.planes[k], l, levels)...)
		}
	}
	macro := im.viewSeen && im.view.offsetX == 0 && im.view.offsetY == 0 && im.view.sizeX == doc.sizeX && im.view.sizeY == doc.sizeY && doc.sizeX > 0
	if spec.Name == "" && macro {
		spec.Name = "macro"
	}
	if doc.collectionName != "" {
		spec.Description = "Collection " + doc.collectionName
	}
	scnSizes(&spec, im, p.planes[0])
	skip := map[string]bool{}
	if v, ok := im.field("creationDate"); ok {
		if t, ok := scnTime(v); ok {
			spec.AcquisitionDate = t
		}
	}
	spec.Instrument, spec.ObjectiveSettings = scnObjective(im, instruments, skip)
	if src, ok := im.field("scanSettings.illuminationSettings.illuminationSource"); ok && src != "" {
		kind := pyramid.IlluminationOther
		if src == "brightfield" {
			kind = pyramid.IlluminationTransmitted
		}
		spec.Channels = make([]pyramid.Channel, spec.SizeC)
		for c := range spec.Channels {
			spec.Channels[c].IlluminationType = kind
		}
	}
	if im.viewSeen {
		for z := range spec.SizeZ {
			for c := range spec.SizeC {
				spec.PlaneInfo = append(spec.PlaneInfo, pyramid.Plane{Z: z, C: c,
					PositionX: pyramid.Quantity{Value: float64(im.view.offsetX), Unit: "reference frame"},
					PositionY: pyramid.Quantity{Value: float64(im.view.offsetY), Unit: "reference frame"}})
			}
		}
	}
	spec.Annotations = append(spec.Annotations, doc.fields...)
	for _, f := range im.fields {
		if !skip[f.Key] {
			spec.Annotations = append(spec.Annotations, f)
		}
	}
	out.Spec = spec
	if im.lost > 0 {
		if err := m.skipImageMetadata(out, fmt.Errorf("%w: the image %q of the SCN file has %d more fields than the %d kept as annotations",
			ErrMetadata, im.name, im.lost, scnMaxFields)); err != nil {
			return nil, err
		}
	}
	if doc.lost > 0 && len(m.file.Images) == 0 { // said once, of the first image
		if err := m.skipImageMetadata(out, fmt.Errorf("%w: the collection of the SCN file has %d more fields than the %d kept as annotations",
			ErrMetadata, doc.lost, scnMaxFields)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scnSizes sets the pixel size: the view's size (nm) over the size of
// resolution 0 (its first page's), in µm, as Bio-Formats computes it; and
// the step between focal planes, the view's spacingZ (nm), when positive.
func scnSizes(s *pyramid.ImageSpec, im *scnImage, first *tiff.Page) {
	if !im.viewSeen {
		return
	}
	w, _ := first.Uint(tiff.TagImageWidth)
	h, _ := first.Uint(tiff.TagImageLength)
	if x, y := positive(float64(im.view.sizeX)/1000/float64(w)), positive(float64(im.view.sizeY)/1000/float64(h)); x > 0 && y > 0 {
		s.PhysicalSizeX, s.PhysicalSizeY = x, y
		s.PhysicalSizeXUnit, s.PhysicalSizeYUnit = "µm", "µm"
	}
	if z := positive(float64(im.view.spacingZ) / 1000); z > 0 {
		s.PhysicalSizeZ, s.PhysicalSizeZUnit = z, "µm"
	}
}

// scnTime reads a creationDate, an xsd:dateTime (date, "T", time, then
// a fraction of a second and a zone, both optional); without a zone, its
// clock is the scanner's (pyramid.NoZone).
func scnTime(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		t, err = time.ParseInLocation("2006-01-02T15:04:05.999999999", v, pyramid.NoZone)
	}
	return t, err == nil && t.Year() >= 1 && t.Year() <= 9999 // xsd:dateTime's years, as the writer writes them
}

// scnObjective returns the instrument of the image's device model (one
// per model, shared by the images of that model, as Bio-Formats makes
// them) and the settings naming its objective: the objective field as its
// nominal and calibrated magnification, numericalAperture as its lens NA,
// when they are positive numbers OME's floats hold. The fields so mapped
// are marked in mapped, to be left out of the annotations; nil when
// neither is.
func scnObjective(im *scnImage, instruments map[string]*pyramid.Instrument, mapped map[string]bool) (*pyramid.Instrument, *pyramid.ObjectiveSettings) {
	const magKey, naKey = "scanSettings.objectiveSettings.objective", "scanSettings.illuminationSettings.numericalAperture"
	number := func(key string) float64 {
		v, ok := im.field(key)
		if !ok {
			return 0
		}
		f, _ := positiveDecimal(v)
		return f
	}
	mag, na := number(magKey), number(naKey)
	if mag == 0 && na == 0 {
		return nil, nil
	}
	mapped[magKey], mapped[naKey] = mag > 0, na > 0
	model, _ := im.field("device.model")
	in := instruments[model]
	if in == nil {
		in = &pyramid.Instrument{}
		instruments[model] = in
	}
	o := pyramid.Objective{NominalMagnification: mag, CalibratedMagnification: mag, LensNA: na}
	for i, have := range in.Objectives {
		if have == o {
			return in, &pyramid.ObjectiveSettings{Objective: i}
		}
	}
	in.Objectives = append(in.Objectives, o)
	return in, &pyramid.ObjectiveSettings{Objective: len(in.Objectives) - 1}
}
