package pyramid

import (
	"image"
	"image/color"
	"image/color/palette"
	"testing"

	"github.com/stretchr/testify/assert"
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
