package tiff

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
)

// rawDir is a directory placed at an offset of a raw file, its entries
// written as they are, however wrong (the offset of a rawEntry is the
// whole value slot read as an unsigned integer).
type rawDir struct {
	at      uint64
	entries []rawEntry
	next    uint64
}

// rawFile lays a header pointing at first and the directories out in a
// file of size bytes, whatever they say: the hostile files of the tests.
func rawFile(bigTIFF bool, order binary.ByteOrder, size int, first uint64, dirs ...rawDir) []byte {
	h := Header{Order: order, BigTIFF: bigTIFF, FirstIFD: first}
	p, err := h.Append(nil)
	if err != nil {
		panic(err)
	}
	p = append(p, make([]byte, size-len(p))...)
	o := order.(binary.AppendByteOrder)
	for _, d := range dirs {
		var b []byte
		if bigTIFF {
			b = o.AppendUint64(b, uint64(len(d.entries)))
		} else {
			b = o.AppendUint16(b, uint16(len(d.entries)))
		}
		for _, e := range d.entries {
			b = o.AppendUint16(o.AppendUint16(b, e.tag), e.typ)
			if bigTIFF {
				b = o.AppendUint64(o.AppendUint64(b, e.count), e.offset)
			} else {
				b = o.AppendUint32(o.AppendUint32(b, uint32(e.count)), uint32(e.offset))
			}
		}
		if bigTIFF {
			b = o.AppendUint64(b, d.next)
		} else {
			b = o.AppendUint32(b, uint32(d.next))
		}
		copy(p[d.at:], b)
	}
	return p
}

// littleTIFF is a classic little-endian raw file of 1 KB.
func littleTIFF(first uint64, dirs ...rawDir) []byte {
	return rawFile(false, binary.LittleEndian, 1024, first, dirs...)
}

// subIFDs is a SubIFDs entry listing one directory.
func subIFDs(at uint64) rawEntry { return rawEntry{TagSubIFDs, uint16(ifd.IFD), 1, at} }

