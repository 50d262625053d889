package source

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/tiff"
)

// Errors of this package. Errors from below (tiff, compress) keep their
// sentinels under errors.Is, behind this package's prefix.
var (
	// ErrSize reports an image whose band (its width times its block
	// height) is larger than Options.MaxBandBytes, or, when a file is
	// mapped, whose blocks are larger than 1 TiB each. A file refused as
	// a decompression bomb (Options.MaxDecodeRatio) is ErrBomb too.
	ErrSize = errors.New("source: image too large")
	// ErrBomb reports a file whose blocks share their data or store none,
	// and whose images decode to more than Options.MaxDecodeRatio times
	// its size: a decompression bomb, unless the file is trusted. It is
	// ErrSize too.
	ErrBomb error = bombError{}
	// ErrUnsupported reports what this package does not read: a page laid
	// out in a way the band reader does not handle (YCbCr in separate
	// planes, a codec or sample format it does not decode), a layout or
	// metadata New cannot map, tiles Encoded cannot copy through.
	ErrUnsupported = errors.New("source: unsupported layout")
	// ErrClosed reports a BandReader used after Close, or a zero one.
	ErrClosed = errors.New("source: band reader is closed")
)

// DefaultMaxDecodeRatio is Options.MaxDecodeRatio's default: a sound file,
// however well it compresses, stores each block once, apart from the
// others, and a sparse file of a few empty tiles beside its data stays
// within it.
const DefaultMaxDecodeRatio = 1024

// bombError is ErrBomb, which is ErrSize too.
type bombError struct{}

func (bombError) Error() string        { return "source: decompression bomb" }
func (bombError) Is(target error) bool { return target == ErrSize }

// DefaultMaxBandBytes is the largest band Options.MaxBandBytes allows by
// default: a 87,000-pixel-wide RGB image in 1024-row tiles, or 16-bit RGB
// of half that width.
const DefaultMaxBandBytes = 256 << 20

// Options tune the mapping of a file (New, Open: SkipUnsupported,
// DatasetDir) and its reading (a BandReader, WritePlanes: Workers,
// MaxBandBytes, Rows). The zero value is ready to use.
type Options struct {
	// Workers is the number of goroutines decoding blocks. 0 (or less)
	// means GOMAXPROCS; 1 decodes synchronously, in Next, with no
	// goroutine at all. The bands are the same at every setting.
	Workers int
	// MaxBandBytes bounds a band, and a decoded block: a page whose band
	// would be larger is ErrSize, refused before anything is allocated.
	// The reader holds the band handed out and, with several workers, the
	// bands decoded ahead of it: one, or more when a band has fewer blocks
	// than 2 × Workers, within 32 MiB (none beyond the first when a band
	// is larger). 0 (or less) means DefaultMaxBandBytes.
	MaxBandBytes int64
	// Rows is the height of a band: the most whole blocks (tiles or
	// strips) that fit in it, and at least one; 0 means one block. Bands
	// as high as the pyramid writer's tiles let it cut them into tiles
	// without copying them first.
	Rows int
	// MaxDecodeRatio bounds, as a multiple of the size of their files,
	// what images whose blocks share their data, overlap or store nothing
	// (sparse) may decode to, past 256 MiB: New refuses more (ErrBomb), as
	// a decompression bomb would cost in time and output what the file
	// cannot justify. 0 means DefaultMaxDecodeRatio; a negative value
	// means no bound, for trusted files (GDAL's SPARSE_OK rasters, mostly
	// empty). Images whose blocks are each stored once, apart, decode to
	// what their files hold, and have no such bound.
	MaxDecodeRatio int
	// SkipUnsupported makes New (and Open) leave out the images it cannot
	// map, and an OME-TIFF's document it cannot carry (the images then
	// keep their typed metadata only), listing them in File.Skipped,
	// instead of failing. A file whose OME-XML cannot be read at all, or
	// was cut short, is then read as a plain TIFF. A dataset's file not
	// opened for want of descriptors or memory still fails (see New).
	SkipUnsupported bool
	// DatasetDir is the directory New reads the other files of a
	// multi-file OME-TIFF dataset from: the TIFFs its TiffData elements
	// name, and the companion file a BinaryOnly element names, by their
	// names without a directory. "" refuses such a dataset
	// (ErrMultiFile); Open takes the opened file's directory.
	DatasetDir string
}

