package pyramid

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"image/color"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// OME-XML names (OME Data Model and File Formats, schema 2016-06).
const (
	omeNamespace      = "http://www.openmicroscopy.org/Schemas/OME/2016-06"
	omeSchemaLocation = omeNamespace + " " + omeNamespace + "/ome.xsd"
	mapAnnotationNS   = "openmicroscopy.org/omero/client/mapAnnotation"
	software          = "ometiff"
)

// lengthUnits are the OME UnitsLength symbols with their size in
// centimeters, the TIFF resolution unit; 0 marks units with no fixed size.
var lengthUnits = map[string]float64{
	"Ym": 1e26, "Zm": 1e23, "Em": 1e20, "Pm": 1e17, "Tm": 1e14, "Gm": 1e11, "Mm": 1e8,
	"km": 1e5, "hm": 1e4, "dam": 1e3, "m": 100, "dm": 10, "cm": 1, "mm": 0.1,
	"µm": 1e-4, "nm": 1e-7, "pm": 1e-10, "fm": 1e-13, "am": 1e-16, "zm": 1e-19, "ym": 1e-22,
	"Å": 1e-8, "thou": 2.54e-3, "li": 2.54 / 12, "in": 2.54, "ft": 30.48, "yd": 91.44,
	"mi": 160934.4, "ua": 1.495978707e13, "ly": 9.4607304725808e17, "pc": 3.0856775814913673e18,
	"pt": 2.54 / 72, "pixel": 0, "reference frame": 0,
}

// checkXMLText rejects text that XML 1.0 cannot carry.
func checkXMLText(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: invalid UTF-8 in %q", ErrMetadata, s)
	}
	for _, r := range s {
		if !xmlChar(r) {
			return fmt.Errorf("%w: character %U cannot be stored in XML", ErrMetadata, r)
		}
	}
	return nil
}

// xmlChar reports whether XML 1.0 allows the character r (its Char
// production).
func xmlChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= utf8.MaxRune
}