// width is an ImageWidth entry.
var width = rawEntry{TagImageWidth, uint16(ifd.Short), 1, 7}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadHostile reads files whose directories loop, nest without end,
// or claim values, counts and offsets past their end: each must be
// ErrMalformed (or ErrNotTIFF), named, and Read must allocate no more than
// a few times the file's size. Without the checks in front of google/tiff,
// the loops hang, the counts allocate gigabytes, and the BigTIFF count
// overflows into a panic.
func TestReadHostile(t *testing.T) {
	deep := []rawDir{}
	for i := range uint64(12) {
		deep = append(deep, rawDir{at: 100 + 40*i, entries: []rawEntry{width, subIFDs(140 + 40*i)}})
	}
	sameValue := rawDir{at: 8}
	for i := range 2000 {
		sameValue.entries = append(sameValue.entries, rawEntry{uint16(300 + i), uint16(ifd.Byte), 40000, 30000})
	}
	tests := []struct {
		name string
		file []byte
		want error
		says string // in the message
	}{
		{"too short", []byte("II*\x00"), ErrNotTIFF, "4 bytes"},
		{"not TIFF", []byte("PK\x03\x04 nothing here"), ErrNotTIFF, "byte order"},
		{"SubIFD is its parent", littleTIFF(100, rawDir{at: 100, entries: []rawEntry{width, subIFDs(100)}}), ErrMalformed, "reached twice"},
		{"SubIFDs loop", littleTIFF(100, rawDir{at: 100, entries: []rawEntry{width, subIFDs(200)}}, rawDir{at: 200, entries: []rawEntry{subIFDs(100)}}), ErrMalformed, "reached twice"},
		{"SubIFD is the next page", littleTIFF(100, rawDir{at: 100, entries: []rawEntry{width, subIFDs(200)}, next: 200}, rawDir{at: 200, entries: []rawEntry{width}}), ErrMalformed, "reached twice"},
		{"SubIFDs nest too deep", littleTIFF(100, deep...), ErrMalformed, "deeper"},
		{"first directory past the end", littleTIFF(5000), ErrMalformed, "outside"},
		{"first directory in the header", littleTIFF(2), ErrMalformed, "outside"},
		{"next directory past the end", littleTIFF(100, rawDir{at: 100, entries: []rawEntry{width}, next: 1 << 31}), ErrMalformed, "outside"},
		{"SubIFD past the end", littleTIFF(100, rawDir{at: 100, entries: []rawEntry{width, subIFDs(1 << 20)}}), ErrMalformed, "outside"},
		{"entries past the end", littleTIFF(1000, rawDir{at: 1000, entries: []rawEntry{width, width}}), ErrMalformed, "entries"},
		{"entry count past the end", func() []byte {
			p := littleTIFF(100)
			binary.LittleEndian.PutUint16(p[100:], 60000)
			return p
		}(), ErrMalformed, "60000 entries"},
		{"value past the end", littleTIFF(100, rawDir{at: 100, entries: []rawEntry{{TagImageDescription, uint16(ifd.ASCII), 100, 1000}}}), ErrMalformed, "tag 270"},
		{"value offset past the end", littleTIFF(100, rawDir{at: 100, entries: []rawEntry{{TagImageDescription, uint16(ifd.ASCII), 100, 1 << 31}}}), ErrMalformed, "tag 270"},
		{"2^31 LONGs", littleTIFF(100, rawDir{at: 100, entries: []rawEntry{{TagTileOffsets, uint16(ifd.Long), 1 << 31, 200}}}), ErrMalformed, "tag 324"},
		{"BigTIFF count overflows", rawFile(true, binary.BigEndian, 1024, 100, rawDir{at: 100, entries: []rawEntry{{TagTileOffsets, uint16(ifd.Long8), 1 << 61, 200}}}), ErrMalformed, "tag 324"},
		{"BigTIFF count negative", rawFile(true, binary.LittleEndian, 1024, 100, rawDir{at: 100, entries: []rawEntry{{TagTileOffsets, uint16(ifd.Long8), 1 << 63, 200}}}), ErrMalformed, "tag 324"},
		{"BigTIFF value offset negative", rawFile(true, binary.LittleEndian, 1024, 100, rawDir{at: 100, entries: []rawEntry{{TagTileOffsets, uint16(ifd.Long8), 3, 1 << 63}}}), ErrMalformed, "tag 324"},
		{"BigTIFF directory offset negative", rawFile(true, binary.LittleEndian, 1024, 1<<63), ErrMalformed, "outside"},
		{"values repeat past the budget", rawFile(false, binary.LittleEndian, 70000, 8, sameValue), ErrMalformed, "overlap or repeat"},
		{"a directory of no entries", littleTIFF(100, rawDir{at: 100}), ErrMalformed, "no entries"},
		{"offsets of a bad type", littleTIFF(100, rawDir{at: 100, entries: []rawEntry{{TagSubIFDs, uint16(ifd.ASCII), 4, 0}}}), ErrMalformed, "SubIFDs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = Read(bytes.NewReader(tt.file), int64(len(tt.file))) })
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.says)
			assert.LessOrEqual(t, n, uint64(readBudget*len(tt.file)+readBudgetSlack+1<<20), "bytes allocated for a %d-byte file", len(tt.file))
		})
	}
}

// smallPages is a classic file of n directories of entries SHORT entries
// each (ImageWidth, ImageLength...) in a chain, and nothing else.
func smallPages(n, entries int) []byte {
	const at = 8
	size := 2 + 12*entries + 4
	dirs := make([]rawDir, n)
	for i := range dirs {
		d := rawDir{at: uint64(at + i*size)}
		for e := range entries {
			d.entries = append(d.entries, rawEntry{uint16(256 + e), uint16(ifd.Short), 1, 7})
		}
		if i+1 < n {
			d.next = d.at + uint64(size)
		}
		dirs[i] = d
	}
	return rawFile(false, binary.LittleEndian, at+n*size, at, dirs...)
}

// TestReadChainLoop reads main chains that loop back to one of their
// pages: up to the loop, each page once, the loop said in LoopsTo, as
// libtiff reads them (tifffile 2023.2 refuses them). A chain that ends
// has LoopsTo 0.
func TestReadChainLoop(t *testing.T) {
	page := func(at, next uint64) rawDir { return rawDir{at: at, entries: []rawEntry{width}, next: next} }
	tests := []struct {
		name  string
		file  []byte
		pages []int64
		loops int64
	}{
		{"on itself", littleTIFF(100, page(100, 100)), []int64{100}, 100},
		{"back to the first", littleTIFF(100, page(100, 200), page(200, 100)), []int64{100, 200}, 100},
		{"back to the middle", littleTIFF(100, page(100, 200), page(200, 300), page(300, 200)), []int64{100, 200, 300}, 200},
		{"no loop", littleTIFF(100, page(100, 200), page(200, 0)), []int64{100, 200}, 0},
	}
	for _, tt := range tests {
		f, err := Read(bytes.NewReader(tt.file), int64(len(tt.file)))
		require.NoError(t, err, tt.name)
		var got []int64
		for _, p := range f.Pages {
			got = append(got, p.Offset)
		}
		assert.Equal(t, tt.pages, got, tt.name)
		assert.Equal(t, tt.loops, f.LoopsTo, tt.name)
	}
}

