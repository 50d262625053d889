package tiff

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/iohandle/iohandletest"
)

func TestHeader(t *testing.T) {
	tests := []struct {
		h    Header
		want string
	}{
		{Header{FirstIFD: 0x1234}, "II\x2a\x00\x34\x12\x00\x00"},
		{Header{Order: binary.BigEndian, FirstIFD: 0x1234}, "MM\x00\x2a\x00\x00\x12\x34"},
		{Header{BigTIFF: true, FirstIFD: 1 << 33}, "II\x2b\x00\x08\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00"},
		{Header{Order: binary.BigEndian, BigTIFF: true, FirstIFD: 16}, "MM\x00\x2b\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10"},
	}
	for _, tt := range tests {
		got, err := tt.h.Append(nil)
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(got))
		assert.Equal(t, tt.h.Size(), len(got))
		back, err := ParseHeader(got)
		require.NoError(t, err)
		assert.Equal(t, tt.h.BigTIFF, back.BigTIFF)
		assert.Equal(t, tt.h.FirstIFD, back.FirstIFD)
		assert.Equal(t, tt.h.bigEndian(), back.bigEndian())
	}
	_, err := Header{FirstIFD: 1 << 32}.Append(nil)
	assert.ErrorIs(t, err, ErrTooLarge)
	for _, bad := range []string{"", "II*", "XX\x2a\x00\x08\x00\x00\x00", "II\x2c\x00\x08\x00\x00\x00", "II\x2b\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"} {
		_, err := ParseHeader([]byte(bad))
		assert.ErrorIs(t, err, ErrNotTIFF, "%q", bad)
	}
}

// tinyDirectory returns a one-strip 2x1 gray image's directory.
func tinyDirectory(t *testing.T, w *Writer) *Directory {
	t.Helper()
	bw := &blockWriter{w: w}
	d := bw.stripped(newImage(2, 1, 1, 1, nil, 0), 1)
	require.NoError(t, bw.err)
	return d
}

// subIFDGolden is the golden file with SubIFDs.
func subIFDGolden() golden {
	for _, g := range goldens() {
		if g.name == "tiled-subifds" {
			return g
		}
	}
	panic("no tiled-subifds golden")
}

func TestEveryDirectoryInOneWrite(t *testing.T) {
	h := iohandle.NewMemory()
	w, err := NewWriter(h, Options{})
	require.NoError(t, err)
	const dirs = 5
	for range dirs {
		d := tinyDirectory(t, w)
		d.SubIFDs = []*Directory{tinyDirectory(t, w), tinyDirectory(t, w)}
		require.NoError(t, w.AddDirectory(d))
	}
	before := h.Stats()
	require.NoError(t, w.Close())
	after := h.Stats()
	assert.Equal(t, int64(3*dirs), after.Appends-before.Appends, "one append per directory (main and SubIFD), nothing else")
	assert.Equal(t, int64(1), after.Patches, "the header, once")

	f, err := Read(bytes.NewReader(h.Bytes()), h.Len())
	require.NoError(t, err)
	require.Len(t, f.Pages, dirs)
	for _, d := range f.Pages {
		require.Len(t, d.SubIFDs, 2)
		for _, s := range d.SubIFDs {
			assert.Zero(t, s.Next, "SubIFDs end their own chain")
		}
		assert.Zero(t, d.Offset&1, "word aligned")
	}
}

func TestOddDataIsPaddedBeforeDirectories(t *testing.T) {
	h := iohandle.NewMemory()
	w, err := NewWriter(h, Options{})
	require.NoError(t, err)
	bw := &blockWriter{w: w}
	d := bw.stripped(newImage(3, 1, 1, 1, nil, 0), 1) // 3 bytes of data
	require.NoError(t, bw.err)
	require.NoError(t, w.AddDirectory(d))
	require.NoError(t, w.Close())
	f, err := Read(bytes.NewReader(h.Bytes()), h.Len())
	require.NoError(t, err)
	assert.Equal(t, int64(reservedHeaderSize+4), f.Pages[0].Offset)
}

