package compress

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"sync"

	"github.com/ometiff-go/ometiff/tiff"
)

// JPEG blocks (Compression 7, TIFF Technical Note 2) are decoded by the
// standard library's image/jpeg: the page's JPEGTables (SOI, tables, EOI)
// are spliced in front of each block's abbreviated stream (SOI, frame,
// scan, EOI), which image/jpeg then decodes as one interchange stream.
//
// YCbCr blocks are converted to RGB as libjpeg converts them when libtiff,
// libvips or GDAL ask it for RGB: chroma upsampled with libjpeg's "fancy"
// (triangular) filter at 4:2:2, 4:2:0 and 4:4:0 and by repetition
// otherwise, then its fixed-point YCbCr-to-RGB tables, which ignore
// ReferenceBlackWhite. The one difference left is the inverse DCT:
// image/jpeg's differs from libjpeg-turbo's default (the accurate integer
// "islow" one) by rounding, so a sample may differ by a few levels from
// what libvips decodes: package pyramid/source's interop test holds every
// sample within 4 levels of libvips's and their mean difference under 0.1.

// jpegTurboDecode is libjpeg-turbo's decodeJPEG in builds with the
// ometiff_turbo tag and cgo (decode_jpeg_turbo.go); it is nil in others.
// It gives libvips's samples exactly, three to four times as fast.
var jpegTurboDecode func(d *Decoder, out, src []byte) (int, error)

// jpegCodec prepares the JPEG decompressor.
func (d *Decoder) jpegCodec() (func(d *Decoder, out, src []byte) (int, error), error) {
	switch {
	case d.l.sampleBytes != 1:
		return nil, fmt.Errorf("%w: JPEG of %d-bit samples (8-bit only)", ErrCompression, 8*d.l.sampleBytes)
	case d.l.samples != 1 && d.l.samples != 3:
		return nil, fmt.Errorf("%w: JPEG of %d samples per pixel (1 or 3 only)", ErrCompression, d.l.samples)
	case d.f.Photometric == tiff.PhotometricYCbCr && d.l.samples != 3:
		return nil, fmt.Errorf("%w: YCbCr of %d samples", ErrFormat, d.l.samples)
	}
	t := d.f.JPEGTables
	if len(t) == 0 {
		return d.jpegDecode(), nil
	}
	switch {
	case len(t) < 4: // SOI and EOI at least
		return nil, fmt.Errorf("%w: JPEGTables of %d bytes", ErrCorrupt, len(t))
	case t[0] != 0xff || t[1] != 0xd8:
		return nil, fmt.Errorf("%w: JPEGTables do not start with SOI", ErrCorrupt)
	}
	return d.jpegDecode(), nil
}

// jpegDecode returns the JPEG block decoder of this build.
func (d *Decoder) jpegDecode() func(d *Decoder, out, src []byte) (int, error) {
	if jpegTurboDecode != nil {
		return jpegTurboDecode
	}
	return (*Decoder).decodeJPEG
}

// tablesBody returns the JPEGTables without their SOI and EOI markers.
func (d *Decoder) tablesBody() []byte {
	t := d.f.JPEGTables
	if len(t) < 4 {
		return nil
	}
	t = t[2:]
	if n := len(t); n >= 2 && t[n-2] == 0xff && t[n-1] == 0xd9 {
		t = t[:n-2]
	}
	return t
}

// streams pools the buffers that hold a spliced stream.
var streams = sync.Pool{New: func() any { return new([]byte) }}