// TestReadManySmallPages: the directories' budget leaves room for pages of
// six entries with no data at all, more than any sound page needs, and
// refuses pages of one entry, which would make Read keep over 20 times the
// file's size (TestReadPageCost checks that the budget charges what Read
// keeps). Read allocates several times more than it keeps, all garbage
// of google/tiff's parsing, which TestReadHostile's bound leaves out.
func TestReadManySmallPages(t *testing.T) {
	file := smallPages(20000, 6)
	f, err := Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	assert.Len(t, f.Pages, 20000)

	file = smallPages(20000, 1)
	_, err = Read(bytes.NewReader(file), int64(len(file)))
	require.ErrorIs(t, err, ErrMalformed)
	assert.ErrorContains(t, err, "directories in a 360008-byte file: they overlap or hold next to nothing")
}

// TestReadPageCost measures what Read keeps for each directory, of one to
// twelve entries: at most pageCost and entryCost a directory and an entry,
// which the directories' budget charges.
func TestReadPageCost(t *testing.T) {
	const n = 5000
	for _, entries := range []int{1, 6, 12} {
		file := smallPages(n, entries)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f, err := Read(bytes.NewReader(file), int64(len(file)))
		require.NoError(t, err)
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
		assert.LessOrEqual(t, kept, int64(pageCost+entryCost*entries), "bytes kept a directory of %d entries", entries)
		t.Logf("%d entries: %d bytes kept a directory", entries, kept)
		runtime.KeepAlive(f)
	}
}

// TestReadUnknownTypeReadsNothing: an entry of an unknown type keeps its
// count and a nil value, even when the count would lie past the end (its
// size is unknown, so nothing points anywhere).
func TestReadUnknownTypeReadsNothing(t *testing.T) {
	p := littleTIFF(100, rawDir{at: 100, entries: []rawEntry{width, {0x110, 99, 1 << 30, 0xAA}, {0x111, 14, 3, 1 << 30}}})
	f, err := Read(bytes.NewReader(p), int64(len(p)))
	require.NoError(t, err)
	require.Len(t, f.Pages, 1)
	assert.Equal(t, []ifd.Entry{
		{Tag: TagImageWidth, Type: ifd.Short, Count: 1, Value: []byte{7, 0}},
		{Tag: 0x110, Type: 99, Count: 1 << 30},
		{Tag: 0x111, Type: 14, Count: 3},
	}, f.Pages[0].Fields)
}

// sampleFields builds a directory with every adder, values in and out of
// line, as package ifd's builder holds them.
func sampleFields(bigTIFF bool) *ifd.Builder {
	var b ifd.Builder
	b.AddShort(256, 70000%65536)
	b.AddUint(257, 70000)
	b.AddShort(258, 16, 16, 16)
	b.AddByte(400, 1, 2, 3, 4, 5)
	b.AddASCII(270, "<OME>déjà vu</OME>")
	b.AddASCII(305, "")
	b.AddASCII(306, "abc") // inline, 4 bytes
	b.AddRational(282, ifd.Fraction{Num: 10000, Den: 1}, ifd.Fraction{Num: 3, Den: 7})
	b.AddFloat(401, 1.5, float32(math.Inf(-1)))
	b.AddDouble(402, math.Pi)
	b.Add(ifd.Entry{Tag: 331, Type: ifd.IFD, Count: 2, Value: binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 1000), 2000)})
	b.Add(ifd.Entry{Tag: 403, Type: ifd.SShort, Count: 2, Value: []byte{0xff, 0xff, 1, 0}})
	b.Add(ifd.Entry{Tag: 404, Type: ifd.SRational, Count: 1, Value: []byte{0xfe, 0xff, 0xff, 0xff, 3, 0, 0, 0}})
	b.Add(ifd.Entry{Tag: 405, Type: ifd.Undefined, Count: 3, Value: []byte{9, 8, 7}})
	b.AddShort(406, 5) // inline, shorter than the slot
	if bigTIFF {
		b.AddUint(407, 1<<40, 7)
		b.Add(ifd.Entry{Tag: 408, Type: ifd.IFD8, Count: 1, Value: binary.LittleEndian.AppendUint64(nil, 1<<33)})
	}
	return &b
}

