// Package omexmltest compares OME-XML documents in tests, independently of
// package pyramid's own parser: a document is parsed with encoding/xml into
// a Tree, and MissingFrom lists what of a caller's document the writer's
// output lacks. RichDoc is a caller's document with most of the OME model,
// for the tests of the writer and of the converter.
package omexmltest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// xsiNamespace is the namespace of xsi:schemaLocation.
const xsiNamespace = "http://www.w3.org/2001/XMLSchema-instance"

// Tree is an XML element parsed with encoding/xml, its names resolved to
// namespaces. Namespace declarations, comments and processing
// instructions are left out.
type Tree struct {
	Name  xml.Name
	Attrs map[xml.Name]string
	Kids  []*Tree
	// Text is the character data directly inside the element,
	// concatenated.
	Text string
}

// Parse parses a whole document and returns its root; a document that
// does not parse fails the test.
func Parse(t testing.TB, data []byte) *Tree {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	// Read as UTF-8 whatever the declaration says, as the writer reads it.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	var stack []*Tree
	var root *Tree
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &Tree{Name: tk.Name, Attrs: map[xml.Name]string{}}
			for _, a := range tk.Attr {
				if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
					continue
				}
				e.Attrs[a.Name] = a.Value
			}
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.Kids = append(top.Kids, e)
			} else {
				root = e
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(tk)
			}
		}
	}
	require.NotNil(t, root)
	return root
}

// Children returns the children named local (in any namespace).
func (x *Tree) Children(local string) []*Tree {
	var out []*Tree
	for _, k := range x.Kids {
		if k.Name.Local == local {
			out = append(out, k)
		}
	}
	return out
}

// Element finds the first descendant of x along a path of local names,
// or nil.
func (x *Tree) Element(path ...string) *Tree {
	for _, name := range path {
		kids := x.Children(name)
		if len(kids) == 0 {
			return nil
		}
		x = kids[0]
	}
	return x
}

// ChildNames lists the local names of x's children, in order.
func (x *Tree) ChildNames() []string {
	var out []string
	for _, k := range x.Kids {
		out = append(out, k.Name.Local)
	}
	return out
}

// Attr returns an attribute without namespace; "" if it is absent.
func (x *Tree) Attr(local string) string { return x.Attrs[xml.Name{Local: local}] }

// PlainAttrs returns the attributes of x by local name; nil for a nil x.
func (x *Tree) PlainAttrs() map[string]string {
	if x == nil {
		return nil
	}
	m := map[string]string{}
	for k, v := range x.Attrs {
		m[k.Local] = v
	}
	return m
}

// OwnedByWriter is what package pyramid's writer writes itself, which a
// caller's document may not keep: attributes by element ("{space}local"
// for one in a namespace), and elements of Pixels.
var OwnedByWriter = struct {
	Attrs    map[string][]string
	Elements map[string]bool
}{
	Attrs: map[string][]string{
		"OME":    {"UUID", "Creator", "{" + xsiNamespace + "}schemaLocation"},
		"Pixels": {"SizeX", "SizeY", "SizeZ", "SizeC", "SizeT", "Type", "DimensionOrder", "BigEndian", "Interleaved"},
	},
	Elements: map[string]bool{"TiffData": true, "BinData": true, "MetadataOnly": true},
}