// maxStoredInFlight bounds the stored (compressed) bytes of the blocks
// submitted for decoding and not yet decoded: enough to keep the workers
// busy whatever the codec (a block larger than it goes alone).
const maxStoredInFlight = 16 << 20

// aheadBytes bounds the bands decoded ahead of the one handed out (a
// first one always is, with several workers, unless it is larger).
const aheadBytes = 32 << 20

// BlockFormat returns the layout of a page and how its blocks are stored,
// for compress.NewDecoder: the fields of the page, checked.
func BlockFormat(p *tiff.Page) (tiff.Layout, compress.BlockFormat, error) {
	if p == nil {
		return tiff.Layout{}, compress.BlockFormat{}, fmt.Errorf("%w: no page (nil)", ErrUnsupported)
	}
	for _, tag := range []uint16{tiff.TagImageDepth, tiff.TagTileDepth} {
		if depth, ok := p.Uint(tag); ok && depth > 1 {
			return tiff.Layout{}, compress.BlockFormat{}, fmt.Errorf("%w: %s %d of the page at %d (volumetric blocks, as tifffile writes with volumetric=True)",
				ErrUnsupported, tiff.TagName(tag), depth, p.Offset)
		}
	}
	l, err := p.Layout()
	if err != nil {
		return l, compress.BlockFormat{}, fmt.Errorf("source: %w", err)
	}
	f := compress.BlockFormat{
		Compression: l.Compression,
		Predictor:   l.Predictor,
		Format: compress.Format{
			BitsPerSample:   l.BitsPerSample,
			SamplesPerPixel: l.BlockSamples(),
			Float:           l.SampleFormat == tiff.SampleFormatFloat,
			ByteOrder:       p.Order(),
		},
		Width: l.BlockWidth, Height: l.BlockHeight,
		Photometric: l.Photometric,
		JPEGTables:  p.JPEGTables(),
	}
	if l.Photometric == tiff.PhotometricYCbCr && l.Planes > 1 {
		return l, f, fmt.Errorf("%w: YCbCr in separate planes (the page at %d)", ErrUnsupported, p.Offset)
	}
	return l, f, nil
}

// BandReader reads the rows of one page, top to bottom, in bands of the
// page's block height (its tile height or RowsPerStrip) or a multiple of
// it (Options.Rows): every pixel with its samples interleaved (the planes
// of a planar-separate page are interleaved too), samples little-endian,
// JPEG's YCbCr as RGB, samples of 1, 2 or 4 bits as a byte each (their
// values as stored: a palette page's indices, whose colours
// Image.WritePlanes writes), and half floats as they are, 2 bytes each. So a
// band's rows are those of the image's planes, interleaved, but for half
// floats, which Image.Spec takes as float32 (WritePlanes widens them). It
// decodes each block of the page once, and holds a few bands at a time,
// so its memory is O(width × band height) whatever the height of the
// page.
//
// Blocks are decoded in parallel by a compress.Pipeline, which hands them
// back in order. A BandReader is used by one goroutine. Its pipeline
// stops when Next returns io.EOF; Close stops it before that (and is
// harmless after), as does the end of the context NewBandReader was
// given. A reader dropped before either keeps its decoding goroutines
// (with several Workers) until the context ends, as a file not closed
// keeps its descriptor, or until the garbage collector finds the reader
// unreachable, which stops them as Close would: close every reader. Next,
// Read, WriteTo, Err and Close of a zero BandReader return ErrClosed; its
// Layout and RowBytes are zero.
type BandReader struct {
	// The decoding goroutines hold the state, never the BandReader, so
	// that a reader dropped can be collected, and its cleanup stop them.
	r *bandReader
}