// decodeJPEG decodes one JPEG block into out: a frame of the block's width
// and at most out's rows, whose bytes it returns.
func (d *Decoder) decodeJPEG(out, src []byte) (int, error) {
	if len(src) < 2 || src[0] != 0xff || src[1] != 0xd8 {
		return 0, fmt.Errorf("%w: JPEG block does not start with SOI", ErrCorrupt)
	}
	buf := streams.Get().(*[]byte)
	defer streams.Put(buf)
	stream := append(append(append((*buf)[:0], 0xff, 0xd8), d.tablesBody()...), src[2:]...)
	*buf = stream
	rows := len(out) / d.rowBytes
	// The frame's shape comes first: image/jpeg allocates what the frame
	// says, so a frame larger than the block, or of more components than
	// the page's samples, is refused before decoding. It is read from the
	// frame header, which image/jpeg decodes first, without DecodeConfig's
	// decoder (a dozen KB of garbage a block).
	width, height, comps, err := frameSize(stream)
	if err != nil {
		return 0, err
	}
	if width != d.f.Width || height > rows {
		return 0, fmt.Errorf("%w: JPEG frame of %d x %d in a block of %d x %d", ErrCorrupt, width, height, d.f.Width, rows)
	}
	if comps != d.l.samples {
		return 0, fmt.Errorf("%w: JPEG of %d components in a block of %d samples per pixel", ErrCorrupt, comps, d.l.samples)
	}
	// The scans are counted in the whole stream that image/jpeg decodes:
	// the JPEGTables may hold scans too, and they come before every block.
	if err := checkScans(stream, width, height); err != nil {
		return 0, err
	}
	m, err := jpeg.Decode(bytes.NewReader(stream))
	if err != nil {
		return 0, jpegError(err)
	}
	n := height * d.rowBytes
	out = out[:n]
	switch m := m.(type) {
	case *image.Gray:
		if d.l.samples == 1 {
			copyRows(out, m.Pix, m.Stride, d.rowBytes)
			return n, nil
		}
	case *image.RGBA: // RGB-coded, said by an Adobe marker
		if d.l.samples == 3 {
			for y := range height {
				row, px := out[y*d.rowBytes:][:d.rowBytes], m.Pix[y*m.Stride:]
				for x := 0; x < d.f.Width; x++ {
					copy(row[3*x:3*x+3], px[4*x:4*x+3])
				}
			}
			return n, nil
		}
	case *image.YCbCr:
		if d.l.samples == 3 {
			toRGB(out, m, d.f.Photometric != tiff.PhotometricRGB)
			return n, nil
		}
	default:
		return 0, fmt.Errorf("%w: JPEG decodes to %T", ErrCompression, m)
	}
	return 0, fmt.Errorf("%w: JPEG of %T in a block of %d samples per pixel", ErrCorrupt, m, d.l.samples)
}

// plausibleJPEG refuses a JPEG block whose frame is not of the block's
// width and of rows (or, for a last strip, up to Height) rows, from its
// frame header, in the block or, if none is there, after the JPEGTables.
func (d *Decoder) plausibleJPEG(src []byte, rows int) error {
	if len(src) < 2 || src[0] != 0xff || src[1] != 0xd8 {
		return fmt.Errorf("%w: JPEG block does not start with SOI", ErrCorrupt)
	}
	width, height, _, err := frameSize(src)
	if err != nil {
		width, height, _, err = frameSize(append(append([]byte{0xff, 0xd8}, d.tablesBody()...), src[2:]...))
	}
	if err != nil {
		return err
	}
	if width != d.f.Width || height < rows || height > d.f.Height {
		return fmt.Errorf("%w: JPEG frame of %d x %d in a block of %d x %d", ErrCorrupt, width, height, d.f.Width, rows)
	}
	return nil
}

// frameSize returns the width, height and component count in the first
// frame header (SOF) of a JPEG stream, which starts with SOI, walking its
// segments as image/jpeg does up to it.
func frameSize(stream []byte) (width, height, comps int, err error) {
	p := stream[2:]
	for {
		if len(p) < 2 {
			return 0, 0, 0, fmt.Errorf("%w: JPEG: no frame header", ErrCorrupt)
		}
		if p[0] != 0xff {
			return 0, 0, 0, fmt.Errorf("%w: JPEG: 0x%02x where a marker was expected", ErrCorrupt, p[0])
		}
		m := p[1]
		switch {
		case m == 0xff: // a fill byte before the marker
			p = p[1:]
			continue
		case m == 0x01 || m >= 0xd0 && m <= 0xd7: // TEM and RSTn stand alone
			p = p[2:]
			continue
		case m == 0xd8 || m == 0xd9 || m == 0xda:
			return 0, 0, 0, fmt.Errorf("%w: JPEG: marker 0x%02x before the frame header", ErrCorrupt, m)
		}
		if len(p) < 4 {
			return 0, 0, 0, fmt.Errorf("%w: JPEG: segment 0x%02x cut short", ErrCorrupt, m)
		}
		n := int(p[2])<<8 | int(p[3])
		if n < 2 || len(p) < 2+n {
			return 0, 0, 0, fmt.Errorf("%w: JPEG: segment 0x%02x of %d bytes", ErrCorrupt, m, n)
		}
		if m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc { // SOFn
			if n < 8 {
				return 0, 0, 0, fmt.Errorf("%w: JPEG: frame header of %d bytes", ErrCorrupt, n)
			}
			return int(p[7])<<8 | int(p[8]), int(p[5])<<8 | int(p[6]), int(p[9]), nil
		}
		p = p[2+n:]
	}
}

