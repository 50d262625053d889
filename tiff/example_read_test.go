package tiff_test

import (
	"fmt"
	"log"

	"github.com/ometiff-go/ometiff/tiff"
)

// Read a file's structure, then the layout and the stored bytes of the
// first tile of its first page.
func ExampleOpen() {
	f, err := tiff.Open("../testdata/tiff/tiled-subifds.tif")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	page := f.Pages[0]
	l, err := page.Layout()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d pages; the first is %d x %d in %d x %d tiles of %d x %d, with %d SubIFDs\n",
		len(f.Pages), l.Width, l.Height, l.BlocksAcross, l.BlocksDown, l.BlockWidth, l.BlockHeight, len(page.SubIFDs))
	tile, err := page.ReadBlock(nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("tile 0: %d bytes, compression %d\n", len(tile), l.Compression)
	// Output:
	// 2 pages; the first is 64 x 48 in 2 x 3 tiles of 32 x 16, with 2 SubIFDs
	// tile 0: 512 bytes, compression 1
}
