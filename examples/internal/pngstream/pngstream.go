// Package pngstream reads the rows of a PNG image one at a time, so that an
// image larger than memory can be converted: the standard library's
// image/png decodes the whole image or nothing.
//
// A Decoder holds two scanlines, the zlib decompressor's 32 KiB window and
// a read buffer, whatever the image's height. It reads non-interlaced
// images of every colour type and bit depth of the PNG specification, and
// reports the header of an interlaced one (Adam7 scatters each pass over
// the whole image, so its rows cannot be streamed).
//
// It checks what image/png checks (the signature, every chunk's CRC, the
// chunk order and lengths, the filter types, the zlib checksum, and that
// the image data is neither short nor long), and a little more, as the
// specification asks: an unknown critical chunk, a second PLTE or tRNS
// and IDAT chunks that are not consecutive are errors.
package pngstream

import (
	"bufio"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"image/color"
	"io"
	"math"
)

var (
	// ErrFormat is a malformed PNG stream.
	ErrFormat = errors.New("pngstream: invalid PNG")
	// ErrUnsupported is a valid PNG the decoder cannot stream: an
	// interlaced image, or one with an unknown critical chunk.
	ErrUnsupported = errors.New("pngstream: unsupported PNG")
)

// ColorType is a PNG colour type.
type ColorType uint8

// The colour types of the PNG specification.
const (
	Gray      ColorType = 0
	RGB       ColorType = 2
	Paletted  ColorType = 3
	GrayAlpha ColorType = 4
	RGBA      ColorType = 6
)

// channels is the number of samples of each colour type, 0 for none.
var channels = [7]int{Gray: 1, RGB: 3, Paletted: 1, GrayAlpha: 2, RGBA: 4}

// Header is what a PNG says about its image before the image data.
type Header struct {
	Width, Height int
	BitDepth      int // bits per sample: 1, 2, 4, 8 or 16
	ColorType     ColorType
	Interlaced    bool // Adam7
	// Palette holds the PLTE entries of a paletted image, with the alpha of
	// its tRNS chunk (opaque without one); nil for the other colour types.
	Palette []color.NRGBA
	// Transparent is set when a gray or RGB image has a tRNS chunk: one
	// colour is transparent, Key (its gray level in Key[0], or its red,
	// green and blue), in samples of BitDepth bits.
	Transparent bool
	Key         [3]uint16
	// PixelsPerMetre is the pHYs chunk's pixel density, X then Y, when its
	// unit is the metre; zero without one, or when it gives only the
	// pixels' aspect ratio (unit 0).
	PixelsPerMetre [2]uint32
	// Frames is an animated PNG's (APNG's) number of frames, from its acTL
	// chunk; 0 for a still image. Only the default image (IDAT) is read:
	// the first frame when DefaultIsFrame (an fcTL chunk precedes IDAT),
	// else an image besides the frames.
	Frames         int
	DefaultIsFrame bool
}

// Channels is the number of samples per pixel in a row: 1 for a paletted
// image's index.
func (h Header) Channels() int { return channels[h.ColorType] }

// RowBytes is the length of a row as ReadRow returns it: Width pixels of
// Channels samples of BitDepth bits, big-endian, packed for depths below 8.
func (h Header) RowBytes() int {
	return int((int64(h.Width)*int64(h.Channels()*h.BitDepth) + 7) / 8)
}

// maxInflate is the most bytes deflate can produce from one byte of its
// stream: a match of 258 bytes coded in two bits (one for the length, one
// for the distance) is its best case.
const maxInflate = 1032

// MinSize is the smallest number of bytes a PNG stream of the image can
// have: its zlib stream inflates to Height scanlines of a filter byte and
// RowBytes bytes, and deflate expands at most 1032 times. A file shorter
// than this claims more image than it holds.
func (h Header) MinSize() int64 {
	scanlines := int64(h.Height) * (1 + int64(h.RowBytes()))
	return scanlines / maxInflate
}

