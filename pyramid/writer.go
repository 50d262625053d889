package pyramid

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// Writer writes one pyramidal OME-TIFF file. Add images with AddImage, write
// their planes in any order, then Close. Every Writer must end with Close or
// Abort (defer Abort after New or Create: it does nothing after Close): its
// encoding goroutines (Options.Workers) and its output stay until then.
//
// # Concurrency
//
// A Writer and its Images may be used from several goroutines at once:
// AddImage, AddImageData, AddEncodedImage, Stats, Image.Spec,
// Image.PlaneComplete and Image.TruncateT, and the planes of any images
// (WritePlane, Plane and the PlaneWriter's Write and Abort, ReadPlanes,
// WriteSamples, EncodedPlane and the EncodedPlaneWriter's WriteTile, Write
// and Abort), each plane from one goroutine at a time. Every goroutine's
// rows are cut into tiles and reduced into levels on that goroutine; only
// handing tiles to the encoders and the output is serialized (and, with
// Workers 1, encoding).
// The pixels read back are the same
// whatever the goroutines, but where tiles lie in the file follows the order
// in which they are written: a file written from one goroutine is the same
// byte for byte at every Options.Workers, while one written from several
// may differ from run to run in its tile offsets (never in its pixels, its
// directories' order or its OME-XML, whose derived UUID is computed plane by
// plane at Close).
//
// What cannot be made safe is refused with an error, never corrupts the
// file: two goroutines on one plane at once (ErrPlane for the later call),
// ReadPlanes on an image whose planes another goroutine has started, a
// plane of an image ReadPlanes is writing, or a TruncateT that would drop
// a plane another goroutine has open (ErrPlane), and a call racing
// Close or Abort (ErrClosed if it comes after; if it came first, its plane
// may be missing and Close says so with ErrMissingPlanes). Options.Progress is called from one goroutine at a
// time, holding none of the Writer's locks: it may call its methods (a
// Close from it before every plane's call has returned fails, as it would
// from another goroutine).
//
// # Errors
//
// A call whose arguments are wrong (ErrOption, ErrSize, ErrPixelType,
// ErrMetadata, ErrPlane, ErrData) takes nothing and returns its error; so
// does ReadPlanes when its input fails, keeping the planes it read whole.
// The writer goes on, and Close succeeds once every plane is written. A
// failure of the writing itself fails the writer: an error of the output
// handle, of an encoder, the cancellation of the context given to
// CreateContext or NewContext, or ErrTooLarge. Close then returns that
// failure itself and discards the output; every other call, and Close
// again, returns ErrClosed wrapping it.
//
// # Closing
//
// Close and Abort end the writer; the first of them decides whether the
// file is committed. Later calls of either do nothing: Close returns nil if
// the file was committed and ErrClosed (wrapping the failure, if there was
// one) if it was not, and Abort returns nil, so that a deferred Abort after
// a successful Close is harmless.
//
// A Writer is made by New or Create. The methods of a zero Writer, like
// those of a zero Image, PlaneWriter or EncodedPlaneWriter, return
// ErrClosed.
type Writer struct {
	opts     Options
	ctx      context.Context // cancels the writing
	h        iohandle.Handle
	tw       *tiff.Writer
	fileName string
	codec    compress.Codec
	pipe     *compress.Pipeline // nil: tiles are stored unchanged, synchronously; set once by New
	hashed   bool               // the UUID derives from the content: tiles' fingerprints are kept
	// description, if set, is the file's OME-XML, given whole (a
	// dataset's part), instead of the one Close builds from the images.
	description []byte

	// mu serializes what the goroutines writing planes share: the images
	// and their plane bookkeeping, the tile sequence numbers and the
	// pipeline's producer side (Buffer, Submit, Close), the synchronous
	// path to the output, the read buffer and the writer's state.
	mu        sync.Mutex
	images    []*Image
	dirs      int64  // directories the images take, a plane and level each
	text      int64  // a bound below the images' OME-XML: specText's and leastXML's
	seq       int64  // tiles submitted
	readBuf   []byte // ReadPlanes's buffer, shared by the images; nil while one uses it
	err       error  // first failure
	closed    bool   // Close or Abort ran
	committed bool   // and the file is committed

	// codecs holds the codecs of images whose ImageSpec.Coding differs
	// from the options', one for each compression and level, so that a
	// file of many such images keeps one codec's encoder state, not one
	// an image. codecsMu guards it: images are added without mu.
	codecsMu sync.Mutex
	codecs   map[codecKey]compress.Codec

	// out serializes the use of the output handle: by the consumer of
	// encoded tiles (the pipeline's goroutine, or a plane's goroutine under
	// mu when tiles are stored unchanged), by Close and Abort, and by Stats.
	out        sync.Mutex
	blocks     blockList // by sequence number
	totalTiles atomic.Int64
	// tilesDone and bytesDone are the tiles stored and the output's
	// length after them, set under out and read by report without it,
	// so that reporting never waits for a tile being written.
	tilesDone, bytesDone atomic.Int64

	// reporting is held while Options.Progress runs, so that it runs on
	// one goroutine at a time; reported is what it was last told. Both are
	// taken with no other lock held: see report.
	reporting sync.Mutex
	reported  Progress
	final     atomic.Pointer[Progress] // the committed file's, which Close reports
}

