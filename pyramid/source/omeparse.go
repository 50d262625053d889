package source

import (
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ometiff-go/ometiff/pyramid"
)

// parseOME parses an OME-XML document into the part of it the mapping
// reads (omeDoc, whose struct tags say what goes where). It walks the raw
// tokens and keeps only that part: the rest, often tens of MB of Plane
// elements or annotations, is passed over. Decoding the whole document
// into structs with encoding/xml's DecodeElement, as this did before,
// made mapping such a file allocate about twice as much
// (BenchmarkOpenLargeOME).
//
// What it reads is what DecodeElement reads with those tags (the tests
// compare the two): elements and attributes matched by their local
// names, the text of an element its own character data without its
// children's, a numeric attribute empty as 0, a second Pixels or
// BinaryOnly element adding to the first. One difference: only the
// MapAnnotations an Image refers to are kept, the only ones the mapping
// uses.
func parseOME(text string) (*omeDoc, error) {
	// What costs memory out of proportion to the document is refused
	// before encoding/xml reads it.
	if err := pyramid.CheckOMEXML(text); err != nil {
		return nil, fmt.Errorf("%w: OME-XML: %w", ErrMetadata, err)
	}
	doc, missed, err := parseOMEOnce(text, false)
	if err == nil && missed {
		// An Image refers to a MapAnnotation before it, out of the
		// schema's order, which the first pass did not keep.
		doc, _, err = parseOMEOnce(text, true)
	}
	return doc, err
}

// parseOMEOnce parses the document, keeping every MapAnnotation or only
// those an Image before them refers to; missed reports an Image referring
// to one passed over.
func parseOMEOnce(text string, allMaps bool) (doc *omeDoc, missed bool, err error) {
	d := xml.NewDecoder(strings.NewReader(text))
	d.Strict = true
	// The text is read as UTF-8 whatever encoding its declaration names
	// (UTF-16, ISO-8859-1...), as Bio-Formats reads it: it parses the text
	// decoded already. Bytes that are no UTF-8 are an error of the parser.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	p := omeParser{d: d, doc: new(omeDoc), allMaps: allMaps, refs: map[string]bool{}, passed: map[string]bool{}}
	if err := p.parse(); err != nil {
		if _, ok := errors.AsType[*omeNumberError](err); ok {
			return nil, false, fmt.Errorf("%w: OME-XML, %w", ErrMetadata, err)
		}
		return nil, false, fmt.Errorf("%w: OME-XML: %w", ErrMetadata, err)
	}
	for id := range p.refs {
		missed = missed || p.passed[id]
	}
	return p.doc, missed, nil
}

// omeKind is what an open element is to the mapping.
type omeKind int8

// kindRoot is the kind of the root element's parent.
const kindRoot omeKind = -1

const (
	kindOther omeKind = iota // not read, nor anything in it
	kindOME
	kindImage
	kindPixels
	kindTiffData
	kindAnnotations // StructuredAnnotations
	kindMap         // MapAnnotation, kept
	kindMapValue    // its Value
	kindText        // an element whose text is read into omeParser.text
)

// omeOpen is an open element.
type omeOpen struct {
	name xml.Name // as written, with its prefix in Space, for its end tag
	kind omeKind
}

// omeParser is the state of parseOMEOnce.
type omeParser struct {
	d     *xml.Decoder
	doc   *omeDoc
	stack []omeOpen
	// text is where the character data of the innermost kindText element
	// goes; data gathers it until the element ends.
	text *string
	data []byte
	// allMaps keeps every MapAnnotation; else only those whose ID is in
	// refs (the Images' AnnotationRefs so far), and passed has the others.
	allMaps      bool
	refs, passed map[string]bool
}

// parse reads the tokens up to the end of the root element, checking
// that each end tag closes the element open (RawToken does not).
func (p *omeParser) parse() error {
	for {
		tok, err := p.d.RawToken()
		if err == io.EOF {
			if len(p.stack) == 0 {
				return p.syntax("no root element")
			}
			return p.syntax("unexpected EOF")
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := p.start(t); err != nil {
				return err
			}
		case xml.EndElement:
			if len(p.stack) == 0 {
				return p.syntax("unexpected end element </%s>", qualified(t.Name))
			}
			top := p.stack[len(p.stack)-1]
			if top.name != t.Name {
				return p.syntax("element <%s> closed by </%s>", qualified(top.name), qualified(t.Name))
			}
			p.stack = p.stack[:len(p.stack)-1]
			if top.kind == kindText {
				*p.text, p.text = string(p.data), nil
			}
			if len(p.stack) == 0 {
				return nil // the root's end: what follows is not read
			}
		case xml.CharData:
			if len(p.stack) > 0 && p.stack[len(p.stack)-1].kind == kindText {
				p.data = append(p.data, t...)
			}
		}
	}
}

// syntax returns a syntax error at the decoder's line, as encoding/xml
// words it.
func (p *omeParser) syntax(format string, args ...any) error {
	line, _ := p.d.InputPos()
	return &xml.SyntaxError{Msg: fmt.Sprintf(format, args...), Line: line}
}