// bandReader is the state of a BandReader.
type bandReader struct {
	page      *tiff.Page
	l         tiff.Layout
	dec       *compress.Decoder
	pixel     int // bytes of a pixel in a band
	sample    int // bytes of a sample
	rowBytes  int
	blockRows int    // block rows of one band
	bandRows  int    // rows of one band: blockRows × the block height
	perRow    int    // blocks of one block row: across × planes
	perBand   int    // blocks of a full band
	bands     int    // bands of the page
	fill      []byte // a sample of a sparse block: GDAL's no-data value, or nil for zeros
	ring      [][]byte
	pipe      *compress.Pipeline
	ctx       context.Context // the caller's
	cancel    context.CancelCauseFunc
	stopAfter func() bool

	// Owned by the caller's goroutine.
	next      int // band Next returns next
	submitted int // bands whose blocks are all submitted
	// wrap is what ReadBlock adds to a block's stored bytes (an NDPI
	// tile's JPEG header and EOI), so that the buffer asked for holds it.
	wrap    int
	cur     []byte
	closed  bool
	drained bool // every band was returned, and the pipeline stopped

	mu     sync.Mutex
	done   sync.Cond
	missed []int // blocks each ring slot still waits for
	err    error // the first error
}

// errStopped is the cause Close cancels the pipeline with.
var errStopped = errors.New("source: stopped")

// checkBits refuses samples the band reader cannot hand out whole.
func checkBits(page *tiff.Page, bits int) error {
	if bits%8 != 0 && bits != 1 && bits != 2 && bits != 4 {
		return fmt.Errorf("source: %w: BitsPerSample %d of the page at %d (whole bytes, or 1, 2 or 4 bits)", compress.ErrFormat, bits, page.Offset)
	}
	return nil
}

// newDecoder returns the decoder of a page's blocks, which BlockFormat
// described.
func newDecoder(page *tiff.Page, f compress.BlockFormat) (*compress.Decoder, error) {
	if err := checkBits(page, f.Format.BitsPerSample); err != nil {
		return nil, err
	}
	dec, err := compress.NewDecoder(f)
	if err != nil {
		return nil, fmt.Errorf("source: the page at %d: %w", page.Offset, err)
	}
	return dec, nil
}

// NewBandReader returns a reader of the rows of page, decoding on
// opts.Workers goroutines until ctx is done. A page whose layout is
// malformed or unsupported, or whose band is larger than opts.MaxBandBytes,
// is refused here, before anything is allocated.
func NewBandReader(ctx context.Context, page *tiff.Page, opts Options) (*BandReader, error) {
	r, err := newBandReader(ctx, page, opts)
	if err != nil {
		return nil, err
	}
	br := &BandReader{r: r}
	runtime.AddCleanup(br, func(r *bandReader) { r.cancel(errDropped) }, r)
	return br, nil
}

// errDropped is the cause a BandReader's cleanup cancels its pipeline
// with, when the reader was dropped without Close.
var errDropped = fmt.Errorf("%w: dropped without Close", ErrClosed)

// Layout returns the layout of the page read.
func (br *BandReader) Layout() tiff.Layout {
	defer runtime.KeepAlive(br) // as every method: its cleanup would fail the reader
	return br.state().Layout()
}

// RowBytes returns the bytes of a row of a band: Width × SamplesPerPixel
// × the bytes of a sample (BitsPerSample / 8, and 1 for samples of fewer
// than 8 bits).
func (br *BandReader) RowBytes() int {
	defer runtime.KeepAlive(br)
	return br.state().RowBytes()
}

// Next returns the next band: the rows from y on, as many as the band's
// length holds (the band height, fewer for the last band). The band is
// valid until the next call. After the last band it returns io.EOF; it
// returns the first error of a read, a decode, or the context, for good.
func (br *BandReader) Next() (y int, band []byte, err error) {
	defer runtime.KeepAlive(br) // its cleanup would stop the decoding under way
	return br.state().Next()
}