// Create writes a new OME-TIFF at path, which must not exist: an existing
// file is an error wrapping fs.ErrExist. It is CreateContext with
// context.Background().
//
// The file appears at path, whole, only when Close succeeds. On Linux it
// has no name until then: it is an unnamed file (O_TMPFILE) in path's
// directory, which Close links to path, so that a crash leaves nothing
// behind. Where the system or the file system cannot do that, it is a
// hidden .NAME.<16 hex digits>.tmp beside path (NAME being path's base
// name), which Close renames to path and Abort or a failure removes;
// package iohandle tells the details.
//
// Create writes through an iohandle.File with an iohandle.BigBuffer
// buffer, and syncs the file and its directory at Close. To replace an
// existing file, skip the sync or write around the page cache, create the
// handle with iohandle.Create and the iohandle.Options that say so
// (Replace, NoSync, DirectIO; BufferSize iohandle.BigBuffer), and give it
// to New or NewContext, as the example shows.
func Create(path string, opts Options) (*Writer, error) {
	return CreateContext(context.Background(), path, opts)
}

// CreateContext is Create with a context that cancels the writing: once
// ctx is done, the writer fails with ctx's error, as NewContext says.
func CreateContext(ctx context.Context, path string, opts Options) (*Writer, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no path (\"\")", ErrOption)
	}
	h, err := iohandle.Create(path, iohandle.Options{BufferSize: iohandle.BigBuffer})
	if errors.Is(err, iohandle.ErrExist) {
		// A directory cannot be replaced by a file: Replace would fail at
		// Close, after the work.
		if info, serr := os.Stat(path); serr == nil && info.IsDir() {
			return nil, &describedError{msg: fmt.Sprintf("%s%s is a directory", prefix, path), errs: []error{err}}
		}
		return nil, &describedError{msg: fmt.Sprintf("%s%s exists (to replace it, give New a handle from iohandle.Create with Options.Replace)", prefix, path), errs: []error{err}}
	}
	if err != nil {
		return nil, err
	}
	w, err := NewContext(ctx, h, opts)
	if err != nil {
		_ = h.Abort()
		return nil, err
	}
	return w, nil
}

// New writes an OME-TIFF to h, which must be empty. It is NewContext with
// context.Background().
func New(h iohandle.Handle, opts Options) (*Writer, error) {
	return NewContext(context.Background(), h, opts)
}

