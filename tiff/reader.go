package tiff

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	gtiff "github.com/google/tiff"
	"github.com/google/tiff/bigtiff"

	"github.com/ometiff-go/ometiff/ifd"
)

// File is the structure of a TIFF or BigTIFF file, in either byte order:
// its header and the pages of its main chain, each with its SubIFDs.
//
// A File and its pages do not change once Read returns, so they are safe
// for concurrent use; reading blocks is as safe as the io.ReaderAt behind
// them (an *os.File is).
type File struct {
	Header
	// Size is the length of the file in bytes, as given to Read.
	Size int64
	// NDPI is true for a file in the layout of Hamamatsu's NDP.scan: a
	// classic little-endian TIFF with 64-bit offsets. Its header holds
	// the first directory's offset in 8 bytes; each directory ends with
	// an 8-byte next offset and then, for each entry, the high 4 bytes
	// of its value or value's offset; ASCII values are never inline.
	// Read takes a file so when its first directory, read in that
	// layout, has the NDPI format flag (65420), as OpenSlide does, and
	// its fields then hold the 64-bit values (a single LONG past 4 GiB
	// becomes a LONG8): this is how an NDPI file past 4 GiB addresses
	// its data.
	NDPI bool
	// Pages are the directories of the main chain, in order.
	Pages []*Page
	// LoopsTo is the offset of a page of the chain that the last page
	// names as the next one, when the main chain loops back; 0 when it
	// ends. Read stops the chain there and keeps the pages before, as
	// libtiff does (with a warning): every directory the chain reaches is
	// then read, once. (A chain that reaches a SubIFD is malformed.)
	LoopsTo int64
	// NDPIFallback says, for a file below 4 GiB whose first directory is
	// in the NDPI layout and whose chain is not throughout (a tool
	// rewrote a directory, or the file is damaged), why that layout
	// failed: Read then reads the file as classic TIFF, as Bio-Formats
	// reads every NDPI below 4 GiB, and NDPI is false. Nil otherwise.
	NDPIFallback error

	r io.ReaderAt
}

// MaxDirectories is the most directories Read takes in one file, main
// chain and SubIFDs: a file of more is ErrMalformed. Package pyramid
// writes no file of more.
const MaxDirectories = 1 << 20

// Limits of what Read parses, so that a hostile file can make it neither
// loop nor allocate without end. A sound file stays far below them.
const (
	// maxPages bounds the directories of a file, main chain and SubIFDs.
	maxPages = MaxDirectories
	// maxSubIFDDepth bounds how deep SubIFDs nest below the main chain.
	maxSubIFDDepth = 8
	// maxEntries bounds the entries of one directory; a classic TIFF
	// cannot hold more, and a BigTIFF has no need to.
	maxEntries = 1<<16 - 1
	// readBudget bounds the field values Read allocates, in multiples of
	// the file size (plus slack for tiny files): values of sound
	// directories do not overlap, so a file whose directories would make
	// Read allocate far more than its size (thousands of entries pointing
	// at the same large value) is malformed, and Read stays linear in the
	// file's size.
	readBudget      = 8
	readBudgetSlack = 1 << 20
	// pageBudget bounds, in multiples of the file size (plus the same
	// slack), what Read keeps for the directories themselves: pageCost
	// bytes a directory and entryCost an entry, a little above what a Page
	// retains (TestReadPageCost measures it). A sound directory of n
	// entries takes 6 + 12n bytes of the file or more, and its page's
	// blocks take more again, so this refuses only directories that
	// overlap or hold next to nothing: a 6 MB file of a million such
	// directories once made Read keep over 500 MB.
	pageBudget = 16
	pageCost   = 384
	entryCost  = 64
)