// Decoder reads the rows of a non-interlaced PNG, top to bottom.
type Decoder struct {
	r    *bufio.Reader
	crc  hash.Hash32
	h    Header
	seen struct{ plte, trns, phys bool }
	tmp  [13]byte

	// The IDAT stream: what is left of the current chunk, and a buffer of
	// its bytes already checksummed.
	idatLeft uint32
	idatDone bool    // a chunk other than IDAT followed
	next     [8]byte // that chunk's length and type
	buf      []byte
	avail    []byte

	zr        io.ReadCloser
	cur, prev []byte // scanlines with their filter byte; made at the first row
	y         int    // rows read
	err       error  // sticky
}

// NewDecoder reads the PNG signature and the chunks before the image data
// from r, and returns a decoder ready to read rows. It allocates nothing
// that grows with the image: the header can be checked before the first
// ReadRow allocates two rows.
func NewDecoder(r io.Reader) (*Decoder, error) {
	d := &Decoder{r: bufio.NewReaderSize(r, 64<<10), crc: crc32.NewIEEE()}
	if err := d.readHeader(); err != nil {
		return nil, d.fail(err)
	}
	return d, nil
}

// Header returns what the PNG said before its image data.
func (d *Decoder) Header() Header { return d.h }

// formatError is an ErrFormat naming what is wrong.
func formatError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// fail makes err sticky, marked as a format error when the stream ended
// early: the end of a good stream is not an error.
func (d *Decoder) fail(err error) error {
	err = noEOF(err)
	if errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrFormat) {
		err = fmt.Errorf("%w: %w", ErrFormat, err)
	}
	d.err = err
	return err
}

const signature = "\x89PNG\r\n\x1a\n"

// readHeader reads up to the first IDAT chunk's data.
func (d *Decoder) readHeader() error {
	var sig [8]byte
	if _, err := io.ReadFull(d.r, sig[:]); err != nil {
		return err
	}
	if string(sig[:]) != signature {
		return formatError("not a PNG file")
	}
	first := true
	for {
		length, typ, err := d.chunkHeader()
		if err != nil {
			return err
		}
		if first && typ != "IHDR" {
			return formatError("the first chunk is %q, not IHDR", typ)
		}
		if !first && typ == "IHDR" {
			return formatError("a second IHDR chunk")
		}
		first = false
		switch typ {
		case "IHDR":
			err = d.parseIHDR(length)
		case "PLTE":
			err = d.parsePLTE(length)
		case "tRNS":
			err = d.parseTRNS(length)
		case "pHYs":
			err = d.parsePHYs(length)
		case "acTL":
			err = d.parseACTL(length)
		case "fcTL":
			d.h.DefaultIsFrame = true
			err = d.skipChunk(typ, length)
		case "IDAT":
			if d.h.ColorType == Paletted && !d.seen.plte {
				return formatError("a paletted image without a PLTE chunk")
			}
			d.buf = make([]byte, 32<<10)
			return d.startIDAT(length)
		case "IEND":
			return formatError("no image data")
		default:
			err = d.skipChunk(typ, length)
		}
		if err != nil {
			return err
		}
	}
}

// chunkHeader reads a chunk's length and type, and starts its CRC.
func (d *Decoder) chunkHeader() (uint32, string, error) {
	var p [8]byte
	if _, err := io.ReadFull(d.r, p[:]); err != nil {
		return 0, "", err
	}
	return d.startChunk(p[:])
}

// startChunk checks a chunk's length and type, given as read, and starts
// its CRC.
func (d *Decoder) startChunk(p []byte) (uint32, string, error) {
	length, typ := binary.BigEndian.Uint32(p[:4]), p[4:8]
	if length > math.MaxInt32 {
		return 0, "", formatError("chunk length %d", length)
	}
	for _, c := range typ {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return 0, "", formatError("chunk type %q", typ)
		}
	}
	d.crc.Reset()
	d.crc.Write(typ)
	return length, string(typ), nil
}

// checkCRC reads a chunk's CRC and compares it with the bytes read.
func (d *Decoder) checkCRC(typ string) error {
	var p [4]byte
	if _, err := io.ReadFull(d.r, p[:]); err != nil {
		return err
	}
	if binary.BigEndian.Uint32(p[:]) != d.crc.Sum32() {
		return formatError("%s chunk: bad CRC", typ)
	}
	return nil
}

