package tiff

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
)

// FuzzRead parses arbitrary bytes as a TIFF file, dumps what it finds,
// and lays out and reads every block of every page: errors are fine,
// panics and untyped errors are not, and Read allocates no more than its
// budget allows.
func FuzzRead(f *testing.F) {
	// Small seeds only: the fuzzer minimizes every new input (for up to a
	// minute each), and minimizing kilobytes starves the search.
	for _, g := range goldens() {
		if data, err := os.ReadFile(goldenPath(g.name)); err == nil && len(data) <= 1024 {
			f.Add(data)
		}
	}
	for _, format := range []ifd.Format{{}, {Order: binary.BigEndian, BigTIFF: true}} {
		f.Add(seedFile(format))
	}
	f.Add(ndpiSeed())
	f.Add(stackSeed())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, ErrNotTIFF) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if err := Dump(io.Discard, file, DumpOptions{}); err != nil {
			t.Fatal(err)
		}
		walkPages(t, file.Pages)
	})
}

// ndpiSeed is a small file in the NDPI layout: an 8-byte first offset,
// one directory of a width, the NDPI format flag, a 4-byte ASCII value
// out of line and a strip offset with high bytes, then the 8-byte next
// offset and the entries' high bytes.
func ndpiSeed() []byte {
	le := binary.LittleEndian
	file := le.AppendUint64([]byte("II*\x00"), 16)
	file = append(file, 0, 0, 0, 0)
	entry := func(tag, typ uint16, count, value uint32) {
		file = le.AppendUint16(le.AppendUint16(file, tag), typ)
		file = le.AppendUint32(le.AppendUint32(file, count), value)
	}
	file = le.AppendUint16(file, 4)
	entry(TagImageWidth, uint16(ifd.Short), 1, 16)
	entry(TagStripOffsets, uint16(ifd.Long), 1, 0) // + 1<<32: past the end
	entry(TagArtist, uint16(ifd.ASCII), 4, 16+2+4*12+8+4*4)
	entry(TagNDPIFormatFlag, uint16(ifd.Long), 1, 1)
	file = le.AppendUint64(file, 0)
	file = le.AppendUint32(le.AppendUint32(le.AppendUint32(le.AppendUint32(file, 0), 1), 0), 0)
	return append(file, "abc\x00"...)
}

// stackSeed is a small file in ImageJ's layout of large stacks: one
// directory of an uncompressed 4 x 2 page in two strips, followed by the
// data of three such images, so that Successor 1 and 2 of its page lie
// within the file.
func stackSeed() []byte {
	const first = 8
	b := new(ifd.Builder)
	b.AddShort(TagImageWidth, 4)
	b.AddShort(TagImageLength, 2)
	b.AddShort(TagBitsPerSample, 8)
	b.AddShort(TagRowsPerStrip, 1)
	b.AddLong(TagStripByteCounts, 4, 4)
	b.AddLong(TagStripOffsets, 0, 0)
	dataAt := uint32(first + b.Size(false)) // right after the directory
	b.Remove(TagStripOffsets)
	b.AddLong(TagStripOffsets, dataAt, dataAt+4)
	data, _ := Header{Order: binary.LittleEndian, FirstIFD: first}.Append(nil)
	data, _ = b.Encode(data, first, 0, ifd.Format{})
	for i := range 3 * 8 {
		data = append(data, byte(i))
	}
	return data
}

// seedFile is a small file of one page of two 16 x 16 uint8 tiles, the
// second sparse, with one SubIFD of one tile.
func seedFile(format ifd.Format) []byte {
	page := func(width uint16, tiles int, dataAt, subIFD uint32) *ifd.Builder {
		b := new(ifd.Builder)
		b.AddShort(TagImageWidth, width)
		b.AddShort(TagImageLength, 16)
		b.AddShort(TagBitsPerSample, 8)
		b.AddShort(TagTileWidth, 16)
		b.AddShort(TagTileLength, 16)
		b.AddLong(TagTileOffsets, []uint32{dataAt, 0}[:tiles]...)
		b.AddLong(TagTileByteCounts, []uint32{4, 0}[:tiles]...)
		if subIFD != 0 {
			b.Add(ifd.Entry{Tag: TagSubIFDs, Type: ifd.IFD, Count: 1, Value: binary.LittleEndian.AppendUint32(nil, subIFD)})
		}
		return b
	}
	const first = 24
	subAt := first + page(32, 2, 0, 1).Size(format.BigTIFF)
	dataAt := subAt + page(16, 1, 0, 0).Size(format.BigTIFF)
	h := Header{Order: format.Order, BigTIFF: format.BigTIFF, FirstIFD: first}
	data, _ := h.Append(nil)
	data = append(data, make([]byte, first-len(data))...)
	data, _ = page(32, 2, uint32(dataAt), uint32(subAt)).Encode(data, first, 0, format)
	data, _ = page(16, 1, uint32(dataAt), 0).Encode(data, subAt, 0, format)
	return append(data, 1, 2, 3, 4)
}

