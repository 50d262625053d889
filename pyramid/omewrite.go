package pyramid

import (
	"bytes"
	"strconv"
	"strings"
)

// xmlWriter writes XML, declaring namespaces where the output needs them:
// elements the writer generates are in the OME namespace without prefix,
// and elements copied from a caller's document keep their prefixes, their
// own declarations, and get a declaration for any prefix whose binding
// they inherited from an element the writer rebuilt.
type xmlWriter struct {
	b      *bytes.Buffer
	scope  nsScope // bindings in scope
	marks  []int   // len(scope) at each open element
	rename map[*OMEDocument]*idRename
}

// idRename gives the IDs of a caller's document that another document
// given defines too their new names, for its definitions and references
// (refs: the elements that refer, by ID or Annotator).
type idRename struct {
	to   map[string]string
	refs map[int32]bool
}

// id returns the value of element n's attribute name: an ID it defines or
// refers to renamed, any other value as the document has it.
func (r *idRename) id(d *OMEDocument, n int32, name xmlName, value []byte) []byte {
	if r == nil || name.space != "" || name.local != "ID" && name.local != "Annotator" {
		return value
	}
	to, ok := r.to[string(value)]
	// An OME AnnotationRef in an XMLAnnotation's content refers too: the
	// schema's keyref reaches it.
	if !ok || !r.refs[n] && d.ids[string(value)] != n && !(name.local == "ID" && d.is(n, "AnnotationRef")) {
		return value // an attribute that only happens to hold the ID
	}
	return []byte(to)
}

// lookup resolves a prefix in the output's bindings.
func (w *xmlWriter) lookup(prefix string) (string, bool) {
	if prefix == "xml" {
		return xmlNamespace, true
	}
	return w.scope.lookup(prefix)
}

// declare writes a declaration binding prefix ("" for the default
// namespace) to space, unless the output has that binding already.
func (w *xmlWriter) declare(prefix, space string) {
	if s, ok := w.lookup(prefix); ok && s == space {
		return
	}
	w.scope.push(prefix, space)
	if prefix == "" {
		w.b.WriteString(` xmlns="`)
	} else {
		w.b.WriteString(" xmlns:" + prefix + `="`)
	}
	w.b.WriteString(escape(space))
	w.b.WriteByte('"')
}

// open writes the start of an element (without its closing '>') with the
// declaration its name needs.
func (w *xmlWriter) open(prefix, local, space string) {
	w.marks = append(w.marks, w.scope.len())
	w.b.WriteByte('<')
	if prefix != "" {
		w.b.WriteString(prefix + ":")
	}
	w.b.WriteString(local)
	w.declare(prefix, space)
}

// openOME writes the start of an element of the OME namespace.
func (w *xmlWriter) openOME(local string) { w.open("", local, omeNamespace) }

// attr writes an attribute without namespace.
func (w *xmlWriter) attr(name, value string) {
	w.b.WriteString(" " + name + `="`)
	w.b.WriteString(escape(value))
	w.b.WriteByte('"')
}

// attrInt writes an integer attribute.
func (w *xmlWriter) attrInt(name string, v int) {
	w.b.WriteString(" " + name + `="`)
	w.b.Write(strconv.AppendInt(nil, int64(v), 10))
	w.b.WriteByte('"')
}

// attrFloat writes a number attribute as the schema types every one the
// writer writes, xsd:float: as short as it reads back as the same 32-bit
// float. Digits past that precision are noise no reader keeps (a pixel
// size computed from a TIFF's rational resolution, 0.4990000020466797,
// is written 0.499).
func (w *xmlWriter) attrFloat(name string, v float64) {
	w.attr(name, strconv.FormatFloat(v, 'g', -1, 32))
}

// attrNS writes a namespaced attribute, declaring its prefix if needed.
func (w *xmlWriter) attrNS(prefix, local, space, value string) {
	if prefix == "" {
		w.attr(local, value)
		return
	}
	w.declare(prefix, space)
	w.b.WriteString(" " + prefix + ":" + local + `="`)
	w.b.WriteString(escape(value))
	w.b.WriteByte('"')
}

// closeStart ends a start tag: with "/>", closing the element, when empty.
func (w *xmlWriter) closeStart(empty bool) {
	if empty {
		w.b.WriteString("/>")
		w.pop()
		return
	}
	w.b.WriteByte('>')
}

// close writes an end tag.
func (w *xmlWriter) close(prefix, local string) {
	w.b.WriteString("</")
	if prefix != "" {
		w.b.WriteString(prefix + ":")
	}
	w.b.WriteString(local)
	w.b.WriteByte('>')
	w.pop()
}

// closeOME writes the end tag of an element of the OME namespace.
func (w *xmlWriter) closeOME(local string) { w.close("", local) }

func (w *xmlWriter) pop() {
	w.scope.truncate(w.marks[len(w.marks)-1])
	w.marks = w.marks[:len(w.marks)-1]
}

// element writes a whole generated element with text content.
func (w *xmlWriter) element(local, text string) {
	w.openOME(local)
	w.b.WriteByte('>')
	escapeTo(w.b, []byte(text), false)
	w.closeOME(local)
}

// callerAttrs writes the attributes of a caller's element n, except its
// namespace declarations and those skip names (attributes without
// namespace).
func (w *xmlWriter) callerAttrs(d *OMEDocument, n int32, skip func(local string) bool) {
	node := d.nodes[n]
	for _, a := range d.attrs[node.a : node.a+node.n] {
		name := d.names[a.name]
		if name.space == xmlnsNamespace || name.space == "" && skip != nil && skip(name.local) {
			continue
		}
		w.callerAttr(d, n, a)
	}
}

