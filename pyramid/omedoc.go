package pyramid

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxOMEXMLSize is the largest OME-XML document ParseOME accepts, in bytes:
// room for the writer's own OME-XML of a million planes (about 40 MB),
// while parsing one of this size raises a process's peak memory by about
// four times its size (BenchmarkParseOME), and its tree keeps less than
// its size.
const MaxOMEXMLSize = 64 << 20

// maxOMEDepth bounds the nesting of elements in a caller's document: the
// OME model nests a few levels, and XMLAnnotation content rarely more.
const maxOMEDepth = 256

// Errors of a caller's OME-XML, each returned inside an *OMEError that
// names the element and attribute. Those of a contradiction with the pixels
// also match ErrOption; the others match ErrMetadata.
var (
	// ErrOMESyntax is a document that is not well-formed XML 1.0 in UTF-8
	// with namespaces.
	ErrOMESyntax = errors.New("pyramid: OME-XML is not well-formed")
	// ErrOMEVersion is a document of another schema than OME 2016-06 (its
	// namespace is another one, or none): it is refused, never converted.
	ErrOMEVersion = errors.New("pyramid: OME-XML is not of the 2016-06 schema")
	// ErrOMETooLarge is a document longer than MaxOMEXMLSize, or nested
	// deeper than 256 elements.
	ErrOMETooLarge = errors.New("pyramid: OME-XML is too large")
	// ErrOMEInvalid is a document that breaks the schema where the writer
	// relies on it: an element where the schema allows none, an ID defined
	// twice, a reference to an ID that is not defined (or not of the kind
	// referred to), a BinaryOnly document.
	ErrOMEInvalid = errors.New("pyramid: OME-XML is invalid")
	// ErrOMEConflict is a document that contradicts the image it describes:
	// its sizes, pixel type, channels or planes, or the number of images.
	ErrOMEConflict = errors.New("pyramid: OME-XML contradicts the pixels")
)

// OMEError is a caller's OME-XML the writer refuses. Err is one of the
// ErrOME errors; errors.Is also finds ErrOption for ErrOMEConflict, and
// ErrMetadata for the others.
type OMEError struct {
	Err     error  // ErrOMESyntax, ErrOMEVersion, ErrOMETooLarge, ErrOMEInvalid or ErrOMEConflict
	Element string // the element, as a path from the root: "Image[1]/Pixels/Plane[3]"; "" for the document
	Attr    string // the attribute, if one is at fault
	Line    int    // its line in the document; 0 if unknown
	Detail  string // what is wrong
}