// NewContext writes an OME-TIFF to h, which must be empty; ctx cancels the
// writing. Close commits h, and Abort or a failure of the writer aborts
// it; if NewContext itself fails, h is left to the caller. When h knows its
// destination (it has a Path method, as *iohandle.File does), each TiffData
// names the file with its UUID; otherwise, or when XML cannot carry the
// name (a control character, bytes not UTF-8), the TiffData elements carry
// no UUID and refer to the file they are in.
//
// Once ctx is done, the writing stops: the next tile written fails the
// writer with context.Cause(ctx) (ctx's error, unless it was cancelled
// with a cause), Close returns it, and the output is discarded. That holds
// while Close syncs the file, too, when h has a Sync method (as
// *iohandle.File does): only then does Close give the file its name, in
// one step. A context done after Close returned changes nothing. A nil ctx
// is an ErrOption. The context cannot end a call waiting for its caller's
// input: a ReadPlanes waiting in its reader's Read fails once that Read
// returns (close the reader to end it).
func NewContext(ctx context.Context, h iohandle.Handle, opts Options) (*Writer, error) {
	if !hostLittleEndian {
		return nil, fmt.Errorf("%w: big-endian hosts are not supported", ErrOption)
	}
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrOption)
	}
	if h == nil {
		return nil, fmt.Errorf("%w: no output handle (nil)", ErrOption)
	}
	if n := h.Len(); n != 0 {
		return nil, fmt.Errorf("%w: the output handle already holds %d bytes", ErrOption, n)
	}
	if opts.OME != nil && !opts.OME.parsed() {
		return nil, fmt.Errorf("%w: Options.OME is a zero OMEDocument, not one ParseOME returned", ErrOption)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	fileName := ""
	if named, ok := h.(interface{ Path() string }); ok {
		// Each TiffData's UUID names the file in the OME-XML. A name XML
		// 1.0 cannot carry (a control character, bytes not UTF-8) is left
		// out, as for a handle without a path: the TiffData elements then
		// refer to the file they are in, and the document stays XML.
		if name := filepath.Base(named.Path()); checkXMLText(name) == nil {
			fileName = name
		}
	}
	codec, err := newCodec(opts.coding())
	if err != nil {
		return nil, err
	}
	bigTIFF := map[BigTIFF]tiff.BigTIFF{BigTIFFAuto: tiff.BigTIFFAuto, BigTIFFAlways: tiff.BigTIFFAlways, BigTIFFNever: tiff.BigTIFFNever}[opts.BigTIFF]
	tw, err := tiff.NewWriter(h, tiff.Options{ByteOrder: byteOrder, BigTIFF: bigTIFF})
	if err != nil {
		return nil, wrapLower(err)
	}
	w := &Writer{opts: opts, ctx: ctx, h: h, tw: tw, codec: codec, hashed: opts.UUID == "", fileName: fileName}
	if opts.Compression != None {
		w.pipe = compress.NewPipeline(ctx, compress.Options{Workers: opts.Workers}, w.consume)
	}
	return w, nil
}

// codecKey is what a codec depends on: the compression and its level.
type codecKey struct {
	compression Compression
	level       int
}

// sharedCodec returns the writer's codec of coding's compression and
// level, made on first use.
func (w *Writer) sharedCodec(coding Coding) (compress.Codec, error) {
	w.codecsMu.Lock()
	defer w.codecsMu.Unlock()
	k := codecKey{coding.Compression, coding.Level}
	if c, ok := w.codecs[k]; ok {
		return c, nil
	}
	c, err := newCodec(coding)
	if err != nil {
		return nil, err
	}
	if w.codecs == nil {
		w.codecs = make(map[codecKey]compress.Codec)
	}
	w.codecs[k] = c
	return c, nil
}

// newCodec returns the codec a coding asks for; nil for JPEG, whose
// encoders depend on the samples and the tile width, and are made per
// image.
func newCodec(coding Coding) (compress.Codec, error) {
	if coding.Compression == JPEG {
		return nil, nil
	}
	c, err := compress.NewCodec(tiffCompression[coding.Compression], coding.Level)
	if err != nil {
		// "compress: invalid compression level 99: ..." names the option
		// once, under this package's prefix: "Level 99: ...".
		text := err.Error()
		if rest, ok := strings.CutPrefix(text, compress.ErrLevel.Error()+" "); ok {
			text = "Level " + rest
		}
		return nil, classify(ErrOption, text, err)
	}
	return c, nil
}

