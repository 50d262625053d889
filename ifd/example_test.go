package ifd_test

import (
	"encoding/binary"
	"fmt"

	"github.com/ometiff-go/ometiff/ifd"
)

// A directory of three fields, sized before it is encoded (so that a
// writer can plan every offset first) and encoded in one slice for its
// place in the file: here at offset 8, the last in its chain (next 0), in
// little-endian classic TIFF: the count (2 bytes), 4 entries of 12, the
// next offset (4), and the description, longer than an entry's 4 bytes,
// after them (14).
func ExampleBuilder() {
	var b ifd.Builder
	b.AddUint(256, 640)    // ImageWidth: a SHORT, the smallest type that holds it
	b.AddUint(257, 70000)  // ImageLength: a LONG
	b.AddASCII(305, "ome") // Software: 4 bytes with its NUL, inline
	b.AddASCII(270, "a description")
	f := ifd.Format{Order: binary.LittleEndian}
	fmt.Println("size:", b.Size(f.BigTIFF))
	out, err := b.Encode(nil, 8, 0, f)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("encoded:", len(out))
	fmt.Println("entries:", binary.LittleEndian.Uint16(out))
	for _, e := range b.Entries() {
		fmt.Println(e.Tag, e.Type, e.Count)
	}
	// Output:
	// size: 68
	// encoded: 68
	// entries: 4
	// 256 SHORT 1
	// 257 LONG 1
	// 270 ASCII 14
	// 305 ASCII 4
}