// oneDirectory is a file of the directory b in format f, at offset 16.
func oneDirectory(t testing.TB, b *ifd.Builder, f ifd.Format) []byte {
	t.Helper()
	h := Header{Order: f.Order, BigTIFF: f.BigTIFF, FirstIFD: 16}
	data, err := h.Append(nil)
	require.NoError(t, err)
	data = append(data, make([]byte, 16-len(data))...)
	data, err = b.Encode(data, 16, 0, f)
	require.NoError(t, err)
	return data
}

// TestBuilderRoundTrip encodes a directory of every field type with
// package ifd in each format, and reads it back: the entries must be the
// builder's, values cut to their length and little-endian.
func TestBuilderRoundTrip(t *testing.T) {
	for _, f := range []ifd.Format{{}, {Order: binary.BigEndian}, {BigTIFF: true}, {Order: binary.BigEndian, BigTIFF: true}} {
		b := sampleFields(f.BigTIFF)
		data := oneDirectory(t, b, f)
		file, err := Read(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err, "%+v", f)
		require.Len(t, file.Pages, 1)
		assert.Equal(t, b.Entries(), file.Pages[0].Fields, "%+v", f)
		assert.Zero(t, file.Pages[0].Next)
		assert.Equal(t, int64(16), file.Pages[0].Offset)
	}
}

// FuzzBuilderRoundTrip encodes directories of random fields with package
// ifd, in the format the input picks, and reads them back with Read: the
// entries must be those built. ASCII values end in a NUL and may hold
// more (several strings), of 1 to 39 bytes: inline up to 4 (8 in
// BigTIFF), out of line past it, padded when odd.
func FuzzBuilderRoundTrip(f *testing.F) {
	f.Add(byte(0), []byte{1, 3, 2, 0xff, 0xff, 2, 2, 5, 'h', 'i', 'x', 'y', 'z'})
	f.Add(byte(3), []byte{0x30, 16, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})
	f.Add(byte(2), []byte{0x10, 2, 4, 'a', 'b', 'c', 0, 0x11, 2, 5, 'h', 'e', 'l', 'l', 'o', 0x12, 2, 9, 'x', 0, 'y', 'z'}) // ASCII: inline, out of line, odd
	f.Fuzz(func(t *testing.T, format byte, data []byte) {
		fm := ifd.Format{BigTIFF: format&1 != 0}
		if format&2 != 0 {
			fm.Order = binary.BigEndian
		}
		var b ifd.Builder
		for i := uint16(1); len(data) >= 3; i++ {
			typ := ifd.Type(data[1] % 19)
			n := int(data[2]%40) * typ.Size()
			tag := i*256 + uint16(data[0])
			// SubIFDs is left out: Read follows it.
			if !typ.Valid() || n == 0 || (typ == ifd.Long8 || typ == ifd.SLong8 || typ == ifd.IFD8) && !fm.BigTIFF || tag == TagSubIFDs {
				data = data[3:]
				continue
			}
			value := make([]byte, n)
			copy(value, data[3:])
			if typ == ifd.ASCII {
				value[n-1] = 0
			}
			b.Add(ifd.Entry{Tag: tag, Type: typ, Count: uint64(n / typ.Size()), Value: value})
			data = data[min(len(data), 3+n):]
		}
		if b.Err() != nil {
			return
		}
		file := oneDirectory(t, &b, fm)
		got, err := Read(bytes.NewReader(file), int64(len(file)))
		if b.Len() == 0 {
			require.ErrorIs(t, err, ErrMalformed, "a directory of no entries")
			return
		}
		require.NoError(t, err)
		require.Len(t, got.Pages, 1)
		require.Equal(t, b.Entries(), got.Pages[0].Fields)
	})
}

// countingReader counts the reads that reach the file.
type countingReader struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestReadIsBuffered: google/tiff reads a directory a few bytes at a time;
// Read serves those reads from one cached read of the file per directory
// or less, instead of a system call each.
func TestReadIsBuffered(t *testing.T) {
	data, err := os.ReadFile(goldenPath("tiled-subifds"))
	require.NoError(t, err)
	c := &countingReader{r: bytes.NewReader(data)}
	f, err := Read(c, int64(len(data)))
	require.NoError(t, err)
	assert.Len(t, f.Pages, 2)
	assert.LessOrEqual(t, c.reads, 6, "reads for 5 directories")
}