// Error says what is wrong and where: "pyramid: OME-XML contradicts the
// pixels: Image/Pixels@SizeX (line 3): 512; the image is 256 pixels wide".
func (e *OMEError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if e.Element != "" {
		b.WriteString(": ")
		b.WriteString(e.Element)
		if e.Attr != "" {
			b.WriteString("@" + e.Attr)
		}
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns Err and the package's error of its kind.
func (e *OMEError) Unwrap() []error {
	if e.Err == ErrOMEConflict {
		return []error{e.Err, ErrOption}
	}
	return []error{e.Err, ErrMetadata}
}

// Namespaces the parser knows.
const (
	xmlNamespace   = "http://www.w3.org/XML/1998/namespace"
	xmlnsNamespace = "http://www.w3.org/2000/xmlns/" // marks namespace declarations
	xsiNamespace   = "http://www.w3.org/2001/XMLSchema-instance"
	omeSchemas     = "http://www.openmicroscopy.org/Schemas/"
)

// OMEDocument is a parsed OME-XML document (schema 2016-06), for metadata
// the typed fields of ImageSpec do not cover, or that a source file
// carries: give it whole in Options.OME, or one of its images in
// ImageSpec.OME. It is never modified, so one document may serve several
// writers at once.
//
// The writer keeps every element and attribute of the document, in
// order, with its namespace declarations and prefixes, except:
//   - what it owns and writes itself: the OME element's attributes (UUID,
//     Creator, xsi:schemaLocation); the Pixels' DimensionOrder, Type,
//     SizeX to SizeT, BigEndian and Interleaved (its SignificantBits is
//     kept, if the pixel type has that many bits); TiffData, and no
//     BinData or MetadataOnly: the planes are in the file;
//   - Plane elements: the file has one per plane, in the order of the
//     planes in the file (DimensionOrder), and the document's Plane for
//     the same TheZ, TheC and TheT gives its attributes and children, but
//     a HashSHA1 of bytes the Pixels say are stored otherwise than the
//     file stores them (big-endian, or not interleaved);
//   - the images of the document the file does not have (when images are
//     given one by one), the ImageRef elements that refer to them, and
//     the MapAnnotations that only they refer to;
//   - comments, processing instructions, the DOCTYPE, and the whitespace
//     between the elements of the OME model (XMLAnnotation content is kept
//     as it is, whitespace included).
//
// It puts the document's elements in the order the schema requires, the
// writer's own (typed metadata, the MapAnnotations of
// ImageSpec.Annotations) after the document's of each kind. The typed
// fields of ImageSpec, where set, take precedence over what the document
// says of the same thing: Name, Description, AcquisitionDate, the
// physical sizes, the channels' attributes and settings, the instrument
// the image refers to (InstrumentRef, ObjectiveSettings), and the planes'
// attributes. The IDs the writer adds are Image:N, Pixels:N, Channel:N:C,
// Annotation:K, Instrument:K and its parts', with ":1", ":2"... appended
// where the document has one of these already. Images of several
// documents may go in one file (the OME-TIFFs of different files, say):
// the IDs a document defines that one given before it defines too get
// ":1", ":2"... appended in the same way, where it defines them and where
// it refers to them. A document equal to one given before but for the
// root's attributes (its UUID), whose images are other Image elements
// (the files of one dataset, each with the whole document), is that one:
// its objects are written once. Only one of the documents may have
// Rights.
//
// The document must agree with the pixels it describes: its Pixels' sizes
// (SizeC counting samples: an RGB image has SizeC 3 and one Channel of 3
// samples) and Type, its Channel elements (none, or one per channel, of
// the image's samples per pixel), its Planes (within the sizes, at most
// one per plane); AddImage returns an *OMEError matching ErrOption and
// ErrOMEConflict otherwise, naming the element and attribute. The writer
// checks the document as far as it relies on it (see ParseOME), and the
// elements it writes itself; what it copies is the caller's, and is
// valid if the document was.
type OMEDocument struct {
	names  []xmlName
	nodes  []xmlNode // in document order; nodes[0] is the root element
	attrs  []xmlAttr
	text   []byte           // attribute values and character data, unescaped
	ids    map[string]int32 // the element defining each ID
	refs   []int32          // the elements referring to an ID
	images []int32          // the root's Image elements
	size   int              // bytes of the document
}

// xmlName is an element or attribute name: its prefix and local part as
// written, and its namespace. Namespace declarations have the namespace
// xmlnsNamespace and the declared prefix as local part ("" for the
// default namespace).
type xmlName struct{ prefix, local, space string }

// xmlNode is an element (name >= 0) or a run of text (name < 0).
type xmlNode struct {
	name        int32 // in names, or -1 for text
	parent      int32
	first, next int32  // first child and next sibling, -1 for none
	a, n        uint32 // element: its attributes attrs[a:a+n]; text: text[a:a+n]
	line        int32
}

// xmlAttr is an attribute: its name and value text[a:a+n].
type xmlAttr struct {
	name int32
	a, n uint32
}

// OMEImage is one Image element of an OMEDocument, for ImageSpec.OME.
type OMEImage struct {
	doc  *OMEDocument
	node int32
	// addedT and keptT, when not 0, make m a view of the element for an
	// image that Image.TruncateT shrank from addedT time points, which the
	// element says, to keptT (Image.Spec): the view describes an image of
	// keptT time points, its Plane elements of later ones dropped.
	addedT, keptT int
}

// truncated returns m as a view of its element for its image, added with
// added time points, shrunk to kept.
func (m *OMEImage) truncated(added, kept int) *OMEImage {
	v := *m
	if v.addedT == 0 { // a view keeps the SizeT of the element itself
		v.addedT = added
	}
	v.keptT = kept
	return &v
}

// Images returns the number of Image elements of the document.
func (d *OMEDocument) Images() int { return len(d.images) }

// parsed reports whether d is a document ParseOME returned, not a zero
// one, which has no root element.
func (d *OMEDocument) parsed() bool { return len(d.nodes) > 0 }

// Image returns the i-th Image element of the document, or nil if there is
// none.
func (d *OMEDocument) Image(i int) *OMEImage {
	if i < 0 || i >= len(d.images) {
		return nil
	}
	return &OMEImage{doc: d, node: d.images[i]}
}

// Document returns the document the image belongs to.
func (m *OMEImage) Document() *OMEDocument { return m.doc }

// maxOMEAttrs bounds the attributes of one element, namespace
// declarations included: the schema's elements have a few dozen at most,
// and encoding/xml takes about 50 bytes of memory for each attribute of an
// element it reads, at once.
const maxOMEAttrs = 1024

// CheckOMEXML refuses, without parsing it, OME-XML whose shape would cost
// a parser memory out of proportion to it: an element of more than 1024
// attributes. ParseOME calls it; it is for callers that parse OME-XML
// themselves (as package source does). The error is an *OMEError of
// ErrOMETooLarge.
func CheckOMEXML[T ~string | ~[]byte](data T) error {
	return checkOMEXML(string(data)) // one copy of a []byte, not one a comment
}

// checkOMEXML is CheckOMEXML. Only start tags count: comments, CDATA
// sections, processing instructions and declarations are passed over
// whole, ended as encoding/xml ends them, and so are quoted values.
func checkOMEXML(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		if skip := passOver(s[i:]); skip > 0 {
			i += skip - 1
			continue
		}
		if i+1 >= len(s) || s[i+1] == '/' {
			continue
		}
		start, attrs, quote := i, 0, byte(0)
		for i++; i < len(s); i++ {
			c := s[i]
			if quote != 0 {
				if c == quote {
					quote = 0
				}
				continue
			}
			if c == '>' {
				break
			}
			switch c {
			case '"', '\'':
				quote = c
			case '=':
				if attrs++; attrs > maxOMEAttrs {
					return &OMEError{Err: ErrOMETooLarge, Line: 1 + strings.Count(s[:start], "\n"),
						Detail: fmt.Sprintf("an element of more than %d attributes", maxOMEAttrs)}
				}
			}
		}
	}
	return nil
}

// passOver returns the length of the comment, CDATA section, processing
// instruction or declaration s starts with (to its end, or all of s), or
// 0 when it starts none.
func passOver(s string) int {
	for _, c := range [...]struct{ open, close string }{{"<!--", "-->"}, {"<![CDATA[", "]]>"}, {"<?", "?>"}} {
		if strings.HasPrefix(s, c.open) {
			if k := strings.Index(s[len(c.open):], c.close); k >= 0 {
				return len(c.open) + k + len(c.close)
			}
			return len(s)
		}
	}
	if !strings.HasPrefix(s, "<!") {
		return 0
	}
	// A declaration (<!DOCTYPE ...>), ended as encoding/xml ends it: at
	// the first '>' outside quotes, nested '<' '>' pairs and comments.
	quote, depth := byte(0), 0
	for k := 2; k < len(s); k++ {
		switch c := s[k]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			if depth == 0 {
				return k + 1
			}
			depth--
		case strings.HasPrefix(s[k:], "<!--"):
			e := strings.Index(s[k+4:], "-->")
			if e < 0 {
				return len(s)
			}
			k += 4 + e + 2
		case c == '<':
			depth++
		}
	}
	return len(s)
}

