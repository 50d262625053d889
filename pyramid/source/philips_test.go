package source

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/ndpitest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// philipsJPEG returns a w × h JPEG of ndpitest's pattern: RGB (4:2:0)
// or gray.
func philipsJPEG(t testing.TB, w, h int, gray bool) []byte {
	t.Helper()
	rgb := ndpitest.Pattern(w, h, 3)
	var m image.Image
	if gray {
		g := image.NewGray(image.Rect(0, 0, w, h))
		for i := range g.Pix {
			g.Pix[i] = rgb[3*i]
		}
		m = g
	} else {
		c := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range w * h {
			copy(c.Pix[4*i:], []byte{rgb[3*i], rgb[3*i+1], rgb[3*i+2], 0xff})
		}
		m = c
	}
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, m, &jpeg.Options{Quality: 95}))
	return buf.Bytes()
}

// philipsXML is a Philips slide's description whose scanned images are
// the WSI (of one level, as OpenSlide needs its pixel spacing) and, as PIM_DP_IMAGE_TYPE and PIM_DP_IMAGE_DATA, those given:
// type, then its base64 data (broken in lines of 76, as MIME writes it).
func philipsXML(images ...string) string {
	attr := func(name, value string) string {
		return `<Attribute Name="` + name + `" Group="0x301D" Element="0x1002" PMSVR="IString">` + value + `</Attribute>`
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" ?>` + "\n" + `<DataObject ObjectType="DPUfsImport">`)
	b.WriteString(`<Attribute Name="PIM_DP_SCANNED_IMAGES" Group="0x1001" Element="0x0001" PMSVR="IDataObjectArray"><Array>`)
	b.WriteString(`<DataObject ObjectType="DPScannedImage">` + attr("PIM_DP_IMAGE_TYPE", "WSI") +
		`<Attribute Name="PIIM_PIXEL_DATA_REPRESENTATION_SEQUENCE" PMSVR="IDataObjectArray"><Array><DataObject ObjectType="PixelDataRepresentation">` +
		attr("PIIM_DP_PIXEL_DATA_REPRESENTATION_NUMBER", "0") + attr("DICOM_PIXEL_SPACING", "&quot;0.00025&quot; &quot;0.00025&quot;") +
		`</DataObject></Array></Attribute></DataObject>`)
	for i := 0; i+1 < len(images); i += 2 {
		data := images[i+1]
		var lines []string
		for len(data) > 76 {
			lines, data = append(lines, data[:76]), data[76:]
		}
		// The data before the type: the order of a DataObject's attributes is free.
		b.WriteString(`<DataObject ObjectType="DPScannedImage">` + attr("PIM_DP_IMAGE_DATA", strings.Join(append(lines, data), "\n")) +
			attr("PIM_DP_IMAGE_TYPE", images[i]) + `</DataObject>`)
	}
	b.WriteString(`</Array></Attribute></DataObject>`)
	return b.String()
}

// TestPhilipsXMLImages: the label and macro a Philips slide holds as
// base64 JPEG in its XML are images named "label" and "macro", of the
// JPEGs' samples, as OpenSlide reads them; a second LABELIMAGE is not
// read, and an image a page already holds is not read from the XML.
func TestPhilipsXMLImages(t *testing.T) {
	label, macro := philipsJPEG(t, 40, 24, false), philipsJPEG(t, 30, 20, true)
	enc := base64.StdEncoding.EncodeToString
	xml := philipsXML("LABELIMAGE", enc(label), "MACROIMAGE", enc(macro), "LABELIMAGE", enc(macro))
	f, _, err := mapPages(t, Options{}, gray(64, 48, description(xml), ascii(tiff.TagSoftware, "Philips DP v1.0")))
	require.NoError(t, err)
	assert.Equal(t, Philips, f.Kind)
	assert.Equal(t, "Philips", f.Kind.String())
	// Their pages are no page of the file's (-1).
	assert.Equal(t, []string{`"" 64x48 Z1 C1 T1 XYCZT uint16 x1: 0:*`, `"label" 40x24 Z1 C1 T1 XYCZT uint8 x3: -1:*`, `"macro" 30x20 Z1 C1 T1 XYCZT uint8 x1: -1:*`},
		summary(f))
	assert.Equal(t, []string{"decoded from the base64 JPEG of LABELIMAGE in the Philips XML, as OpenSlide reads it"}, f.Images[1].Notes)
	// The slide's description keeps the XML, less the images' base64.
	assert.NotContains(t, f.Images[0].Spec.Description, enc(label)[:76])
	assert.Contains(t, f.Images[0].Spec.Description, `<Attribute Name="PIM_DP_IMAGE_DATA" Group="0x301D" Element="0x1002" PMSVR="IString"></Attribute>`)
	assert.Contains(t, f.Images[0].Spec.Description, `DICOM_PIXEL_SPACING`)
	assert.Contains(t, f.Images[0].Notes, fmt.Sprintf("the base64 data of 3 image(s) in its Philips XML (PIM_DP_IMAGE_DATA, %d bytes) is left out of its description",
		len(xml)-len(f.Images[0].Spec.Description)))
	for i, want := range [][]byte{label, macro} {
		m, err := jpeg.Decode(bytes.NewReader(want))
		require.NoError(t, err)
		got := readPlane(t, f.Images[i+1].Planes[0].Page)
		samples := f.Images[i+1].Spec.SamplesPerPixel
		require.Len(t, got, m.Bounds().Dx()*m.Bounds().Dy()*samples)
		sum := 0
		for p := range m.Bounds().Dx() * m.Bounds().Dy() {
			r, g, b, _ := m.At(p%m.Bounds().Dx(), p/m.Bounds().Dx()).RGBA()
			for s, v := range []uint32{r, g, b}[:samples] {
				d := int(got[p*samples+s]) - int(v>>8)
				sum += max(d, -d)
			}
		}
		// image/jpeg upsamples chroma by repetition, the reader by the
		// triangle filter libjpeg uses: a small difference.
		assert.Less(t, float64(sum)/float64(len(got)), 2.0, "image %d: the mean difference from image/jpeg's samples", i+1)
	}

	f, _, err = mapPages(t, Options{}, gray(64, 48, description(xml)), gray(20, 30, description("Label")))
	require.NoError(t, err)
	assert.Equal(t, TIFF, f.Kind, "no Software of Philips': read the same, named a TIFF, as OpenSlide would not take it")
	f, _, err = mapPages(t, Options{}, gray(64, 48, description(xml)), gray(20, 30, description("Label")))
	require.NoError(t, err)
	assert.Equal(t, []string{"", "label", "macro"}, []string{f.Images[0].Spec.Name, f.Images[1].Spec.Name, f.Images[2].Spec.Name})
	assert.Equal(t, 20, f.Images[1].Spec.SizeX, "the label page's")
}

// TestPhilipsXMLImagesBad: an embedded image that is not base64, not a
// JPEG, too large or cut short is refused, saying which, or with
// SkipUnsupported left out with the other images read; a document that
// does not parse leaves the embedded images unread, in a note.
func TestPhilipsXMLImagesBad(t *testing.T) {
	macro := base64.StdEncoding.EncodeToString(philipsJPEG(t, 30, 20, true))
	huge := philipsJPEG(t, 8, 8, true)
	huge[bytes.Index(huge, []byte{0xff, 0xc0})+5] = 0xff // 65288 x 8 rows ...
	huge[bytes.Index(huge, []byte{0xff, 0xc0})+7] = 0xff // ... of 65288
	cut := philipsJPEG(t, 40, 24, false)
	cut = append(cut[:len(cut)-40:len(cut)-40], 0xff, 0xd9)
	// 501 scans more, which image/jpeg would decode each in full.
	scans := philipsJPEG(t, 8, 8, true)
	sos := scans[bytes.Index(scans, []byte{0xff, 0xda}):]
	sos = sos[:2+(int(sos[2])<<8|int(sos[3]))]
	scans = append(append(scans[:len(scans)-2:len(scans)-2], bytes.Repeat(append(sos, 0), 501)...), 0xff, 0xd9)
	tests := []struct {
		name, label string
		is          error
		says        string
	}{
		{"not base64", "@@@@", ErrMetadata, "the label in the Philips XML (LABELIMAGE's PIM_DP_IMAGE_DATA): source: bad metadata: no base64 data (0 characters of it)"},
		{"not a JPEG", base64.StdEncoding.EncodeToString([]byte("GIF89a")), ErrUnsupported, "a JPEG image/jpeg does not read"},
		{"too large", base64.StdEncoding.EncodeToString(huge), ErrSize, "a JPEG of 65288 x 65288 pixels, more than 4194304"},
		{"cut short", base64.StdEncoding.EncodeToString(cut), ErrUnsupported, "a JPEG image/jpeg does not decode"},
		{"too many scans", base64.StdEncoding.EncodeToString(scans), ErrUnsupported, "JPEG: more than 500 scans"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xml := philipsXML("LABELIMAGE", tt.label, "MACROIMAGE", macro)
			_, _, err := mapPages(t, Options{}, gray(64, 48, description(xml)))
			require.ErrorIs(t, err, tt.is)
			assert.ErrorContains(t, err, tt.says)
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, gray(64, 48, description(xml)))
			require.NoError(t, err)
			assert.Equal(t, []string{"", "macro"}, []string{f.Images[0].Spec.Name, f.Images[1].Spec.Name})
			require.Len(t, f.Skipped, 1)
			assert.ErrorIs(t, f.Skipped[0], tt.is)
			assert.ErrorIs(t, f.Skipped[0], ErrLeftOut)
		})
	}
	broken := strings.Replace(philipsXML("MACROIMAGE", macro), "</DataObject>", "</Data>", 1)
	f, _, err := mapPages(t, Options{}, gray(64, 48, description(broken)))
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	assert.Empty(t, f.Skipped)
	require.Len(t, f.Images[0].Notes, 1, "the base64 kept in the description: the only place it is")
	assert.Contains(t, f.Images[0].Notes[0], "its Philips XML does not parse (XML syntax error on line 2: element <DataObject> closed by </Data>): a label or macro it holds is not read")
	// Read within the bounds of the other slides' XML.
	deep := strings.Replace(philipsXML("MACROIMAGE", macro), "</DataObject>", strings.Repeat("<x>", 40)+strings.Repeat("</x>", 40)+"</DataObject>", 1)
	f, _, err = mapPages(t, Options{}, gray(64, 48, description(deep)))
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	require.Len(t, f.Images[0].Notes, 1)
	assert.Contains(t, f.Images[0].Notes[0], "its Philips XML does not parse (XML past its bounds: elements nested more than 32 deep)")
}