// TestReadSharedValues: directories that point at values they share far
// from them (tifffile writes every page's resolution once, before the
// directories) are still read a window of the file at a time, not one
// read for the values and one for the directory again, each page.
func TestReadSharedValues(t *testing.T) {
	const pages, gap = 2000, 1 << 20
	le := binary.LittleEndian
	data := le.AppendUint16([]byte("II"), 42)
	data = le.AppendUint32(data, gap) // the first directory, after the values and a gap
	data = le.AppendUint32(le.AppendUint32(data, 72), 1)
	data = append(data, make([]byte, gap-len(data))...)
	entry := func(b []byte, tag, typ uint16, count, value uint32) []byte {
		return le.AppendUint32(le.AppendUint32(le.AppendUint16(le.AppendUint16(b, tag), typ), count), value)
	}
	for i := range pages {
		next := uint32(len(data)) + 2 + 6*12 + 4
		data = le.AppendUint16(data, 6)
		data = entry(data, TagImageWidth, uint16(ifd.Long), 1, 1)
		data = entry(data, TagImageLength, uint16(ifd.Long), 1, 1)
		data = entry(data, TagStripOffsets, uint16(ifd.Long), 1, 8)
		data = entry(data, TagStripByteCounts, uint16(ifd.Long), 1, 1)
		data = entry(data, TagXResolution, uint16(ifd.Rational), 1, 8)
		data = entry(data, TagYResolution, uint16(ifd.Rational), 1, 8)
		if i == pages-1 {
			next = 0
		}
		data = le.AppendUint32(data, next)
	}
	c := &countingReader{r: bytes.NewReader(data)}
	f, err := Read(c, int64(len(data)))
	require.NoError(t, err)
	require.Len(t, f.Pages, pages)
	x, ok := f.Pages[pages-1].Field(TagXResolution)
	require.True(t, ok)
	assert.Equal(t, []byte{72, 0, 0, 0, 1, 0, 0, 0}, x.Value)
	dirs := pages * (2 + 6*12 + 4)
	assert.LessOrEqual(t, c.reads, 2+dirs/(sectionCache/2), "reads for %d directories of %d bytes", pages, dirs)
}

// shortReader is a file that ends before the size it is said to have.
type shortReader struct{ data []byte }

