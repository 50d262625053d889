package pyramid

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestXMLSizeHintIsEnough checks that the OME-XML is built in the buffer
// the hint sizes, never regrown, for shapes from one plane to a stack of
// thousands with indices of several digits.
func TestXMLSizeHintIsEnough(t *testing.T) {
	uuid := "urn:uuid:00000000-0000-0000-0000-000000000000"
	for _, tc := range []struct {
		name   string
		spec   ImageSpec
		images int
	}{
		{"one plane", ImageSpec{SizeX: 1, SizeY: 1}, 1},
		{"stack", ImageSpec{SizeX: 128, SizeY: 128, SizeZ: 90, SizeC: 2}, 84},
		{"long axes", ImageSpec{SizeX: 1, SizeY: 1, SizeZ: 1000, SizeC: 11, SizeT: 101}, 1},
		{"channels and annotations", ImageSpec{SizeX: 1, SizeY: 1, SizeC: 3,
			Channels:    []Channel{{Name: "DAPI"}, {Name: "GFP"}, {Name: "RFP"}},
			Annotations: []KeyValue{{Key: "stain", Value: "H&E"}, {Key: "scanner", Value: "x"}}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := tc.spec.normalized()
			assert.NoError(t, err)
			var images []omeImage
			for i := range tc.images {
				images = append(images, omeImage{spec: spec, firstIFD: i * spec.Planes()})
			}
			xml, _, err := omeXML(images, nil, uuid, "stack.ome.tif")
			assert.NoError(t, err)
			hint := xmlSizeHint(images, "stack.ome.tif")
			assert.LessOrEqual(t, len(xml), hint, "Grow(hint) leaves room for the whole text")
			if len(images)*spec.Planes() > 1000 {
				assert.Greater(t, len(xml), hint*9/10, "the hint is close for thousands of planes")
			}
		})
	}
}

// TestTextWrittenAgain: text the writer escapes itself (a description, a
// map annotation's keys and values, a name) is escaped as the copier of a
// caller's document escapes it, so that a file's OME-XML, parsed and
// carried into another file, is written again as it was, newlines, tabs,
// quotes and apostrophes included.
func TestTextWrittenAgain(t *testing.T) {
	text := "line 1\nline 2\t'q' \"d\" <e> & f\r"
	spec := ImageSpec{Name: text, Description: text, SizeX: 8, SizeY: 8,
		Channels: []Channel{{Name: text}}, Annotations: []KeyValue{{Key: text, Value: text}}}
	write := func(opts Options, spec ImageSpec) string {
		data := writeMemory(t, opts, func(w *Writer) error {
			im, err := w.AddImage(spec)
			if err != nil {
				return err
			}
			return im.WritePlane(0, 0, 0, make([]byte, 64))
		})
		d := readFile(t, data).Pages[0].Description()
		_, rest, _ := strings.Cut(d, ` UUID="`)
		_, rest, _ = strings.Cut(rest, `"`)
		return rest // what follows the UUID
	}
	first := write(Options{}, spec)
	require.Contains(t, first, "line 1\nline 2\t")
	doc, err := ParseOME([]byte(readOME(t, first)))
	require.NoError(t, err)
	carried := spec
	carried.OME, carried.Annotations = doc.Image(0), nil // as package source carries a file's Image element
	assert.Equal(t, first, write(Options{}, carried))
}

// readOME makes the text after a root's UUID attribute a document again.
func readOME(t *testing.T, afterUUID string) string {
	t.Helper()
	return `<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="urn:uuid:0"` + afterUUID
}

// TestXMLText: text of other origins is made what the writer takes:
// invalid UTF-8 replaced, the characters XML 1.0 forbids dropped, the rest
// (tab, newline, the private use and astral planes) kept.
func TestXMLText(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", "a\xffb": "a\uFFFDb", "esc\x1b.tif": "esc.tif", "t\tn\nr\r": "t\tn\nr\r",
		"\uFFFE\uFFFF": "", "\ue000\U0001F600": "\ue000\U0001F600", "nul\x00": "nul", "": "",
	} {
		got := XMLText(in)
		assert.Equal(t, want, got, "%q", in)
		assert.NoError(t, checkXMLText(got), "%q", in)
	}
}
