package pyramid

import (
	"fmt"
	"image"
	"image/color"
	"reflect"
)

// WriteImage writes img to path as a pyramidal OME-TIFF of one image.
func WriteImage(path string, img image.Image, opts Options) error {
	if err := checkImage(img); err != nil {
		return err
	}
	w, err := Create(path, opts)
	if err != nil {
		return err
	}
	// Deferred, the Abort also runs when img panics: the temporary file
	// and the encoding goroutines go. After a Close it does nothing.
	defer w.Abort()
	if _, err := w.AddImageData(ImageSpec{}, img); err != nil {
		return err
	}
	return w.Close()
}

// AddImageData adds img as an image of one plane and writes it. spec gives
// the metadata (name, physical sizes, channel, annotations); the pixel
// layout comes from img, so spec's sizes, pixel type and samples must be
// zero or agree with it. Gray images (colour models Gray and Gray16)
// become one uint8 or uint16 channel; everything else becomes RGB, uint16
// for the colour models RGBA64 and NRGBA64 and uint8 otherwise (Alpha16
// too). Alpha is dropped (colours are taken un-premultiplied). An
// empty name becomes "image N". It returns the image, whose Spec tells the
// layout chosen.
//
// An img whose methods panic (a lazily decoded image whose read failed)
// panics AddImageData too, after the image was added: the writer then
// fails with ErrData, as it does when writing the pixels fails, and only
// Abort (a deferred one) is left to do.
func (w *Writer) AddImageData(spec ImageSpec, img image.Image) (*Image, error) {
	if err := w.usable(); err != nil {
		return nil, err
	}
	if err := checkImage(img); err != nil {
		return nil, err
	}
	im, err := w.addImageData(spec, img)
	if err != nil {
		return nil, err
	}
	return im, nil
}

// checkImage refuses an image whose pixels cannot all be read: one whose
// pixel slices do not cover its bounds (as image.NewYCbCr makes for some
// negative origins), or a paletted image using an index without a colour.
func checkImage(img image.Image) error {
	// A nil pointer in the interface (a *image.Gray left unset) would
	// panic in its first method.
	if img == nil {
		return fmt.Errorf("%w: nil image", ErrData)
	}
	if v := reflect.ValueOf(img); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("%w: nil image (a nil %T)", ErrData, img)
	}
	r := img.Bounds()
	if r.Empty() {
		return nil // AddImage reports the size
	}
	// covered: the first and last pixels' offsets, in that order, lie in pix.
	covered := func(pix []byte, offset func(x, y int) int, size int) bool {
		first, end := offset(r.Min.X, r.Min.Y), offset(r.Max.X-1, r.Max.Y-1)+size
		return 0 <= first && first < end && end <= len(pix) // a negative stride reverses them
	}
	ok := true
	switch m := img.(type) {
	case *image.Gray:
		ok = covered(m.Pix, m.PixOffset, 1)
	case *image.Gray16:
		ok = covered(m.Pix, m.PixOffset, 2)
	case *image.RGBA:
		ok = covered(m.Pix, m.PixOffset, 4)
	case *image.NRGBA:
		ok = covered(m.Pix, m.PixOffset, 4)
	case *image.YCbCr:
		ok = covered(m.Y, m.YOffset, 1) && covered(m.Cb, m.COffset, 1) && covered(m.Cr, m.COffset, 1)
	case *image.Paletted:
		if ok = covered(m.Pix, m.PixOffset, 1); ok {
			return checkPalette(m)
		}
	}
	if !ok {
		return fmt.Errorf("%w: the %T's pixel slices do not cover its bounds %v", ErrData, img, r)
	}
	return nil
}

// checkPalette refuses a paletted image with a pixel whose index has no
// colour: past the end of the palette, or a nil entry.
func checkPalette(m *image.Paletted) error {
	var used [256]bool
	for y := m.Rect.Min.Y; y < m.Rect.Max.Y; y++ {
		i := m.PixOffset(m.Rect.Min.X, y)
		for _, index := range m.Pix[i : i+m.Rect.Dx()] {
			used[index] = true
		}
	}
	for index, u := range used {
		if u && (index >= len(m.Palette) || m.Palette[index] == nil) {
			return fmt.Errorf("%w: palette index %d is used but has no colour (the palette has %d entries)", ErrData, index, len(m.Palette))
		}
	}
	return nil
}

// addImageData adds and writes the image.
func (w *Writer) addImageData(spec ImageSpec, img image.Image) (*Image, error) {
	b := img.Bounds()
	conv := converterFor(img)
	if err := spec.takeLayout(b.Dx(), b.Dy(), conv); err != nil {
		return nil, err
	}
	im, err := w.addImage(spec, true, nil)
	if err != nil {
		return nil, err
	}
	pw, err := im.Plane(0, 0, 0)
	if err != nil {
		return nil, err
	}
	// The image is added and its plane started: nothing can take it back,
	// so a panic of img's fails the writer, which Close would otherwise
	// find with a plane missing the caller cannot write (no *Image).
	defer func() {
		if r := recover(); r != nil {
			pw.giveBackIfOpen()
			w.fail(fmt.Errorf("%w: the %T panicked while its pixels were read: %v", ErrData, img, r))
			panic(r)
		}
	}()
	const bandRows = 64
	rowBytes := b.Dx() * conv.samples * conv.pixelType.Size()
	band := make([]byte, 0, min(bandRows, b.Dy())*rowBytes)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		band = conv.appendRow(band, img, y)
		if len(band) == cap(band) || y == b.Max.Y-1 {
			if _, err := pw.Write(band); err != nil {
				return nil, err
			}
			band = band[:0]
		}
	}
	return im, pw.Close()
}

