package pyramid

import (
	"image"
	"image/color"
	"image/color/palette"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConverterFastPaths checks every image type with its own row
// converter against the generic colour-model conversion.
func TestConverterFastPaths(t *testing.T) {
	r := image.Rect(3, 2, 40, 30)
	rgba, nrgba := image.NewRGBA(r), image.NewNRGBA(r)
	ycc := image.NewYCbCr(r, image.YCbCrSubsampleRatio420)
	pal := image.NewPaletted(r, palette.Plan9)
	for i := range rgba.Pix {
		rgba.Pix[i], nrgba.Pix[i] = byte(i*37), byte(i*53)
	}
	for i := 3; i < len(rgba.Pix); i += 4 {
		rgba.Pix[i] = max(rgba.Pix[i], rgba.Pix[i-1], rgba.Pix[i-2], rgba.Pix[i-3]) // valid premultiplied
	}
	for i := range ycc.Y {
		ycc.Y[i] = byte(i * 7)
	}
	for i := range ycc.Cb {
		ycc.Cb[i], ycc.Cr[i] = byte(i*11), byte(i*13)
	}
	for i := range pal.Pix {
		pal.Pix[i] = byte(i * 5)
	}
	for _, img := range []image.Image{rgba, nrgba, ycc, pal} {
		conv := converterFor(img)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			var want []byte
			for x := r.Min.X; x < r.Max.X; x++ {
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				want = append(want, c.R, c.G, c.B)
			}
			assert.Equal(t, want, conv.appendRow(nil, img, y), "%T row %d", img, y)
		}
	}
}

// TestConverterLongPalette: a palette of more than 256 colours (only 256 are
// reachable) and a nil colour no pixel uses convert as At says.
func TestConverterLongPalette(t *testing.T) {
	long := make(color.Palette, 300)
	for i := range long {
		long[i] = color.NRGBA{byte(i), byte(i >> 8), byte(i * 3), 255}
	}
	long[7] = nil
	m := image.NewPaletted(image.Rect(0, 0, 255, 2), long)
	for i := range m.Pix {
		m.Pix[i] = byte(8 + i%248)
	}
	require.NoError(t, checkPalette(m))
	conv := converterFor(m)
	for y := range 2 {
		var want []byte
		for x := range 255 {
			c := color.NRGBAModel.Convert(m.At(x, y)).(color.NRGBA)
			want = append(want, c.R, c.G, c.B)
		}
		assert.Equal(t, want, conv.appendRow(nil, m, y), "row %d", y)
	}
}
