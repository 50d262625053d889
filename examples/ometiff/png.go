package main

import (
	"fmt"
	"image"
	"io"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/examples/internal/pngstream"
	"github.com/ometiff-go/ometiff/pyramid"
)

// pngSource is a non-interlaced PNG, streamed into the writer a band of
// rows at a time: memory grows with its width, not its height.
type pngSource struct {
	name string
	dec  *pngstream.Decoder
	rows int // per band: a tile row, so that the writer tiles it without a copy
	meta pngMeta
}

// pngLayout is the layout a PNG's pixels get, the same whether it is
// streamed or decoded whole: gray keeps one channel of 8 or 16 bits (its
// alpha, when opaque, dropped), but gray with a transparent colour, which
// image/png decodes as NRGBA; everything else becomes RGB, uint16 from
// 16-bit samples and uint8 otherwise.
func pngLayout(h pngstream.Header) (pyramid.PixelType, int) {
	pixelType := pyramid.Uint8
	if h.BitDepth == 16 {
		pixelType = pyramid.Uint16
	}
	if h.ColorType == pngstream.Gray && !h.Transparent || h.ColorType == pngstream.GrayAlpha {
		return pixelType, 1
	}
	return pixelType, 3
}

// grayOf returns the gray of an image/png decoding of gray and alpha
// (NRGBA or NRGBA64, each colour sample the gray), alpha left out.
func grayOf(img image.Image) image.Image {
	b := img.Bounds()
	switch m := img.(type) {
	case *image.NRGBA:
		g := image.NewGray(b)
		for y := range b.Dy() {
			row, src := g.Pix[y*g.Stride:][:b.Dx()], m.Pix[y*m.Stride:]
			for x := range row {
				row[x] = src[4*x]
			}
		}
		return g
	case *image.NRGBA64:
		g := image.NewGray16(b)
		for y := range b.Dy() {
			row, src := g.Pix[y*g.Stride:][:2*b.Dx()], m.Pix[y*m.Stride:]
			for x := range b.Dx() {
				row[2*x], row[2*x+1] = src[8*x], src[8*x+1]
			}
		}
		return g
	}
	return img
}

// pngModelBytes is the size of a pixel as image/png decodes it: Gray,
// Gray16, Paletted, NRGBA or RGBA, and their 64-bit forms.
func pngModelBytes(h pngstream.Header) int {
	pixelType, samples := pngLayout(h)
	switch {
	case h.ColorType == pngstream.Paletted || samples == 1:
		return pixelType.Size()
	case h.BitDepth == 16:
		return 8
	}
	return 4
}

// pngRows returns the conversion of a PNG row to the samples of pngLayout,
// little-endian, appended to dst; alpha is dropped, and the first pixel
// that is not opaque (its alpha below the maximum, a palette entry's
// below 255, or the transparent colour) recorded in seen.
func pngRows(h pngstream.Header, seen *translucent) func(dst, row []byte) []byte {
	_, samples := pngLayout(h)
	channels, depth := h.Channels(), h.BitDepth
	transparent := h.Key
	if depth <= 8 { // only the low byte counts, as image/png reads it
		for i := range transparent {
			transparent[i] &= 0xff
		}
	}
	y := -1
	note := func(x int) {
		if !seen.found {
			*seen = translucent{found: true, x: x, y: y}
		}
	}
	switch {
	case h.ColorType == pngstream.Paletted:
		var lut [256][3]byte // indices past the palette are black, as image/png has them
		var clear [256]bool
		for i, c := range h.Palette {
			lut[i], clear[i] = [3]byte{c.R, c.G, c.B}, c.A < 0xff
		}
		return func(dst, row []byte) []byte {
			y++
			for x := range h.Width {
				i := packed(row, x, depth)
				dst = append(dst, lut[i][:]...)
				if clear[i] {
					note(x)
				}
			}
			return dst
		}
	case depth < 8: // gray
		scale := byte(255 / (1<<depth - 1))
		return func(dst, row []byte) []byte {
			y++
			for x := range h.Width {
				v := packed(row, x, depth)
				if h.Transparent && uint16(v) == transparent[0] {
					note(x)
				}
				for range samples {
					dst = append(dst, v*scale)
				}
			}
			return dst
		}
	case channels == samples && depth == 8 && !h.Transparent: // gray or RGB, as they are
		return func(dst, row []byte) []byte { y++; return append(dst, row...) }
	}
	// Each pixel's first sample three times (gray as RGB) or its first
	// three (RGB), 16-bit samples swapped to little-endian.
	pick := [3]int{0, 1, 2}
	if channels <= 2 {
		pick = [3]int{}
	}
	size := depth / 8
	alpha := h.ColorType == pngstream.GrayAlpha || h.ColorType == pngstream.RGBA
	key := func(px []byte) bool { // the transparent colour
		for i := range channels {
			v := uint16(px[i*size])
			if size == 2 {
				v = v<<8 | uint16(px[2*i+1])
			}
			if v != transparent[i] {
				return false
			}
		}
		return true
	}
	return func(dst, row []byte) []byte {
		y++
		for x, px := 0, row; len(px) > 0; x, px = x+1, px[channels*size:] {
			for _, s := range pick[:samples] {
				if size == 2 {
					dst = append(dst, px[2*s+1], px[2*s])
				} else {
					dst = append(dst, px[s])
				}
			}
			switch a := (channels - 1) * size; {
			case alpha && (px[a] != 0xff || size == 2 && px[a+1] != 0xff), h.Transparent && key(px):
				note(x)
			}
		}
		return dst
	}
}