// ParseOME parses an OME-XML document of the 2016-06 schema, as found in
// the ImageDescription of an OME-TIFF's first directory or in a companion
// .ome file. It refuses, with an *OMEError: a document that is not
// well-formed, one of another schema version, one longer than
// MaxOMEXMLSize, nested deeper than 256 elements or with an element of
// more than 1024 attributes (CheckOMEXML), and one the writer
// could not write validly: elements the schema does not allow where the
// writer rebuilds the document (in OME, Image, Pixels, Channel and
// StructuredAnnotations), attributes it does not allow on Image, Pixels,
// Channel and Plane (any of another namespace but declarations and
// xsi's), IDs of Image, Pixels and Channel not of the schema's pattern,
// duplicate IDs, references to IDs not defined, and BinaryOnly.
func ParseOME(data []byte) (*OMEDocument, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF")) // UTF-8's byte order mark, which XML allows
	if len(data) > MaxOMEXMLSize {
		return nil, &OMEError{Err: ErrOMETooLarge, Detail: fmt.Sprintf("%d bytes, more than MaxOMEXMLSize (%d)", len(data), MaxOMEXMLSize)}
	}
	if err := CheckOMEXML(data); err != nil {
		return nil, err
	}
	if !utf8.Valid(data) {
		bad := 0
		for bad < len(data) {
			r, n := utf8.DecodeRune(data[bad:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			bad += n
		}
		return nil, &OMEError{Err: ErrOMESyntax, Line: 1 + bytes.Count(data[:bad], []byte("\n")), Detail: fmt.Sprintf("invalid UTF-8 at byte %d", bad)}
	}
	// Sized from the markup, so that a large tree does not regrow: every
	// element begins with a '<' (and so do end tags and the layout text
	// left out), every attribute has its '=', and the values and text are
	// at most the document.
	d := &OMEDocument{size: len(data), ids: map[string]int32{},
		nodes: make([]xmlNode, 0, bytes.Count(data, []byte("<"))+1),
		attrs: make([]xmlAttr, 0, bytes.Count(data, []byte("="))),
		text:  make([]byte, 0, len(data)/2)}
	p := omeParser{d: d, names: map[xmlName]int32{}}
	p.dec = xml.NewDecoder(bytes.NewReader(data))
	p.dec.CharsetReader = asUTF8
	if err := p.parse(); err != nil {
		return nil, err
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p.d, nil
}

// asUTF8 is the decoders' CharsetReader: the text is read as UTF-8
// whatever encoding its declaration names (UTF-16, ISO-8859-1...), as
// Bio-Formats reads it, parsing the text decoded already. Bytes that are
// no UTF-8 are an error of the parser.
func asUTF8(_ string, r io.Reader) (io.Reader, error) { return r, nil }

// omeParser builds an OMEDocument from the decoder's raw tokens, resolving
// namespaces itself so that prefixes are kept as written.
type omeParser struct {
	d      *OMEDocument
	dec    *xml.Decoder
	names  map[xmlName]int32
	scope  nsScope // namespace bindings in scope
	stack  []omeFrame
	closed bool // the root element has ended
	skip   int  // depth inside an element dropped whole (Pixels' BinData, TiffData, MetadataOnly)
}

// omeFrame is an open element.
type omeFrame struct {
	node    int32
	raw     xml.Name // as written, to match the end tag
	last    int32    // last child so far, -1 for none
	scope   int      // len(scope) before its declarations
	foreign bool     // inside XMLAnnotation's Value: kept as it is, unchecked
	// elements: it has element children, kept or skipped (TiffData...):
	// its whitespace is layout.
	elements bool
}

// syntax returns an ErrOMESyntax error at the decoder's position.
func (p *omeParser) syntax(format string, args ...any) error {
	line, _ := p.dec.InputPos()
	return &OMEError{Err: ErrOMESyntax, Line: line, Detail: fmt.Sprintf(format, args...)}
}

func (p *omeParser) parse() error {
	for {
		tok, err := p.dec.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return &OMEError{Err: ErrOMESyntax, Line: se.Line, Detail: se.Msg}
			}
			return p.syntax("%v", strings.TrimPrefix(err.Error(), "xml: "))
		}
		switch t := tok.(type) {
		case xml.StartElement:
			err = p.start(t)
		case xml.EndElement:
			err = p.end(t)
		case xml.CharData:
			err = p.chars(t)
		}
		if err != nil {
			return err
		}
	}
	if len(p.stack) > 0 {
		return p.syntax("the document ends inside <%s>", qualified(p.stack[len(p.stack)-1].raw))
	}
	if len(p.d.nodes) == 0 {
		return &OMEError{Err: ErrOMESyntax, Detail: "no root element"}
	}
	return nil
}

func qualified(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// lookup resolves a prefix in the bindings in scope.
func (p *omeParser) lookup(prefix string) (string, bool) {
	switch prefix {
	case "xml":
		return xmlNamespace, true
	case "xmlns":
		return xmlnsNamespace, true
	}
	return p.scope.lookup(prefix) // no default namespace: none
}

// intern returns the index of a name, adding it if new.
func (p *omeParser) intern(n xmlName) int32 {
	if i, ok := p.names[n]; ok {
		return i
	}
	i := int32(len(p.d.names))
	p.d.names = append(p.d.names, n)
	p.names[n] = i
	return i
}

// store appends s to the text and returns its place.
func (p *omeParser) store(s string) (uint32, uint32) {
	a := len(p.d.text)
	p.d.text = append(p.d.text, s...)
	return uint32(a), uint32(len(s))
}

func (p *omeParser) start(t xml.StartElement) error {
	if p.closed {
		return p.syntax("element <%s> after the root element", qualified(t.Name))
	}
	if len(p.stack) >= maxOMEDepth {
		line, _ := p.dec.InputPos()
		return &OMEError{Err: ErrOMETooLarge, Line: line, Detail: fmt.Sprintf("elements nested deeper than %d", maxOMEDepth)}
	}
	if p.skip > 0 {
		p.skip++
		p.stack = append(p.stack, omeFrame{node: -1, raw: t.Name, scope: p.scope.len()})
		return nil
	}
	if len(p.stack) > 0 {
		p.stack[len(p.stack)-1].elements = true
	}
	mark := p.scope.len()
	for _, a := range t.Attr {
		prefix, isDecl := "", false
		switch {
		case a.Name.Space == "xmlns":
			prefix, isDecl = a.Name.Local, true
			if a.Value == "" {
				return p.syntax("xmlns:%s=\"\": XML 1.0 cannot undeclare a prefix", prefix)
			}
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			isDecl = true
		}
		if !isDecl {
			continue
		}
		if (prefix == "xml") != (a.Value == xmlNamespace) || prefix == "xmlns" || a.Value == xmlnsNamespace {
			return p.syntax("namespace declaration of %q as %q", prefix, a.Value)
		}
		p.scope.push(prefix, a.Value)
	}
	space, ok := p.lookup(t.Name.Space)
	if !ok {
		return p.syntax("element <%s>: prefix %q is not declared", qualified(t.Name), t.Name.Space)
	}
	if t.Name.Space == "xmlns" {
		return p.syntax("element <%s>: the prefix xmlns is reserved", qualified(t.Name))
	}
	parent := int32(-1)
	foreign := false
	if len(p.stack) > 0 {
		top := &p.stack[len(p.stack)-1]
		parent, foreign = top.node, top.foreign
		if !foreign && top.node >= 0 && t.Name.Local == "Value" && space == omeNamespace && p.is(top.node, "XMLAnnotation") {
			foreign = true
		}
	}
	name := xmlName{prefix: t.Name.Space, local: t.Name.Local, space: space}
	if !foreign && parent >= 0 && p.is(parent, "Pixels") && space == omeNamespace &&
		(name.local == "BinData" || name.local == "TiffData" || name.local == "MetadataOnly") {
		// The writer's own: the pixels are in the file, in the planes its
		// TiffData elements list. Parsed for well-formedness only.
		p.skip = 1
		p.scope.truncate(mark)
		p.stack = append(p.stack, omeFrame{node: -1, raw: t.Name, scope: mark})
		return nil
	}
	line, _ := p.dec.InputPos()
	n := int32(len(p.d.nodes))
	node := xmlNode{name: p.intern(name), parent: parent, first: -1, next: -1, a: uint32(len(p.d.attrs)), n: uint32(len(t.Attr)), line: int32(line)}
	var seen map[xmlName]bool
	if len(t.Attr) > 16 {
		seen = make(map[xmlName]bool, len(t.Attr))
	}
	for i, a := range t.Attr {
		an := xmlName{prefix: a.Name.Space, local: a.Name.Local}
		switch {
		case a.Name.Space == "xmlns":
			an = xmlName{prefix: "xmlns", local: a.Name.Local, space: xmlnsNamespace}
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			an = xmlName{local: "", space: xmlnsNamespace}
		case a.Name.Space != "":
			s, ok := p.lookup(a.Name.Space)
			if !ok {
				return p.syntax("attribute %s of <%s>: prefix %q is not declared", qualified(a.Name), qualified(t.Name), a.Name.Space)
			}
			an.space = s
		}
		key := xmlName{local: an.local, space: an.space}
		dup := false
		if seen != nil {
			dup, seen[key] = seen[key], true
		} else {
			for _, b := range p.d.attrs[node.a : node.a+uint32(i)] {
				if bn := p.d.names[b.name]; bn.local == key.local && bn.space == key.space {
					dup = true
				}
			}
		}
		if dup {
			return p.syntax("element <%s> has attribute %s twice", qualified(t.Name), qualified(a.Name))
		}
		at := xmlAttr{name: p.intern(an)}
		at.a, at.n = p.store(a.Value)
		p.d.attrs = append(p.d.attrs, at)
	}
	p.d.nodes = append(p.d.nodes, node)
	p.link(n)
	if !foreign && space == omeNamespace {
		if err := p.define(n); err != nil {
			return err
		}
	}
	if !foreign && strings.HasPrefix(space, omeSchemas) && space != omeNamespace {
		return &OMEError{Err: ErrOMEVersion, Element: p.d.path(n), Line: line,
			Detail: fmt.Sprintf("namespace %s; the writer takes %s only", space, omeNamespace)}
	}
	p.stack = append(p.stack, omeFrame{node: n, raw: t.Name, last: -1, scope: mark, foreign: foreign})
	return nil
}

// link makes node n the last child of the open element.
func (p *omeParser) link(n int32) {
	if len(p.stack) == 0 {
		return
	}
	top := &p.stack[len(p.stack)-1]
	if top.last < 0 {
		p.d.nodes[top.node].first = n
	} else {
		p.d.nodes[top.last].next = n
	}
	top.last = n
}

// is reports whether node n is the OME element local.
func (p *omeParser) is(n int32, local string) bool { return p.d.is(n, local) }

// define records the ID an OME element defines, or the reference it
// makes.
func (p *omeParser) define(n int32) error {
	name := p.d.names[p.d.nodes[n].name].local
	if p.d.nodes[n].parent >= 0 && p.d.is(p.d.nodes[n].parent, "StructuredAnnotations") {
		if _, ok := p.d.attr(n, "Annotator"); ok {
			p.d.refs = append(p.d.refs, n)
		}
	}
	id, ok := p.d.attr(n, "ID")
	if !ok {
		return nil
	}
	if _, isRef := refTargets(name); isRef {
		p.d.refs = append(p.d.refs, n)
		return nil
	}
	if prev, dup := p.d.ids[string(id)]; dup {
		return &OMEError{Err: ErrOMEInvalid, Element: p.d.path(n), Attr: "ID", Line: int(p.d.nodes[n].line),
			Detail: fmt.Sprintf("%q is defined already by %s (line %d)", id, p.d.path(prev), p.d.nodes[prev].line)}
	}
	p.d.ids[string(id)] = n
	return nil
}

func (p *omeParser) end(t xml.EndElement) error {
	if len(p.stack) == 0 {
		return p.syntax("end tag </%s> without a start", qualified(t.Name))
	}
	top := p.stack[len(p.stack)-1]
	if top.raw != t.Name {
		return p.syntax("element <%s> ends with </%s>", qualified(top.raw), qualified(t.Name))
	}
	p.stack = p.stack[:len(p.stack)-1]
	p.scope.truncate(top.scope)
	if p.skip > 0 {
		p.skip--
		return nil
	}
	if !top.foreign && p.d.names[p.d.nodes[top.node].name].space == omeNamespace {
		p.d.dropLayout(top.node, top.elements)
	}
	if len(p.stack) == 0 {
		p.closed = true
	}
	return nil
}

func (p *omeParser) chars(t xml.CharData) error {
	if len(p.stack) == 0 {
		if len(bytes.TrimSpace(t)) > 0 {
			return p.syntax("text outside the root element")
		}
		return nil
	}
	if p.skip > 0 {
		return nil
	}
	top := &p.stack[len(p.stack)-1]
	if top.last >= 0 && !top.foreign && p.d.nodes[top.last].name >= 0 &&
		p.d.name(top.node).space == omeNamespace && len(bytes.TrimSpace(t)) == 0 {
		return nil // layout after an element of the model: dropLayout would drop it
	}
	if top.last >= 0 {
		if last := &p.d.nodes[top.last]; last.name < 0 && int(last.a+last.n) == len(p.d.text) {
			p.d.text = append(p.d.text, t...)
			last.n += uint32(len(t))
			return nil
		}
	}
	n := int32(len(p.d.nodes))
	a := len(p.d.text)
	p.d.text = append(p.d.text, t...)
	p.d.nodes = append(p.d.nodes, xmlNode{name: -1, parent: top.node, first: -1, next: -1, a: uint32(a), n: uint32(len(t))})
	p.link(n)
	return nil
}

// dropLayout unlinks the whitespace between the children of an OME
// element that has element children (elements), even if the parser
// skipped them all (a Pixels of TiffData only): the model has no mixed
// content, so it is layout.
func (d *OMEDocument) dropLayout(n int32, elements bool) {
	if !elements {
		return
	}
	prev := int32(-1)
	for c := d.nodes[n].first; c >= 0; c = d.nodes[c].next {
		if d.nodes[c].name < 0 && len(bytes.TrimSpace(d.textOf(c))) == 0 {
			if prev < 0 {
				d.nodes[n].first = d.nodes[c].next
			} else {
				d.nodes[prev].next = d.nodes[c].next
			}
			continue
		}
		prev = c
	}
}

// collapsedText returns the text of element n, whose schema type allows
// no elements in it, with XML's whitespace collapsed (xsd:whiteSpace
// collapse): leading and trailing removed, runs inside made one space.
func (d *OMEDocument) collapsedText(n int32) string {
	var b []byte
	for c := d.nodes[n].first; c >= 0; c = d.nodes[c].next {
		if d.nodes[c].name < 0 {
			b = append(b, d.textOf(c)...)
		}
	}
	return strings.Join(strings.FieldsFunc(string(b), func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }), " ")
}

// textOf returns a text node's text.
func (d *OMEDocument) textOf(n int32) []byte {
	return d.text[d.nodes[n].a : d.nodes[n].a+d.nodes[n].n]
}

// name returns an element's name.
func (d *OMEDocument) name(n int32) xmlName { return d.names[d.nodes[n].name] }

// sameContent reports whether e holds d's content, parsed again: the same
// elements, attributes and text, but for the root's attributes, which the
// writer owns (each file of a multi-file dataset carries the document
// with its own UUID). Its namespace declarations count.
func (d *OMEDocument) sameContent(e *OMEDocument) bool {
	if d == e {
		return true
	}
	if len(d.nodes) != len(e.nodes) || len(d.attrs) != len(e.attrs) || !slices.Equal(d.names, e.names) {
		return false
	}
	for i := range d.nodes {
		a, b := d.nodes[i], e.nodes[i]
		if a.name != b.name || a.parent != b.parent || a.first != b.first || a.next != b.next || a.n != b.n {
			return false
		}
		if a.name < 0 {
			if !bytes.Equal(d.text[a.a:a.a+a.n], e.text[b.a:b.a+b.n]) {
				return false
			}
			continue
		}
		for k := range a.n {
			x, y := d.attrs[a.a+k], e.attrs[b.a+k]
			if x.name != y.name {
				return false
			}
			if i == 0 && d.names[x.name].space != xmlnsNamespace {
				continue
			}
			if !bytes.Equal(d.text[x.a:x.a+x.n], e.text[y.a:y.a+y.n]) {
				return false
			}
		}
	}
	return true
}

// is reports whether node n is the element local of the OME namespace.
func (d *OMEDocument) is(n int32, local string) bool {
	if d.nodes[n].name < 0 {
		return false
	}
	name := d.names[d.nodes[n].name]
	return name.local == local && name.space == omeNamespace
}

// attr returns the value of an element's attribute without namespace.
func (d *OMEDocument) attr(n int32, local string) ([]byte, bool) {
	node := d.nodes[n]
	for _, a := range d.attrs[node.a : node.a+node.n] {
		if name := d.names[a.name]; name.local == local && name.space == "" {
			return d.text[a.a : a.a+a.n], true
		}
	}
	return nil, false
}

// children returns the element children of n.
func (d *OMEDocument) children(n int32) []int32 {
	var out []int32
	for c := d.nodes[n].first; c >= 0; c = d.nodes[c].next {
		if d.nodes[c].name >= 0 {
			out = append(out, c)
		}
	}
	return out
}

// end returns the index just past the subtree of n: nodes are in document
// order, so the subtree is nodes[n:end].
func (d *OMEDocument) end(n int32) int32 {
	for ; n >= 0; n = d.nodes[n].parent {
		if next := d.nodes[n].next; next >= 0 {
			return next
		}
	}
	return int32(len(d.nodes))
}

// path names element n for messages: "Image[1]/Pixels/Plane[3]", the
// index counting the siblings of the same name, the root left out.
func (d *OMEDocument) path(n int32) string {
	var parts []string
	for ; n >= 0 && d.nodes[n].parent >= 0; n = d.nodes[n].parent {
		name := d.name(n)
		part := name.local
		if name.prefix != "" {
			part = name.prefix + ":" + part
		}
		index, count := 0, 0
		for c := d.nodes[d.nodes[n].parent].first; c >= 0; c = d.nodes[c].next {
			if d.nodes[c].name == d.nodes[n].name {
				if c == n {
					index = count
				}
				count++
			}
		}
		if count > 1 {
			part = fmt.Sprintf("%s[%d]", part, index)
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "OME"
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/")
}

// invalid returns an ErrOMEInvalid error about element n.
func (d *OMEDocument) invalid(n int32, attr, format string, args ...any) error {
	return &OMEError{Err: ErrOMEInvalid, Element: d.path(n), Attr: attr, Line: int(d.nodes[n].line), Detail: fmt.Sprintf(format, args...)}
}
