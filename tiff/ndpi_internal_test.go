package tiff

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jpegHeader returns the markers of a baseline JPEG's header: a
// quantization table, the frame (rows x cols, YCbCr 4:2:0), the extra
// segments, a restart interval of 4 MCUs and the scan.
func jpegHeader(rows, cols uint16, extra ...[]byte) []byte {
	seg := func(marker byte, body []byte) []byte {
		return append([]byte{0xff, marker, byte((len(body) + 2) >> 8), byte(len(body) + 2)}, body...)
	}
	b := []byte{0xff, 0xd8}
	b = append(b, seg(0xdb, make([]byte, 65))...)
	frame := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16([]byte{8}, rows), cols)
	b = append(b, seg(0xc0, append(frame, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1))...)
	for _, e := range extra {
		b = append(b, e...)
	}
	b = append(b, seg(0xdd, []byte{0, 4})...)
	return append(b, seg(0xda, []byte{3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0})...)
}

// TestNDPIHeaderSides: a JPEG frame holds sides of 16 bits; NDP.scan
// writes 0, or the low bits, for a page past 65535 pixels, which is read
// as the page's, as OpenSlide and tifffile read it. Other sides that
// differ from the page's are refused.
func TestNDPIHeaderSides(t *testing.T) {
	tests := []struct {
		rows, cols    uint16
		height, width uint64
		ok            bool
	}{
		{16, 64, 16, 64, true},
		{16, 0, 16, 65536, true},
		{16, 70000 - 65536, 16, 70000, true},
		{0, 64, 100000, 64, true},
		{16, 5, 16, 70000, false},
		{16, 0, 16, 64, false},
		{17, 64, 16, 64, false},
	}
	for _, tt := range tests {
		h, err := parseNDPIHeader(jpegHeader(tt.rows, tt.cols), tt.width, tt.height)
		if !tt.ok {
			assert.Error(t, err, "%+v", tt)
			continue
		}
		require.NoError(t, err, "%+v", tt)
		assert.Equal(t, [3]int{4, 16, 16}, [3]int{h.interval, h.mcuWidth, h.mcuHeight})
		sof := bytes.Index(h.tile, []byte{0xff, 0xc0})
		assert.Equal(t, []byte{0, 16, 0, 64}, h.tile[sof+5:sof+9], "the tile's frame: 16 rows of 4 MCUs")
	}
}

// TestNDPIHeaderSegments: a tile's header keeps the tables, the frame,
// the scan and Adobe's segment, never the strip's other segments (which
// would be copied into every tile), nor its restart interval; tables past
// maxTileHeader are refused.
func TestNDPIHeaderSegments(t *testing.T) {
	app := func(marker byte, n int) []byte {
		return append([]byte{0xff, marker, byte((n + 2) >> 8), byte(n + 2)}, make([]byte, n)...)
	}
	h, err := parseNDPIHeader(jpegHeader(16, 64, app(0xe1, 60000), app(0xfe, 100), app(0xee, 12)), 64, 16)
	require.NoError(t, err)
	assert.Less(t, len(h.tile), 200)
	assert.Less(t, cap(h.tile), 256, "the header each page keeps, not the 60 KB it was cut from")
	assert.True(t, bytes.Contains(h.tile, []byte{0xff, 0xee}), "Adobe's segment kept")
	for _, marker := range []byte{0xe1, 0xfe, 0xdd} {
		assert.False(t, bytes.Contains(h.tile, []byte{0xff, marker}), "segment %#x left out", marker)
	}
	_, err = parseNDPIHeader(jpegHeader(16, 64, app(0xdb, 60000)), 64, 16)
	assert.ErrorContains(t, err, "tables of more than 16384 bytes")
}

// TestNDPISeed: FuzzRead's NDPI seed is read in the NDPI layout, its
// ASCII value out of line and its strip offset widened to 64 bits.
func TestNDPISeed(t *testing.T) {
	f, err := Read(bytes.NewReader(ndpiSeed()), int64(len(ndpiSeed())))
	require.NoError(t, err)
	require.True(t, f.NDPI)
	artist, _ := f.Pages[0].Text(TagArtist)
	assert.Equal(t, "abc", artist)
	strip, _ := f.Pages[0].Field(TagStripOffsets)
	assert.Equal(t, ifd.Long8, strip.Type)
	v, _ := strip.Uint()
	assert.Equal(t, uint64(1<<32), v)
}