// qualified is a name as written: prefix:local.
func qualified(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// maxOMEDepth bounds the nesting of elements, as pyramid.ParseOME does:
// the OME model nests a few levels, and a document of a few MB could
// otherwise nest millions.
const maxOMEDepth = 256

// start opens an element.
func (p *omeParser) start(t xml.StartElement) error {
	if len(p.stack) >= maxOMEDepth {
		line, _ := p.d.InputPos()
		return fmt.Errorf("by line %d: elements nested deeper than %d, more than the mapping reads", line, maxOMEDepth)
	}
	parent := kindRoot
	if len(p.stack) > 0 {
		parent = p.stack[len(p.stack)-1].kind
	} else if t.Name.Local != "OME" {
		return fmt.Errorf("the root element is %s, not OME", t.Name.Local)
	}
	// encoding/xml does not check that an element's attributes differ (a
	// TiffData with two IFDs would map a plane to the last).
	if a, twice := repeatedAttr(t.Attr); twice {
		return p.syntax("element <%s> has attribute %s twice", qualified(t.Name), qualified(a))
	}
	kind, err := p.open(parent, t)
	p.stack = append(p.stack, omeOpen{t.Name, kind})
	return err
}

// repeatedAttr returns an attribute name written twice among attrs.
func repeatedAttr(attrs []xml.Attr) (xml.Name, bool) {
	if len(attrs) <= 16 {
		for i, a := range attrs {
			for _, b := range attrs[:i] {
				if a.Name == b.Name {
					return a.Name, true
				}
			}
		}
		return xml.Name{}, false
	}
	seen := make(map[xml.Name]bool, len(attrs))
	for _, a := range attrs {
		if seen[a.Name] {
			return a.Name, true
		}
		seen[a.Name] = true
	}
	return xml.Name{}, false
}

// attrField is an attribute open reads into a field: a *string, *uint32,
// **uint32, **int32 or *float64.
type attrField struct {
	name  string
	field any
}

// open reads what omeDoc holds of an element whose parent is of the given
// kind, and returns the element's kind.
func (p *omeParser) open(parent omeKind, t xml.StartElement) (omeKind, error) {
	doc, name := p.doc, t.Name.Local
	switch {
	case parent == kindRoot:
		return kindOME, p.attrs(t, attrField{"UUID", &doc.UUID})
	case parent == kindOME && name == "BinaryOnly":
		if doc.BinaryOnly == nil {
			doc.BinaryOnly = new(omeBinaryOnly)
		}
		b := doc.BinaryOnly
		return kindOther, p.attrs(t, attrField{"MetadataFile", &b.MetadataFile}, attrField{"UUID", &b.UUID})
	case parent == kindOME && name == "Image":
		doc.Images = append(doc.Images, omeImage{})
		im := &doc.Images[len(doc.Images)-1]
		return kindImage, p.attrs(t, attrField{"ID", &im.ID}, attrField{"Name", &im.Name})
	case parent == kindOME && name == "StructuredAnnotations":
		return kindAnnotations, nil
	case parent == kindImage:
		im := &doc.Images[len(doc.Images)-1]
		switch name {
		case "AcquisitionDate":
			return p.textOf(&im.AcquisitionDate), nil
		case "Description":
			return p.textOf(&im.Description), nil
		case "Pixels":
			if im.Pixels == nil {
				im.Pixels = new(omePixels)
			}
			px := im.Pixels
			return kindPixels, p.attrs(t,
				attrField{"DimensionOrder", &px.DimensionOrder}, attrField{"Type", &px.Type},
				attrField{"SizeX", &px.SizeX}, attrField{"SizeY", &px.SizeY},
				attrField{"SizeZ", &px.SizeZ}, attrField{"SizeC", &px.SizeC}, attrField{"SizeT", &px.SizeT},
				attrField{"PhysicalSizeX", &px.PhysicalSizeX}, attrField{"PhysicalSizeXUnit", &px.PhysicalSizeXUnit},
				attrField{"PhysicalSizeY", &px.PhysicalSizeY}, attrField{"PhysicalSizeYUnit", &px.PhysicalSizeYUnit},
				attrField{"PhysicalSizeZ", &px.PhysicalSizeZ}, attrField{"PhysicalSizeZUnit", &px.PhysicalSizeZUnit},
				attrField{"TimeIncrement", &px.TimeIncrement}, attrField{"TimeIncrementUnit", &px.TimeIncrementUnit})
		case "AnnotationRef":
			im.AnnotationRefs = append(im.AnnotationRefs, omeRef{})
			ref := &im.AnnotationRefs[len(im.AnnotationRefs)-1]
			err := p.attrs(t, attrField{"ID", &ref.ID})
			p.refs[ref.ID] = true
			return kindOther, err
		}
	case parent == kindPixels:
		px := doc.Images[len(doc.Images)-1].Pixels
		switch name {
		case "Channel":
			px.Channels = append(px.Channels, omeChannel{})
			c := &px.Channels[len(px.Channels)-1]
			return kindOther, p.attrs(t, attrField{"Name", &c.Name}, attrField{"Color", &c.Color}, attrField{"SamplesPerPixel", &c.SamplesPerPixel})
		case "MetadataOnly":
			px.MetadataOnly = &struct{}{}
		case "BinData":
			px.BinData = &struct{}{}
		case "TiffData":
			px.TiffData = append(px.TiffData, omeTiffData{})
			td := &px.TiffData[len(px.TiffData)-1]
			return kindTiffData, p.attrs(t, attrField{"IFD", &td.IFD}, attrField{"PlaneCount", &td.PlaneCount},
				attrField{"FirstZ", &td.FirstZ}, attrField{"FirstC", &td.FirstC}, attrField{"FirstT", &td.FirstT})
		}
	case parent == kindTiffData && name == "UUID":
		px := doc.Images[len(doc.Images)-1].Pixels
		td := &px.TiffData[len(px.TiffData)-1]
		if td.UUID == nil {
			td.UUID = new(omeUUID)
		}
		return p.textOf(&td.UUID.Value), p.attrs(t, attrField{"FileName", &td.UUID.FileName})
	case parent == kindAnnotations && name == "MapAnnotation":
		var m omeMap
		if err := p.attrs(t, attrField{"ID", &m.ID}); err != nil || !p.allMaps && !p.refs[m.ID] {
			p.passed[m.ID] = true
			return kindOther, err
		}
		doc.Maps = append(doc.Maps, m)
		return kindMap, nil
	case parent == kindMap && name == "Value":
		return kindMapValue, nil
	case parent == kindMapValue && name == "M":
		m := &doc.Maps[len(doc.Maps)-1]
		m.Values = append(m.Values, omeMapEntry{})
		e := &m.Values[len(m.Values)-1]
		return p.textOf(&e.Value), p.attrs(t, attrField{"K", &e.Key})
	}
	return kindOther, nil
}

// textOf makes the element opening a kindText one whose text goes to s.
func (p *omeParser) textOf(s *string) omeKind {
	p.text, p.data = s, p.data[:0]
	return kindText
}

// attrs reads the element's attributes the fields name, by local name, as
// encoding/xml does: a later attribute of the same name wins.
func (p *omeParser) attrs(t xml.StartElement, fields ...attrField) error {
	for _, a := range t.Attr {
		if a.Name.Space != "" {
			continue // the schema's attributes are unqualified: x:IFD is another
		}
		for _, f := range fields {
			if f.name == a.Name.Local {
				if err := setAttr(f.field, a.Value); err != nil {
					return p.numberError(err)
				}
			}
		}
	}
	return nil
}

// setAttr sets a field to an attribute's value.
func setAttr(field any, s string) error {
	switch f := field.(type) {
	case *string:
		*f = s
	case *uint32:
		v, err := parseNumber(s, 10, 32, strconv.ParseUint)
		*f = uint32(v)
		return err
	case **uint32:
		v, err := parseNumber(s, 10, 32, strconv.ParseUint)
		*f = new(uint32(v))
		return err
	case **int32:
		v, err := parseNumber(s, 10, 32, strconv.ParseInt)
		*f = new(int32(v))
		return err
	case *float64:
		var err error
		if s != "" {
			*f, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
		} else {
			*f = 0
		}
		return err
	}
	return nil
}

// parseNumber parses an integer as encoding/xml does: empty is 0, and
// spaces around the number are let pass.
func parseNumber[T int64 | uint64](s string, base, bits int, parse func(string, int, int) (T, error)) (T, error) {
	if s == "" {
		return 0, nil
	}
	return parse(strings.TrimSpace(s), base, bits)
}

// numberError says which value of a numeric attribute is wrong, and what
// it should be.
func (p *omeParser) numberError(err error) error {
	ne, ok := errors.AsType[*strconv.NumError](err)
	if !ok {
		return err
	}
	line, _ := p.d.InputPos()
	want := map[string]string{"ParseUint": "a whole number of 0 or more", "ParseInt": "a whole number", "ParseFloat": "a number of float's range"}[ne.Func]
	if errors.Is(ne.Err, strconv.ErrRange) && ne.Func != "ParseFloat" {
		// The integers read are 32-bit, as the schema's types are.
		want = map[string]string{"ParseUint": "a whole number of 0 to 4294967295 (it is too large)",
			"ParseInt": "a whole number of -2147483648 to 2147483647 (it is out of that range)"}[ne.Func]
	}
	return &omeNumberError{line, ne.Num, cmp.Or(want, "a number")}
}

// omeNumberError is a numeric attribute's value that is not a number of
// the attribute's type.
type omeNumberError struct {
	line      int
	num, want string
}

func (e *omeNumberError) Error() string {
	return fmt.Sprintf("by line %d: %q, the value of a numeric attribute (a size, IFD, PlaneCount, First..., PhysicalSize...), is not %s",
		e.line, e.num, e.want)
}
