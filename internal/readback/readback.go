// Package readback reads TIFF files back for tests through code that
// shares nothing with the writer: the structure through
// github.com/google/tiff (with its bigtiff package), the tiles through
// golang.org/x/image/tiff/lzw, compress/zlib and the klauspost zstd decoder,
// and the predictors through plain loops written from the specification.
package readback

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	gtiff "github.com/google/tiff"
	"github.com/google/tiff/bigtiff"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/image/tiff/lzw"
)

// File is a parsed TIFF file.
type File struct {
	BigTIFF bool
	Order   binary.ByteOrder
	IFDs    []*IFD // the main chain
	r       io.ReaderAt
	size    int64
}

// IFD is one directory with its SubIFDs.
type IFD struct {
	Offset  uint64
	Fields  map[uint16]Field
	SubIFDs []*IFD
	order   binary.ByteOrder
}

// Field is one field: its type, count and value bytes in file order.
type Field struct {
	Type  uint16
	Count uint64
	Value []byte
}

// timeout bounds parsing: google/tiff has no cycle check.
const timeout = 20 * time.Second

// Parse reads data's structure with google/tiff, walking SubIFDs itself.
func Parse(data []byte) (*File, error) {
	return ParseFile(bytes.NewReader(data), int64(len(data)))
}

// ParseFile reads the structure of a file of size bytes behind r (an
// *os.File, say, for files too large for memory).
func ParseFile(r interface {
	io.ReaderAt
	io.ReadSeeker
}, size int64) (*File, error) {
	type result struct {
		f   *File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := parse(r, size)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-time.After(timeout):
		return nil, errors.New("readback: google/tiff did not finish parsing (a cycle?)")
	}
}

func parse(r gtiff.ReadAtReadSeeker, size int64) (*File, error) {
	t, err := gtiff.Parse(r, nil, nil)
	if err != nil {
		return nil, err
	}
	f := &File{BigTIFF: t.Version() == bigtiff.Version, Order: t.R().ByteOrder(), r: r, size: size}
	off := t.FirstOffset()
	for _, d := range t.IFDs() {
		ifd, err := f.convert(t.R(), d, 0)
		if err != nil {
			return nil, err
		}
		ifd.Offset = off
		off = d.NextOffset()
		f.IFDs = append(f.IFDs, ifd)
	}
	return f, nil
}

// convert turns a google/tiff directory into an IFD and parses its SubIFDs.
func (f *File) convert(br gtiff.BReader, d gtiff.IFD, depth int) (*IFD, error) {
	if depth > 4 {
		return nil, errors.New("readback: SubIFDs nested too deep")
	}
	out := &IFD{Fields: map[uint16]Field{}, order: f.Order}
	slot := uint64(4)
	if f.BigTIFF {
		slot = 8
	}
	for _, fl := range d.Fields() {
		n := fl.Count() * fl.Type().Size()
		v := fl.Value().Bytes()
		if n <= slot { // google/tiff returns the whole inline slot
			v = v[:n]
		}
		out.Fields[fl.Tag().ID()] = Field{Type: fl.Type().ID(), Count: fl.Count(), Value: v}
	}
	for _, off := range out.Uints(330) {
		var sub gtiff.IFD
		var err error
		if f.BigTIFF {
			sub, err = bigtiff.ParseIFD(br, off, nil, nil)
		} else {
			sub, err = gtiff.ParseIFD(br, off, nil, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("readback: SubIFD at %d: %w", off, err)
		}
		s, err := f.convert(br, sub, depth+1)
		if err != nil {
			return nil, err
		}
		s.Offset = off
		out.SubIFDs = append(out.SubIFDs, s)
	}
	return out, nil
}

// Has reports whether the directory has the tag.
func (d *IFD) Has(tag uint16) bool { _, ok := d.Fields[tag]; return ok }

// Uints returns an unsigned integer field's values (nil if absent).
func (d *IFD) Uints(tag uint16) []uint64 {
	fl, ok := d.Fields[tag]
	if !ok {
		return nil
	}
	return fl.uints(d.order)
}

// uints decodes an unsigned integer field in the file's byte order.
func (fl Field) uints(order binary.ByteOrder) []uint64 {
	var size int
	switch fl.Type {
	case 1, 7:
		size = 1
	case 3:
		size = 2
	case 4, 13:
		size = 4
	case 16, 18:
		size = 8
	default:
		return nil
	}
	v := make([]uint64, 0, fl.Count)
	for p := fl.Value; len(p) >= size; p = p[size:] {
		switch size {
		case 1:
			v = append(v, uint64(p[0]))
		case 2:
			v = append(v, uint64(order.Uint16(p)))
		case 4:
			v = append(v, uint64(order.Uint32(p)))
		default:
			v = append(v, order.Uint64(p))
		}
	}
	return v
}

// Uint returns the first value of an unsigned field, or def if absent.
func (d *IFD) Uint(tag uint16, def uint64) uint64 {
	if v := d.Uints(tag); len(v) > 0 {
		return v[0]
	}
	return def
}

// Text returns an ASCII field without its trailing NUL.
func (d *IFD) Text(tag uint16) string {
	return string(bytes.TrimRight(d.Fields[tag].Value, "\x00"))
}

// Rational returns the first value of a RATIONAL field as a float.
func (d *IFD) Rational(tag uint16) float64 {
	fl := d.Fields[tag]
	if len(fl.Value) < 8 {
		return 0
	}
	return float64(d.order.Uint32(fl.Value)) / float64(d.order.Uint32(fl.Value[4:]))
}

// Each calls fn for every directory: the main chain in order, each followed
// by its SubIFDs.
func (f *File) Each(fn func(d *IFD, main, sub int)) {
	for i, d := range f.IFDs {
		fn(d, i, 0)
		for j, s := range d.SubIFDs {
			fn(s, i, j+1)
		}
	}
}

// decoderFor returns a decompressor for a TIFF Compression value.
func decoderFor(compression uint64) (func([]byte) ([]byte, error), error) {
	switch compression {
	case 1:
		return func(p []byte) ([]byte, error) { return p, nil }, nil
	case 5:
		return func(p []byte) ([]byte, error) {
			return io.ReadAll(lzw.NewReader(bytes.NewReader(p), lzw.MSB, 8))
		}, nil
	case 8, 32946:
		return func(p []byte) ([]byte, error) {
			r, err := zlib.NewReader(bytes.NewReader(p))
			if err != nil {
				return nil, err
			}
			return io.ReadAll(r)
		}, nil
	case 50000:
		return func(p []byte) ([]byte, error) {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
			if err != nil {
				return nil, err
			}
			defer d.Close()
			return d.DecodeAll(p, nil)
		}, nil
	}
	return nil, fmt.Errorf("readback: compression %d not supported", compression)
}

// Dir returns the files of a directory by name, for tests that compare
// sets of files written separately byte for byte.
func Dir(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = data
	}
	return files, nil
}
