package compress_test

import (
	"fmt"

	"github.com/ometiff-go/ometiff/compress"
)

// A JPEG encoder for 256x256 RGB tiles at the default quality: RGB goes in,
// YCbCr 4:2:0 comes out. The TIFF directory of the image takes its
// Photometric, YCbCrSubSampling and JPEGTables; every tile is an
// abbreviated stream that uses those tables.
func ExampleJPEG() {
	j, err := compress.NewJPEG(compress.Format{SamplesPerPixel: 3}, 256, compress.JPEGOptions{})
	if err != nil {
		panic(err)
	}
	tile := make([]byte, 256*256*3) // a black tile
	encoded, err := j.Encode(nil, tile)
	if err != nil {
		panic(err)
	}
	fmt.Println("Compression", j.Compression(), "quality", j.Quality())
	fmt.Println("Photometric", j.Photometric(), "YCbCrSubSampling", j.YCbCrSubSampling())
	fmt.Printf("JPEGTables: %d bytes\n", len(j.Tables()))
	fmt.Printf("tile: %d bytes, % x ... % x\n", len(encoded), encoded[:4], encoded[len(encoded)-2:])
	// Output:
	// Compression 7 quality 75
	// Photometric 6 YCbCrSubSampling [2 2]
	// JPEGTables: 574 bytes
	// tile: 1063 bytes, ff d8 ff c0 ... ff d9
}