// Read parses the file of size bytes behind r: the header, every directory
// of the main chain and every SubIFD below them, with the values of their
// fields. It reads no image data.
//
// The directories are parsed by github.com/google/tiff (and its bigtiff
// package). Read adds what that parser leaves out, checked before the
// parser runs so that it never allocates what the file cannot hold:
//   - a directory reached twice (a loop of SubIFDs, or the chain reaching
//     a SubIFD), SubIFDs nested too deep, or too many directories; a main
//     chain that loops back to one of its pages ends there (File.LoopsTo);
//   - entry counts, value sizes and offsets past the end of the file, and
//     more values in all than the file can justify;
//   - SubIFDs, which google/tiff does not follow;
//   - inline values cut to their length (google/tiff returns the whole
//     4- or 8-byte slot).
//
// A file in the 64-bit layout of Hamamatsu's NDPI (File.NDPI) is parsed
// so: google/tiff reads its entries as a classic TIFF's, and Read gives
// them the high bytes stored after each directory.
//
// A file that breaks these rules gives an error matching ErrMalformed,
// and one that is no TIFF at all ErrNotTIFF, both naming what is wrong.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if size < classicHeaderSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrNotTIFF, size)
	}
	var head [bigTIFFHeaderSize]byte
	n, err := r.ReadAt(head[:min(size, bigTIFFHeaderSize)], 0)
	if n < classicHeaderSize {
		return nil, fmt.Errorf("%w: reading the header: %w", ErrNotTIFF, err)
	}
	h, err := ParseHeader(head[:n])
	if err != nil {
		return nil, err
	}
	f := &File{Header: h, Size: size, r: r}
	// Why the file is not in the NDPI layout, if it is not.
	ndpiErr := fmt.Errorf("its header's 8 bytes of first offset are 0, or it is big-endian")
	if off, ok := ndpiFirstIFD(h, head[:n]); ok {
		nf := &File{Header: h, Size: size, NDPI: true, r: r}
		nf.FirstIFD = off
		if ndpiErr = nf.looksNDPI(off); ndpiErr == nil {
			f = nf
		}
	}
	err = f.walk()
	if err != nil && f.NDPI && size <= 1<<32 {
		// Below 4 GiB, the classic reading is as good but for short text
		// (Bio-Formats reads every NDPI below 4 GiB so): a tool that
		// rewrote a directory (libtiff appends it in the classic layout)
		// leaves a chain of both layouts.
		c := &File{Header: h, Size: size, r: r, NDPIFallback: err}
		if c.walk() == nil {
			return c, nil
		}
	}
	if err != nil && !h.BigTIFF && !f.NDPI && size > 1<<32 {
		// Classic TIFF cannot address past 4 GiB: a file that does needs
		// a layout of its own.
		err = fmt.Errorf("%w (a classic TIFF of %d bytes, past 4 GiB, and not in the 64-bit layout of a Hamamatsu NDPI: %v)", err, size, ndpiErr)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// walk reads the main chain and the SubIFDs below it.
func (f *File) walk() error {
	w := newWalker(f)
	chain := map[uint64]bool{} // a directory the chain reached: its end
	for off := f.FirstIFD; off != 0; {
		if chain[off] {
			f.LoopsTo = int64(off)
			break
		}
		chain[off] = true
		p, err := w.page(off, 0)
		if err != nil {
			if w.src.failed != nil { // a bad disk, not a bad file
				return fmt.Errorf("tiff: read the directory at %d: %w", off, w.src.failed)
			}
			return err
		}
		f.Pages = append(f.Pages, p)
		off = p.Next
	}
	return nil
}

// looksNDPI says why the directory at off is not the first of a file in
// the NDPI layout, or nil if it is: its entries and the high bytes after
// them lie within the file, and one is the NDPI format flag (65420), as
// OpenSlide detects it. Whatever else is wrong with the directory is then
// the NDPI file's fault, reported as such.
func (f *File) looksNDPI(off uint64) error {
	w := newWalker(f)
	var n uint16
	if off < 12 || off > uint64(f.Size)-2 {
		return fmt.Errorf("its first directory at %d lies outside the file", off)
	}
	if _, err := w.br.Seek(int64(off), io.SeekStart); err != nil {
		return fmt.Errorf("its first directory at %d: %v", off, err)
	}
	if err := w.br.BRead(&n); err != nil {
		return fmt.Errorf("its first directory at %d: %v", off, err)
	}
	if n == 0 || off+2+16*uint64(n)+8 > uint64(f.Size) {
		return fmt.Errorf("its first directory at %d, of %d entries and their high bytes, does not fit the file", off, n)
	}
	for range n {
		e, err := w.rawEntry()
		if err != nil {
			return fmt.Errorf("its first directory at %d: %v", off, err)
		}
		if e.tag == TagNDPIFormatFlag && e.count > 0 {
			return nil
		}
	}
	return fmt.Errorf("its first directory at %d has no NDPI format flag (65420)", off)
}

// ReadCloser is a File read from a named file; Close closes that file.
type ReadCloser struct {
	*File
	f *os.File
}

// Open reads the structure of the named file, as Read does. The file stays
// open for reading blocks until Close.
func Open(name string) (*ReadCloser, error) {
	// A FIFO or a device would block the open, or never end: only a
	// regular file (a link to one too) is opened.
	f, err := OpenRegular(name)
	if errors.Is(err, ErrNotRegular) {
		return nil, fmt.Errorf("%w: %s is not a regular file (but a pipe, device, socket or directory)", ErrNotTIFF, name)
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil {
		var file *File
		if file, err = Read(f, info.Size()); err == nil {
			return &ReadCloser{File: file, f: f}, nil
		}
	}
	f.Close()
	return nil, err
}

// Close closes the file.
func (rc *ReadCloser) Close() error { return rc.f.Close() }

// ndpiFirstIFD returns the first directory's offset of a classic
// little-endian TIFF read as the 8 bytes of an NDPI header, if it is not
// 0. Whether the file is an NDPI is then up to that directory.
func ndpiFirstIFD(h Header, head []byte) (uint64, bool) {
	if h.BigTIFF || h.bigEndian() || len(head) < 12 {
		return 0, false
	}
	off := binary.LittleEndian.Uint64(head[4:12])
	return off, off != 0
}

// walker reads the directories of one file through google/tiff.
type walker struct {
	file      *File
	src       *section
	br        gtiff.BReader
	seen      map[uint64]bool
	allocated int64 // bytes of out-of-line values parsed so far
	kept      int64 // pageCost and entryCost of the directories parsed so far
}

func newWalker(f *File) *walker {
	src := &section{r: f.r, size: f.Size}
	return &walker{file: f, src: src, br: gtiff.NewBReader(src, f.Order), seen: map[uint64]bool{}}
}

// geometry returns the sizes of the entry count, an entry and a value slot
// (which is also the size of an offset).
func (w *walker) geometry() (count, entry, slot int64) {
	if w.file.BigTIFF {
		return 8, 20, 8
	}
	return 2, 12, 4
}

// page reads the directory at off and, below it, its SubIFDs.
func (w *walker) page(off uint64, depth int) (*Page, error) {
	switch {
	case w.seen[off]:
		return nil, fmt.Errorf("%w: directory at %d is reached twice (a loop)", ErrMalformed, off)
	case depth > maxSubIFDDepth:
		return nil, fmt.Errorf("%w: SubIFDs nested deeper than %d", ErrMalformed, maxSubIFDDepth)
	case len(w.seen) >= maxPages:
		return nil, fmt.Errorf("%w: more than %d directories", ErrMalformed, maxPages)
	}
	w.seen[off] = true
	dir, err := w.check(off)
	if err != nil {
		return nil, err
	}
	var d gtiff.IFD
	if w.file.BigTIFF {
		d, err = bigtiff.ParseIFD(w.br, off, tagSpace, fieldTypes)
	} else {
		d, err = gtiff.ParseIFD(w.br, off, tagSpace, fieldTypes)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: directory at %d: %w", ErrMalformed, off, err)
	}
	p := &Page{Offset: int64(off), Next: d.NextOffset(), file: w.file}
	if !w.file.NDPI {
		countSize, entrySize, slot := w.geometry()
		for i, e := range dir.entries {
			if e.tag < TagUIC1 || e.tag > TagUIC4 {
				continue
			}
			// A vendor's table, longer than its type and count say: where
			// it lies, the entry's offset or, for a value that fits in
			// the entry, the entry's own slot (as tifffile reads them).
			at := e.offset
			if t := ifd.Type(e.typ); t.Valid() && e.count <= uint64(slot)/uint64(t.Size()) {
				at = off + uint64(countSize+int64(i)*entrySize+entrySize-slot)
			}
			if p.tables == nil {
				p.tables = map[uint16]uint64{}
			}
			p.tables[e.tag] = at
		}
	}
	p.Fields = make([]ifd.Entry, 0, len(d.Fields()))
	for _, fl := range d.Fields() {
		p.Fields = append(p.Fields, w.entry(fl))
	}
	if w.file.NDPI {
		p.Next = dir.next
		if err := w.widen(p, dir); err != nil {
			return nil, err
		}
	}
	p.locateBlocks()
	e, ok := p.Field(TagSubIFDs)
	if !ok {
		return p, nil
	}
	subs, err := e.Uints()
	if err != nil {
		return nil, fmt.Errorf("%w: SubIFDs of the directory at %d: %w", ErrMalformed, off, err)
	}
	p.SubIFDs = make([]*Page, 0, len(subs))
	for _, s := range subs {
		sub, err := w.page(s, depth+1)
		if err != nil {
			return nil, err
		}
		p.SubIFDs = append(p.SubIFDs, sub)
	}
	return p, nil
}

// check runs over the entries of the directory at off with google/tiff's
// entry parser before its directory parser runs: that parser allocates
// every value as its entry says, so every count, value size and offset is
// checked against the file here first, and the values of all directories
// against the read budget. In the NDPI layout it also reads the next
// offset and the entries' high bytes, and checks the 64-bit offsets too.
func (w *walker) check(off uint64) (directory, error) {
	countSize, entrySize, slot := w.geometry()
	size := uint64(w.file.Size)
	if off < uint64(w.file.Header.Size()) || off > size || size-off < uint64(countSize) {
		return directory{}, fmt.Errorf("%w: directory offset %d outside the %d-byte file", ErrMalformed, off, size)
	}
	if _, err := w.br.Seek(int64(off), io.SeekStart); err != nil {
		return directory{}, fmt.Errorf("%w: directory at %d: %w", ErrMalformed, off, err)
	}
	var n uint64
	var err error
	if w.file.BigTIFF {
		err = w.br.BRead(&n)
	} else {
		var n16 uint16
		err = w.br.BRead(&n16)
		n = uint64(n16)
	}
	if err != nil {
		return directory{}, fmt.Errorf("%w: entry count of the directory at %d: %w", ErrMalformed, off, err)
	}
	tail := uint64(slot) // the next offset; in the NDPI layout 8 bytes, then 4 an entry
	if w.file.NDPI {
		tail = 8 + 4*n
	}
	switch {
	case n == 0: // refused by libtiff too: TIFF 6.0 asks for one entry at least
		return directory{}, fmt.Errorf("%w: directory at %d has no entries", ErrMalformed, off)
	case n > maxEntries || n*uint64(entrySize)+tail > size-off-uint64(countSize):
		return directory{}, fmt.Errorf("%w: directory at %d claims %d entries, past the end of the %d-byte file", ErrMalformed, off, n, size)
	}
	if w.kept += pageCost + entryCost*int64(n); w.kept > pageBudget*w.file.Size+readBudgetSlack {
		return directory{}, fmt.Errorf("%w: %d directories in a %d-byte file: they overlap or hold next to nothing", ErrMalformed, len(w.seen), size)
	}
	d := directory{entries: make([]rawEntry, n)}
	for i := range n {
		if d.entries[i], err = w.rawEntry(); err != nil {
			return directory{}, fmt.Errorf("%w: entry %d of the directory at %d: %w", ErrMalformed, i, off, err)
		}
	}
	if w.file.NDPI {
		if err := w.ndpiTail(off, &d); err != nil {
			return directory{}, err
		}
	}
	for i, e := range d.entries {
		typeSize := uint64(ifd.Type(e.typ).Size())
		if typeSize == 0 {
			continue // unknown type: no value is read
		}
		if e.count > size/typeSize {
			return directory{}, fmt.Errorf("%w: tag %d of the directory at %d has %d values, more than the %d-byte file holds", ErrMalformed, e.tag, off, e.count, size)
		}
		length := e.count * typeSize
		if length > uint64(slot) {
			// google/tiff reads the value at the entry's (low) offset.
			if e.offset > size || length > size-e.offset {
				return directory{}, fmt.Errorf("%w: tag %d of the directory at %d: %d bytes at %d, past the end of the %d-byte file", ErrMalformed, e.tag, off, length, e.offset, size)
			}
			w.allocated += int64(length)
		}
		if !w.file.NDPI {
			continue
		}
		high := d.high[i]
		if !ndpiOutOfLine(e, length) {
			if high != 0 && (e.count != 1 || e.typ != uint16(ifd.Long) && e.typ != uint16(ifd.SLong) && e.typ != uint16(ifd.IFD)) {
				return directory{}, fmt.Errorf("%w: tag %d of the NDPI directory at %d has high bytes %#x for %d inline values of type %d", ErrMalformed, e.tag, off, high, e.count, e.typ)
			}
			continue
		}
		if high == 0 && length > uint64(slot) {
			continue // the value google/tiff reads is the one
		}
		at := e.offset | uint64(high)<<32
		if at > size || length > size-at {
			return directory{}, fmt.Errorf("%w: tag %d of the NDPI directory at %d: %d bytes at %d, past the end of the %d-byte file", ErrMalformed, e.tag, off, length, at, size)
		}
		w.allocated += int64(length)
	}
	if w.allocated > readBudget*w.file.Size+readBudgetSlack {
		return directory{}, fmt.Errorf("%w: directories overlap or repeat (%d bytes of values in a %d-byte file)", ErrMalformed, w.allocated, size)
	}
	return d, nil
}

// directory is what check reads of a directory's entries.
type directory struct {
	entries []rawEntry
	// In the NDPI layout: the high bytes of each entry's value or offset,
	// the entry of each tag, and the next directory's offset.
	high  []uint32
	index map[uint16]int
	next  uint64
}

// ndpiTail reads, after the entries of the NDPI directory at off, its
// 8-byte next offset and the high 4 bytes of each entry's value or
// offset. A tag there twice is ErrMalformed: which of the two high bytes
// would belong to the field google/tiff keeps is not known.
func (w *walker) ndpiTail(off uint64, d *directory) error {
	tail := make([]byte, 8+4*len(d.entries)) // check bounded the count by the file
	at := int64(off) + 2 + 12*int64(len(d.entries))
	if n, err := w.file.r.ReadAt(tail, at); n < len(tail) {
		return fmt.Errorf("%w: the high bytes of the NDPI directory at %d: %v", ErrMalformed, off, err)
	}
	d.next = binary.LittleEndian.Uint64(tail)
	d.high = make([]uint32, len(d.entries))
	d.index = make(map[uint16]int, len(d.entries))
	for i, e := range d.entries {
		if _, twice := d.index[e.tag]; twice {
			return fmt.Errorf("%w: tag %d of the NDPI directory at %d is there twice", ErrMalformed, e.tag, off)
		}
		d.index[e.tag] = i
		d.high[i] = binary.LittleEndian.Uint32(tail[8+4*i:])
	}
	return nil
}

// ndpiOutOfLine reports whether an NDPI entry's value lies elsewhere, its
// slot and high bytes holding the offset: values of more than 4 bytes,
// and ASCII of any length (NDP.scan writes even short strings so, as
// OpenSlide reads them).
func ndpiOutOfLine(e rawEntry, length uint64) bool {
	return length > 4 || (e.typ == uint16(ifd.ASCII) && length > 0)
}

// widen gives the fields of a page read in the NDPI layout their 64-bit
// values, from the directory as check read it: a value read past 4 GiB
// or an ASCII value read out of line in place of what google/tiff read,
// and a LONG, SLONG or IFD with high bytes widened to 64 bits.
func (w *walker) widen(p *Page, d directory) error {
	for i := range p.Fields {
		f := &p.Fields[i]
		k, ok := d.index[f.Tag]
		size := uint64(f.Type.Size())
		if !ok || size == 0 {
			continue
		}
		e, high := d.entries[k], d.high[k]
		length := e.count * size
		switch {
		case ndpiOutOfLine(e, length) && (high != 0 || length <= 4):
			v := make([]byte, length) // check bounded it by the file and the read budget
			at := int64(e.offset | uint64(high)<<32)
			if n, err := w.file.r.ReadAt(v, at); uint64(n) < length {
				return fmt.Errorf("%w: tag %d of the NDPI directory at %d: %v", ErrMalformed, e.tag, p.Offset, err)
			}
			f.Value = v // an NDPI is little-endian, as entries are
		case !ndpiOutOfLine(e, length) && high != 0:
			wide := map[ifd.Type]ifd.Type{ifd.Long: ifd.Long8, ifd.SLong: ifd.SLong8, ifd.IFD: ifd.IFD8}
			f.Type, f.Value = wide[f.Type], binary.LittleEndian.AppendUint64(nil, e.offset|uint64(high)<<32)
		}
	}
	return nil
}

// rawEntry is an entry as check needs it.
type rawEntry struct {
	tag, typ      uint16
	count, offset uint64
}

// rawEntry reads the next entry with google/tiff's entry parser.
func (w *walker) rawEntry() (rawEntry, error) {
	order := w.file.Order
	if w.file.BigTIFF {
		e, err := bigtiff.ParseEntry(w.br)
		if err != nil {
			return rawEntry{}, err
		}
		v := e.ValueOffset()
		return rawEntry{e.TagID(), e.TypeID(), e.Count(), order.Uint64(v[:])}, nil
	}
	e, err := gtiff.ParseEntry(w.br)
	if err != nil {
		return rawEntry{}, err
	}
	v := e.ValueOffset()
	return rawEntry{e.TagID(), e.TypeID(), uint64(e.Count()), uint64(order.Uint32(v[:]))}, nil
}

// entry turns a google/tiff field into an entry as package ifd holds
// them: values cut to their length and little-endian; nil for a type
// unknown to package ifd.
func (w *walker) entry(fl gtiff.Field) ifd.Entry {
	e := ifd.Entry{Tag: fl.Tag().ID(), Type: ifd.Type(fl.Type().ID()), Count: fl.Count()}
	size := e.Type.Size()
	if size == 0 {
		return e
	}
	// check has bounded Count by the file size.
	n := int(e.Count) * size
	raw := fl.Value().Bytes()[:n:n]
	word := size
	if e.Type == ifd.Rational || e.Type == ifd.SRational {
		word = 4 // two LONGs
	}
	if !w.file.bigEndian() || word == 1 {
		// google/tiff reads each field's value into a buffer of its own,
		// and the parsed directory is dropped once its entries are taken:
		// the entry may keep the buffer (a 50 MB OME-XML is not copied).
		e.Value = raw
		return e
	}
	e.Value = make([]byte, len(raw))
	for i := 0; i+word <= len(raw); i += word {
		for j := range word {
			e.Value[i+j] = raw[i+word-1-j]
		}
	}
	return e
}
