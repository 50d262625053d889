package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // register the decoders image.Decode uses
	_ "image/jpeg"
	_ "image/png"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/webp"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/examples/internal/pngstream"
	"github.com/ometiff-go/ometiff/pyramid"
)

// openImage reads the image input's header and checks the size it claims
// against the limits, before anything large is allocated. A non-interlaced
// PNG is streamed; any other image is decoded whole, when that fits
// -max-memory.
func openImage(in *input, lim limits) (imageInput, error) {
	var sig [len(pngSignature)]byte
	if _, err := io.ReadFull(in.header(), sig[:]); err == nil && string(sig[:]) == pngSignature {
		return openPNG(in, lim)
	}
	if animatedWebP(in.header()) {
		return nil, fmt.Errorf("%s: an animated WebP: golang.org/x/image/webp reads still images only", in.name)
	}
	cfg, format, err := image.DecodeConfig(in.header())
	if errors.Is(err, image.ErrFormat) {
		return nil, fmt.Errorf("%s: unknown image format (want PNG, JPEG, GIF, BMP, TIFF or WebP, or -raw flags for raw samples)", in.name)
	}
	if err != nil {
		return nil, in.headerError(err)
	}
	if err := lim.checkPixels(in.name, cfg.Width, cfg.Height); err != nil {
		return nil, err
	}
	// The decoders allocate the whole image before they read its data: a
	// file too short for it is refused first. (From a pipe, whose size is
	// known only once read, -max-memory bounds what is allocated.)
	if need, what := minImageSize(in.header(), format); in.size >= 0 && need > in.size {
		return nil, cli.InputError{Err: fmt.Errorf("%s: a %d-byte file cannot hold this %d x %d %s: %s take at least %d bytes (the file is truncated or forged)",
			in.name, in.size, cfg.Width, cfg.Height, strings.ToUpper(format), what, need)}
	}
	var frame jpegFrame
	if format == "jpeg" {
		frame, _ = readJPEGFrame(in.header()) // without it, the estimate takes the worst case
	}
	if format == "webp" && losslessWebP(in.header()) {
		cfg.ColorModel = color.NRGBAModel // what its image decodes to, whatever DecodeConfig says
	}
	pixels := wholeBytes(format, cfg, frame)
	screen, background := image.Rect(0, 0, cfg.Width, cfg.Height), -1
	if format == "gif" {
		var first image.Rectangle
		var ok bool
		if first, background, ok = gifFirstFrame(in.header()); ok && first != screen {
			pixels += mul(int64(cfg.Width), int64(cfg.Height), 4) // composed on the screen, below
		}
	}
	whole, outPixel := pixels, outputPixelBytes(cfg.ColorModel)
	if format == "jpeg" && in.size > 0 {
		whole += in.size // held whole, to count its scans (decodeWhole)
	}
	if err := checkWhole(in, lim, strings.ToUpper(format), cfg.Width, cfg.Height, whole, outPixel); err != nil {
		return nil, err
	}
	// Before decoding: a pipe's header is read once, and the decoder reads
	// past it.
	left := headerLeftOut(in.header(), format, frame)
	var stream []byte
	if format == "jpeg" {
		// A JPEG is held whole (decodeWhole); from a pipe its size is
		// known only once read, and it may take what -max-memory leaves.
		maxStream := whole + 64<<20
		if in.size < 0 && lim.maxMemory > 0 {
			maxStream = min(maxStream, int64(lim.maxMemory)-whole-lim.bandBytes(cfg.Width, cfg.Height, outPixel))
		}
		if stream, err = readJPEGStream(in, maxStream); err != nil {
			if errors.Is(err, errStreamTooLong) && lim.overBudget(whole+maxStream+1+lim.bandBytes(cfg.Width, cfg.Height, outPixel)) {
				return nil, fmt.Errorf("%s: this %d x %d JPEG is held whole from the pipe and decoded whole, which takes more than -max-memory %v "+
					"(its stream alone is over %v); rewrite it as a non-interlaced PNG, which streams, or raise -max-memory",
					in.name, cfg.Width, cfg.Height, lim.maxMemory, byteSize(max(maxStream, 0)))
			}
			return nil, err
		}
	}
	src, err := decodeWhole(in, stream)
	if err != nil {
		return nil, err
	}
	if b := src.img.Bounds(); format == "gif" && b != screen {
		// The screen, as DecodeConfig, libvips and ometiff info give it,
		// the first image at its place, the rest of the background colour
		// (GIF89a), as libvips shows it; transparent when the image has a
		// transparent colour, or the screen no background.
		// (A transparent rest is refused, or left out, as transparency
		// is: the refusal names its first pixel.)
		canvas := image.NewNRGBA(screen)
		if p, ok := cfg.ColorModel.(color.Palette); ok && background >= 0 && background < len(p) && !hasTransparentColour(src.img) {
			draw.Draw(canvas, screen, image.NewUniform(p[background]), image.Point{}, draw.Src)
			src.notes = append(src.notes, fmt.Sprintf("the GIF's first image covers %d x %d at (%d, %d) of its %d x %d screen; the rest is its background colour (index %d)",
				b.Dx(), b.Dy(), b.Min.X, b.Min.Y, cfg.Width, cfg.Height, background))
		}
		draw.Draw(canvas, b, src.img, b.Min, draw.Src)
		src.img = canvas
	}
	src.left = left
	if frame.orientation > 1 {
		src.notes = append(src.notes, fmt.Sprintf("EXIF Orientation %d is not applied: the pixels are written as stored, as tifffile and Bio-Formats read them", frame.orientation))
	}
	if frame.icc {
		src.notes = append(src.notes, iccNote)
	}
	if frame.comment {
		src.notes = append(src.notes, "its comment (COM) is not kept")
	}
	return src, nil
}

