package compress

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/ometiff-go/ometiff/tiff"
)

// DefaultJPEGQuality is the JPEG quality of JPEGOptions' zero value. It is
// the default of libvips (tiffsave --Q), libtiff (JPEGQUALITY), GDAL
// (JPEG_QUALITY) and Java's ImageIO JPEG writer, which Bio-Formats and
// QuPath write their JPEG tiles with, so that a file written with the
// defaults compares with theirs at equal quality; Aperio scanners write
// their SVS tiles at 70 (some older ones at 30), and tifffile, through
// imagecodecs, defaults to 95. Qualities 85 and 90 keep more fine texture
// for image analysis, for about 1.4 and 1.8 times the size on a stained
// slide.
const DefaultJPEGQuality = 75

// JPEGColor is how a JPEG tile stores the three samples of an RGB pixel.
type JPEGColor int

// JPEG colour codings of RGB tiles.
const (
	// JPEGYCbCr420 converts RGB to YCbCr (JFIF's conversion) and halves the
	// chroma resolution in both directions: TIFF Photometric YCbCr with
	// YCbCrSubSampling 2 2, as libtiff and libvips write RGB JPEG tiles.
	// It is the smallest coding, and what every reader handles.
	JPEGYCbCr420 JPEGColor = iota
	// JPEGRGB codes R, G and B as three full-resolution components, without
	// colour conversion: TIFF Photometric RGB. Each tile carries an Adobe
	// APP14 marker with transform 0 and component identifiers 'R', 'G' and
	// 'B', so JPEG decoders do not convert it as YCbCr. Aperio SVS files
	// store their JPEG tiles this way, and libvips from quality 90 up.
	// Tiles are about 2.5 times the size of JPEGYCbCr420's at the same
	// quality.
	JPEGRGB
)

// String names the coding.
func (c JPEGColor) String() string {
	switch c {
	case JPEGYCbCr420:
		return "YCbCr 4:2:0"
	case JPEGRGB:
		return "RGB"
	}
	return fmt.Sprintf("JPEGColor(%d)", int(c))
}

// jpegColorNames are the codings' names as text: flags and JSON.
var jpegColorNames = [...]string{JPEGYCbCr420: "ycbcr", JPEGRGB: "rgb"}

// MarshalText returns "ycbcr" or "rgb", so that the coding works with
// flag.TextVar and encoding/json.
func (c JPEGColor) MarshalText() ([]byte, error) {
	if c < 0 || int(c) >= len(jpegColorNames) {
		return nil, fmt.Errorf("%w: JPEG color %d", ErrFormat, int(c))
	}
	return []byte(jpegColorNames[c]), nil
}

// UnmarshalText reads "ycbcr" (or "ycbcr420", "420") or "rgb", ignoring
// case.
func (c *JPEGColor) UnmarshalText(text []byte) error {
	switch strings.ToLower(strings.TrimSpace(string(text))) {
	case "ycbcr", "ycbcr420", "420":
		*c = JPEGYCbCr420
	case "rgb":
		*c = JPEGRGB
	default:
		return fmt.Errorf("%w: unknown JPEG color %q (want ycbcr or rgb)", ErrFormat, text)
	}
	return nil
}

// JPEGOptions are the settings of a JPEG encoder. The zero value encodes at
// DefaultJPEGQuality, and RGB as YCbCr 4:2:0.
type JPEGOptions struct {
	// Quality is the IJG quality, 1 (smallest) to 100 (best): it scales
	// the example quantization tables of the JPEG standard (ITU T.81 Annex
	// K) as libjpeg's jpeg_set_quality does, limited to baseline's 8-bit
	// values. 0 means DefaultJPEGQuality.
	Quality int
	// Color is the coding of RGB (3-sample) tiles. Gray (1-sample) tiles
	// are always one component, Photometric BlackIsZero, whatever Color.
	Color JPEGColor
}

