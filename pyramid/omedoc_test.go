package pyramid

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/omexmltest"
)

// omeRoot starts a minimal document; omeEnd ends it.
const (
	omeRoot = `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06">`
	omeEnd  = `</OME>`
	// omeImage0 is an Image of 8x8 uint8 pixels, one plane.
	omeImage0 = `<Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="1" SizeT="1"><TiffData/></Pixels></Image>`
)

// TestParseOMERefuses: every kind of bad document gets its typed error,
// which errors.Is also matches with ErrMetadata, and names where it is.
func TestParseOMERefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		doc   string
		want  error
		where string // in the message
	}{
		{"empty", ``, ErrOMESyntax, "no root element"},
		{"not closed", omeRoot + omeImage0, ErrOMESyntax, "ends inside <OME>"},
		{"crossed tags", omeRoot + `<Image ID="Image:0"><Pixels></Image></Pixels>` + omeEnd, ErrOMESyntax, "line 1"},
		{"bad entity", omeRoot + `<Experimenter ID="Experimenter:0" FirstName="&nbsp;"/>` + omeEnd, ErrOMESyntax, "entity"},
		{"undeclared prefix", `<ome:OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"/>`, ErrOMESyntax, `prefix "ome"`},
		{"undeclared attribute prefix", omeRoot + `<Experimenter ID="Experimenter:0" x:y="1"/>` + omeEnd, ErrOMESyntax, `prefix "x"`},
		{"attribute twice", omeRoot + `<Experimenter ID="Experimenter:0" ID="Experimenter:1"/>` + omeEnd, ErrOMESyntax, "twice"},
		{"same attribute by two prefixes", omeRoot + `<Experimenter ID="Experimenter:0" xmlns:a="urn:x" xmlns:b="urn:x" a:k="1" b:k="2"/>` + omeEnd, ErrOMESyntax, "twice"},
		{"invalid UTF-8", omeRoot + "<Experimenter ID=\"Experimenter:0\" FirstName=\"\xff\"/>" + omeEnd, ErrOMESyntax, "UTF-8"},
		{"control character", omeRoot + "<Experimenter ID=\"Experimenter:0\"><Email>a\x01</Email></Experimenter>" + omeEnd, ErrOMESyntax, ""},
		{"second root", omeRoot + omeEnd + omeRoot + omeEnd, ErrOMESyntax, "after the root"},
		{"text after the root", omeRoot + omeEnd + "x", ErrOMESyntax, "outside the root"},
		// Read as UTF-8 whatever the declaration says (TestParseOMEKeeps):
		// a Latin-1 byte is no UTF-8.
		{"Latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?>` + omeRoot + "<Experimenter ID=\"Experimenter:0\" FirstName=\"Zo\xe9\"/>" + omeEnd, ErrOMESyntax, "invalid UTF-8"},
		{"undeclaring a prefix", omeRoot + `<Experimenter ID="Experimenter:0" xmlns:a=""/>` + omeEnd, ErrOMESyntax, "undeclare"},
		{"schema 2015-01", `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2015-01">` + omeEnd, ErrOMEVersion, "2015-01"},
		{"no namespace", `<OME>` + omeEnd, ErrOMEVersion, "no namespace"},
		{"old SA namespace inside", omeRoot + `<SA:StructuredAnnotations xmlns:SA="http://www.openmicroscopy.org/Schemas/SA/2015-01"/>` + omeEnd, ErrOMEVersion, "SA/2015-01"},
		{"not OME", `<Image xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"/>`, ErrOMEInvalid, "not OME"},
		{"BinaryOnly", omeRoot + `<BinaryOnly MetadataFile="a.companion.ome" UUID="urn:uuid:6b0d4f5e-6a2e-4b7b-9d1e-0e3a2b1c4d5f"/>` + omeEnd, ErrOMEInvalid, "BinaryOnly"},
		{"unknown element", omeRoot + `<Microscope/>` + omeEnd, ErrOMEInvalid, "Microscope"},
		{"foreign element at the root", omeRoot + `<x:Extra xmlns:x="urn:x"/>` + omeEnd, ErrOMEInvalid, "x:Extra"},
		{"text at the root", omeRoot + `words` + omeEnd, ErrOMEInvalid, "words"},
		{"two Rights", omeRoot + `<Rights/><Rights/>` + omeEnd, ErrOMEInvalid, "Rights[1]"},
		{"Image without Pixels", omeRoot + `<Image ID="Image:0"/>` + omeEnd, ErrOMEInvalid, "no Pixels"},
		{"two Pixels", omeRoot + strings.Replace(omeImage0, `</Image>`, `<Pixels ID="Pixels:1"/></Image>`, 1) + omeEnd, ErrOMEInvalid, "more than one Pixels"},
		{"unknown in Image", omeRoot + strings.Replace(omeImage0, `<Pixels`, `<DatasetRef ID="Dataset:0"/><Pixels`, 1) + omeEnd, ErrOMEInvalid, "DatasetRef"},
		{"unknown in Pixels", omeRoot + strings.Replace(omeImage0, `<TiffData/>`, `<Planes/>`, 1) + omeEnd, ErrOMEInvalid, "Planes"},
		{"unknown in Channel", omeRoot + strings.Replace(omeImage0, `<TiffData/>`, `<Channel ID="Channel:0:0"><Filter/></Channel>`, 1) + omeEnd, ErrOMEInvalid, "Channel/Filter"},
		{"unknown attribute on Image", omeRoot + strings.Replace(omeImage0, `<Image ID="Image:0"`, `<Image ID="Image:0" Foo="1"`, 1) + omeEnd, ErrOMEInvalid, "Image@Foo"},
		{"unknown attribute on Pixels", omeRoot + strings.Replace(omeImage0, `<Pixels `, `<Pixels Foo="1" `, 1) + omeEnd, ErrOMEInvalid, "no attribute Foo on Pixels"},
		{"foreign attribute on Pixels", omeRoot + strings.Replace(omeImage0, `<Pixels `, `<Pixels xmlns:f="urn:f" f:x="1" `, 1) + omeEnd, ErrOMEInvalid, "no attribute f:x on Pixels"},
		{"xml:space on Image", omeRoot + strings.Replace(omeImage0, `<Image ID="Image:0"`, `<Image ID="Image:0" xml:space="preserve"`, 1) + omeEnd, ErrOMEInvalid, "Image@xml:space"},
		{"unknown attribute on Channel", omeRoot + strings.Replace(omeImage0, `<TiffData/>`, `<Channel ID="Channel:0:0" Foo="1"/>`, 1) + omeEnd, ErrOMEInvalid, "no attribute Foo on Channel"},
		{"unknown attribute on Plane", omeRoot + strings.Replace(omeImage0, `<TiffData/>`, `<Plane TheZ="0" TheC="0" TheT="0" Foo="1"/>`, 1) + omeEnd, ErrOMEInvalid, "no attribute Foo on Plane"},
		{"Image ID off the pattern", omeRoot + strings.Replace(omeImage0, `ID="Image:0"`, `ID="img 0"`, 1) + omeEnd, ErrOMEInvalid, `"img 0" is not an ID of the schema's pattern for Image`},
		{"Pixels ID of another kind", omeRoot + strings.Replace(omeImage0, `ID="Pixels:0"`, `ID="Image:1"`, 1) + omeEnd, ErrOMEInvalid, "Pixels@ID"},
		{"Channel ID with a space", omeRoot + strings.Replace(omeImage0, `<TiffData/>`, `<Channel ID="Channel:0 0"/>`, 1) + omeEnd, ErrOMEInvalid, "Channel@ID"},
		{"unknown annotation", omeRoot + `<StructuredAnnotations><NoteAnnotation ID="Annotation:0"/></StructuredAnnotations>` + omeEnd, ErrOMEInvalid, "NoteAnnotation"},
		{"too many attributes", omeRoot + `<StructuredAnnotations><XMLAnnotation ID="Annotation:0"><Value><x ` + manyAttrs(1025) + `/></Value></XMLAnnotation></StructuredAnnotations>` + omeEnd,
			ErrOMETooLarge, "an element of more than 1024 attributes"},
		{"duplicate ID", omeRoot + `<Experimenter ID="Experimenter:0"/><Experimenter ID="Experimenter:0"/>` + omeEnd, ErrOMEInvalid, `Experimenter[1]@ID`},
		{"duplicate ID across kinds", omeRoot + `<Instrument ID="Instrument:0"><Detector ID="X:1"/><Objective ID="X:1"/></Instrument>` + omeEnd, ErrOMEInvalid, `"X:1" is defined already`},
		{"dangling reference", omeRoot + strings.Replace(omeImage0, `<Pixels`, `<InstrumentRef ID="Instrument:9"/><Pixels`, 1) + omeEnd, ErrOMEInvalid, `InstrumentRef@ID`},
		{"reference to the wrong kind", omeRoot + `<Instrument ID="Instrument:0"><Detector ID="Detector:0"/></Instrument>` +
			strings.Replace(omeImage0, `<Pixels`, `<ObjectiveSettings ID="Detector:0"/><Pixels`, 1) + omeEnd, ErrOMEInvalid, "names a Detector, not a Objective"},
		{"dangling annotation", omeRoot + `<StructuredAnnotations><TagAnnotation ID="Annotation:0"><AnnotationRef ID="Annotation:1"/><Value>x</Value></TagAnnotation></StructuredAnnotations>` + omeEnd, ErrOMEInvalid, "Annotation:1"},
		{"dangling annotator", omeRoot + `<StructuredAnnotations><TagAnnotation ID="Annotation:0" Annotator="Experimenter:5"><Value>x</Value></TagAnnotation></StructuredAnnotations>` + omeEnd, ErrOMEInvalid, "Annotator"},
		{"nested too deep", omeRoot + `<StructuredAnnotations><XMLAnnotation ID="Annotation:0"><Value>` + strings.Repeat("<a>", 300) + strings.Repeat("</a>", 300) + `</Value></XMLAnnotation></StructuredAnnotations>` + omeEnd, ErrOMETooLarge, "deeper than 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseOME([]byte(tc.doc))
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, err, ErrMetadata)
			require.NotErrorIs(t, err, ErrOption)
			var oe *OMEError
			require.ErrorAs(t, err, &oe)
			assert.True(t, strings.HasPrefix(err.Error(), "pyramid: "), err.Error())
			assert.Contains(t, err.Error(), tc.where)
		})
	}
}