// TestPhilipsXMLPaths: as OpenSlide's XPath selects them, only the
// DataObjects of the root's PIM_DP_SCANNED_IMAGES are images, the first of
// a type is the one (with its data or none), its type's text exact; a
// document in ISO-8859-1 is read.
func TestPhilipsXMLPaths(t *testing.T) {
	label := base64.StdEncoding.EncodeToString(philipsJPEG(t, 40, 24, false))
	names := func(t *testing.T, xml string) []string {
		t.Helper()
		f, _, err := mapPages(t, Options{}, gray(64, 48, description(xml)))
		require.NoError(t, err)
		var out []string
		for _, im := range f.Images {
			out = append(out, im.Spec.Name)
		}
		return out
	}
	assert.Equal(t, []string{"", "label"}, names(t, philipsXML("LABELIMAGE", label)))
	// Inside the WSI's DataObject, a level below.
	nested := strings.Replace(philipsXML("LABELIMAGE", label), `</Attribute></DataObject><DataObject ObjectType="DPScannedImage">`, `</Attribute><DataObject ObjectType="DPScannedImage">`, 1)
	nested = strings.Replace(nested, `LABELIMAGE</Attribute></DataObject>`, `LABELIMAGE</Attribute></DataObject></DataObject>`, 1)
	assert.Equal(t, []string{""}, names(t, nested))
	assert.Equal(t, []string{""}, names(t, philipsXML("LABELIMAGE", "", "LABELIMAGE", label)), "the first, without data")
	assert.Equal(t, []string{""}, names(t, philipsXML(" LABELIMAGE", label)), "a type not exact")
	latin := strings.Replace(philipsXML("LABELIMAGE", label), `encoding="UTF-8"`, `encoding="ISO-8859-1"`, 1)
	assert.Equal(t, []string{"", "label"}, names(t, latin))
}

