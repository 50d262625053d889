package tiff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/ometiff-go/ometiff/ifd"
)

// ErrUnsupported reports a page that is sound but laid out in a way this
// package does not read, such as samples of different sizes.
var ErrUnsupported = errors.New("tiff: unsupported layout")

// Page is one directory read from a file (tifffile's word for it): its
// fields, its SubIFDs, and access to its image data, block by block.
//
// Fields keeps every entry in file order with its values as package ifd
// holds them (little-endian, whatever the file's byte order), so that a
// field can be handed to an ifd.Builder unchanged. An entry of a type
// package ifd does not know has a nil Value.
type Page struct {
	// Offset is where the directory starts in the file.
	Offset int64
	// Next is the offset of the next directory, as written; 0 ends the
	// chain. Read follows it in the main chain only: SubIFDs are listed by
	// their parent's SubIFDs field (Bio-Formats and tifffile read them so
	// too).
	Next uint64
	// Fields are the directory's entries, in file order.
	Fields []ifd.Entry
	// SubIFDs are the directories the SubIFDs field (330) lists, in its
	// order: in an OME-TIFF, the reduced levels, largest first.
	SubIFDs []*Page

	file            *File
	offsets, counts ifd.Entry // TileOffsets and TileByteCounts, or the strip ones
	blocksErr       error     // why they are unusable, if they are
	// jpegHeader starts each block's stream, for a page NDPITiles made:
	// its blocks are restart intervals of one JPEG strip.
	jpegHeader []byte
	// maxBlock bounds the bytes of a block of such a page: a larger one
	// is ErrMalformed.
	maxBlock uint64
	// original is the page NDPITiles made this one from; nil for a page
	// read from the file.
	original *Page
	// tables are where the values of the UIC fields lie (ValueOffset), as
	// the walk read their entries; nil when the page has none.
	tables map[uint16]uint64
}

// File returns the file the page was read from.
func (p *Page) File() *File { return p.file }

// Original returns the page of the file that p reads otherwise (the page
// NDPITiles made p from), or p itself: for saying which of the file's
// pages an image's plane is.
func (p *Page) Original() *Page {
	if p.original != nil {
		return p.original
	}
	return p
}