// MissingFrom lists what of want (a caller's document) got (the writer's)
// lacks: every element and attribute the caller gave, except what the
// writer owns (OwnedByWriter) and the planes' hashes of bytes it stores
// otherwise (big-endian, or not interleaved), with the same values, and the same text
// (trimmed in elements that have children in either). Elements are matched by ID
// (elements defining one), Planes by TheZ, TheC and TheT, others by their
// order among the siblings of their name. Each entry names the element by
// its path and says what differs.
func MissingFrom(want, got *Tree) []string {
	var out []string
	var walk func(path string, w, g *Tree)
	staleHash := false // a Plane's HashSHA1 of bytes the writer stores otherwise, which it leaves out
	walk = func(path string, w, g *Tree) {
		if w.Name.Local == "Pixels" {
			wide := w.Attr("Type") != "uint8" && w.Attr("Type") != "int8" && w.Attr("Type") != "bit"
			rgb := false
			for _, c := range w.Children("Channel") {
				rgb = rgb || c.Attr("SamplesPerPixel") != "" && c.Attr("SamplesPerPixel") != "1"
			}
			big, interleaved := w.Attr("BigEndian"), w.Attr("Interleaved")
			staleHash = wide && (big == "true" || big == "1") || rgb && interleaved != "true" && interleaved != "1"
		}
		owned := map[string]bool{}
		for _, a := range OwnedByWriter.Attrs[w.Name.Local] {
			owned[a] = true
		}
		for name, v := range w.Attrs {
			key := name.Local
			if name.Space != "" {
				key = "{" + name.Space + "}" + name.Local
			}
			if owned[key] {
				continue
			}
			if gv, ok := g.Attrs[name]; !ok || gv != v {
				out = append(out, fmt.Sprintf("%s@%s: want %q, got %q (present %v)", path, key, v, gv, ok))
			}
		}
		wt, gt := w.Text, g.Text
		if len(w.Kids) > 0 || len(g.Kids) > 0 {
			wt, gt = strings.TrimSpace(wt), strings.TrimSpace(gt)
		}
		if wt != gt {
			out = append(out, fmt.Sprintf("%s: text %q, got %q", path, wt, gt))
		}
		seen := map[xml.Name]int{}
		for _, wk := range w.Kids {
			if OwnedByWriter.Elements[wk.Name.Local] && w.Name.Local == "Pixels" || staleHash && wk.Name.Local == "HashSHA1" && w.Name.Local == "Plane" {
				continue
			}
			match := matchChild(wk, g, seen[wk.Name])
			key, keyed := keyOf(wk)
			if !keyed {
				seen[wk.Name]++
			}
			p := fmt.Sprintf("%s/%s", path, wk.Name.Local)
			if keyed {
				p += "[" + key + "]"
			}
			if match == nil {
				out = append(out, p+": missing")
				continue
			}
			walk(p, wk, match)
		}
	}
	if want.Name != got.Name {
		return []string{fmt.Sprintf("root %v, got %v", want.Name, got.Name)}
	}
	walk(want.Name.Local, want, got)
	return out
}

// isReference reports whether an element of the OME model refers to
// another by its ID attribute rather than defines one: the ...Ref
// elements, and the settings and links named otherwise.
func isReference(local string) bool {
	switch local {
	case "ObjectiveSettings", "DetectorSettings", "LightSourceSettings", "Pump", "Leader", "Contact":
		return true
	}
	return len(local) > len("Ref") && strings.HasSuffix(local, "Ref")
}

// keyOf returns what identifies an element among its siblings, if
// anything does.
func keyOf(x *Tree) (string, bool) {
	if x.Name.Local == "Plane" {
		return fmt.Sprintf("z=%s c=%s t=%s", x.Attr("TheZ"), x.Attr("TheC"), x.Attr("TheT")), true
	}
	if isReference(x.Name.Local) {
		return "", false
	}
	if id := x.Attr("ID"); id != "" {
		return id, true
	}
	return "", false
}

// matchChild finds in g the child matching wk: the one with the same key,
// or the index-th of its name.
func matchChild(wk, g *Tree, index int) *Tree {
	key, keyed := keyOf(wk)
	i := 0
	for _, gk := range g.Kids {
		if gk.Name != wk.Name {
			continue
		}
		if keyed {
			if k, _ := keyOf(gk); k == key {
				return gk
			}
			continue
		}
		if _, gkeyed := keyOf(gk); gkeyed {
			continue
		}
		if i == index {
			return gk
		}
		i++
	}
	return nil
}