// XMLText returns s as text the OME-XML can hold, which the writer takes
// in every name, description and annotation of a spec: invalid UTF-8
// becomes U+FFFD, and the characters XML 1.0 does not allow (control
// characters but tab, newline and carriage return) are dropped. It is for
// text of other origins: a file name, a TIFF tag, a PNG's text chunk.
func XMLText(s string) string {
	return strings.Map(func(r rune) rune {
		if xmlChar(r) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// escape returns s escaped for an XML attribute value, as the copier of a
// caller's document escapes its attributes (escapeTo), so that a value
// written again from a file read back is the same text.
func escape(s string) string {
	var b bytes.Buffer
	escapeTo(&b, []byte(s), true)
	return b.String()
}

// omeColor is an OME Color: RGBA packed in a signed 32-bit integer.
func omeColor(c color.Color) int32 {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return int32(uint32(n.R)<<24 | uint32(n.G)<<16 | uint32(n.B)<<8 | uint32(n.A))
}

// normalizeUUID accepts "urn:uuid:..." or a bare UUID and returns the URN.
func normalizeUUID(s string) (string, error) {
	bare := strings.TrimPrefix(strings.ToLower(s), "urn:uuid:")
	if len(bare) != 36 || bare[8] != '-' || bare[13] != '-' || bare[18] != '-' || bare[23] != '-' {
		return "", fmt.Errorf("%w: UUID %q", ErrOption, s)
	}
	for i, r := range bare {
		if i != 8 && i != 13 && i != 18 && i != 23 && !strings.ContainsRune("0123456789abcdef", r) {
			return "", fmt.Errorf("%w: UUID %q", ErrOption, s)
		}
	}
	return "urn:uuid:" + bare, nil
}

// uuidPlaceholder stands for the UUID in OME-XML written before the UUID
// is known; it has the UUID's length.
const uuidPlaceholder = "urn:uuid:00000000-0000-0000-0000-000000000000"

// contentUUID derives a name-based UUID (RFC 9562 version 8, SHA-256) from
// a digest of the file's content and metadata.
func contentUUID(digest []byte) string {
	sum := sha256.Sum256(digest)
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// omeImage is what the OME-XML needs of one image.
type omeImage struct {
	spec     ImageSpec // normalized
	firstIFD int       // main-chain index of its first plane
	// files, for an image of a multi-file dataset, says where its planes
	// are, in plane order; firstIFD is then unused.
	files []tiffData
}

// tiffData puts planes of an image in a file of a dataset: count planes
// from first (in DimensionOrder), at IFD ifd on of the file fileName,
// whose UUID is uuid.
type tiffData struct {
	ifd, first, count int
	fileName, uuid    string
}

// omeXML writes the OME-XML of the whole file: every Image with its
// Pixels, Channels, TiffData and Planes, the instruments and the
// annotations, merged with the documents callers gave (doc, the file's,
// if not nil, and each image's ImageSpec.OME). uuid is written at the
// offsets uuidAt returns.
func omeXML(images []omeImage, doc *OMEDocument, uuid, fileName string) (xml []byte, uuidAt []int, err error) {
	g := &omeBuilder{images: images, uuid: uuid, fileName: fileName, used: map[string]bool{}}
	if err := g.plan(doc); err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	b.Grow(g.sizeHint())
	g.w.b = &b
	g.write()
	return b.Bytes(), g.uuidAt, nil
}

// omeBuilder builds the OME-XML of a file.
type omeBuilder struct {
	w              xmlWriter
	images         []omeImage
	uuid, fileName string
	uuidAt         []int

	docs        []*OMEDocument                    // the callers' documents, each once, the file's first
	drop        map[*OMEDocument]func(int32) bool // what to leave out of each
	used        map[string]bool                   // every ID of the output
	plans       []imagePlan                       // per image
	annotations int                               // the plans with an annotationID
	instruments []*instrumentPlan                 // the typed instruments, in order of first use
}

// imagePlan is what the writer decided for one image.
type imagePlan struct {
	caller       *OMEImage
	id, pixelsID string
	channelIDs   []string
	annotationID string          // of the MapAnnotation of ImageSpec.Annotations; "" for none
	instrument   *instrumentPlan // of ImageSpec.Instrument
	planes       map[int]int32   // the caller's Plane elements by plane index
	planeInfo    map[int]*Plane  // ImageSpec.PlaneInfo by plane index
}

// instrumentPlan is a typed Instrument with the IDs of its parts.
type instrumentPlan struct {
	in                                  *Instrument
	id                                  string
	lightSources, detectors, objectives []string
}

// fresh returns base, or base with ":1", ":2"... appended if a caller's
// document uses it, and books it.
func (g *omeBuilder) fresh(base string) string {
	id := base
	for k := 1; g.used[id]; k++ {
		id = base + ":" + strconv.Itoa(k)
	}
	g.used[id] = true
	return id
}

// sharedDocs finds the documents parsed again: equal to one given before
// but for the root's attributes (two files of one dataset, each with the
// whole document and its own UUID), whose images are other Image elements
// than those taken from it. Their images are the first one's, and its
// objects are shared, not written twice under new IDs. Documents equal but
// of the same Image elements (two acquisitions that tifffile described
// alike) are separate. It maps each document parsed again to the first.
func (g *omeBuilder) sharedDocs() map[*OMEDocument]*OMEDocument {
	var order []*OMEDocument // each once, in order of first use
	nodes := map[*OMEDocument]map[int32]bool{}
	for _, d := range g.docs {
		order, nodes[d] = append(order, d), map[int32]bool{}
	}
	for _, im := range g.images {
		if m := im.spec.OME; m != nil {
			if nodes[m.doc] == nil {
				order, nodes[m.doc] = append(order, m.doc), map[int32]bool{}
			}
			nodes[m.doc][m.node] = true
		}
	}
	alias := map[*OMEDocument]*OMEDocument{}
	var firsts []*OMEDocument
	for _, d := range order {
		shared := false
		for _, e := range firsts {
			if !disjoint(nodes[e], nodes[d]) || !e.sameContent(d) {
				continue
			}
			for n := range nodes[d] {
				nodes[e][n] = true
			}
			alias[d], shared = e, true
			break
		}
		if !shared {
			firsts = append(firsts, d)
		}
	}
	return alias
}

// disjoint reports whether a and b have no key in common.
func disjoint(a, b map[int32]bool) bool {
	for k := range b {
		if a[k] {
			return false
		}
	}
	return true
}

// plan gathers the callers' documents, checks that they go together, and
// decides the IDs the writer adds.
func (g *omeBuilder) plan(doc *OMEDocument) error {
	if doc != nil {
		g.docs = append(g.docs, doc)
		if doc.Images() > 0 && doc.Images() != len(g.images) {
			return &OMEError{Err: ErrOMEConflict, Element: "OME", Detail: fmt.Sprintf("Options.OME has %d Images; the file has %d", doc.Images(), len(g.images))}
		}
	}
	alias := g.sharedDocs()
	written := map[*OMEDocument]map[int32]int{}
	for i := range g.images {
		m := g.images[i].spec.OME
		if m == nil {
			continue
		}
		if d := alias[m.doc]; d != nil {
			view := *m
			view.doc = d
			m, g.images[i].spec.OME = &view, &view
		}
		if written[m.doc] == nil {
			written[m.doc] = map[int32]int{}
			if m.doc != doc {
				g.docs = append(g.docs, m.doc)
			}
		}
		if j, twice := written[m.doc][m.node]; twice {
			return m.doc.invalid(m.node, "", "given to images %d and %d", j, i)
		}
		written[m.doc][m.node] = i
	}
	rights := int32(-1)
	for _, d := range g.docs {
		if r := d.child(0, "Rights"); r >= 0 {
			if rights >= 0 {
				return d.invalid(r, "", "another document given has Rights, and a file has one")
			}
			rights = r
		}
	}
	g.drop = map[*OMEDocument]func(int32) bool{}
	for _, d := range g.docs {
		if err := g.book(d, written[d]); err != nil {
			return err
		}
	}
	for i := range g.images {
		if err := g.planImage(i); err != nil {
			return err
		}
	}
	return nil
}

// book adds the IDs of a caller's document to the output's, leaving out
// those of its images the file does not have, the references to these
// images (ImageRef elements, which the schema lets go) and the
// MapAnnotations only they refer to.
func (g *omeBuilder) book(d *OMEDocument, written map[int32]int) error {
	var unwritten [][2]int32 // subtrees of the images left out
	for _, im := range d.images {
		if _, ok := written[im]; !ok {
			unwritten = append(unwritten, [2]int32{im, d.end(im)})
		}
	}
	inUnwritten := func(n int32) bool {
		i := sort.Search(len(unwritten), func(i int) bool { return unwritten[i][1] > n })
		return i < len(unwritten) && unwritten[i][0] <= n
	}
	var clash []string
	for id, n := range d.ids {
		if inUnwritten(n) {
			continue
		}
		if g.used[id] {
			clash = append(clash, id)
		}
		g.used[id] = true
	}
	if len(clash) > 0 {
		// Documents of different files define the same IDs (Image:0,
		// Channel:0:0...): the later one's get ":1", ":2"... appended, as
		// the writer's own do, which the schema's ID patterns allow.
		slices.Sort(clash)
		r := &idRename{to: map[string]string{}, refs: map[int32]bool{}}
		for _, id := range clash {
			fresh := id
			for k := 1; g.used[fresh] || d.defines(fresh); k++ {
				fresh = fmt.Sprintf("%s:%d", id, k)
			}
			g.used[fresh], r.to[id] = true, fresh
		}
		for _, n := range d.refs {
			r.refs[n] = true
		}
		if g.w.rename == nil {
			g.w.rename = map[*OMEDocument]*idRename{}
		}
		g.w.rename[d] = r
	}
	if len(unwritten) == 0 {
		return nil
	}
	dropped := map[int32]bool{}
	// A MapAnnotation that only the images left out refer to describes
	// them alone: it goes with them, not kept with nothing referring to
	// it (a source's image whose Image element is not carried has its
	// map annotations again as typed ones, which it refers to). Other
	// annotations stay, as no typed field holds them.
	onlyUnwritten := map[int32]bool{}
	for _, r := range d.refs {
		id, ok := d.attr(r, "ID")
		if !ok || !d.isRefElement(r) {
			continue
		}
		target := d.ids[string(id)]
		if inUnwritten(r) {
			if p := d.nodes[target].parent; p >= 0 && d.is(p, "StructuredAnnotations") && d.is(target, "MapAnnotation") {
				if _, seen := onlyUnwritten[target]; !seen {
					onlyUnwritten[target] = true
				}
			}
			continue
		}
		onlyUnwritten[target] = false
		if inUnwritten(target) {
			if !d.is(r, "ImageRef") {
				return d.invalid(r, "ID", "%q is in an Image the file does not have", id)
			}
			dropped[r] = true
		}
	}
	for n, only := range onlyUnwritten {
		if only {
			dropped[n] = true
		}
	}
	g.drop[d] = func(n int32) bool { return dropped[n] }
	return nil
}

// defines reports whether the document defines id.
func (d *OMEDocument) defines(id string) bool {
	_, ok := d.ids[id]
	return ok
}

// planImage decides the IDs of image i and maps its planes.
func (g *omeBuilder) planImage(i int) error {
	s := g.images[i].spec
	p := imagePlan{caller: s.OME}
	var d *OMEDocument
	image, pixels := int32(-1), int32(-1)
	var channels []int32
	if p.caller != nil {
		planes, err := p.caller.check(s)
		if err != nil {
			return err
		}
		p.planes = planes
		d, image, pixels, channels = p.caller.doc, p.caller.node, p.caller.pixels(), p.caller.specChannels(s)
	}
	p.id = g.callerID(d, image, fmt.Sprintf("Image:%d", i))
	p.pixelsID = g.callerID(d, pixels, fmt.Sprintf("Pixels:%d", i))
	sample := 0 // of the caller's Channel written as several channels
	for c := range s.SizeC {
		n, base := int32(-1), fmt.Sprintf("Channel:%d:%d", i, c)
		switch {
		case c >= len(channels):
		case c == 0 || channels[c] != channels[c-1]:
			n, sample = channels[c], 0
		default:
			// The Channel's other samples get IDs of their own, after its:
			// Channel:0:1 gives Channel:0:1:1, Channel:0:1:2...
			sample++
			if id, ok := d.attr(channels[c], "ID"); ok {
				base = fmt.Sprintf("%s:%d", g.w.rename[d].id(d, channels[c], xmlName{local: "ID"}, id), sample)
			}
		}
		p.channelIDs = append(p.channelIDs, g.callerID(d, n, base))
	}
	if len(s.Annotations) > 0 {
		// Counted as the plans are made, not by a walk over those before:
		// one per image made tens of thousands of images quadratic.
		p.annotationID = g.fresh(fmt.Sprintf("Annotation:%d", g.annotations))
		g.annotations++
	}
	if s.Instrument != nil {
		p.instrument = g.instrument(s.Instrument)
	}
	for j := range s.PlaneInfo {
		pl := &s.PlaneInfo[j]
		index, _ := s.PlaneIndex(pl.Z, pl.C, pl.T)
		if p.planeInfo == nil {
			p.planeInfo = map[int]*Plane{}
		}
		p.planeInfo[index] = pl
	}
	g.plans = append(g.plans, p)
	return nil
}

// callerID returns the ID of a caller's element n, or a fresh one made
// from base when there is no element or it has no ID.
func (g *omeBuilder) callerID(d *OMEDocument, n int32, base string) string {
	if n >= 0 {
		if id, ok := d.attr(n, "ID"); ok {
			return string(g.w.rename[d].id(d, n, xmlName{local: "ID"}, id))
		}
	}
	return g.fresh(base)
}

// instrument returns the plan of a typed instrument, making it on first
// use.
func (g *omeBuilder) instrument(in *Instrument) *instrumentPlan {
	for _, p := range g.instruments {
		if p.in == in {
			return p
		}
	}
	k := len(g.instruments)
	p := &instrumentPlan{in: in, id: g.fresh(fmt.Sprintf("Instrument:%d", k))}
	for j := range in.LightSources {
		p.lightSources = append(p.lightSources, g.fresh(fmt.Sprintf("LightSource:%d:%d", k, j)))
	}
	for j := range in.Detectors {
		p.detectors = append(p.detectors, g.fresh(fmt.Sprintf("Detector:%d:%d", k, j)))
	}
	for j := range in.Objectives {
		p.objectives = append(p.objectives, g.fresh(fmt.Sprintf("Objective:%d:%d", k, j)))
	}
	g.instruments = append(g.instruments, p)
	return p
}

// sizeHint estimates the OME-XML's length, so that it is built without
// regrowing: a file of thousands of planes has a Plane element for each.
func (g *omeBuilder) sizeHint() int {
	n := xmlSizeHint(g.images, g.fileName)
	for _, d := range g.docs {
		n += d.size + d.size/8
	}
	return n + 1024*len(g.instruments)
}

// xmlSizeHint estimates the length of the OME-XML the writer makes of the
// specs alone.
func xmlSizeHint(images []omeImage, fileName string) int {
	n := 1024
	for _, im := range images {
		s := im.spec
		n += 1024 + len(fileName) + len(s.Channels)*128 + len(s.Annotations)*128 + s.Planes()*planeElementSize(s)
		for _, td := range im.files {
			n += 192 + len(td.fileName)
		}
	}
	return n
}

// planeElementSize is the longest Plane element of an image:
// <Plane TheZ="z" TheC="c" TheT="t"/> with its largest indices.
func planeElementSize(s ImageSpec) int {
	digits := func(n int) int { return len(strconv.Itoa(max(n-1, 0))) }
	return len(`<Plane TheZ="" TheC="" TheT=""/>`) + digits(s.SizeZ) + digits(s.SizeC) + digits(s.SizeT)
}

// write writes the document: the root, then its children in the schema's
// order, the callers' before the writer's of each kind.
func (g *omeBuilder) write() {
	w := &g.w
	w.openRoot()
	w.b.WriteString(` UUID="`)
	g.uuidAt = append(g.uuidAt, w.b.Len())
	w.b.WriteString(g.uuid)
	w.b.WriteString(`" Creator="` + software + `"`)
	// The callers' roots' declarations, for the prefixes their elements
	// use, and any their text may use.
	for _, d := range g.docs {
		root := d.nodes[0]
		for _, a := range d.attrs[root.a : root.a+root.n] {
			if name := d.names[a.name]; name.space == xmlnsNamespace {
				if _, bound := w.lookup(name.local); !bound {
					w.declare(name.local, string(d.text[a.a:a.a+a.n]))
				}
			}
		}
	}
	w.closeStart(false)
	for _, name := range rootElements {
		switch name {
		case "Image":
			for i := range g.images {
				g.writeImage(i)
			}
		case "StructuredAnnotations":
			g.writeAnnotations()
		default:
			g.copyTopLevel(name)
		}
		if name == "Instrument" {
			for _, p := range g.instruments {
				g.writeInstrument(p)
			}
		}
	}
	w.closeOME("OME")
}

// openRoot writes the XML declaration and the start of the root, OME,
// with its namespaces and schema location, up to its UUID.
func (w *xmlWriter) openRoot() {
	w.b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>`)
	w.openOME("OME")
	w.declare("xsi", xsiNamespace)
	w.attrNS("xsi", "schemaLocation", xsiNamespace, omeSchemaLocation)
}

// binaryOnlyXML is the OME-XML of a TIFF of a dataset whose metadata is in
// a companion file: the root, with the TIFF's own UUID, holds only a
// BinaryOnly element naming the companion and its UUID.
func binaryOnlyXML(uuid, metadataFile, metadataUUID string) []byte {
	var b bytes.Buffer
	w := xmlWriter{b: &b}
	w.openRoot()
	w.attr("UUID", uuid)
	w.attr("Creator", software)
	w.closeStart(false)
	w.openOME("BinaryOnly")
	w.attr("MetadataFile", metadataFile)
	w.attr("UUID", metadataUUID)
	w.closeStart(true)
	w.closeOME("OME")
	return b.Bytes()
}

// copyTopLevel copies the callers' root children named name.
func (g *omeBuilder) copyTopLevel(name string) {
	for _, d := range g.docs {
		for _, c := range d.children(0) {
			if d.is(c, name) {
				g.w.copy(d, c, g.drop[d])
			}
		}
	}
}

// writeAnnotations writes StructuredAnnotations: the callers', then the
// MapAnnotations of the images' Annotations.
func (g *omeBuilder) writeAnnotations() {
	type annotation struct {
		d *OMEDocument
		n int32
	}
	var callers []annotation
	for _, d := range g.docs {
		for _, sa := range d.children(0) {
			if d.is(sa, "StructuredAnnotations") {
				for _, c := range d.children(sa) {
					if drop := g.drop[d]; drop == nil || !drop(c) {
						callers = append(callers, annotation{d, c})
					}
				}
			}
		}
	}
	mine := false
	for _, p := range g.plans {
		mine = mine || p.annotationID != ""
	}
	if len(callers) == 0 && !mine {
		return
	}
	w := &g.w
	w.openOME("StructuredAnnotations")
	w.closeStart(false)
	for _, c := range callers {
		w.copy(c.d, c.n, g.drop[c.d])
	}
	for i, p := range g.plans {
		if p.annotationID == "" {
			continue
		}
		w.openWithID("MapAnnotation", p.annotationID)
		w.attr("Namespace", mapAnnotationNS)
		w.closeStart(false)
		w.b.WriteString("<Value>")
		for _, kv := range g.images[i].spec.Annotations {
			// The value is text, escaped as the copier escapes text.
			fmt.Fprintf(w.b, `<M K="%s">`, escape(kv.Key))
			escapeTo(w.b, []byte(kv.Value), false)
			w.b.WriteString("</M>")
		}
		w.b.WriteString("</Value>")
		w.closeOME("MapAnnotation")
	}
	w.closeOME("StructuredAnnotations")
}

// names is a small set of attribute names.
type names []string

func (n names) has(name string) bool { return slices.Contains(n, name) }

// quantity writes a Quantity as an attribute and its unit attribute, if
// it is given, and adds their names to set (if not nil).
func (w *xmlWriter) quantity(set *names, name string, q Quantity) {
	if q.set() {
		w.attrFloat(name, q.Value)
		w.attr(name+"Unit", omeUnit(q.Unit))
		set.add(name, name+"Unit")
	}
}

// optional writes an attribute if value is not empty, and adds its name to
// set (if not nil).
func (w *xmlWriter) optional(set *names, name, value string) {
	if value != "" {
		w.attr(name, value)
		set.add(name)
	}
}

// number writes a number attribute if it is not 0, and adds its name to
// set (if not nil).
func (w *xmlWriter) number(set *names, name string, v float64) {
	if v != 0 {
		w.attrFloat(name, v)
		set.add(name)
	}
}

// add adds names to the set, if there is one.
func (n *names) add(name ...string) {
	if n != nil {
		*n = append(*n, name...)
	}
}

// openWithID starts an element of the OME namespace with its ID.
func (w *xmlWriter) openWithID(local, id string) {
	w.openOME(local)
	w.attr("ID", id)
}

// children calls write for each child of the caller's element n (which
// may be -1: none) and each element of the writer, in the order order
// gives their names (the caller's with a name not in it are refused by
// ParseOME). mine returns whether the writer has elements of a name,
// which replace the caller's, except for repeatable ones, which follow
// them.
func (g *omeBuilder) children(d *OMEDocument, n int32, order []string, mine func(name string) bool, write func(name string)) {
	var kids []int32
	if n >= 0 {
		kids = d.children(n)
	}
	for _, name := range order {
		if !mine(name) || repeatable[name] {
			for _, c := range kids {
				if d.is(c, name) {
					g.w.copy(d, c, g.drop[d])
				}
			}
		}
		if mine(name) {
			write(name)
		}
	}
}

// writeImage writes image i: the caller's Image merged with the spec.
func (g *omeBuilder) writeImage(i int) {
	w, s, p := &g.w, g.images[i].spec, g.plans[i]
	var d *OMEDocument
	image := int32(-1)
	if p.caller != nil {
		d, image = p.caller.doc, p.caller.node
	}
	w.openWithID("Image", p.id)
	name := s.Name
	if v, ok := d.attrOf(image, "Name"); ok && name == "" {
		name = string(v)
	}
	w.attr("Name", name)
	if image >= 0 {
		w.callerAttrs(d, image, names{"ID", "Name"}.has)
	}
	w.closeStart(false)
	objective := p.instrument != nil && s.ObjectiveSettings != nil
	// The caller's date is written collapsed, as its schema type reads it
	// (libxml2 refuses it otherwise).
	date := ""
	if s.AcquisitionDate.IsZero() && image >= 0 {
		if n := d.child(image, "AcquisitionDate"); n >= 0 {
			date = d.collapsedText(n)
		}
	}
	mine := func(name string) bool {
		switch name {
		case "AcquisitionDate":
			return !s.AcquisitionDate.IsZero() || date != ""
		case "Description":
			return s.Description != ""
		case "InstrumentRef":
			return p.instrument != nil
		case "ObjectiveSettings":
			return objective
		case "Pixels":
			return true
		case "AnnotationRef":
			return p.annotationID != ""
		}
		return false
	}
	g.children(d, image, imageElements, mine, func(name string) {
		switch name {
		case "AcquisitionDate":
			if date == "" {
				date = xsdDate(s.AcquisitionDate)
			}
			w.element("AcquisitionDate", date)
		case "Description":
			w.element("Description", s.Description)
		case "InstrumentRef":
			w.openWithID("InstrumentRef", p.instrument.id)
			w.closeStart(true)
		case "ObjectiveSettings":
			w.openWithID("ObjectiveSettings", p.instrument.objectives[s.ObjectiveSettings.Objective])
			w.number(nil, "RefractiveIndex", s.ObjectiveSettings.RefractiveIndex)
			w.closeStart(true)
		case "Pixels":
			g.writePixels(i)
		case "AnnotationRef":
			w.openWithID("AnnotationRef", p.annotationID)
			w.closeStart(true)
		}
	})
	w.closeOME("Image")
}

// attrOf is attr for an element that may be missing (n < 0, d nil).
func (d *OMEDocument) attrOf(n int32, local string) ([]byte, bool) {
	if n < 0 {
		return nil, false
	}
	return d.attr(n, local)
}

// pixelsOwned are the attributes of Pixels the writer writes itself.
var pixelsOwned = names{"ID", "DimensionOrder", "Type", "SizeX", "SizeY", "SizeZ", "SizeC", "SizeT", "BigEndian", "Interleaved", "SignificantBits"}

// writePixels writes the Pixels of image i: its layout in the file, its
// Channels, TiffData and Planes.
func (g *omeBuilder) writePixels(i int) {
	w, s, p := &g.w, g.images[i].spec, g.plans[i]
	var d *OMEDocument
	pixels := int32(-1)
	if p.caller != nil {
		d, pixels = p.caller.doc, p.caller.pixels()
	}
	w.openWithID("Pixels", p.pixelsID)
	w.attr("DimensionOrder", string(s.DimensionOrder))
	w.attr("Type", s.PixelType.String())
	w.attrInt("SizeX", s.SizeX)
	w.attrInt("SizeY", s.SizeY)
	w.attrInt("SizeZ", s.SizeZ)
	w.attrInt("SizeC", s.OMESizeC())
	w.attrInt("SizeT", s.SizeT)
	w.attr("BigEndian", "false")
	w.attr("Interleaved", strconv.FormatBool(s.SamplesPerPixel > 1))
	if v, ok := d.attrOf(pixels, "SignificantBits"); ok {
		w.attr("SignificantBits", string(v)) // checked against the type
	}
	set := slices.Clone(pixelsOwned)
	for _, axis := range []struct {
		name string
		v    float64
		unit string
	}{{"X", s.PhysicalSizeX, s.PhysicalSizeXUnit}, {"Y", s.PhysicalSizeY, s.PhysicalSizeYUnit}, {"Z", s.PhysicalSizeZ, s.PhysicalSizeZUnit}} {
		if axis.v > 0 {
			w.quantity(&set, "PhysicalSize"+axis.name, Quantity{axis.v, axis.unit})
		}
	}
	if s.TimeIncrement.set() {
		w.quantity(&set, "TimeIncrement", s.TimeIncrement)
	}
	if pixels >= 0 {
		w.callerAttrs(d, pixels, set.has)
	}
	w.closeStart(false)
	var channels []int32
	if p.caller != nil {
		channels = p.caller.specChannels(s)
	}
	for c := range s.SizeC {
		n := int32(-1)
		if c < len(channels) {
			n = channels[c]
		}
		var ch Channel
		if c < len(s.Channels) {
			ch = s.Channels[c]
		}
		g.writeChannel(d, n, p, ch, p.channelIDs[c], s.SamplesPerPixel)
	}
	// The planes are consecutive IFDs in DimensionOrder, so one TiffData
	// maps them all: PlaneCount planes from IFD on, starting at Z, C, T = 0.
	// The UUID names the file holding the planes. Without a file name it is
	// left out (a TiffData without UUID refers to its own file): readers
	// such as Viv's require the FileName of every UUID. In a dataset, each
	// run of planes in one file has its TiffData, starting at its first
	// plane's Z, C and T.
	if files := g.images[i].files; files != nil {
		for _, td := range files {
			fmt.Fprintf(w.b, `<TiffData IFD="%d"`, td.ifd)
			if td.first > 0 {
				z, c, t := s.PlaneCoords(td.first)
				w.b.Write(appendZCT(nil, ` FirstZ="`, `" FirstC="`, `" FirstT="`, z, c, t))
				w.b.WriteByte('"')
			}
			fmt.Fprintf(w.b, ` PlaneCount="%d"><UUID FileName="%s">%s</UUID></TiffData>`, td.count, escape(td.fileName), td.uuid)
		}
	} else if g.fileName != "" {
		fmt.Fprintf(w.b, `<TiffData IFD="%d" PlaneCount="%d">`, g.images[i].firstIFD, s.Planes())
		fmt.Fprintf(w.b, `<UUID FileName="%s">`, escape(g.fileName))
		g.uuidAt = append(g.uuidAt, w.b.Len())
		w.b.WriteString(g.uuid)
		w.b.WriteString("</UUID></TiffData>")
	} else {
		fmt.Fprintf(w.b, `<TiffData IFD="%d" PlaneCount="%d"/>`, g.images[i].firstIFD, s.Planes())
	}
	g.writePlanes(s, p, d)
	w.closeOME("Pixels")
}

// writeChannel writes a Channel: the caller's element n (if n >= 0)
// merged with the spec's ch.
func (g *omeBuilder) writeChannel(d *OMEDocument, n int32, p imagePlan, ch Channel, id string, samples int) {
	w := &g.w
	w.openWithID("Channel", id)
	w.attrInt("SamplesPerPixel", samples)
	set := names{"ID", "SamplesPerPixel"}
	w.optional(&set, "Name", ch.Name)
	if ch.Color != nil {
		w.attrInt("Color", int(omeColor(ch.Color)))
		set = append(set, "Color")
	}
	w.quantity(&set, "ExcitationWavelength", ch.ExcitationWavelength)
	w.quantity(&set, "EmissionWavelength", ch.EmissionWavelength)
	w.optional(&set, "Fluor", ch.Fluor)
	w.optional(&set, "AcquisitionMode", string(ch.AcquisitionMode))
	w.optional(&set, "IlluminationType", string(ch.IlluminationType))
	w.optional(&set, "ContrastMethod", string(ch.ContrastMethod))
	w.quantity(&set, "PinholeSize", ch.PinholeSize)
	if n >= 0 {
		w.callerAttrs(d, n, set.has)
	}
	mine := func(name string) bool {
		switch name {
		case "LightSourceSettings":
			return ch.LightSourceSettings != nil
		case "DetectorSettings":
			return ch.DetectorSettings != nil
		}
		return false
	}
	if (n < 0 || d.nodes[n].first < 0) && !mine("LightSourceSettings") && !mine("DetectorSettings") {
		w.closeStart(true)
		return
	}
	w.closeStart(false)
	g.children(d, n, channelElements, mine, func(name string) {
		switch name {
		case "LightSourceSettings":
			w.openWithID("LightSourceSettings", p.instrument.lightSources[ch.LightSourceSettings.LightSource])
			w.quantity(nil, "Wavelength", ch.LightSourceSettings.Wavelength)
			w.closeStart(true)
		case "DetectorSettings":
			w.openWithID("DetectorSettings", p.instrument.detectors[ch.DetectorSettings.Detector])
			w.number(nil, "Gain", ch.DetectorSettings.Gain)
			w.closeStart(true)
		}
	})
	w.closeOME("Channel")
}

// writePlanes writes a Plane for every plane, in DimensionOrder: the
// caller's merged with PlaneInfo.
func (g *omeBuilder) writePlanes(s ImageSpec, p imagePlan, d *OMEDocument) {
	w := &g.w
	// A plane's HashSHA1 is of its bytes as the document's Pixels store
	// them: big-endian samples wider than a byte, or samples not
	// interleaved, are stored otherwise here, and their hash would be
	// wrong.
	stale := false
	if p.caller != nil {
		px := p.caller.pixels()
		isTrue := func(attr string) bool { // xsd:boolean
			v, _ := p.caller.doc.attrOf(px, attr)
			t := strings.TrimSpace(string(v))
			return t == "true" || t == "1"
		}
		stale = isTrue("BigEndian") && s.PixelType.Size() > 1 || !isTrue("Interleaved") && s.SamplesPerPixel > 1
	}
	// Thousands of planes: append numbers directly rather than format.
	var line []byte
	for index := range s.Planes() {
		z, c, t := s.PlaneCoords(index)
		caller, given := p.planes[index]
		info := p.planeInfo[index]
		if !given && info == nil {
			line = appendZCT(append(line[:0], "<Plane"...), ` TheZ="`, `" TheC="`, `" TheT="`, z, c, t)
			w.b.Write(append(line, `"/>`...))
			continue
		}
		w.openOME("Plane")
		w.attrInt("TheZ", z)
		w.attrInt("TheC", c)
		w.attrInt("TheT", t)
		set := names{"TheZ", "TheC", "TheT"}
		if info != nil {
			w.quantity(&set, "DeltaT", info.DeltaT)
			w.quantity(&set, "ExposureTime", info.ExposureTime)
			w.quantity(&set, "PositionX", info.PositionX)
			w.quantity(&set, "PositionY", info.PositionY)
			w.quantity(&set, "PositionZ", info.PositionZ)
		}
		if !given || d.nodes[caller].first < 0 {
			if given {
				w.callerAttrs(d, caller, set.has)
			}
			w.closeStart(true)
			continue
		}
		w.callerAttrs(d, caller, set.has)
		w.closeStart(false)
		for k := d.nodes[caller].first; k >= 0; k = d.nodes[k].next {
			if !stale || !d.is(k, "HashSHA1") {
				w.copy(d, k, g.drop[d])
			}
		}
		w.closeOME("Plane")
	}
}

// appendZCT appends three labelled numbers.
func appendZCT(dst []byte, zLabel, cLabel, tLabel string, z, c, t int) []byte {
	dst = strconv.AppendInt(append(dst, zLabel...), int64(z), 10)
	dst = strconv.AppendInt(append(dst, cLabel...), int64(c), 10)
	return strconv.AppendInt(append(dst, tLabel...), int64(t), 10)
}

// writeInstrument writes a typed Instrument, its parts in the schema's
// order.
func (g *omeBuilder) writeInstrument(p *instrumentPlan) {
	w, in := &g.w, p.in
	w.openWithID("Instrument", p.id)
	w.closeStart(false)
	if m := in.Microscope; m != nil {
		w.openOME("Microscope")
		w.product(m.Product)
		w.optional(nil, "Type", string(m.Type))
		w.closeStart(true)
	}
	for j, l := range in.LightSources {
		w.openOME(string(l.Kind))
		w.attr("ID", p.lightSources[j])
		w.product(l.Product)
		w.quantity(nil, "Power", l.Power)
		w.quantity(nil, "Wavelength", l.Wavelength)
		w.closeStart(true)
	}
	for j, det := range in.Detectors {
		w.openWithID("Detector", p.detectors[j])
		w.product(det.Product)
		w.number(nil, "Gain", det.Gain)
		w.optional(nil, "Type", string(det.Type))
		w.closeStart(true)
	}
	for j, o := range in.Objectives {
		w.openWithID("Objective", p.objectives[j])
		w.product(o.Product)
		w.optional(nil, "Immersion", string(o.Immersion))
		w.number(nil, "LensNA", o.LensNA)
		w.number(nil, "NominalMagnification", o.NominalMagnification)
		w.number(nil, "CalibratedMagnification", o.CalibratedMagnification)
		w.quantity(nil, "WorkingDistance", o.WorkingDistance)
		w.closeStart(true)
	}
	w.closeOME("Instrument")
}

// product writes the Manufacturer, Model and SerialNumber given.
func (w *xmlWriter) product(p Product) {
	w.optional(nil, "Manufacturer", p.Manufacturer)
	w.optional(nil, "Model", p.Model)
	w.optional(nil, "SerialNumber", p.SerialNumber)
}
