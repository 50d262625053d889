package pyramid_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sync"

	xtiff "golang.org/x/image/tiff"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// tempDir makes a directory for an example's output.
func tempDir() string {
	dir, err := os.MkdirTemp("", "pyramid-example")
	if err != nil {
		log.Fatal(err)
	}
	return dir
}

// Write a three-channel uint16 image plane by plane: Create the file
// (LZW with the predictor, 256 x 256 tiles, by default), AddImage, write
// each channel's samples, and Close, which commits the file. A deferred
// Abort discards it on any failure and does nothing after a successful
// Close. WriteSamples takes typed samples; WritePlane takes their
// little-endian bytes.
func Example() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cells.ome.tif")

	w, err := pyramid.Create(path, pyramid.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddImage(pyramid.ImageSpec{Name: "cells", SizeX: 512, SizeY: 384, SizeC: 3,
		PixelType: pyramid.Uint16, PhysicalSizeX: 0.325, PhysicalSizeY: 0.325,
		Channels: []pyramid.Channel{{Name: "DAPI"}, {Name: "GFP"}, {Name: "RFP"}}})
	if err != nil {
		log.Fatal(err)
	}
	for c := range 3 {
		channel := make([]uint16, 512*384)
		for i := range channel {
			channel[i] = uint16(i * (c + 1))
		}
		if err := pyramid.WriteSamples(im, 0, c, 0, channel); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// What the file holds, as Inspect reads it back.
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		log.Fatal(err)
	}
	if err := pyramid.Inspect(os.Stdout, f, st.Size(), pyramid.InspectOptions{}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// classic TIFF, little-endian, 24710 bytes, 3 IFDs in the main chain
	// OME-XML: 1061 bytes, 1 image, UUID urn:uuid:084e5b7e-efdc-8d6e-8717-b4e3898c0c50, creator "ometiff"
	//   Image:0 "cells": 512 x 384, Z 1, C 3, T 1, uint16, XYZCT, 3 planes in TiffData, pixel 0.325 µm x 0.325 µm
	//     channel 0 "DAPI", 1 sample
	//     channel 1 "GFP", 1 sample
	//     channel 2 "RFP", 1 sample
	// IFD 0: 512 x 384, 1 x uint16, tiles 256 x 256 (2 x 2), LZW, predictor horizontal, 6167 bytes
	//     SubIFD 0.1: 256 x 192, 1 x uint16, tiles 256 x 192 (1 x 1), LZW, predictor horizontal, 1256 bytes, reduced
	// IFD 1: 512 x 384, 1 x uint16, tiles 256 x 256 (2 x 2), LZW, predictor horizontal, 5945 bytes
	//     SubIFD 1.1: 256 x 192, 1 x uint16, tiles 256 x 192 (1 x 1), LZW, predictor horizontal, 1205 bytes, reduced
	// IFD 2: 512 x 384, 1 x uint16, tiles 256 x 256 (2 x 2), LZW, predictor horizontal, 6167 bytes
	//     SubIFD 2.1: 256 x 192, 1 x uint16, tiles 256 x 192 (1 x 1), LZW, predictor horizontal, 1272 bytes, reduced
}

// Stream a plane in bands of rows, as they come from a scanner or a
// decoder: memory stays at a few rows of tiles per level whatever the
// plane's height. A band may end inside a row.
func ExampleImage_Plane() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	w, err := pyramid.Create(filepath.Join(dir, "slide.ome.tif"), pyramid.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddImage(pyramid.ImageSpec{Name: "slide", SizeX: 3000, SizeY: 2000, SamplesPerPixel: 3})
	if err != nil {
		log.Fatal(err)
	}
	pw, err := im.Plane(0, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	band := make([]byte, 100*3000*3) // 100 rows of RGB
	for y := 0; y < 2000; y += 100 {
		for i := range band {
			band[i] = byte(y + i%251)
		}
		if _, err := pw.Write(band); err != nil {
			log.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil { // is the plane complete?
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	spec := im.Spec()
	fmt.Printf("SizeC %d, OME SizeC %d\n", spec.SizeC, spec.OMESizeC())
	// Output: SizeC 1, OME SizeC 3
}

// Write an image.Image as a one-image OME-TIFF. An image.Gray16 becomes one
// uint16 channel: its big-endian Pix is converted, which WritePlane would
// not do.
func ExampleWriteImage() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "gray.ome.tif")
	m := image.NewGray16(image.Rect(0, 0, 640, 480))
	for y := range 480 {
		for x := range 640 {
			m.SetGray16(x, y, color.Gray16{Y: uint16(100 * (x + y))})
		}
	}
	if err := pyramid.WriteImage(path, m, pyramid.Options{}); err != nil {
		log.Fatal(err)
	}
	// Read back by another reader (golang.org/x/image/tiff reads the
	// first directory: the full resolution).
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	back, err := xtiff.Decode(f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.Bounds().Size(), back.(*image.Gray16).Gray16At(3, 2).Y)
	// Output: (640,480) 500
}

// Write typed samples without encoding them: the slice's type must be the
// image's pixel type.
func ExampleWriteSamples() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	w, err := pyramid.Create(filepath.Join(dir, "heights.ome.tif"), pyramid.Options{Compression: pyramid.Deflate})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 200, SizeY: 100, PixelType: pyramid.PixelTypeOf[float32]()})
	if err != nil {
		log.Fatal(err)
	}
	heights := make([]float32, 200*100)
	for i := range heights {
		heights[i] = float32(i) / 7
	}
	err = pyramid.WriteSamples(im, 0, 0, 0, make([]uint16, 200*100))
	fmt.Println(errors.Is(err, pyramid.ErrData), err)
	if err := pyramid.WriteSamples(im, 0, 0, 0, heights); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// Output: true pyramid: bad pixel data: []uint16 samples for an image of float32 samples
}