// Order returns the byte order of the page's file, which is that of its
// image data: binary.BigEndian or binary.LittleEndian.
func (p *Page) Order() binary.ByteOrder {
	if p.file.bigEndian() {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Field returns the entry with the tag; the first if the tag repeats.
func (p *Page) Field(tag uint16) (ifd.Entry, bool) {
	for _, e := range p.Fields {
		if e.Tag == tag {
			return e, true
		}
	}
	return ifd.Entry{}, false
}

// Uint returns the first value of an unsigned integer field (BYTE, SHORT,
// LONG, LONG8, IFD or IFD8). It is false when the field is absent, empty
// or of another type.
func (p *Page) Uint(tag uint16) (uint64, bool) {
	e, ok := p.Field(tag)
	if !ok {
		return 0, false
	}
	v, err := e.Uint()
	return v, err == nil
}

// Text returns an ASCII field's text without its terminating NUL. It is
// false when the field is absent or not ASCII.
func (p *Page) Text(tag uint16) (string, bool) {
	e, ok := p.Field(tag)
	if !ok {
		return "", false
	}
	s, err := e.Text()
	return s, err == nil
}

// Description returns the ImageDescription (270): the OME-XML of an
// OME-TIFF's first page, the Aperio header of an SVS page. It is "" when
// absent.
func (p *Page) Description() string {
	s, _ := p.Text(TagImageDescription)
	return s
}

// Software returns the Software field (305), or "".
func (p *Page) Software() string {
	s, _ := p.Text(TagSoftware)
	return s
}

// NewSubfileType returns the NewSubfileType bits (254): SubfileReducedImage
// marks a reduced-resolution level. It is 0 when absent.
func (p *Page) NewSubfileType() uint32 {
	v, _ := p.Uint(TagNewSubfileType)
	return uint32(v)
}

// JPEGTables returns the JPEGTables field (347) of a JPEG page: the
// quantization and Huffman tables its tiles' abbreviated streams leave
// out, as SOI, tables, EOI. It is nil when absent.
func (p *Page) JPEGTables() []byte {
	e, ok := p.Field(TagJPEGTables)
	if !ok || e.Type.Size() != 1 {
		return nil
	}
	return e.Value
}

// YCbCrSubsampling returns the YCbCrSubSampling field (530): how many
// luma samples, across and down, share one chroma sample. The default is
// 2, 2; each value is 1, 2 or 4, and the vertical one is at most the
// horizontal one.
func (p *Page) YCbCrSubsampling() (horizontal, vertical int, err error) {
	e, ok := p.Field(TagYCbCrSubSampling)
	if !ok {
		return 2, 2, nil
	}
	v, err := e.Uints()
	ok = err == nil && len(v) == 2 && validSubsampling(v[0]) && validSubsampling(v[1]) && v[1] <= v[0]
	if !ok {
		return 0, 0, fmt.Errorf("%w: YCbCrSubSampling of the page at %d is %v", ErrMalformed, p.Offset, v)
	}
	return int(v[0]), int(v[1]), nil
}

func validSubsampling(v uint64) bool { return v == 1 || v == 2 || v == 4 }

// YCbCrPositioning returns the YCbCrPositioning field (531): YCbCrCentered
// (the default) or YCbCrCosited.
func (p *Page) YCbCrPositioning() uint16 {
	if v, ok := p.Uint(TagYCbCrPositioning); ok && v == uint64(YCbCrCosited) {
		return YCbCrCosited
	}
	return YCbCrCentered
}

// ReferenceBlackWhite returns the six values of the ReferenceBlackWhite
// field (532): the footroom and headroom of each of the three components.
// It is false when the field is absent or has not six numbers.
func (p *Page) ReferenceBlackWhite() ([]float64, bool) {
	e, ok := p.Field(TagReferenceBlackWhite)
	if !ok {
		return nil, false
	}
	v, err := e.Floats()
	return v, err == nil && len(v) == 6
}

// ExtraSamples returns the ExtraSamples field (338): what each sample past
// the color ones holds (ExtraSampleAssociatedAlpha, ...). It is nil when
// absent.
func (p *Page) ExtraSamples() []uint16 {
	e, ok := p.Field(TagExtraSamples)
	if !ok {
		return nil
	}
	v, _ := e.Uints()
	out := make([]uint16, len(v))
	for i, x := range v {
		out[i] = uint16(x)
	}
	return out
}

// Layout is how a page's image is stored: the fields that say how to cut
// it into blocks (tiles or strips) and how to decode each one, checked
// against each other. Defaults of absent fields are filled in as the TIFF
// specification gives them.
type Layout struct {
	// Width and Height are ImageWidth and ImageLength, in pixels.
	Width, Height int
	// SamplesPerPixel counts the samples of a pixel, extra samples
	// included.
	SamplesPerPixel int
	// BitsPerSample is the size of every sample (the field has one value
	// per sample; Layout refuses values that differ).
	BitsPerSample int
	// SampleFormat is SampleFormatUint, SampleFormatInt, SampleFormatFloat
	// or SampleFormatUndefined (one value for every sample).
	SampleFormat uint16
	// PlanarConfiguration is PlanarContig (samples of a pixel together) or
	// PlanarSeparate (one plane of blocks per sample).
	PlanarConfiguration uint16
	// Compression, Predictor and Photometric are the fields of those names
	// (Photometric defaults to BlackIsZero for one sample, RGB for more).
	Compression, Predictor, Photometric uint16
	// Tiled is true for tiles, false for strips.
	Tiled bool
	// BlockWidth and BlockHeight are the size of a full block: the tile
	// size, or for strips the image width and RowsPerStrip (at most the
	// image height). Edge tiles are full size; the last strip may hold
	// fewer rows (BlockRows gives them).
	BlockWidth, BlockHeight int
	// BlocksAcross and BlocksDown count the blocks of one plane.
	BlocksAcross, BlocksDown int
	// Planes is SamplesPerPixel for PlanarSeparate and 1 otherwise; the
	// page has BlocksAcross × BlocksDown × Planes blocks, plane after
	// plane, each plane row after row.
	Planes int
}

// Blocks returns the number of blocks of the page.
func (l Layout) Blocks() int { return l.BlocksAcross * l.BlocksDown * l.Planes }

// BlockRows returns the rows of image data in the blocks of block row
// down (0 for the top one): BlockHeight, except for the last strip.
func (l Layout) BlockRows(down int) int {
	if l.Tiled {
		return l.BlockHeight
	}
	return min(l.BlockHeight, l.Height-down*l.BlockHeight)
}

// BlockSamples returns the samples of a pixel in one block: 1 for
// PlanarSeparate, SamplesPerPixel otherwise.
func (l Layout) BlockSamples() int {
	if l.Planes > 1 {
		return 1
	}
	return l.SamplesPerPixel
}

// Limits Layout holds pages to. TIFF stores sizes as LONG (libtiff refuses
// more even in BigTIFF) and the count of samples as SHORT.
const (
	maxDimension = 1<<32 - 1
	maxSamples   = 1<<16 - 1
)

// Layout checks the fields that lay out the page's image and returns
// them. A field missing, out of range or contradicting another (block
// counts that do not match the size, a tile size of 0) is ErrMalformed;
// a sound layout this package does not handle (samples of different sizes
// or formats, sizes past 2^32-1) is ErrUnsupported. Both errors name the
// field.
//
// Tile sizes that are not multiples of 16, which the TIFF specification
// asks for, are accepted, as libtiff and tifffile read them.
func (p *Page) Layout() (Layout, error) {
	l := Layout{}
	var err error
	uintField := func(tag uint16, def uint64, lo, hi uint64) int {
		v, ok := p.Uint(tag)
		if _, present := p.Field(tag); present && !ok {
			err = firstErr(err, fmt.Errorf("%w: %s of the page at %d is not an unsigned integer", ErrMalformed, TagName(tag), p.Offset))
		}
		if !ok {
			v = def
		}
		if v < lo || v > hi {
			sentinel := ErrMalformed
			if v > hi && hi == maxDimension {
				sentinel = ErrUnsupported
			}
			err = firstErr(err, fmt.Errorf("%w: %s of the page at %d is %d", sentinel, TagName(tag), p.Offset, v))
		}
		return int(min(v, hi))
	}
	if _, ok := p.Field(TagImageWidth); !ok {
		return l, fmt.Errorf("%w: the page at %d has no ImageWidth", ErrMalformed, p.Offset)
	}
	l.Width = uintField(TagImageWidth, 0, 1, maxDimension)
	l.Height = uintField(TagImageLength, 0, 1, maxDimension)
	l.SamplesPerPixel = uintField(TagSamplesPerPixel, 1, 1, maxSamples)
	l.Compression = uint16(uintField(TagCompression, uint64(CompressionNone), 1, 1<<16-1))
	l.Predictor = uint16(uintField(TagPredictor, uint64(PredictorNone), 1, 1<<16-1))
	l.PlanarConfiguration = uint16(uintField(TagPlanarConfiguration, uint64(PlanarContig), 1, 2))
	defPhotometric := PhotometricBlackIsZero
	if l.SamplesPerPixel > 1 {
		defPhotometric = PhotometricRGB
	}
	l.Photometric = uint16(uintField(TagPhotometricInterpretation, uint64(defPhotometric), 0, 1<<16-1))
	if err != nil {
		return l, err
	}
	bps, err := p.perSample(TagBitsPerSample, 1, l.SamplesPerPixel)
	if err != nil {
		return l, err
	}
	if bps == 0 || bps > 64 {
		return l, fmt.Errorf("%w: BitsPerSample of the page at %d is %d", ErrMalformed, p.Offset, bps)
	}
	format, err := p.perSample(TagSampleFormat, uint64(SampleFormatUint), l.SamplesPerPixel)
	if err != nil {
		return l, err
	}
	if format < uint64(SampleFormatUint) || format > uint64(SampleFormatUndefined) {
		name, ok := ValueName(TagSampleFormat, format)
		if !ok {
			name = "unknown"
		}
		return l, fmt.Errorf("%w: SampleFormat of the page at %d is %d (%s)", ErrUnsupported, p.Offset, format, name)
	}
	l.BitsPerSample, l.SampleFormat = int(bps), uint16(format)
	if err := p.blockLayout(&l); err != nil {
		return l, err
	}
	return l, nil
}

// firstErr keeps the first of two errors.
func firstErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// perSample returns the value of a field that holds one value per sample
// (BitsPerSample, SampleFormat), which must all be equal. One value for
// every sample is accepted, as libtiff does.
func (p *Page) perSample(tag uint16, def uint64, samples int) (uint64, error) {
	e, ok := p.Field(tag)
	if !ok {
		return def, nil
	}
	v, err := e.Uints()
	if err != nil || len(v) == 0 || len(v) != 1 && len(v) != samples {
		return 0, fmt.Errorf("%w: %s of the page at %d has %d values for %d samples", ErrMalformed, TagName(tag), p.Offset, len(v), samples)
	}
	for _, x := range v[1:] {
		if x != v[0] {
			return 0, fmt.Errorf("%w: %s of the page at %d differs between samples (%v)", ErrUnsupported, TagName(tag), p.Offset, v)
		}
	}
	return v[0], nil
}

// blockLayout fills in the blocks of l and checks them against the
// offsets and byte counts.
func (p *Page) blockLayout(l *Layout) error {
	_, hasWidth := p.Field(TagTileWidth)
	_, hasLength := p.Field(TagTileLength)
	l.Tiled = hasWidth || hasLength
	offsetsTag := TagStripOffsets
	if l.Tiled {
		offsetsTag = TagTileOffsets
		if !hasWidth || !hasLength {
			return fmt.Errorf("%w: the tiled page at %d lacks TileWidth or TileLength", ErrMalformed, p.Offset)
		}
		tw, _ := p.Uint(TagTileWidth)
		th, _ := p.Uint(TagTileLength)
		if tw == 0 || th == 0 || tw > maxDimension || th > maxDimension {
			return fmt.Errorf("%w: the page at %d has tiles of %d x %d", ErrMalformed, p.Offset, tw, th)
		}
		l.BlockWidth, l.BlockHeight = int(tw), int(th)
	} else {
		rows, ok := p.Uint(TagRowsPerStrip)
		if !ok {
			rows = maxDimension // the default: one strip
		}
		if rows == 0 {
			return fmt.Errorf("%w: RowsPerStrip of the page at %d is 0", ErrMalformed, p.Offset)
		}
		l.BlockWidth, l.BlockHeight = l.Width, int(min(rows, uint64(l.Height)))
	}
	l.BlocksAcross = (l.Width + l.BlockWidth - 1) / l.BlockWidth
	l.BlocksDown = (l.Height + l.BlockHeight - 1) / l.BlockHeight
	l.Planes = 1
	if l.PlanarConfiguration == PlanarSeparate {
		l.Planes = l.SamplesPerPixel
	}
	if p.blocksErr != nil {
		return p.blocksErr
	}
	if p.offsets.Tag != offsetsTag {
		return fmt.Errorf("%w: the page at %d has %s instead of %s", ErrMalformed, p.Offset, TagName(p.offsets.Tag), TagName(offsetsTag))
	}
	hi, blocks := bits.Mul64(uint64(l.BlocksAcross)*uint64(l.BlocksDown), uint64(l.Planes))
	if hi != 0 || blocks != p.offsets.Count || blocks != p.counts.Count {
		return fmt.Errorf("%w: the page at %d has %d %s and %d byte counts for %d x %d pixels in %d x %d blocks (x %d planes)",
			ErrMalformed, p.Offset, p.offsets.Count, TagName(offsetsTag), p.counts.Count, l.Width, l.Height, l.BlockWidth, l.BlockHeight, l.Planes)
	}
	return nil
}

// locateBlocks finds the page's block offsets and byte counts (tiles if
// it has TileOffsets, else strips), once, when Read reads the page. A page
// whose locations are unusable is still read; Layout and Block report why.
func (p *Page) locateBlocks() {
	offsetsTag, countsTag := TagStripOffsets, TagStripByteCounts
	if _, tiled := p.Field(TagTileOffsets); tiled {
		offsetsTag, countsTag = TagTileOffsets, TagTileByteCounts
	}
	offsets, ok1 := p.Field(offsetsTag)
	counts, ok2 := p.Field(countsTag)
	for _, e := range []ifd.Entry{offsets, counts} {
		if _, err := e.Uints(); e.Tag != 0 && (err != nil || e.Value == nil) {
			p.blocksErr = fmt.Errorf("%w: %s of the page at %d has type %v", ErrMalformed, TagName(e.Tag), p.Offset, e.Type)
			return
		}
	}
	if !ok1 || !ok2 || offsets.Count != counts.Count {
		p.blocksErr = fmt.Errorf("%w: the page at %d has %d %s and %d %s", ErrMalformed, p.Offset, offsets.Count, TagName(offsetsTag), counts.Count, TagName(countsTag))
		return
	}
	p.offsets, p.counts = offsets, counts
}

// NumBlocks returns how many blocks (tiles or strips) the page lists.
func (p *Page) NumBlocks() int { return int(p.offsets.Count) }

// Block returns where block i (a tile or strip, in the order of
// TileOffsets or StripOffsets) lies in the file. A block past the end of
// the file is ErrMalformed; a block of 0 bytes at offset 0 is a sparse
// block (GDAL writes them for empty tiles), which readers take as zeros.
// A block of 0 bytes elsewhere is ErrMalformed: no writer makes one, and
// libtiff refuses it, where taking it as sparse would read a damaged
// block as zeros.
func (p *Page) Block(i int) (Block, error) {
	if p.blocksErr != nil {
		return Block{}, p.blocksErr
	}
	if i < 0 || i >= p.NumBlocks() {
		return Block{}, fmt.Errorf("%w: block %d of the page at %d, which has %d", ErrMalformed, i, p.Offset, p.NumBlocks())
	}
	b := Block{Offset: valueAt(p.offsets, i), Size: valueAt(p.counts, i)}
	if size := uint64(p.file.Size); b.Offset > size || b.Size > size-b.Offset {
		return b, fmt.Errorf("%w: %s[%d] of the page at %d: %d bytes at %d, past the end of the %d-byte file",
			ErrMalformed, TagName(p.counts.Tag), i, p.Offset, b.Size, b.Offset, size)
	}
	if b.Size == 0 && b.Offset != 0 {
		return b, fmt.Errorf("%w: %s[%d] of the page at %d: 0 bytes at %d (a sparse block lies at offset 0)",
			ErrMalformed, TagName(p.counts.Tag), i, p.Offset, b.Offset)
	}
	if p.jpegHeader != nil && b.Size > p.maxBlock {
		return b, fmt.Errorf("%w: restart interval %d of the NDPI page at %d takes %d bytes, more than a JPEG scan of its pixels can (%d)",
			ErrMalformed, i, p.Offset, b.Size, p.maxBlock)
	}
	return b, nil
}

// valueAt returns value i of an unsigned field checked by locateBlocks.
func valueAt(e ifd.Entry, i int) uint64 {
	size := e.Type.Size()
	var v uint64
	for k := size - 1; k >= 0; k-- {
		v = v<<8 | uint64(e.Value[i*size+k])
	}
	return v
}

// Blocks returns the location of every block of the page.
func (p *Page) Blocks() ([]Block, error) {
	if p.blocksErr != nil {
		return nil, p.blocksErr
	}
	blocks := make([]Block, p.NumBlocks())
	for i := range blocks {
		var err error
		if blocks[i], err = p.Block(i); err != nil {
			return nil, err
		}
	}
	return blocks, nil
}

// ReadBlock appends the stored (compressed) bytes of block i to dst and
// returns the extended slice. It reads exactly the block's byte count,
// which Block has checked against the file size; a file shorter than the
// size Read was given is ErrMalformed, and another failure of the reader
// is returned wrapped (os.ErrClosed for a file closed). Calls may run
// concurrently if the file's io.ReaderAt allows it.
//
// The blocks of a page NDPITiles made are each returned as a JPEG stream
// of its own, the restart interval's data between a header and EOI.
func (p *Page) ReadBlock(dst []byte, i int) ([]byte, error) {
	b, err := p.Block(i)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, p.jpegHeader...)
	data := len(dst)
	dst = slices.Grow(dst, int(b.Size)+2)[:data+int(b.Size)]
	n, err := p.file.r.ReadAt(dst[data:], int64(b.Offset))
	if n < int(b.Size) {
		if err == nil || errors.Is(err, io.EOF) { // the file is shorter than it said
			return dst[:start], fmt.Errorf("%w: block %d of the page at %d: %w", ErrMalformed, i, p.Offset, io.ErrUnexpectedEOF)
		}
		// The reader's failure (an I/O error, a file closed) is no fault of the file's.
		return dst[:start], fmt.Errorf("tiff: read block %d of the page at %d: %w", i, p.Offset, err)
	}
	if p.jpegHeader != nil {
		if dst, err = endNDPITile(dst, data, i, p.NumBlocks()); err != nil {
			return dst[:start], fmt.Errorf("%w (the page at %d)", err, p.Offset)
		}
	}
	return dst, nil
}

// Successor returns the page the k-th image stored right after p's data
// would be (k ≥ 1): a copy of p whose blocks lie k × d bytes further on,
// where d is the span of p's data. ImageJ writes stacks larger than 4 GiB
// so, as one directory followed by every plane's data (its description
// says how many), and so does tifffile when asked to truncate; ImageJ,
// tifffile and Bio-Formats read the planes that way.
//
// Only uncompressed data whose blocks follow one another without a gap,
// none empty, has a span that says where the next image lies: other
// pages are ErrUnsupported. A successor past the end of the file is ErrMalformed.
// The copy's offsets field is LONG8, since its values may pass 4 GiB in
// a classic TIFF; its Offset and Next are p's.
func (p *Page) Successor(k int) (*Page, error) {
	if p.blocksErr != nil {
		return nil, p.blocksErr
	}
	if k < 1 {
		return nil, fmt.Errorf("%w: successor %d of the page at %d", ErrMalformed, k, p.Offset)
	}
	if c, ok := p.Uint(TagCompression); ok && c != uint64(CompressionNone) {
		return nil, fmt.Errorf("%w: the page at %d is compressed (Compression %d), so its data does not say where the next image lies",
			ErrUnsupported, p.Offset, c)
	}
	blocks, err := p.Blocks()
	if err != nil {
		return nil, err
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%w: the page at %d has no blocks", ErrMalformed, p.Offset)
	}
	end := blocks[0].Offset
	for i, b := range blocks {
		if b.Size == 0 {
			return nil, fmt.Errorf("%w: block %d of the page at %d is empty (0 bytes), so its data does not say where the next image lies",
				ErrUnsupported, i, p.Offset)
		}
		if b.Offset != end {
			return nil, fmt.Errorf("%w: block %d of the page at %d is at %d, not right after block %d (at %d)",
				ErrUnsupported, i, p.Offset, b.Offset, i-1, end)
		}
		end += b.Size // Block checked it against the file size: no overflow
	}
	span := end - blocks[0].Offset
	hi, shift := bits.Mul64(span, uint64(k))
	if size := uint64(p.file.Size); hi != 0 || span == 0 || shift > size || end > size-shift {
		return nil, fmt.Errorf("%w: image %d after the page at %d (%d bytes each from %d) is past the end of the %d-byte file",
			ErrMalformed, k, p.Offset, span, blocks[0].Offset, size)
	}
	offsets := ifd.Entry{Tag: p.offsets.Tag, Type: ifd.Long8, Count: p.offsets.Count, Value: make([]byte, 8*len(blocks))}
	for i, b := range blocks {
		binary.LittleEndian.PutUint64(offsets.Value[8*i:], b.Offset+shift)
	}
	q := *p
	q.SubIFDs = nil
	q.offsets = offsets
	q.Fields = slices.Clone(p.Fields)
	for i := range q.Fields {
		if q.Fields[i].Tag == offsets.Tag {
			q.Fields[i] = offsets
			break
		}
	}
	return &q, nil
}
