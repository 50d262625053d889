package tiff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/ometiff-go/ometiff/ifd"
)

// Private tags of Hamamatsu NDPI files, as tifffile, OpenSlide and
// Bio-Formats read them.
const (
	// TagNDPIFormatFlag (65420) marks every page of an NDPI file.
	TagNDPIFormatFlag uint16 = 65420
	// TagNDPISourceLens (65421, FLOAT) is the page's magnification: the
	// objective's for the scan and its levels, -1 for the macro image and
	// -2 for the map of the scanned area.
	TagNDPISourceLens uint16 = 65421
	// TagNDPIXOffset and TagNDPIYOffset (65422, 65423) place the page's
	// centre relative to the slide's, in nm.
	TagNDPIXOffset uint16 = 65422
	TagNDPIYOffset uint16 = 65423
	// TagNDPIZOffset (65424) is the focal plane's offset from the slide's
	// focus, in nm.
	TagNDPIZOffset uint16 = 65424
	// TagNDPIMcuStarts (65426) lists, for the page's one JPEG strip, where
	// each restart interval's data starts, counted from the strip's first
	// byte: the intervals decode one apart from the others.
	TagNDPIMcuStarts uint16 = 65426
	// TagNDPIReference (65427) is the slide's reference text.
	TagNDPIReference uint16 = 65427
	// TagNDPIMcuStartsHigh (65432) holds the high 32 bits of the
	// McuStarts of a file past 4 GiB.
	TagNDPIMcuStartsHigh uint16 = 65432
	// TagNDPIProperties (65449) is the scanner's "key=value" lines.
	TagNDPIProperties uint16 = 65449
)

// maxNDPIHeader bounds the JPEG header of an NDPI strip (markers, tables
// and frame before the first restart interval): a few hundred bytes in the
// scanners' files.
const maxNDPIHeader = 1 << 20

// maxTileHeader bounds the header each NDPI tile's stream starts with:
// its quantization and Huffman tables, frame and scan, under 2 KiB in a
// baseline JPEG (4 tables of each).
const maxTileHeader = 16 << 10

// maxIntervalRatio bounds an NDPI restart interval's bytes, in multiples
// of its samples' (plus maxTileHeader): baseline JPEG codes an 8 × 8
// block in about 410 bytes at most (26 bits a coefficient, every byte
// stuffed), under 8 × its 64.
const maxIntervalRatio = 8

