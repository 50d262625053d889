package tiff

import (
	"errors"
	"fmt"
	"io"
)

// Private tags of MetaMorph STK files (Molecular Devices), as tifffile and
// Bio-Formats' MetamorphReader read them. Their values do not follow the
// TIFF specification: each entry's count says how many items the table at
// its offset holds, not how many values of its type (Page.ValueOffset
// says where the table is).
const (
	// TagUIC1 (33628, LONG) lists count (id, value) pairs of two LONGs:
	// the value is the datum, or the offset of it (a rational, a string
	// of a LONG length and its bytes, a Julian date and time...).
	TagUIC1 uint16 = 33628
	// TagUIC2 (33629, RATIONAL) holds, for each of the count planes, six
	// LONGs: its Z distance as a rational, and its creation and
	// modification dates (Julian days) and times (ms since midnight).
	TagUIC2 uint16 = 33629
	// TagUIC3 (33630, RATIONAL) is each plane's wavelength, an ordinary
	// field.
	TagUIC3 uint16 = 33630
	// TagUIC4 (33631, LONG) holds, for count planes, a list of a SHORT id
	// and that id's per-plane data, ended by id 0.
	TagUIC4 uint16 = 33631
)

// ValueOffset returns where the value of the page's UIC field with the
// tag (TagUIC1 to TagUIC4) lies in the file: the offset its entry holds,
// or for a value that fits in the entry, where the entry keeps it (as
// tifffile reports both), as the directory's walk read the entry. The
// tables of a MetaMorph STK's UIC fields are read from there, beyond the
// values the entry's type and count say. A page without the field is
// false; in a file in the NDPI layout, whose entries' offsets have high
// bytes elsewhere, no UIC field is found.
func (p *Page) ValueOffset(tag uint16) (uint64, bool) {
	at, ok := p.Original().tables[tag]
	return at, ok
}

// ReadBytes returns the n bytes of the file at off: the tables of private
// fields whose values the directory does not describe (ValueOffset). A
// range past the end of the file is ErrMalformed, refused before anything
// is allocated; a failure of the file's reader is returned wrapped.
func (f *File) ReadBytes(off uint64, n int) ([]byte, error) {
	if size := uint64(f.Size); n < 0 || off > size || uint64(n) > size-off {
		return nil, fmt.Errorf("%w: %d bytes at %d, past the end of the %d-byte file", ErrMalformed, n, off, f.Size)
	}
	b := make([]byte, n)
	if m, err := f.r.ReadAt(b, int64(off)); m < n {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %d bytes at %d: %w", ErrMalformed, n, off, io.ErrUnexpectedEOF)
		}
		return nil, fmt.Errorf("tiff: read %d bytes at %d: %w", n, off, err)
	}
	return b, nil
}
