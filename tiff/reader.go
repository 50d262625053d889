package tiff

import (
	"fmt"
	"io"

	"github.com/ometiff-go/ometiff/ifd"
)

// File is the parsed structure of a TIFF file: its header, the main chain
// of directories and, under each, its SubIFDs.
type File struct {
	Header
	Size int64  // bytes in the file
	IFDs []*IFD // the main chain, in order
}

// IFD is one parsed directory with its SubIFDs.
type IFD struct {
	Offset int64
	ifd.Directory
	SubIFDs []*IFD
}

// maxDirectories bounds what Read parses, so a hostile file cannot make it
// loop or allocate without end.
const maxDirectories = 1 << 20

// Read parses the file of size bytes behind r: the header, every directory
// of the main chain and every SubIFD below them. A directory reached twice
// (a cycle) is ErrMalformed.
func Read(r io.ReaderAt, size int64) (*File, error) {
	var head [BigTIFFHeaderSize]byte
	n, err := r.ReadAt(head[:min(size, BigTIFFHeaderSize)], 0)
	if err != nil && n < ClassicHeaderSize {
		return nil, fmt.Errorf("%w: reading the header: %v", ErrNotTIFF, err)
	}
	h, err := ParseHeader(head[:n])
	if err != nil {
		return nil, err
	}
	p := &parser{r: r, size: size, format: ifd.Format{Order: h.Order, BigTIFF: h.BigTIFF}, seen: map[int64]bool{}}
	f := &File{Header: h, Size: size}
	for off := h.FirstIFD; off != 0; {
		d, err := p.parse(int64(off), 0)
		if err != nil {
			return nil, err
		}
		f.IFDs = append(f.IFDs, d)
		off = d.Next
	}
	return f, nil
}

// parser walks directories and remembers where it has been.
type parser struct {
	r      io.ReaderAt
	size   int64
	format ifd.Format
	seen   map[int64]bool
	parsed int64 // bytes of entries and values read so far
}

// readBudget bounds the entries and values Read parses, in multiples of the
// file size: directories of a sound file do not overlap, so a file that
// makes the parser read far more than itself (directories chained through
// each other, thousands of entries pointing at the same values) is
// malformed, and parsing it stays linear in its size.
const readBudget = 8

// parse reads the directory at off and, recursively, its SubIFDs.
func (p *parser) parse(off int64, depth int) (*IFD, error) {
	if off < 0 || p.seen[off] || len(p.seen) >= maxDirectories || depth > maxDepth {
		return nil, fmt.Errorf("%w: directory at %d is reached twice, nested too deep or one too many", ErrMalformed, off)
	}
	p.seen[off] = true
	dir, err := ifd.Decode(p.r, p.size, off, p.format)
	if err != nil {
		return nil, fmt.Errorf("%w: directory at %d: %w", ErrMalformed, off, err)
	}
	for _, e := range dir.Entries {
		p.parsed += 20 + int64(len(e.Value))
	}
	if p.parsed > readBudget*p.size+1<<20 {
		return nil, fmt.Errorf("%w: directories overlap or repeat (%d bytes parsed from a %d-byte file)", ErrMalformed, p.parsed, p.size)
	}
	d := &IFD{Offset: off, Directory: *dir}
	e, ok := d.Get(TagSubIFDs)
	if !ok {
		return d, nil
	}
	subs, err := e.Uints()
	if err != nil {
		return nil, fmt.Errorf("%w: SubIFDs at %d: %w", ErrMalformed, off, err)
	}
	for _, s := range subs {
		sub, err := p.parse(int64(s), depth+1)
		if err != nil {
			return nil, err
		}
		d.SubIFDs = append(d.SubIFDs, sub)
	}
	return d, nil
}

// Uint returns the first value of an unsigned integer field.
func (d *IFD) Uint(tag uint16) (uint64, bool) {
	e, ok := d.Get(tag)
	if !ok {
		return 0, false
	}
	v, err := e.Uint()
	return v, err == nil
}

// Blocks returns the directory's tiles, or its strips if it has no tiles.
func (d *IFD) Blocks() ([]Block, error) {
	offTag, countTag := TagTileOffsets, TagTileByteCounts
	if _, tiled := d.Get(offTag); !tiled {
		offTag, countTag = TagStripOffsets, TagStripByteCounts
	}
	offE, ok1 := d.Get(offTag)
	countE, ok2 := d.Get(countTag)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: directory at %d has no strip or tile locations", ErrMalformed, d.Offset)
	}
	offsets, err1 := offE.Uints()
	counts, err2 := countE.Uints()
	if err1 != nil || err2 != nil || len(offsets) != len(counts) {
		return nil, fmt.Errorf("%w: directory at %d has bad strip or tile locations", ErrMalformed, d.Offset)
	}
	blocks := make([]Block, len(offsets))
	for i := range blocks {
		blocks[i] = Block{Offset: offsets[i], Size: counts[i]}
	}
	return blocks, nil
}
