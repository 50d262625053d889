package source

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/omexmltest"
)

// referenceParseOME decodes a document into omeDoc with encoding/xml, by
// the struct tags: what parseOME reads, done the slow way.
func referenceParseOME(text string) (*omeDoc, error) {
	d := xml.NewDecoder(strings.NewReader(text))
	d.Strict = true
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		if s, ok := tok.(xml.StartElement); ok {
			if s.Name.Local != "OME" {
				return nil, fmt.Errorf("root %s", s.Name.Local)
			}
			var doc omeDoc
			if err := d.DecodeElement(&doc, &s); err != nil {
				return nil, err
			}
			return &doc, nil
		}
	}
}

// referencedMaps keeps the MapAnnotations an Image refers to.
func referencedMaps(doc *omeDoc) {
	refs := map[string]bool{}
	for _, im := range doc.Images {
		for _, r := range im.AnnotationRefs {
			refs[r.ID] = true
		}
	}
	doc.Maps = slices.DeleteFunc(doc.Maps, func(m omeMap) bool { return !refs[m.ID] })
	if len(doc.Maps) == 0 {
		doc.Maps = nil
	}
}

// checkParseOME compares parseOME with referenceParseOME on a document:
// both refuse it, or both read the same (the MapAnnotations no Image
// refers to aside). The differences allowed: an end tag naming the
// element with another prefix bound to the same namespace, which the
// reference lets pass and XML forbids (the end tag's name must match the
// start tag's), an attribute written twice, which XML forbids too, and
// elements nested deeper than maxOMEDepth.
func checkParseOME(t *testing.T, text string) {
	t.Helper()
	got, err := parseOME(text)
	want, wantErr := referenceParseOME(text)
	if wantErr != nil {
		require.Error(t, err, "the reference refuses it: %v", wantErr)
		return
	}
	if err != nil {
		if m := endTagError.FindStringSubmatch(err.Error()); m != nil && local(m[1]) == local(m[2]) && m[1] != m[2] {
			return // <a:x>...</b:x>
		}
		if strings.Contains(err.Error(), "nested deeper than") || attrTwice.MatchString(err.Error()) {
			return
		}
	}
	require.NoError(t, err)
	referencedMaps(want)
	referencedMaps(got)
	require.Equal(t, want, got)
}

// endTagError is parseOME's error of an end tag that does not close the
// element open; local is a name's local part.
var endTagError = regexp.MustCompile(`element <([^>]*)> closed by </([^>]*)>`)

// attrTwice is parseOME's error of an element with an attribute twice.
var attrTwice = regexp.MustCompile(`element <[^>]*> has attribute \S+ twice`)

func local(name string) string { return name[strings.LastIndex(name, ":")+1:] }

