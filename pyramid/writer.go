package pyramid

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// Writer writes one pyramidal OME-TIFF file. Add images with AddImage, write
// their planes in any order, then Close.
//
// A Writer is used from one goroutine; it runs its own encoding goroutines
// (Options.Workers). After any error the writer is failed: every later call
// returns an error and Close discards the output.
type Writer struct {
	opts     Options
	h        iohandle.Handle
	tw       *tiff.Writer
	fileName string
	images   []*Image
	pipe     *compress.Pipeline // nil: tiles are stored unchanged, synchronously
	codec    compress.Codec
	seq      int64  // tiles submitted
	readBuf  []byte // ReadPlanes's buffer, shared by the images
	err      error  // first failure
	closed   bool

	// Touched by the consumer of encoded tiles, one goroutine at a time;
	// read by the writer's goroutine after the pipeline is closed.
	blocks     blockList // by sequence number
	content    hash.Hash // digest of the tiles' hashes, for the UUID; nil with Options.UUID
	tileHash   [8]byte   // one tile's XXH3, on its way to content
	tilesDone  int64
	totalTiles atomic.Int64
}

// outputBuffer is the output handle's buffer: tiles and directories reach
// the OS in writes of this size, so fewer than one write call per MiB.
const outputBuffer = 2 << 20

// Create writes a new OME-TIFF at path. The file appears there only when
// Close succeeds; until then it is a temporary file beside it, removed on
// failure or Abort.
func Create(path string, opts Options) (*Writer, error) {
	h, err := iohandle.Create(path, iohandle.Options{BufferSize: outputBuffer, Replace: opts.Replace, NoSync: opts.NoSync, DirectIO: opts.DirectIO})
	if err != nil {
		return nil, fmt.Errorf("pyramid: %w", err)
	}
	w, err := New(h, opts)
	if err != nil {
		_ = h.Abort()
		return nil, err
	}
	return w, nil
}

// New writes an OME-TIFF to h, which must be empty. Close commits h. When
// h knows its destination (it has a Path method, as *iohandle.File does),
// each TiffData names the file with its UUID; otherwise the TiffData
// elements carry no UUID and refer to the file they are in.
func New(h iohandle.Handle, opts Options) (*Writer, error) {
	if !hostLittleEndian {
		return nil, fmt.Errorf("%w: big-endian hosts are not supported", ErrOption)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	codec, err := newCodec(opts)
	if err != nil {
		return nil, err
	}
	version := map[BigTIFF]tiff.Version{BigTIFFAuto: tiff.Auto, BigTIFFAlways: tiff.BigTIFF, BigTIFFNever: tiff.Classic}[opts.BigTIFF]
	tw, err := tiff.NewWriter(h, tiff.Options{ByteOrder: byteOrder, Version: version})
	if err != nil {
		return nil, fmt.Errorf("pyramid: %w", err)
	}
	w := &Writer{opts: opts, h: h, tw: tw, codec: codec}
	if opts.UUID == "" {
		w.content = sha256.New()
	}
	if named, ok := h.(interface{ Path() string }); ok {
		w.fileName = filepath.Base(named.Path())
	}
	if opts.Compression != None {
		w.pipe = compress.NewPipeline(opts.Context, compress.Options{Workers: opts.Workers}, w.consume)
	}
	return w, nil
}

// newCodec returns the codec the options ask for.
func newCodec(opts Options) (compress.Codec, error) {
	var c compress.Codec
	var err error
	switch opts.Compression {
	case None:
		c = compress.None{}
	case LZW:
		c = compress.LZW{}
	case Deflate:
		c, err = compress.NewDeflate(opts.Level)
	case Zstd:
		c, err = compress.NewZstd(opts.Level)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOption, err)
	}
	return c, nil
}

// AddImage adds an image (an OME series) and returns it for writing its
// planes. Images are stored in the order they are added.
func (w *Writer) AddImage(spec ImageSpec) (*Image, error) {
	if err := w.usable(); err != nil {
		return nil, err
	}
	im, err := newImage(w, spec, len(w.images))
	if err != nil {
		return nil, err
	}
	w.images = append(w.images, im)
	w.totalTiles.Add(im.tilesPerPlane() * int64(im.spec.Planes()))
	return im, nil
}

// Stats returns the write calls the output received so far: with Create,
// the system calls of the file.
func (w *Writer) Stats() iohandle.Stats {
	if s, ok := w.h.(interface{ Stats() iohandle.Stats }); ok {
		return s.Stats()
	}
	return iohandle.Stats{}
}

// usable returns the error every call must return now, if any.
func (w *Writer) usable() error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, w.err)
	}
	return nil
}

// fail records the writer's first failure and returns it.
func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// submit queues one tile of a level of a plane, in file order.
func (w *Writer) submit(dir *levelDir, enc compress.Encoder, tile []byte) error {
	dir.seqs = append(dir.seqs, w.seq)
	w.seq++
	if w.pipe != nil {
		return w.pipe.Submit(enc, tile)
	}
	if err := w.opts.Context.Err(); err != nil {
		return err
	}
	return w.consume(w.seq-1, tile)
}

// tileBuffer returns a buffer for a tile of n bytes.
func (w *Writer) tileBuffer(n int, scratch *[]byte) []byte {
	if w.pipe != nil {
		return w.pipe.Buffer(n)
	}
	if cap(*scratch) < n {
		*scratch = make([]byte, n)
	}
	return (*scratch)[:n]
}

// consume stores one encoded tile. It runs on the pipeline's consumer, or
// synchronously when tiles are stored unchanged.
func (w *Writer) consume(_ int64, data []byte) error {
	b, err := w.tw.WriteBlock(data)
	if err != nil {
		return err
	}
	return w.record(b, data)
}

