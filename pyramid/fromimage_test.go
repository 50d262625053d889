package pyramid

import (
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/readback"
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

// gray16Of returns an image.Gray16 (big-endian Pix) holding the
// little-endian uint16 samples pix.
func gray16Of(w, h int, pix []byte) *image.Gray16 {
	m := image.NewGray16(image.Rect(0, 0, w, h))
	for i := 0; i < len(pix); i += 2 {
		m.Pix[i], m.Pix[i+1] = pix[i+1], pix[i]
	}
	return m
}

// TestSixteenBitImagesConvert passes an image.Gray16 and an image.RGBA64,
// whose Pix are big-endian, as image.Image: the file holds their values,
// little-endian; an RGBA64 pixel that is not opaque is stored
// un-premultiplied.
func TestSixteenBitImagesConvert(t *testing.T) {
	gray := image.NewGray16(image.Rect(2, 3, 7, 6))
	rgba := image.NewRGBA64(image.Rect(0, 0, 3, 2))
	var wantGray, wantRGB []byte
	for y := 3; y < 6; y++ {
		for x := 2; x < 7; x++ {
			v := uint16(0x0102*x + 0x1000*y) // unequal bytes
			gray.SetGray16(x, y, color.Gray16{Y: v})
			wantGray = append(wantGray, byte(v), byte(v>>8))
		}
	}
	opaque := []color.RGBA64{{0x1234, 0xabcd, 0x0102, 0xffff}, {0xffff, 0, 0x8001, 0xffff}, {1, 2, 3, 0xffff}, {0xfedc, 0x0f0f, 0xf0f0, 0xffff}, {0, 0, 0, 0xffff}}
	for i, c := range append(opaque, color.RGBA64{0x4000, 0x2000, 0x1000, 0x8000}) {
		rgba.SetRGBA64(i%3, i/3, c)
	}
	for _, c := range opaque {
		wantRGB = append(wantRGB, byte(c.R), byte(c.R>>8), byte(c.G), byte(c.G>>8), byte(c.B), byte(c.B>>8))
	}
	half := color.NRGBA64Model.Convert(color.RGBA64{0x4000, 0x2000, 0x1000, 0x8000}).(color.NRGBA64)
	require.Equal(t, color.NRGBA64{0x7fff, 0x3fff, 0x1fff, 0x8000}, half)
	wantRGB = append(wantRGB, 0xff, 0x7f, 0xff, 0x3f, 0xff, 0x1f)

	for _, tc := range []struct {
		img  image.Image
		spp  int
		want []byte
	}{{gray, 1, wantGray}, {rgba, 3, wantRGB}} {
		t.Run(fmt.Sprintf("%T", tc.img), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.ome.tif")
			require.NoError(t, WriteImage(path, tc.img, Options{}))
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			f, err := readback.Parse(data)
			require.NoError(t, err)
			got, err := f.Image(f.IFDs[0])
			require.NoError(t, err)
			assert.Equal(t, 2, got.BytesPerSample)
			assert.Equal(t, tc.spp, got.Samples)
			assert.Equal(t, tc.want, got.Pix)
		})
	}
}