// TestParseOMETooLarge: 100 MB of XML, past MaxOMEXMLSize, is refused with
// ErrOMETooLarge before it is parsed, so before any file is created.
func TestParseOMETooLarge(t *testing.T) {
	doc := []byte(omeRoot + `<StructuredAnnotations><CommentAnnotation ID="Annotation:0"><Value>`)
	doc = append(doc, bytes.Repeat([]byte("x"), 100<<20)...)
	doc = append(doc, `</Value></CommentAnnotation></StructuredAnnotations>`+omeEnd...)
	_, err := ParseOME(doc)
	require.ErrorIs(t, err, ErrOMETooLarge)
	assert.Contains(t, err.Error(), "104857")
}

// TestParseOMEKeeps: documents of the tools that write OME-TIFFs, and of
// every XML construct a document may use, parse, and copied whole they
// give the same document: every element, attribute and text, in every
// namespace, but for the Pixels' TiffData (the writer's own).
func TestParseOMEKeeps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		doc    string
		images int
	}{
		{"tifffile", tifffileDoc(), 1},
		{"Bio-Formats", bioformatsDoc(), 1},
		{"no images", omeRoot + `<Experimenter ID="Experimenter:0" Email="a@b"/>` + omeEnd, 0},
		{"an encoding declared", `<?xml version="1.0" encoding="ISO-8859-1"?>` + omeRoot + `<Experimenter ID="Experimenter:0" FirstName="Zoé"/>` + omeEnd, 0},
		{"byte order mark", "\uFEFF" + omeRoot + omeImage0 + omeEnd, 1},
		{"UTF-16 declared", `<?xml version="1.0" encoding="UTF-16"?>` + omeRoot + `<Experimenter ID="Experimenter:0"/>` + omeEnd, 0},
		{"prefixed OME", `<?xml version="1.0"?><ome:OME xmlns:ome="http://www.openmicroscopy.org/Schemas/OME/2016-06"><ome:Image ID="Image:0"><ome:Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="1" SizeT="1"><ome:MetadataOnly/></ome:Pixels></ome:Image></ome:OME>`, 1},
		// Pixels whose only children are the writer's own, skipped: the
		// whitespace around them is layout all the same.
		{"indented TiffData only", omeRoot + "\n <Image ID=\"Image:0\">\n  <Pixels ID=\"Pixels:0\" DimensionOrder=\"XYZCT\" Type=\"uint8\" SizeX=\"8\" SizeY=\"8\" SizeZ=\"1\" SizeC=\"1\" SizeT=\"1\">\n   <TiffData IFD=\"0\" PlaneCount=\"1\"/>\n  </Pixels>\n </Image>\n" + omeEnd, 1},
		{"indented MetadataOnly", omeRoot + "<Image ID=\"Image:0\"><Pixels ID=\"Pixels:0\" DimensionOrder=\"XYZCT\" Type=\"uint8\" SizeX=\"8\" SizeY=\"8\" SizeZ=\"1\" SizeC=\"1\" SizeT=\"1\">\n\t<MetadataOnly/>\n</Pixels></Image>" + omeEnd, 1},
		{"constructs", "<!DOCTYPE OME>\n<?pi data?>\n" + omeRoot + "\n  <!-- a comment -->\n  " +
			`<Experimenter ID="Experimenter:0" xml:lang="fr" FirstName="Zoé &amp; &#x1F600;"/>` + "\n  " +
			`<StructuredAnnotations><XMLAnnotation ID="Annotation:0"><Value xmlns:q="urn:q">` +
			"\n    <q:doc q:kind=\"a&lt;b\" plain=\"tab\there\"><![CDATA[<raw> & ]]>text\r\n<inner xmlns=\"urn:inner\"><deeper/></inner></q:doc>  \n" +
			`<OriginalMetadata><Key>k</Key><Value>v</Value></OriginalMetadata></Value></XMLAnnotation>` +
			`<CommentAnnotation ID="Annotation:1"><Description>  spaced  </Description><Value>  </Value></CommentAnnotation></StructuredAnnotations>` + "\n" + omeEnd + "\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseOME([]byte(tc.doc))
			require.NoError(t, err)
			require.Equal(t, tc.images, d.Images())
			var b bytes.Buffer
			w := xmlWriter{b: &b}
			w.copy(d, 0, nil)
			again, err := ParseOME(b.Bytes())
			require.NoError(t, err, b.String())
			var b2 bytes.Buffer
			(&xmlWriter{b: &b2}).copy(again, 0, nil)
			assert.Equal(t, b.String(), b2.String(), "copying is idempotent")
			want, got := omexmltest.Parse(t, []byte(tc.doc)), omexmltest.Parse(t, b.Bytes())
			assert.Empty(t, omexmltest.MissingFrom(want, got), b.String())
			assert.Empty(t, omexmltest.MissingFrom(got, want), "nothing added")
		})
	}
}

