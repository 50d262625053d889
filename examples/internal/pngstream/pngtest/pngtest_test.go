package pngtest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStreamReadsBackWithImagePNG checks Stream's files with image/png;
// Encode's are checked by package pngstream's tests the same way.
func TestStreamReadsBackWithImagePNG(t *testing.T) {
	pixel := func(x, y int) color.NRGBA { return color.NRGBA{byte(x + y), byte(x ^ y), byte(y * 3), 0xff} }
	var buf bytes.Buffer
	require.NoError(t, Stream(&buf, 300, 200, 2, func(y int, row []byte) {
		for x := range 300 {
			c := pixel(x, y)
			copy(row[3*x:], []byte{c.R, c.G, c.B})
		}
	}))
	img, err := png.Decode(&buf)
	require.NoError(t, err)
	require.Equal(t, image.Rect(0, 0, 300, 200), img.Bounds())
	for y := range 200 {
		for x := range 300 {
			if got := color.NRGBAModel.Convert(img.At(x, y)); got != pixel(x, y) {
				assert.Failf(t, "pixel differs", "(%d, %d): %v, want %v", x, y, got, pixel(x, y))
				return
			}
		}
	}
}