// translucent is the first pixel of an image that is not opaque, if one
// is.
type translucent struct {
	found bool
	x, y  int
}

// alphaPolicy is what a conversion does with an image's transparency, which
// the output does not hold: drop it and say so (with -skip-unsupported),
// or refuse the image. An image whose every pixel is opaque loses nothing.
type alphaPolicy struct {
	drop   bool
	stderr io.Writer
}

// check refuses the image named, or with drop says on stderr that its
// transparency is left out, when seen found a pixel that is not opaque.
func (p alphaPolicy) check(name string, seen translucent) error {
	if !seen.found {
		return nil
	}
	err := fmt.Errorf("%s: the image is transparent (its alpha, or its transparent colour) at pixel (%d, %d), and the output holds no transparency",
		name, seen.x, seen.y)
	if !p.drop {
		return cli.InputError{Err: fmt.Errorf("%w (-skip-unsupported writes its colours without it)", err)}
	}
	fmt.Fprintf(p.stderr, "%s: %s: left out (-skip-unsupported): its transparency\n", convertName, name)
	return nil
}

// packed returns sample x of a row of samples of depth bits below 8.
func packed(row []byte, x, depth int) byte {
	bit := x * depth
	return row[bit/8] >> (8 - depth - bit%8) & (1<<depth - 1)
}

// spec gives the PNG's size and layout.
func (s pngSource) spec() pyramid.ImageSpec {
	h := s.dec.Header()
	pixelType, samples := pngLayout(h)
	spec := pyramid.ImageSpec{SizeX: h.Width, SizeY: h.Height, SizeZ: 1, SizeC: 1, SizeT: 1,
		PixelType: pixelType, SamplesPerPixel: samples, Annotations: s.meta.text}
	setDensity(&spec, h.PixelsPerMetre)
	return spec
}

// said is what the conversion says of the PNG: the chunks it does not
// keep.
func (s pngSource) said() []string { return s.meta.notes }

// leftOut lists the frames of an animated PNG, which are not written.
func (s pngSource) leftOut() []error { return pngFrames(s.dec.Header()) }

// pngFrames says an animated PNG's frames past its default image are left
// out.
func pngFrames(h pngstream.Header) []error {
	switch {
	case h.DefaultIsFrame && h.Frames > 1:
		return []error{fmt.Errorf("an animated PNG (APNG) of %d frames: only the first is written", h.Frames)}
	case !h.DefaultIsFrame && h.Frames > 0:
		return []error{fmt.Errorf("an animated PNG (APNG) of %d frames besides its default image: only the default image is written", h.Frames)}
	}
	return nil
}

// setDensity gives spec the pixel size of a PNG's pHYs density in pixels
// per metre, as libvips reads it (its resolution); a size of 0 is none.
func setDensity(spec *pyramid.ImageSpec, perMetre [2]uint32) {
	if perMetre[0] > 0 {
		spec.PhysicalSizeX, spec.PhysicalSizeXUnit = 1e6/float64(perMetre[0]), "µm"
	}
	if perMetre[1] > 0 {
		spec.PhysicalSizeY, spec.PhysicalSizeYUnit = 1e6/float64(perMetre[1]), "µm"
	}
}

// write adds the image to w with spec and streams its rows into its plane,
// band by band. The file is read to its end, IEND, before the last band is
// written, so a damaged end fails the conversion.
func (s pngSource) write(w *pyramid.Writer, spec pyramid.ImageSpec, alpha alphaPolicy) (pyramid.ImageSpec, error) {
	im, err := w.AddImage(spec)
	if err != nil {
		return spec, err
	}
	pw, err := im.Plane(0, 0, 0)
	if err != nil {
		return spec, err
	}
	var seen translucent
	convert := pngRows(s.dec.Header(), &seen)
	band := make([]byte, 0, int64(s.rows)*im.PlaneBytes()/int64(spec.SizeY))
	for {
		row, err := s.dec.ReadRow()
		if err == io.EOF {
			break
		}
		if err != nil {
			return spec, fmt.Errorf("%s: %w", s.name, err)
		}
		band = convert(band, row)
		if seen.found && !alpha.drop {
			return spec, alpha.check(s.name, seen) // before writing on: the conversion fails
		}
		if len(band) == cap(band) {
			if _, err := pw.Write(band); err != nil {
				return spec, err
			}
			band = band[:0]
		}
	}
	if len(band) > 0 {
		if _, err := pw.Write(band); err != nil {
			return spec, err
		}
	}
	if err := alpha.check(s.name, seen); err != nil {
		return spec, err
	}
	return im.Spec(), pw.Close()
}