// Write the planes of a stack from several goroutines at once, one plane
// per goroutine: each goroutine cuts and reduces its own plane. The pixels
// and the OME-XML are those of a one-goroutine write; only where the tiles
// lie in the file follows the order they were written in.
func Example_concurrentPlanes() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	w, err := pyramid.Create(filepath.Join(dir, "stack.ome.tif"), pyramid.Options{Compression: pyramid.LZW})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddImage(pyramid.ImageSpec{Name: "stack", SizeX: 256, SizeY: 256, SizeZ: 4, SizeC: 2, PixelType: pyramid.Uint16})
	if err != nil {
		log.Fatal(err)
	}
	spec := im.Spec()
	errs := make([]error, spec.Planes())
	var wg sync.WaitGroup
	for p := range spec.Planes() {
		wg.Go(func() {
			z, c, t := spec.PlaneCoords(p)
			samples := make([]uint16, 256*256)
			for i := range samples {
				samples[i] = uint16(1000*z + 100*c + i%97)
			}
			errs[p] = pyramid.WriteSamples(im, z, c, t, samples)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// The same stack from one goroutine, plane after plane: the same
	// OME-XML (whose UUID the pixels give), its pixels in other places.
	if err := os.Mkdir(filepath.Join(dir, "one"), 0o755); err != nil {
		log.Fatal(err)
	}
	one := filepath.Join(dir, "one", "stack.ome.tif") // the OME-XML names its file
	w, err = pyramid.Create(one, pyramid.Options{Compression: pyramid.LZW, Workers: 1})
	if err != nil {
		log.Fatal(err)
	}
	if im, err = w.AddImage(spec); err != nil {
		log.Fatal(err)
	}
	for p := range spec.Planes() {
		z, c, t := spec.PlaneCoords(p)
		samples := make([]uint16, 256*256)
		for i := range samples {
			samples[i] = uint16(1000*z + 100*c + i%97)
		}
		if err := pyramid.WriteSamples(im, z, c, t, samples); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	description := func(path string) string {
		f, err := tiff.Open(path)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		return f.Pages[0].Description()
	}
	fmt.Println(spec.Planes(), "planes from", spec.Planes(), "goroutines; the same OME-XML:",
		description(filepath.Join(dir, "stack.ome.tif")) == description(one))
	// Output: 8 planes from 8 goroutines; the same OME-XML: true
}

// Replace an existing file: create the output handle with iohandle.Create,
// whose Options also skip the sync at Close (NoSync) or write around the
// page cache (DirectIO), and give it to New. The old file stays as it was
// until Close commits the new one. The handle's deferred Close discards an
// output that was never committed, even when New fails.
func ExampleCreate_replace() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "latest.ome.tif")
	if err := os.WriteFile(path, []byte("an earlier run"), 0o644); err != nil {
		log.Fatal(err)
	}

	h, err := iohandle.Create(path, iohandle.Options{BufferSize: iohandle.BigBuffer, Replace: true})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	w, err := pyramid.New(h, pyramid.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 64, SizeY: 64})
	if err != nil {
		log.Fatal(err)
	}
	if err := im.WritePlane(0, 0, 0, make([]byte, im.PlaneBytes())); err != nil {
		log.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("before Close %q, after %q\n", before, after[:4])
	// Output: before Close "an earlier run", after "II*\x00"
}

// Stop a write with a context, here cancelled by hand, as
// signal.NotifyContext cancels one on Ctrl-C: the writer fails with the
// context's error, and no file is left.
func ExampleCreateContext() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "stack.ome.tif")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := pyramid.CreateContext(ctx, path, pyramid.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 256, SizeY: 256, SizeZ: 8})
	if err != nil {
		log.Fatal(err)
	}
	plane := make([]byte, im.PlaneBytes())
	for z := range 8 {
		if z == 3 {
			cancel()
		}
		if err = im.WritePlane(z, 0, 0, plane); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Close()
	}
	fmt.Println(errors.Is(err, context.Canceled))
	_, err = os.Stat(path)
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// true
	// true
}