// record books one stored tile: its place, its fingerprint, the progress.
func (w *Writer) record(b tiff.Block, data []byte) error {
	var sum uint64
	if w.content != nil {
		// XXH3 runs at 86 GB/s here, CRC-32C at 24: for uncompressed
		// tiles, fingerprinting them costs little next to writing them.
		sum = xxh3.Hash(data)
	}
	return w.recordSum(b, sum)
}

// recordSum is record for a tile whose fingerprint, sum, is known (and
// ignored when the UUID is not made from the content).
func (w *Writer) recordSum(b tiff.Block, sum uint64) error {
	if w.opts.BigTIFF == BigTIFFNever && b.Offset+b.Size > math.MaxUint32 {
		return fmt.Errorf("%w: tiles pass 4 GiB and BigTIFF is Never", ErrTooLarge)
	}
	w.blocks.add(b, w.totalTiles.Load())
	if w.content != nil {
		binary.LittleEndian.PutUint64(w.tileHash[:], sum)
		w.content.Write(w.tileHash[:])
	}
	w.tilesDone++
	if w.opts.Progress != nil {
		w.opts.Progress(Progress{Tiles: w.tilesDone, TotalTiles: w.totalTiles.Load(), Bytes: w.h.Len()})
	}
	return nil
}

// Abort stops writing and discards the output. It is harmless after Close.
func (w *Writer) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	_ = w.stopPipeline() // the output is discarded whatever went wrong
	return w.h.Abort()
}

// stopPipeline ends the encoding goroutines and returns their error.
func (w *Writer) stopPipeline() error {
	if w.pipe == nil {
		return nil
	}
	err := w.pipe.Close()
	w.pipe = nil
	return err
}

// Close finishes the file: it waits for every tile, writes the directories
// of every plane and level with the OME-XML in the first, writes the
// header and commits the output. On any error the output is discarded.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	if err := w.finish(); err != nil {
		w.closed = true
		_ = w.h.Abort()
		return err
	}
	w.closed = true
	return nil
}

func (w *Writer) finish() error {
	pipeErr := w.stopPipeline()
	if w.err != nil {
		return w.err
	}
	if pipeErr != nil {
		return wrapLower(pipeErr)
	}
	if err := w.missingPlanes(); err != nil {
		return err
	}
	if len(w.images) == 0 {
		return fmt.Errorf("%w: no image added", ErrMissingPlanes)
	}
	if err := w.addDirectories(); err != nil {
		return err
	}
	if err := w.tw.Close(); err != nil {
		return wrapLower(err)
	}
	if err := w.h.Commit(); err != nil {
		return wrapLower(err)
	}
	return nil
}

// replaceInPlace overwrites every old in p with new, of the same length.
func replaceInPlace(p []byte, old, new string) {
	for i := bytes.Index(p, []byte(old)); i >= 0; {
		copy(p[i:], new)
		j := bytes.Index(p[i+len(old):], []byte(old))
		if j < 0 {
			return
		}
		i += len(old) + j
	}
}

// wrapLower maps errors of the layers below to this package's.
func wrapLower(err error) error {
	if errors.Is(err, tiff.ErrTooLarge) {
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	}
	if strings.HasPrefix(err.Error(), "pyramid: ") {
		return err
	}
	return fmt.Errorf("pyramid: %w", err)
}

// missingPlanes lists the planes never written completely.
func (w *Writer) missingPlanes() error {
	var missing []string
	count := 0
	for _, im := range w.images {
		for p, st := range im.planes {
			if st.done {
				continue
			}
			count++
			if len(missing) < 10 {
				z, c, t := im.spec.PlaneCoords(p)
				missing = append(missing, fmt.Sprintf("image %d z=%d c=%d t=%d", im.index, z, c, t))
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
	return fmt.Errorf("%w: %d missing: %s%s", ErrMissingPlanes, count, strings.Join(missing, ", "), more)
}

// addDirectories gives every level its tiles, puts the OME-XML in the first
// directory and adds the planes to the main chain: images in order, planes
// in DimensionOrder, each with its reduced levels as SubIFDs.
func (w *Writer) addDirectories() error {
	var ome []omeImage
	ifdIndex := 0
	for _, im := range w.images {
		ome = append(ome, omeImage{spec: im.spec, firstIFD: ifdIndex})
		ifdIndex += len(im.planes)
	}
	// Megabytes for thousands of planes: built once, fixed in place, and
	// handed to the directory without a copy.
	description := omeXML(ome, cmp.Or(w.opts.UUID, uuidPlaceholder), w.fileName)
	if w.opts.UUID == "" {
		w.content.Write(description)
		replaceInPlace(description, uuidPlaceholder, contentUUID(w.content.Sum(nil)))
	}
	description = append(description, 0) // ASCII fields end in NUL
	first := &w.images[0].planes[0].dirs[0].dir
	first.Fields = first.Fields.Clone() // the planes share the rest
	first.Fields.Add(ifd.Entry{Tag: tiff.TagImageDescription, Type: ifd.ASCII, Count: uint64(len(description)), Value: description})
	w.tw.Grow(ifdIndex)
	for _, im := range w.images {
		for p := range im.planes {
			st := &im.planes[p]
			for l := range st.dirs {
				d := &st.dirs[l]
				d.dir.Blocks = w.blocks.of(d.seqs)
			}
			if err := w.tw.AddDirectory(&st.dirs[0].dir); err != nil {
				return wrapLower(err)
			}
		}
	}
	return nil
}
