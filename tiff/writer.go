package tiff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync/atomic"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
)

// Errors. Each message starts with "tiff: "; test with errors.Is.
var (
	// ErrTooLarge is a file that needs BigTIFF written as classic TIFF.
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
// classic TIFF or BigTIFF as it chose; Fields holds everything else. A
// Directory belongs to one Writer: it may appear once in that writer's
// file, and Close marks it.
type Directory struct {
	// Fields are the directory's own fields; nil means none. The writer
	// only reads them, so directories with equal fields (the planes of a
	// stack) may share one Builder.
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

	// placing is the number of the layout that measured the directory
	// last, which tells a directory met twice (see measure).
	placing uint64
}

// layouts numbers the layouts measure plans, across writers.
var layouts atomic.Uint64

// Writer lays out a TIFF file on an output handle: it reserves the header,
// appends data blocks as they come, and at Close writes every directory,
// each serialized whole and handed over in one write, links the main
// chain, and writes the header last.
//
// A Writer is not safe for concurrent use. It stops at the first error.
type Writer struct {
	h         iohandle.Handle
	opts      Options
	dirs      []*Directory
	err       error
	closed    bool
	scratch   []byte          // one encoded directory at a time
	fields    *ifd.Builder    // one directory's final fields at a time
	kind      fieldsKind      // what fields holds, when it is complete
	values    []byte          // the values of its offsets and counts
	encoded   bool            // scratch holds the last directory written, of kind kind
	sizes     map[shape]int64 // of the directories, in the format planned
	lastShape shape
	lastSize  int64
	subs      [maxDepth + 1][]uint64 // SubIFD offsets of the directory written at each depth
}

// NewWriter starts a TIFF file on h, which must be empty. It reserves the
// first 16 bytes for the header, so the first block starts at offset 16.
func NewWriter(h iohandle.Handle, opts Options) (*Writer, error) {
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

// WriteBlock appends one strip or tile and returns where it lies.
func (w *Writer) WriteBlock(p []byte) (Block, error) {
	if err := w.usable(); err != nil {
		return Block{}, err
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
	src := &sourceReader{r: r}
	off := uint64(w.h.Len())
	got, err := io.CopyN(w.h, src, n)
	b := Block{Offset: off, Size: uint64(got)}
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

// Grow makes room for n more directories, so that adding a known number
// of them costs one allocation.
func (w *Writer) Grow(n int) {
	if n > 0 {
		w.dirs = slices.Grow(w.dirs, n)
	}
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
	if err := w.writeDirectories(start, f); err != nil {
		return err
	}
	header, err := Header{Order: w.opts.ByteOrder, BigTIFF: f.BigTIFF, FirstIFD: uint64(start)}.Append(nil)
	if err != nil {
		return err
	}
	_, err = w.h.WriteAt(header, 0)
	return err
}

// plan chooses the format of the directories laid out from start: classic
// TIFF if the options allow and everything fits, else BigTIFF. It leaves
// the directories' sizes in that format in w.sizes.
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

// shape is what the encoded size of a directory depends on: its fields,
// and how many blocks and SubIFDs it lists. Directories sharing a shape (the
// planes of a stack) are sized once.
type shape struct {
	fields       *ifd.Builder
	blocks, subs int
}

// measure checks every directory for format f and sizes it, and returns
// where the directories end when laid out from start: each main directory
// followed by its SubIFDs, depth first, as writeDirectories writes them.
func (w *Writer) measure(start int64, f ifd.Format) (int64, error) {
	id := layouts.Add(1)
	clear(w.sizes)
	if w.sizes == nil {
		w.sizes = map[shape]int64{}
	}
	end := start
	var visit func(d *Directory, depth int) error
	visit = func(d *Directory, depth int) error {
		if d.placing == id || depth > maxDepth {
			return fmt.Errorf("%w: directory used twice or nested too deep", ErrDirectory)
		}
		d.placing = id
		if !f.BigTIFF {
			if err := fitClassic(d.Blocks); err != nil {
				return err
			}
		}
		key := shapeOf(d)
		size, known := w.sizes[key]
		if !known {
			b, err := w.finalFields(d, f, make([]uint64, len(d.SubIFDs)))
			if err != nil {
				return err
			}
			size = b.Size(f.BigTIFF)
			w.sizes[key] = size
		}
		end += size
		for _, sub := range d.SubIFDs {
			if err := visit(sub, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range w.dirs {
		if err := visit(d, 0); err != nil {
			return 0, err
		}
	}
	w.lastShape, w.lastSize = shape{}, w.sizes[shape{}] // sizeOf's cache starts true
	return end, nil
}

// shapeOf returns d's shape.
func shapeOf(d *Directory) shape { return shape{d.Fields, len(d.Blocks), len(d.SubIFDs)} }

// sizeOf is d's size, from the sizes measure left; directories of one
// shape in a row (the planes of a stack) look it up once.
func (w *Writer) sizeOf(d *Directory) int64 {
	if key := shapeOf(d); key != w.lastShape {
		w.lastShape, w.lastSize = key, w.sizes[key]
	}
	return w.lastSize
}

// treeSize is the room d and its SubIFDs take.
func (w *Writer) treeSize(d *Directory) int64 {
	n := w.sizeOf(d)
	for _, sub := range d.SubIFDs {
		n += w.treeSize(sub)
	}
	return n
}

// fitClassic reports blocks that classic TIFF cannot point to.
func fitClassic(blocks []Block) error {
	for _, b := range blocks {
		if b.Offset > math.MaxUint32 || b.Size > math.MaxUint32 {
			return fmt.Errorf("%w: a block at %d of %d bytes", ErrTooLarge, b.Offset, b.Size)
		}
	}
	return nil
}

// maxDepth bounds SubIFD nesting.
const maxDepth = 8

// writeDirectories encodes every directory at its place in the layout
// measure planned, from start on in format f, and appends each in one
// write.
func (w *Writer) writeDirectories(start int64, f ifd.Format) error {
	w.encoded = false
	pos := start
	for i, d := range w.dirs {
		end := pos + w.treeSize(d)
		next := uint64(end)
		if i == len(w.dirs)-1 {
			next = 0
		}
		if err := w.writeTree(d, pos, next, f, 0); err != nil {
			return err
		}
		pos = end
	}
	return nil
}

// writeTree writes d at pos, then its SubIFDs after it, depth first.
func (w *Writer) writeTree(d *Directory, pos int64, next uint64, f ifd.Format, depth int) error {
	subs := w.subs[depth][:0]
	at := pos + w.sizeOf(d)
	for _, sub := range d.SubIFDs {
		subs = append(subs, uint64(at))
		at += w.treeSize(sub)
	}
	w.subs[depth] = subs
	if err := w.writeDirectory(d, pos, next, subs, f); err != nil {
		return err
	}
	for i, sub := range d.SubIFDs {
		if err := w.writeTree(sub, int64(w.subs[depth][i]), 0, f, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// writeDirectory encodes d at pos and appends it in one write.
func (w *Writer) writeDirectory(d *Directory, pos int64, next uint64, subs []uint64, f ifd.Format) error {
	previous := w.kind
	b, err := w.finalFields(d, f, subs)
	if err != nil {
		return err
	}
	again := w.encoded && w.kind == previous // only its place and data moved
	var room []byte
	if !again {
		room = w.lentRoom(w.sizeOf(d))
	}
	out := w.scratch
	switch {
	case again:
		err = b.EncodeAgain(w.scratch, pos, next, f, d.OffsetsTag, d.CountsTag, TagSubIFDs)
	case room != nil: // the OME-XML's directory, say: no scratch grown for it alone
		out, err = b.Encode(room, pos, next, f)
		w.encoded = false
	default:
		w.scratch, err = b.Encode(w.scratch[:0], pos, next, f)
		out, w.encoded = w.scratch, true
	}
	if err != nil {
		return fmt.Errorf("tiff: directory at %d: %w", pos, err)
	}
	_, err = w.h.Write(out)
	return err
}

// largeDirectory is the size from which a directory is encoded straight
// into the handle's buffer, when it lends room, rather than into scratch.
const largeDirectory = 64 << 10

// availableBuffer is a handle that lends its buffer's free room, as
// iohandle.File does.
type availableBuffer interface {
	AvailableBuffer() []byte
}

// lentRoom returns the room the handle's buffer lends when a directory of
// n bytes is large and fits in it, else nil.
func (w *Writer) lentRoom(n int64) []byte {
	h, ok := w.h.(availableBuffer)
	if !ok || n <= largeDirectory {
		return nil
	}
	if room := h.AvailableBuffer(); int64(cap(room)) >= n {
		return room
	}
	return nil
}

// finalFields returns d's fields with the data-location fields added for
// format f: block offsets and counts, and the SubIFDs offsets subs. The
// builder and the values of those fields are the writer's, valid until the
// next call, so that thousands of directories cost no allocation each. For
// a directory of the same kind as the previous one (the planes of a stack)
// only the values are rewritten: the builder already holds the fields.
func (w *Writer) finalFields(d *Directory, f ifd.Format, subs []uint64) (*ifd.Builder, error) {
	kind := fieldsKind{d.Fields, d.OffsetsTag, d.CountsTag, len(d.Blocks), len(subs), f.BigTIFF}
	fresh := w.fields == nil || w.kind != kind
	w.kind = fieldsKind{} // set again once the fields are complete
	if fresh {
		if err := w.startFields(d, f, subs); err != nil {
			return nil, err
		}
	}
	word := 4
	if f.BigTIFF {
		word = 8
	}
	values := w.values
	fields := []struct {
		tag         uint16
		n           int
		value       func(i int) uint64
		directories bool
	}{
		{d.OffsetsTag, len(d.Blocks), func(i int) uint64 { return d.Blocks[i].Offset }, false},
		{d.CountsTag, len(d.Blocks), func(i int) uint64 { return d.Blocks[i].Size }, false},
		{TagSubIFDs, len(subs), func(i int) uint64 { return subs[i] }, true},
	}
	for _, fd := range fields {
		if fd.n == 0 {
			continue
		}
		e, err := offsetField(fd.tag, values[:fd.n*word], fd.value, f.BigTIFF, fd.directories)
		if err != nil {
			return nil, err
		}
		if fresh { // else the builder's entry already points at these values
			w.fields.Add(e)
		}
		values = values[fd.n*word:]
	}
	if err := w.fields.Err(); err != nil {
		return nil, err
	}
	w.kind = kind
	return w.fields, nil
}

// fieldsKind is what the final fields of a directory depend on, apart from
// the values of its offsets and counts.
type fieldsKind struct {
	fields                *ifd.Builder
	offsetsTag, countsTag uint16
	blocks, subs          int
	bigTIFF               bool
}

// startFields fills the writer's builder with d's own fields and makes
// room for the values of its data-location fields.
func (w *Writer) startFields(d *Directory, f ifd.Format, subs []uint64) error {
	if w.fields == nil {
		w.fields = &ifd.Builder{}
	}
	w.fields.Reset()
	if d.Fields != nil {
		if err := d.Fields.Err(); err != nil {
			return err
		}
		w.fields.AddAll(d.Fields)
	}
	if len(d.Blocks) > 0 && (d.OffsetsTag == 0 || d.CountsTag == 0) {
		return fmt.Errorf("%w: blocks without offsets and counts tags", ErrDirectory)
	}
	word := 4
	if f.BigTIFF {
		word = 8
	}
	if need := (2*len(d.Blocks) + len(subs)) * word; cap(w.values) < need {
		w.values = make([]byte, need)
	}
	return nil
}

// offsetField makes a field of offsets or byte counts with its values in
// p, one word each: LONG (IFD for directories) in classic TIFF, LONG8
// (IFD8) in BigTIFF. A value past 32 bits in classic TIFF is ErrTooLarge,
// never truncated.
func offsetField(tag uint16, p []byte, value func(i int) uint64, bigTIFF, directories bool) (ifd.Entry, error) {
	e := ifd.Entry{Tag: tag, Type: ifd.Long, Value: p}
	switch {
	case bigTIFF && directories:
		e.Type = ifd.IFD8
	case bigTIFF:
		e.Type = ifd.Long8
	case directories:
		e.Type = ifd.IFD
	}
	size := e.Type.Size()
	e.Count = uint64(len(p) / size)
	for i := range len(p) / size {
		v := value(i)
		switch {
		case size == 8:
			binary.LittleEndian.PutUint64(p[8*i:], v)
		case v > math.MaxUint32:
			return e, fmt.Errorf("%w: tag %d value %d", ErrTooLarge, tag, v)
		default:
			binary.LittleEndian.PutUint32(p[4*i:], uint32(v))
		}
	}
	return e, nil
}
