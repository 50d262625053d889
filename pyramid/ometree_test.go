package pyramid

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// xtree is an XML element parsed with encoding/xml, its names resolved to
// namespaces, for comparing documents in tests independently of the
// package's own parser. Namespace declarations, comments and processing
// instructions are left out.
type xtree struct {
	name  xml.Name
	attrs map[xml.Name]string
	kids  []*xtree
	text  string // the character data directly inside it, concatenated
}

// parseTree parses a whole document.
func parseTree(t testing.TB, data []byte) *xtree {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []*xtree
	var root *xtree
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &xtree{name: tk.Name, attrs: map[xml.Name]string{}}
			for _, a := range tk.Attr {
				if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
					continue
				}
				e.attrs[a.Name] = a.Value
			}
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.kids = append(top.kids, e)
			} else {
				root = e
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tk)
			}
		}
	}
	require.NotNil(t, root)
	return root
}

// child returns the children named local (any namespace).
func (x *xtree) children(local string) []*xtree {
	var out []*xtree
	for _, k := range x.kids {
		if k.name.Local == local {
			out = append(out, k)
		}
	}
	return out
}

// attr returns an attribute without namespace.
func (x *xtree) attr(local string) string { return x.attrs[xml.Name{Local: local}] }

// ownedByWriter lists what the writer writes itself, which a caller's
// document may not keep: attributes by element, and elements.
var ownedByWriter = struct {
	attrs    map[string][]string
	elements map[string]bool
}{
	attrs: map[string][]string{
		"OME":    {"UUID", "Creator", "{" + xsiNamespace + "}schemaLocation"},
		"Pixels": {"SizeX", "SizeY", "SizeZ", "SizeC", "SizeT", "Type", "DimensionOrder", "BigEndian", "Interleaved"},
	},
	elements: map[string]bool{"TiffData": true, "BinData": true, "MetadataOnly": true},
}

// missingFrom lists what of want (a caller's document) got (the writer's)
// lacks: every element and attribute the caller gave, except what the
// writer owns, with the same values, and the same text. Elements are
// matched by ID (elements defining one), Planes by TheZ, TheC and TheT,
// others by their order among the siblings of their name.
func missingFrom(want, got *xtree) []string {
	var out []string
	var walk func(path string, w, g *xtree)
	walk = func(path string, w, g *xtree) {
		owned := map[string]bool{}
		for _, a := range ownedByWriter.attrs[w.name.Local] {
			owned[a] = true
		}
		for name, v := range w.attrs {
			key := name.Local
			if name.Space != "" {
				key = "{" + name.Space + "}" + name.Local
			}
			if owned[key] {
				continue
			}
			if gv, ok := g.attrs[name]; !ok || gv != v {
				out = append(out, fmt.Sprintf("%s@%s: want %q, got %q (present %v)", path, key, v, gv, ok))
			}
		}
		wt, gt := w.text, g.text
		if len(w.kids) > 0 {
			wt, gt = strings.TrimSpace(wt), strings.TrimSpace(gt)
		}
		if wt != gt {
			out = append(out, fmt.Sprintf("%s: text %q, got %q", path, wt, gt))
		}
		seen := map[xml.Name]int{}
		for _, wk := range w.kids {
			if ownedByWriter.elements[wk.name.Local] && w.name.Local == "Pixels" {
				continue
			}
			match := matchChild(wk, g, seen[wk.name])
			if _, keyed := keyOf(wk); !keyed {
				seen[wk.name]++
			}
			p := fmt.Sprintf("%s/%s", path, wk.name.Local)
			if k, keyed := keyOf(wk); keyed {
				p += "[" + k + "]"
			}
			if match == nil {
				out = append(out, p+": missing")
				continue
			}
			walk(p, wk, match)
		}
	}
	if want.name != got.name {
		return []string{fmt.Sprintf("root %v, got %v", want.name, got.name)}
	}
	walk(want.name.Local, want, got)
	return out
}

// keyOf returns what identifies an element among its siblings, if
// anything does.
func keyOf(x *xtree) (string, bool) {
	if x.name.Local == "Plane" {
		return fmt.Sprintf("z=%s c=%s t=%s", x.attr("TheZ"), x.attr("TheC"), x.attr("TheT")), true
	}
	if _, ref := refTargets(x.name.Local); ref {
		return "", false
	}
	if id := x.attr("ID"); id != "" {
		return id, true
	}
	return "", false
}

// matchChild finds in g the child matching wk: the one with the same key,
// or the index-th of its name.
func matchChild(wk, g *xtree, index int) *xtree {
	key, keyed := keyOf(wk)
	i := 0
	for _, gk := range g.kids {
		if gk.name != wk.name {
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

// checkTags checks what encoding/xml lets pass in the writer's OME-XML:
// in every tag, a space before each attribute and each namespace
// declaration. (The writer escapes '<', '>' and '"' in text and values,
// so tags and values are found by these characters alone.)
func checkTags(t testing.TB, out []byte) {
	t.Helper()
	for rest := out; ; {
		open := bytes.IndexByte(rest, '<')
		if open < 0 {
			return
		}
		end := bytes.IndexByte(rest[open:], '>')
		require.GreaterOrEqual(t, end, 0, "unterminated tag")
		tag := rest[open : open+end+1]
		inValue := false
		for i, c := range tag {
			if c != '"' {
				continue
			}
			if inValue && i+1 < len(tag) && !bytes.ContainsRune([]byte(" />?"), rune(tag[i+1])) {
				t.Fatalf("no space after an attribute in %s", tag)
			}
			inValue = !inValue
		}
		rest = rest[open+end+1:]
	}
}
