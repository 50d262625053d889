package main

import (
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
)

// rawSource is a raw input: planes of little-endian samples, one after
// another in the dimension order, and nothing else.
type rawSource struct {
	in     *os.File
	format rawFormat
	// piped is an input of unknown size (a pipe), whose size is checked
	// only once its planes are read.
	piped bool
}

// newRawSource checks that the input's size matches the format, when the
// input is a regular file, and that the writer's bands for its width fit
// -max-memory, and returns the source.
func newRawSource(in *input, format rawFormat, lim limits) (rawSource, error) {
	s := rawSource{in: in.f, format: format, piped: in.size < 0}
	// Streamed, as a TIFF is: bounded when asked.
	if n := mul(int64(format.width), int64(format.height)); lim.pixelsGiven && lim.maxPixels > 0 && n > lim.maxPixels {
		return s, fmt.Errorf("%s: -raw-width and -raw-height give %d x %d pixels, more than -max-pixels %d", in.name, format.width, format.height, lim.maxPixels)
	}
	planes := mul(int64(format.z), int64(format.channels), int64(format.t))
	if want := mul(planes, s.planeBytes()); in.size >= 0 && in.size != want {
		take, verb := fmt.Sprint(want), "take"
		if planes == 1 {
			verb = "takes"
		}
		if want == math.MaxInt64 {
			take = "more than a file can hold"
		}
		return s, cli.UsageError{Err: fmt.Errorf("%s has %d bytes, but %s of %d x %d x %d %v samples %s %s",
			in.name, in.size, plural64(planes, "plane"), format.width, format.height, format.samples, format.pixelType, verb, take)}
	}
	return s, lim.checkBands(in.name, format.width, format.height, format.samples*format.pixelType.Size())
}

// spec gives every dimension and the pixel layout of the raw planes.
func (s rawSource) spec() pyramid.ImageSpec {
	f := s.format
	return pyramid.ImageSpec{SizeX: f.width, SizeY: f.height, SizeZ: f.z, SizeC: f.channels, SizeT: f.t,
		DimensionOrder: f.order, PixelType: f.pixelType, SamplesPerPixel: f.samples}
}

// planeBytes is the size of one plane.
func (s rawSource) planeBytes() int64 {
	f := s.format
	return mul(int64(f.width), int64(f.height), int64(f.samples), int64(f.pixelType.Size()))
}

// write adds the image to w with spec and writes its planes, and returns
// the spec written.
func (s rawSource) write(w *pyramid.Writer, spec pyramid.ImageSpec, _ alphaPolicy) (pyramid.ImageSpec, error) {
	im, err := w.AddImage(spec)
	if err != nil {
		return spec, err
	}
	return im.Spec(), s.writePlanes(im)
}

// writePlanes reads the planes in order and streams each into its plane
// of the image, so memory stays bounded whatever the size of the input.
func (s rawSource) writePlanes(im *pyramid.Image) error {
	spec := im.Spec()
	buf := make([]byte, 1<<20)
	for p := range spec.Planes() {
		z, c, t := spec.PlaneCoords(p)
		pw, err := im.Plane(z, c, t)
		if err != nil {
			return err
		}
		if err := copyPlane(pw, s.in, s.planeBytes(), buf); err != nil {
			return fmt.Errorf("%s: plane %d (z %d, c %d, t %d): %w", s.in.Name(), p, z, c, t, err)
		}
	}
	// A regular file's size was checked before; a pipe's shows only now.
	// Bytes past the last plane mean the flags do not describe the input
	// (a wrong size or type), so the planes written may be wrong too:
	// refused as a file of that size is, not dropped unseen.
	if s.piped {
		var extra [1]byte
		if n, _ := io.ReadFull(s.in, extra[:]); n > 0 {
			f := s.format
			return cli.UsageError{Err: fmt.Errorf("%s holds more than the %s of %d x %d x %d %v samples (%d bytes) the -raw flags describe",
				s.in.Name(), plural64(int64(spec.Planes()), "plane"), f.width, f.height, f.samples, f.pixelType, mul(int64(spec.Planes()), s.planeBytes()))}
		}
	}
	return nil
}

// copyPlane streams the next plane of r, n bytes, into pw through buf.
func copyPlane(pw io.Writer, r io.Reader, n int64, buf []byte) error {
	copied, err := io.CopyBuffer(pw, io.LimitReader(r, n), buf)
	if err != nil {
		return err
	}
	if copied < n {
		return fmt.Errorf("the input ends after %d of the plane's %d bytes", copied, n)
	}
	return nil
}
