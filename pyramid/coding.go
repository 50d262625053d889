package pyramid

import (
	"fmt"
	"slices"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/tiff"
)

// TileCoding is how the tiles of one level are stored: the TIFF fields,
// besides the level's size and the image's samples, that a reader needs
// to decode them. The writer derives it from Options for the tiles it
// encodes; a caller gives it for tiles it hands over already encoded
// (AddEncodedImage), and the level's directory then carries it as given.
type TileCoding struct {
	// Compression of the tiles.
	Compression Compression
	// Predictor applied before compressing: PredictorNone (PredictorAuto
	// means none here), PredictorHorizontal for integer samples or
	// PredictorFloatingPoint for floats, with lossless compression only.
	Predictor Predictor
	// TileWidth and TileHeight are the size of every tile, edge tiles
	// included, in pixels: multiples of 16 from 16 to 32768, as TIFF asks.
	TileWidth, TileHeight int
	// JPEGTables is the JPEGTables field (347) of JPEG tiles: the
	// quantization and Huffman tables their abbreviated streams leave out,
	// as SOI, tables, EOI. nil when every tile carries its own tables.
	JPEGTables []byte
	// Photometric is the TIFF PhotometricInterpretation: 0 means
	// tiff.PhotometricBlackIsZero for one sample and tiff.PhotometricRGB
	// for three. tiff.PhotometricYCbCr is for JPEG tiles of three samples,
	// and then YCbCrSubSampling, YCbCrPositioning and ReferenceBlackWhite
	// describe them. (WhiteIsZero and the other interpretations are not
	// written.)
	Photometric uint16
	// YCbCrSubSampling is the YCbCrSubSampling field (530) of YCbCr tiles:
	// how many luma samples share a chroma sample across and down, each 1,
	// 2 or 4, the second at most the first. Zero means 2 2, TIFF's
	// default; the field is written either way.
	YCbCrSubSampling [2]int
	// YCbCrPositioning is the YCbCrPositioning field (531) of YCbCr tiles:
	// tiff.YCbCrCentered or tiff.YCbCrCosited; 0 leaves the field out.
	YCbCrPositioning uint16
	// ReferenceBlackWhite is the ReferenceBlackWhite field (532) of YCbCr
	// tiles: the footroom and headroom of Y, Cb and Cr, six non-negative
	// values; nil leaves the field out.
	ReferenceBlackWhite []float64
}

// EncodedLevelOf returns the size and the tile coding of a tiled page of
// a TIFF file, for copying its tiles (tiff.Page.ReadBlock) into an image
// added with AddEncodedImage: its Compression, Predictor and tile size,
// and for JPEG its JPEGTables, PhotometricInterpretation and YCbCr
// fields, as the page has them (Deflate's old code 32946 is written as 8,
// the same zlib streams). What a level cannot carry is ErrOption naming
// it: strips, separate sample planes, tiles whose sides are not multiples
// of 16, samples wider than a byte in a big-endian file (the writer's are
// little-endian), a compression the writer does not write (PackBits, old-style
// JPEG, JPEG 2000, ...), a photometric interpretation other than
// BlackIsZero, RGB and JPEG's YCbCr. The image's spec must give the
// page's samples, their type and number (AddEncodedImage refuses a level
// of other samples, ErrOption: 16-bit tiles would otherwise be copied
// into an image that says 8 bits); AddEncodedImage checks the rest.
func EncodedLevelOf(p *tiff.Page) (EncodedLevel, error) {
	l, err := p.Layout()
	if err != nil {
		return EncodedLevel{}, fmt.Errorf("%w: %w", ErrOption, err)
	}
	bad := func(format string, args ...any) (EncodedLevel, error) {
		return EncodedLevel{}, fmt.Errorf("%w: the page at %d: %s", ErrOption, p.Offset, fmt.Sprintf(format, args...))
	}
	e := EncodedLevel{Width: l.Width, Height: l.Height, stored: storedSamples{bits: l.BitsPerSample, samples: l.SamplesPerPixel}}
	// A level without SampleFormat is taken as the image's: libvips writes
	// the levels of signed and float pyramids without it.
	if _, said := p.Field(tiff.TagSampleFormat); said && l.SampleFormat >= tiff.SampleFormatUint && l.SampleFormat <= tiff.SampleFormatFloat {
		e.stored.format = l.SampleFormat
	}
	switch {
	case !l.Tiled:
		return bad("strips, not tiles")
	case l.Planes > 1:
		return bad("samples in separate planes")
	case !validTile(l.BlockWidth) || !validTile(l.BlockHeight):
		return bad("tiles of %d x %d pixels (TIFF wants multiples of 16)", l.BlockWidth, l.BlockHeight)
	case l.BitsPerSample > 8 && p.Order() != byteOrder:
		// Copied, its tiles would keep their byte order in a little-endian file.
		return bad("big-endian samples of %d bits (the writer writes little-endian files)", l.BitsPerSample)
	}
	e.TileWidth, e.TileHeight = l.BlockWidth, l.BlockHeight
	compression := slices.Index(tiffCompression[:], l.Compression)
	if l.Compression == tiff.CompressionDeflateOld {
		compression = int(Deflate)
	}
	if compression < 0 {
		name, _ := tiff.ValueName(tiff.TagCompression, uint64(l.Compression))
		return bad("compression %d (%s), which the writer does not write", l.Compression, name)
	}
	e.Compression = Compression(compression)
	predictor, ok := findPredictor([]Predictor{PredictorNone, PredictorHorizontal, PredictorFloatingPoint}, l.Predictor)
	if !ok {
		return bad("predictor %d", l.Predictor)
	}
	e.Predictor = predictor
	if e.Compression == JPEG || e.Compression == None {
		e.Predictor = PredictorNone // ignored there, as libtiff ignores it
	}
	switch l.Photometric {
	case tiff.PhotometricBlackIsZero, tiff.PhotometricRGB, tiff.PhotometricYCbCr:
		e.Photometric = l.Photometric
	default:
		name, _ := tiff.ValueName(tiff.TagPhotometricInterpretation, uint64(l.Photometric))
		return bad("photometric interpretation %d (%s)", l.Photometric, name)
	}
	if e.Compression == JPEG {
		e.JPEGTables = p.JPEGTables()
		if _, _, err := compress.JPEGQuality(e.JPEGTables); err != nil {
			// Tiles with their own tables: the first one's quality, for
			// the levels the writer computes (a missing, damaged or
			// implausibly large tile leaves Options.Quality).
			if b, err := p.Block(0); err == nil && b.Size <= maxQualityTile {
				if tile, err := p.ReadBlock(nil, 0); err == nil {
					e.quality, _, _ = compress.JPEGQuality(tile)
				}
			}
		}
	}
	if e.Photometric == tiff.PhotometricYCbCr {
		h, v, err := p.YCbCrSubsampling()
		if err != nil {
			return EncodedLevel{}, fmt.Errorf("%w: %w", ErrOption, err)
		}
		e.YCbCrSubSampling = [2]int{h, v}
		if _, ok := p.Field(tiff.TagYCbCrPositioning); ok {
			e.YCbCrPositioning = p.YCbCrPositioning()
		}
		if rbw, ok := p.ReferenceBlackWhite(); ok {
			e.ReferenceBlackWhite = rbw
		}
	}
	return e, nil
}

