package pyramid

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/tiff"
)

// Errors. Each message of an error this package makes starts with
// "pyramid: " once; test with errors.Is. Errors of the layers below (an
// I/O failure of the output, the cancellation of the writer's context) are
// returned as they are, as the standard library's writers return their
// writers' errors, or inside ErrClosed once they failed the writer;
// errors.Is finds them either way. A context cancelled with a cause
// (context.WithCancelCause) gives its cause, not context.Canceled. One that this package has a sentinel
// for is described in its words and matches both: a file too large for
// classic TIFF is ErrTooLarge, a compression level the codec lacks is
// ErrOption (and compress.ErrLevel).
var (
	// ErrOption is an option the writer cannot honour.
	ErrOption = errors.New("pyramid: bad option")
	// ErrSize is a zero, negative or overflowing image size, one whose
	// level has more tiles than a TIFF directory holds, or images whose
	// planes and levels would give a file more directories than package
	// tiff reads (tiff.MaxDirectories), or a TruncateT outside 1 to the
	// image's SizeT.
	ErrSize = errors.New("pyramid: bad image size")
	// ErrPixelType is an unsupported pixel type and samples combination.
	ErrPixelType = errors.New("pyramid: unsupported pixel type")
	// ErrMetadata is metadata that cannot be written: invalid UTF-8, a
	// character XML cannot hold, an unknown unit or dimension order, a
	// quantity out of its range, more Channels than SizeC, PlaneInfo
	// naming a plane outside the image or twice, a reference to an
	// instrument's part it lacks, or an OME document the writer cannot
	// carry (an *OMEError).
	ErrMetadata = errors.New("pyramid: bad metadata")
	// ErrPlane is a plane index out of range, a plane written twice, a call
	// on a PlaneWriter or EncodedPlaneWriter while another goroutine's is
	// under way or after its Abort, an Abort of a complete plane, a plane
	// of an image that ReadPlanes is writing, a plane of a time point
	// Image.TruncateT dropped, ReadPlanes on a truncated image, or a
	// TruncateT that would drop an open plane, while ReadPlanes runs, or
	// on an image of a dataset's part.
	ErrPlane = errors.New("pyramid: bad plane")
	// ErrData is pixel data of the wrong length, rows past the end of a
	// plane, or an image.Image that cannot be converted (nil, a layout
	// other than the spec's, pixel slices short of its bounds, a palette
	// index without a colour).
	ErrData = errors.New("pyramid: bad pixel data")
	// ErrMissingPlanes is a Close before every plane was written (the
	// message lists them), or before any image was added.
	ErrMissingPlanes = errors.New("pyramid: planes not written")
	// ErrTooLarge is a file past 4 GiB with BigTIFF set to Never.
	ErrTooLarge = errors.New("pyramid: file needs BigTIFF")
	// ErrClosed is any call after Close or Abort, or after the writer
	// failed; then it wraps the failure, and its message says it.
	ErrClosed = errors.New("pyramid: writer is closed")
)

// Compression selects the codec of every tile. The zero value is LZW.
type Compression int

// Compressions.
const (
	LZW     Compression = iota // TIFF Compression 5
	None                       // uncompressed
	Deflate                    // Adobe Deflate (zlib), Compression 8
	Zstd                       // Zstandard, Compression 50000
	// JPEG is baseline JPEG as TIFF stores it (Compression 7, TIFF
	// Technical Note 2): lossy, for Uint8 images of 1 sample (gray) or 3
	// (RGB) only. Options.Quality and Options.JPEGColor tune it; the
	// tables go once in each directory's JPEGTables field, and edge tiles
	// are padded by repeating the last row and column, so that no reduced
	// level shows a dark seam. The levels are reduced from the original
	// pixels, never from decoded JPEG.
	JPEG
)

// tiffCompression is the TIFF Compression value of each codec.
var tiffCompression = [...]uint16{
	LZW: tiff.CompressionLZW, None: tiff.CompressionNone, Deflate: tiff.CompressionDeflate,
	Zstd: tiff.CompressionZstd, JPEG: tiff.CompressionJPEG,
}