// JPEG compresses 8-bit gray or interleaved RGB tiles to baseline JPEG as
// TIFF's new-style JPEG (Compression 7, TIFF Technical Note 2) stores
// them: the quantization and Huffman tables, the same for every tile, are
// in one JPEGTables blob (Tables), and each tile is an abbreviated stream
// without tables: SOI, SOF0, SOS, the entropy-coded data, EOI (and an APP14
// marker for JPEGRGB). The Huffman tables are the standard's (Annex K.3),
// as libjpeg's defaults; no restart markers.
//
// A tile need not be a multiple of the MCU (16x16 pixels for 4:2:0, 8x8
// otherwise): the encoder pads a partial MCU by repeating the last column
// and row, as libjpeg does, and the decoder crops it. A TIFF tile is whole,
// so its padding is the writer's; only strips end in partial MCUs.
//
// A JPEG is made by NewJPEG for one tile width and sample layout. It is
// safe for concurrent use; each Encode borrows pooled state, allocates
// nothing else and produces the same bytes whatever runs alongside.
//
// The encoder is written in Go. Programs built with the ometiff_turbo tag
// (and cgo, and libjpeg-turbo's development files: Debian's
// libjpeg62-turbo-dev) encode with libjpeg-turbo instead, about twice as
// fast, with the same tables; their tiles decode to nearly the same pixels
// but are not the same bytes.
type JPEG struct {
	width   int
	samples int
	color   JPEGColor
	quality int
	tables  []byte
	quant   [2]jpegQuant  // luminance (and R, G, B), chrominance
	huff    [2]jpegCoders // luminance (and R, G, B), chrominance
	states  sync.Pool     // of *jpegState
	turbo   jpegEngine    // libjpeg-turbo, in builds with the ometiff_turbo tag
}

// jpegEngine is another implementation of JPEG.Encode, of an abbreviated
// stream that uses the JPEG's tables.
type jpegEngine interface {
	encode(dst, src []byte, height int) ([]byte, error)
}

// ErrLibJPEG reports a failure of libjpeg-turbo itself, in programs built
// with the ometiff_turbo tag: out of memory, or an error it reports while
// encoding a tile or setting up a decoder.
var ErrLibJPEG = errors.New("compress: libjpeg")

// jpegTurbo returns libjpeg-turbo's engine for j in builds with the
// ometiff_turbo tag and cgo; it is nil in others.
var jpegTurbo func(j *JPEG) jpegEngine

// Limits of a JPEG frame: SOF's 16-bit fields would hold 65535, but
// libjpeg (JPEG_MAX_DIMENSION), and so libtiff, libvips, GDAL and this
// package's libjpeg-turbo build, refuses frames past 65500 pixels.
const maxJPEGSide = 65500

// NewJPEG returns an encoder for tiles of width pixels of the samples
// format f, which must be unsigned 8-bit with 1 (gray) or 3 (RGB)
// interleaved samples; a tile's height is its length over its row size.
// Invalid settings give ErrFormat (the layout, the width or the colour
// coding) or ErrLevel (the quality).
func NewJPEG(f Format, width int, o JPEGOptions) (*JPEG, error) {
	l, err := f.layout()
	switch {
	case err != nil:
		return nil, err
	case l.float:
		return nil, fmt.Errorf("%w: JPEG needs 8-bit integer samples, not %d-bit floating point", ErrFormat, 8*l.sampleBytes)
	case l.sampleBytes != 1:
		return nil, fmt.Errorf("%w: JPEG needs 8-bit integer samples, not %d-bit", ErrFormat, 8*l.sampleBytes)
	case l.samples != 1 && l.samples != 3:
		return nil, fmt.Errorf("%w: JPEG needs 1 (gray) or 3 (RGB) samples per pixel, not %d", ErrFormat, l.samples)
	case width < 1 || width > maxJPEGSide:
		return nil, fmt.Errorf("%w: JPEG tile width %d is not in 1..%d", ErrFormat, width, maxJPEGSide)
	case o.Quality < 0 || o.Quality > 100:
		return nil, fmt.Errorf("%w: JPEG quality %d is not in 1..100 (0 = default)", ErrLevel, o.Quality)
	case o.Color != JPEGYCbCr420 && o.Color != JPEGRGB:
		return nil, fmt.Errorf("%w: JPEG color %d", ErrFormat, int(o.Color))
	}
	j := &JPEG{width: width, samples: l.samples, color: o.Color, quality: o.Quality}
	if j.quality == 0 {
		j.quality = DefaultJPEGQuality
	}
	if j.samples == 1 {
		j.color = JPEGYCbCr420 // no chroma: the value does not matter
	}
	j.quant[0] = newJPEGQuant(&jpegLumaQuant, j.quality)
	j.quant[1] = newJPEGQuant(&jpegChromaQuant, j.quality)
	j.huff[0] = newJPEGCoders(&jpegHuffSpecs[0], &jpegHuffSpecs[1])
	j.huff[1] = newJPEGCoders(&jpegHuffSpecs[2], &jpegHuffSpecs[3])
	j.tables = j.appendTables(nil)
	if jpegTurbo != nil {
		j.turbo = jpegTurbo(j)
	}
	return j, nil
}

