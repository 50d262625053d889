package tiff

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/ometiff-go/ometiff/ifd"
)

// Relocated returns a copy of the page whose blocks lie at offsets, of
// counts bytes: for files whose writers stored wrong locations that a
// reader must correct (Zeiss LSM files past 4 GiB, whose 32-bit strip
// offsets wrap, and whose compressed strips' byte counts are those of the
// uncompressed data). There must be one offset and one count for each of
// the page's blocks, each block within the file (ErrMalformed
// otherwise). The copy's offsets and counts fields are LONG8, since their
// values may pass 4 GiB in a classic TIFF; its Offset and Next are p's,
// and Original returns p's original.
func (p *Page) Relocated(offsets, counts []uint64) (*Page, error) {
	if p.blocksErr != nil {
		return nil, p.blocksErr
	}
	if len(offsets) != p.NumBlocks() || len(counts) != p.NumBlocks() {
		return nil, fmt.Errorf("%w: %d offsets and %d byte counts for the %d blocks of the page at %d",
			ErrMalformed, len(offsets), len(counts), p.NumBlocks(), p.Offset)
	}
	entry := func(tag uint16, v []uint64) ifd.Entry {
		e := ifd.Entry{Tag: tag, Type: ifd.Long8, Count: uint64(len(v)), Value: make([]byte, 8*len(v))}
		for i, x := range v {
			binary.LittleEndian.PutUint64(e.Value[8*i:], x)
		}
		return e
	}
	q := *p
	q.SubIFDs = nil
	q.original = p.Original()
	q.offsets, q.counts = entry(p.offsets.Tag, offsets), entry(p.counts.Tag, counts)
	q.Fields = slices.Clone(p.Fields)
	for i := range q.Fields {
		switch q.Fields[i].Tag {
		case q.offsets.Tag:
			q.Fields[i] = q.offsets
		case q.counts.Tag:
			q.Fields[i] = q.counts
		}
	}
	if _, err := q.Blocks(); err != nil {
		return nil, err
	}
	return &q, nil
}

// WithField returns a copy of the page whose field e.Tag is e, in place
// of the page's or added: for a field a vendor's writer is known to store
// otherwise than TIFF says, which a reader corrects (the BitsPerSample
// that old Zeiss LSM writers stored at an offset, though its two values
// fit in the entry). The fields that point into the file (see
// pointsIntoFile) are not replaced so (ErrUnsupported): Relocated moves
// blocks.
// Original returns p's original.
func (p *Page) WithField(e ifd.Entry) (*Page, error) {
	if pointsIntoFile(e.Tag) {
		return nil, fmt.Errorf("%w: %s of the page at %d replaced", ErrUnsupported, TagName(e.Tag), p.Offset)
	}
	q := *p
	q.original = p.Original()
	q.Fields = slices.Clone(p.Fields)
	if k := slices.IndexFunc(q.Fields, func(f ifd.Entry) bool { return f.Tag == e.Tag }); k >= 0 {
		q.Fields[k] = e
	} else {
		k, _ = slices.BinarySearchFunc(q.Fields, e.Tag, func(f ifd.Entry, tag uint16) int { return int(f.Tag) - int(tag) })
		q.Fields = slices.Insert(q.Fields, k, e)
	}
	return &q, nil
}

// pointsIntoFile reports whether a field's values are offsets into the
// file, or the byte counts of the blocks at such offsets: the strips',
// the tiles', SubIFDs and the Exif and GPS IFDs. No copy of such a field
// is right in another file, or after its page's blocks move: the Writer
// writes only those it computes, and WithField replaces none.
func pointsIntoFile(tag uint16) bool {
	switch tag {
	case TagStripOffsets, TagStripByteCounts, TagTileOffsets, TagTileByteCounts, TagSubIFDs, TagExifIFD, TagGPSIFD:
		return true
	}
	return false
}