// maxJPEGScans bounds the scans of a JPEG block, in both builds (the
// libjpeg-turbo one checks its own bound, otMaxScans, as djpeg's -maxscans
// does): each scan of a progressive frame is a pass over the whole frame,
// and a few KB of hostile stream can hold thousands of scans, each decoded
// in full by image/jpeg, which has no bound of its own. Encoders write
// about ten.
const maxJPEGScans = 500

// maxJPEGScanPixels bounds a frame's scans times its pixels in image/jpeg,
// which decodes each scan of a progressive frame over the whole frame: 500
// scans of a 8000 x 8000 frame would cost minutes. A large frame may have
// 2^32 / its pixels scans, but never fewer than minJPEGScans, and never
// more than maxJPEGScans.
const maxJPEGScanPixels = 1 << 32

// minJPEGScans is the scans any frame may have, however large: more than
// encoders write (libjpeg's progressive script for color is 10 scans).
const minJPEGScans = 32

// scanLimit returns the scans a frame of width x height may have.
func scanLimit(width, height int) int {
	px := max(int64(width)*int64(height), 1)
	return int(min(max(maxJPEGScanPixels/px, minJPEGScans), maxJPEGScans))
}

// scanCount returns the scans (SOS segments) of a JPEG stream, counting no
// further than one past limit. It steps over each segment by its length
// and over entropy-coded data byte by byte, where 0xff is followed by a
// stuffed 0x00 or a restart marker, so that only real markers count.
func scanCount(s []byte, limit int) int {
	n := 0
	for n <= limit {
		i := bytes.IndexByte(s, 0xff)
		if i < 0 || i+1 >= len(s) {
			break
		}
		m := s[i+1]
		switch {
		case m == 0xff: // a fill byte: the next one may start the marker
			s = s[i+1:]
			continue
		case m == 0x00, m == 0x01, m >= 0xd0 && m <= 0xd9: // stuffing, TEM, RSTn, SOI, EOI stand alone
			s = s[i+2:]
			continue
		}
		if i+4 > len(s) {
			break
		}
		if m == 0xda {
			n++
		}
		s = s[min(i+2+(int(s[i+2])<<8|int(s[i+3])), len(s)):]
	}
	return n
}

// CheckJPEG reports whether a whole JPEG stream (not a TIFF tile's
// abbreviated one) is within the bounds the Decoder keeps, without
// decoding it: it starts with SOI, its frame header is read, and it has at
// most 500 scans, fewer for a large frame (2^32 over its pixels, but at
// least 32). image/jpeg has no bound of its own and decodes every scan of
// a progressive frame in full, so a caller that decodes a stream with it,
// outside a Decoder (an image a slide's metadata holds, a JPEG file),
// checks first: a few KB of hostile stream would otherwise cost minutes.
func CheckJPEG(stream []byte) error {
	if len(stream) < 2 || stream[0] != 0xff || stream[1] != 0xd8 {
		return fmt.Errorf("%w: JPEG stream does not start with SOI", ErrCorrupt)
	}
	width, height, _, err := frameSize(stream)
	if err != nil {
		return err
	}
	return checkScans(stream, width, height)
}

// checkScans refuses a stream of a width x height frame of more scans than
// scanLimit allows.
func checkScans(stream []byte, width, height int) error {
	if limit := scanLimit(width, height); scanCount(stream, limit) > limit {
		return fmt.Errorf("%w: JPEG: more than %d scans of a %d x %d frame", ErrCompression, limit, width, height)
	}
	return nil
}

// jpegError classifies an error of image/jpeg.
func jpegError(err error) error {
	var unsupported jpeg.UnsupportedError
	if errors.As(err, &unsupported) {
		return fmt.Errorf("%w: JPEG: %w", ErrCompression, err)
	}
	return fmt.Errorf("%w: JPEG: %w", ErrCorrupt, err)
}

// copyRows copies rows of n bytes from src, stride bytes apart, to out.
func copyRows(out, src []byte, stride, n int) {
	for y := 0; y*n < len(out); y++ {
		copy(out[y*n:(y+1)*n], src[y*stride:])
	}
}

// libjpeg's YCbCr-to-RGB tables (jdcolor.c): 16-bit fixed point, rounded
// as libjpeg rounds.
var yccTables = func() (t struct{ crR, cbB, crG, cbG [256]int32 }) {
	fix := func(x float64) int32 { return int32(x*(1<<16) + 0.5) }
	for i := range 256 {
		x := int32(i - 128)
		t.crR[i] = (fix(1.40200)*x + 1<<15) >> 16
		t.cbB[i] = (fix(1.77200)*x + 1<<15) >> 16
		t.crG[i] = -fix(0.71414) * x
		t.cbG[i] = -fix(0.34414)*x + 1<<15
	}
	return t
}()

