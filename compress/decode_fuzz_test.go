package compress

import (
	"bytes"
	stdlzw "compress/lzw"
	"encoding/binary"
	"errors"
	"image"
	"image/jpeg"
	"slices"
	"testing"

	"github.com/ometiff-go/ometiff/tiff"
)

// fuzzDecode decodes arbitrary bytes as a block of the compression, of a
// size and sample layout the input picks: the decoder must return a typed
// error or exactly the block's bytes, leave dst's bytes alone, and never
// panic. Seeds are valid streams of 16 x 16 uint8 blocks (and a padded
// last strip), so that the fuzzer starts from blocks that decode.
func fuzzDecode(f *testing.F, compression uint16, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(byte(15), byte(15), byte(0), s) // 16 x 16 uint8
	}
	// A last strip of 4 rows in strips of 8 (layout bit 7), 16 float32
	// samples wide (predictor 3), stored with 6: a strip padded past its
	// rows, which decodes.
	if compression != tiff.CompressionJPEG && compression != tiff.CompressionPackBits {
		padded, _ := mustCodec(compression, 0).Encode(nil, make([]byte, 6*16*4))
		f.Add(byte(15), byte(7), byte(0x92), padded)
	}
	f.Fuzz(func(t *testing.T, width, height, layout byte, data []byte) {
		bf := BlockFormat{
			Compression: compression,
			Predictor:   uint16(layout>>6) + 1,
			Format:      Format{BitsPerSample: 8 << (layout & 3), SamplesPerPixel: 1 + int(layout>>2&3), Float: layout&16 != 0},
			Width:       1 + int(width%64), Height: 1 + int(height%64),
		}
		if layout&32 != 0 {
			bf.Format.ByteOrder = binary.BigEndian
		}
		if layout&48 == 48 { // 1-, 2- or 4-bit samples in place of big-endian floats
			bf.Format.BitsPerSample, bf.Format.Float = 1<<(layout&3%3), false
		}
		if compression == tiff.CompressionJPEG {
			bf.Format = Format{SamplesPerPixel: 1 + 2*int(layout&1)}
			bf.Photometric = tiff.PhotometricYCbCr
			if layout&2 != 0 {
				bf.Photometric = tiff.PhotometricRGB
			}
			if layout&4 != 0 {
				bf.JPEGTables = fuzzJPEGTables
			}
		}
		d, err := NewDecoder(bf)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrPredictor) && !errors.Is(err, ErrCompression) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		rows := bf.Height - int(layout>>7)*bf.Height/2
		got, err := d.DecodeRows([]byte{1, 2, 3}, data, rows)
		if !bytes.Equal(got[:3], []byte{1, 2, 3}) {
			t.Fatalf("dst changed: %v", got[:3])
		}
		// What CheckFraming refuses does not decode: its refusals are
		// never of blocks a reader would take. (An LZW stream short of
		// its end code may decode in a tolerant reader.)
		if frameErr := CheckFraming(compression, data); frameErr != nil {
			if !errors.Is(frameErr, ErrCorrupt) {
				t.Fatalf("untyped framing error: %v", frameErr)
			}
			if err == nil && compression != tiff.CompressionLZW {
				t.Fatalf("decoded a block CheckFraming refuses: %v", frameErr)
			}
		}
		// Nor does what CheckJPEGTile refuses, of a block of the rows it
		// holds (without JPEGTables, which the decoder reads before it),
		// or, for a last strip, of any height up to the block's (a strip
		// padded past its rows).
		if compression == tiff.CompressionJPEG && len(bf.JPEGTables) == 0 {
			tileErr := CheckJPEGTile(data, bf.Width, rows, bf.Format.SamplesPerPixel)
			for h := rows + 1; tileErr != nil && h <= bf.Height; h++ {
				if CheckJPEGTile(data, bf.Width, h, bf.Format.SamplesPerPixel) == nil {
					tileErr = nil
				}
			}
			if tileErr != nil {
				if !errors.Is(tileErr, ErrCorrupt) && !errors.Is(tileErr, ErrCompression) {
					t.Fatalf("untyped tile error: %v", tileErr)
				}
				if err == nil {
					t.Fatalf("decoded a block CheckJPEGTile refuses: %v", tileErr)
				}
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrCompression) {
				t.Fatalf("untyped error: %v", err)
			}
			if len(got) != 3 {
				t.Fatalf("%d bytes appended with an error", len(got)-3)
			}
			return
		}
		if len(got)-3 != d.BlockBytes(rows) {
			t.Fatalf("decoded %d bytes, want %d", len(got)-3, d.BlockBytes(rows))
		}
		if bits := bf.Format.BitsPerSample; bits > 0 && bits < 8 && slices.ContainsFunc(got[3:], func(b byte) bool { return b >= 1<<bits }) {
			t.Fatalf("%d-bit samples decoded to values past %d", bits, 1<<bits-1)
		}
	})
}

// block is a 16 x 16 uint8 block of a ramp.
func block() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i / 3)
	}
	return b
}