// sparseHandle pretends to hold skipped bytes without storing them, so
// tests can place directories near 4 GiB. It keeps what is written after
// the skip, and the header.
type sparseHandle struct {
	iohandle.Memory
	skip int64
	tail []byte
}

func (s *sparseHandle) Len() int64 { return s.Memory.Len() + s.skip + int64(len(s.tail)) }

// ReadAt reads the file as written: the memory's bytes, zeros for those
// skipped, then the tail.
func (s *sparseHandle) ReadAt(p []byte, off int64) (int, error) {
	mem := s.Memory.Bytes()
	for i := range p {
		at := off + int64(i)
		switch tail := at - int64(len(mem)) - s.skip; {
		case at < int64(len(mem)):
			p[i] = mem[at]
		case tail < 0:
			p[i] = 0
		case tail < int64(len(s.tail)):
			p[i] = s.tail[tail]
		default:
			return i, io.EOF
		}
	}
	return len(p), nil
}

func (s *sparseHandle) Write(p []byte) (int, error) {
	if s.skip == 0 {
		return s.Memory.Write(p)
	}
	s.tail = append(s.tail, p...)
	return len(p), nil
}

// directoriesEndingAt lays out one tiny directory so that the directory
// region ends at end, and reports whether the writer chose BigTIFF.
func directoriesEndingAt(t *testing.T, end int64, choice BigTIFF) (bool, error) {
	t.Helper()
	h := &sparseHandle{}
	w, err := NewWriter(h, Options{BigTIFF: choice})
	require.NoError(t, err)
	d := &Directory{Fields: &ifd.Builder{}, OffsetsTag: TagStripOffsets, CountsTag: TagStripByteCounts, Blocks: []Block{{Offset: 16, Size: 2}}}
	d.Fields.AddShort(TagImageWidth, 2)
	classicSize := int64(0)
	if b, err := w.finalFields(d, ifd.Format{}, nil); assert.NoError(t, err) {
		classicSize = b.Size(false)
	}
	h.skip = end - classicSize - reservedHeaderSize
	require.NoError(t, w.AddDirectory(d))
	if err := w.Close(); err != nil {
		return false, err
	}
	hdr, err := ParseHeader(h.Bytes())
	require.NoError(t, err)
	return hdr.BigTIFF, nil
}

func TestClassicOrBigTIFFDecidedExactly(t *testing.T) {
	big, err := directoriesEndingAt(t, 1<<32, BigTIFFAuto)
	require.NoError(t, err)
	assert.False(t, big, "ending exactly at 4 GiB fits classic TIFF")

	big, err = directoriesEndingAt(t, 1<<32+2, BigTIFFAuto)
	require.NoError(t, err)
	assert.True(t, big, "two bytes more needs BigTIFF")

	_, err = directoriesEndingAt(t, 1<<32+2, BigTIFFNever)
	assert.ErrorIs(t, err, ErrTooLarge)

	big, err = directoriesEndingAt(t, 1<<20, BigTIFFAlways)
	require.NoError(t, err)
	assert.True(t, big, "forced")
}

func TestBlockPast4GiBNeedsBigTIFF(t *testing.T) {
	for _, choice := range []BigTIFF{BigTIFFAuto, BigTIFFNever} {
		h := &sparseHandle{}
		w, err := NewWriter(h, Options{BigTIFF: choice})
		require.NoError(t, err)
		h.skip = 5<<30 + 10 - reservedHeaderSize // the block's 10 bytes at 5 GiB
		d := &Directory{Fields: &ifd.Builder{}, OffsetsTag: TagTileOffsets, CountsTag: TagTileByteCounts, Blocks: []Block{{Offset: 5 << 30, Size: 10}}}
		d.Fields.AddShort(TagImageWidth, 16)
		require.NoError(t, w.AddDirectory(d))
		err = w.Close()
		if choice == BigTIFFNever {
			assert.ErrorIs(t, err, ErrTooLarge)
			continue
		}
		require.NoError(t, err)
		f, err := Read(h, h.Len())
		require.NoError(t, err)
		assert.True(t, f.BigTIFF)
		e, _ := f.Pages[0].Field(TagTileOffsets)
		assert.Equal(t, ifd.Long8, e.Type)
		v, _ := e.Uint()
		assert.Equal(t, uint64(5<<30), v, "not truncated")
	}
}

