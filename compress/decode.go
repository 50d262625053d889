package compress

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/ometiff-go/ometiff/tiff"
)

// Errors of the decoders.
var (
	// ErrCompression reports a TIFF compression this package does not
	// encode or decode (old-style JPEG, JPEG 2000, ...), or a variant of
	// one it decodes that it does not (12-bit or CMYK JPEG).
	ErrCompression = errors.New("compress: unsupported compression")
	// ErrCorrupt reports a block that does not decode: a stream the codec
	// rejects, or one that decodes to more or fewer bytes than the block
	// holds.
	ErrCorrupt = errors.New("compress: corrupt block")
)

// BlockFormat describes how the blocks (tiles or strips) of one image are
// stored: the TIFF fields a decoder needs, as plain values. The zero value
// describes uncompressed blocks of 0 x 0 pixels; Width and Height must be
// set.
type BlockFormat struct {
	// Compression is the TIFF Compression (tiff.Compression*); 0 means
	// none.
	Compression uint16
	// Predictor is the TIFF Predictor: 0 or tiff.PredictorNone,
	// tiff.PredictorHorizontal, or tiff.PredictorFloatingPoint. It is
	// ignored without compression and with PackBits and JPEG, as libtiff
	// ignores it there.
	Predictor uint16
	// Format is the layout of a block's samples in the file. For planar
	// configuration 2 (separate) a block holds one sample of each pixel,
	// so SamplesPerPixel is 1.
	Format Format
	// Width and Height are the pixels of a full block: the tile size, or
	// the image width and RowsPerStrip (at most the image height) of a
	// strip.
	Width, Height int
	// Photometric is the TIFF PhotometricInterpretation. It matters to
	// JPEG: tiff.PhotometricYCbCr blocks are converted to RGB, and
	// tiff.PhotometricRGB blocks are RGB-coded (their components are taken
	// as they are, whatever the stream's markers say). Uncompressed or
	// losslessly compressed YCbCr (whose chroma is subsampled in a packed
	// layout) is not decoded.
	Photometric uint16
	// JPEGTables is the JPEGTables field of a JPEG image: the tables its
	// blocks' abbreviated streams leave out, as SOI, tables, EOI. nil when
	// every block carries its own tables.
	JPEGTables []byte
}

// Decoder decodes the blocks of one image: it decompresses a block, undoes
// the predictor, converts JPEG's YCbCr to RGB, and puts samples in
// little-endian order. Its output is a block's pixels, rows of Width
// pixels of SamplesPerPixel interleaved samples; every block is checked to
// decode to exactly its size (but for the padding DecodeRows names), and
// nothing larger is ever allocated, nor a block for a stream too short to
// fill it.
//
// JPEG is decoded by the standard library's image/jpeg, with libjpeg's
// chroma upsampling and colour conversion; in programs built with the
// ometiff_turbo tag (as for [JPEG]), by libjpeg-turbo, three to four times as
// fast and to the samples libtiff and libvips give, with at most 500 scans
// a block.
//
// A Decoder is safe for concurrent use. Its Decode has the shape of an
// Encoder's Encode (append to dst, return the extended slice), so that an
// adapter can run it in a Pipeline.
type Decoder struct {
	f        BlockFormat
	l        layout
	rowBytes int
	packed   int // bytes of a stored row of 1-, 2- or 4-bit samples; 0 for whole bytes
	codec    func(d *Decoder, out, src []byte) (int, error)

	zstdOnce sync.Once
	zstd     *zstd.Decoder
	zstdErr  error
	inflate  sync.Pool // of *inflater
	// libjpeg decompressors, in builds with the ometiff_turbo tag
	jpegStates sync.Pool
}

// NewDecoder returns a decoder for blocks stored as f describes. An
// unsupported compression or predictor gives ErrCompression or
// ErrPredictor, an invalid sample layout or block size ErrFormat.
func NewDecoder(f BlockFormat) (*Decoder, error) {
	d := &Decoder{f: f}
	format := f.Format
	if packedBits(format.BitsPerSample) {
		if err := checkBilevel(f); err != nil {
			return nil, err
		}
		format.BitsPerSample = 8
	}
	var err error
	if d.l, err = format.layout(); err != nil {
		return nil, err
	}
	if f.Width <= 0 || f.Height <= 0 {
		return nil, fmt.Errorf("%w: blocks of %d x %d pixels", ErrFormat, f.Width, f.Height)
	}
	if packedBits(f.Format.BitsPerSample) {
		d.packed = (f.Width*f.Format.BitsPerSample + 7) / 8
	}
	if f.Width > math.MaxInt/d.l.pixelBytes() || f.Height > math.MaxInt/(f.Width*d.l.pixelBytes()) {
		return nil, fmt.Errorf("%w: blocks of %d x %d pixels of %d bytes are too large", ErrFormat, f.Width, f.Height, d.l.pixelBytes())
	}
	d.rowBytes = f.Width * d.l.pixelBytes()
	if err := d.checkPredictor(); err != nil {
		return nil, err
	}
	if d.codec, err = d.codecFor(); err != nil {
		return nil, err
	}
	return d, nil
}