// minImageSize returns the fewest bytes a file of format can hold its
// image in, as its header (r, from its start) gives it, and what takes
// them; 0 when no bound follows from the header cheaply.
//
// A BMP that golang.org/x/image/bmp decodes is uncompressed: its pixel
// data (from the offset its header gives) holds every row, padded to 4
// bytes. A GIF's LZW codes are at least 3 bits each (a minimum code size
// of 2) and stand for at most 4096 pixels (the size of the code table),
// a loose bound but one that refuses a small file claiming a large image.
// A JPEG or WebP has none worth its cost: their entropy coders (Huffman
// codes of one bit, VP8's arithmetic coder, VP8L's single-symbol codes,
// a progressive JPEG's end-of-band runs) take next to nothing for a flat
// image, and a JPEG is read whole before it is decoded, bounded by
// -max-memory.
func minImageSize(r io.Reader, format string) (need int64, what string) {
	switch format {
	case "bmp":
		var h [34]byte // the file header and the info header up to its compression
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return 0, ""
		}
		le := binary.LittleEndian
		offset := int64(le.Uint32(h[10:]))
		width, height := int64(int32(le.Uint32(h[18:]))), int64(int32(le.Uint32(h[22:])))
		bpp := int64(le.Uint16(h[28:]))
		if width < 0 || le.Uint32(h[30:]) != 0 && le.Uint32(h[30:]) != 3 { // not what the decoder reads
			return 0, ""
		}
		height = max(height, -height) // negative: stored top down
		rowBytes := (width*bpp + 31) / 32 * 4
		// Saturating: the offset and the rows of a forged header could
		// pass int64 together, which would read as a small bound.
		return min(offset, math.MaxInt64-mul(rowBytes, height)) + mul(rowBytes, height), fmt.Sprintf("its header and %d rows of %d bytes (%d bits a pixel, padded to 4 bytes)", height, rowBytes, bpp)
	case "gif":
		frame, _, ok := gifFirstFrame(r)
		if !ok {
			return 0, ""
		}
		pixels := mul(int64(frame.Dx()), int64(frame.Dy()))
		return (pixels + 4095) / 4096 * 3 / 8, fmt.Sprintf("the LZW codes of its first image's %d pixels (3 bits or more for at most 4096 pixels each)", pixels)
	}
	return 0, ""
}

// hasTransparentColour reports whether a paletted image's palette has a
// colour that is not opaque (a GIF's transparent colour), used or not.
func hasTransparentColour(img image.Image) bool {
	p, ok := img.(*image.Paletted)
	return ok && slices.ContainsFunc(p.Palette, func(c color.Color) bool { _, _, _, a := c.RGBA(); return a != 0xffff })
}

// headerLeftOut lists what an image file of format holds past the one
// picture written, as its header (r, from its start) tells: an animated
// GIF's other frames, a multi-picture JPEG's other pictures, a CMYK
// JPEG's black.
func headerLeftOut(r io.Reader, format string, frame jpegFrame) []error {
	var left []error
	switch {
	case format == "gif":
		if n, err := gifFrames(r); n > 1 {
			count := fmt.Sprint(n)
			if err != nil { // a pipe's first MiB, or a file cut short
				count = "at least " + count
			}
			left = append(left, fmt.Errorf("an animated GIF of %s frames: only the first is written", count))
		}
	case format == "jpeg" && frame.pictures > 1:
		left = append(left, fmt.Errorf("a multi-picture JPEG (MPO) of %d pictures (or a picture and its HDR gain map): only its first is written", frame.pictures))
	}
	if format == "jpeg" && len(frame.sampling) == 4 {
		left = append(left, errors.New("a CMYK JPEG: its colours are converted to RGB, and its black (K) is not kept"))
	}
	return left
}

