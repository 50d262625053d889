package tiff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
)

// Errors. Each message starts with "tiff: "; test with errors.Is.
var (
	// ErrTooLarge is a file that needs BigTIFF written as classic TIFF:
	// offsets past 4 GiB, or a field of a 64-bit type (LONG8, SLONG8,
	// IFD8).
	ErrTooLarge = errors.New("tiff: offsets past 4 GiB need BigTIFF")
	// ErrNoDirectory is a file closed without any directory.
	ErrNoDirectory = errors.New("tiff: no directory")
	// ErrClosed is any use of a Writer after Close.
	ErrClosed = errors.New("tiff: writer is closed")
	// ErrDirectory is a directory the writer cannot lay out.
	ErrDirectory = errors.New("tiff: bad directory")
	// ErrOption is an option or an output the writer cannot work with.
	ErrOption = errors.New("tiff: bad option")
	// ErrNotTIFF is input that is not a TIFF file.
	ErrNotTIFF = errors.New("tiff: not a TIFF file")
	// ErrMalformed is a TIFF file whose structure is broken.
	ErrMalformed = errors.New("tiff: malformed file")
)

// BigTIFF says when a Writer writes BigTIFF (64-bit offsets) rather than
// classic TIFF (32-bit offsets).
type BigTIFF int

// BigTIFF choices.
const (
	// BigTIFFAuto writes classic TIFF when every offset fits in 32 bits,
	// else BigTIFF. The choice is made at Close from the final offsets.
	BigTIFFAuto BigTIFF = iota
	// BigTIFFAlways writes BigTIFF.
	BigTIFFAlways
	// BigTIFFNever writes classic TIFF; Close fails with ErrTooLarge when
	// the file does not fit.
	BigTIFFNever
)

// Options configures a Writer. The zero value writes little-endian files
// and picks classic TIFF or BigTIFF at Close.
type Options struct {
	// ByteOrder is binary.BigEndian for a big-endian file; anything else
	// (nil included) means little-endian.
	ByteOrder binary.ByteOrder
	// BigTIFF says when to write BigTIFF.
	BigTIFF BigTIFF
}

// Block locates one strip or tile in the file.
type Block struct {
	Offset uint64
	Size   uint64
}

// Directory is one image of the file: its fields, the strips or tiles it
// points to, and its SubIFDs. The writer adds the data-location fields
// (OffsetsTag and CountsTag from Blocks, and SubIFDs) at Close, typed for
// classic TIFF or BigTIFF as it chose; Fields holds everything else, and
// no field pointing into the file (strip and tile offsets and byte
// counts, SubIFDs, the Exif and GPS IFDs): the writer writes only the
// offsets it computed, so Close refuses them (ErrDirectory). A Directory
// may appear once in a file.
type Directory struct {
	// Fields are the directory's own fields; nil means none. The writer
	// only reads them, so directories with equal fields (the planes of a
	// stack) may share one Builder. A directory must have one field at
	// least, of its own or for its blocks or SubIFDs: Close refuses an
	// empty one (ErrDirectory), which libtiff cannot read.
	Fields *ifd.Builder
	// OffsetsTag and CountsTag record Blocks: TagTileOffsets and
	// TagTileByteCounts for a tiled image, TagStripOffsets and
	// TagStripByteCounts for a stripped one. Zero means no blocks.
	OffsetsTag, CountsTag uint16
	// Blocks are the image's strips or tiles, in the order of the
	// specification (tiles left to right, top to bottom).
	Blocks []Block
	// SubIFDs are child directories (reduced resolutions), written after
	// this one and listed in its SubIFDs field, in this order. Their own
	// next-IFD offset is 0.
	SubIFDs []*Directory
}

// Writer lays out a TIFF file on an output handle: it reserves the header,
// appends data blocks as they come, and at Close writes every directory,
// each serialized whole and handed over in one write, links the main
// chain, and writes the header last.
//
// A Writer is not safe for concurrent use. It stops at the first error.
type Writer struct {
	h      iohandle.Handle
	opts   Options
	dirs   []*Directory
	err    error
	closed bool

	// Scratch space for one directory at a time, reused so that thousands
	// of directories cost no allocation each.
	fields  ifd.Builder // its final fields
	values  []byte      // the values of its offsets and counts
	encoded []byte      // its bytes
}

// NewWriter starts a TIFF file on h, which must be empty. It reserves the
// first 16 bytes for the header, so the first block starts at offset 16.
func NewWriter(h iohandle.Handle, opts Options) (*Writer, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: no output handle (nil)", ErrOption)
	}
	if h.Len() != 0 {
		return nil, fmt.Errorf("%w: the output already holds %d bytes", ErrOption, h.Len())
	}
	if opts.BigTIFF < BigTIFFAuto || opts.BigTIFF > BigTIFFNever {
		return nil, fmt.Errorf("%w: BigTIFF %d", ErrOption, opts.BigTIFF)
	}
	var reserved [reservedHeaderSize]byte
	if _, err := h.Write(reserved[:]); err != nil {
		return nil, err
	}
	return &Writer{h: h, opts: opts}, nil
}

