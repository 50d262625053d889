package source_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
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

// Open a file and list its images, as package pyramid/source maps them.
func ExampleOpen() {
	f, err := source.Open("../../testdata/pyramid/series-zct.ome.tif", source.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println(f.Kind, "of", len(f.TIFF.Pages), "pages")
	for _, im := range f.Images {
		s := im.Spec
		fmt.Printf("%q: %d x %d, Z %d, C %d, T %d, %s, %v: %d planes\n",
			s.Name, s.SizeX, s.SizeY, s.SizeZ, s.SizeC, s.SizeT, s.DimensionOrder, s.PixelType, len(im.Planes))
	}
	// Output:
	// OME-TIFF of 14 pages
	// "stack": 64 x 48, Z 3, C 2, T 2, XYZCT, uint8: 12 planes
	// "second": 40 x 40, Z 2, C 1, T 1, XYCTZ, int16: 2 planes
}

// Convert every image of a file into a pyramidal OME-TIFF, streaming each
// page into the planes it holds.
func ExampleImage_WritePlanes() {
	in, err := source.Open("../../testdata/tiff/stripped-gray16-two-pages.tif", source.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	out := iohandle.NewMemory()
	w, err := pyramid.New(out, pyramid.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, im := range in.Images {
		dst, err := w.AddImage(im.Spec)
		if err != nil {
			log.Fatal(err)
		}
		if err := im.WritePlanes(context.Background(), dst, source.Options{}); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// The output read back: an OME-TIFF of the same images.
	tf, err := tiff.Read(bytes.NewReader(out.Bytes()), int64(len(out.Bytes())))
	if err != nil {
		log.Fatal(err)
	}
	back, err := source.New(tf, "out.ome.tif", source.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.Kind, len(back.Images), "images")
	for i, im := range back.Images {
		s, was := im.Spec, in.Images[i].Spec
		fmt.Printf("%d x %d %v, as read: %v\n", s.SizeX, s.SizeY, s.PixelType, s.SizeX == was.SizeX && s.SizeY == was.SizeY && s.PixelType == was.PixelType)
	}
	// Output:
	// OME-TIFF 2 images
	// 20 x 10 uint16, as read: true
	// 40 x 30 uint8, as read: true
}

// Read a multi-file dataset from one of its files: the others are opened
// from its directory, and its images come whole.
func ExampleOpen_dataset() {
	dir, err := os.MkdirTemp("", "dataset")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := pyramid.DatasetSpec{Name: "wells", Split: pyramid.Split{Files: 3}}
	for i := range 2 {
		spec.Images = append(spec.Images, pyramid.ImageSpec{Name: fmt.Sprintf("well %d", i), SizeX: 64, SizeY: 64, SizeZ: 5, PixelType: pyramid.Uint16})
	}
	d, err := pyramid.NewDataset(spec)
	if err != nil {
		log.Fatal(err)
	}
	for i := range d.Files() {
		if err := d.WritePart(context.Background(), dir, i, pyramid.PartOptions{}, func(pyramid.PlaneRef, []byte) error { return nil }); err != nil {
			log.Fatal(err)
		}
	}
	f, err := source.Open(filepath.Join(dir, "wells_1.ome.tif"), source.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for _, im := range f.Images {
		fmt.Printf("%s: %d planes\n", im.Spec.Name, len(im.Planes))
	}
	for _, p := range f.Parts {
		fmt.Println("also read:", p.Name)
	}
	// Output:
	// well 0: 5 planes
	// well 1: 5 planes
	// also read: wells_0.ome.tif
	// also read: wells_2.ome.tif
}

// Convert a file, copying its compressed tiles byte for byte where the
// writer can carry them (here JPEG), with its reduced levels too when they
// form an OME pyramid, and decoding an image only where they cannot be
// copied, as ometiff convert does.
func ExampleImage_Encoded() {
	in, err := source.Open("../../testdata/pyramid/jpeg.ome.tif", source.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	out := iohandle.NewMemory()
	w, err := pyramid.New(out, pyramid.Options{TileSize: 32}) // the source's tile side
	if err != nil {
		log.Fatal(err)
	}
	for _, im := range in.Images {
		levels, err := im.Encoded(true) // the reduced levels too
		if err != nil {
			levels, err = im.Encoded(false) // the full resolution; the levels computed in its codec
		}
		var dst *pyramid.Image
		if err == nil {
			dst, err = w.AddEncodedImage(im.Spec, levels...)
		} else {
			dst, err = w.AddImage(im.Spec) // decoded and encoded again
		}
		if err != nil {
			log.Fatal(err)
		}
		if err := im.WritePlanes(context.Background(), dst, source.Options{}); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d levels copied\n", im.Spec.Name, len(levels))
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// The first tile read back is the source's, byte for byte.
	tf, err := tiff.Read(bytes.NewReader(out.Bytes()), int64(len(out.Bytes())))
	if err != nil {
		log.Fatal(err)
	}
	a, err := in.TIFF.Pages[0].ReadBlock(nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	b, err := tf.Pages[0].ReadBlock(nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first tile copied:", bytes.Equal(a, b))
	// Output:
	// brightfield: 4 levels copied
	// gray: 3 levels copied
	// first tile copied: true
}