// Compression returns tiff.CompressionJPEG.
func (j *JPEG) Compression() uint16 { return tiff.CompressionJPEG }

// Quality returns the quality the encoder quantizes at.
func (j *JPEG) Quality() int { return j.quality }

// Tables returns the JPEGTables field (TIFF tag 347) of the image: an
// abbreviated table-specification stream (SOI, DQT, DHT, EOI) holding the
// tables of every tile. The slice is shared: do not modify it.
func (j *JPEG) Tables() []byte { return j.tables }

// Photometric returns the TIFF PhotometricInterpretation of the tiles:
// tiff.PhotometricBlackIsZero for gray, tiff.PhotometricYCbCr for RGB as
// JPEGYCbCr420, tiff.PhotometricRGB for JPEGRGB.
func (j *JPEG) Photometric() uint16 {
	switch {
	case j.samples == 1:
		return tiff.PhotometricBlackIsZero
	case j.color == JPEGRGB:
		return tiff.PhotometricRGB
	}
	return tiff.PhotometricYCbCr
}

// YCbCrSubSampling returns the TIFF YCbCrSubSampling field (tag 530) of
// YCbCr tiles, 2 2, and nil when Photometric is not YCbCr (the field must
// then be absent). Such files also carry ReferenceBlackWhite (tag 532)
// 0/1 255/1 128/1 255/1 128/1 255/1, the full-range coding of JFIF that
// the encoder uses, as libtiff and libvips write it.
func (j *JPEG) YCbCrSubSampling() []uint16 {
	if j.Photometric() != tiff.PhotometricYCbCr {
		return nil
	}
	return []uint16{2, 2}
}

// Encode appends the abbreviated JPEG stream of the tile src to dst. src
// holds whole rows of the encoder's width, interleaved samples, and at
// least one row and at most 65500; otherwise Encode returns ErrTileSize.
func (j *JPEG) Encode(dst, src []byte) ([]byte, error) {
	rowBytes := j.width * j.samples
	height := len(src) / rowBytes
	if len(src)%rowBytes != 0 || height < 1 || height > maxJPEGSide {
		return dst, fmt.Errorf("%w: %d bytes in rows of %d (JPEG: 1..%d rows)", ErrTileSize, len(src), rowBytes, maxJPEGSide)
	}
	if j.turbo != nil {
		return j.turbo.encode(dst, src, height)
	}
	st := j.state()
	dst = j.encode(st, dst, src, height)
	j.states.Put(st)
	return dst, nil
}

func (j *JPEG) state() *jpegState {
	if st, ok := j.states.Get().(*jpegState); ok {
		return st
	}
	return new(jpegState)
}

// JPEG markers (ITU T.81 Table B.1) and the Adobe APP14 segment.
const (
	jpegSOI   byte = 0xd8
	jpegEOI   byte = 0xd9
	jpegSOF0  byte = 0xc0
	jpegDHT   byte = 0xc4
	jpegDQT   byte = 0xdb
	jpegSOS   byte = 0xda
	jpegAPP14 byte = 0xee
)