// TestFieldOfBigTIFFTypeNeedsBigTIFF: a field of a 64-bit type (AddUint's
// LONG8 for a value past 32 bits) makes BigTIFFAuto write BigTIFF, as an
// offset past 4 GiB does, and BigTIFFNever refuse it (ErrTooLarge); Auto
// failed at Close, with ifd's range error.
func TestFieldOfBigTIFFTypeNeedsBigTIFF(t *testing.T) {
	for _, choice := range []BigTIFF{BigTIFFAuto, BigTIFFNever, BigTIFFAlways} {
		h := iohandle.NewMemory()
		w, err := NewWriter(h, Options{BigTIFF: choice})
		require.NoError(t, err)
		d := tinyDirectory(t, w)
		d.Fields.AddUint(65000, 1<<33)
		require.NoError(t, w.AddDirectory(d))
		err = w.Close()
		if choice == BigTIFFNever {
			assert.ErrorIs(t, err, ErrTooLarge)
			assert.ErrorContains(t, err, "tag 65000 has the BigTIFF type LONG8")
			continue
		}
		require.NoError(t, err, "%v", choice)
		f, err := Read(bytes.NewReader(h.Bytes()), h.Len())
		require.NoError(t, err)
		assert.True(t, f.BigTIFF)
		v, ok := f.Pages[0].Uint(65000)
		assert.True(t, ok)
		assert.Equal(t, uint64(1<<33), v)
	}
}

// TestBlockOutsideTheData: a block that does not lie in the data written,
// between the header and the directories, is ErrDirectory at Close (a
// made-up Block wrote a file naming bytes past its end, or its header as
// pixels); sparse blocks are not checked.
func TestBlockOutsideTheData(t *testing.T) {
	for _, tt := range []struct {
		name string
		blk  Block
		err  error
	}{
		{"past the end", Block{Offset: 1 << 20, Size: 10}, ErrDirectory},
		{"over the end", Block{Offset: reservedHeaderSize + 2, Size: 3}, ErrDirectory},
		{"in the header", Block{Offset: 2, Size: 4}, ErrDirectory},
		{"wrapping around", Block{Offset: math.MaxUint64 - 1, Size: 4}, ErrDirectory},
		{"the data", Block{Offset: reservedHeaderSize, Size: 4}, nil},
		{"part of it", Block{Offset: reservedHeaderSize + 1, Size: 3}, nil},
		{"sparse", Block{}, nil},
		{"of no bytes, far away", Block{Offset: 1 << 40}, ErrDirectory}, // it made the file BigTIFF
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := iohandle.NewMemory()
			w, err := NewWriter(h, Options{})
			require.NoError(t, err)
			_, err = w.WriteBlock([]byte{1, 2, 3, 4})
			require.NoError(t, err)
			d := &Directory{Fields: &ifd.Builder{}, OffsetsTag: TagStripOffsets, CountsTag: TagStripByteCounts, Blocks: []Block{tt.blk}}
			d.Fields.AddShort(TagImageWidth, 1)
			require.NoError(t, w.AddDirectory(d))
			err = w.Close()
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				if tt.blk.Size > 0 {
					assert.ErrorContains(t, err, "is not in the data written (16 to 20)")
				} else {
					assert.ErrorContains(t, err, "block 0 is of 0 bytes at 1099511627776: a sparse block is at offset 0")
				}
				return
			}
			require.NoError(t, err)
			f, err := Read(bytes.NewReader(h.Bytes()), h.Len())
			require.NoError(t, err)
			b, err := f.Pages[0].Block(0)
			require.NoError(t, err)
			assert.Equal(t, tt.blk, Block(b))
		})
	}
}