// maxQualityTile bounds the first tile EncodedLevelOf reads for its JPEG
// quality: a 1024 x 1024 RGB tile stored uncompressed, more than any JPEG
// tile of a side the writer takes.
const maxQualityTile = 3 << 20

// jpegReferenceBlackWhite is the full-range coding of JFIF, which the
// writer's YCbCr JPEG tiles use: libtiff and libvips write it so.
var jpegReferenceBlackWhite = []float64{0, 255, 128, 255, 128, 255}

// photometric returns the coding's PhotometricInterpretation, the default
// filled in for samples samples.
func (c TileCoding) photometric(samples int) uint16 {
	switch {
	case c.Photometric != 0:
		return c.Photometric
	case samples == 3:
		return tiff.PhotometricRGB
	}
	return tiff.PhotometricBlackIsZero
}

// jpegCoding is the coding of tiles j encodes.
func jpegCoding(j *compress.JPEG, tileW, tileH int) TileCoding {
	c := TileCoding{Compression: JPEG, Predictor: PredictorNone, TileWidth: tileW, TileHeight: tileH,
		JPEGTables: j.Tables(), Photometric: j.Photometric()}
	if s := j.YCbCrSubSampling(); s != nil {
		c.YCbCrSubSampling = [2]int{int(s[0]), int(s[1])}
		c.ReferenceBlackWhite = jpegReferenceBlackWhite
	}
	return c
}