// appendTables appends the table-specification stream: SOI, one DQT per
// quantization table, one DHT per Huffman table (DC then AC of each table
// class, libjpeg's order), EOI. Gray needs only the luminance tables, and
// RGB codes all three components with them.
func (j *JPEG) appendTables(b []byte) []byte {
	tables := 1
	if j.samples == 3 && j.color == JPEGYCbCr420 {
		tables = 2
	}
	b = append(b, 0xff, jpegSOI)
	for id := range tables {
		b = append(b, 0xff, jpegDQT, 0, 2+1+64, byte(id))
		for k := range 64 {
			b = append(b, byte(j.quant[id].value[jpegZigzag[k]]))
		}
	}
	for id := range tables {
		for class, s := range []*jpegHuffSpec{&jpegHuffSpecs[2*id], &jpegHuffSpecs[2*id+1]} {
			n := 2 + 1 + 16 + len(s.values)
			b = append(b, 0xff, jpegDHT, byte(n>>8), byte(n), byte(class<<4|id))
			b = append(b, s.counts[:]...)
			b = append(b, s.values...)
		}
	}
	return append(b, 0xff, jpegEOI)
}

// appendHeaders appends the start of a tile's stream: SOI, APP14 for
// JPEGRGB, SOF0 and SOS.
func (j *JPEG) appendHeaders(b []byte, height int) []byte {
	b = append(b, 0xff, jpegSOI)
	ids, sampling, tables := []byte{1}, []byte{0x11}, []byte{0}
	switch {
	case j.samples == 3 && j.color == JPEGRGB:
		// Adobe's marker: version 100, no flags, transform 0 (none).
		b = append(b, 0xff, jpegAPP14, 0, 14, 'A', 'd', 'o', 'b', 'e', 0, 100, 0, 0, 0, 0, 0)
		ids, sampling, tables = []byte{'R', 'G', 'B'}, []byte{0x11, 0x11, 0x11}, []byte{0, 0, 0}
	case j.samples == 3:
		ids, sampling, tables = []byte{1, 2, 3}, []byte{0x22, 0x11, 0x11}, []byte{0, 1, 1}
	}
	n := len(ids)
	b = append(b, 0xff, jpegSOF0, 0, byte(8+3*n), 8, byte(height>>8), byte(height), byte(j.width>>8), byte(j.width), byte(n))
	for c := range n {
		b = append(b, ids[c], sampling[c], tables[c])
	}
	b = append(b, 0xff, jpegSOS, 0, byte(6+2*n), byte(n))
	for c := range n {
		b = append(b, ids[c], tables[c]<<4|tables[c]) // DC and AC table of the class
	}
	return append(b, 0, 63, 0) // spectral selection 0..63, no approximation
}

// jpegZigzag maps the zigzag order of the coefficients to their natural
// (row-major) position in the 8x8 block (ITU T.81 Figure A.6).
var jpegZigzag = [64]uint8{
	0, 1, 8, 16, 9, 2, 3, 10,
	17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34,
	27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36,
	29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46,
	53, 60, 61, 54, 47, 55, 62, 63,
}

// The example quantization tables of ITU T.81 Annex K.1, in natural order:
// Table K.1 (luminance) and Table K.2 (chrominance).
var (
	jpegLumaQuant = [64]uint8{
		16, 11, 10, 16, 24, 40, 51, 61,
		12, 12, 14, 19, 26, 58, 60, 55,
		14, 13, 16, 24, 40, 57, 69, 56,
		14, 17, 22, 29, 51, 87, 80, 62,
		18, 22, 37, 56, 68, 109, 103, 77,
		24, 35, 55, 64, 81, 104, 113, 92,
		49, 64, 78, 87, 103, 121, 120, 101,
		72, 92, 95, 98, 112, 100, 103, 99,
	}
	jpegChromaQuant = [64]uint8{
		17, 18, 24, 47, 99, 99, 99, 99,
		18, 21, 26, 66, 99, 99, 99, 99,
		24, 26, 56, 99, 99, 99, 99, 99,
		47, 66, 99, 99, 99, 99, 99, 99,
		99, 99, 99, 99, 99, 99, 99, 99,
		99, 99, 99, 99, 99, 99, 99, 99,
		99, 99, 99, 99, 99, 99, 99, 99,
		99, 99, 99, 99, 99, 99, 99, 99,
	}
)