func TestWriterErrors(t *testing.T) {
	t.Run("no directory", func(t *testing.T) {
		w, err := NewWriter(iohandle.NewMemory(), Options{})
		require.NoError(t, err)
		assert.ErrorIs(t, w.Close(), ErrNoDirectory)
	})
	t.Run("used after close", func(t *testing.T) {
		h := iohandle.NewMemory()
		w, err := NewWriter(h, Options{})
		require.NoError(t, err)
		require.NoError(t, w.AddDirectory(tinyDirectory(t, w)))
		require.NoError(t, w.Close())
		_, err = w.WriteBlock([]byte{1})
		assert.ErrorIs(t, err, ErrClosed)
		assert.ErrorIs(t, w.AddDirectory(&Directory{}), ErrClosed)
		assert.ErrorIs(t, w.Close(), ErrClosed)
	})
	t.Run("output not empty", func(t *testing.T) {
		h := iohandle.NewMemory()
		_, _ = h.Write([]byte("x"))
		_, err := NewWriter(h, Options{})
		assert.ErrorIs(t, err, ErrOption)
	})
	t.Run("no output", func(t *testing.T) {
		_, err := NewWriter(nil, Options{})
		assert.ErrorIs(t, err, ErrOption)
	})
	t.Run("unknown BigTIFF choice", func(t *testing.T) {
		for _, choice := range []BigTIFF{-1, BigTIFFNever + 1} {
			_, err := NewWriter(iohandle.NewMemory(), Options{BigTIFF: choice})
			assert.ErrorIs(t, err, ErrOption, "%d", choice)
		}
	})
	t.Run("offsets in Fields", func(t *testing.T) {
		// Offsets the writer did not compute: the file would point
		// nowhere (tiffinfo: "Failed to read directory at offset").
		for _, tag := range []uint16{TagTileOffsets, TagTileByteCounts, TagStripOffsets, TagStripByteCounts, TagSubIFDs, TagExifIFD, TagGPSIFD} {
			w, err := NewWriter(iohandle.NewMemory(), Options{})
			require.NoError(t, err)
			d := tinyDirectory(t, w)
			d.Fields.AddLong(tag, 999999)
			require.NoError(t, w.AddDirectory(d))
			err = w.Close()
			assert.ErrorIs(t, err, ErrDirectory, "tag %d", tag)
			assert.ErrorContains(t, err, TagName(tag)+" given in Fields", "tag %d", tag)
		}
	})
	t.Run("bad fields", func(t *testing.T) {
		w, err := NewWriter(iohandle.NewMemory(), Options{})
		require.NoError(t, err)
		d := tinyDirectory(t, w)
		d.Fields.AddShort(TagImageWidth, 9) // duplicate
		require.NoError(t, w.AddDirectory(d))
		err = w.Close()
		assert.ErrorIs(t, err, ifd.ErrDuplicate)
		assert.ErrorIs(t, err, ErrDirectory)
	})
	t.Run("blocks without tags", func(t *testing.T) {
		w, err := NewWriter(iohandle.NewMemory(), Options{})
		require.NoError(t, err)
		require.NoError(t, w.AddDirectory(&Directory{Blocks: []Block{{16, 1}}}))
		assert.ErrorIs(t, w.Close(), ErrDirectory)
	})
	t.Run("directory twice", func(t *testing.T) {
		w, err := NewWriter(iohandle.NewMemory(), Options{})
		require.NoError(t, err)
		d := tinyDirectory(t, w)
		d.SubIFDs = []*Directory{d}
		require.NoError(t, w.AddDirectory(d))
		assert.ErrorIs(t, w.Close(), ErrDirectory)
	})
	t.Run("directory twice in the chain", func(t *testing.T) {
		w, err := NewWriter(iohandle.NewMemory(), Options{})
		require.NoError(t, err)
		d := tinyDirectory(t, w)
		require.NoError(t, w.AddDirectory(d))
		require.NoError(t, w.AddDirectory(tinyDirectory(t, w)))
		require.NoError(t, w.AddDirectory(d))
		assert.ErrorIs(t, w.Close(), ErrDirectory)
	})
	t.Run("nil directory", func(t *testing.T) {
		w, err := NewWriter(iohandle.NewMemory(), Options{})
		require.NoError(t, err)
		assert.ErrorIs(t, w.AddDirectory(nil), ErrDirectory)
	})
}

