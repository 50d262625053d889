package compress

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"testing"

	"github.com/ometiff-go/ometiff/internal/synth"
	"github.com/ometiff-go/ometiff/tiff"
)

// BenchmarkDecode decodes 256x256 uint16 slide tiles stored by each codec,
// with the horizontal predictor where it applies, and reports decoded
// bytes per second.
func BenchmarkDecode(b *testing.B) {
	tiles := slideTiles(32, 256)
	format := Format{BitsPerSample: 16}
	for _, c := range append(benchCodecs(b)[:2], benchCodecs(b)[2], benchCodecs(b)[4]) {
		p := predictorsFor(c.codec, format)
		predictor := p[len(p)-1]
		b.Run(fmt.Sprintf("%s/predictor=%d", c.name, predictor), func(b *testing.B) {
			enc := &TileEncoder{Codec: c.codec, Predictor: predictor, Format: format, Width: 256}
			stored := make([][]byte, len(tiles))
			for i, t := range tiles {
				var err error
				if stored[i], err = enc.Encode(nil, t); err != nil {
					b.Fatal(err)
				}
			}
			d, err := NewDecoder(BlockFormat{Compression: c.codec.Compression(), Predictor: predictor, Format: format, Width: 256, Height: 256})
			if err != nil {
				b.Fatal(err)
			}
			benchmarkDecoder(b, d, stored)
		})
	}
}

// BenchmarkDecodeJPEG decodes 256x256 RGB slide tiles stored as JPEG at
// quality 85 (YCbCr 4:2:0, abbreviated streams with their tables apart),
// as whole-slide scanners and libvips store them.
func BenchmarkDecodeJPEG(b *testing.B) {
	var stored [][]byte
	var tables []byte
	m := image.NewRGBA(image.Rect(0, 0, 256, 256))
	rgb := make([]byte, 256*256*3)
	for i := range 8 {
		synth.Pattern{Seed: 1}.RGB8(rgb, i*256, 2048, 256, 256)
		for k := range 256 * 256 {
			copy(m.Pix[4*k:], rgb[3*k:3*k+3])
			m.Pix[4*k+3] = 255
		}
		var full bytes.Buffer
		if err := jpeg.Encode(&full, m, &jpeg.Options{Quality: 85}); err != nil {
			b.Fatal(err)
		}
		var s []byte
		tables, s = splitJPEG(full.Bytes())
		stored = append(stored, s)
	}
	d, err := NewDecoder(BlockFormat{Compression: tiff.CompressionJPEG, Format: Format{SamplesPerPixel: 3},
		Photometric: tiff.PhotometricYCbCr, JPEGTables: tables, Width: 256, Height: 256})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkDecoder(b, d, stored)
}

func benchmarkDecoder(b *testing.B, d *Decoder, stored [][]byte) {
	var dst []byte
	var in, out int64
	b.SetBytes(int64(d.BlockBytes(d.Format().Height)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		var err error
		s := stored[i%len(stored)]
		if dst, err = d.Decode(dst[:0], s); err != nil {
			b.Fatal(err)
		}
		in += int64(len(s))
		out += int64(len(dst))
		i++
	}
	b.ReportMetric(float64(out)/float64(in), "ratio")
}