// Err returns the reader's first error, or nil (after Close too, when
// Close met none).
func (br *BandReader) Err() error {
	defer runtime.KeepAlive(br)
	return br.state().Err()
}

// Read reads the page's rows as one stream of bytes, band after band.
func (br *BandReader) Read(p []byte) (int, error) {
	defer runtime.KeepAlive(br)
	return br.state().Read(p)
}

// WriteTo writes the rest of the page's rows to w, band by band; io.Copy
// uses it.
func (br *BandReader) WriteTo(w io.Writer) (int64, error) {
	defer runtime.KeepAlive(br)
	return br.state().WriteTo(w)
}

// Close stops the decoding, waits for its goroutines to exit, and returns
// the first error of a read, a decode or the context, if any (reading
// every band before is not required). Later calls return nil.
func (br *BandReader) Close() error {
	defer runtime.KeepAlive(br)
	return br.state().Close()
}

// state returns the state of a BandReader, nil for a nil or zero one.
func (br *BandReader) state() *bandReader {
	if br == nil {
		return nil
	}
	return br.r
}

// newBandReader is NewBandReader, but for the cleanup.
func newBandReader(ctx context.Context, page *tiff.Page, opts Options) (*bandReader, error) {
	l, f, err := BlockFormat(page)
	if err != nil {
		return nil, err
	}
	if err := checkBits(page, l.BitsPerSample); err != nil {
		return nil, err
	}
	r := &bandReader{page: page, l: l, sample: max(1, l.BitsPerSample/8)} // 1-bit samples are decoded to bytes
	if nodata, ok := page.Text(tiff.TagGDALNoData); ok {
		r.fill = noDataSample(nodata, l)
	}
	r.pixel = l.SamplesPerPixel * r.sample
	limit := opts.MaxBandBytes
	if limit <= 0 {
		limit = DefaultMaxBandBytes
	}
	r.blockRows = min(max(1, opts.Rows/l.BlockHeight), l.BlocksDown)
	// Sizes are below 2^32, samples per pixel below 2^16 and a sample
	// below 2^4 bytes: the products are checked by division before they
	// are taken.
	r.bandRows = min(r.blockRows*l.BlockHeight, l.Height)
	blockPixels := int64(l.BlockWidth) * int64(l.BlockHeight)
	switch {
	case int64(l.Width) > limit/int64(r.bandRows)/int64(r.pixel),
		blockPixels > limit/int64(f.Format.SamplesPerPixel*r.sample):
		return nil, fmt.Errorf("%w: the page at %d has bands of %d x %d pixels (blocks of %d x %d) of %d bytes, more than %d bytes",
			ErrSize, page.Offset, l.Width, r.bandRows, l.BlockWidth, l.BlockHeight, r.pixel, limit)
	}
	if r.dec, err = newDecoder(page, f); err != nil {
		return nil, err
	}
	r.rowBytes = l.Width * r.pixel
	r.perRow = l.BlocksAcross * l.Planes
	r.perBand = r.perRow * r.blockRows
	r.bands = (l.BlocksDown + r.blockRows - 1) / r.blockRows
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	slots := 1
	if workers > 1 {
		// The band handed out, one decoding (more when a band has too few
		// blocks to keep every worker busy), within aheadBytes.
		bandBytes := r.bandRows * r.rowBytes
		slots = 1 + min(max(1, (2*workers+r.perBand-1)/r.perBand), aheadBytes/bandBytes)
	}
	r.ring = make([][]byte, min(slots, r.bands))
	r.missed = make([]int, len(r.ring))
	r.done.L = &r.mu
	r.ctx = ctx
	ctx, r.cancel = context.WithCancelCause(ctx)
	r.stopAfter = context.AfterFunc(ctx, func() { r.fail(context.Cause(ctx)) })
	// Every block is a job of its own (a decoded block is many times its
	// stored size). The stored bytes in flight, which the pipeline also
	// keeps for reuse, are bounded by the ring's decoded bytes, so that a
	// narrow page holds little (not the pipeline's default of several
	// MiB), and by maxStoredInFlight, so that a wide one does not keep
	// tens of MiB of stored blocks of every size.
	r.pipe = compress.NewPipeline(ctx, compress.Options{
		Workers:          workers,
		BatchBytes:       1,
		MaxInFlightBytes: min(len(r.ring)*r.bandRows*r.rowBytes, maxStoredInFlight),
	}, r.consume)
	return r, nil
}