func (s shortReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(s.data)) {
		return 0, io.EOF
	}
	n := copy(p, s.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestReadBlocks reads every block of every golden back through
// ReadBlock, and the errors of blocks outside the file.
func TestReadBlocks(t *testing.T) {
	for _, g := range goldens() {
		data, err := os.ReadFile(goldenPath(g.name))
		require.NoError(t, err)
		f, err := Read(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		for _, p := range f.Pages {
			l, err := p.Layout()
			require.NoError(t, err)
			require.Equal(t, l.Blocks(), p.NumBlocks())
			buf := []byte("x")
			for i := range p.NumBlocks() {
				b, err := p.Block(i)
				require.NoError(t, err)
				buf, err = p.ReadBlock(buf[:1], i)
				require.NoError(t, err)
				assert.Equal(t, data[b.Offset:b.Offset+b.Size], buf[1:], "%s block %d", g.name, i)
			}
			_, err = p.ReadBlock(nil, p.NumBlocks())
			assert.ErrorIs(t, err, ErrMalformed)
		}
	}
	strip := littleTIFF(100, rawDir{at: 100, entries: []rawEntry{width, {TagStripOffsets, uint16(ifd.Long), 1, 900}, {TagStripByteCounts, uint16(ifd.Long), 1, 100}}})
	f, err := Read(shortReader{strip[:950]}, int64(len(strip)))
	require.NoError(t, err)
	_, err = f.Pages[0].ReadBlock(nil, 0)
	assert.ErrorIs(t, err, ErrMalformed, "a file shorter than its size")
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	closed, err := os.CreateTemp(t.TempDir(), "strip")
	require.NoError(t, err)
	_, err = closed.Write(strip)
	require.NoError(t, err)
	f, err = Read(closed, int64(len(strip)))
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	_, err = f.Pages[0].ReadBlock(nil, 0)
	assert.ErrorIs(t, err, os.ErrClosed)
	assert.NotErrorIs(t, err, ErrMalformed, "the reader's failure, not the file's")

	hostile := littleTIFF(100, rawDir{at: 100, entries: []rawEntry{width, {TagStripOffsets, uint16(ifd.Long), 2, 200}, {TagStripByteCounts, uint16(ifd.Long), 2, 208}}})
	binary.LittleEndian.PutUint32(hostile[200:], 900)
	binary.LittleEndian.PutUint32(hostile[204:], 1<<31)
	binary.LittleEndian.PutUint32(hostile[208:], 200)
	binary.LittleEndian.PutUint32(hostile[212:], 10)
	f, err = Read(bytes.NewReader(hostile), int64(len(hostile)))
	require.NoError(t, err)
	for i, says := range []string{"200 bytes at 900", "10 bytes at 2147483648"} {
		_, err := f.Pages[0].ReadBlock(nil, i)
		require.ErrorIs(t, err, ErrMalformed)
		assert.Contains(t, err.Error(), "StripByteCounts["+string(rune('0'+i))+"]")
		assert.Contains(t, err.Error(), says)
	}

	// 0 bytes at offset 0 is a sparse block (GDAL's); anywhere else, a
	// damaged count, which libtiff refuses too.
	binary.LittleEndian.PutUint32(hostile[200:], 0)
	binary.LittleEndian.PutUint32(hostile[204:], 900)
	binary.LittleEndian.PutUint32(hostile[208:], 0)
	binary.LittleEndian.PutUint32(hostile[212:], 0)
	f, err = Read(bytes.NewReader(hostile), int64(len(hostile)))
	require.NoError(t, err)
	b, err := f.Pages[0].Block(0)
	require.NoError(t, err, "sparse")
	assert.Equal(t, Block{}, b)
	_, err = f.Pages[0].ReadBlock(nil, 1)
	require.ErrorIs(t, err, ErrMalformed)
	assert.ErrorContains(t, err, "StripByteCounts[1] of the page at 100: 0 bytes at 900 (a sparse block lies at offset 0)")
}

// pageWith returns the page of a BigTIFF holding one directory of fields,
// with 4 KB after it for blocks.
func pageWith(t *testing.T, build func(b *ifd.Builder)) *Page {
	t.Helper()
	var b ifd.Builder
	build(&b)
	data := append(oneDirectory(t, &b, ifd.Format{BigTIFF: true}), make([]byte, 4096)...)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	return f.Pages[0]
}

// TestLayout checks the layouts of tiled, stripped and planar pages and
// the errors of contradicting fields.
func TestLayout(t *testing.T) {
	image := func(w, h uint64, samples uint16) func(b *ifd.Builder) {
		return func(b *ifd.Builder) {
			b.AddUint(TagImageWidth, w)
			b.AddUint(TagImageLength, h)
			b.AddShort(TagSamplesPerPixel, samples)
			bits := make([]uint16, samples)
			for i := range bits {
				bits[i] = 16
			}
			b.AddShort(TagBitsPerSample, bits...)
		}
	}
	tiles := func(tw, th uint16, n int) func(b *ifd.Builder) {
		return func(b *ifd.Builder) {
			b.AddShort(TagTileWidth, tw)
			b.AddShort(TagTileLength, th)
			b.AddLong(TagTileOffsets, make([]uint32, n)...)
			b.AddLong(TagTileByteCounts, make([]uint32, n)...)
		}
	}
	strips := func(rows uint32, n int) func(b *ifd.Builder) {
		return func(b *ifd.Builder) {
			if rows > 0 {
				b.AddLong(TagRowsPerStrip, rows)
			}
			b.AddLong(TagStripOffsets, make([]uint32, n)...)
			b.AddLong(TagStripByteCounts, make([]uint32, n)...)
		}
	}
	with := func(parts ...func(b *ifd.Builder)) func(b *ifd.Builder) {
		return func(b *ifd.Builder) {
			for _, p := range parts {
				p(b)
			}
		}
	}
	planar := func(b *ifd.Builder) { b.AddShort(TagPlanarConfiguration, PlanarSeparate) }
	tests := []struct {
		name   string
		fields func(b *ifd.Builder)
		want   Layout
		err    error
		says   string
	}{
		{"tiled", with(image(100, 40, 1), tiles(32, 16, 12)), Layout{Width: 100, Height: 40, SamplesPerPixel: 1, BitsPerSample: 16, SampleFormat: 1, PlanarConfiguration: 1,
			Compression: 1, Predictor: 1, Photometric: PhotometricBlackIsZero, Tiled: true, BlockWidth: 32, BlockHeight: 16, BlocksAcross: 4, BlocksDown: 3, Planes: 1}, nil, ""},
		{"one strip by default", with(image(100, 40, 3), strips(0, 1)), Layout{Width: 100, Height: 40, SamplesPerPixel: 3, BitsPerSample: 16, SampleFormat: 1, PlanarConfiguration: 1,
			Compression: 1, Predictor: 1, Photometric: PhotometricRGB, BlockWidth: 100, BlockHeight: 40, BlocksAcross: 1, BlocksDown: 1, Planes: 1}, nil, ""},
		{"planar strips", with(image(100, 40, 3), strips(16, 9), planar), Layout{Width: 100, Height: 40, SamplesPerPixel: 3, BitsPerSample: 16, SampleFormat: 1, PlanarConfiguration: 2,
			Compression: 1, Predictor: 1, Photometric: PhotometricRGB, BlockWidth: 100, BlockHeight: 16, BlocksAcross: 1, BlocksDown: 3, Planes: 3}, nil, ""},
		{"too few tiles", with(image(100, 40, 1), tiles(32, 16, 11)), Layout{}, ErrMalformed, "11 TileOffsets"},
		{"too many tiles", with(image(100, 40, 1), tiles(32, 16, 13)), Layout{}, ErrMalformed, "13 TileOffsets"},
		{"planar needs a plane per sample", with(image(100, 40, 3), strips(16, 3), planar), Layout{}, ErrMalformed, "3 StripOffsets"},
		{"10^10 pixels in a 1 KB file", with(image(100000, 100000, 1), tiles(256, 256, 1)), Layout{}, ErrMalformed, "1 TileOffsets"},
		{"strips for a tiled page", with(image(100, 40, 1), strips(16, 3), func(b *ifd.Builder) { b.AddShort(TagTileWidth, 16); b.AddShort(TagTileLength, 16) }), Layout{}, ErrMalformed, "StripOffsets instead of TileOffsets"},
		{"tile length missing", with(image(100, 40, 1), tiles(32, 16, 12), func(b *ifd.Builder) { b.Remove(TagTileLength) }), Layout{}, ErrMalformed, "lacks TileWidth or TileLength"},
		{"tiles of 0", with(image(100, 40, 1), tiles(0, 16, 12)), Layout{}, ErrMalformed, "tiles of 0 x 16"},
		{"RowsPerStrip 0", with(image(100, 40, 1), strips(0, 1), func(b *ifd.Builder) { b.AddLong(TagRowsPerStrip, 0) }), Layout{}, ErrMalformed, "RowsPerStrip"},
		{"no width", with(strips(0, 1), func(b *ifd.Builder) { b.AddShort(TagImageLength, 4) }), Layout{}, ErrMalformed, "no ImageWidth"},
		{"height 0", with(image(100, 0, 1), strips(0, 1)), Layout{}, ErrMalformed, "ImageLength of the page at 16 is 0"},
		{"width past 2^32", with(image(1<<40, 1, 1), strips(0, 1)), Layout{}, ErrUnsupported, "ImageWidth"},
		{"bits differ", with(image(10, 1, 1), strips(0, 1), func(b *ifd.Builder) {
			b.Remove(TagSamplesPerPixel)
			b.Remove(TagBitsPerSample)
			b.AddShort(TagSamplesPerPixel, 2)
			b.AddShort(TagBitsPerSample, 8, 16)
		}), Layout{}, ErrUnsupported, "BitsPerSample"},
		{"bits count wrong", with(image(10, 1, 3), strips(0, 1), func(b *ifd.Builder) { b.Remove(TagBitsPerSample); b.AddShort(TagBitsPerSample, 8, 8) }), Layout{}, ErrMalformed, "2 values for 3 samples"},
		{"sample format unknown", with(image(10, 1, 1), strips(0, 1), func(b *ifd.Builder) { b.AddShort(TagSampleFormat, 6) }), Layout{}, ErrUnsupported, "SampleFormat"},
		{"planar configuration 3", with(image(10, 1, 1), strips(0, 1), func(b *ifd.Builder) { b.AddShort(TagPlanarConfiguration, 3) }), Layout{}, ErrMalformed, "PlanarConfiguration"},
		{"no locations", image(10, 1, 1), Layout{}, ErrMalformed, "0 StripOffsets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := pageWith(t, tt.fields).Layout()
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				assert.Contains(t, err.Error(), tt.says)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, l)
		})
	}
}