// FuzzDecodeLZW decodes arbitrary LZW streams, seeded with new-style and
// old-style ones.
func FuzzDecodeLZW(f *testing.F) {
	lzw, _ := mustCodec(tiff.CompressionLZW, 0).Encode(nil, block())
	var old bytes.Buffer
	w := stdlzw.NewWriter(&old, stdlzw.LSB, 8)
	w.Write(block())
	w.Close()
	fuzzDecode(f, tiff.CompressionLZW, lzw, old.Bytes())
}

// FuzzDecodeDeflate decodes arbitrary zlib streams.
func FuzzDecodeDeflate(f *testing.F) {
	z, _ := mustCodec(tiff.CompressionDeflate, 0).Encode(nil, block())
	fuzzDecode(f, tiff.CompressionDeflate, z)
}

// FuzzDecodeZstd decodes arbitrary Zstandard frames.
func FuzzDecodeZstd(f *testing.F) {
	z, _ := mustCodec(tiff.CompressionZstd, 0).Encode(nil, block())
	fuzzDecode(f, tiff.CompressionZstd, z)
}

// FuzzDecodePackBits decodes arbitrary PackBits streams.
func FuzzDecodePackBits(f *testing.F) {
	// Runs of 3 and 128 bytes, 3 literals, a no-op and a run of 122: 256.
	fuzzDecode(f, tiff.CompressionPackBits, []byte{0xFE, 0xAA, 0x02, 0x80, 0x00, 0x2A, 0x81, 0xAA, 0x80, 0x87, 3})
}

// fuzzJPEGTables are the tables of a 16 x 16 YCbCr stream at quality 50,
// the JPEGTables of the blocks FuzzDecodeJPEG decodes with tables apart.
var fuzzJPEGTables, fuzzJPEGAbbreviated = func() (tables, block []byte) {
	var rgb bytes.Buffer
	jpeg.Encode(&rgb, testImage(16, 16), &jpeg.Options{Quality: 50})
	return splitJPEG(rgb.Bytes())
}()

// FuzzDecodeJPEG decodes arbitrary JPEG blocks, seeded with a gray and a
// YCbCr 16 x 16 stream, with the YCbCr stream's abbreviated block and the
// whole stream in a page with JPEGTables, and with the gray stream as a
// padded last strip.
func FuzzDecodeJPEG(f *testing.F) {
	var rgb, gray bytes.Buffer
	m := testImage(16, 16)
	jpeg.Encode(&rgb, m, &jpeg.Options{Quality: 50})
	g := image.NewGray(image.Rect(0, 0, 16, 16))
	copy(g.Pix, block())
	jpeg.Encode(&gray, g, nil)
	// Layout 1: YCbCr; 5: YCbCr with JPEGTables; 2: gray (Photometric
	// not YCbCr).
	f.Add(byte(15), byte(15), byte(1), rgb.Bytes())
	f.Add(byte(15), byte(15), byte(5), fuzzJPEGAbbreviated)
	f.Add(byte(15), byte(15), byte(5), rgb.Bytes())
	f.Add(byte(15), byte(15), byte(2), gray.Bytes())
	// A last strip of 12 rows in strips of 24, stored as a 16-row frame.
	f.Add(byte(15), byte(23), byte(0x82), gray.Bytes())
	fuzzDecode(f, tiff.CompressionJPEG)
}

// FuzzDecodeRoundTrip encodes blocks of the input's bytes with the
// encoders of this package, in the pixel type, byte order, codec and
// predictor the input picks, and decodes them: the samples must come back.
func FuzzDecodeRoundTrip(f *testing.F) {
	f.Add(byte(3), byte(0x21), byte(9), []byte("a block of samples, any samples at all........"))
	f.Fuzz(func(t *testing.T, width, layout, coding byte, data []byte) {
		format := Format{BitsPerSample: 8 << (layout & 3), SamplesPerPixel: 1 + int(layout>>2&3), Float: layout&16 != 0 && layout&3 >= 2}
		if layout&32 != 0 {
			format.ByteOrder = binary.BigEndian
		}
		codec := []Codec{mustCodec(tiff.CompressionLZW, 0), mustCodec(tiff.CompressionDeflate, 0), mustCodec(tiff.CompressionZstd, 0)}[int(coding)%3]
		predictor := []uint16{1, 2, 3}[int(coding>>2)%3]
		if predictor == 3 && !format.Float || predictor == 2 && format.Float {
			predictor = 1
		}
		w := 1 + int(width%16)
		row := w * format.SamplesPerPixel * format.BitsPerSample / 8
		rows := len(data) / row
		if rows == 0 {
			return
		}
		le := data[:rows*row]
		stored, err := (&TileEncoder{Codec: codec, Predictor: predictor, Format: format, Width: w}).Encode(nil, toFileOrder(le, format.BitsPerSample/8, format.ByteOrder))
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewDecoder(BlockFormat{Compression: codec.Compression(), Predictor: predictor, Format: format, Width: w, Height: rows})
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Decode(nil, stored)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, le) {
			t.Fatalf("decoded\n%x\nwant\n%x", got, le)
		}
	})
}