// omeParseDocs are documents that exercise what parseOME reads.
var omeParseDocs = []string{
	omeDocument("", pixels(2, 1, 1, "XYZCT", `<TiffData/>`)),
	omeDocument(`UUID="urn:uuid:1"`, pixels(1, 2, 1, "XYCZT", `<TiffData IFD="1" FirstC="1" PlaneCount="1"><UUID FileName="test.tif">urn:uuid:1</UUID></TiffData><TiffData IFD="0"/>`)),
	omeDocument("", `<AcquisitionDate>2021-03-04T05:06:07Z</AcquisitionDate><Description>a <b>bold</b> &amp; <![CDATA[<raw>]]> text<!-- no --></Description>`+
		pixels(1, 1, 1, "XYZCT", `<Channel Name="a" Color=" -1 " SamplesPerPixel=""/><TiffData IFD=" 2 "><UUID>u</UUID><UUID FileName="f">v</UUID></TiffData>`)+
		`<Pixels SizeX="9" PhysicalSizeX="0.5e1"><Channel/></Pixels><AnnotationRef ID="Annotation:1"/>`),
	`<ome:OME xmlns:ome="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="u"><ome:Image ID="Image:0"><ome:Pixels SizeX="1" SizeY="1"><ome:TiffData/></ome:Pixels><ome:AnnotationRef ID="A:0"/></ome:Image>` +
		`<ome:StructuredAnnotations><ome:MapAnnotation ID="A:0"><ome:Value><ome:M K="k">v</ome:M><ome:M K="k2"/></ome:Value></ome:MapAnnotation><ome:MapAnnotation ID="A:1"><ome:Value><ome:M K="x">y</ome:M></ome:Value></ome:MapAnnotation></ome:StructuredAnnotations></ome:OME><!-- after -->`,
	// A MapAnnotation before the Image that refers to it: out of the
	// schema's order, read in a second pass.
	`<OME><StructuredAnnotations><MapAnnotation ID="A:0"><Value><M K="k">v</M></Value></MapAnnotation></StructuredAnnotations><Image ID="Image:0"><AnnotationRef ID="A:0"/></Image></OME>`,
	`<OME><BinaryOnly MetadataFile="a.companion.ome" UUID="u"/><BinaryOnly UUID="w"/></OME>`,
	`<OME><Image><Pixels><MetadataOnly/></Pixels></Image><Image><Pixels><BinData BigEndian="false">AAAA</BinData><BinData/></Pixels></Image></OME>`,
	`<OME/>`,
	`<?xml version="1.0" encoding="UTF-16"?><OME><Image><Pixels SizeZ="0"/></Image></OME>`,
	// An end tag with another prefix of the same namespace: XML refuses
	// it, encoding/xml's Token does not.
	`<OME xmlns:a="urn:u" xmlns:b="urn:u"><a:x></b:x></OME>`,
	// Refused.
	`<Image/>`,
	`<OME><Image></OME>`,
	`<OME><Image>`,
	``,
	`</OME>`,
	`<OME><Image><Pixels SizeX="-1"/></Image></OME>`,
	`<OME><Image><Pixels><Channel Color="4294967295"/></Pixels></Image></OME>`,
	`<OME><Image><Pixels PhysicalSizeX="1e999"/></Image></OME>`,
	`<OME><Image><Pixels><TiffData IFD="two"/></Pixels></Image></OME>`,
	`<OME><Image ID="a" ID="b"/></OME>`,
	"<OME>\xff</OME>",
}

// TestParseOMEReference: parseOME reads what encoding/xml reads by the
// struct tags of omeDoc, from the documents above and the rich document
// of the OME model's tests.
func TestParseOMEReference(t *testing.T) {
	for i, text := range append(omeParseDocs, omexmltest.RichDoc()) {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkParseOME(t, text) })
	}
}

// TestParseOMELimits: a document nested deeper than maxOMEDepth is
// refused, as pyramid.ParseOME refuses it. (One larger than the writer
// carries is mapped: its images keep their typed metadata with
// SkipUnsupported.)
func TestParseOMELimits(t *testing.T) {
	deep := "<OME>" + strings.Repeat("<a>", maxOMEDepth) + strings.Repeat("</a>", maxOMEDepth) + "</OME>"
	_, err := parseOME(deep)
	require.ErrorIs(t, err, ErrMetadata)
	assert.Contains(t, err.Error(), "nested deeper than 256")
	_, err = parseOME("<OME>" + strings.Repeat("<a>", maxOMEDepth-1) + strings.Repeat("</a>", maxOMEDepth-1) + "</OME>")
	assert.NoError(t, err, "the root and 255 levels in it: 256")
}

// TestParseOMEOutOfOrder: a MapAnnotation an Image after it refers to is
// read, by the second pass.
func TestParseOMEOutOfOrder(t *testing.T) {
	doc, err := parseOME(omeParseDocs[4])
	require.NoError(t, err)
	require.Equal(t, []omeMap{{ID: "A:0", Values: []omeMapEntry{{Key: "k", Value: "v"}}}}, doc.Maps)
}

// FuzzParseOME compares parseOME with referenceParseOME on arbitrary
// documents.
func FuzzParseOME(f *testing.F) {
	for _, d := range append(omeParseDocs, omexmltest.RichDoc()) {
		f.Add(d)
	}
	f.Fuzz(checkParseOME)
}
