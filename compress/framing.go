package compress

import (
	"fmt"

	"github.com/ometiff-go/ometiff/tiff"
)

// CheckFraming reports whether block, a tile or strip stored with the TIFF
// compression given, is framed as that codec's streams are, without
// decoding it: a JPEG stream starts with its SOI marker, a zlib stream
// (Deflate) with a valid two-byte header, a Zstandard frame with its magic
// number, and an LZW stream starts with the Clear code, and is at least
// as long as it and the end code. It is for blocks copied into a file
// undecoded: a block read at a wrong offset, or cut to fewer bytes than
// any stream of its codec has, is
// ErrCorrupt naming what its first bytes are, where copying it would make
// a file that no reader decodes. Only the start is checked: a block that
// passes may still be cut short after it, or corrupt within, which only
// decoding finds. Uncompressed blocks and other compressions pass.
func CheckFraming(compression uint16, block []byte) error {
	bad := func(what string) error {
		return fmt.Errorf("%w: %d bytes starting % x: %s", ErrCorrupt, len(block), block[:min(len(block), 4)], what)
	}
	switch compression {
	case tiff.CompressionJPEG:
		if len(block) < 4 || block[0] != 0xFF || block[1] != 0xD8 {
			return bad("no JPEG stream (no SOI marker)")
		}
	case tiff.CompressionDeflate, tiff.CompressionDeflateOld:
		// RFC 1950: method 8, a window of at most 32 KiB, a header that is
		// a multiple of 31, no preset dictionary; the shortest stream (no
		// data) is 8 bytes.
		if len(block) < 8 || block[0]&0x0F != 8 || block[0]>>4 > 7 || (uint(block[0])<<8|uint(block[1]))%31 != 0 || block[1]&0x20 != 0 {
			return bad("no zlib stream (Deflate)")
		}
	case tiff.CompressionZstd:
		// RFC 8878: a frame's magic number, or a skippable frame's.
		magic := uint32(0)
		if len(block) >= 4 {
			magic = uint32(block[0]) | uint32(block[1])<<8 | uint32(block[2])<<16 | uint32(block[3])<<24
		}
		if magic != 0xFD2FB528 && magic&0xFFFFFFF0 != 0x184D2A50 {
			return bad("no Zstandard frame")
		}
	case tiff.CompressionLZW:
		// A code and the end code take 18 bits.
		if len(block) < 3 {
			return bad("too short for an LZW stream")
		}
		// The first code is Clear (256, of 9 bits), as TIFF 6.0 asks and
		// libtiff requires (a literal first it refuses to decode): most
		// significant bits first, or least first, old-style LZW.
		newStyle := block[0] == 0x80 && block[1]&0x80 == 0
		oldStyle := block[0] == 0 && block[1]&1 == 1
		if !newStyle && !oldStyle {
			return bad("no LZW stream (its first code is not Clear)")
		}
	}
	return nil
}

// CheckJPEGTile reports whether a JPEG tile copied into a file undecoded
// is one a Decoder decodes, from its headers alone: its frame is the
// tile's size, width x height (a TIFF JPEG tile is a whole tile, its edge
// tiles too), of the image's samples (components), and it has no more
// scans than the Decoder takes of such a frame. A tile claiming a frame
// of 65500 x 65500, or of thousands of scans, would make a file that
// readers refuse or take minutes over. (Scans in the JPEGTables, which
// a decoder reads first, are not counted: the tables are checked once.)
func CheckJPEGTile(tile []byte, width, height, samples int) error {
	if len(tile) < 2 || tile[0] != 0xff || tile[1] != 0xd8 {
		return fmt.Errorf("%w: JPEG stream does not start with SOI", ErrCorrupt)
	}
	w, h, comps, err := frameSize(tile)
	if err != nil {
		return err
	}
	if w != width || h != height {
		return fmt.Errorf("%w: JPEG frame of %d x %d in a tile of %d x %d", ErrCorrupt, w, h, width, height)
	}
	if comps != samples {
		return fmt.Errorf("%w: JPEG of %d components in a tile of %d samples per pixel", ErrCorrupt, comps, samples)
	}
	return checkScans(tile, w, h)
}