// JPEGColor is how JPEG tiles store the three samples of an RGB pixel:
// JPEGYCbCr420 (the zero value) or JPEGRGB.
type JPEGColor = compress.JPEGColor

// JPEG colour codings of RGB tiles. Gray tiles have one component
// whatever the choice.
const (
	// JPEGYCbCr420 stores RGB as YCbCr with the chroma halved in both
	// directions (Photometric YCbCr, YCbCrSubSampling 2 2), as libtiff
	// and libvips write it below quality 90: the smallest tiles, and what
	// every reader handles. It stays the coding at every quality, unlike
	// libvips, which switches to RGB-coded tiles by itself from quality 90
	// up: ask for JPEGRGB to do the same.
	JPEGYCbCr420 = compress.JPEGYCbCr420
	// JPEGRGB codes R, G and B at full resolution without colour
	// conversion (Photometric RGB), as Aperio SVS files do: about 2.5
	// times the size of JPEGYCbCr420 at the same quality, for colour
	// edges kept sharp.
	JPEGRGB = compress.JPEGRGB
)

// String returns the compression's name as the README and the commands
// print it ("LZW", "Deflate", "none"); MarshalText gives the lower-case
// name the flags and JSON take.
func (c Compression) String() string {
	switch c {
	case LZW:
		return "LZW"
	case None:
		return "none"
	case Deflate:
		return "Deflate"
	case Zstd:
		return "Zstd"
	case JPEG:
		return "JPEG"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// Predictor selects the TIFF predictor. The zero value, PredictorAuto,
// uses horizontal differencing for integers and the floating-point
// predictor for floats whenever tiles are compressed.
type Predictor int

// Predictors.
const (
	PredictorAuto Predictor = iota
	PredictorNone
	PredictorHorizontal    // TIFF Predictor 2, integer pixel types
	PredictorFloatingPoint // TIFF Predictor 3, float32 and float64
)

// Downsampling selects how each level is computed from the one above,
// 2x2 pixels into one. The zero value is Mean.
type Downsampling int

// Downsamplings.
const (
	// Mean averages the pixels of each 2x2 block that exist (odd edges
	// average 2 or 1 pixels): integers are rounded half up exactly, floats
	// are accumulated in float64.
	Mean Downsampling = iota
	// Nearest keeps the top-left pixel of each block.
	Nearest
	// Mode keeps the most frequent value of each block, per sample; ties go
	// to the first in the order top-left, top-right, bottom-left,
	// bottom-right. For label images.
	Mode
)

// BigTIFF says when the file is written as BigTIFF. The zero value decides
// at Close from the final offsets.
type BigTIFF int

// BigTIFF choices.
const (
	BigTIFFAuto BigTIFF = iota
	BigTIFFAlways
	BigTIFFNever
)

// Progress reports the tiles written so far. TotalTiles grows as images
// are added and as planes are given back (their tiles stored stay in the
// count: PlaneWriter.Abort), and shrinks by the planes Image.TruncateT
// drops that were not written.
type Progress struct {
	Tiles, TotalTiles int64 // tiles of every level written, and known so far
	Bytes             int64 // bytes of the file so far
}

// Options configures a Writer. The zero value works: 256x256 tiles, LZW
// with the matching predictor, levels halved until one fits in a tile,
// mean downsampling, one encoding goroutine per CPU, BigTIFF when needed.
type Options struct {
	// TileSize is the tile width and height, a multiple of 16; 0 means 256.
	// Images and levels smaller than a tile get tiles just large enough.
	TileSize int
	// Compression of every tile the writer encodes, but those of images
	// whose ImageSpec.Coding sets their own, and the levels computed below
	// a full resolution given encoded, which take its coding
	// (AddEncodedImage); the zero value is LZW.
	Compression Compression
	// Level is the Deflate or Zstd compression level; 0 is the codec's
	// default, 3 for both.
	Level int
	// Quality is the JPEG quality, 1 (smallest) to 100 (best), on the
	// scale of libjpeg, libvips (--Q) and GDAL; 0 means 75, the default
	// of those and of Java's ImageIO, which Bio-Formats and QuPath write
	// JPEG with (compress.DefaultJPEGQuality says why). Aperio scanners
	// write their slides at 70; 85 to 90 keep more fine texture for image
	// analysis, for about 1.4 to 1.8 times the size. Other compressions
	// take 0 only.
	Quality int
	// JPEGColor is the coding of RGB JPEG tiles; the zero value is
	// JPEGYCbCr420. Other compressions take the zero value only.
	JPEGColor JPEGColor
	// Predictor; the zero value picks one when tiles are compressed.
	Predictor Predictor
	// Levels is the number of resolutions including the full one; 0 halves
	// until the level fits in one tile.
	Levels int
	// Downsampling computes each level from the one above.
	Downsampling Downsampling
	// Workers encode tiles in parallel: 0 means GOMAXPROCS, 1 encodes in the
	// calling goroutine, and a negative value is ErrOption (the Workers of
	// packages source and compress take it for 0, as their options have
	// no error to give). A file written from one goroutine is byte-identical
	// at every value. Planes written from several goroutines share the
	// workers; with 1, each goroutine encodes its tiles itself, one tile
	// at a time across the writer.
	Workers int
	// BigTIFF says when to write BigTIFF.
	BigTIFF BigTIFF
	// Progress, if set, is told the tiles stored so far (stored, not
	// given: with Workers other than 1 the encoders may hold the last
	// tiles until Close, whose reports then cover them at once): by the calls
	// that write planes (PlaneWriter.Write, WritePlane, ReadPlanes...) as
	// they go, and the whole file's by a Close that commits it. It runs on
	// the goroutine of that call, one call at a time, with none of the
	// Writer's locks held: it may call the Writer's methods, Abort
	// included (a call on the plane being written is ErrPlane, as from
	// another goroutine). One report may cover several tiles, stored by
	// the encoding goroutines meanwhile; Tiles and Bytes never go back,
	// and TotalTiles only after a TruncateT. A plane's
	// last tile may be reported before the call writing it returns: a
	// Close from that report finds the plane missing, fails with
	// ErrMissingPlanes and discards the file. The committed file's report
	// comes last, whatever goroutine runs Progress then. A Progress that
	// panics panics the call that reported; a caller that recovers may go
	// on (later reports come). The plane that call was writing, if not
	// complete, is given back, to be written again (WritePlane, a new
	// PlaneWriter or EncodedPlaneWriter): the writer in use returns
	// ErrPlane from then on. One AddImageData was writing stays missing,
	// as its caller holds no Image to write it again: Close then fails
	// with ErrMissingPlanes.
	Progress func(Progress)
	// UUID is the file's OME UUID ("urn:uuid:..." or a bare UUID); empty
	// derives one from a hash of the encoded tiles and the metadata, so
	// equal input gives equal UUIDs, whatever the order, the bands and the
	// goroutines its planes were written in.
	UUID string
	// OME, if set, is a caller's OME-XML document for the file (see
	// ParseOME and OMEDocument, which says what the writer keeps of it and
	// what it writes itself). Its Image elements describe the images
	// added, in order: one more image is refused at AddImage, one fewer at
	// Close, and ImageSpec.OME must then be nil. A document without Image
	// elements gives the file the rest of its model (experimenters,
	// instruments, annotations...) and leaves the images to their specs.
	OME *OMEDocument
}

// Coding is how the tiles of an image are encoded: the fields of Options
// of the same names, which ImageSpec.Coding sets for one image. It takes
// the place of all five: a zero field means that field's default, not the
// Options' value (Coding{Compression: JPEG} is quality 75 whatever
// Options.Quality says). The zero value is LZW with the matching
// predictor.
type Coding struct {
	// Compression of the image's tiles; the zero value is LZW.
	Compression Compression
	// Level is the Deflate or Zstd compression level; 0 is the codec's
	// default, 3 for both.
	Level int
	// Quality is the JPEG quality, 1 to 100; 0 means 75, the default (see
	// Options.Quality for the choice). Other compressions take 0 only.
	Quality int
	// JPEGColor is the coding of RGB JPEG tiles; the zero value is
	// JPEGYCbCr420. Other compressions take the zero value only.
	JPEGColor JPEGColor
	// Predictor; the zero value picks one when tiles are compressed.
	Predictor Predictor
}

// coding returns the options' coding of tiles, every image's but those
// whose spec sets its own.
func (o Options) coding() Coding {
	return Coding{Compression: o.Compression, Level: o.Level, Quality: o.Quality, JPEGColor: o.JPEGColor, Predictor: o.Predictor}
}

// check checks the coding's fields against each other.
func (c Coding) check() error {
	if c.Compression < LZW || c.Compression > JPEG {
		return fmt.Errorf("%w: Compression %d", ErrOption, int(c.Compression))
	}
	if err := c.checkJPEG(); err != nil {
		return err
	}
	if c.Predictor < PredictorAuto || c.Predictor > PredictorFloatingPoint {
		return fmt.Errorf("%w: Predictor %d", ErrOption, int(c.Predictor))
	}
	if (c.Compression == None || c.Compression == JPEG) && (c.Predictor == PredictorHorizontal || c.Predictor == PredictorFloatingPoint) {
		return fmt.Errorf("%w: a predictor needs lossless compression, not %v", ErrOption, c.Compression)
	}
	return nil
}

// withDefaults fills zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if o.TileSize == 0 {
		o.TileSize = 256
	}
	if o.TileSize < 16 || o.TileSize%16 != 0 || o.TileSize > 1<<15 {
		return o, fmt.Errorf("%w: TileSize %d is not a multiple of 16 between 16 and 32768", ErrOption, o.TileSize)
	}
	if err := o.coding().check(); err != nil {
		return o, err
	}
	if o.Levels < 0 {
		return o, fmt.Errorf("%w: Levels %d is negative", ErrOption, o.Levels)
	}
	if o.Downsampling < Mean || o.Downsampling > Mode {
		return o, fmt.Errorf("%w: Downsampling %d", ErrOption, int(o.Downsampling))
	}
	if o.Workers < 0 {
		return o, fmt.Errorf("%w: Workers %d is negative", ErrOption, o.Workers)
	}
	if o.BigTIFF < BigTIFFAuto || o.BigTIFF > BigTIFFNever {
		return o, fmt.Errorf("%w: BigTIFF %d", ErrOption, int(o.BigTIFF))
	}
	if o.UUID != "" {
		uuid, err := normalizeUUID(o.UUID)
		if err != nil {
			return o, err
		}
		o.UUID = uuid
	}
	return o, nil
}

