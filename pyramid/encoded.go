package pyramid

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/tiff"
)

// EncodedLevel is one resolution level of an image whose tiles the caller
// gives already encoded (AddEncodedImage): the level's size and how its
// tiles are stored.
type EncodedLevel struct {
	// Width and Height are the level's size in pixels. For the full
	// resolution, 0 x 0 means the image's size.
	Width, Height int
	// TileCoding is how the level's tiles are stored.
	TileCoding
	// stored is the samples of the page EncodedLevelOf read the level
	// from, which the image's spec must have; zero when not read so.
	stored storedSamples
	// quality is the JPEG quality of the page's first tile, for tiles
	// that hold their own tables (no JPEGTables); 0 when not read so.
	quality int
}

// storedSamples is what a page says of its samples.
type storedSamples struct {
	bits, samples int
	format        uint16 // SampleFormat, when the page says it: 0 when not
}

// check reports whether the spec has the samples stored.
func (st storedSamples) check(spec ImageSpec) error {
	if st.bits == 0 {
		return nil
	}
	samples, typ := max(spec.SamplesPerPixel, 1), spec.PixelType
	if st.bits != 8*typ.Size() || st.samples != samples || (st.format != 0 && st.format != pixelTypes[typ].sampleFormat) {
		format := ""
		if st.format != 0 {
			format = fmt.Sprintf(", SampleFormat %d", st.format)
		}
		return fmt.Errorf("%w: its page has %s of %d bits%s; the image's spec %d of %v (PixelType, SamplesPerPixel)",
			ErrOption, plural(st.samples, "sample"), st.bits, format, samples, typ)
	}
	return nil
}