// walkPages lays out every page and reads each of its blocks: errors must
// be typed, and no block larger than the file.
func walkPages(t *testing.T, pages []*Page) {
	for _, p := range pages {
		_, err := p.Layout()
		if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("untyped error: %v", err)
		}
		if _, _, err := p.YCbCrSubsampling(); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("untyped error: %v", err)
		}
		var buf []byte
		for i := range min(p.NumBlocks(), 64) {
			buf, err = p.ReadBlock(buf[:0], i)
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("untyped error: %v", err)
			}
			if int64(len(buf)) > p.file.Size {
				t.Fatalf("block %d of %d bytes in a %d-byte file", i, len(buf), p.file.Size)
			}
		}
		for _, tag := range []uint16{TagUIC1, TagUIC2, TagImageWidth} {
			if off, ok := p.ValueOffset(tag); ok {
				if _, err := p.file.ReadBytes(off, 8); err != nil && !errors.Is(err, ErrMalformed) {
					t.Fatalf("untyped error: %v", err)
				}
			}
		}
		for k := 1; k <= 2; k++ {
			q, err := p.Successor(k)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) {
					t.Fatalf("untyped error: %v", err)
				}
				continue
			}
			blocks, err := q.Blocks()
			if err != nil {
				t.Fatalf("successor %d: %v", k, err)
			}
			for _, b := range blocks {
				if b.Offset+b.Size > uint64(p.file.Size) {
					t.Fatalf("successor %d: block %+v past the %d-byte file", k, b, p.file.Size)
				}
			}
		}
		walkPages(t, p.SubIFDs)
	}
}

// FuzzWriterLayout writes random directory trees (blocks of random sizes,
// SubIFDs, classic TIFF or BigTIFF, either byte order) and reads them
// back: the chain, the SubIFDs and every block must be where the writer
// said.
func FuzzWriterLayout(f *testing.F) {
	f.Add([]byte{3, 1, 2, 7, 0, 9, 250, 1})
	f.Add([]byte{0x81, 4, 0, 0, 3, 3, 3})
	f.Fuzz(func(t *testing.T, spec []byte) {
		if len(spec) == 0 {
			return
		}
		opts := Options{BigTIFF: BigTIFF(spec[0] % 3)}
		if spec[0]&0x80 != 0 {
			opts.ByteOrder = binary.BigEndian
		}
		h := iohandle.NewMemory()
		w, err := NewWriter(h, opts)
		if err != nil {
			t.Fatal(err)
		}
		var dirs []*Directory
		spec = spec[1:]
		for i := 0; i < len(spec) && len(dirs) < 20; i++ {
			d := &Directory{Fields: &ifd.Builder{}, OffsetsTag: TagStripOffsets, CountsTag: TagStripByteCounts}
			d.Fields.AddShort(TagImageWidth, uint16(i))
			for j := range int(spec[i] % 4) {
				b, err := w.WriteBlock(bytes.Repeat([]byte{spec[i]}, int(spec[i])/3+j))
				if err != nil {
					t.Fatal(err)
				}
				d.Blocks = append(d.Blocks, b)
			}
			if spec[i]&0x40 != 0 && len(dirs) > 0 && len(dirs[len(dirs)-1].SubIFDs) < 3 {
				parent := dirs[len(dirs)-1]
				parent.SubIFDs = append(parent.SubIFDs, d)
				continue
			}
			if err := w.AddDirectory(d); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, d)
		}
		err = w.Close()
		if len(dirs) == 0 {
			if !errors.Is(err, ErrNoDirectory) {
				t.Fatalf("want ErrNoDirectory, got %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		data := h.Bytes()
		file, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if file.BigTIFF != (opts.BigTIFF == BigTIFFAlways) || len(file.Pages) != len(dirs) {
			t.Fatalf("BigTIFF %v, %d IFDs; want %v, %d", file.BigTIFF, len(file.Pages), opts.BigTIFF == BigTIFFAlways, len(dirs))
		}
		for i, d := range dirs {
			checkLayout(t, data, file.Pages[i], d)
		}
	})
}

// checkLayout compares a parsed directory with the one written.
func checkLayout(t *testing.T, data []byte, got *Page, want *Directory) {
	t.Helper()
	if len(got.SubIFDs) != len(want.SubIFDs) {
		t.Fatalf("%d SubIFDs, want %d", len(got.SubIFDs), len(want.SubIFDs))
	}
	if len(want.Blocks) > 0 {
		blocks, err := got.Blocks()
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range blocks {
			if b != want.Blocks[i] || b.Offset+b.Size > uint64(len(data)) {
				t.Fatalf("block %d at %+v, want %+v", i, b, want.Blocks[i])
			}
		}
	}
	for i, s := range want.SubIFDs {
		checkLayout(t, data, got.SubIFDs[i], s)
	}
}