// readChunk reads a short chunk's data, whose length the caller checked,
// and its CRC.
func (d *Decoder) readChunk(typ string, p []byte) error {
	if _, err := io.ReadFull(d.r, p); err != nil {
		return err
	}
	d.crc.Write(p)
	return d.checkCRC(typ)
}

// skipChunk reads past an ancillary chunk, checking its CRC.
func (d *Decoder) skipChunk(typ string, length uint32) error {
	if typ[0]&0x20 == 0 { // an uppercase first letter: critical
		return fmt.Errorf("%w: unknown critical chunk %q", ErrUnsupported, typ)
	}
	if _, err := io.CopyN(d.crc, d.r, int64(length)); err != nil {
		return err
	}
	return d.checkCRC(typ)
}

// depths lists the bit depths each colour type allows.
var depths = map[ColorType][]int{
	Gray: {1, 2, 4, 8, 16}, RGB: {8, 16}, Paletted: {1, 2, 4, 8}, GrayAlpha: {8, 16}, RGBA: {8, 16},
}

func (d *Decoder) parseIHDR(length uint32) error {
	if length != 13 {
		return formatError("IHDR length %d", length)
	}
	p := d.tmp[:13]
	if err := d.readChunk("IHDR", p); err != nil {
		return err
	}
	w, h := binary.BigEndian.Uint32(p[0:4]), binary.BigEndian.Uint32(p[4:8])
	if w == 0 || h == 0 || w > math.MaxInt32 || h > math.MaxInt32 {
		return formatError("size %d x %d", w, h)
	}
	depth, ct := int(p[8]), ColorType(p[9])
	ok := false
	for _, allowed := range depths[ct] {
		ok = ok || depth == allowed
	}
	if !ok {
		return formatError("bit depth %d with colour type %d", depth, ct)
	}
	if p[10] != 0 || p[11] != 0 || p[12] > 1 {
		return formatError("compression %d, filter %d, interlace %d", p[10], p[11], p[12])
	}
	d.h = Header{Width: int(w), Height: int(h), BitDepth: depth, ColorType: ct, Interlaced: p[12] == 1}
	return nil
}

func (d *Decoder) parsePLTE(length uint32) error {
	if d.seen.plte || d.seen.trns {
		return formatError("PLTE chunk out of order")
	}
	d.seen.plte = true
	n := int(length / 3)
	if length%3 != 0 || n == 0 || n > 256 {
		return formatError("PLTE length %d", length)
	}
	var p [768]byte
	if err := d.readChunk("PLTE", p[:length]); err != nil {
		return err
	}
	switch d.h.ColorType {
	case Gray, GrayAlpha:
		return formatError("a PLTE chunk in a gray image")
	case RGB, RGBA:
		return nil // a suggested palette, of no use here
	}
	if n > 1<<d.h.BitDepth {
		return formatError("%d palette entries for bit depth %d", n, d.h.BitDepth)
	}
	d.h.Palette = make([]color.NRGBA, n)
	for i := range d.h.Palette {
		d.h.Palette[i] = color.NRGBA{p[3*i], p[3*i+1], p[3*i+2], 0xff}
	}
	return nil
}

// parseACTL reads an APNG's animation control: its number of frames. A
// chunk of the wrong length is skipped, as an ancillary chunk.
func (d *Decoder) parseACTL(length uint32) error {
	if length != 8 {
		return d.skipChunk("acTL", length)
	}
	p := d.tmp[:8]
	if err := d.readChunk("acTL", p); err != nil {
		return err
	}
	d.h.Frames = int(min(binary.BigEndian.Uint32(p), math.MaxInt32))
	return nil
}

// parsePHYs reads the pixel density. An ancillary chunk of the wrong
// length is skipped, as libpng and image/png pass it by.
func (d *Decoder) parsePHYs(length uint32) error {
	if length != 9 || d.seen.phys {
		return d.skipChunk("pHYs", length)
	}
	d.seen.phys = true
	p := d.tmp[:9]
	if err := d.readChunk("pHYs", p); err != nil {
		return err
	}
	if p[8] == 1 { // the metre
		d.h.PixelsPerMetre = [2]uint32{binary.BigEndian.Uint32(p[0:4]), binary.BigEndian.Uint32(p[4:8])}
	}
	return nil
}