func clamp8(v int32) byte {
	return byte(min(max(v, 0), 255))
}

// rangeLimit clamps a converted sample to 0..255, indexed by the sample
// modulo 1024 (libjpeg's range_limit): samples from -512 to 511 map to
// themselves clamped. YCbCr converts to -227..481.
var rangeLimit = func() (t [1024]byte) {
	for i := range t {
		v := i
		if i >= 512 {
			v = i - 1024
		}
		t[i] = byte(min(max(v, 0), 255))
	}
	return t
}()

// toRGB writes the pixels of m as interleaved RGB into out, its chroma
// upsampled as libjpeg does; convert false takes the components as R, G
// and B (an RGB-coded stream without an Adobe marker).
func toRGB(out []byte, m *image.YCbCr, convert bool) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	hs, vs := subsampling(m.SubsampleRatio)
	if convert && hs == 2 && vs == 2 && (w+1)/2 > 2 {
		toRGB420(out, m, w, h)
		return
	}
	toRGBRows(out, m, convert, w, h, hs, vs)
}

// toRGBRows is toRGB for any subsampling, row by row: the chroma rows are
// upsampled (upsampleRow), then converted.
func toRGBRows(out []byte, m *image.YCbCr, convert bool, w, h, hs, vs int) {
	cb := make([]byte, w+4) // one upsampled chroma row each
	cr := make([]byte, w+4)
	t := &yccTables
	for y := range h {
		upsampleRow(cb, m.Cb, m.CStride, w, h, hs, vs, y)
		upsampleRow(cr, m.Cr, m.CStride, w, h, hs, vs, y)
		luma := m.Y[y*m.YStride:][:w]
		row := out[3*w*y:][:3*w]
		// Slices of the luma's length, and a pixel at a time: the
		// compiler checks the bounds once a pixel, not at every sample.
		cbs, crs := cb[:len(luma)], cr[:len(luma)]
		if !convert {
			for x, l := range luma {
				px := row[3*x : 3*x+3 : 3*x+3]
				px[0], px[1], px[2] = l, cbs[x], crs[x]
			}
			continue
		}
		for x, l := range luma {
			px := row[3*x : 3*x+3 : 3*x+3]
			yy, b, r := int32(l), cbs[x], crs[x]
			px[0] = clamp8(yy + t.crR[r])
			px[1] = clamp8(yy + (t.cbG[b]+t.crG[r])>>16)
			px[2] = clamp8(yy + t.cbB[b])
		}
	}
}

// toRGB420 is toRGB for the most common JPEG tiles, YCbCr 4:2:0 with
// chroma planes more than 2 samples wide: the same bytes, with libjpeg's
// h2v2 fancy upsampling (upsampleRow) and its colour conversion fused in
// one pass over each row, two pixels per chroma sample, the clamping by
// table.
func toRGB420(out []byte, m *image.YCbCr, w, h int) {
	cw, ch := (w+1)/2, (h+1)/2
	// Per chroma column, 3 x the nearer row + the farther, Cb and Cr
	// interleaved, with the edge columns repeated on both sides.
	sums := make([]int32, 2*(cw+2))
	for y := range h {
		iy, farY := y/2, y/2-1
		if y%2 == 1 {
			farY = iy + 1
		}
		farY = min(max(farY, 0), ch-1)
		nearCb, farCb := m.Cb[iy*m.CStride:][:cw], m.Cb[farY*m.CStride:][:cw]
		nearCr, farCr := m.Cr[iy*m.CStride:][:cw], m.Cr[farY*m.CStride:][:cw]
		s := sums[2 : 2+2*cw]
		for x := range cw {
			s[2*x] = 3*int32(nearCb[x]) + int32(farCb[x])
			s[2*x+1] = 3*int32(nearCr[x]) + int32(farCr[x])
		}
		sums[0], sums[1] = sums[2], sums[3]
		sums[2*cw+2], sums[2*cw+3] = sums[2*cw], sums[2*cw+1]
		convert420(out[3*w*y:][:3*w], m.Y[y*m.YStride:][:w], sums)
	}
}