// Write a stack of raw planes from a reader (a raw file, a pipe, a
// network stream): uncompressed planes of one tile and no reduced levels
// are read straight into the output's buffer, as a file copy would.
func ExampleImage_ReadPlanes() {
	spec := pyramid.ImageSpec{Name: "raw stack", SizeX: 128, SizeY: 128, SizeZ: 10, PixelType: pyramid.Uint16}
	const planeBytes = 128 * 128 * 2
	raw := make([]byte, spec.SizeZ*planeBytes) // e.g. os.Open("stack.raw")
	for i := range raw {
		raw[i] = byte(i / 7)
	}
	out := iohandle.NewMemory()
	w, err := pyramid.New(out, pyramid.Options{Compression: pyramid.None, TileSize: 128, Levels: 1})
	if err != nil {
		log.Fatal(err)
	}
	im, err := w.AddImage(spec)
	if err != nil {
		log.Fatal(err)
	}
	if err := im.ReadPlanes(bytes.NewReader(raw)); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	f, err := tiff.Read(bytes.NewReader(out.Bytes()), int64(len(out.Bytes())))
	if err != nil {
		log.Fatal(err)
	}
	last, err := f.Pages[9].ReadBlock(nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(f.Pages), "pages; the last plane as read:", bytes.Equal(last, raw[9*planeBytes:]))
	// Output: 10 pages; the last plane as read: true
}

// Add an image.Image as an image of its own, beside others: its pixel
// layout comes from the image, its metadata from the spec.
func ExampleWriter_AddImageData() {
	m := image.NewRGBA(image.Rect(0, 0, 300, 200))
	for i := range m.Pix {
		m.Pix[i] = byte(i)
	}
	out := iohandle.NewMemory()
	w, err := pyramid.New(out, pyramid.Options{})
	if err != nil {
		log.Fatal(err)
	}
	im, err := w.AddImageData(pyramid.ImageSpec{Name: "overview", PhysicalSizeX: 10, PhysicalSizeY: 10}, m)
	if err != nil {
		log.Fatal(err)
	}
	s := im.Spec()
	fmt.Printf("%s: %d x %d, %d samples of %v\n", s.Name, s.SizeX, s.SizeY, s.SamplesPerPixel, s.PixelType)
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// Output: overview: 300 x 200, 3 samples of uint8
}