// Format returns the format the decoder was made for.
func (d *Decoder) Format() BlockFormat { return d.f }

// BlockBytes returns the size of a decoded block of the given rows.
func (d *Decoder) BlockBytes(rows int) int { return rows * d.rowBytes }

// Decode appends the decoded full block src (Height rows) to dst and
// returns the extended slice.
func (d *Decoder) Decode(dst, src []byte) ([]byte, error) {
	return d.DecodeRows(dst, src, d.f.Height)
}

// DecodeRows appends the decoded block src of the given rows to dst and
// returns the extended slice: the last strip of an image holds fewer rows
// than the others (tiles always hold Height rows). A stream that decodes
// to more or fewer bytes than the rows hold is ErrCorrupt, and so is any
// stream its codec rejects, but for a last strip stored with more rows,
// up to Height (as some writers pad it, to whole JPEG MCUs or to the
// strip's height), whose first rows are taken, and uncompressed bytes
// past the block, which are left, as libtiff reads both. A stream
// too short to decode to the rows by its codec's largest expansion (or a
// JPEG stream whose frame is not the block's) is refused before the block
// is allocated.
func (d *Decoder) DecodeRows(dst, src []byte, rows int) ([]byte, error) {
	if rows <= 0 || rows > d.f.Height {
		return dst, fmt.Errorf("%w: %d rows in a block of %d", ErrFormat, rows, d.f.Height)
	}
	rowBytes := d.rowBytes
	if d.packed > 0 {
		rowBytes = d.packed
	}
	if err := d.plausible(src, rows, rowBytes); err != nil {
		return dst, err
	}
	start, n := len(dst), rows*d.rowBytes
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	if d.packed > 0 {
		return d.decodeBilevel(dst, src, rows)
	}
	if err := d.decodeStream(out, src, rows, d.rowBytes); err != nil {
		return dst[:start], err
	}
	d.unpredict(out)
	return dst, nil
}

// Largest expansions of the lossless codecs, in bytes decoded per byte
// stored: PackBits repeats a byte at most 128 times for 2 bytes; Deflate's
// longest match, 258 bytes, costs at least 2 bits; an LZW code, of 9 bits
// or more, stands for at most 4094 bytes; a Zstd RLE block of 4 bytes for
// 128 KiB.
const (
	packBitsExpansion = 64
	deflateExpansion  = 1032
	lzwExpansion      = 3640
	zstdExpansion     = 32768
)

// plausible refuses a stream that cannot decode to rows rows of rowBytes
// stored bytes each, before a block of that size is allocated.
func (d *Decoder) plausible(src []byte, rows, rowBytes int) error {
	n := rows * rowBytes
	switch d.f.Compression {
	case 0, tiff.CompressionNone:
		if len(src) < n {
			return fmt.Errorf("%w: %d bytes stored for %d", ErrCorrupt, len(src), n)
		}
	case tiff.CompressionJPEG:
		return d.plausibleJPEG(src, rows)
	}
	if most := d.most(src); most >= 0 && n > most {
		return fmt.Errorf("%w: a stream of %d bytes cannot decode to %d", ErrCorrupt, len(src), n)
	}
	return nil
}

// most returns the most bytes src can decode to by its lossless codec's
// largest expansion, or -1 for a codec without one.
func (d *Decoder) most(src []byte) int {
	var ratio int
	switch d.f.Compression {
	case tiff.CompressionPackBits:
		ratio = packBitsExpansion
	case tiff.CompressionDeflate, tiff.CompressionDeflateOld:
		ratio = deflateExpansion
	case tiff.CompressionLZW:
		ratio = lzwExpansion
	case tiff.CompressionZstd:
		ratio = zstdExpansion
	default:
		return -1
	}
	// A few bytes of headers (zlib's 6, a Zstd frame's up to 18) and a
	// last partial code beyond the expansion.
	return (len(src) + 32) * ratio
}

