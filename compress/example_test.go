package compress_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/tiff"
)

// Compress 64x64 uint16 tiles with LZW behind the horizontal predictor on
// every core, and receive them in the order they were submitted.
func ExamplePipeline() {
	codec, err := compress.NewCodec(tiff.CompressionLZW, 0)
	if err != nil {
		log.Fatal(err)
	}
	enc := &compress.TileEncoder{
		Codec:     codec,
		Predictor: tiff.PredictorHorizontal,
		Format:    compress.Format{BitsPerSample: 16},
		Width:     64,
	}
	if err := enc.Validate(); err != nil {
		log.Fatal(err)
	}
	var total int
	p := compress.NewPipeline(context.Background(), compress.Options{}, func(seq int64, encoded []byte) error {
		total += len(encoded) // write it to the file here; encoded is reused
		return nil
	})
	for i := range 8 {
		tile := p.Buffer(64 * 64 * 2)
		for k := 0; k < len(tile); k += 2 {
			binary.LittleEndian.PutUint16(tile[k:], uint16(i*100+k/128)) // a ramp down each tile
		}
		if err := p.Submit(enc, tile); err != nil {
			log.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(total < 8*64*64*2)
	// Output: true
}

// NewCodec refuses what it cannot write, with errors to test with
// errors.Is.
func ExampleNewCodec() {
	_, err := compress.NewCodec(tiff.CompressionDeflate, 12)
	fmt.Println(err)
	_, err = compress.NewCodec(tiff.CompressionJPEG, 0)
	fmt.Println(err)
	// Output:
	// compress: invalid compression level 12: Deflate takes 1 to 9 (0 for the default, 3)
	// compress: unsupported compression 7
}
