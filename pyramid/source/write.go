package source

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// ErrMismatch reports a destination image whose size, pixel type,
// samples or planes differ from the source image's.
var ErrMismatch = errors.New("source: destination image does not match")

// WritePlanes writes every plane of the image into dst, an image added to
// a pyramid writer with im.Spec (its metadata may differ, not its size,
// pixel type, samples per pixel or planes). Each page is read once,
// through a BandReader with opts, in the order of its first plane, and its
// rows stream into the planes it holds band by band: memory stays at a few
// bands of the page and the writer's bands of each plane open at once
// (one, or one per sample when its samples are channels). Into an image
// added with AddEncodedImage and the levels Encoded returned, the tiles of
// those levels are copied as stored, and the pages are decoded only when
// the writer computes the other levels. It stops at the first error, of
// the source or of the writer, and returns it naming the plane; the planes
// it started and did not complete are then given back (PlaneWriter.Abort),
// as they are when a Progress panics. It writes only the planes not
// complete in dst (Image.PlaneComplete), so after an error WritePlanes
// again resumes where it stopped.
func (im *Image) WritePlanes(ctx context.Context, dst *pyramid.Image, opts Options) error {
	if dst == nil {
		return fmt.Errorf("%w: no destination image (nil)", ErrMismatch)
	}
	got, want := dst.Spec(), im.Spec
	sizes := func(s pyramid.ImageSpec) string {
		return fmt.Sprintf("%d x %d, %d x %v, Z %d x C %d x T %d", s.SizeX, s.SizeY, max(s.SamplesPerPixel, 1), s.PixelType,
			max(s.SizeZ, 1), max(s.SizeC, 1), max(s.SizeT, 1))
	}
	// The planes go to the same Z, C and T: sizes of another shape, even
	// of as many planes, would put some past the destination's.
	if sizes(got) != sizes(want) {
		return fmt.Errorf("%w: %s written into %s", ErrMismatch, sizes(want), sizes(got))
	}
	if len(im.Planes) != want.Planes() {
		return fmt.Errorf("%w: %d planes for a spec of %d", ErrMismatch, len(im.Planes), want.Planes())
	}
	if err := im.checkPlanes(); err != nil {
		return err
	}
	if dst.EncodedLevels() > 0 {
		return im.writeEncoded(ctx, dst, opts)
	}
	for _, r := range im.reads() {
		if err := im.writePage(ctx, dst, r, opts); err != nil {
			return err
		}
	}
	return nil
}

// planeError returns err, met writing the plane named, behind this
// package's prefix (once: an error of this package already has it).
func planeError(plane string, err error) error {
	if msg := err.Error(); strings.HasPrefix(msg, "source: ") {
		return &prefixedError{"source: " + plane + ": " + strings.TrimPrefix(msg, "source: "), err}
	}
	return fmt.Errorf("source: %s: %w", plane, err)
}

// prefixedError is an error with its message rewritten.
type prefixedError struct {
	msg string
	err error
}

func (e *prefixedError) Error() string { return e.msg }
func (e *prefixedError) Unwrap() error { return e.err }

// pageRead is one page to read and the planes it holds: by sample, or
// the whole page (planes[0], when whole).
type pageRead struct {
	page   *tiff.Page
	whole  bool
	planes []int // plane index per sample; -1 for a sample no plane is
}

// checkPlanes refuses planes an Image made by a caller may hold and the
// mapping never makes, before anything is allocated for them: a plane of
// no page, a sample the page does not have, a page that is two whole
// planes or both whole and sampled (one of them would go unwritten), or a
// sample that is two planes.
func (im *Image) checkPlanes() error {
	type use struct {
		whole   bool
		samples map[int]bool
	}
	uses := map[*tiff.Page]*use{}
	for p, pl := range im.Planes {
		if pl.Page == nil || slices.Contains(pl.Levels, nil) {
			return fmt.Errorf("%w: plane %d has no page (nil)", ErrMismatch, p)
		}
		l, err := pl.Page.Layout()
		if err != nil {
			return fmt.Errorf("%w: plane %d: %w", ErrMismatch, p, err)
		}
		if pl.Sample < -1 || pl.Sample >= l.SamplesPerPixel {
			return fmt.Errorf("%w: plane %d is sample %d of the page at %d, which has %d", ErrMismatch, p, pl.Sample, pl.Page.Offset, l.SamplesPerPixel)
		}
		u := uses[pl.Page]
		if u == nil {
			u = &use{samples: map[int]bool{}}
			uses[pl.Page] = u
		}
		if u.whole || pl.Sample < 0 && len(u.samples) > 0 || u.samples[pl.Sample] {
			return fmt.Errorf("%w: plane %d is the page at %d (or its sample %d) again", ErrMismatch, p, pl.Page.Offset, pl.Sample)
		}
		u.whole = pl.Sample < 0
		u.samples[pl.Sample] = true
	}
	return nil
}

// reads lists the pages of the image in the order of their first plane,
// each with its planes.
func (im *Image) reads() []pageRead {
	var out []pageRead
	index := map[*tiff.Page]int{}
	for p, pl := range im.Planes {
		k, ok := index[pl.Page]
		if !ok {
			k = len(out)
			index[pl.Page] = k
			out = append(out, pageRead{page: pl.Page, whole: pl.Sample < 0})
		}
		r := &out[k]
		if pl.Sample < 0 {
			r.planes = []int{p}
			continue
		}
		for len(r.planes) <= pl.Sample {
			r.planes = append(r.planes, -1)
		}
		r.planes[pl.Sample] = p
	}
	return out
}

