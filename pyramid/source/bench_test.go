package source

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ometiff-go/ometiff/internal/ndpitest"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// BenchmarkBandReader reads large synthetic pages through the band
// reader, synchronously and on every core: a 4096 x 4096 uint16 page in
// 256 x 256 LZW tiles with the horizontal predictor, and a 4096 x 2048 RGB
// page in Deflate strips of 16 rows, and an NDPI's JPEG strip read a
// restart interval at a time. It reports decoded bytes per second.
func BenchmarkBandReader(b *testing.B) {
	pages := []struct {
		name string
		page testPage
	}{
		{"u16-LZW-tiles", testPage{width: 4096, height: 4096, samples: 1, bits: 16, tileW: 256, tileH: 256, codec: mustCodec(tiff.CompressionLZW), predictor: 2}},
		{"rgb8-Deflate-strips", testPage{width: 4096, height: 2048, samples: 3, bits: 8, rowsPerStrip: 16, codec: mustCodec(tiff.CompressionDeflate), predictor: 2}},
	}
	type bench struct {
		name string
		page *tiff.Page
		size int64
	}
	var benches []bench
	for _, p := range pages {
		file, images := fileOf(b, binary.LittleEndian, true, p.page)
		f, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			b.Fatal(err)
		}
		benches = append(benches, bench{p.name, f.Pages[0], int64(len(images[0]))})
	}
	// An NDPI's 2048 x 1024 strip of restart intervals of 8 MCUs: 1,024
	// tiles of 128 x 16, each its own JPEG stream.
	const w, h = 2048, 1024
	ndpi, err := ndpitest.File(ndpitest.Page{Width: w, Height: h, RGB: ndpitest.Pattern(w, h, 0), Interval: 8, Magnification: 20})
	if err != nil {
		b.Fatal(err)
	}
	f, err := tiff.Read(bytes.NewReader(ndpi), int64(len(ndpi)))
	if err != nil {
		b.Fatal(err)
	}
	tiles, err := f.Pages[0].NDPITiles()
	if err != nil {
		b.Fatal(err)
	}
	benches = append(benches, bench{"rgb8-NDPI-intervals", tiles, 3 * w * h})
	for _, p := range benches {
		for _, workers := range []int{1, 0} {
			b.Run(fmt.Sprintf("%s/workers=%d", p.name, workers), func(b *testing.B) {
				b.SetBytes(p.size)
				b.ReportAllocs()
				for b.Loop() {
					r, err := NewBandReader(context.Background(), p.page, Options{Workers: workers})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.Copy(io.Discard, r); err != nil {
						b.Fatal(err)
					}
					if err := r.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkOpenLargeOME maps an OME-TIFF whose OME-XML is about 8 MiB: a
// MapAnnotation of many entries that no image refers to, the shape of the
// metadata a screening system exports. It reports bytes of OME-XML a
// second and the memory allocated to map them: the document is parsed
// for the mapping and again for carrying it (pyramid.ParseOME).
func BenchmarkOpenLargeOME(b *testing.B) {
	var doc strings.Builder
	doc.WriteString(`<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06"><Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="16" SizeY="16" SizeZ="1" SizeC="1" SizeT="1"><Channel ID="Channel:0:0" SamplesPerPixel="1"/><TiffData/></Pixels></Image><StructuredAnnotations><MapAnnotation ID="Annotation:0"><Value>`)
	for i := 0; doc.Len() < 8<<20; i++ {
		fmt.Fprintf(&doc, "<M K=\"key %d\">a value of some length for key %d &amp; more</M>\n", i, i)
	}
	doc.WriteString(`</Value></MapAnnotation></StructuredAnnotations></OME>`)
	ome, err := pyramid.ParseOME([]byte(doc.String()))
	if err != nil {
		b.Fatal(err)
	}
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, pyramid.Options{OME: ome})
	if err != nil {
		b.Fatal(err)
	}
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 16, SizeY: 16, PixelType: pyramid.Uint8})
	if err != nil {
		b.Fatal(err)
	}
	if err := im.WritePlane(0, 0, 0, make([]byte, im.PlaneBytes())); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	file := h.Bytes()
	b.SetBytes(int64(doc.Len()))
	b.ReportAllocs()
	for b.Loop() {
		f, err := mapFile(b, file, "in.ome.tif", Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(f.Images) != 1 {
			b.Fatalf("%d images", len(f.Images))
		}
	}
}