// jpegQuant is a quantization table and the multipliers that quantize the
// scaled output of the forward DCT with it.
type jpegQuant struct {
	value [64]int32 // natural order, 1..255
	// recip is, in natural order, 2^jpegQuantBits over the divisor of
	// each coefficient: its quantizer times the DCT's output scale.
	recip [64]int64
}

// jpegQuantBits is the fixed-point precision of jpegQuant.recip.
const jpegQuantBits = 32

// newJPEGQuant scales base to quality with libjpeg's formula
// (jpeg_quality_scaling), limited to 1..255 as baseline requires.
func newJPEGQuant(base *[64]uint8, quality int) jpegQuant {
	scale := 200 - 2*quality
	if quality < 50 {
		scale = 5000 / quality
	}
	var q jpegQuant
	for i, v := range base {
		q.value[i] = int32(min(max((int(v)*scale+50)/100, 1), 255))
	}
	for i, v := range q.value {
		divisor := float64(v) * jpegDCTScale[i%8] * jpegDCTScale[i/8] * 8 * (1 << jpegFracBits)
		q.recip[i] = int64(math.Round((1 << jpegQuantBits) / divisor))
	}
	return q
}

// jpegDCTScale[k] is cos(k*pi/16)*sqrt(2) (1 for k = 0): the AAN forward DCT
// leaves coefficient (u, v) scaled by 8*jpegDCTScale[u]*jpegDCTScale[v].
var jpegDCTScale = func() (s [8]float64) {
	for k := range s {
		s[k] = 1
		if k > 0 {
			s[k] = math.Cos(float64(k)*math.Pi/16) * math.Sqrt2
		}
	}
	return s
}()

// jpegHuffSpec is a Huffman table as DHT stores it: the number of codes of
// each length 1..16, then the symbols in order of increasing code length.
type jpegHuffSpec struct {
	counts [16]byte
	values []byte
}

// The Huffman tables of ITU T.81 Annex K.3 (Tables K.3 to K.6): DC and AC
// luminance, DC and AC chrominance.
var jpegHuffSpecs = [4]jpegHuffSpec{
	{
		counts: [16]byte{0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0},
		values: []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
	},
	{
		counts: [16]byte{0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d},
		values: []byte{
			0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12,
			0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
			0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08,
			0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0,
			0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16,
			0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
			0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39,
			0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
			0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59,
			0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
			0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79,
			0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
			0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98,
			0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
			0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6,
			0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
			0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4,
			0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
			0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea,
			0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
			0xf9, 0xfa,
		},
	},
	{
		counts: [16]byte{0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0},
		values: []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
	},
	{
		counts: [16]byte{0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77},
		values: []byte{
			0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21,
			0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
			0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91,
			0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0,
			0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34,
			0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26,
			0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38,
			0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
			0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58,
			0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
			0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78,
			0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
			0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96,
			0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5,
			0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4,
			0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3,
			0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2,
			0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda,
			0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9,
			0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
			0xf9, 0xfa,
		},
	},
}

// jpegCoders are the codes of one table class, each symbol's code in the
// low bits of a uint32 and its length above them (bits 24 and up).
type jpegCoders struct {
	dc, ac [256]uint32
}

// newJPEGCoders assigns the canonical codes of ITU T.81 Annex C.
func newJPEGCoders(dc, ac *jpegHuffSpec) jpegCoders {
	var c jpegCoders
	assign := func(s *jpegHuffSpec, table []uint32) {
		code, k := uint32(0), 0
		for length, n := range s.counts {
			for range n {
				table[s.values[k]] = uint32(length+1)<<24 | code
				code++
				k++
			}
			code <<= 1
		}
	}
	assign(dc, c.dc[:])
	assign(ac, c.ac[:])
	return c
}