// NDPITiles returns the page of a Hamamatsu NDPI file whose image is one
// JPEG strip with restart markers, and the McuStarts field that says
// where each restart interval starts, as a tiled page: each restart
// interval is a tile, as tifffile, OpenSlide and Bio-Formats read them,
// so that the image is decoded a band of tiles at a time, never whole. A
// scanner's full resolution is one such strip of tens of gigabytes
// decoded.
//
// The tiles are as wide as the restart interval's MCUs (RestartInterval
// × the MCU's width) and as high as one MCU (8 or 16 rows); the copy's
// fields say so (TileWidth, TileLength, TileOffsets and TileByteCounts,
// in place of the strip's, and YCbCrSubSampling as the frame has it).
// ReadBlock returns each tile as a JPEG stream of its own: the strip's
// header (its tables, and the frame sized to one tile, without the
// restart interval), the interval's data, and EOI; Block gives where
// the interval's data lies in the file.
//
// The starts of a strip past 4 GiB have their high 32 bits in
// McuStartsHigh (65432). A page without McuStarts, of another
// compression, of several strips, or whose restart intervals straddle
// rows of MCUs is ErrUnsupported; McuStarts that do not match the frame,
// or a header that is not a baseline JPEG's, ErrMalformed.
func (p *Page) NDPITiles() (*Page, error) {
	if p.blocksErr != nil {
		return nil, p.blocksErr
	}
	starts, ok := p.Field(TagNDPIMcuStarts)
	if !ok {
		return nil, fmt.Errorf("%w: the NDPI page at %d has no McuStarts", ErrUnsupported, p.Offset)
	}
	mcu, err := starts.Uints()
	if err != nil || len(mcu) == 0 {
		return nil, fmt.Errorf("%w: McuStarts of the NDPI page at %d has type %v, %d values", ErrMalformed, p.Offset, starts.Type, starts.Count)
	}
	if high, ok := p.Field(TagNDPIMcuStartsHigh); ok {
		// A strip past 4 GiB has the high 32 bits of each start here.
		v, err := high.Uints()
		if err != nil || len(v) != len(mcu) || slices.ContainsFunc(v, func(h uint64) bool { return h >= 1<<32 }) {
			return nil, fmt.Errorf("%w: McuStartsHigh of the NDPI page at %d has type %v, %d values, for %d McuStarts",
				ErrMalformed, p.Offset, high.Type, high.Count, len(mcu))
		}
		for i, h := range v {
			mcu[i] += h << 32
		}
	}
	if c, _ := p.Uint(TagCompression); c != uint64(CompressionJPEG) {
		return nil, fmt.Errorf("%w: the NDPI page at %d has McuStarts and Compression %d, not JPEG", ErrUnsupported, p.Offset, c)
	}
	if p.NumBlocks() != 1 || p.offsets.Tag != TagStripOffsets {
		return nil, fmt.Errorf("%w: the NDPI page at %d has McuStarts and %d %s, not one strip", ErrUnsupported, p.Offset, p.NumBlocks(), TagName(p.offsets.Tag))
	}
	strip, err := p.Block(0)
	if err != nil {
		return nil, err
	}
	width, _ := p.Uint(TagImageWidth)
	height, _ := p.Uint(TagImageLength)
	if mcu[0] == 0 || mcu[0] > maxNDPIHeader || mcu[0] >= strip.Size {
		return nil, fmt.Errorf("%w: McuStarts[0] of the NDPI page at %d is %d, in a strip of %d bytes", ErrMalformed, p.Offset, mcu[0], strip.Size)
	}
	for i := 1; i < len(mcu); i++ {
		if mcu[i] <= mcu[i-1] || mcu[i] >= strip.Size {
			return nil, fmt.Errorf("%w: McuStarts[%d] of the NDPI page at %d is %d, after %d, in a strip of %d bytes",
				ErrMalformed, i, p.Offset, mcu[i], mcu[i-1], strip.Size)
		}
	}
	raw := make([]byte, mcu[0])
	if n, err := p.file.r.ReadAt(raw, int64(strip.Offset)); n < len(raw) {
		return nil, fmt.Errorf("%w: the JPEG header of the NDPI page at %d: %v", ErrMalformed, p.Offset, err)
	}
	h, err := parseNDPIHeader(raw, width, height)
	if errors.Is(err, errNotBaseline) {
		return nil, fmt.Errorf("%w: the JPEG header of the NDPI page at %d: %v", ErrUnsupported, p.Offset, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the JPEG header of the NDPI page at %d: %w", ErrMalformed, p.Offset, err)
	}
	mcusAcross := (int(width) + h.mcuWidth - 1) / h.mcuWidth
	if mcusAcross%h.interval != 0 {
		return nil, fmt.Errorf("%w: the NDPI page at %d has restart intervals of %d MCUs in rows of %d: they straddle rows",
			ErrUnsupported, p.Offset, h.interval, mcusAcross)
	}
	tileW, tileH := h.interval*h.mcuWidth, h.mcuHeight
	across, down := mcusAcross/h.interval, (int(height)+tileH-1)/tileH
	if uint64(across)*uint64(down) != uint64(len(mcu)) {
		return nil, fmt.Errorf("%w: the NDPI page at %d has %d McuStarts for %d x %d tiles of %d x %d",
			ErrMalformed, p.Offset, len(mcu), across, down, tileW, tileH)
	}
	offsets := ifd.Entry{Tag: TagTileOffsets, Type: ifd.Long8, Count: uint64(len(mcu)), Value: make([]byte, 8*len(mcu))}
	counts := ifd.Entry{Tag: TagTileByteCounts, Type: ifd.Long8, Count: uint64(len(mcu)), Value: make([]byte, 8*len(mcu))}
	for i, m := range mcu {
		end := strip.Size
		if i+1 < len(mcu) {
			end = mcu[i+1]
		}
		binary.LittleEndian.PutUint64(offsets.Value[8*i:], strip.Offset+m)
		binary.LittleEndian.PutUint64(counts.Value[8*i:], end-m)
	}
	long := func(tag uint16, v int) ifd.Entry {
		return ifd.Entry{Tag: tag, Type: ifd.Long, Count: 1, Value: binary.LittleEndian.AppendUint32(nil, uint32(v))}
	}
	fields := []ifd.Entry{long(TagTileWidth, tileW), long(TagTileLength, tileH), offsets, counts}
	if h.components == 3 {
		fields = append(fields, ifd.Entry{Tag: TagYCbCrSubSampling, Type: ifd.Short, Count: 2,
			Value: binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, uint16(h.subsampling[0])), uint16(h.subsampling[1]))})
	}
	for _, f := range p.Fields {
		switch f.Tag {
		case TagStripOffsets, TagStripByteCounts, TagRowsPerStrip, TagYCbCrSubSampling:
		default:
			fields = append(fields, f)
		}
	}
	slices.SortStableFunc(fields, func(a, b ifd.Entry) int { return int(a.Tag) - int(b.Tag) })
	q := *p
	q.SubIFDs = nil
	q.Fields, q.offsets, q.counts, q.jpegHeader, q.original = fields, offsets, counts, h.tile, p.Original()
	// An interval's data is a JPEG scan of tileW × tileH pixels, which
	// never takes more than a few times the samples' bytes: Block refuses
	// one past the bound, which would have a reader allocate what the
	// image cannot justify (a sparse file's gap between two starts).
	q.maxBlock = uint64(maxIntervalRatio*tileW*tileH*h.components) + maxTileHeader
	return &q, nil
}

