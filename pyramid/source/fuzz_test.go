package source

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/tiff"
)

// typedError reports whether err is one of the errors a hostile file may
// give: the file is not TIFF, malformed or unsupported, a block does not
// decode, or a band is too large.
func typedError(err error) bool {
	for _, e := range []error{tiff.ErrNotTIFF, tiff.ErrMalformed, tiff.ErrUnsupported, compress.ErrCorrupt,
		compress.ErrCompression, compress.ErrFormat, compress.ErrPredictor, ErrSize, ErrUnsupported} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzBandReader reads every page of arbitrary bytes with the band reader,
// seeded with small files of several layouts built in code: errors must
// be typed, and a page read to the end must give exactly its rows.
func FuzzBandReader(f *testing.F) {
	for i, p := range []testPage{
		{width: 20, height: 9, samples: 1, bits: 16, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionLZW), predictor: 2},
		{width: 7, height: 5, samples: 3, bits: 8, rowsPerStrip: 2, planar: true, codec: mustCodec(tiff.CompressionDeflate)},
		{width: 9, height: 4, samples: 1, bits: 32, float: true, rowsPerStrip: 3, codec: mustCodec(tiff.CompressionZstd), predictor: 3},
		{width: 16, height: 16, samples: 2, bits: 8, tileW: 16, tileH: 16, sparse: []int{0}},
	} {
		order := binary.ByteOrder(binary.LittleEndian)
		if i%2 == 1 {
			order = binary.BigEndian
		}
		file, _ := fileOf(f, order, i == 2, p)
		f.Add(byte(i), file)
	}
	f.Fuzz(func(t *testing.T, workers byte, data []byte) {
		file, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !typedError(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for _, page := range file.Pages[:min(len(file.Pages), 4)] {
			r, err := NewBandReader(context.Background(), page, Options{Workers: 1 + int(workers%3), MaxBandBytes: 1 << 20})
			if err != nil {
				if !typedError(err) {
					t.Fatalf("untyped error: %v", err)
				}
				continue
			}
			n, err := io.Copy(io.Discard, r)
			if cerr := r.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				if !typedError(err) {
					t.Fatalf("untyped error: %v", err)
				}
				continue
			}
			if l := r.Layout(); n != int64(l.Height)*int64(r.RowBytes()) {
				t.Fatalf("%d bytes read of a %d x %d page (%d bytes a row)", n, l.Width, l.Height, r.RowBytes())
			}
		}
	})
}