// WriteBlock appends one strip or tile and returns where it lies. An
// empty block lies at offset 0: it is a sparse block, as GDAL writes them
// (see Page.Block).
func (w *Writer) WriteBlock(p []byte) (Block, error) {
	if err := w.usable(); err != nil {
		return Block{}, err
	}
	if len(p) == 0 {
		return Block{}, nil
	}
	b := Block{Offset: uint64(w.h.Len()), Size: uint64(len(p))}
	if _, err := w.h.Write(p); err != nil {
		w.err = err
		return Block{}, err
	}
	return b, nil
}

// ReadBlock appends n bytes read from r as one block (one or more strips
// or tiles back to back) and returns where it lies. The bytes go from r to
// the handle's buffer directly when the handle is an io.ReaderFrom, as
// iohandle's File and Memory are.
//
// If r ends early or fails, the Block covers the bytes read, which stay in
// the file, and the error is io.ErrUnexpectedEOF or r's. That does not stop
// the writer; a failure of the output does.
func (w *Writer) ReadBlock(r io.Reader, n int64) (Block, error) {
	if err := w.usable(); err != nil {
		return Block{}, err
	}
	if n < 0 {
		return Block{}, fmt.Errorf("%w: a block of %d bytes", ErrOption, n)
	}
	src := &sourceReader{r: r}
	off := uint64(w.h.Len())
	got, err := io.CopyN(w.h, src, n)
	b := Block{Offset: off, Size: uint64(got)}
	if got == 0 {
		b.Offset = 0 // sparse, as WriteBlock's
	}
	switch {
	case err == nil:
		return b, nil
	case err == io.EOF:
		return b, io.ErrUnexpectedEOF
	case src.err != nil || err == io.ErrNoProgress: // the input's fault
		return b, err
	default: // the output's
		w.err = err
		return Block{}, err
	}
}

// sourceReader remembers the error its reader returned, so that ReadBlock
// can tell a failing input from a failing output.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// AddDirectory appends d to the main chain. The writer keeps d until Close,
// and its fields may still change until then.
func (w *Writer) AddDirectory(d *Directory) error {
	if err := w.usable(); err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("%w: nil directory", ErrDirectory)
	}
	w.dirs = append(w.dirs, d)
	return nil
}

// Close writes every directory and the header. It does not commit the
// handle: the caller does, or aborts. Close decides between classic TIFF
// and BigTIFF from the final offsets, as Options.BigTIFF allows.
func (w *Writer) Close() error {
	if err := w.usable(); err != nil {
		return err
	}
	w.closed = true
	if err := w.finish(); err != nil {
		w.err = err
		return err
	}
	return nil
}

func (w *Writer) usable() error {
	if w.closed {
		return ErrClosed
	}
	return w.err
}

// finish plans the directories, writes them and then the header.
func (w *Writer) finish() error {
	if len(w.dirs) == 0 {
		return ErrNoDirectory
	}
	start := w.h.Len()
	if err := w.checkTree(start); err != nil {
		return err
	}
	if start&1 != 0 { // directories start on a word boundary
		if _, err := w.h.Write([]byte{0}); err != nil {
			return err
		}
		start++
	}
	f, err := w.plan(start)
	if err != nil {
		return err
	}
	pos := start
	for i, d := range w.dirs {
		end, err := w.writeTree(d, pos, i < len(w.dirs)-1, f)
		if err != nil {
			return err
		}
		pos = end
	}
	header, err := Header{Order: w.opts.ByteOrder, BigTIFF: f.BigTIFF, FirstIFD: uint64(start)}.Append(nil)
	if err != nil {
		return err
	}
	_, err = w.h.WriteAt(header, 0)
	return err
}

// maxDepth bounds SubIFD nesting.
const maxDepth = 8