// decodeStream decodes src into out, rows rows of rowBytes stored bytes.
// A last strip (rows below Height) that decodes to more rows, up to
// Height, is taken, its first rows kept, as libtiff and libvips read it
// (writers pad it to whole JPEG MCUs or to the strip's full height).
func (d *Decoder) decodeStream(out, src []byte, rows, rowBytes int) error {
	n, err := d.codec(d, out, src)
	if err == nil && n != len(out) {
		return fmt.Errorf("%w: %s stream decodes to %d bytes of %d", ErrCorrupt, d.codecName(), n, len(out))
	}
	if err == nil || rows >= d.f.Height {
		return err
	}
	size := d.f.Height * rowBytes
	if most := d.most(src); most >= 0 {
		size = min(size, most)
	}
	full := make([]byte, size)
	if n, ferr := d.codec(d, full, src); ferr != nil || n < len(out) {
		return err
	}
	copy(out, full)
	return nil
}

// codecName names the block's compression in errors.
func (d *Decoder) codecName() string {
	if name, ok := tiff.ValueName(tiff.TagCompression, uint64(d.f.Compression)); ok && d.f.Compression != tiff.CompressionNone {
		return name
	}
	return "uncompressed"
}

// packedBits reports whether samples of the size are packed in bytes:
// 1, 2 or 4 bits.
func packedBits(bits int) bool { return bits == 1 || bits == 2 || bits == 4 }

// checkBilevel checks the format of 1-, 2- or 4-bit samples, which are
// decoded one sample a pixel, uncompressed or losslessly compressed,
// without a predictor (libtiff refuses horizontal differencing of samples
// below a byte).
func checkBilevel(f BlockFormat) error {
	bits := f.Format.BitsPerSample
	switch {
	case f.Format.SamplesPerPixel > 1:
		return fmt.Errorf("%w: %d-bit samples, %d a pixel (one is decoded)", ErrFormat, bits, f.Format.SamplesPerPixel)
	case f.Format.Float:
		return fmt.Errorf("%w: %d-bit floating point", ErrFormat, bits)
	case f.Compression == tiff.CompressionJPEG:
		return fmt.Errorf("%w: JPEG of %d-bit samples", ErrCompression, bits)
	case f.Predictor > tiff.PredictorNone && f.Compression != 0 && f.Compression != tiff.CompressionNone && f.Compression != tiff.CompressionPackBits:
		return fmt.Errorf("%w: predictor %d on %d-bit samples", ErrPredictor, f.Predictor, bits)
	}
	return nil
}

// decodeBilevel decodes a block of 1-, 2- or 4-bit samples, rows of
// samples packed most significant first, each row starting a byte, into
// one byte a sample: its value as stored (0 or 1 for 1 bit, as tifffile
// reads them: bool), whatever the photometric interpretation.
func (d *Decoder) decodeBilevel(dst, src []byte, rows int) ([]byte, error) {
	start := len(dst) - rows*d.rowBytes
	out := dst[start:]
	packed := make([]byte, rows*d.packed)
	if err := d.decodeStream(packed, src, rows, d.packed); err != nil {
		return dst[:start], err
	}
	n := uint(d.f.Format.BitsPerSample)
	mask := byte(1)<<n - 1
	for y := range rows {
		row, bits := out[y*d.rowBytes:][:d.rowBytes], packed[y*d.packed:][:d.packed]
		for x := range row {
			at := uint(x) * n
			row[x] = bits[at>>3] >> (8 - n - at&7) & mask
		}
	}
	return dst, nil
}

// codecFor picks the decompressor of the compression.
func (d *Decoder) codecFor() (func(d *Decoder, out, src []byte) (int, error), error) {
	c := d.f.Compression
	if c != tiff.CompressionJPEG && d.f.Photometric == tiff.PhotometricYCbCr {
		return nil, fmt.Errorf("%w: YCbCr stored with compression %d (only JPEG's YCbCr is decoded)", ErrCompression, c)
	}
	switch c {
	case 0, tiff.CompressionNone:
		return decodeNone, nil
	case tiff.CompressionLZW:
		return decodeLZW, nil
	case tiff.CompressionDeflate, tiff.CompressionDeflateOld:
		return (*Decoder).decodeDeflate, nil
	case tiff.CompressionZstd:
		return (*Decoder).decodeZstd, nil
	case tiff.CompressionPackBits:
		return decodePackBits, nil
	case tiff.CompressionJPEG:
		return d.jpegCodec()
	}
	name, ok := tiff.ValueName(tiff.TagCompression, uint64(c))
	if !ok {
		name = "unknown"
	}
	return nil, fmt.Errorf("%w: compression %d (%s)", ErrCompression, c, name)
}

// decodeNone takes the stored bytes as they are.
func decodeNone(_ *Decoder, out, src []byte) (int, error) {
	// Bytes past the block (a writer padding to an even length) are
	// left, as libtiff leaves them.
	return copy(out, src), nil
}
