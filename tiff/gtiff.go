package tiff

import (
	"errors"
	"fmt"
	"io"

	gtiff "github.com/google/tiff"

	"github.com/ometiff-go/ometiff/ifd"
)

// This file adapts github.com/google/tiff to Read: the reader it parses
// from, and the tag and field-type spaces it looks entries up in.

// section is what google/tiff parses from: the file's bytes, never past
// size, through a small cache (google/tiff reads a directory a few bytes at
// a time, and each read would otherwise be a system call). The cache holds
// a few windows of the file, the least recently used replaced: the
// directories of a file are often apart from values they share (tifffile
// points every page's XResolution at the first page's), and one window
// would be read again for each. It is used by one goroutine, during Read
// only.
type section struct {
	r       io.ReaderAt
	size    int64
	pos     int64 // of Read
	windows [sectionWindows]window
	clock   uint64 // of the last use
	// failed is the reader's first failure that is not the file ending:
	// the walk reports it as such, not as a malformed file.
	failed error
}

// window is the file's bytes at a given offset.
type window struct {
	at   int64
	buf  []byte
	used uint64 // section.clock at its last use
}

const (
	// sectionCache is the most a window holds; larger reads bypass the
	// cache.
	sectionCache = 64 << 10
	// sectionWindows is how many windows the cache holds.
	sectionWindows = 4
)

// errOffset is a read at a negative offset.
var errOffset = errors.New("negative offset")

// Read reads at the current position and advances it.
func (s *section) Read(p []byte) (int, error) {
	n, err := s.ReadAt(p, s.pos)
	s.pos += int64(n)
	return n, err
}

// Seek sets the position for Read; google/tiff seeks from the start only.
func (s *section) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += s.pos
	case io.SeekEnd:
		offset += s.size
	}
	if offset < 0 {
		return s.pos, errOffset
	}
	s.pos = offset
	return offset, nil
}

// ReadAt reads len(p) bytes at off, or those before the end of the file
// and io.EOF.
func (s *section) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errOffset
	}
	if off >= s.size {
		return 0, io.EOF
	}
	want := int(min(int64(len(p)), s.size-off))
	var n int
	var err error
	if want > sectionCache/2 {
		n, err = s.r.ReadAt(p[:want], off)
	} else {
		s.clock++
		var w *window
		for i := range s.windows {
			c := &s.windows[i]
			if c.buf != nil && off >= c.at && off+int64(want) <= c.at+int64(len(c.buf)) {
				w = c
				break
			}
			if w == nil || c.used < w.used {
				w = c // the least recently used, if none holds the bytes
			}
		}
		if w.buf == nil || off < w.at || off+int64(want) > w.at+int64(len(w.buf)) {
			if cap(w.buf) == 0 {
				w.buf = make([]byte, sectionCache)
			}
			w.buf = w.buf[:min(sectionCache, s.size-off)]
			var got int
			got, err = s.r.ReadAt(w.buf, off)
			w.buf, w.at = w.buf[:got], off
		}
		w.used = s.clock
		n = copy(p[:want], w.buf[off-w.at:])
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && s.failed == nil {
		s.failed = err
	}
	if n == want && (err == nil || errors.Is(err, io.EOF)) {
		err = nil
		if want < len(p) {
			err = io.EOF
		}
	} else if err == nil {
		err = io.ErrUnexpectedEOF // the file is shorter than its size
	}
	return n, err
}

// tagSpace gives google/tiff tags that are only their numbers, which is
// all Read asks of them, instead of its default space's named tags (which
// formats a name for every unknown tag it meets).
var tagSpace gtiff.TagSpace = tagNumbers{}

type tagNumbers struct{}

func (tagNumbers) Name() string                          { return "ometiff" }
func (tagNumbers) GetTag(id uint16) gtiff.Tag            { return tagNumber(id) }
func (tagNumbers) GetTagSet(string) (gtiff.TagSet, bool) { return nil, false }
func (tagNumbers) GetTagSetNameFromTag(uint16) string    { return "" }
func (tagNumbers) ListTagSets() []string                 { return nil }
func (tagNumbers) RegisterTagSet(gtiff.TagSet)           {}

// tagNumber is a tag known by its number.
type tagNumber uint16

func (t tagNumber) ID() uint16                        { return uint16(t) }
func (t tagNumber) Name() string                      { return TagName(uint16(t)) }
func (tagNumber) Interpreter() gtiff.FieldInterpreter { return nil }

// fieldTypes gives google/tiff the field types package ifd knows, with the
// sizes package ifd gives them, so that google/tiff reads exactly the
// values check has bounded. Any other type has size 0: google/tiff then
// reads no value for it (its default space would read one byte per
// count, from wherever the entry points).
var fieldTypes gtiff.FieldTypeSpace = fieldTypeSizes{}

type fieldTypeSizes struct{}

func (fieldTypeSizes) Name() string                                      { return "ometiff" }
func (fieldTypeSizes) GetFieldTypeSet(string) (gtiff.FieldTypeSet, bool) { return nil, false }
func (fieldTypeSizes) ListFieldTypeSets() []string                       { return nil }
func (fieldTypeSizes) RegisterFieldTypeSet(gtiff.FieldTypeSet)           {}

// knownTypes are package ifd's types as google/tiff field types.
var knownTypes = func() (types [ifd.IFD8 + 1]gtiff.FieldType) {
	for id := range types {
		if t := ifd.Type(id); t.Valid() {
			types[id] = gtiff.NewFieldType(uint16(id), t.String(), uint64(t.Size()), false, nil, nil, nil)
		}
	}
	return types
}()

func (fieldTypeSizes) GetFieldType(id uint16) gtiff.FieldType {
	if int(id) < len(knownTypes) && knownTypes[id] != nil {
		return knownTypes[id]
	}
	return gtiff.NewFieldType(id, fmt.Sprintf("TYPE(%d)", id), 0, false, nil, nil, nil)
}
