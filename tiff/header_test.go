package tiff

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseHeaderBigTIFFReservedWord: bytes 6-7 of a BigTIFF header are a
// word that must be 0 (the BigTIFF design); libtiff and tifffile refuse a
// header where it is not, so ParseHeader and Read do too (ErrNotTIFF).
func TestParseHeaderBigTIFFReservedWord(t *testing.T) {
	tests := []struct {
		name   string
		header string
		ok     bool
	}{
		{"LE, 0", "II\x2b\x00\x08\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00", true},
		{"BE, 0", "MM\x00\x2b\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10", true},
		{"LE, 1", "II\x2b\x00\x08\x00\x01\x00\x10\x00\x00\x00\x00\x00\x00\x00", false},
		{"LE, 256", "II\x2b\x00\x08\x00\x00\x01\x10\x00\x00\x00\x00\x00\x00\x00", false},
		{"BE, 1", "MM\x00\x2b\x00\x08\x00\x01\x00\x00\x00\x00\x00\x00\x00\x10", false},
		{"BE, 0xffff", "MM\x00\x2b\x00\x08\xff\xff\x00\x00\x00\x00\x00\x00\x00\x10", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHeader([]byte(tt.header))
			if tt.ok {
				require.NoError(t, err)
				assert.True(t, h.BigTIFF)
				assert.Equal(t, uint64(16), h.FirstIFD)
				return
			}
			require.ErrorIs(t, err, ErrNotTIFF)
			assert.ErrorContains(t, err, "bad BigTIFF header")
			// Read, which parses the header first, refuses the file too.
			file := append([]byte(tt.header), make([]byte, 64)...)
			_, err = Read(bytes.NewReader(file), int64(len(file)))
			assert.ErrorIs(t, err, ErrNotTIFF)
		})
	}
}