func (d *Decoder) parseTRNS(length uint32) error {
	if d.seen.trns || d.h.ColorType == Paletted && !d.seen.plte {
		return formatError("tRNS chunk out of order")
	}
	d.seen.trns = true
	want := map[ColorType]uint32{Gray: 2, RGB: 6}[d.h.ColorType]
	switch {
	case d.h.ColorType == Paletted && length > 256:
		return formatError("tRNS length %d", length)
	case d.h.ColorType == GrayAlpha || d.h.ColorType == RGBA:
		return formatError("a tRNS chunk in an image with alpha")
	case d.h.ColorType != Paletted && length != want:
		return formatError("tRNS length %d", length)
	}
	var p [256]byte
	if err := d.readChunk("tRNS", p[:length]); err != nil {
		return err
	}
	if d.h.ColorType == Paletted {
		// Alphas past the palette are ignored, as image/png does in effect:
		// their indices have no colour either way.
		for i, a := range p[:min(int(length), len(d.h.Palette))] {
			d.h.Palette[i].A = a
		}
		return nil
	}
	d.h.Transparent = true
	for i := range int(length) / 2 {
		d.h.Key[i] = uint16(p[2*i])<<8 | uint16(p[2*i+1])
	}
	return nil
}

// The IDAT stream, for the zlib reader: io.ByteReader keeps that reader
// from buffering past the end of the zlib stream.

// refill makes the next bytes of the IDAT chunks available, reading past
// chunk boundaries, and returns io.EOF at the first chunk that is not IDAT.
// A chunk's CRC is checked as soon as its last byte is read, before zlib
// sees that byte: a damaged chunk of less than the buffer is then reported
// as such rather than as bad zlib data.
func (d *Decoder) refill() error {
	for d.idatLeft == 0 {
		if d.idatDone {
			return io.EOF
		}
		p := d.next[:]
		if _, err := io.ReadFull(d.r, p); err != nil {
			return noEOF(err)
		}
		length, typ, err := d.startChunk(p)
		if err != nil {
			return err
		}
		if typ != "IDAT" {
			d.idatDone = true
			return io.EOF
		}
		if err := d.startIDAT(length); err != nil {
			return err
		}
	}
	n := min(len(d.buf), int(d.idatLeft))
	if _, err := io.ReadFull(d.r, d.buf[:n]); err != nil {
		return noEOF(err)
	}
	d.crc.Write(d.buf[:n])
	d.idatLeft -= uint32(n)
	if d.idatLeft == 0 {
		if err := d.checkCRC("IDAT"); err != nil {
			return noEOF(err)
		}
	}
	d.avail = d.buf[:n]
	return nil
}

// startIDAT begins an IDAT chunk of length bytes; an empty one is checked
// at once.
func (d *Decoder) startIDAT(length uint32) error {
	d.idatLeft = length
	if length == 0 {
		return noEOF(d.checkCRC("IDAT"))
	}
	return nil
}

// noEOF turns the end of the input inside the image data into
// io.ErrUnexpectedEOF, so that it cannot pass for the end of the chunks.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// idat reads the image data across IDAT chunks.
type idat struct{ d *Decoder }

func (r idat) Read(p []byte) (int, error) {
	if len(r.d.avail) == 0 {
		if err := r.d.refill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.d.avail)
	r.d.avail = r.d.avail[n:]
	return n, nil
}

func (r idat) ReadByte() (byte, error) {
	if len(r.d.avail) == 0 {
		if err := r.d.refill(); err != nil {
			return 0, err
		}
	}
	b := r.d.avail[0]
	r.d.avail = r.d.avail[1:]
	return b, nil
}