// Layout is BandReader.Layout.
func (r *bandReader) Layout() tiff.Layout {
	if r == nil {
		return tiff.Layout{}
	}
	return r.l
}

// RowBytes is BandReader.RowBytes.
func (r *bandReader) RowBytes() int {
	if r == nil {
		return 0
	}
	return r.rowBytes
}

// Next is BandReader.Next.
func (r *bandReader) Next() (y int, band []byte, err error) {
	if r.unmade() {
		return 0, nil, errUnmade
	}
	if r.closed {
		return 0, nil, ErrClosed
	}
	if r.drained {
		return 0, nil, io.EOF
	}
	// A context done is seen here too: its callback runs on a goroutine
	// of its own, maybe after the bands still to come are decoded.
	if r.ctx.Err() != nil {
		r.fail(context.Cause(r.ctx))
	}
	if err := r.Err(); err != nil {
		return 0, nil, err
	}
	if r.next == r.bands {
		// Every band is read: the decoding goroutines end now, not at
		// Close.
		r.drained = true
		r.cancel(errStopped)
		_ = r.pipe.Close()
		r.stopAfter()
		return 0, nil, io.EOF
	}
	for r.submitted < r.bands && r.submitted < r.next+len(r.ring) {
		if err := r.submit(r.submitted); err != nil {
			r.fail(err)
			return 0, nil, r.Err()
		}
		r.submitted++
	}
	slot := r.next % len(r.ring)
	r.mu.Lock()
	for r.err == nil && r.missed[slot] > 0 {
		r.done.Wait()
	}
	err = r.err
	r.mu.Unlock()
	if err != nil {
		return 0, nil, err
	}
	y = r.next * r.bandRows
	rows := min(r.bandRows, r.l.Height-y)
	r.next++
	return y, r.ring[slot][:rows*r.rowBytes], nil
}

// Err is BandReader.Err.
func (r *bandReader) Err() error {
	if r.unmade() {
		return errUnmade
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(r.err, errStopped) || r.closed && errors.Is(r.err, compress.ErrClosed) {
		return nil // Close's own stop, or the end of the pipeline after the last band
	}
	return r.err
}

// errUnmade is the error of a zero BandReader's methods.
var errUnmade = fmt.Errorf("%w: a zero BandReader, not made by NewBandReader", ErrClosed)

// unmade reports a nil or zero BandReader.
func (r *bandReader) unmade() bool { return r == nil || r.page == nil }

// fail records the first error and wakes Next.
func (r *bandReader) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
	r.done.Broadcast()
}

