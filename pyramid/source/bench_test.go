package source

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"testing"

	"github.com/ometiff-go/ometiff/tiff"
)

// BenchmarkBandReader reads large synthetic pages through the band
// reader, synchronously and on every core: a 4096 x 4096 uint16 page in
// 256 x 256 LZW tiles with the horizontal predictor, and a 4096 x 2048 RGB
// page in Deflate strips of 16 rows. It reports decoded bytes per second.
func BenchmarkBandReader(b *testing.B) {
	pages := []struct {
		name string
		page testPage
	}{
		{"u16-LZW-tiles", testPage{width: 4096, height: 4096, samples: 1, bits: 16, tileW: 256, tileH: 256, codec: mustCodec(tiff.CompressionLZW), predictor: 2}},
		{"rgb8-Deflate-strips", testPage{width: 4096, height: 2048, samples: 3, bits: 8, rowsPerStrip: 16, codec: mustCodec(tiff.CompressionDeflate), predictor: 2}},
	}
	for _, p := range pages {
		file, images := fileOf(b, binary.LittleEndian, true, p.page)
		f, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			b.Fatal(err)
		}
		for _, workers := range []int{1, 0} {
			b.Run(fmt.Sprintf("%s/workers=%d", p.name, workers), func(b *testing.B) {
				b.SetBytes(int64(len(images[0])))
				b.ReportAllocs()
				for b.Loop() {
					r, err := NewBandReader(context.Background(), f.Pages[0], Options{Workers: workers})
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