// errNotBaseline is a JPEG of another process than baseline's, sound but
// not read.
var errNotBaseline = errors.New("not baseline")

// ndpiHeader is what NDPITiles reads of an NDPI strip's JPEG header.
type ndpiHeader struct {
	interval            int // MCUs per restart interval
	mcuWidth, mcuHeight int
	components          int
	subsampling         [2]int // luma samples per chroma sample, across and down
	tile                []byte // the header of one tile's stream
}

// parseNDPIHeader reads the markers of a baseline JPEG up to the end of
// its start of scan: the restart interval, and the frame, which must be
// width × height pixels of 8-bit samples, 1 or 3 components. It returns
// the header of one restart interval's stream: the same markers, the
// frame sized to one interval, and no restart interval.
func parseNDPIHeader(b []byte, width, height uint64) (ndpiHeader, error) {
	var h ndpiHeader
	if len(b) < 2 || b[0] != 0xff || b[1] != 0xd8 {
		return h, fmt.Errorf("no SOI")
	}
	// Within the bound, not b's size: the header kept by every page can be
	// a megabyte of comments, which the tiles leave out.
	tile := append(make([]byte, 0, min(len(b), maxTileHeader)), 0xff, 0xd8)
	sof, sos := -1, false
	for i := 2; i < len(b); {
		if i+4 > len(b) || b[i] != 0xff {
			return h, fmt.Errorf("no marker at byte %d", i)
		}
		marker := b[i+1]
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return h, fmt.Errorf("marker %#x of %d bytes at byte %d, past the header's %d", marker, n, i, len(b))
		}
		seg := b[i+4 : i+2+n]
		switch {
		case marker == 0xdd: // DRI: the tiles hold one interval each
			if len(seg) < 2 {
				return h, fmt.Errorf("a DRI of %d bytes", len(seg))
			}
			h.interval = int(binary.BigEndian.Uint16(seg))
			i += 2 + n
			continue
		case marker == 0xc0 || marker == 0xc1: // baseline or extended Huffman frame
			if err := h.frame(seg, width, height); err != nil {
				return h, err
			}
			sof = len(tile) + 5 // where the frame's height lies in the tile's header
		case marker >= 0xc2 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc:
			return h, fmt.Errorf("%w: a frame of marker %#x (only baseline JPEG's are read)", errNotBaseline, marker)
		case marker == 0xda:
			sos = i+2+n == len(b)
			if !sos {
				return h, fmt.Errorf("the scan's header ends at byte %d, and the first restart interval starts at %d", i+2+n, len(b))
			}
		case marker != 0xdb && marker != 0xc4 && marker != 0xee:
			// Only the tables, the frame, the scan and Adobe's colour
			// transform go into each tile's stream: the other segments
			// (comments, Exif, ...), copied into every tile, could make a
			// stream many times the tile.
			i += 2 + n
			continue
		}
		if len(tile)+2+n > maxTileHeader {
			return h, fmt.Errorf("tables of more than %d bytes", maxTileHeader)
		}
		tile = append(tile, b[i:i+2+n]...)
		i += 2 + n
	}
	switch {
	case sof < 0:
		return h, fmt.Errorf("no frame")
	case !sos:
		return h, fmt.Errorf("no start of scan")
	case h.interval == 0:
		return h, fmt.Errorf("no restart interval")
	}
	binary.BigEndian.PutUint16(tile[sof:], uint16(h.mcuHeight))
	w := uint64(h.interval) * uint64(h.mcuWidth)
	if w > 0xffff {
		return h, fmt.Errorf("restart intervals %d pixels wide, more than a JPEG frame holds", w)
	}
	binary.BigEndian.PutUint16(tile[sof+2:], uint16(w))
	h.tile = slices.Clone(tile) // its size alone, kept by every page
	return h, nil
}

