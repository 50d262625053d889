package tiff

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
)

// TestReadSRationalSigned: an SRATIONAL read from a file of either byte
// order keeps its signs (each half is an SLONG, swapped on its own):
// -1/2 is -0.5, 1/-2 too.
func TestReadSRationalSigned(t *testing.T) {
	le := binary.LittleEndian
	value := le.AppendUint32(nil, uint32(0xffffffff)) // -1
	value = le.AppendUint32(value, 2)
	value = le.AppendUint32(value, 1)
	value = le.AppendUint32(value, uint32(0xfffffffe)) // -2
	for name, f := range map[string]ifd.Format{"classic LE": {}, "classic BE": {Order: binary.BigEndian},
		"BigTIFF LE": {BigTIFF: true}, "BigTIFF BE": {Order: binary.BigEndian, BigTIFF: true}} {
		t.Run(name, func(t *testing.T) {
			var b ifd.Builder
			b.AddShort(TagImageWidth, 1)
			b.Add(ifd.Entry{Tag: 404, Type: ifd.SRational, Count: 2, Value: value})
			data := oneDirectory(t, &b, f)
			file, err := Read(bytes.NewReader(data), int64(len(data)))
			require.NoError(t, err)
			e, ok := file.Pages[0].Field(404)
			require.True(t, ok)
			got, err := e.Floats()
			require.NoError(t, err)
			assert.Equal(t, []float64{-0.5, -0.5}, got)
		})
	}
}