// TestOMEErrorKinds: a contradiction with the pixels is ErrOption, the
// rest ErrMetadata.
func TestOMEErrorKinds(t *testing.T) {
	conflict := &OMEError{Err: ErrOMEConflict, Element: "Image/Pixels", Attr: "SizeX", Line: 3, Detail: "512, the image has 256"}
	assert.True(t, errors.Is(conflict, ErrOption))
	assert.False(t, errors.Is(conflict, ErrMetadata))
	assert.Equal(t, "pyramid: OME-XML contradicts the pixels: Image/Pixels@SizeX (line 3): 512, the image has 256", conflict.Error())
}

// TestNSScope: an inner binding of a prefix hides the outer one until it
// goes out of scope; the default namespace unbound is no namespace.
func TestNSScope(t *testing.T) {
	var s nsScope
	lookup := func(prefix string) string {
		space, ok := s.lookup(prefix)
		if !ok {
			return "unbound"
		}
		return space
	}
	assert.Equal(t, "", lookup(""))
	assert.Equal(t, "unbound", lookup("a"))
	s.push("a", "outer")
	s.push("", "default")
	mark := s.len()
	s.push("a", "inner")
	s.push("b", "b")
	assert.Equal(t, "inner", lookup("a"))
	assert.Equal(t, "b", lookup("b"))
	assert.Equal(t, "default", lookup(""))
	s.truncate(mark)
	assert.Equal(t, "outer", lookup("a"))
	assert.Equal(t, "unbound", lookup("b"))
	s.truncate(0)
	assert.Equal(t, "unbound", lookup("a"))
	assert.Equal(t, "", lookup(""))
	assert.Empty(t, s.at, "no binding left behind")
}