// AddImage adds an image (an OME series) and returns it for writing its
// planes. Images are stored in the order they are added.
func (w *Writer) AddImage(spec ImageSpec) (*Image, error) {
	return w.addImage(spec, false, nil)
}

// addImage adds an image, whose first levels are given encoded if encoded
// lists them; named gives an image without a name the name "image N", N
// its index.
func (w *Writer) addImage(spec ImageSpec, named bool, encoded []EncodedLevel) (*Image, error) {
	if err := w.usable(); err != nil {
		return nil, err
	}
	im, err := newImage(w, spec, encoded) // reads only what New set: no lock
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return nil, err
	}
	im.index = len(w.images)
	// Package tiff reads no file of more than tiff.MaxDirectories.
	if w.dirs+im.directories() > tiff.MaxDirectories {
		return nil, im.tooManyDirectories(w.dirs)
	}
	if err := w.bindOME(im); err != nil {
		return nil, err
	}
	// The OME-XML holds the images' text at least once, and the elements
	// of every image and plane: past MaxOMEXMLSize, Close would refuse the
	// file (omeDescription), so it is refused now, before any tile is
	// encoded (a writer of a million small images ran out of memory
	// before it got there). The least an image takes comes first, cheap
	// for an image of millions of planes, then its elements as the writer
	// makes them (Channels, Planes with their PlaneInfo, annotations...).
	text := specText(im.spec) + leastXML(im.spec)
	if w.text+text <= MaxOMEXMLSize {
		text = max(text, ownXML(im.spec))
	}
	if w.text+text > MaxOMEXMLSize {
		return nil, &OMEError{Err: ErrOMETooLarge, Detail: fmt.Sprintf("the images' OME-XML takes at least %d bytes (their elements as the writer makes them of the specs, "+
			"%d an image and %d a plane at the least), more than MaxOMEXMLSize (%d), which ParseOME reads", w.text+text, minWrittenImageXML, minPlaneXML, MaxOMEXMLSize)}
	}
	w.text += text
	w.dirs += im.directories()
	if _, callerNamed := im.spec.OME.name(); named && im.spec.Name == "" && !callerNamed {
		im.spec.Name = fmt.Sprintf("image %d", im.index)
	}
	w.images = append(w.images, im)
	w.totalTiles.Add(im.tilesPerPlane() * int64(im.spec.Planes()))
	return im, nil
}

// ownXML is the size of the OME-XML the writer makes of an image's spec
// (the elements of its caller's document left out, which Close counts):
// the image rendered alone, as the first of a file without a name, so
// that it is never more than the image takes in the file (its IDs and
// IFD numbers have no fewer digits there); 0 if it does not render.
func ownXML(s ImageSpec) int64 {
	s.OME = nil
	xml, _, err := omeXML([]omeImage{{spec: s}}, nil, "", "")
	if err != nil {
		return 0
	}
	return int64(len(xml) - len(emptyOMEXML))
}

// emptyOMEXML is the OME-XML of a file without images, which ownXML
// takes off.
var emptyOMEXML, _, _ = omeXML(nil, nil, "", "")

// minWrittenImageXML is the least OME-XML an Image element of a file takes
// but for its text and its Plane elements: its Pixels, a Channel and a
// TiffData (TestLeastXMLBound checks that none is smaller).
const minWrittenImageXML = 264

// leastXML is the least OME-XML an image of the spec takes but for its
// text: its Image element, and a Plane element a plane.
func leastXML(s ImageSpec) int64 {
	planes, ok := mul(max(s.SizeZ, 1), max(s.SizeC, 1), max(s.SizeT, 1))
	if !ok || planes > MaxOMEXMLSize/minPlaneXML {
		planes = MaxOMEXMLSize/minPlaneXML + 1
	}
	return int64(minWrittenImageXML + planes*minPlaneXML)
}