// TestFaultAtEveryWrite fails the output at every write call in turn, and at
// sync and rename: each gives an error, no panic, and no file.
func TestFaultAtEveryWrite(t *testing.T) {
	dir := t.TempDir()
	count := iohandle.NewMemory()
	require.NoError(t, subIFDGolden().writeTo(count))
	calls := int(count.Stats().Writes())
	require.Greater(t, calls, 10)

	faults := []iohandletest.Faults{{Sync: true}, {Rename: true}}
	for i := 1; i <= calls; i++ {
		faults = append(faults, iohandletest.Faults{Write: i})
	}
	for i := int64(1); i < count.Len(); i += count.Len() / 37 {
		faults = append(faults, iohandletest.Faults{MaxBytes: i})
	}
	for _, fault := range faults {
		path := filepath.Join(dir, "out.tif")
		f, err := iohandle.Create(path, iohandle.Options{NoSync: true, BufferSize: 64})
		require.NoError(t, err)
		h := iohandletest.NewFaulty(f, fault)
		err = subIFDGolden().writeTo(h)
		assert.ErrorIs(t, err, iohandletest.ErrInjected, "%+v", fault)
		require.NoError(t, h.Close())
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "%+v leaves nothing", fault)
	}

	f, err := iohandle.Create(filepath.Join(dir, "out.tif"), iohandle.Options{NoSync: true})
	require.NoError(t, err)
	require.NoError(t, subIFDGolden().writeTo(iohandletest.NewFaulty(f, iohandletest.Faults{Write: calls + 1})), "one past the last write")
	got, err := os.ReadFile(filepath.Join(dir, "out.tif"))
	require.NoError(t, err)
	want, err := os.ReadFile(goldenPath(subIFDGolden().name))
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// TestThousandDirectoriesSyscalls writes 1,000 tiled directories through a
// file handle and checks with its counters that the OS saw at most one
// write per directory plus one per MiB of data, and that the file on disk
// is exactly as long as its content.
func TestThousandDirectoriesSyscalls(t *testing.T) {
	writeThousandDirectories(t, filepath.Join(t.TempDir(), "many.tif"))
}

// writeThousandDirectories writes 1,000 tiled directories to path and checks
// the handle's counters and the file.
func writeThousandDirectories(t *testing.T, path string) {
	h, err := iohandle.Create(path, iohandle.Options{NoSync: true})
	require.NoError(t, err)
	defer h.Close()
	w, err := NewWriter(h, Options{})
	require.NoError(t, err)
	im := newImage(64, 64, 1, 2, nil, 0)
	const dirs = 1000
	bw := &blockWriter{w: w}
	for range dirs {
		require.NoError(t, w.AddDirectory(bw.tiled(im, 32, 32, SubfileFullResolution)))
	}
	require.NoError(t, bw.err)
	require.NoError(t, w.Close())
	length := h.Len()
	require.NoError(t, h.Commit())

	s := h.Stats()
	mib := int64(math.Ceil(float64(length) / (1 << 20)))
	t.Logf("%d directories, %d bytes: %d appends, %d positioned writes", dirs, length, s.Appends, s.Patches)
	assert.LessOrEqual(t, s.Writes(), int64(dirs)+mib)
	assert.LessOrEqual(t, s.Writes(), mib+1, "in fact, one write per MiB and the header")
	assert.Equal(t, length, s.Bytes-reservedHeaderSize+int64(Header{}.Size()), "every byte handed over once, plus the header patch")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, length, fi.Size(), "the file is exactly its content")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	assert.Len(t, f.Pages, dirs)
}