// takeLayout fills the spec's pixel layout from an image, refusing values
// that disagree.
func (s *ImageSpec) takeLayout(width, height int, conv converter) error {
	layout := []struct {
		name  string
		field *int
		value int
	}{{"SizeX", &s.SizeX, width}, {"SizeY", &s.SizeY, height}, {"SizeZ", &s.SizeZ, 1}, {"SizeC", &s.SizeC, 1}, {"SizeT", &s.SizeT, 1},
		{"SamplesPerPixel", &s.SamplesPerPixel, conv.samples}}
	for _, l := range layout {
		if *l.field != 0 && *l.field != l.value {
			return fmt.Errorf("%w: the spec's %s is %d where the image has %d", ErrData, l.name, *l.field, l.value)
		}
		*l.field = l.value
	}
	if s.PixelType != Uint8 && s.PixelType != conv.pixelType {
		return fmt.Errorf("%w: the spec's PixelType is %v, the image holds %v", ErrData, s.PixelType, conv.pixelType)
	}
	s.PixelType = conv.pixelType
	return nil
}

// converter turns rows of an image.Image into little-endian samples.
type converter struct {
	pixelType PixelType
	samples   int
	appendRow func(dst []byte, img image.Image, y int) []byte
}

func converterFor(img image.Image) converter {
	switch m := img.(type) {
	case *image.Gray:
		return converter{Uint8, 1, func(dst []byte, _ image.Image, y int) []byte {
			i := m.PixOffset(m.Rect.Min.X, y)
			return append(dst, m.Pix[i:i+m.Rect.Dx()]...)
		}}
	case *image.Gray16:
		return converter{Uint16, 1, func(dst []byte, _ image.Image, y int) []byte {
			i := m.PixOffset(m.Rect.Min.X, y)
			for p := m.Pix[i : i+2*m.Rect.Dx()]; len(p) >= 2; p = p[2:] {
				dst = append(dst, p[1], p[0]) // big-endian in image.Gray16
			}
			return dst
		}}
	case *image.NRGBA:
		return converter{Uint8, 3, func(dst []byte, _ image.Image, y int) []byte {
			i := m.PixOffset(m.Rect.Min.X, y)
			for p := m.Pix[i : i+4*m.Rect.Dx()]; len(p) >= 4; p = p[4:] {
				dst = append(dst, p[0], p[1], p[2])
			}
			return dst
		}}
	case *image.RGBA:
		return converter{Uint8, 3, func(dst []byte, _ image.Image, y int) []byte {
			i := m.PixOffset(m.Rect.Min.X, y)
			for p := m.Pix[i : i+4*m.Rect.Dx()]; len(p) >= 4; p = p[4:] {
				if p[3] == 0xff {
					dst = append(dst, p[0], p[1], p[2])
					continue
				}
				c := color.NRGBAModel.Convert(color.RGBA{p[0], p[1], p[2], p[3]}).(color.NRGBA)
				dst = append(dst, c.R, c.G, c.B)
			}
			return dst
		}}
	case *image.YCbCr:
		return converter{Uint8, 3, func(dst []byte, _ image.Image, y int) []byte {
			for x := m.Rect.Min.X; x < m.Rect.Max.X; x++ {
				r, g, b, _ := m.YCbCrAt(x, y).RGBA() // opaque: what NRGBAModel gives
				dst = append(dst, byte(r>>8), byte(g>>8), byte(b>>8))
			}
			return dst
		}}
	case *image.Paletted:
		var palette [256]color.NRGBA
		for i, c := range m.Palette[:min(len(m.Palette), len(palette))] {
			if c != nil { // checkPalette refused images that use a nil entry
				palette[i] = color.NRGBAModel.Convert(c).(color.NRGBA)
			}
		}
		return converter{Uint8, 3, func(dst []byte, _ image.Image, y int) []byte {
			i := m.PixOffset(m.Rect.Min.X, y)
			for _, index := range m.Pix[i : i+m.Rect.Dx()] {
				c := palette[index]
				dst = append(dst, c.R, c.G, c.B)
			}
			return dst
		}}
	}
	switch img.ColorModel() {
	case color.GrayModel:
		return converter{Uint8, 1, func(dst []byte, img image.Image, y int) []byte {
			b := img.Bounds()
			for x := b.Min.X; x < b.Max.X; x++ {
				dst = append(dst, color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y)
			}
			return dst
		}}
	case color.Gray16Model:
		return converter{Uint16, 1, func(dst []byte, img image.Image, y int) []byte {
			b := img.Bounds()
			for x := b.Min.X; x < b.Max.X; x++ {
				v := color.Gray16Model.Convert(img.At(x, y)).(color.Gray16).Y
				dst = append(dst, byte(v), byte(v>>8))
			}
			return dst
		}}
	case color.RGBA64Model, color.NRGBA64Model:
		return converter{Uint16, 3, func(dst []byte, img image.Image, y int) []byte {
			b := img.Bounds()
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.NRGBA64Model.Convert(img.At(x, y)).(color.NRGBA64)
				dst = append(dst, byte(c.R), byte(c.R>>8), byte(c.G), byte(c.G>>8), byte(c.B), byte(c.B>>8))
			}
			return dst
		}}
	}
	return converter{Uint8, 3, func(dst []byte, img image.Image, y int) []byte {
		b := img.Bounds()
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			dst = append(dst, c.R, c.G, c.B)
		}
		return dst
	}}
}
