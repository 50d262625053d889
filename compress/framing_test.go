package compress

import (
	"bytes"
	"image"
	"image/jpeg"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/tiff"
)

// TestCheckFraming: every codec's own blocks pass, and blocks cut short or
// read at a wrong offset (a TIFF header, zeros, another codec's stream)
// are ErrCorrupt naming their first bytes.
func TestCheckFraming(t *testing.T) {
	src := bytes.Repeat([]byte{1, 2, 3, 4, 200, 100}, 1000)
	streams := map[uint16][]byte{}
	for _, c := range []uint16{tiff.CompressionLZW, tiff.CompressionDeflate, tiff.CompressionZstd} {
		codec, err := NewCodec(c, 0)
		require.NoError(t, err)
		streams[c], err = codec.Encode(nil, src)
		require.NoError(t, err)
	}
	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 16, 16)), nil))
	streams[tiff.CompressionJPEG] = jpg.Bytes()

	for c, s := range streams {
		assert.NoError(t, CheckFraming(c, s), "compression %d", c)
	}
	assert.NoError(t, CheckFraming(tiff.CompressionDeflateOld, streams[tiff.CompressionDeflate]))
	assert.NoError(t, CheckFraming(tiff.CompressionNone, nil), "uncompressed blocks are not checked")
	assert.NoError(t, CheckFraming(tiff.CompressionZstd, []byte{0x5e, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}), "a skippable frame")
	assert.NoError(t, CheckFraming(tiff.CompressionLZW, []byte{0x00, 0x01, 0x08, 0x10}), "old-style LZW: Clear, least significant bits first")
	assert.NoError(t, CheckFraming(tiff.CompressionJPEG, []byte{0xff, 0xd8, 0xff, 0xd9}), "the shortest JPEG stream")
	for _, header := range [][]byte{{0x78, 0x01}, {0x78, 0xda}, {0x08, 0x1d}} { // windows of 32 KiB and 256 bytes
		assert.NoError(t, CheckFraming(tiff.CompressionDeflate, append(header, 3, 0, 0, 0, 0, 1)), "zlib header % x", header)
	}

	header := []byte("II*\x00\x08\x00\x00\x00")
	zeros := make([]byte, 64)
	for _, tc := range []struct {
		compression uint16
		block       []byte
		says        string
	}{
		{tiff.CompressionJPEG, header, "8 bytes starting 49 49 2a 00: no JPEG stream (no SOI marker)"},
		{tiff.CompressionJPEG, streams[tiff.CompressionJPEG][:1], "no JPEG stream"},
		{tiff.CompressionJPEG, streams[tiff.CompressionZstd], "no JPEG stream"},
		{tiff.CompressionJPEG, []byte{0xff, 0xd8}, "2 bytes starting ff d8: no JPEG stream"},
		{tiff.CompressionJPEG, []byte{0xff, 0xd8, 0xff}, "3 bytes starting ff d8 ff: no JPEG stream"},
		{tiff.CompressionDeflate, header, "no zlib stream (Deflate)"},
		{tiff.CompressionDeflate, streams[tiff.CompressionDeflate][:1], "1 bytes starting 78: no zlib stream"},
		{tiff.CompressionDeflate, zeros, "64 bytes starting 00 00 00 00: no zlib stream"},
		{tiff.CompressionDeflate, streams[tiff.CompressionDeflate][:7], "7 bytes starting 78"},
		{tiff.CompressionDeflate, []byte{0x88, 0x1c, 3, 0, 0, 0, 0, 1}, "no zlib stream"}, // a window of 64 KiB
		{tiff.CompressionDeflate, []byte{0x78, 0x20, 3, 0, 0, 0, 0, 1}, "no zlib stream"}, // a preset dictionary
		{tiff.CompressionDeflate, []byte{0x78, 0x9d, 3, 0, 0, 0, 0, 1}, "no zlib stream"}, // a header 1 past a multiple of 31
		{tiff.CompressionDeflateOld, streams[tiff.CompressionJPEG], "no zlib stream"},
		{tiff.CompressionZstd, header, "no Zstandard frame"},
		{tiff.CompressionZstd, streams[tiff.CompressionZstd][:3], "no Zstandard frame"},
		{tiff.CompressionZstd, streams[tiff.CompressionDeflate], "no Zstandard frame"},
		{tiff.CompressionLZW, streams[tiff.CompressionLZW][:2], "too short for an LZW stream"},
		{tiff.CompressionLZW, streams[tiff.CompressionJPEG], "starting ff d8 ff db: no LZW stream (its first code is not Clear)"},
		{tiff.CompressionLZW, []byte{0x80, 0x80, 0x40}, "no LZW stream"}, // the end code (257) first
		{tiff.CompressionLZW, []byte{0x20, 0x80, 0x40}, "no LZW stream"}, // a literal first (65), which libtiff refuses
		{tiff.CompressionLZW, []byte{0x00, 0x00, 0x40}, "no LZW stream"}, // old-style, a literal first
	} {
		err := CheckFraming(tc.compression, tc.block)
		require.ErrorIs(t, err, ErrCorrupt, "compression %d, % x", tc.compression, tc.block[:min(4, len(tc.block))])
		assert.ErrorContains(t, err, tc.says)
	}
}

// TestCheckJPEGTile: a JPEG tile copied undecoded must have a frame of the
// tile's size and no more scans than the Decoder takes of it.
func TestCheckJPEGTile(t *testing.T) {
	stream, scans := progressiveJPEG(6) // one 8 x 8 block
	require.Equal(t, 448, scans)
	assert.NoError(t, CheckJPEGTile(stream, 8, 8, 1))
	err := CheckJPEGTile(stream, 16, 8, 1)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "JPEG frame of 8 x 8 in a tile of 16 x 8")
	err = CheckJPEGTile(stream, 8, 16, 1)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "JPEG frame of 8 x 8 in a tile of 8 x 16")
	err = CheckJPEGTile(stream, 8, 8, 3)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "JPEG of 1 components in a tile of 3 samples per pixel")
	more, _ := progressiveJPEG(8) // 576 scans
	assert.ErrorIs(t, CheckJPEGTile(more, 8, 8, 1), ErrCompression)
	assert.ErrorIs(t, CheckJPEGTile([]byte{0xff, 0xd9}, 8, 8, 1), ErrCorrupt, "no SOI")
	assert.ErrorIs(t, CheckJPEGTile([]byte{0xff, 0xd8, 0xff, 0xd9}, 8, 8, 1), ErrCorrupt, "no frame")
}
