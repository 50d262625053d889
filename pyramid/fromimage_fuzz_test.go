package pyramid

import (
	"image"
	"image/color"
	"testing"

	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/iohandle"
)

// fuzzImage makes an image of one of the types AddImageData converts,
// filled from data; a paletted image gets a palette of data[0] colours,
// nil where the data says 0.
func fuzzImage(kind uint8, r image.Rectangle, data []byte) image.Image {
	var img image.Image
	var pix [][]byte // the slices to fill from data
	switch kind % 8 {
	case 0:
		m := image.NewGray(r)
		img, pix = m, [][]byte{m.Pix}
	case 1:
		m := image.NewGray16(r)
		img, pix = m, [][]byte{m.Pix}
	case 2:
		m := image.NewRGBA(r)
		img, pix = m, [][]byte{m.Pix}
	case 3:
		m := image.NewNRGBA(r)
		img, pix = m, [][]byte{m.Pix}
	case 4:
		m := image.NewRGBA64(r)
		img, pix = m, [][]byte{m.Pix}
	case 5:
		m := image.NewYCbCr(r, image.YCbCrSubsampleRatio(kind/8%6))
		img, pix = m, [][]byte{m.Y, m.Cb, m.Cr}
	case 6:
		m := image.NewPaletted(r, fuzzPalette(data))
		img, pix = m, [][]byte{m.Pix}
	default:
		return image.NewUniform(color.Gray16{Y: uint16(at(data, 0))<<8 | uint16(at(data, 1))}) // no bounds: rejected
	}
	for _, p := range pix {
		for i := range p {
			if len(data) > 0 {
				p[i] = data[i%len(data)]
			}
		}
	}
	return img
}

// fuzzPalette is a palette of data[0] colours, nil where data says 0.
func fuzzPalette(data []byte) color.Palette {
	var p color.Palette
	for i := range int(at(data, 0)) {
		if v := at(data, i+1); v != 0 {
			p = append(p, color.NRGBA{v, v * 3, v * 7, v | 1})
		} else {
			p = append(p, nil)
		}
	}
	return p
}

func at(data []byte, i int) byte {
	if i < len(data) {
		return data[i]
	}
	return 0
}

// convertedPixels is what AddImageData promises for img in the layout it
// chose: each pixel through the colour model of that layout.
func convertedPixels(img image.Image, spec ImageSpec) []byte {
	var pix []byte
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.At(x, y)
			switch {
			case spec.SamplesPerPixel == 1 && spec.PixelType == Uint8:
				pix = append(pix, color.GrayModel.Convert(c).(color.Gray).Y)
			case spec.SamplesPerPixel == 1:
				v := color.Gray16Model.Convert(c).(color.Gray16).Y
				pix = append(pix, byte(v), byte(v>>8))
			case spec.PixelType == Uint8:
				n := color.NRGBAModel.Convert(c).(color.NRGBA)
				pix = append(pix, n.R, n.G, n.B)
			default:
				n := color.NRGBA64Model.Convert(c).(color.NRGBA64)
				pix = append(pix, byte(n.R), byte(n.R>>8), byte(n.G), byte(n.G>>8), byte(n.B), byte(n.B>>8))
			}
		}
	}
	return pix
}

// FuzzAddImageData converts random images of every supported type, with
// any origin and palette: errors must be typed, and an image accepted must
// read back as its colour model converts it.
func FuzzAddImageData(f *testing.F) {
	f.Add(uint8(0), int8(0), int8(0), uint8(5), uint8(3), []byte{1, 2, 3})
	f.Add(uint8(6), int8(-3), int8(7), uint8(20), uint8(17), []byte{4, 0, 9, 200, 1, 2, 3})
	f.Add(uint8(13), int8(1), int8(-1), uint8(33), uint8(18), []byte{9, 8, 7, 6, 5})
	f.Add(uint8(39), int8(101), int8(9), uint8(20), uint8(82), []byte("0")) // found: a 2e9 x 2e9 uniform image panicked in Plane
	f.Add(uint8(93), int8(-24), int8(9), uint8(24), uint8(91), []byte("0")) // found: a YCbCr whose chroma falls short panicked in At
	f.Fuzz(func(t *testing.T, kind uint8, x0, y0 int8, w, h uint8, data []byte) {
		r := image.Rect(int(x0), int(y0), int(x0)+int(w%48), int(y0)+int(h%48))
		img := fuzzImage(kind, r, data)
		mem := iohandle.NewMemory()
		wr, err := New(mem, Options{TileSize: 16, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		im, err := wr.AddImageData(ImageSpec{}, img)
		if err != nil {
			requireTyped(t, err)
			_ = wr.Abort()
			return
		}
		if err := wr.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := readback.Parse(mem.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Image(f.IFDs[0])
		if err != nil {
			t.Fatal(err)
		}
		if want := convertedPixels(img, im.Spec()); string(got.Pix) != string(want) {
			t.Fatalf("%T: the file's pixels differ from the colour model's", img)
		}
	})
}
