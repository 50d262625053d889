package iohandle

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// FuzzFileOps drives a File with a small buffer and a Memory model through
// the same appends (Write and ReadFrom), patches and flushes decoded from
// the input, and checks that both hold the same bytes, that the file is
// never longer than its content and that it equals Len after Flush; then
// it commits, and the destination must be the only file in the directory,
// with the model's bytes. An input of odd length runs with DirectIO, a
// 4 KiB buffer and appends 128 times larger, so that some writes go around
// the page cache. An input whose length is 2 or 3 modulo 4 writes a named
// temporary file, the others an unnamed one where the system has them.
func FuzzFileOps(f *testing.F) {
	f.Add([]byte{0, 5, 1, 2, 0, 40, 2, 0})
	f.Add([]byte{0, 30, 0, 30, 1, 3, 1, 250, 2})
	f.Add([]byte{3, 40, 1, 7, 3, 9, 2, 0, 3, 200})
	f.Add([]byte{3, 64, 0, 5, 1, 9, 3, 100, 2})       // odd length: DirectIO
	f.Add([]byte{3, 64, 0, 5, 1, 9, 3, 100, 2, 7, 0}) // DirectIO, named
	// One directory per fuzzing process; each input commits its file and
	// removes it.
	dir := f.TempDir()
	path := filepath.Join(dir, "f")
	f.Fuzz(func(t *testing.T, ops []byte) {
		opts, unit := Options{BufferSize: 16, NoSync: true}, 1
		if len(ops)%2 == 1 {
			opts, unit = Options{BufferSize: 4096, NoSync: true, DirectIO: true}, 128
		}
		h, err := create(path, opts, len(ops)%4 < 2)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		model := NewMemory()
		for i := 0; i+1 < len(ops); i += 2 {
			arg := int(ops[i+1])
			switch ops[i] % 4 {
			case 0:
				p := bytes.Repeat([]byte{byte(i)}, arg%48*unit)
				mustWrite(t, h, model, p)
			case 1:
				if model.Len() == 0 {
					continue
				}
				off := int64(arg) % model.Len()
				p := binary.LittleEndian.AppendUint16(nil, uint16(i))[:min(2, model.Len()-off)]
				_, err1 := h.WriteAt(p, off)
				_, err2 := model.WriteAt(p, off)
				if err1 != nil || err2 != nil {
					t.Fatalf("WriteAt(%d bytes, %d): %v / %v", len(p), off, err1, err2)
				}
			case 2:
				if err := h.Flush(); err != nil {
					t.Fatal(err)
				}
				if got := sizeOnDisk(t, h); got != h.Len() {
					t.Fatalf("after Flush: size %d, Len %d", got, h.Len())
				}
			case 3: // arg bytes, each read filling half the room offered
				p := bytes.Repeat([]byte{byte(i)}, arg*unit)
				if _, err := h.ReadFrom(iotest.HalfReader(bytes.NewReader(p))); err != nil {
					t.Fatal(err)
				}
				_, _ = model.Write(p)
			}
			if got := sizeOnDisk(t, h); got > h.Len() {
				t.Fatalf("file %d bytes, content %d", got, h.Len())
			}
		}
		if err := h.Commit(); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, model.Bytes()) {
			t.Fatalf("file %x, model %x", got, model.Bytes())
		}
		if names := dirEntries(t, dir); len(names) != 1 {
			t.Fatalf("directory holds %q, want only the destination", names)
		}
	})
}

func mustWrite(t *testing.T, h Handle, model *Memory, p []byte) {
	t.Helper()
	if _, err := h.Write(p); err != nil {
		t.Fatal(err)
	}
	_, _ = model.Write(p)
}