// TestPageAccessors reads the JPEG, YCbCr and descriptive fields.
func TestPageAccessors(t *testing.T) {
	tables := []byte{0xff, 0xd8, 0xff, 0xdb, 0, 3, 1, 0xff, 0xd9}
	p := pageWith(t, func(b *ifd.Builder) {
		b.AddLong(TagNewSubfileType, SubfileReducedImage)
		b.AddASCII(TagImageDescription, "Aperio Image Library v12 |MPP = 0.5")
		b.AddASCII(TagSoftware, "libvips")
		b.Add(ifd.Entry{Tag: TagJPEGTables, Type: ifd.Undefined, Count: uint64(len(tables)), Value: tables})
		b.AddShort(TagYCbCrSubSampling, 2, 1)
		b.AddShort(TagYCbCrPositioning, YCbCrCosited)
		b.AddRational(TagReferenceBlackWhite, ifd.Fraction{Num: 0, Den: 1}, ifd.Fraction{Num: 255, Den: 1}, ifd.Fraction{Num: 128, Den: 1},
			ifd.Fraction{Num: 255, Den: 1}, ifd.Fraction{Num: 128, Den: 1}, ifd.Fraction{Num: 255, Den: 1})
		b.AddShort(TagExtraSamples, ExtraSampleUnassociatedAlpha)
	})
	assert.Equal(t, SubfileReducedImage, p.NewSubfileType())
	assert.Equal(t, "Aperio Image Library v12 |MPP = 0.5", p.Description())
	assert.Equal(t, "libvips", p.Software())
	assert.Equal(t, tables, p.JPEGTables())
	h, v, err := p.YCbCrSubsampling()
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 1}, [2]int{h, v})
	assert.Equal(t, YCbCrCosited, p.YCbCrPositioning())
	rbw, ok := p.ReferenceBlackWhite()
	assert.True(t, ok)
	assert.Equal(t, []float64{0, 255, 128, 255, 128, 255}, rbw)
	assert.Equal(t, []uint16{ExtraSampleUnassociatedAlpha}, p.ExtraSamples())

	empty := pageWith(t, func(b *ifd.Builder) { b.AddShort(TagImageWidth, 1) })
	assert.Empty(t, empty.Description())
	assert.Nil(t, empty.JPEGTables())
	h, v, err = empty.YCbCrSubsampling()
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 2}, [2]int{h, v}, "the default")
	assert.Equal(t, YCbCrCentered, empty.YCbCrPositioning())
	_, ok = empty.ReferenceBlackWhite()
	assert.False(t, ok)

	bad := pageWith(t, func(b *ifd.Builder) { b.AddShort(TagYCbCrSubSampling, 1, 2) })
	_, _, err = bad.YCbCrSubsampling()
	assert.ErrorIs(t, err, ErrMalformed)
}