// animatedWebP reports whether a WebP file's VP8X header says it is
// animated.
func animatedWebP(r io.Reader) bool {
	var head [21]byte
	_, err := io.ReadFull(r, head[:])
	return err == nil && string(head[:4]) == "RIFF" && string(head[8:16]) == "WEBPVP8X" && head[20]&0x02 != 0
}

// losslessWebP reports whether a WebP's image is lossless (VP8L), which
// golang.org/x/image/webp decodes to NRGBA: for an extended file (VP8X,
// which libvips writes for its metadata) its DecodeConfig says YCbCr
// whatever the image chunk, so the chunks after VP8X are read up to the
// image's. One whose image chunk is not found within r is taken for
// lossless, the larger decoding.
func losslessWebP(r io.Reader) bool {
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil || string(head[:4]) != "RIFF" || string(head[8:]) != "WEBP" {
		return false
	}
	br := bufio.NewReader(r)
	for range 64 { // VP8X, ICCP, ANIM, ALPH, EXIF, XMP: a few chunks before the image
		var chunk [8]byte
		if _, err := io.ReadFull(br, chunk[:]); err != nil {
			return true
		}
		switch string(chunk[:4]) {
		case "VP8L":
			return true
		case "VP8 ":
			return false
		}
		size := int(binary.LittleEndian.Uint32(chunk[4:]))
		if _, err := br.Discard(size + size&1); err != nil {
			return true
		}
	}
	return true
}

// checkWhole refuses an image that must be decoded whole when that, with
// the writer's bands, needs more than -max-memory, and says how to convert
// it instead.
func checkWhole(in *input, lim limits, format string, width, height int, whole int64, outPixel int) error {
	need := whole + lim.bandBytes(width, height, outPixel)
	if !lim.overBudget(need) {
		return nil
	}
	how := "is decoded whole"
	if format == "PNG" {
		how = "is interlaced, so it is decoded whole"
	}
	base := strings.TrimSuffix(filepath.Base(in.name), filepath.Ext(in.name))
	return fmt.Errorf("%s: this %d x %d %s %s, which takes about %v, more than -max-memory %v; "+
		"rewrite it as a non-interlaced PNG, which streams (e.g. vips copy %s %s), or raise -max-memory",
		in.name, width, height, format, how, byteSize(need), lim.maxMemory, shellQuote(in.name), shellQuote(base+"-noninterlaced.png"))
}