// check reports whether the coding can describe tiles of spec's samples,
// naming what it cannot.
func (c TileCoding) check(spec ImageSpec) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: tile coding: %s", ErrOption, fmt.Sprintf(format, args...))
	}
	samples := spec.SamplesPerPixel
	photometric := c.photometric(samples)
	lossless := c.Compression != None && c.Compression != JPEG
	switch {
	case c.Compression < LZW || c.Compression > JPEG:
		return bad("compression %d", int(c.Compression))
	case !validTile(c.TileWidth) || !validTile(c.TileHeight):
		return bad("tiles of %d x %d pixels (want multiples of 16 from 16 to 32768)", c.TileWidth, c.TileHeight)
	case c.Predictor < PredictorAuto || c.Predictor > PredictorFloatingPoint:
		return bad("predictor %d", int(c.Predictor))
	case c.Predictor == PredictorHorizontal && (!lossless || spec.PixelType.Float()),
		c.Predictor == PredictorFloatingPoint && (!lossless || !spec.PixelType.Float()):
		return bad("predictor %v on %v samples with compression %v", c.Predictor, spec.PixelType, c.Compression)
	case c.Compression == JPEG && spec.PixelType != Uint8:
		return bad("JPEG tiles of %v samples (JPEG takes uint8)", spec.PixelType)
	case c.Compression != JPEG && c.JPEGTables != nil:
		return bad("JPEGTables with compression %v", c.Compression)
	case c.JPEGTables != nil && !jpegTablesShape(c.JPEGTables):
		return bad("JPEGTables of %d bytes that are not a JPEG stream (SOI ... EOI)", len(c.JPEGTables))
	case samples == 1 && photometric != tiff.PhotometricBlackIsZero,
		samples == 3 && photometric != tiff.PhotometricRGB && photometric != tiff.PhotometricYCbCr:
		return bad("photometric interpretation %d for %d samples per pixel", photometric, samples)
	case photometric == tiff.PhotometricYCbCr && c.Compression != JPEG:
		return bad("YCbCr tiles with compression %v (only JPEG's are written)", c.Compression)
	case photometric != tiff.PhotometricYCbCr && (c.YCbCrSubSampling != [2]int{} || c.YCbCrPositioning != 0 || c.ReferenceBlackWhite != nil):
		return bad("YCbCr fields for photometric interpretation %d", photometric)
	}
	if photometric != tiff.PhotometricYCbCr {
		return nil
	}
	h, v := c.subsampling()
	switch {
	case !validSubsampling(h) || !validSubsampling(v) || v > h:
		return bad("YCbCrSubSampling %d %d", h, v)
	case c.YCbCrPositioning > tiff.YCbCrCosited:
		return bad("YCbCrPositioning %d", c.YCbCrPositioning)
	case c.ReferenceBlackWhite != nil && len(c.ReferenceBlackWhite) != 6:
		return bad("ReferenceBlackWhite of %d values (want 6)", len(c.ReferenceBlackWhite))
	}
	for _, v := range c.ReferenceBlackWhite {
		if _, ok := rational(v); !ok {
			return bad("ReferenceBlackWhite value %v", v)
		}
	}
	return nil
}

// subsampling returns YCbCrSubSampling, TIFF's default 2 2 for zero.
func (c TileCoding) subsampling() (h, v int) {
	if c.YCbCrSubSampling == [2]int{} {
		return 2, 2
	}
	return c.YCbCrSubSampling[0], c.YCbCrSubSampling[1]
}

// jpegTablesShape reports whether tables starts with SOI and ends with EOI,
// as a table-specification stream does.
func jpegTablesShape(tables []byte) bool {
	n := len(tables)
	return n >= 4 && tables[0] == 0xff && tables[1] == 0xd8 && tables[n-2] == 0xff && tables[n-1] == 0xd9
}

func validTile(v int) bool        { return v >= 16 && v <= 1<<15 && v%16 == 0 }
func validSubsampling(v int) bool { return v == 1 || v == 2 || v == 4 }

// rational returns v as a RATIONAL: 0 as 0/1, others by fraction.
func rational(v float64) (ifd.Fraction, bool) {
	if v == 0 {
		return ifd.Fraction{Num: 0, Den: 1}, true
	}
	return fraction(v)
}

// addCoding adds the fields of the coding for tiles of samples samples:
// Compression, PhotometricInterpretation, the tile size, Predictor (unless
// none), JPEGTables and the YCbCr fields. It is the one place these
// fields are made, for the tiles the writer encodes and those it copies.
func addCoding(b *ifd.Builder, c TileCoding, samples int) {
	b.AddShort(tiff.TagCompression, tiffCompression[c.Compression])
	photometric := c.photometric(samples)
	b.AddShort(tiff.TagPhotometricInterpretation, photometric)
	b.AddUint(tiff.TagTileWidth, uint64(c.TileWidth))
	b.AddUint(tiff.TagTileLength, uint64(c.TileHeight))
	if p := tiffPredictor(c.Predictor); p != tiff.PredictorNone {
		b.AddShort(tiff.TagPredictor, p)
	}
	if c.JPEGTables != nil {
		b.Add(ifd.Entry{Tag: tiff.TagJPEGTables, Type: ifd.Undefined, Count: uint64(len(c.JPEGTables)), Value: c.JPEGTables})
	}
	if photometric != tiff.PhotometricYCbCr {
		return
	}
	h, v := c.subsampling()
	b.AddShort(tiff.TagYCbCrSubSampling, uint16(h), uint16(v))
	if c.YCbCrPositioning != 0 {
		b.AddShort(tiff.TagYCbCrPositioning, c.YCbCrPositioning)
	}
	if c.ReferenceBlackWhite != nil {
		rbw := make([]ifd.Fraction, len(c.ReferenceBlackWhite))
		for i, v := range c.ReferenceBlackWhite {
			rbw[i], _ = rational(v) // checked
		}
		b.AddRational(tiff.TagReferenceBlackWhite, rbw...)
	}
}

// findPredictor returns the predictor among candidates whose TIFF value
// is p.
func findPredictor(candidates []Predictor, p uint16) (Predictor, bool) {
	for _, c := range candidates {
		if tiffPredictor(c) == p {
			return c, true
		}
	}
	return 0, false
}

// tiffPredictor is the TIFF Predictor of a resolved predictor option.
func tiffPredictor(p Predictor) uint16 {
	switch p {
	case PredictorHorizontal:
		return tiff.PredictorHorizontal
	case PredictorFloatingPoint:
		return tiff.PredictorFloatingPoint
	}
	return tiff.PredictorNone
}