// TestOpen reads a golden through its name.
func TestOpen(t *testing.T) {
	rc, err := Open(goldenPath("tiled-subifds"))
	require.NoError(t, err)
	assert.Len(t, rc.Pages, 2)
	block, err := rc.Pages[1].SubIFDs[0].ReadBlock(nil, 0)
	require.NoError(t, err)
	assert.Len(t, block, 16*16)
	require.NoError(t, rc.Close())
	_, err = Open(goldenPath("missing"))
	assert.True(t, errors.Is(err, os.ErrNotExist))
}

// TestSeedFile: the fuzz seeds built in code are sound files.
func TestSeedFile(t *testing.T) {
	for _, format := range []ifd.Format{{}, {Order: binary.BigEndian, BigTIFF: true}} {
		data := seedFile(format)
		f, err := Read(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		require.Len(t, f.Pages, 1)
		require.Len(t, f.Pages[0].SubIFDs, 1)
		for _, p := range []*Page{f.Pages[0], f.Pages[0].SubIFDs[0]} {
			_, err := p.Layout()
			require.NoError(t, err)
			block, err := p.ReadBlock(nil, 0)
			require.NoError(t, err)
			assert.Equal(t, []byte{1, 2, 3, 4}, block)
		}
		assert.Less(t, len(data), 512)
	}
}

// failingAt is a reader that fails from byte at on (a bad disk).
type failingAt struct {
	r   io.ReaderAt
	at  int64
	err error
}

func (f failingAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.at {
		n, _ := f.r.ReadAt(p[:max(0, f.at-off)], off)
		return n, f.err
	}
	return f.r.ReadAt(p, off)
}

// TestReadReaderFailure: a reader that fails while the directories are
// read (a bad disk) gives its error, as ReadBlock does, not ErrMalformed:
// the caller can tell a bad disk from a bad file.
func TestReadReaderFailure(t *testing.T) {
	data, err := os.ReadFile("../testdata/tiff/tiled-subifds.tif")
	require.NoError(t, err)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	require.NotEmpty(t, f.Pages[0].SubIFDs)
	boom := errors.New("simulated EIO")
	for _, at := range []int64{16, int64(f.Pages[0].SubIFDs[0].Offset)} { // the first directory; a SubIFD
		_, err := Read(failingAt{bytes.NewReader(data), at, boom}, int64(len(data)))
		assert.ErrorIs(t, err, boom, "failing at %d", at)
		assert.NotErrorIs(t, err, ErrMalformed, "failing at %d", at)
	}
}