// TestSharedFieldsStillCheckEveryBlock gives two directories the same
// fields and number of blocks, the second with a block past 4 GiB:
// BigTIFFAuto must still choose BigTIFF.
func TestSharedFieldsStillCheckEveryBlock(t *testing.T) {
	h := &sparseHandle{}
	w, err := NewWriter(h, Options{})
	require.NoError(t, err)
	_, err = w.WriteBlock([]byte{1})
	require.NoError(t, err)
	h.skip = 5 << 30 // a block of 1 byte at 5 GiB
	fields := &ifd.Builder{}
	fields.AddShort(TagImageWidth, 16)
	for _, off := range []uint64{16, 5 << 30} {
		d := &Directory{Fields: fields, OffsetsTag: TagTileOffsets, CountsTag: TagTileByteCounts, Blocks: []Block{{Offset: off, Size: 1}}}
		require.NoError(t, w.AddDirectory(d))
	}
	require.NoError(t, w.Close())
	hdr, err := ParseHeader(h.Bytes())
	require.NoError(t, err)
	assert.True(t, hdr.BigTIFF)
}

// TestDirectoriesOfMixedKinds interleaves directories that share fields
// with different numbers of blocks, and one with fields of its own: each
// must list exactly its own offsets and counts, whatever came before it.
func TestDirectoriesOfMixedKinds(t *testing.T) {
	for _, opts := range []Options{{BigTIFF: BigTIFFNever}, {BigTIFF: BigTIFFAlways}, {BigTIFF: BigTIFFNever, ByteOrder: binary.BigEndian}, {BigTIFF: BigTIFFAlways, ByteOrder: binary.BigEndian}} {
		h := iohandle.NewMemory()
		w, err := NewWriter(h, opts)
		require.NoError(t, err)
		_, err = w.WriteBlock(make([]byte, 700)) // the data the blocks lie in
		require.NoError(t, err)
		shared, own := &ifd.Builder{}, &ifd.Builder{}
		shared.AddShort(TagImageWidth, 16)
		own.AddShort(TagImageWidth, 32)
		kinds := []struct {
			fields *ifd.Builder
			blocks int
		}{{shared, 1}, {shared, 1}, {shared, 3}, {own, 1}, {shared, 1}, {shared, 3}, {shared, 3}}
		var want [][]Block
		for i, k := range kinds {
			blocks := make([]Block, k.blocks)
			for j := range blocks {
				blocks[j] = Block{Offset: uint64(reservedHeaderSize + 100*i + j), Size: uint64(10*i + j + 1)}
			}
			want = append(want, blocks)
			require.NoError(t, w.AddDirectory(&Directory{Fields: k.fields, OffsetsTag: TagTileOffsets, CountsTag: TagTileByteCounts, Blocks: blocks}))
		}
		require.NoError(t, w.Close())

		data := h.Bytes()
		f, err := Read(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		require.Len(t, f.Pages, len(want))
		var pos uint64
		for i, blocks := range want {
			d := f.Pages[i]
			offsets, _ := d.Field(TagTileOffsets)
			counts, _ := d.Field(TagTileByteCounts)
			width, _ := d.Field(TagImageWidth)
			assert.Equal(t, kinds[i].fields.Entries()[0].Value, width.Value, "directory %d", i)
			for j, b := range blocks {
				assert.Equal(t, b.Offset, uintAt(offsets, j), "directory %d offset %d", i, j)
				assert.Equal(t, b.Size, uintAt(counts, j), "directory %d count %d", i, j)
			}
			assert.Equal(t, uint64(len(blocks)), offsets.Count)
			pos = d.Next
		}
		assert.Zero(t, pos, "the chain ends after the last directory")
	}
}

// uintAt returns value i of a LONG or LONG8 entry.
func uintAt(e ifd.Entry, i int) uint64 {
	if e.Type.Size() == 8 {
		return binary.LittleEndian.Uint64(e.Value[8*i:])
	}
	return uint64(binary.LittleEndian.Uint32(e.Value[4*i:]))
}

// TestLargeDirectoryInHandleBuffer writes a directory with a 200 KB value
// among small ones through file handles whose buffer has room for it or
// not: the file must be the one a memory handle gets.
func TestLargeDirectoryInHandleBuffer(t *testing.T) {
	write := func(h iohandle.Handle) {
		w, err := NewWriter(h, Options{})
		require.NoError(t, err)
		shared := &ifd.Builder{}
		shared.AddShort(TagImageWidth, 16)
		large := shared.Clone()
		large.AddASCII(TagImageDescription, string(bytes.Repeat([]byte("<Plane/>"), 25_000)))
		for i := range 5 {
			fields := shared
			if i == 1 {
				fields = large
			}
			b, err := w.WriteBlock([]byte{byte(i), 1, 2})
			require.NoError(t, err)
			require.NoError(t, w.AddDirectory(&Directory{Fields: fields, OffsetsTag: TagTileOffsets, CountsTag: TagTileByteCounts, Blocks: []Block{b}}))
		}
		require.NoError(t, w.Close())
	}
	want := iohandle.NewMemory()
	write(want)
	for _, size := range []int{2 << 20, 16 << 10} {
		path := filepath.Join(t.TempDir(), "out.tif")
		h, err := iohandle.Create(path, iohandle.Options{BufferSize: size, NoSync: true})
		require.NoError(t, err)
		write(h)
		require.NoError(t, h.Commit())
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, want.Bytes(), got, "buffer of %d bytes", size)
	}
}

