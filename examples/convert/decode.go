package main

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // register the decoders image.Decode uses
	_ "image/jpeg"
	_ "image/png"
	"os"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/ometiff-go/ometiff/pyramid"
)

// imageSource is a decoded image: one plane, converted by the writer.
type imageSource struct{ img image.Image }

// decodeSource decodes the image in the input.
func decodeSource(in *os.File) (imageSource, error) {
	img, _, err := image.Decode(bufio.NewReaderSize(in, 1<<20))
	if errors.Is(err, image.ErrFormat) {
		return imageSource{}, fmt.Errorf("%s: unknown image format (want PNG, JPEG, GIF, BMP, TIFF or WebP, or -raw flags for raw samples)", in.Name())
	}
	if err != nil {
		return imageSource{}, fmt.Errorf("%s: %w", in.Name(), err)
	}
	if img.Bounds().Empty() {
		return imageSource{}, fmt.Errorf("%s: the image is empty", in.Name())
	}
	return imageSource{img}, nil
}

// spec gives the image's size and its one plane; AddImageData takes the
// pixel type and samples from the image.
func (s imageSource) spec() pyramid.ImageSpec {
	b := s.img.Bounds()
	return pyramid.ImageSpec{SizeX: b.Dx(), SizeY: b.Dy(), SizeZ: 1, SizeC: 1, SizeT: 1}
}

// write adds the image to w, with spec's metadata, and returns the spec
// written, with the layout the writer chose.
func (s imageSource) write(w *pyramid.Writer, spec pyramid.ImageSpec) (pyramid.ImageSpec, error) {
	im, err := w.AddImageData(spec, s.img)
	if err != nil {
		return spec, err
	}
	return im.Spec(), nil
}