// checkJPEG checks the options that belong to JPEG: Quality and JPEGColor
// are JPEG's only, and Level is not.
func (o Coding) checkJPEG() error {
	switch {
	case o.Compression != JPEG && o.Quality != 0:
		return fmt.Errorf("%w: Quality %d is for JPEG, not %v (Level sets Deflate's and Zstd's)", ErrOption, o.Quality, o.Compression)
	case o.Compression != JPEG && o.JPEGColor != JPEGYCbCr420:
		return fmt.Errorf("%w: JPEGColor %v is for JPEG, not %v", ErrOption, o.JPEGColor, o.Compression)
	case o.Compression == JPEG && o.Level != 0:
		return fmt.Errorf("%w: Level %d is for Deflate and Zstd (JPEG takes Quality)", ErrOption, o.Level)
	case o.Quality < 0 || o.Quality > 100:
		return fmt.Errorf("%w: Quality %d is not in 1..100 (0 for the default, %d)", ErrOption, o.Quality, compress.DefaultJPEGQuality)
	case o.JPEGColor != JPEGYCbCr420 && o.JPEGColor != JPEGRGB:
		return fmt.Errorf("%w: JPEGColor %d", ErrOption, int(o.JPEGColor))
	}
	return nil
}

// byteOrder is the order of every file the writer produces, and of the
// pixel bytes it takes.
var byteOrder = binary.LittleEndian