// writePage streams one page into the planes it holds.
func (im *Image) writePage(ctx context.Context, dst *pyramid.Image, pr pageRead, opts Options) (err error) {
	name := func(p int) string {
		z, c, t := im.Spec.PlaneCoords(p)
		return fmt.Sprintf("plane z=%d c=%d t=%d (the page at %d)", z, c, t, pr.page.Offset)
	}
	writers := make([]*pyramid.PlaneWriter, len(pr.planes))
	defer func() {
		// A panic (of a Progress the caller recovers from) gives the
		// planes back too, so that WritePlanes again writes them anew.
		p := recover()
		if err != nil || p != nil {
			for _, w := range writers {
				if w != nil {
					w.Abort() // an error for a plane complete, which stays
				}
			}
		}
		if p != nil {
			panic(p)
		}
	}()
	first := -1 // the first plane to write, which errors of the page name
	for i, p := range pr.planes {
		if p < 0 {
			continue
		}
		z, c, t := im.Spec.PlaneCoords(p)
		if done, err := dst.PlaneComplete(z, c, t); err != nil || done {
			if err != nil {
				return planeError(name(p), err)
			}
			continue // written before an error, which WritePlanes resumes after
		}
		if writers[i], err = dst.Plane(z, c, t); err != nil {
			return planeError(name(p), err)
		}
		if first < 0 {
			first = p
		}
	}
	if first < 0 {
		return nil // not read again
	}
	r, err := NewBandReader(ctx, pr.page, opts)
	if err != nil {
		return planeError(name(first), err)
	}
	defer func() {
		if cerr := r.Close(); err == nil && cerr != nil {
			err = planeError(name(first), cerr)
		}
	}()
	l := r.Layout()
	samples, size := l.SamplesPerPixel, r.r.sample
	if !pr.whole && samples < len(writers) {
		return fmt.Errorf("%w: %s: the page has %d samples", ErrMismatch, name(first), samples)
	}
	half := l.SampleFormat == tiff.SampleFormatFloat && l.BitsPerSample == 16
	var colours *paletteTable
	if im.palette {
		if colours, err = paletteOf(pr.page, l); err != nil {
			return planeError(name(first), err)
		}
		if want := im.Spec.SamplesPerPixel * im.Spec.PixelType.Size(); !pr.whole || colours.pixelBytes != want {
			return fmt.Errorf("%w: %s: the colours of its palette have %d bytes, the image's pixels %d", ErrMismatch, name(first), colours.pixelBytes, want)
		}
	}
	var split [][]byte
	var wide []byte
	for {
		_, band, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return planeError(name(first), err)
		}
		switch {
		case half:
			wide = widenHalves(wide, band)
			band, size = wide, 4
		case colours != nil:
			wide = colours.apply(wide, band)
			band = wide
		}
		if pr.whole {
			if _, err := writers[0].Write(band); err != nil {
				return planeError(name(first), err)
			}
			continue
		}
		split = deinterleave(split, band, samples, size)
		for i, w := range writers {
			if w == nil {
				continue
			}
			if _, err := w.Write(split[i]); err != nil {
				return planeError(name(pr.planes[i]), err)
			}
		}
	}
	for i, w := range writers {
		if w == nil {
			continue
		}
		if err := w.Close(); err != nil {
			return planeError(name(pr.planes[i]), err)
		}
	}
	return nil
}

// widenHalves returns the little-endian IEEE half floats of band as
// little-endian float32s, exactly (subnormals, infinities and NaNs too),
// in out's buffer when it is large enough.
func widenHalves(out, band []byte) []byte {
	n := len(band) / 2
	if cap(out) < 4*n {
		out = make([]byte, 4*n)
	}
	out = out[:4*n]
	for i := range n {
		h := uint32(binary.LittleEndian.Uint16(band[2*i:]))
		sign, exp, frac := h>>15<<31, h>>10&0x1f, h&0x3ff
		var f uint32
		switch {
		case exp == 0x1f: // infinity or NaN, its payload kept
			f = sign | 0xff<<23 | frac<<13
		case exp != 0: // normal: rebias the exponent (15 to 127)
			f = sign | (exp+112)<<23 | frac<<13
		case frac != 0: // subnormal: normalize it
			e := uint32(113)
			for frac&0x400 == 0 {
				frac <<= 1
				e--
			}
			f = sign | e<<23 | (frac&0x3ff)<<13
		default: // zero, signed
			f = sign
		}
		binary.LittleEndian.PutUint32(out[4*i:], f)
	}
	return out
}

// deinterleave splits a band of pixels of n samples of size bytes into n
// bands of one sample each, reusing out's buffers.
func deinterleave(out [][]byte, band []byte, n, size int) [][]byte {
	each := len(band) / n
	if len(out) != n {
		out = make([][]byte, n)
	}
	for s := range out {
		if cap(out[s]) < each {
			out[s] = make([]byte, each)
		}
		out[s] = out[s][:each]
	}
	pixel := n * size
	switch size {
	case 1:
		for s := range n {
			dst := out[s]
			for i := range dst {
				dst[i] = band[i*pixel+s]
			}
		}
	default:
		for s := range n {
			dst := out[s]
			for i, j := 0, s*size; i < len(dst); i, j = i+size, j+pixel {
				copy(dst[i:i+size], band[j:j+size])
			}
		}
	}
	return out
}
