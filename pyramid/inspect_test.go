package pyramid

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