// specText is the text of a spec the OME-XML holds at least once: its
// name, description, channel names and fluors, and annotations.
func specText(s ImageSpec) int64 {
	n := int64(len(s.Name) + len(s.Description))
	for _, c := range s.Channels {
		n += int64(len(c.Name) + len(c.Fluor))
	}
	for _, a := range s.Annotations {
		n += int64(len(a.Key) + len(a.Value))
	}
	return n
}

// bindOME gives an image the Image element of Options.OME that describes
// it, if the document has images, and checks that it describes the
// image's pixels. The caller holds w.mu.
func (w *Writer) bindOME(im *Image) error {
	doc := w.opts.OME
	if doc == nil || doc.Images() == 0 {
		return nil
	}
	if im.spec.OME != nil {
		return fmt.Errorf("%w: ImageSpec.OME is set, and Options.OME has the images' elements", ErrOption)
	}
	if im.index >= doc.Images() {
		return &OMEError{Err: ErrOMEConflict, Element: "OME", Detail: fmt.Sprintf("Options.OME has %d Images; this is image %d", doc.Images(), im.index)}
	}
	m := doc.Image(im.index)
	if _, err := m.check(im.spec); err != nil {
		return err
	}
	im.spec.OME = m
	return nil
}

// Stats returns the write calls the output received so far: with Create,
// the system calls of the file. A handle given to New without a Stats
// method gives zero Stats. It is safe to call from any goroutine, at any
// time, but from a reader ReadPlanes copies straight into the output
// (ReadPlanes says when).
func (w *Writer) Stats() iohandle.Stats {
	if w == nil {
		return iohandle.Stats{}
	}
	counted, ok := w.h.(interface{ Stats() iohandle.Stats })
	if !ok {
		return iohandle.Stats{}
	}
	w.out.Lock()
	defer w.out.Unlock()
	return counted.Stats()
}