// frame reads a frame header: 8-bit samples, the page's size, 1 or 3
// components whose sampling factors give the MCU's size.
func (h *ndpiHeader) frame(seg []byte, width, height uint64) error {
	if len(seg) < 6 {
		return fmt.Errorf("a frame of %d bytes", len(seg))
	}
	bits, rows, cols, comps := seg[0], binary.BigEndian.Uint16(seg[1:]), binary.BigEndian.Uint16(seg[3:]), int(seg[5])
	switch {
	case bits != 8:
		return fmt.Errorf("a frame of %d-bit samples", bits)
	case !frameSide(rows, height) || !frameSide(cols, width):
		return fmt.Errorf("a frame of %d x %d in a page of %d x %d", cols, rows, width, height)
	case comps != 1 && comps != 3 || len(seg) != 6+3*comps:
		return fmt.Errorf("a frame of %d components in %d bytes", comps, len(seg))
	}
	maxH, maxV := 1, 1
	factors := make([][2]int, comps)
	for c := range comps {
		f := seg[6+3*c+1]
		factors[c] = [2]int{int(f >> 4), int(f & 15)}
		if factors[c][0] < 1 || factors[c][0] > 4 || factors[c][1] < 1 || factors[c][1] > 4 {
			return fmt.Errorf("component %d has sampling factors %d x %d", c, factors[c][0], factors[c][1])
		}
		maxH, maxV = max(maxH, factors[c][0]), max(maxV, factors[c][1])
	}
	h.components, h.mcuWidth, h.mcuHeight = comps, 8*maxH, 8*maxV
	if comps == 3 {
		// Chroma sampled as TIFF's YCbCrSubSampling says it: both chroma
		// components alike, dividing the luma's.
		if factors[1] != factors[2] || factors[0][0]%factors[1][0] != 0 || factors[0][1]%factors[1][1] != 0 || factors[0] != [2]int{maxH, maxV} {
			return fmt.Errorf("components sampled %v: not as YCbCr in TIFF", factors)
		}
		h.subsampling = [2]int{factors[0][0] / factors[1][0], factors[0][1] / factors[1][1]}
	}
	return nil
}

// frameSide reports whether a frame's side, of 16 bits, says the page's:
// the same, or for a page past 65535 pixels (which a JPEG frame cannot
// say), 0 or the side's low 16 bits, as NDP.scan writes them and
// OpenSlide and tifffile read them.
func frameSide(frame uint16, page uint64) bool {
	return uint64(frame) == page || page > 0xffff && (frame == 0 || uint64(frame) == page&0xffff)
}

// endNDPITile ends the stream of tile i of an NDPI page of n tiles, whose
// interval's data starts at dst[data:]: the restart marker after it
// (RSTi mod 8), which the strip must have there as OpenSlide checks, or
// after the last, the strip's EOI, is replaced by EOI. A tile that does
// not end with its restart marker is ErrMalformed: its McuStarts are
// wrong, and its samples would be another interval's.
func endNDPITile(dst []byte, data, i, n int) ([]byte, error) {
	end := len(dst)
	marker := byte(0xd0 + i%8)
	if end-data >= 2 && dst[end-2] == 0xff && (dst[end-1] == marker || i == n-1 && dst[end-1] == 0xd9) {
		return append(dst[:end-2], 0xff, 0xd9), nil
	}
	if i == n-1 {
		return append(dst, 0xff, 0xd9), nil
	}
	return dst, fmt.Errorf("%w: tile %d of the NDPI strip does not end with restart marker %d: its McuStarts are wrong", ErrMalformed, i, i%8)
}
