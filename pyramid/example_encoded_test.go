package pyramid_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/pyramid/source"
	"github.com/ometiff-go/ometiff/tiff"
)

// writeBrightfield writes an RGB image of width x height as JPEG at
// quality 85, in tiles of tile pixels, and returns the file's path.
func writeBrightfield(dir string, width, height, tile int) string {
	path := filepath.Join(dir, "brightfield.ome.tif")
	w, err := pyramid.Create(path, pyramid.Options{TileSize: tile, Compression: pyramid.JPEG, Quality: 85})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddImage(pyramid.ImageSpec{Name: "brightfield", SizeX: width, SizeY: height, SamplesPerPixel: 3})
	if err != nil {
		log.Fatal(err)
	}
	rgb := make([]byte, im.PlaneBytes())
	for i := range rgb {
		rgb[i] = byte(200 - i/3%width/8 - i%3*20) // a gentle gradient, pinkish
	}
	if err := im.WritePlane(0, 0, 0, rgb); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	return path
}

// Write an RGB brightfield image as JPEG tiles at quality 85: Uint8 with 3
// samples per pixel, stored as YCbCr 4:2:0 (JPEGColor JPEGRGB codes R, G
// and B instead). Every level of the pyramid is reduced from the original
// pixels and coded with the same tables.
func Example_jpeg() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := writeBrightfield(dir, 1000, 600, 256)

	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		log.Fatal(err)
	}
	var b strings.Builder
	if err := pyramid.Inspect(&b, f, info.Size(), pyramid.InspectOptions{}); err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "IFD") || strings.HasPrefix(line, "SubIFD") {
			size := strings.LastIndex(line[:strings.Index(line, " bytes")], ", ")
			fmt.Println(line[:size]) // the sizes depend on the JPEG encoder built in
		}
	}
	// Output:
	// IFD 0: 1000 x 600, 3 x uint8, tiles 256 x 256 (4 x 3), JPEG
	// SubIFD 0.1: 500 x 300, 3 x uint8, tiles 256 x 256 (2 x 2), JPEG
	// SubIFD 0.2: 250 x 150, 3 x uint8, tiles 256 x 160 (1 x 1), JPEG
}

// Write a whole-slide file as scanners do: the slide as JPEG tiles, and
// its label, whose text and barcode must stay sharp, losslessly with the
// writer's LZW. ImageSpec.Coding sets one image's coding.
func ExampleImageSpec_coding() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "slide.ome.tif")
	w, err := pyramid.Create(path, pyramid.Options{}) // LZW
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	images := []pyramid.ImageSpec{
		{Name: "slide", SizeX: 600, SizeY: 400, SamplesPerPixel: 3, Coding: &pyramid.Coding{Compression: pyramid.JPEG, Quality: 85}},
		{Name: "label", SizeX: 200, SizeY: 100, SamplesPerPixel: 3},
	}
	for _, spec := range images {
		im, err := w.AddImage(spec)
		if err != nil {
			log.Fatal(err)
		}
		if err := im.WritePlane(0, 0, 0, make([]byte, im.PlaneBytes())); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	f, err := tiff.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for i, p := range f.Pages {
		for l, level := range append([]*tiff.Page{p}, p.SubIFDs...) {
			layout, err := level.Layout()
			if err != nil {
				log.Fatal(err)
			}
			name, _ := tiff.ValueName(tiff.TagCompression, uint64(layout.Compression))
			fmt.Printf("image %d level %d: %d x %d, %s\n", i, l, layout.Width, layout.Height, name)
		}
	}
	// Output:
	// image 0 level 0: 600 x 400, JPEG
	// image 0 level 1: 300 x 200, JPEG
	// image 0 level 2: 150 x 100, JPEG
	// image 1 level 0: 200 x 100, LZW
}

// Copy the full-resolution tiles of a tiled TIFF page into a new pyramid
// as they are, without decoding and encoding them again, while the
// writer computes the reduced levels from the page's rows, decoded here by
// a source.BandReader: a row of tiles, then its rows. The tiles keep their
// coding (here JPEG with its tables, YCbCr 4:2:0), and the reduced levels
// are coded alike, at the quality of those tables (ImageSpec.Coding would
// code them otherwise).
func ExampleWriter_AddEncodedImage() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	in := writeBrightfield(dir, 1000, 600, 240)

	src, err := tiff.Open(in)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	page := src.Pages[0]
	level, err := pyramid.EncodedLevelOf(page) // size and tile coding
	if err != nil {
		log.Fatal(err)
	}
	w, err := pyramid.Create(filepath.Join(dir, "copy.ome.tif"), pyramid.Options{TileSize: 240})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddEncodedImage(pyramid.ImageSpec{Name: "copy", SizeX: level.Width, SizeY: level.Height, SamplesPerPixel: 3}, level)
	if err != nil {
		log.Fatal(err)
	}
	ep, err := im.EncodedPlane(0, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	rows, err := source.NewBandReader(context.Background(), page, source.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	layout := rows.Layout()
	var tile []byte
	for down := range layout.BlocksDown {
		for across := range layout.BlocksAcross {
			if tile, err = page.ReadBlock(tile[:0], down*layout.BlocksAcross+across); err != nil {
				log.Fatal(err)
			}
			if err := ep.WriteTile(0, tile); err != nil {
				log.Fatal(err)
			}
		}
		_, band, err := rows.Next()
		if err != nil {
			log.Fatal(err)
		}
		if _, err := ep.Write(band); err != nil {
			log.Fatal(err)
		}
	}
	if err := ep.Close(); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(layout.BlocksAcross*layout.BlocksDown, "tiles copied,", level.TileWidth, "x", level.TileHeight, level.Compression)
	// Output: 15 tiles copied, 240 x 240 JPEG
}
