package tiff_test

import (
	"fmt"
	"log"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// Write a 4x2 8-bit gray image as one strip: the pixels first, the
// directory at Close, which picks classic TIFF since everything fits.
func ExampleWriter() {
	h := iohandle.NewMemory()
	w, err := tiff.NewWriter(h, tiff.Options{})
	if err != nil {
		log.Fatal(err)
	}
	strip, err := w.WriteBlock([]byte{0, 40, 80, 120, 160, 200, 240, 255})
	if err != nil {
		log.Fatal(err)
	}
	fields := &ifd.Builder{}
	fields.AddUint(tiff.TagImageWidth, 4)
	fields.AddUint(tiff.TagImageLength, 2)
	fields.AddShort(tiff.TagBitsPerSample, 8)
	fields.AddShort(tiff.TagCompression, tiff.CompressionNone)
	fields.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricBlackIsZero)
	fields.AddUint(tiff.TagRowsPerStrip, 2)
	d := &tiff.Directory{Fields: fields, OffsetsTag: tiff.TagStripOffsets, CountsTag: tiff.TagStripByteCounts, Blocks: []tiff.Block{strip}}
	if err := w.AddDirectory(d); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	if err := h.Commit(); err != nil {
		log.Fatal(err)
	}
	data := h.Bytes()
	fmt.Printf("%q, first directory at %d, %d bytes\n", data[:4], data[4], len(data))
	// Output: "II*\x00", first directory at 24, 126 bytes
}
