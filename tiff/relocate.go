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
