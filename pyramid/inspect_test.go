package pyramid

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/ndpitest"
)

// TestInspectSummary: Inspect's summary of an OME-TIFF written field by
// field, whose OME-XML leaves out a unit and a size.
func TestInspectSummary(t *testing.T) {
	data := tinyOMETIFF(t)
	var out bytes.Buffer
	require.NoError(t, Inspect(&out, bytes.NewReader(data), int64(len(data)), InspectOptions{}))
	assert.Equal(t, `classic TIFF, little-endian, 382 bytes, 1 IFD in the main chain
OME-XML: 182 bytes, 1 image, UUID u, creator "c"
  Image:0 "a": 1 x 1, Z 1, C 1, T 1, uint8, XYZCT, 0 planes in TiffData, pixel 1 µm x unknown
IFD 0: 1 x 1, 1 x uint1, tiles 16 x 16 (1 x 1), none, 1 bytes
    SubIFD 0.1: 1 x 1, 1 x uint1, tiles 16 x 16 (1 x 1), none, 1 bytes
`, out.String())
}

// TestInspectOMEStringsPlain: strings of the OME-XML that are not one
// printable line are printed quoted, so that none passes for a line of
// the report or a terminal control.
func TestInspectOMEStringsPlain(t *testing.T) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	summarizeOME(w, `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="u&#x9b;2J"><Image ID="Image:0&#10;IFD 7: forged" Name="x">`+
		`<AcquisitionDate>2024-01-01T00:00:00</AcquisitionDate><Pixels DimensionOrder="XYZCT" Type="uint8" SizeX="1" SizeY="1" SizeZ="1" SizeC="1" SizeT="1"><TiffData/></Pixels></Image></OME>`)
	require.NoError(t, w.Flush())
	assert.Equal(t, `OME-XML: 309 bytes, 1 image, UUID "u\u009b2J", creator ""`+"\n"+
		`  "Image:0\nIFD 7: forged" "x": 1 x 1, Z 1, C 1, T 1, uint8, XYZCT, 1 plane in TiffData, acquired 2024-01-01T00:00:00`+"\n", b.String())
}

// TestInspectOMEFieldsLeftOut: fields a document leaves out are said to
// be, not shown empty.
func TestInspectOMEFieldsLeftOut(t *testing.T) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	summarizeOME(w, `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0" Name="x">`+
		`<Pixels SizeX="1" SizeY="1" SizeZ="1" SizeC="1" SizeT="1"><Channel ID="Channel:0:0"/><TiffData/></Pixels></Image></OME>`)
	require.NoError(t, w.Flush())
	assert.Equal(t, `OME-XML: 211 bytes, 1 image, no UUID, creator ""`+"\n"+
		`  Image:0 "x": 1 x 1, Z 1, C 1, T 1, no type, no DimensionOrder, 1 plane in TiffData`+"\n"+
		`    channel 0, SamplesPerPixel not said`+"\n", b.String())
}

// TestInspectOMETooManyAttributes: a document CheckOMEXML refuses is not
// parsed for the summary either.
func TestInspectOMETooManyAttributes(t *testing.T) {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	doc := omeRoot + "\n<Experimenter ID=\"Experimenter:0\"" + manyAttrs(1025) + "/>" + omeEnd
	summarizeOME(w, doc)
	require.NoError(t, w.Flush())
	assert.Equal(t, fmt.Sprintf("OME-XML: %d bytes, not read: pyramid: OME-XML is too large (line 2): an element of more than 1024 attributes\n", len(doc)), b.String())
}

// TestInspectNDPI: Inspect names an NDPI's layout, as tiff.Dump does.
func TestInspectNDPI(t *testing.T) {
	data, err := ndpitest.File(ndpitest.Page{Width: 32, Height: 16, RGB: ndpitest.Pattern(32, 16, 0), Interval: 1, Magnification: 20})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Inspect(&out, bytes.NewReader(data), int64(len(data)), InspectOptions{}))
	assert.True(t, strings.HasPrefix(out.String(), "classic TIFF with NDPI's 64-bit offsets, little-endian, "), out.String())
}