// callerAttr writes one attribute of a caller's element. An xsi:type or
// xsi:nil on an element of the OME schema is left out: xsi:type can only
// name the type the schema declares, or one derived from it, and a name a
// validator cannot resolve ("Foo") would make the file invalid (without
// it, the declared type applies); no OME element is nillable. Elsewhere,
// the prefix of an xsi:type's value is declared, as the caller's document
// binds it: the value is a name in a namespace, which the element the
// caller declared it on may not be written as it was.
func (w *xmlWriter) callerAttr(d *OMEDocument, n int32, a xmlAttr) {
	name := d.names[a.name]
	if name.space == xsiNamespace && (name.local == "type" || name.local == "nil") {
		if d.names[d.nodes[n].name].space == omeNamespace {
			return
		}
		if prefix, _, ok := strings.Cut(string(d.text[a.a:a.a+a.n]), ":"); ok && name.local == "type" {
			if space, ok := d.binding(n, strings.TrimSpace(prefix)); ok {
				w.declare(strings.TrimSpace(prefix), space)
			}
		}
	}
	if name.prefix != "" {
		w.declare(name.prefix, name.space)
	}
	w.b.WriteByte(' ')
	if name.prefix != "" {
		w.b.WriteString(name.prefix + ":")
	}
	w.b.WriteString(name.local + `="`)
	escapeTo(w.b, w.rename[d].id(d, n, name, d.text[a.a:a.a+a.n]), true)
	w.b.WriteByte('"')
}

// copy writes a caller's element n with everything in it, as the caller
// gave it, leaving out the elements drop returns true for (drop may be
// nil).
func (w *xmlWriter) copy(d *OMEDocument, n int32, drop func(int32) bool) {
	node := d.nodes[n]
	if node.name < 0 {
		escapeTo(w.b, d.text[node.a:node.a+node.n], false)
		return
	}
	name := d.names[node.name]
	w.marks = append(w.marks, w.scope.len())
	w.b.WriteByte('<')
	if name.prefix != "" {
		w.b.WriteString(name.prefix + ":")
	}
	w.b.WriteString(name.local)
	// The element's own declarations first: its attributes may use them.
	for _, a := range d.attrs[node.a : node.a+node.n] {
		if an := d.names[a.name]; an.space == xmlnsNamespace {
			w.declare(an.local, string(d.text[a.a:a.a+a.n]))
		}
	}
	w.declare(name.prefix, name.space)
	for _, a := range d.attrs[node.a : node.a+node.n] {
		if d.names[a.name].space != xmlnsNamespace {
			w.callerAttr(d, n, a)
		}
	}
	if node.first < 0 {
		w.closeStart(true)
		return
	}
	w.b.WriteByte('>')
	for c := node.first; c >= 0; c = d.nodes[c].next {
		if drop == nil || !drop(c) {
			w.copy(d, c, drop)
		}
	}
	w.close(name.prefix, name.local)
}

// escapeTo writes s escaped for XML: as an attribute value (quotes and
// whitespace characters as references, which attribute normalization
// would otherwise replace) or as text.
func escapeTo(b *bytes.Buffer, s []byte, attr bool) {
	last := 0
	for i, c := range s {
		var ref string
		switch c {
		case '&':
			ref = "&amp;"
		case '<':
			ref = "&lt;"
		case '>':
			ref = "&gt;"
		case '\r':
			ref = "&#xD;"
		case '"':
			if attr {
				ref = "&quot;"
			}
		case '\t':
			if attr {
				ref = "&#x9;"
			}
		case '\n':
			if attr {
				ref = "&#xA;"
			}
		}
		if ref != "" {
			b.Write(s[last:i])
			b.WriteString(ref)
			last = i + 1
		}
	}
	b.Write(s[last:])
}

// nsScope is the namespace declarations in scope: a stack of bindings,
// and for each prefix where its bindings are in it, so that a lookup
// takes a map access however many prefixes are declared.
type nsScope struct {
	stack []xmlName        // prefix (local) and space, outermost first
	at    map[string][]int // a prefix's bindings in stack, innermost last
}

// push binds prefix ("" for the default namespace) to space.
func (s *nsScope) push(prefix, space string) {
	if s.at == nil {
		s.at = map[string][]int{}
	}
	s.at[prefix] = append(s.at[prefix], len(s.stack))
	s.stack = append(s.stack, xmlName{local: prefix, space: space})
}

// len returns the number of bindings, a mark for truncate.
func (s *nsScope) len() int { return len(s.stack) }

// truncate drops the bindings made since the scope had n.
func (s *nsScope) truncate(n int) {
	for i := len(s.stack) - 1; i >= n; i-- {
		prefix := s.stack[i].local
		if at := s.at[prefix]; len(at) > 1 {
			s.at[prefix] = at[:len(at)-1]
		} else {
			delete(s.at, prefix)
		}
	}
	s.stack = s.stack[:n]
}

// lookup returns the namespace prefix is bound to; no binding of the
// default namespace is no namespace.
func (s *nsScope) lookup(prefix string) (string, bool) {
	if at := s.at[prefix]; len(at) > 0 {
		return s.stack[at[len(at)-1]].space, true
	}
	return "", prefix == ""
}

// binding returns the namespace prefix is bound to at node n of the
// caller's document: by a declaration on n or on an element around it.
func (d *OMEDocument) binding(n int32, prefix string) (string, bool) {
	for ; n >= 0; n = d.nodes[n].parent {
		node := d.nodes[n]
		for _, a := range d.attrs[node.a : node.a+node.n] {
			if an := d.names[a.name]; an.space == xmlnsNamespace && an.local == prefix && prefix != "" {
				return string(d.text[a.a : a.a+a.n]), true
			}
		}
	}
	return "", false
}
