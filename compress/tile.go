package compress

import (
	"fmt"
	"sync"

	"github.com/ometiff-go/ometiff/tiff"
)

// TileEncoder encodes the tiles (or strips) of one image: it applies the
// predictor to a pooled copy of each tile, then compresses it with the
// codec. The zero value stores tiles unchanged. A TileEncoder is safe for
// concurrent use as long as its fields do not change.
type TileEncoder struct {
	// Codec compresses the tile; nil stores it unchanged.
	Codec Codec
	// Predictor is the TIFF Predictor (tag 317): 0 or tiff.PredictorNone
	// for none, tiff.PredictorHorizontal for integer samples,
	// tiff.PredictorFloatingPoint for 32- and 64-bit floats; none for
	// uncompressed or JPEG tiles, whose readers ignore it (ErrPredictor).
	Predictor uint16
	// Format is the layout of the tile's samples.
	Format Format
	// Width is the number of pixels in a row of the tile (the TileWidth, or
	// the ImageWidth of a strip). A predictor needs it; without one, 0
	// skips the check that tiles hold whole rows.
	Width int
}

// Validate reports whether the encoder's settings are consistent, with the
// error Encode would return for any tile.
func (e *TileEncoder) Validate() error {
	_, _, _, err := e.plan()
	return err
}

// Encode appends the encoded tile src to dst and returns the extended
// slice. src must hold whole rows of Width pixels; it is not modified.
func (e *TileEncoder) Encode(dst, src []byte) ([]byte, error) {
	l, rowBytes, predict, err := e.plan()
	if err != nil {
		return dst, err
	}
	if len(src)%rowBytes != 0 {
		return dst, fmt.Errorf("%w: %d bytes in rows of %d", ErrTileSize, len(src), rowBytes)
	}
	codec := e.Codec
	if codec == nil {
		codec = noneCodec{}
	}
	if predict == nil {
		return codec.Encode(dst, src)
	}
	s := getScratch(len(src))
	for row := 0; row < len(src); row += rowBytes {
		predict(s.buf[row:row+rowBytes], src[row:row+rowBytes], l)
	}
	dst, err = codec.Encode(dst, s.buf)
	scratches.Put(s)
	return dst, err
}

// plan validates the settings and returns the sample layout, the size of a
// row (of a pixel when Width is 0 and there is no predictor) and the row
// predictor.
func (e *TileEncoder) plan() (l layout, rowBytes int, predict rowPredictor, err error) {
	l, err = e.Format.layout()
	if err != nil {
		return l, 0, nil, err
	}
	predict, err = l.predictor(e.Predictor)
	switch {
	case err != nil:
		return l, 0, nil, err
	case predict != nil && (e.Codec == nil || e.Codec.Compression() == tiff.CompressionNone):
		return l, 0, nil, fmt.Errorf("%w: predictor %d on uncompressed tiles (TIFF readers ignore it)", ErrPredictor, e.Predictor)
	case predict != nil && e.Codec.Compression() == tiff.CompressionJPEG:
		return l, 0, nil, fmt.Errorf("%w: predictor %d on JPEG tiles (TIFF readers ignore it)", ErrPredictor, e.Predictor)
	case e.Width < 0 || e.Width > maxWidth || e.Width == 0 && predict != nil:
		return l, 0, nil, fmt.Errorf("%w: tile width %d", ErrFormat, e.Width)
	case e.Width == 0:
		return l, l.pixelBytes(), nil, nil
	}
	return l, e.Width * l.pixelBytes(), predict, nil
}

// scratch is a pooled buffer for the predicted copy of a tile.
type scratch struct {
	buf []byte
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// getScratch returns a pooled scratch buffer of length n.
func getScratch(n int) *scratch {
	s := scratches.Get().(*scratch)
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	s.buf = s.buf[:n]
	return s
}