// TestEmptyDirectoriesRefused: a directory with no fields, in the chain
// or as a SubIFD, is ErrDirectory at Close, since libtiff refuses to read
// a file holding one ("zero tag directories not supported").
func TestEmptyDirectoriesRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		dirs func(tiny *Directory) []*Directory
	}{
		{"first", func(tiny *Directory) []*Directory { return []*Directory{{}, tiny} }},
		{"last", func(tiny *Directory) []*Directory { return []*Directory{tiny, {Fields: new(ifd.Builder)}} }},
		{"a SubIFD", func(tiny *Directory) []*Directory {
			tiny.SubIFDs = []*Directory{{}}
			return []*Directory{tiny}
		}},
		{"offsets tags without blocks", func(tiny *Directory) []*Directory {
			return []*Directory{tiny, {OffsetsTag: TagTileOffsets, CountsTag: TagTileByteCounts}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := NewWriter(iohandle.NewMemory(), Options{})
			require.NoError(t, err)
			for _, d := range c.dirs(tinyDirectory(t, w)) {
				require.NoError(t, w.AddDirectory(d))
			}
			err = w.Close()
			assert.ErrorIs(t, err, ErrDirectory)
			assert.ErrorContains(t, err, "no fields")
		})
	}
}

// TestSubIFDOnlyDirectoriesInTheChain lays out directories whose one field
// is SubIFDs (their own shape) between others: every link must point at
// the next directory.
func TestSubIFDOnlyDirectoriesInTheChain(t *testing.T) {
	h := iohandle.NewMemory()
	w, err := NewWriter(h, Options{})
	require.NoError(t, err)
	parent := func() *Directory { return &Directory{SubIFDs: []*Directory{tinyDirectory(t, w)}} }
	for _, d := range []*Directory{parent(), tinyDirectory(t, w), parent(), parent()} {
		require.NoError(t, w.AddDirectory(d))
	}
	require.NoError(t, w.Close())
	data := h.Bytes()
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	var entries, subs []int
	for _, d := range f.Pages {
		entries, subs = append(entries, len(d.Fields)), append(subs, len(d.SubIFDs))
	}
	require.Len(t, entries, 4, "the chain ends after the last directory")
	assert.Equal(t, 1, entries[0])
	assert.Greater(t, entries[1], 1)
	assert.Equal(t, []int{1, 1}, entries[2:])
	assert.Equal(t, []int{1, 0, 1, 1}, subs)
}

// TestEmptyBlockIsSparse: an empty block lies at offset 0, where readers
// (Page.Block, GDAL) take it as sparse, not as a damaged count.
func TestEmptyBlockIsSparse(t *testing.T) {
	w, err := NewWriter(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	b, err := w.WriteBlock([]byte{1, 2})
	require.NoError(t, err)
	assert.Equal(t, Block{Offset: 16, Size: 2}, b)
	b, err = w.WriteBlock(nil)
	require.NoError(t, err)
	assert.Equal(t, Block{}, b)
	b, err = w.ReadBlock(bytes.NewReader(nil), 0)
	require.NoError(t, err)
	assert.Equal(t, Block{}, b)
}