// usable returns the error every call must return now, if any.
func (w *Writer) usable() error {
	if w == nil {
		return errZero
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.usableLocked()
}

// usableLocked is usable for a caller holding w.mu.
func (w *Writer) usableLocked() error {
	switch {
	case w.h == nil:
		return errZero
	case w.err != nil:
		return closedBy(w.err)
	case w.closed:
		return ErrClosed
	}
	return nil
}

// fail records the writer's first failure, err as this package's error,
// and returns it. A call refused because the writer is closed already
// (ErrClosed) is not a new failure.
func (w *Writer) fail(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failLocked(err)
}

// failLocked is fail for a caller holding w.mu.
func (w *Writer) failLocked(err error) error {
	err = wrapLower(err)
	if errors.Is(err, ErrClosed) {
		return err
	}
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// tileBuffer returns a buffer for a tile of n bytes: the pipeline's, or
// scratch, the plane's own, when tiles are stored synchronously.
func (w *Writer) tileBuffer(n int, scratch *[]byte) []byte {
	if w.pipe != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.pipe.Buffer(n)
	}
	if cap(*scratch) < n {
		*scratch = make([]byte, n)
	}
	return (*scratch)[:n]
}

// submit queues one tile of a level of a plane, behind every tile submitted
// before it by any goroutine. Without a pipeline it stores the tile before
// it returns.
func (w *Writer) submit(dir *levelDir, enc compress.Encoder, tile []byte) error {
	err := w.queue(dir, enc, tile)
	if err == nil {
		w.report()
	}
	return err
}

// queue is submit but for the report: it takes w.mu, which report must
// not hold.
func (w *Writer) queue(dir *levelDir, enc compress.Encoder, tile []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	dir.seqs = append(dir.seqs, w.seq)
	w.seq++
	if w.pipe != nil {
		return w.pipe.Submit(enc, tile)
	}
	if w.ctx.Err() != nil {
		return context.Cause(w.ctx)
	}
	return w.consume(w.seq-1, tile)
}

// consume stores one encoded tile. It runs on the pipeline's consumer, or,
// when tiles are stored unchanged, on the goroutine that submits the tile,
// holding w.mu: one tile at a time, in sequence order.
func (w *Writer) consume(_ int64, data []byte) error {
	var sum uint64
	if w.hashed {
		// XXH3 is several times faster than writing the tile: the
		// fingerprint costs little even for uncompressed tiles.
		sum = xxh3.Hash(data)
	}
	w.out.Lock()
	defer w.out.Unlock()
	b, err := w.tw.WriteBlock(data)
	if err != nil {
		return err
	}
	return w.record(b, sum)
}

// record books one stored tile, b, with its fingerprint, sum (ignored when
// the UUID is not derived from the content). The caller holds w.out.
func (w *Writer) record(b tiff.Block, sum uint64) error {
	if w.opts.BigTIFF == BigTIFFNever && b.Offset+b.Size > math.MaxUint32 {
		return fmt.Errorf("%w: tiles pass 4 GiB and BigTIFF is Never (%w)", ErrTooLarge, tiff.ErrTooLarge) // as the tiff layer's refusal at Close
	}
	w.blocks.add(b, sum, w.hashed, w.totalTiles.Load())
	w.tilesDone.Add(1)
	w.bytesDone.Store(w.h.Len())
	return nil
}

// report tells Options.Progress the tiles stored so far, if they changed
// since it was last told. It runs on a goroutine writing planes (or
// closing the writer), holding none of the writer's locks, so that Progress
// may call any of the Writer's methods: a Progress called from the
// pipeline's consumer, or under w.mu, would wait for ever on a call that
// needs them. A goroutine that finds Progress running on another (or on
// itself, through a call from Progress) leaves the report to it: Progress
// may see several tiles at once, never a count that goes back. The one
// report owed whatever happens is the committed file's: the goroutine
// that ran Progress looks for it once it is done (after releasing
// reporting, as the one that found reporting held published the file
// before trying it, one of the two sees the other).
func (w *Writer) report() {
	if w.opts.Progress == nil {
		return
	}
	for w.reporting.TryLock() {
		p := w.callProgress()
		if f := w.final.Load(); f == nil || *f == p {
			return
		}
	}
}

// callProgress calls Progress with the tiles stored, if they are news,
// holding reporting, and releases it even if Progress panics: a caller
// that recovers would otherwise hear no report again, its committed
// file's included.
func (w *Writer) callProgress() Progress {
	defer w.reporting.Unlock()
	p := w.progress()
	if p != w.reported {
		w.reported = p
		w.opts.Progress(p)
	}
	return p
}

// progress returns the tiles stored so far; once the file is committed,
// the whole file's.
func (w *Writer) progress() Progress {
	if f := w.final.Load(); f != nil {
		return *f
	}
	return Progress{Tiles: w.tilesDone.Load(), TotalTiles: w.totalTiles.Load(), Bytes: w.bytesDone.Load()}
}

// Abort stops writing and discards the output. After Close or an earlier
// Abort it does nothing and returns nil; it never removes a committed file.
// It waits for what holds the output: a ReadPlanes that reads its planes
// straight into the output waits in its reader's Read (a stalled pipe)
// holding it, and Abort returns once that Read does; a handle whose Write
// stalls (an iohandle.Handle of the caller's on a hung network mount)
// holds the writer likewise, Abort and Close returning once it does.
func (w *Writer) Abort() error {
	if w == nil {
		return errZero
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.h == nil {
		return errZero
	}
	if w.closed {
		return nil
	}
	w.closed = true
	_ = w.stopPipeline() // the output is discarded whatever went wrong
	return w.discard()
}

// discard aborts the output handle. The caller holds w.mu.
func (w *Writer) discard() error {
	w.out.Lock()
	defer w.out.Unlock()
	w.releaseStreams()
	return w.h.Abort()
}

// releaseStreams drops the buffers kept for the next plane or read. The
// caller holds w.mu.
func (w *Writer) releaseStreams() {
	for _, im := range w.images {
		im.free = nil
	}
	w.readBuf = nil
}

// stopPipeline ends the encoding goroutines and returns their error. The
// caller holds w.mu.
func (w *Writer) stopPipeline() error {
	if w.pipe == nil {
		return nil
	}
	return w.pipe.Close()
}

// Close finishes the file: it waits for every tile, writes the directories
// of every plane and level with the OME-XML in the first, writes the
// header and commits the output. On any error the output is discarded:
// ErrMissingPlanes, a failure of the writing, or an OME-XML longer than
// MaxOMEXMLSize (an *OMEError of ErrOMETooLarge), which ParseOME would
// refuse. After an earlier Close or Abort it does nothing: it returns nil
// if the file was committed, and ErrClosed otherwise.
func (w *Writer) Close() error {
	if w == nil {
		return errZero
	}
	return w.close()
}

// close is Close; a Close that commits the file tells Progress the last
// tiles, after it releases w.mu.
func (w *Writer) close() error {
	w.mu.Lock()
	committed := false // by this call
	defer func() {
		w.mu.Unlock()
		if committed {
			w.report()
		}
	}()
	if w.h == nil {
		return errZero
	}
	if w.closed {
		if w.committed {
			return nil
		}
		return w.usableLocked()
	}
	w.closed = true
	if err := w.finish(); err != nil {
		if w.err == nil {
			w.err = err
		}
		_ = w.discard()
		return err
	}
	w.committed, committed = true, true
	return nil
}

// syncer is a handle that can sync the file before Commit names it, as
// iohandle.File does.
type syncer interface{ Sync() error }

// finish does Close's work. The caller holds w.mu; the pipeline's
// consumer, which takes w.out, is stopped first.
func (w *Writer) finish() error {
	pipeErr := w.stopPipeline()
	if w.err != nil {
		return w.err
	}
	if pipeErr != nil {
		return wrapLower(pipeErr)
	}
	if w.ctx.Err() != nil { // tiles stored unchanged have no pipeline to say it
		return context.Cause(w.ctx)
	}
	if err := w.missingPlanes(); err != nil {
		return err
	}
	if len(w.images) == 0 {
		return fmt.Errorf("%w: no image added", ErrMissingPlanes)
	}
	w.out.Lock()
	defer w.out.Unlock()
	w.releaseStreams()
	if err := w.addDirectories(); err != nil {
		return err
	}
	if err := w.tw.Close(); err != nil {
		return wrapLower(err)
	}
	final := w.progress()
	final.Bytes = w.h.Len() // with the directories; not to be asked after Commit
	// The sync can take seconds: a context done meanwhile (a program's
	// signal) still discards the file, which Commit then names at once.
	if s, ok := w.h.(syncer); ok {
		if w.ctx.Err() == nil {
			if err := s.Sync(); err != nil {
				return wrapLower(err)
			}
		}
		if w.ctx.Err() != nil {
			return context.Cause(w.ctx)
		}
	}
	if err := w.h.Commit(); err != nil {
		return wrapLower(err)
	}
	w.final.Store(&final)
	return nil
}

// missingPlanes lists the planes never written completely.
func (w *Writer) missingPlanes() error {
	var missing []string
	count := 0
	for _, im := range w.images {
		for p := range im.chain() {
			st := &im.planes[p]
			if st.done {
				continue
			}
			count++
			if len(missing) < 10 {
				image, z, c, t := im.planeAt(p)
				open := ""
				if st.dirs != nil {
					open = " (started, not complete)"
				}
				missing = append(missing, fmt.Sprintf("image %d z=%d c=%d t=%d%s", image, z, c, t, open))
			}
		}
	}
	if count == 0 {
		return nil
	}
	more := ""
	if count > len(missing) {
		more = fmt.Sprintf(" and %d more", count-len(missing))
	}
	return fmt.Errorf("%w: %d missing: %s%s (the output is discarded)", ErrMissingPlanes, count, strings.Join(missing, ", "), more)
}

// addDirectories gives every level its tiles, puts the OME-XML in the first
// directory and adds the planes to the main chain: images in order, planes
// in DimensionOrder, each with its reduced levels as SubIFDs.
func (w *Writer) addDirectories() error {
	description := w.description
	if description == nil {
		var err error
		if description, err = w.omeDescription(); err != nil {
			return err
		}
	}
	description = append(description, 0) // ASCII fields end in NUL
	first := &w.images[0].planes[0].dirs[0].dir
	first.Fields = first.Fields.Clone() // the planes share the rest
	first.Fields.Add(ifd.Entry{Tag: tiff.TagImageDescription, Type: ifd.ASCII, Count: uint64(len(description)), Value: description})
	for _, im := range w.images {
		for p := range im.chain() {
			st := &im.planes[p]
			for l := range st.dirs {
				d := &st.dirs[l]
				// One offset a tile, whatever went wrong before: a
				// directory of more or fewer is a corrupt file.
				if want := im.levels[l].tiles(); len(d.seqs) != want {
					image, z, c, t := im.planeAt(p)
					return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d has %d tiles stored at level %d, not %d", ErrData, z, c, t, image, len(d.seqs), l, want)
				}
				d.dir.Blocks = w.blocks.of(d.seqs)
			}
			if err := w.tw.AddDirectory(&st.dirs[0].dir); err != nil {
				return wrapLower(err)
			}
		}
	}
	return nil
}

// omeDescription builds the OME-XML of the file from its images, with its
// UUID, derived from the content unless Options.UUID gives it. Megabytes
// for thousands of planes: built once, fixed in place, and handed to the
// directory without a copy.
func (w *Writer) omeDescription() ([]byte, error) {
	var ome []omeImage
	ifdIndex := 0
	for _, im := range w.images {
		ome = append(ome, omeImage{spec: im.written(), firstIFD: ifdIndex})
		ifdIndex += im.kept()
	}
	description, uuidAt, err := omeXML(ome, w.opts.OME, cmp.Or(w.opts.UUID, uuidPlaceholder), w.fileName)
	if err != nil {
		return nil, err
	}
	if len(description) > MaxOMEXMLSize {
		// ParseOME, and the readers of this module, would refuse the
		// file's metadata, as NewDataset refuses such a plan.
		return nil, &OMEError{Err: ErrOMETooLarge, Detail: fmt.Sprintf("the file's OME-XML would be %d bytes, more than MaxOMEXMLSize (%d), which ParseOME reads",
			len(description), MaxOMEXMLSize)}
	}
	if w.hashed {
		uuid := contentUUID(w.contentDigest(description))
		for _, at := range uuidAt {
			copy(description[at:], uuid)
		}
	}
	return description, nil
}

// contentDigest hashes the fingerprints of every tile and then the
// OME-XML, description (with the UUID's placeholder). The tiles go plane by
// plane in the order of the main chain, each plane's in its image's
// digestOrder: the digest does not depend on the order the planes were
// written in, their bands, the goroutines that wrote them, or whether
// their tiles were computed or given encoded.
func (w *Writer) contentDigest(description []byte) []byte {
	h := sha256.New()
	var buf [8]byte
	for _, im := range w.images {
		order := im.digestOrder()
		for p := range im.chain() {
			dirs := im.planes[p].dirs
			for _, tr := range order {
				across := im.levels[tr.level].across
				for _, seq := range dirs[tr.level].seqs[tr.row*across : (tr.row+1)*across] {
					binary.LittleEndian.PutUint64(buf[:], w.blocks.sum(seq))
					h.Write(buf[:])
				}
			}
		}
	}
	h.Write(description)
	return h.Sum(nil)
}