// manyAttrs returns n attributes, a0="=" a1="=" ...
func manyAttrs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, ` a%d="="`, i)
	}
	return b.String()
}

// TestCheckOMEXMLLinear: CheckOMEXML copies a []byte once, not once a
// comment (60,000 comments took seconds and gigabytes).
func TestCheckOMEXMLLinear(t *testing.T) {
	doc := []byte(omeRoot + strings.Repeat("<!---->", 60000) + omeEnd)
	allocs := testing.AllocsPerRun(2, func() { require.NoError(t, CheckOMEXML(doc)) })
	assert.LessOrEqual(t, allocs, 1.0)
}

// TestCheckOMEXMLCounts: CheckOMEXML counts the attributes of start tags
// only, 1024 at most: not '=' in values, text, comments, CDATA or
// processing instructions.
func TestCheckOMEXMLCounts(t *testing.T) {
	eq := strings.Repeat("=", 2000)
	ok := omeRoot + `<StructuredAnnotations><XMLAnnotation ID="Annotation:0"><Value><x ` + manyAttrs(1023) + ` b='` + eq + `'>` + eq +
		`<!-- <a ` + eq + ` --><![CDATA[if (a<b) {` + eq + `]]><?pi <a ` + eq + `?></x></Value></XMLAnnotation></StructuredAnnotations>` + omeEnd
	assert.NoError(t, CheckOMEXML([]byte(ok)))
	assert.NoError(t, CheckOMEXML(ok), "as a string")
	_, err := ParseOME([]byte(ok))
	assert.NoError(t, err)

	// Neither does a comment, CDATA, a processing instruction or a
	// declaration hide what follows it, whatever quotes, brackets or tags
	// it holds: each ends where encoding/xml ends it.
	for _, before := range []string{`<!-- <x ' -->`, `<![CDATA[<x "]]>`, `<?pi <x ' ?>`, `<!DOCTYPE OME SYSTEM "x[.dtd">`,
		`<!DOCTYPE OME [<!ENTITY e "[">]>`, `<!DOCTYPE OME SYSTEM "><!--">`, `<!DOCTYPE OME [<!-- ' -->]>`} {
		bad := omeRoot + `<StructuredAnnotations><XMLAnnotation ID="Annotation:0"><Value>` + before + `<x ` + manyAttrs(1025) +
			`/></Value></XMLAnnotation></StructuredAnnotations>` + omeEnd
		assert.ErrorIs(t, CheckOMEXML(bad), ErrOMETooLarge, before)
	}
}