// shellQuote quotes a file name for a POSIX shell command line, where it
// holds more than letters, digits and the punctuation of paths.
func shellQuote(s string) string {
	plain := func(r rune) bool {
		return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_./:@%+=,-", r))
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plain(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// imageSource is a decoded image: one plane, converted by the writer.
type imageSource struct {
	img     image.Image
	name    string
	density [2]uint32 // an interlaced PNG's pixels per metre, X and Y
	// annotations are an interlaced PNG's text (readPNGMeta).
	annotations []pyramid.KeyValue
	left        []error  // what the file holds and the conversion leaves out
	notes       []string // what the conversion says
	gray        bool     // gray and alpha decoded as NRGBA: written as gray, its alpha left out
}

func (s imageSource) leftOut() []error { return s.left }
func (s imageSource) said() []string   { return s.notes }

// errStreamTooLong reports a JPEG stream longer than its bound.
var errStreamTooLong = errors.New("the JPEG stream is longer than its pixels and metadata can be")

// readJPEGStream reads the JPEG stream of the input whole, up to
// maxStream bytes, and checks it as package compress's Decoder checks its
// blocks: image/jpeg decodes each scan of a progressive frame over the
// whole frame, with no bound of its own, so a few hundred KB of scans
// would cost minutes.
func readJPEGStream(in *input, maxStream int64) ([]byte, error) {
	r := in.body()
	var data []byte
	var err error
	if in.size >= 0 && in.size <= maxStream {
		data = make([]byte, in.size) // not ReadAll's growth, up to twice that
		_, err = io.ReadFull(r, data)
	} else {
		data, err = io.ReadAll(io.LimitReader(r, max(maxStream, 0)+1))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	if int64(len(data)) > maxStream {
		return nil, fmt.Errorf("%s: %w (%d bytes)", in.name, errStreamTooLong, maxStream)
	}
	if err := compress.CheckJPEG(data); err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	return data, nil
}

// decodeWhole decodes the image in the input, or in stream when it is
// not nil (a JPEG readJPEGStream read).
func decodeWhole(in *input, stream []byte) (imageSource, error) {
	r := in.body()
	if stream != nil {
		r = bytes.NewReader(stream)
	}
	img, format, err := image.Decode(r)
	if err != nil {
		decoder := "image/" + format
		if format == "bmp" || format == "webp" {
			decoder = "golang.org/x/image/" + format
		}
		return imageSource{}, fmt.Errorf("%s: decoding the image with %s: %w", in.name, decoder, err)
	}
	if img.Bounds().Empty() {
		return imageSource{}, fmt.Errorf("%s: the image is empty", in.name)
	}
	return imageSource{img: img, name: in.name}, nil
}

// spec gives the image's size and its one plane; AddImageData takes the
// pixel type and samples from the image.
func (s imageSource) spec() pyramid.ImageSpec {
	b := s.img.Bounds()
	spec := pyramid.ImageSpec{SizeX: b.Dx(), SizeY: b.Dy(), SizeZ: 1, SizeC: 1, SizeT: 1, Annotations: s.annotations}
	setDensity(&spec, s.density)
	return spec
}

// write adds the image to w, with spec's metadata, and returns the spec
// written, with the layout the writer chose.
func (s imageSource) write(w *pyramid.Writer, spec pyramid.ImageSpec, alpha alphaPolicy) (pyramid.ImageSpec, error) {
	if err := alpha.check(s.name, firstTranslucent(s.img)); err != nil {
		return spec, err
	}
	img := s.img
	if s.gray {
		img = grayOf(img)
	}
	im, err := w.AddImageData(spec, img)
	if err != nil {
		return spec, err
	}
	return im.Spec(), nil
}

// firstTranslucent finds the first pixel of a decoded image that is not
// opaque: image/png's, x/image/webp's and image/gif's models with alpha say
// whether any is (Opaque), and only then are the pixels looked at.
func firstTranslucent(img image.Image) translucent {
	if o, ok := img.(interface{ Opaque() bool }); !ok || o.Opaque() {
		return translucent{}
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a != 0xffff {
				return translucent{found: true, x: x - b.Min.X, y: y - b.Min.Y}
			}
		}
	}
	return translucent{}
}

// pngSignature starts every PNG file.
const pngSignature = "\x89PNG\r\n\x1a\n"

// openPNG reads a PNG's header and checks it: the limits, and that the
// file is long enough for the image it claims. A non-interlaced PNG is
// streamed; an interlaced one is decoded whole.
func openPNG(in *input, lim limits) (imageInput, error) {
	d, err := pngstream.NewDecoder(in.header())
	if err != nil {
		return nil, in.headerError(err)
	}
	h := d.Header()
	if err := lim.checkPixels(in.name, h.Width, h.Height); err != nil {
		return nil, err
	}
	if in.size >= 0 && h.MinSize() > in.size {
		return nil, fmt.Errorf("%s: a %d-byte file cannot hold this %d x %d PNG: its image data inflates to %d bytes, "+
			"and deflate expands at most 1032 times (the file is truncated or forged)",
			in.name, in.size, h.Width, h.Height, int64(h.Height)*(1+int64(h.RowBytes())))
	}
	meta := readPNGMeta(in.header())
	pixelType, samples := pngLayout(h)
	outPixel := samples * pixelType.Size()
	if h.Interlaced {
		// image/png holds the image as its colour model and each pass.
		whole := 2 * mul(int64(h.Width), int64(h.Height), int64(pngModelBytes(h)))
		if err := checkWhole(in, lim, "PNG", h.Width, h.Height, whole, outPixel); err != nil {
			return nil, err
		}
		src, err := decodeWhole(in, nil)
		if err != nil {
			return nil, err
		}
		src.density, src.left = h.PixelsPerMetre, pngFrames(h)
		src.annotations, src.notes = meta.text, append(src.notes, meta.notes...)
		src.gray = h.ColorType == pngstream.GrayAlpha
		return src, nil
	}
	if err := lim.checkBands(in.name, h.Width, h.Height, outPixel); err != nil {
		return nil, err
	}
	if d, err = pngstream.NewDecoder(in.body()); err != nil { // from the start again: a pipe's header was peeked
		return nil, in.headerError(err)
	}
	return pngSource{name: in.name, dec: d, rows: min(lim.tileSize(), h.Height), meta: meta}, nil
}
