package compress_test

import (
	"encoding/binary"
	"fmt"
	"log"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/tiff"
)

// Decode a big-endian uint16 tile of 4 x 2 pixels stored with LZW and the
// horizontal predictor, as a TIFF page describes it.
func ExampleDecoder() {
	format := compress.Format{BitsPerSample: 16, ByteOrder: binary.BigEndian}
	// A tile as a writer stores it (here, this package's encoder).
	lzw, err := compress.NewCodec(tiff.CompressionLZW, 0)
	if err != nil {
		log.Fatal(err)
	}
	enc := &compress.TileEncoder{Codec: lzw, Predictor: tiff.PredictorHorizontal, Format: format, Width: 4}
	stored, err := enc.Encode(nil, []byte{0, 1, 0, 2, 0, 3, 0, 4, 1, 0, 2, 0, 3, 0, 4, 0})
	if err != nil {
		log.Fatal(err)
	}

	d, err := compress.NewDecoder(compress.BlockFormat{
		Compression: tiff.CompressionLZW, Predictor: tiff.PredictorHorizontal,
		Format: format, Width: 4, Height: 2,
	})
	if err != nil {
		log.Fatal(err)
	}
	samples, err := d.Decode(nil, stored)
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < len(samples); i += 2 {
		fmt.Print(binary.LittleEndian.Uint16(samples[i:]), " ")
	}
	fmt.Println()
	// Output:
	// 1 2 3 4 256 512 768 1024
}