// TestPhilipsLabelPages: in a Philips slide, pages described "Label..."
// and "Macro..." are the label and macro (then not read from the XML), as
// OpenSlide matches them; in another TIFF such a page keeps no such name.
func TestPhilipsLabelPages(t *testing.T) {
	xml := philipsXML("LABELIMAGE", base64.StdEncoding.EncodeToString(philipsJPEG(t, 40, 24, false)))
	f, _, err := mapPages(t, Options{}, gray(64, 48, description(xml)), gray(20, 30, description("Label image")), gray(30, 20, description("Macro image")))
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 64x48 Z1 C1 T1 XYCZT uint16 x1: 0:*`, `"label" 20x30 Z1 C1 T1 XYCZT uint16 x1: 1:*`, `"macro" 30x20 Z1 C1 T1 XYCZT uint16 x1: 2:*`}, summary(f))
	f, _, err = mapPages(t, Options{}, gray(64, 48), gray(20, 30, description("Label image")))
	require.NoError(t, err)
	assert.Equal(t, "", f.Images[1].Spec.Name)
}

// FuzzPhilipsDescription maps a Philips slide whose XML is arbitrary,
// seeded with one holding a label and a macro as base64 JPEG.
func FuzzPhilipsDescription(f *testing.F) {
	enc := base64.StdEncoding.EncodeToString
	withProperties := strings.Replace(philipsXML(), `<DataObject ObjectType="DPUfsImport">`, `<DataObject ObjectType="DPUfsImport">`+
		`<Attribute Name="DICOM_DERIVATION_DESCRIPTION">tiff-levels=40,10002-q80</Attribute><Attribute Name="PIM_DP_UFS_BARCODE">UzEyMw==</Attribute>`, 1)
	fuzzDescription(f, []string{philipsXML("LABELIMAGE", enc(philipsJPEG(f, 16, 8, false)), "MACROIMAGE", enc(philipsJPEG(f, 8, 8, true))), withProperties},
		gray(16, 16))
}

// TestWithoutImageData: the base64 text of each PIM_DP_IMAGE_DATA Attribute
// element goes, whatever its quotes and other attributes, and nothing
// else; the XML stays well formed.
func TestWithoutImageData(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		n        int
	}{
		{"<Attribute Name=\"PIM_DP_IMAGE_DATA\">QUJD\nREVG=</Attribute><B>keep</B>", `<Attribute Name="PIM_DP_IMAGE_DATA"></Attribute><B>keep</B>`, 1},
		{`<Attribute Name='PIM_DP_IMAGE_DATA' X="1">QUJD</Attribute>`, `<Attribute Name='PIM_DP_IMAGE_DATA' X="1"></Attribute>`, 1},
		{`<Attribute X="a>b" Name="PIM_DP_IMAGE_DATA" Note="c>d">QUJD</Attribute>`, `<Attribute X="a>b" Name="PIM_DP_IMAGE_DATA" Note="c>d"></Attribute>`, 1},
		{`<Attribute Name="PIM_DP_IMAGE_DATA"/>QUJD<B/>`, `<Attribute Name="PIM_DP_IMAGE_DATA"/>QUJD<B/>`, 0},
		{`<Attribute Name="PIM_DP_IMAGE_DATA_X">QUJD</Attribute><C>PIM_DP_IMAGE_DATA</C>`, `<Attribute Name="PIM_DP_IMAGE_DATA_X">QUJD</Attribute><C>PIM_DP_IMAGE_DATA</C>`, 0},
		{`<Attribute Name="PIM_DP_IMAGE_TYPE">"PIM_DP_IMAGE_DATA"</Attribute>keep<B/>`, `<Attribute Name="PIM_DP_IMAGE_TYPE">"PIM_DP_IMAGE_DATA"</Attribute>keep<B/>`, 0},
		{`<Attribute Name="PIM_DP_IMAGE_DATA">not base64!</Attribute>`, `<Attribute Name="PIM_DP_IMAGE_DATA">not base64!</Attribute>`, 0},
		{`<Attribute Name="PIM_DP_IMAGE_DATA">QUJD</Attribute><Attribute Name="PIM_DP_IMAGE_DATA">REVG</Attribute>`,
			`<Attribute Name="PIM_DP_IMAGE_DATA"></Attribute><Attribute Name="PIM_DP_IMAGE_DATA"></Attribute>`, 2},
		{`<Attribute Name="PIM_DP_IMAGE_DATA">QUJD`, `<Attribute Name="PIM_DP_IMAGE_DATA">QUJD`, 0}, // cut short: left as it is
	} {
		got, n := withoutImageData(tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.n, n, tc.in)
		if strings.HasSuffix(tc.in, ">") {
			assert.NoError(t, xml.Unmarshal([]byte("<r>"+got+"</r>"), new(struct{})), tc.in)
		}
	}
}

// TestPhilipsProperties: what OpenSlide maps of a Philips slide's
// description besides its pixel size: the objective's magnification from
// DICOM_DERIVATION_DESCRIPTION's first "levels=" entry (one past 200 is
// no magnification, and a sourceFilename before it ends the search), and
// the base64 barcode, as an annotation.
func TestPhilipsProperties(t *testing.T) {
	attr := func(name, value string) string {
		return `<Attribute Name="` + name + `" Group="0x0008" Element="0x2111" PMSVR="IString">` + value + `</Attribute>`
	}
	barcode := attr("PIM_DP_UFS_BARCODE", base64.StdEncoding.EncodeToString([]byte("S-1234\x1b")))
	tests := []struct {
		name, derivation string
		mag              float64
	}{
		{"magnification", "tiff-useBigTIFF=1-useRgb=0-levels=40,10002,10000,10001-processing=0-q80-sourceFilename=&quot;T11-07929-I1-5&quot;", 40},
		{"a level number", "tiff-useBigTIFF=1-levels=10003,10002-processing=0", 0},
		{"levels after sourceFilename", "tiff-sourceFilename=&quot;a-levels=20&quot;-levels=20", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xml := strings.Replace(philipsXML(), `<DataObject ObjectType="DPUfsImport">`,
				`<DataObject ObjectType="DPUfsImport">`+attr("DICOM_DERIVATION_DESCRIPTION", tt.derivation)+barcode, 1)
			f, _, err := mapPages(t, Options{}, gray(64, 48, description(xml), ascii(tiff.TagSoftware, "Philips DP v1.0")))
			require.NoError(t, err)
			s := f.Images[0].Spec
			assert.Equal(t, [2]float64{0.25, 0.25}, [2]float64{s.PhysicalSizeX, s.PhysicalSizeY})
			if tt.mag > 0 {
				assert.Equal(t, &pyramid.Instrument{Objectives: []pyramid.Objective{{NominalMagnification: tt.mag}}}, s.Instrument)
			} else {
				assert.Nil(t, s.Instrument)
			}
			assert.Contains(t, s.Annotations, pyramid.KeyValue{Key: "Barcode", Value: "S-1234"})
		})
	}
}
