package source_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/ometiff-go/ometiff/pyramid/source"
	"github.com/ometiff-go/ometiff/tiff"
)

// Stream the rows of a page, band by band, with io.Copy (into a pyramid's
// PlaneWriter, say; here a counter).
func ExampleBandReader() {
	f, err := tiff.Open("../../testdata/tiff/stripped-rgb8-bigendian.tif")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := source.NewBandReader(context.Background(), f.Pages[0], source.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		log.Fatal(err)
	}
	l := r.Layout()
	fmt.Printf("%d x %d pixels of %d samples in bands of %d rows: %d bytes\n", l.Width, l.Height, l.SamplesPerPixel, l.BlockHeight, n)
	// Output:
	// 33 x 17 pixels of 3 samples in bands of 5 rows: 1683 bytes
}