// convert420 converts one row of luma with its chroma column sums (Cb and
// Cr interleaved, an edge column repeated on each side) to RGB, two pixels
// per chroma column: 3/4 of the column's sum and 1/4 of its neighbour's,
// toward each pixel, as libjpeg's h2v2 fancy upsampling rounds them.
func convert420(row, luma []byte, sums []int32) {
	t := &yccTables
	put := func(p []byte, l byte, cb, cr int32) {
		yy := int32(l)
		p = p[:3]
		p[0] = rangeLimit[(yy+t.crR[uint8(cr)])&1023]
		p[1] = rangeLimit[(yy+(t.cbG[uint8(cb)]+t.crG[uint8(cr)])>>16)&1023]
		p[2] = rangeLimit[(yy+t.cbB[uint8(cb)])&1023]
	}
	// sums holds the previous column, this one and the next; the slices
	// shrink as the pairs go, so that the loop needs no bounds checks.
	for len(luma) >= 2 && len(row) >= 6 && len(sums) >= 6 {
		cb, cr := 3*sums[2], 3*sums[3]
		put(row, luma[0], (cb+sums[0]+8)>>4, (cr+sums[1]+8)>>4)
		put(row[3:], luma[1], (cb+sums[4]+7)>>4, (cr+sums[5]+7)>>4)
		luma, row, sums = luma[2:], row[6:], sums[2:]
	}
	if len(luma) == 1 {
		put(row, luma[0], (3*sums[2]+sums[0]+8)>>4, (3*sums[3]+sums[1]+8)>>4)
	}
}

// subsampling returns the horizontal and vertical chroma subsampling of a
// ratio.
func subsampling(r image.YCbCrSubsampleRatio) (h, v int) {
	switch r {
	case image.YCbCrSubsampleRatio422:
		return 2, 1
	case image.YCbCrSubsampleRatio420:
		return 2, 2
	case image.YCbCrSubsampleRatio440:
		return 1, 2
	case image.YCbCrSubsampleRatio411:
		return 4, 1
	case image.YCbCrSubsampleRatio410:
		return 4, 2
	}
	return 1, 1
}

// upsampleRow writes row y of a chroma plane (of a w x h image subsampled
// hs x vs, rows stride bytes apart) upsampled to full width into dst, as
// libjpeg-turbo's jdsample.c does by default: the triangular ("fancy")
// filter for 2x1 and 2x2 (on planes more than 2 samples wide) and for 1x2
// (3/4 of the nearer chroma sample and 1/4 of the farther one, in each
// direction, with libjpeg's rounding), repetition otherwise. Beyond the
// plane's edges the edge samples repeat.
func upsampleRow(dst, plane []byte, stride, w, h, hs, vs, y int) {
	cw, ch := (w+hs-1)/hs, (h+vs-1)/vs
	iy := y / vs
	near := plane[iy*stride:][:cw]
	switch {
	case hs == 2 && vs == 1 && cw > 2:
		h2v1Fancy(dst, near)
		return
	case vs != 2 || hs > 2 || hs == 2 && cw <= 2:
		if hs == 1 {
			copy(dst, near)
			return
		}
		for x := range w {
			dst[x] = near[x/hs]
		}
		return
	}
	// Vertically, 3/4 of the nearer row and 1/4 of the one beyond it.
	farY := iy - 1
	if y%2 == 1 {
		farY = iy + 1
	}
	far := plane[min(max(farY, 0), ch-1)*stride:][:cw]
	if hs == 1 { // h1v2_fancy_upsample
		bias := int32(1)
		if y%2 == 1 {
			bias = 2
		}
		for x := range cw {
			dst[x] = byte((3*int32(near[x]) + int32(far[x]) + bias) >> 2)
		}
		return
	}
	// h2v2_fancy_upsample: column sums, then 3/4 and 1/4 across.
	sum := func(x int) int32 { return 3*int32(near[x]) + int32(far[x]) }
	o := dst[:2*cw]
	this, next := sum(0), sum(1)
	o[0], o[1] = byte((this*4+8)>>4), byte((this*3+next+7)>>4)
	last := this
	this = next
	for x := 1; x < cw-1; x++ {
		next = sum(x + 1)
		o[2*x], o[2*x+1] = byte((this*3+last+8)>>4), byte((this*3+next+7)>>4)
		last, this = this, next
	}
	o[2*cw-2], o[2*cw-1] = byte((this*3+last+8)>>4), byte((this*4+7)>>4)
}

// h2v1Fancy is libjpeg's h2v1_fancy_upsample of one row of cw > 2 samples
// into 2 x cw.
func h2v1Fancy(dst, in []byte) {
	cw := len(in)
	o := dst[:2*cw]
	o[0], o[1] = in[0], byte((3*int32(in[0])+int32(in[1])+2)>>2)
	for x := 1; x < cw-1; x++ {
		v := 3 * int32(in[x])
		o[2*x], o[2*x+1] = byte((v+int32(in[x-1])+1)>>2), byte((v+int32(in[x+1])+2)>>2)
	}
	o[2*cw-2], o[2*cw-1] = byte((3*int32(in[cw-1])+int32(in[cw-2])+1)>>2), in[cw-1]
}