// checkTree reports a directory that appears twice in the file, SubIFDs
// nested deeper than maxDepth, a directory that would have no entries, or
// a block that does not lie in the data written between the header and
// end: a Block made up, or of another file, would name bytes no block
// holds, or the header.
func (w *Writer) checkTree(end int64) error {
	seen := make(map[*Directory]bool, len(w.dirs))
	var visit func(d *Directory, depth int) error
	visit = func(d *Directory, depth int) error {
		if seen[d] || depth > maxDepth {
			return fmt.Errorf("%w: directory used twice or nested too deep", ErrDirectory)
		}
		// Blocks write OffsetsTag and CountsTag, SubIFDs their tag; an
		// OffsetsTag without blocks writes nothing.
		if (d.Fields == nil || d.Fields.Len() == 0) && len(d.Blocks) == 0 && len(d.SubIFDs) == 0 {
			// TIFF 6.0 asks for one entry at least; libtiff reads no such file.
			return fmt.Errorf("%w: a directory with no fields", ErrDirectory)
		}
		if d.Fields != nil {
			// An offset the writer did not compute points anywhere in
			// the file it writes: readers would find nothing there.
			for _, e := range d.Fields.Entries() {
				if pointsIntoFile(e.Tag) {
					return fmt.Errorf("%w: %s given in Fields (the writer writes the offsets it computes, from Blocks and SubIFDs)", ErrDirectory, TagName(e.Tag))
				}
			}
		}
		for i, blk := range d.Blocks {
			if blk.Size == 0 && blk.Offset != 0 {
				// A block of no bytes is sparse, at offset 0 (WriteBlock's):
				// elsewhere, its offset would still decide the format.
				return fmt.Errorf("%w: block %d is of 0 bytes at %d: a sparse block is at offset 0", ErrDirectory, i, blk.Offset)
			}
			if blk.Size > 0 && (blk.Offset < reservedHeaderSize || blk.Offset > uint64(end) || blk.Size > uint64(end)-blk.Offset) {
				return fmt.Errorf("%w: block %d, of %d bytes at %d, is not in the data written (%d to %d)",
					ErrDirectory, i, blk.Size, blk.Offset, reservedHeaderSize, end)
			}
		}
		seen[d] = true
		for _, sub := range d.SubIFDs {
			if err := visit(sub, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range w.dirs {
		if err := visit(d, 0); err != nil {
			return err
		}
	}
	return nil
}

// plan chooses the format of the directories laid out from start: classic
// TIFF if the options allow and everything fits, else BigTIFF. It checks
// that every directory can be encoded in that format.
func (w *Writer) plan(start int64) (ifd.Format, error) {
	f := ifd.Format{Order: w.opts.ByteOrder}
	if w.opts.BigTIFF != BigTIFFAlways {
		end, err := w.measure(start, f)
		switch {
		case err == nil && end-1 <= math.MaxUint32:
			return f, nil
		case err != nil && !errors.Is(err, ErrTooLarge):
			return f, err
		case w.opts.BigTIFF == BigTIFFNever && err != nil:
			return f, err
		case w.opts.BigTIFF == BigTIFFNever:
			return f, fmt.Errorf("%w: the directories would end at %d", ErrTooLarge, end)
		}
	}
	f.BigTIFF = true
	_, err := w.measure(start, f)
	return f, err
}

// measure returns where the directories end when laid out in format f
// from start: each main directory followed by its SubIFDs, depth first, as
// writeTree writes them.
func (w *Writer) measure(start int64, f ifd.Format) (int64, error) {
	end := start
	sizes := map[shape]int64{}
	for _, d := range w.dirs {
		n, err := w.treeSize(d, f, sizes)
		if err != nil {
			return 0, err
		}
		end += n
	}
	return end, nil
}

// shape is what the size of a directory depends on: its fields and how
// many blocks and SubIFDs it lists. The planes of a stack share one:
// measuring it once saves about a fifth of Close (BenchmarkManyDirectories),
// which is otherwise more than 2 % of writing a stack of 15,120 planes.
type shape struct {
	fields          *ifd.Builder
	blocks, subs    int
	offsets, counts uint16
}

// treeSize is the room d and its SubIFDs take in format f; sizes holds
// the sizes of the shapes measured (nil: none kept).
func (w *Writer) treeSize(d *Directory, f ifd.Format, sizes map[shape]int64) (int64, error) {
	key := shape{d.Fields, len(d.Blocks), len(d.SubIFDs), d.OffsetsTag, d.CountsTag}
	n, known := sizes[key]
	if known && !f.BigTIFF {
		// What finalFields checks besides the shape: classic TIFF's
		// 32-bit offsets and counts.
		for _, blk := range d.Blocks {
			if blk.Offset > math.MaxUint32 || blk.Size > math.MaxUint32 {
				return 0, fmt.Errorf("%w: block at %d of %d bytes", ErrTooLarge, blk.Offset, blk.Size)
			}
		}
	}
	if !known {
		b, err := w.finalFields(d, f, nil)
		if err != nil {
			return 0, err
		}
		if !f.BigTIFF {
			// A field of a BigTIFF type (ifd.Builder.AddUint's LONG8 for
			// a value past 32 bits) needs BigTIFF, as an offset past
			// 4 GiB does: plan promotes, or refuses with BigTIFFNever.
			for _, e := range b.Entries() {
				if e.Type == ifd.Long8 || e.Type == ifd.SLong8 || e.Type == ifd.IFD8 {
					return 0, fmt.Errorf("%w: tag %d has the BigTIFF type %v", ErrTooLarge, e.Tag, e.Type)
				}
			}
		}
		n = b.Size(f.BigTIFF)
		if sizes != nil {
			sizes[key] = n
		}
	}
	for _, sub := range d.SubIFDs {
		m, err := w.treeSize(sub, f, sizes)
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
}

// writeTree encodes d at pos, then its SubIFDs after it, depth first, each
// in one write, and returns where they end. A directory chained to a next
// one points to that end.
func (w *Writer) writeTree(d *Directory, pos int64, chained bool, f ifd.Format) (int64, error) {
	var subs []uint64 // the SubIFDs' offsets
	end := pos
	if len(d.SubIFDs) > 0 {
		b, err := w.finalFields(d, f, nil)
		if err != nil {
			return 0, err
		}
		end += b.Size(f.BigTIFF)
		subs = make([]uint64, len(d.SubIFDs))
		for i, sub := range d.SubIFDs {
			subs[i] = uint64(end)
			n, err := w.treeSize(sub, f, nil)
			if err != nil {
				return 0, err
			}
			end += n
		}
	}
	b, err := w.finalFields(d, f, subs)
	if err != nil {
		return 0, err
	}
	if subs == nil {
		end += b.Size(f.BigTIFF)
	}
	next := uint64(0)
	if chained {
		next = uint64(end)
	}
	if w.encoded, err = b.Encode(w.encoded[:0], pos, next, f); err != nil {
		return 0, fmt.Errorf("tiff: directory at %d: %w", pos, err)
	}
	if _, err := w.h.Write(w.encoded); err != nil {
		return 0, err
	}
	for i, sub := range d.SubIFDs {
		if _, err := w.writeTree(sub, int64(subs[i]), false, f); err != nil {
			return 0, err
		}
	}
	return end, nil
}

// finalFields returns d's fields with the data-location fields added for
// format f: block offsets and counts, and SubIFDs with the offsets subs
// (nil: zeros, enough to size the directory). The builder and the values
// of those fields are the writer's scratch, valid until the next call.
func (w *Writer) finalFields(d *Directory, f ifd.Format, subs []uint64) (*ifd.Builder, error) {
	b := &w.fields
	b.Reset()
	if d.Fields != nil {
		b.AddAll(d.Fields)
	}
	n := len(d.Blocks)
	if n > 0 && (d.OffsetsTag == 0 || d.CountsTag == 0) {
		return nil, fmt.Errorf("%w: blocks without offsets and counts tags", ErrDirectory)
	}
	word, offsetType, directoryType := 4, ifd.Long, ifd.IFD
	if f.BigTIFF {
		word, offsetType, directoryType = 8, ifd.Long8, ifd.IFD8
	}
	size := (2*n + len(d.SubIFDs)) * word
	w.values = slices.Grow(w.values[:0], size)[:size]
	offsets, counts, subIFDs := w.values[:n*word], w.values[n*word:2*n*word], w.values[2*n*word:]
	for i, blk := range d.Blocks {
		if err := putWord(offsets, word, i, blk.Offset, d.OffsetsTag); err != nil {
			return nil, err
		}
		if err := putWord(counts, word, i, blk.Size, d.CountsTag); err != nil {
			return nil, err
		}
	}
	for i := range d.SubIFDs {
		var off uint64
		if subs != nil {
			off = subs[i]
		}
		if err := putWord(subIFDs, word, i, off, TagSubIFDs); err != nil {
			return nil, err
		}
	}
	if n > 0 {
		b.Add(ifd.Entry{Tag: d.OffsetsTag, Type: offsetType, Count: uint64(n), Value: offsets})
		b.Add(ifd.Entry{Tag: d.CountsTag, Type: offsetType, Count: uint64(n), Value: counts})
	}
	if len(d.SubIFDs) > 0 {
		b.Add(ifd.Entry{Tag: TagSubIFDs, Type: directoryType, Count: uint64(len(d.SubIFDs)), Value: subIFDs})
	}
	if err := b.Err(); err != nil { // the caller's fields: a duplicate, a bad type
		return nil, fmt.Errorf("%w: %w", ErrDirectory, err)
	}
	return b, nil
}

// putWord puts v as word i of p, little-endian as ifd takes values: a
// LONG (or IFD) when word is 4, a LONG8 (or IFD8) when it is 8. A value
// past 32 bits in a LONG is ErrTooLarge, never truncated.
func putWord(p []byte, word, i int, v uint64, tag uint16) error {
	switch {
	case word == 8:
		binary.LittleEndian.PutUint64(p[8*i:], v)
	case v > math.MaxUint32:
		return fmt.Errorf("%w: tag %d value %d", ErrTooLarge, tag, v)
	default:
		binary.LittleEndian.PutUint32(p[4*i:], uint32(v))
	}
	return nil
}