// submit reads the blocks of band k and submits them for decoding into
// its ring slot, which is free: the band that held it was handed out
// before.
func (r *bandReader) submit(k int) error {
	slot := k % len(r.ring)
	if r.ring[slot] == nil {
		r.ring[slot] = make([]byte, r.bandRows*r.rowBytes)
	}
	first := k * r.blockRows
	last := min(first+r.blockRows, r.l.BlocksDown)
	r.mu.Lock()
	r.missed[slot] = (last - first) * r.perRow
	r.mu.Unlock()
	for down := first; down < last; down++ {
		y0 := (down - first) * r.l.BlockHeight
		for plane := range r.l.Planes {
			for across := range r.l.BlocksAcross {
				i := (plane*r.l.BlocksDown+down)*r.l.BlocksAcross + across
				b, err := r.page.Block(i)
				if err != nil {
					return fmt.Errorf("source: %w", err)
				}
				buf, err := r.page.ReadBlock(r.pipe.Buffer(int(b.Size) + r.wrap)[:0], i)
				if err != nil {
					return fmt.Errorf("source: %w", err)
				}
				r.wrap = max(r.wrap, len(buf)-int(b.Size))
				j := &blockJob{r: r, index: i, band: r.ring[slot][y0*r.rowBytes:], plane: plane,
					x0: across * r.l.BlockWidth, rows: r.l.BlockRows(down), imageRows: min(r.l.BlockHeight, r.l.Height-down*r.l.BlockHeight)}
				if err := r.pipe.Submit(j, buf); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// blockJob decodes one block in the pipeline, on a worker, straight into
// its place in its band: a strip of the whole width is decoded there, a
// tile or a plane of separate samples decoded aside and copied in. The
// pipeline's consumer then only counts the blocks done, so decoded blocks
// never wait in the pipeline and the copying runs on every worker.
type blockJob struct {
	r         *bandReader
	index     int
	band      []byte // the band from the block's first row on
	plane, x0 int
	rows      int // rows of the block as stored: the strip's, or the tile height
	imageRows int // of them in the image
}

// scratch holds the blocks decoded aside, one per worker at a time.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// Encode decodes the block into its band (the pipeline calls every
// transformation Encode) and returns dst unchanged. A block of 0 bytes is
// sparse: GDAL's no-data value when the page has one, zeros otherwise, as
// GDAL writes them and reads them, and tifffile too.
func (j *blockJob) Encode(dst, src []byte) ([]byte, error) {
	r := j.r
	if r.l.Planes == 1 && r.l.BlockWidth == r.l.Width { // a strip: its rows are the band's
		region := j.band[: j.imageRows*r.rowBytes : j.imageRows*r.rowBytes]
		if len(src) == 0 {
			fillSamples(region, r.fill)
			return dst, nil
		}
		out, err := r.dec.DecodeRows(region[:0], src, j.rows)
		if err == nil && len(out) > 0 && &out[0] != &region[0] {
			copy(region, out) // the decoder grew its own buffer
		}
		return dst, j.failed(err)
	}
	buf := scratch.Get().(*[]byte)
	defer scratch.Put(buf)
	var err error
	if len(src) == 0 {
		n := r.dec.BlockBytes(j.rows)
		*buf = slices.Grow((*buf)[:0], n)[:n]
		fillSamples(*buf, r.fill)
	} else {
		*buf, err = r.dec.DecodeRows((*buf)[:0], src, j.rows)
	}
	if err == nil {
		j.place(*buf)
	}
	return dst, j.failed(err)
}

// fillSamples fills b with copies of sample, or zeros when it is nil.
func fillSamples(b, sample []byte) {
	if len(sample) == 0 {
		clear(b)
		return
	}
	for i := 0; i+len(sample) <= len(b); i += len(sample) {
		copy(b[i:], sample)
	}
}

// noDataSample returns GDAL's no-data value (its text, as GDAL writes it)
// as a decoded sample of the layout: little-endian, of its type; nil (zeros)
// for a value the type does not hold, or for zero.
func noDataSample(text string, l tiff.Layout) []byte {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || v == 0 {
		return nil
	}
	size := max(1, l.BitsPerSample/8)
	out := make([]byte, 8)
	switch {
	case l.SampleFormat == tiff.SampleFormatFloat && size == 4:
		binary.LittleEndian.PutUint32(out, math.Float32bits(float32(v)))
	case l.SampleFormat == tiff.SampleFormatFloat && size == 8:
		binary.LittleEndian.PutUint64(out, math.Float64bits(v))
	case l.SampleFormat == tiff.SampleFormatFloat && size == 2:
		binary.LittleEndian.PutUint16(out, halfBits(v))
	case v != math.Trunc(v) || math.IsInf(v, 0):
		return nil
	case l.SampleFormat == tiff.SampleFormatInt:
		bits := 8 * size
		if v < -math.Ldexp(1, bits-1) || v >= math.Ldexp(1, bits-1) {
			return nil
		}
		binary.LittleEndian.PutUint64(out, uint64(int64(v)))
	default:
		if v < 0 || v >= math.Ldexp(1, 8*size) || l.BitsPerSample == 1 && v > 1 {
			return nil
		}
		binary.LittleEndian.PutUint64(out, uint64(v))
	}
	return out[:size]
}

// halfBits returns v as an IEEE half float as GDAL stores it in a 16-bit
// float band (CPLFloatToHalf): rounded toward zero, and infinite past the
// largest half. The sparse blocks then hold what the page's own no-data
// pixels hold (-9992 for -9999). GDAL reads such a band as float32, and
// its sparse blocks as v itself.
func halfBits(v float64) uint16 {
	var sign uint16
	if math.Signbit(v) {
		sign, v = 0x8000, -v
	}
	switch {
	case math.IsNaN(v):
		return 0x7e00
	case v >= 65536: // past 65504 + the last step: infinite
		return sign | 0x7c00
	case v == 0:
		return sign
	}
	_, e := math.Frexp(v) // v < 2^e
	if e-1 < -14 {        // subnormal, in units of 2^-24
		return sign | uint16(math.Ldexp(v, 24))
	}
	m := uint16(math.Ldexp(v, 11-e)) // 1024 to 2047
	return sign | uint16(e-1+15)<<10 | (m - 1024)
}

// failed records a decoding error, naming the block.
func (j *blockJob) failed(err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("source: block %d of the page at %d: %w", j.index, j.r.page.Offset, err)
	j.r.fail(err)
	return err
}

// place copies a decoded tile, or a block of one plane of separate
// samples, into its band.
func (j *blockJob) place(block []byte) {
	r := j.r
	width := min(r.l.BlockWidth, r.l.Width-j.x0)
	if r.l.Planes == 1 {
		blockRow := r.l.BlockWidth * r.pixel
		for y := range j.imageRows {
			copy(j.band[y*r.rowBytes+j.x0*r.pixel:][:width*r.pixel], block[y*blockRow:])
		}
		return
	}
	s := r.sample
	for y := range j.imageRows {
		dst := j.band[y*r.rowBytes+j.x0*r.pixel+j.plane*s:]
		src := block[y*r.l.BlockWidth*s:][:width*s]
		for x := range width {
			copy(dst[x*r.pixel:x*r.pixel+s], src[x*s:])
		}
	}
}

// consume counts block seq done in its band. Blocks are submitted band
// after band; every band but the last is full, so the band of a block
// follows from its sequence number.
func (r *bandReader) consume(seq int64, _ []byte) error {
	slot := int(seq) / r.perBand % len(r.ring)
	r.mu.Lock()
	r.missed[slot]--
	if r.missed[slot] == 0 {
		r.done.Broadcast()
	}
	r.mu.Unlock()
	return nil
}

// Read is BandReader.Read.
func (r *bandReader) Read(p []byte) (int, error) {
	if r.unmade() {
		return 0, errUnmade
	}
	if len(r.cur) == 0 {
		_, band, err := r.Next()
		if err != nil {
			return 0, err
		}
		r.cur = band
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// WriteTo is BandReader.WriteTo.
func (r *bandReader) WriteTo(w io.Writer) (int64, error) {
	if r.unmade() {
		return 0, errUnmade
	}
	var total int64
	for {
		if len(r.cur) == 0 {
			_, band, err := r.Next()
			if errors.Is(err, io.EOF) {
				return total, nil
			}
			if err != nil {
				return total, err
			}
			r.cur = band
		}
		n, err := w.Write(r.cur)
		total += int64(n)
		r.cur = r.cur[n:]
		if err != nil {
			return total, err
		}
	}
}

// Close is BandReader.Close.
func (r *bandReader) Close() error {
	if r.unmade() {
		return errUnmade
	}
	if r.closed {
		return nil
	}
	r.closed = true
	r.cancel(errStopped)
	err := r.pipe.Close()
	r.stopAfter()
	r.ring, r.cur = nil, nil
	r.mu.Lock()
	if r.err != nil {
		err = r.err
	}
	r.mu.Unlock()
	if errors.Is(err, errStopped) || errors.Is(err, compress.ErrClosed) {
		return nil
	}
	return err
}
