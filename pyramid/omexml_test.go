package pyramid

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
