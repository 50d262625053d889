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

// FuzzRead parses arbitrary bytes as a TIFF file and dumps what it finds:
// errors are fine, panics and untyped errors are not.
func FuzzRead(f *testing.F) {
	for _, g := range goldens() {
		// Small seeds only: the fuzzer minimizes every new input, and
		// minimizing tens of kilobytes starves the search.
		if data, err := os.ReadFile(goldenPath(g.name)); err == nil && len(data) <= 4096 {
			f.Add(data)
		}
	}
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
	})
}

// FuzzWriterLayout writes random directory trees (blocks of random sizes,
// SubIFDs, either flavour and byte order) and reads them back: the chain,
// the SubIFDs and every block must be where the writer said.
func FuzzWriterLayout(f *testing.F) {
	f.Add([]byte{3, 1, 2, 7, 0, 9, 250, 1})
	f.Add([]byte{0x81, 4, 0, 0, 3, 3, 3})
	f.Fuzz(func(t *testing.T, spec []byte) {
		if len(spec) == 0 {
			return
		}
		opts := Options{Version: Version(spec[0] % 3)}
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
		if file.BigTIFF != (opts.Version == BigTIFF) || len(file.IFDs) != len(dirs) {
			t.Fatalf("BigTIFF %v, %d IFDs; want %v, %d", file.BigTIFF, len(file.IFDs), opts.Version == BigTIFF, len(dirs))
		}
		for i, d := range dirs {
			checkLayout(t, data, file.IFDs[i], d)
		}
	})
}

// checkLayout compares a parsed directory with the one written.
func checkLayout(t *testing.T, data []byte, got *IFD, want *Directory) {
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