// ReadRow returns the next row of the image: RowBytes bytes of samples, as
// the PNG holds them (unfiltered). The row is valid until the next call and
// must not be modified. After the last row, ReadRow reads the rest of the
// file up to IEND, checking it, and returns io.EOF.
func (d *Decoder) ReadRow() ([]byte, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.h.Interlaced {
		return nil, d.fail(fmt.Errorf("%w: the image is interlaced", ErrUnsupported))
	}
	if d.y == d.h.Height {
		if err := d.finish(); err != nil {
			return nil, d.fail(err)
		}
		d.err = io.EOF
		return nil, io.EOF
	}
	if d.zr == nil {
		zr, err := zlib.NewReader(idat{d})
		if err != nil {
			return nil, d.fail(d.zlibError(err))
		}
		d.zr = zr
		n := 1 + d.h.RowBytes()
		d.cur, d.prev = make([]byte, n), make([]byte, n)
	}
	d.cur, d.prev = d.prev, d.cur
	if _, err := io.ReadFull(d.zr, d.cur); err != nil {
		return nil, d.fail(d.zlibError(err))
	}
	if err := d.unfilter(); err != nil {
		return nil, d.fail(err)
	}
	d.y++
	return d.cur[1:], nil
}

// zlibError tells the image data's end or corruption from a read error.
func (d *Decoder) zlibError(err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return formatError("not enough image data: %d of %d rows", d.y, d.h.Height)
	case errors.Is(err, zlib.ErrChecksum), errors.Is(err, zlib.ErrHeader), errors.Is(err, zlib.ErrDictionary):
		return formatError("%v", err)
	}
	var corrupt flate.CorruptInputError
	if errors.As(err, &corrupt) {
		return formatError("%v", err)
	}
	return err
}

// unfilter undoes the filter of the scanline in cur, given the previous
// one in prev (zeros before the first).
func (d *Decoder) unfilter() error {
	cur, prev := d.cur[1:], d.prev[1:]
	if d.y == 0 {
		clear(prev)
	}
	bpp := max(1, d.h.Channels()*d.h.BitDepth/8)
	switch d.cur[0] {
	case 0:
	case 1: // Sub
		for i := bpp; i < len(cur); i++ {
			cur[i] += cur[i-bpp]
		}
	case 2: // Up
		for i := range cur {
			cur[i] += prev[i]
		}
	case 3: // Average
		for i := range bpp {
			cur[i] += prev[i] / 2
		}
		for i := bpp; i < len(cur); i++ {
			cur[i] += uint8((int(cur[i-bpp]) + int(prev[i])) / 2)
		}
	case 4: // Paeth
		for i := range bpp {
			cur[i] += prev[i]
		}
		for i := bpp; i < len(cur); i++ {
			cur[i] += paeth(cur[i-bpp], prev[i], prev[i-bpp])
		}
	default:
		return formatError("row %d: filter type %d", d.y, d.cur[0])
	}
	return nil
}

// paeth predicts a byte from its left (a), upper (b) and upper-left (c)
// neighbours, as the PNG specification defines.
func paeth(a, b, c uint8) uint8 {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// finish checks that the image data ends with the last row, and reads the
// chunks after it up to IEND.
func (d *Decoder) finish() error {
	var p [1]byte
	n, err := d.zr.Read(p[:])
	if n > 0 {
		return formatError("too much image data")
	}
	if !errors.Is(err, io.EOF) {
		return d.zlibError(err)
	}
	if len(d.avail) == 0 {
		err = d.refill()
	} else {
		err = nil // compressed bytes left in the buffer
	}
	if err == nil {
		return formatError("data after the image's zlib stream")
	}
	if err != io.EOF {
		return err
	}
	length, typ, _ := d.startChunk(d.next[:]) // checked by refill
	for {
		switch typ {
		case "IEND":
			if length != 0 {
				return formatError("IEND length %d", length)
			}
			return d.checkCRC(typ)
		case "IHDR", "PLTE", "tRNS", "IDAT":
			return formatError("%s chunk after the image data", typ)
		}
		if err := d.skipChunk(typ, length); err != nil {
			return err
		}
		if length, typ, err = d.chunkHeader(); err != nil {
			return err
		}
	}
}
