package pyramid

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors. Each message of an error this package makes starts with
// "pyramid: " once; test with errors.Is. Errors of the layers below (an
// I/O failure of the output, the cancellation of the writer's context) are
// returned as they are, as the standard library's writers return their
// writers' errors, or inside ErrClosed once they failed the writer;
// errors.Is finds them either way. One that this package has a sentinel
// for is described in its words and matches both: a file too large for
// classic TIFF is ErrTooLarge, a compression level the codec lacks is
// ErrOption (and compress.ErrLevel).
var (
	// ErrOption is an option the writer cannot honour.
	ErrOption = errors.New("pyramid: bad option")
	// ErrSize is a zero, negative or overflowing image size, or one whose
	// level has more tiles than a TIFF directory holds.
	ErrSize = errors.New("pyramid: bad image size")
	// ErrPixelType is an unsupported pixel type and samples combination.
	ErrPixelType = errors.New("pyramid: unsupported pixel type")
	// ErrMetadata is metadata that cannot be written: invalid UTF-8, a
	// character XML cannot hold, an unknown unit or dimension order.
	ErrMetadata = errors.New("pyramid: bad metadata")
	// ErrPlane is a plane index out of range, a plane written twice, a call
	// on a PlaneWriter while another goroutine's is under way, or a plane
	// of an image that ReadPlanes is writing.
	ErrPlane = errors.New("pyramid: bad plane")
	// ErrData is pixel data of the wrong length, rows past the end of a
	// plane, or an image.Image that cannot be converted (nil, a layout
	// other than the spec's, pixel slices short of its bounds, a palette
	// index without a colour).
	ErrData = errors.New("pyramid: bad pixel data")
	// ErrMissingPlanes is a Close before every plane was written; the
	// message lists them.
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
)

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

// Progress reports the tiles written so far. Total grows as images are
// added.
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
	// Compression of every tile; the zero value is LZW.
	Compression Compression
	// Level is the Deflate or Zstd compression level; 0 is the codec's
	// default.
	Level int
	// Predictor; the zero value picks one when tiles are compressed.
	Predictor Predictor
	// Levels is the number of resolutions including the full one; 0 halves
	// until the level fits in one tile.
	Levels int
	// Downsampling computes each level from the one above.
	Downsampling Downsampling
	// Workers encode tiles in parallel: 0 means GOMAXPROCS, 1 encodes in the
	// calling goroutine. A file written from one goroutine is byte-identical
	// at every value. Planes written from several goroutines share the
	// workers; with 1, each goroutine encodes its tiles itself, one tile
	// at a time across the writer.
	Workers int
	// BigTIFF says when to write BigTIFF.
	BigTIFF BigTIFF
	// Progress, if set, is called after each tile is written, from one
	// goroutine at a time. It must not call the Writer's methods other than
	// Stats.
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

// withDefaults fills zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if o.TileSize == 0 {
		o.TileSize = 256
	}
	if o.TileSize < 16 || o.TileSize%16 != 0 || o.TileSize > 1<<15 {
		return o, fmt.Errorf("%w: tile size %d is not a multiple of 16 between 16 and 32768", ErrOption, o.TileSize)
	}
	if o.Compression < LZW || o.Compression > Zstd {
		return o, fmt.Errorf("%w: compression %d", ErrOption, int(o.Compression))
	}
	if o.Predictor < PredictorAuto || o.Predictor > PredictorFloatingPoint {
		return o, fmt.Errorf("%w: predictor %d", ErrOption, int(o.Predictor))
	}
	if o.Compression == None && (o.Predictor == PredictorHorizontal || o.Predictor == PredictorFloatingPoint) {
		return o, fmt.Errorf("%w: a predictor needs compression", ErrOption)
	}
	if o.Levels < 0 {
		return o, fmt.Errorf("%w: Levels %d is negative", ErrOption, o.Levels)
	}
	if o.Downsampling < Mean || o.Downsampling > Mode {
		return o, fmt.Errorf("%w: downsampling %d", ErrOption, int(o.Downsampling))
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

// byteOrder is the order of every file the writer produces, and of the
// pixel bytes it takes.
var byteOrder = binary.LittleEndian