// AddEncodedImage adds an image whose tiles are given already encoded, as
// a converter or a scanner's pipeline holds them: they are copied into the
// file byte for byte, with none of the cost or the loss of encoding them
// again. levels lists the levels given encoded, full resolution first;
// each plane's tiles are given through EncodedPlane, and the directory of
// each level carries its TileCoding (JPEGTables and the YCbCr fields of
// JPEG tiles included), so that every reader decodes them as their source
// did.
//
// With one level, only the full resolution is given encoded, and the
// writer computes the reduced levels as for AddImage (Options.TileSize,
// Levels and Downsampling) from the plane's rows, which
// EncodedPlaneWriter.Write takes: decode them from the same tiles. They
// are coded as ImageSpec.Coding says, else as the level given is, so that
// the pyramid has one codec: its compression and predictor, and for JPEG
// the quality its JPEGTables were made at (for a level of EncodedLevelOf
// whose tiles hold their own tables, its first tile's; else
// Options.Quality), RGB-coded or YCbCr 4:2:0 as it is RGB or YCbCr. A
// writer of uncompressed tiles (Options.Compression None) encodes none: it refuses a compressed level with levels to
// compute (ErrOption). With several, every level is given encoded and
// nothing is computed or encoded; they must form an OME pyramid: each level the one
// above divided by the same integer factor in X and Y (rounded either way:
// 2 for libvips's pyramids, 4 for Aperio's), all with the same
// compression. Their tiles may differ in size, as readers take each
// level's own (this writer and tifffile shrink the tiles of levels smaller
// than one). Options.Levels does not apply then.
//
// Each level's TileCoding must suit the spec's samples (JPEG takes Uint8
// of 1 or 3 samples; a predictor, lossless compression; YCbCr, JPEG), and
// its tiles must be multiples of 16 pixels a side, and a level read by
// EncodedLevelOf must have the spec's samples; otherwise it returns
// ErrOption naming the level. That the tiles decode as their coding says,
// to the spec's samples, is the caller's to ensure: the writer does not
// decode them.
func (w *Writer) AddEncodedImage(spec ImageSpec, levels ...EncodedLevel) (*Image, error) {
	if len(levels) == 0 {
		if err := w.usable(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: AddEncodedImage without levels (AddImage adds an image the writer encodes)", ErrOption)
	}
	return w.addImage(spec, false, levels)
}

// imageLevels returns the levels of an image and the factor between
// their sizes: the writer's, halved until one tile or Options.Levels, with
// the full resolution tiled as given when it is given encoded; or every
// level as given.
func imageLevels(spec ImageSpec, opts Options, encoded []EncodedLevel) ([]levelGeom, int, error) {
	if len(encoded) == 1 || len(encoded) == 0 {
		// The level given is checked first: CheckEncodedLevels takes its
		// tile size for the computed levels'.
		var first levelGeom
		if len(encoded) == 1 {
			var err error
			if first, err = encodedGeom(spec, 0, encoded[0]); err != nil {
				return nil, 0, err
			}
		}
		levels, err := pyramidLevels(spec.SizeX, spec.SizeY, opts.TileSize, opts.Levels)
		if err != nil || len(encoded) == 0 {
			return levels, 2, err
		}
		levels[0] = first
		return levels, 2, nil
	}
	levels := make([]levelGeom, len(encoded))
	for l, e := range encoded {
		var err error
		if levels[l], err = encodedGeom(spec, l, e); err != nil {
			return nil, 0, err
		}
		if l > 0 && e.Compression != encoded[0].Compression {
			return nil, 0, fmt.Errorf("%w: encoded level %d has %v tiles, level 0 %v tiles (the levels of a pyramid share their codec)",
				ErrOption, l, e.Compression, encoded[0].Compression)
		}
	}
	factor := int(math.Round(float64(levels[0].width) / float64(levels[1].width)))
	for l := 1; l < len(levels); l++ {
		up, g := levels[l-1], levels[l]
		if factor < 2 || !divided(up.width, g.width, factor) || !divided(up.height, g.height, factor) {
			return nil, 0, fmt.Errorf("%w: encoded level %d is %d x %d, level %d %d x %d: not one integer factor (at least 2) between all levels, equal in X and Y",
				ErrOption, l, g.width, g.height, l-1, up.width, up.height)
		}
		if g.width == up.width && g.height == up.height { // 1 x 1 divided, rounded up, is 1 x 1 again
			return nil, 0, fmt.Errorf("%w: encoded level %d is %d x %d, as level %d is: a level is smaller than the one above it",
				ErrOption, l, g.width, g.height, l-1)
		}
	}
	return levels, factor, nil
}

// divided reports whether small is large divided by factor, rounded down
// or up.
func divided(large, small, factor int) bool {
	return small == large/factor || small == ceilDiv(large, factor)
}

// encodedGeom checks level l, given encoded, against spec, and returns
// its geometry: tiled as its coding says.
func encodedGeom(spec ImageSpec, l int, e EncodedLevel) (levelGeom, error) {
	w, h := e.Width, e.Height
	if l == 0 && w == 0 && h == 0 {
		w, h = spec.SizeX, spec.SizeY
	}
	switch {
	case l == 0 && (w != spec.SizeX || h != spec.SizeY):
		return levelGeom{}, fmt.Errorf("%w: encoded level 0 is %d x %d, the image %d x %d", ErrSize, w, h, spec.SizeX, spec.SizeY)
	case w <= 0 || h <= 0 || w > math.MaxUint32 || h > math.MaxUint32:
		return levelGeom{}, fmt.Errorf("%w: encoded level %d is %d x %d", ErrSize, l, w, h)
	}
	if err := e.check(spec); err != nil {
		return levelGeom{}, within(err, fmt.Sprintf("encoded level %d", l))
	}
	if err := e.stored.check(spec); err != nil {
		return levelGeom{}, within(err, fmt.Sprintf("encoded level %d", l))
	}
	g := levelGeom{width: w, height: h, tileW: e.TileWidth, tileH: e.TileHeight}
	g.across, g.down = ceilDiv(w, g.tileW), ceilDiv(h, g.tileH)
	if g.tiles() > math.MaxUint32 {
		return levelGeom{}, fmt.Errorf("%w: encoded level %d, %d x %d in tiles of %d x %d, is %d tiles, more than a TIFF directory holds (2^32-1)",
			ErrSize, l, w, h, g.tileW, g.tileH, g.tiles())
	}
	return g, nil
}

// digestOrder is the order contentDigest hashes a plane's tiles in: level
// after level, each in the order of its tiles. It is the same for an image
// whose levels the writer computes and for one given encoded, so that a
// file of the same tiles and metadata gets the same UUID whichever way its
// tiles came (a file converted again, its tiles copied through).
func (im *Image) digestOrder() []tileRow {
	var order []tileRow
	for l, g := range im.levels {
		for row := range g.down {
			order = append(order, tileRow{l, row})
		}
	}
	return order
}

// EncodedPlaneWriter writes one plane of an image added with
// AddEncodedImage: the tiles of its levels given encoded, copied into the
// file as they are, and, when the writer computes the reduced levels, the
// plane's rows to compute them from. The plane is complete when every
// tile and every row is written.
//
// Tiles and rows may come in any interleaving; the file holds them in the
// order they came, so a converter that gives a row of tiles, then their
// rows, then the next row of tiles, writes the same file every time. An
// EncodedPlaneWriter is used by one goroutine at a time, like a
// PlaneWriter: a call made while another goroutine's is under way takes
// nothing and returns ErrPlane.
type EncodedPlaneWriter struct {
	im    *Image
	st    *planeState
	index int
	rows  *PlaneWriter // nil when every level is given encoded
	given []int        // tiles given, per level given encoded
	due   int64        // tiles still due, all levels
	busy  atomic.Bool  // a call is under way

	abandoned bool // given back by Abort
}

// EncodedPlane starts plane (z, c, t) of an image added with
// AddEncodedImage. Each plane is written once (unless given back by
// EncodedPlaneWriter.Abort, to start again); several planes may be open
// at once and written from different goroutines. Plane, ReadPlanes and
// WritePlane refuse the planes of such an image, and EncodedPlane those of
// other images (ErrPlane).
func (im *Image) EncodedPlane(z, c, t int) (*EncodedPlaneWriter, error) {
	if im == nil {
		return nil, errZero
	}
	p, err := im.planeIndex(z, c, t)
	rows, err := im.openPlane(p, err, openEncoded)
	if err != nil {
		return nil, err
	}
	ep := &EncodedPlaneWriter{im: im, st: &im.planes[p], index: p, rows: rows, given: make([]int, im.encoded)}
	for _, g := range im.levels[:im.encoded] {
		ep.due += int64(g.tiles())
	}
	return ep, nil
}

// WriteTile writes the next tile of level (0 for the full resolution) as
// it is stored: tiles of a level come in the order of TileOffsets, left
// to right, top to bottom, each whole (edge tiles too, as TIFF stores
// them). tile is not kept after WriteTile returns. A level not given
// encoded, a tile past the level's last, an empty tile, an uncompressed
// one of other than TileWidth × TileHeight × the pixel's bytes, or a
// compressed one that does not start as its codec's streams do
// (compress.CheckFraming: read from a wrong offset, or of a few bytes) is
// ErrData, and nothing is written. Tiles are not decoded: one cut short
// after its first bytes, or damaged within, is written as it is.
func (ep *EncodedPlaneWriter) WriteTile(level int, tile []byte) error {
	if ep == nil || ep.im == nil {
		return errZero
	}
	if !ep.busy.CompareAndSwap(false, true) {
		return ep.im.busyError(ep.index)
	}
	defer ep.busy.Store(false)
	defer ep.giveBackOnPanic()
	im, w := ep.im, ep.im.w
	if err := w.usable(); err != nil {
		return err
	}
	switch {
	case ep.abandoned:
		return ep.abandonedError()
	case level < 0 || level >= im.encoded:
		return fmt.Errorf("%w: level %d is not given encoded (levels 0 to %d are)", ErrData, level, im.encoded-1)
	case ep.given[level] == im.levels[level].tiles():
		return fmt.Errorf("%w: level %d has %d tiles, all written", ErrData, level, im.levels[level].tiles())
	case len(tile) == 0:
		return fmt.Errorf("%w: tile %d of level %d is empty", ErrData, ep.given[level], level)
	case im.rawTile[level] > 0 && len(tile) != im.rawTile[level]:
		return fmt.Errorf("%w: uncompressed tile %d of level %d holds %d bytes, not %d", ErrData, ep.given[level], level, len(tile), im.rawTile[level])
	}
	if err := compress.CheckFraming(im.given[level], tile); err != nil {
		return fmt.Errorf("%w: tile %d of level %d: %w", ErrData, ep.given[level], level, err)
	}
	if im.given[level] == tiff.CompressionJPEG {
		g := im.levels[level]
		if err := compress.CheckJPEGTile(tile, g.tileW, g.tileH, im.spec.SamplesPerPixel); err != nil {
			return fmt.Errorf("%w: tile %d of level %d: %w", ErrData, ep.given[level], level, err)
		}
	}
	data := tile
	if w.pipe != nil { // the pipeline keeps the tile until its turn comes
		data = w.tileBuffer(len(tile), nil)
		copy(data, tile)
	}
	if err := w.submit(&ep.st.dirs[level], nil, data); err != nil {
		return w.fail(err)
	}
	ep.given[level]++
	if ep.due--; ep.due == 0 {
		w.mu.Lock()
		ep.st.tilesDue = false
		ep.st.settle()
		w.mu.Unlock()
	}
	return nil
}

// Write takes the next len(p) bytes of the plane's rows, as
// PlaneWriter.Write does, to compute the reduced levels from. An image
// whose levels are all given encoded takes no rows (ErrData).
func (ep *EncodedPlaneWriter) Write(p []byte) (int, error) {
	if ep == nil || ep.im == nil {
		return 0, errZero
	}
	if !ep.busy.CompareAndSwap(false, true) {
		return 0, ep.im.busyError(ep.index)
	}
	defer ep.busy.Store(false)
	if ep.rows == nil || ep.abandoned {
		if err := ep.im.w.usable(); err != nil {
			return 0, err
		}
		if ep.abandoned {
			return 0, ep.abandonedError()
		}
		return 0, fmt.Errorf("%w: every level of image %d is given encoded: its planes take no rows", ErrData, ep.im.index)
	}
	defer ep.giveBackOnPanic()
	return ep.rows.Write(p)
}

// giveBackOnPanic, deferred by WriteTile and Write, gives the plane back
// when they panic (a Progress that panics), as Abort does, and panics
// again: a caller that recovers writes the plane again from a new
// EncodedPlaneWriter, and this one returns ErrPlane (writing on through
// it stored a tile twice). The rows' PlaneWriter may have given it back
// already.
func (ep *EncodedPlaneWriter) giveBackOnPanic() {
	r := recover()
	if r == nil {
		return
	}
	switch {
	case ep.abandoned:
	case ep.rows != nil && ep.rows.abandoned:
		ep.abandoned = true
	case ep.due > 0 || ep.rows != nil && ep.rows.written < ep.rows.size:
		var s *planeStream
		if ep.rows != nil {
			s, ep.rows.stream, ep.rows.abandoned = ep.rows.stream, nil, true
		}
		ep.im.giveBack(ep.st, s)
		ep.abandoned = true
	}
	panic(r)
}

// Close reports whether the plane is complete: every tile of the levels
// given encoded, and every row when the image takes rows (else ErrData,
// saying what is missing). An incomplete plane stays open; the writer's
// Close reports it missing.
func (ep *EncodedPlaneWriter) Close() error {
	if ep == nil || ep.im == nil {
		return errZero
	}
	if !ep.busy.CompareAndSwap(false, true) {
		return ep.im.busyError(ep.index)
	}
	defer ep.busy.Store(false)
	if ep.abandoned {
		return ep.abandonedError()
	}
	if ep.due > 0 {
		return fmt.Errorf("%w: plane has %d tiles still to write", ErrData, ep.due)
	}
	if ep.rows != nil {
		return ep.rows.Close()
	}
	return nil
}

// Abort gives back a plane not complete, as PlaneWriter.Abort does, so
// that it may be written again from its start (Image.EncodedPlane): a
// source tile that failed to read. The tiles already stored of it stay in
// the file, where no directory names them, and count in Progress's
// TotalTiles. The EncodedPlaneWriter takes nothing more: WriteTile, Write
// and Close return ErrPlane. A complete plane cannot be given back
// (ErrPlane); Abort again does nothing.
func (ep *EncodedPlaneWriter) Abort() error {
	if ep == nil || ep.im == nil {
		return errZero
	}
	if !ep.busy.CompareAndSwap(false, true) {
		return ep.im.busyError(ep.index)
	}
	defer ep.busy.Store(false)
	switch {
	case ep.abandoned:
		return nil
	case ep.due == 0 && (ep.rows == nil || ep.rows.written == ep.rows.size):
		image, z, c, t := ep.im.planeAt(ep.index)
		return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d is complete, and cannot be given back", ErrPlane, z, c, t, image)
	}
	if err := ep.im.w.usable(); err != nil {
		return err
	}
	var s *planeStream
	if ep.rows != nil {
		s, ep.rows.stream, ep.rows.abandoned = ep.rows.stream, nil, true
	}
	ep.im.giveBack(ep.st, s)
	ep.abandoned = true
	return nil
}

// abandonedError is the error of a call on a plane given back by Abort.
func (ep *EncodedPlaneWriter) abandonedError() error {
	image, z, c, t := ep.im.planeAt(ep.index)
	return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d was given back (by EncodedPlaneWriter.Abort, or a call on it that panicked); Image.EncodedPlane starts it again",
		ErrPlane, z, c, t, image)
}

// CheckEncodedLevels returns the error AddEncodedImage would return for an
// image of spec with these levels given encoded, or nil: that each level's
// coding suits the spec's samples, and that several levels form an OME
// pyramid (one integer factor, one codec). A converter asks before adding
// anything, to choose between copying a source's tiles and encoding them.
// It knows no writer's Options: a writer of uncompressed tiles refuses
// more (see AddEncodedImage).
func CheckEncodedLevels(spec ImageSpec, levels ...EncodedLevel) error {
	if len(levels) == 0 {
		return fmt.Errorf("%w: no levels given encoded", ErrOption)
	}
	spec, err := spec.normalized()
	if err != nil {
		return err
	}
	_, _, err = imageLevels(spec, Options{TileSize: levels[0].TileWidth}, levels)
	return err
}
