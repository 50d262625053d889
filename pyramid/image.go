package pyramid

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/tiff"
)

// Image is one image of the file (an OME series) being written: a stack of
// planes, each stored with its pyramid of reduced levels. Its methods may
// be called from several goroutines at once, as the Writer's doc says.
type Image struct {
	w        *Writer
	spec     ImageSpec
	index    int
	levels   []levelGeom
	fields   []*ifd.Builder     // per level, without data locations; shared by the planes
	encoders []compress.Encoder // per level (tile widths differ); nil for a level given encoded
	encoded  int                // levels given encoded, the first ones (AddEncodedImage)
	rawTile  []int              // per level given encoded: the bytes of each uncompressed tile, else 0
	given    []uint16           // per level given encoded: its TIFF Compression
	codings  []EncodedLevel     // per level given encoded: as given, its slices copied
	factor   int                // between the sizes of consecutive levels
	coding   Coding             // of the levels the writer encodes: the spec's, else the writer's
	codec    compress.Codec     // of coding, unless JPEG: the writer's when they agree, else shared by the images of that coding
	padEdges bool               // edge tiles repeat the last row and column, not zeros
	reduce   reduceFunc
	origin   *planeOrigin // set for the images of a dataset's part
	// sizeT is the time points kept: the spec's SizeT unless TruncateT
	// shrank it. Set under w.mu; Spec reads it without, as a reader given
	// to ReadPlanes may call Spec while w.mu is held for it.
	sizeT atomic.Int64
	// reading is set while ReadPlanes holds the image's planes: TruncateT
	// then refuses without taking w.mu, which ReadPlanes may hold while it
	// waits on its reader. readMu orders the two: ReadPlanes sets and
	// clears reading holding it, and TruncateT holds it from its check
	// until it has w.mu, so that no ReadPlanes starts in between.
	reading atomic.Bool
	readMu  sync.Mutex

	// Guarded by w.mu.
	planes []planeState   // by index in DimensionOrder, as added
	free   []*planeStream // finished planes' buffers, for the next; as many as were open at once

	// What planes take when they start (see planeDirs): made once for all
	// the planes not started yet, so that thousands of planes cost a few
	// allocations, not three each. Guarded by w.mu.
	started  int
	dirStore []levelDir
	seqStore []int64
	subStore []*tiff.Directory
}

// planeState is one plane's directories and where it is in its writing.
// Guarded by w.mu.
type planeState struct {
	dirs     []levelDir // per level; nil until the plane is started
	done     bool       // every row and every tile given encoded is written
	reserved bool       // ReadPlanes is writing the image's planes
	rowsDue  bool       // rows are still to come
	tilesDue bool       // tiles given encoded are still to come
}

// settle marks the plane done once nothing more is due.
func (st *planeState) settle() { st.done = !st.rowsDue && !st.tilesDue }

// levelDir is one level's directory with the sequence numbers of its tiles.
type levelDir struct {
	dir  tiff.Directory
	seqs []int64
}

// newImage validates spec (and the levels given encoded, if any) and
// prepares everything its planes share. The writer sets its index when it
// adds it.
func newImage(w *Writer, spec ImageSpec, encoded []EncodedLevel) (*Image, error) {
	im, err := w.layoutImage(spec, encoded)
	if err != nil {
		return nil, err
	}
	// Refused before its bookkeeping is allocated: an image the file
	// cannot hold alone (addImage checks the file's sum).
	if dirs := im.directories(); dirs > tiff.MaxDirectories {
		return nil, im.tooManyDirectories(0)
	}
	im.planes = make([]planeState, im.spec.Planes())
	im.sizeT.Store(int64(im.spec.SizeT))
	return im, nil
}

// directories returns the directories the image takes in the file: one a
// plane and level.
func (im *Image) directories() int64 {
	return int64(im.spec.Planes()) * int64(len(im.levels))
}

// tooManyDirectories is the error of an image whose directories, added to
// the before of the file's other images, pass what package tiff reads.
func (im *Image) tooManyDirectories(before int64) error {
	return fmt.Errorf("%w: the image takes %d directories (%d planes x %d levels): the file's %d would pass %d, the most package tiff reads",
		ErrSize, im.directories(), im.spec.Planes(), len(im.levels), before+im.directories(), tiff.MaxDirectories)
}

// layoutImage is newImage without the planes' bookkeeping: it validates
// spec (and the levels given encoded) under the writer's options, reading
// only what New set, and allocates nothing per plane.
func (w *Writer) layoutImage(spec ImageSpec, encoded []EncodedLevel) (*Image, error) {
	spec, err := spec.normalized()
	if err != nil {
		return nil, err
	}
	levels, factor, err := imageLevels(spec, w.opts, encoded)
	if err != nil {
		return nil, err
	}
	if len(encoded) == 1 && spec.Coding == nil && w.pipe != nil {
		c := w.givenCoding(encoded[0], spec.SamplesPerPixel)
		spec.Coding = &c
	}
	if len(encoded) == 1 && len(levels) > 1 && w.pipe == nil && encoded[0].Compression != None {
		// The levels would be stored uncompressed below compressed tiles:
		// a pyramid of two codecs, which readers of fewer codecs than
		// both (tifffile without imagecodecs, Viv) read only in part.
		return nil, fmt.Errorf("%w: a full resolution given in %v to a writer of uncompressed tiles (Options.Compression None), which would store the levels it computes uncompressed: give Options a compression (the levels then take the given level's), or Options.Levels 1",
			ErrOption, encoded[0].Compression)
	}
	coding, codec, err := w.imageCoding(spec)
	if err != nil {
		return nil, err
	}
	im := &Image{w: w, spec: spec, levels: levels, encoded: len(encoded), factor: factor,
		coding: coding, codec: codec, padEdges: coding.Compression == JPEG,
		reduce: reducer(spec.PixelType, spec.SamplesPerPixel, w.opts.Downsampling)}
	var predictor Predictor
	if im.computes() {
		if band, ok := mul(spec.SizeX, spec.SamplesPerPixel, spec.PixelType.Size(), levels[0].tileH); !ok || band > maxBand {
			return nil, fmt.Errorf("%w: a row of tiles %d pixels wide and %d high is %d bytes, more than %d", ErrSize, spec.SizeX, levels[0].tileH, band, maxBand)
		}
		if predictor, err = coding.predictorFor(spec.PixelType); err != nil {
			return nil, err
		}
		if coding.Compression == JPEG && (spec.PixelType != Uint8 || spec.SamplesPerPixel != 1 && spec.SamplesPerPixel != 3) {
			return nil, fmt.Errorf("%w: JPEG takes uint8 samples, 1 or 3 per pixel, not %d x %v (ImageSpec.Coding can give this image a lossless codec)",
				ErrOption, spec.SamplesPerPixel, spec.PixelType)
		}
	}
	for l, g := range levels {
		var enc compress.Encoder
		var coding TileCoding
		if l < len(encoded) {
			coding = encoded[l].TileCoding
			given := encoded[l]
			given.JPEGTables, given.ReferenceBlackWhite = slices.Clone(given.JPEGTables), slices.Clone(given.ReferenceBlackWhite)
			im.codings = append(im.codings, given)
			raw := 0
			if coding.Compression == None {
				raw = coding.TileWidth * coding.TileHeight * spec.SamplesPerPixel * spec.PixelType.Size()
			}
			im.rawTile = append(im.rawTile, raw)
			im.given = append(im.given, tiffCompression[coding.Compression])
		} else if enc, coding, err = im.writerEncoder(g, predictor); err != nil {
			return nil, err
		}
		im.encoders = append(im.encoders, enc)
		im.fields = append(im.fields, im.levelFields(l, coding))
	}
	return im, nil
}

// imageCoding returns how the writer encodes an image's tiles, and the
// codec of that coding (nil for JPEG, whose encoders are per image): the
// spec's Coding, or the writer's options.
func (w *Writer) imageCoding(spec ImageSpec) (Coding, compress.Codec, error) {
	own := w.opts.coding()
	if spec.Coding == nil || *spec.Coding == own {
		return own, w.codec, nil
	}
	c := *spec.Coding
	if err := c.check(); err != nil {
		return c, nil, fmt.Errorf("%w (ImageSpec.Coding)", err)
	}
	if w.pipe == nil && c.Compression != None {
		return c, nil, fmt.Errorf("%w: ImageSpec.Coding %v in a writer of uncompressed tiles (Options.Compression None), which has no encoding goroutines",
			ErrOption, c.Compression)
	}
	if c.Compression == own.Compression && c.Level == own.Level {
		return c, w.codec, nil
	}
	codec, err := w.sharedCodec(c)
	return c, codec, err
}

// givenCoding is the coding of the levels the writer computes below a full
// resolution given encoded (AddEncodedImage with one level) whose spec
// sets no Coding: the given level's, so that the pyramid has one codec,
// as readers expect (tifffile without imagecodecs and Viv read fewer
// codecs than a JPEG slide's computed levels in LZW would need). Its
// compression and predictor (TileCoding's zero value, none); for JPEG,
// the quality its JPEGTables were made at (else its first tile's, as
// EncodedLevelOf read it, else the Options' Quality) and
// RGB-coded or YCbCr 4:2:0 tiles as it is RGB or YCbCr (the writer
// encodes no other subsampling); for Deflate and Zstd, the Options' Level
// if they name the same codec.
func (w *Writer) givenCoding(t EncodedLevel, samples int) Coding {
	own := w.opts.coding()
	c := Coding{Compression: t.Compression, Predictor: t.Predictor}
	if c.Predictor == PredictorAuto { // TileCoding's zero value: none
		c.Predictor = PredictorNone
	}
	switch t.Compression {
	case Deflate, Zstd:
		if own.Compression == t.Compression {
			c.Level = own.Level
		}
	case JPEG:
		c.Predictor = PredictorAuto
		if own.Compression == JPEG {
			c.Quality = own.Quality
		}
		if q, _, err := compress.JPEGQuality(t.JPEGTables); err == nil {
			c.Quality = q
		} else if t.quality > 0 {
			c.Quality = t.quality
		}
		if samples == 3 && t.photometric(samples) == tiff.PhotometricRGB {
			c.JPEGColor = JPEGRGB
		}
	}
	return c
}

// computes reports whether the writer computes reduced levels from rows:
// unless every level is given encoded.
func (im *Image) computes() bool { return len(im.levels) > im.encoded }

// writerEncoder returns the encoder of a level the writer encodes, and
// the coding of its tiles. JPEG levels of the same tile width share their
// encoder, and every JPEG level has the same tables.
func (im *Image) writerEncoder(g levelGeom, predictor Predictor) (compress.Encoder, TileCoding, error) {
	s := im.spec
	format := compress.Format{BitsPerSample: 8 * s.PixelType.Size(), SamplesPerPixel: s.SamplesPerPixel, Float: s.PixelType.Float(), ByteOrder: byteOrder}
	coding := TileCoding{Compression: im.coding.Compression, Predictor: predictor, TileWidth: g.tileW, TileHeight: g.tileH}
	if coding.Compression != JPEG {
		enc := &compress.TileEncoder{Codec: im.codec, Predictor: tiffPredictor(predictor), Format: format, Width: g.tileW}
		if err := enc.Validate(); err != nil {
			return nil, coding, fmt.Errorf("%w: %w", ErrOption, err)
		}
		return enc, coding, nil
	}
	for l, e := range im.encoders {
		if j, ok := e.(*compress.JPEG); ok && im.levels[l].tileW == g.tileW {
			return j, jpegCoding(j, g.tileW, g.tileH), nil
		}
	}
	j, err := compress.NewJPEG(format, g.tileW, compress.JPEGOptions{Quality: im.coding.Quality, Color: im.coding.JPEGColor})
	if err != nil {
		return nil, coding, fmt.Errorf("%w: %w", ErrOption, err)
	}
	return j, jpegCoding(j, g.tileW, g.tileH), nil
}

// predictorFor resolves the coding's predictor for a pixel type.
func (c Coding) predictorFor(p PixelType) (Predictor, error) {
	switch c.Predictor {
	case PredictorNone:
		return PredictorNone, nil
	case PredictorHorizontal:
		if p.Float() {
			return 0, fmt.Errorf("%w: horizontal predictor on %v samples", ErrOption, p)
		}
		return PredictorHorizontal, nil
	case PredictorFloatingPoint:
		if !p.Float() {
			return 0, fmt.Errorf("%w: floating-point predictor on %v samples", ErrOption, p)
		}
		return PredictorFloatingPoint, nil
	}
	switch {
	case c.Compression == None || c.Compression == JPEG:
		return PredictorNone, nil
	case p.Float():
		return PredictorFloatingPoint, nil
	}
	return PredictorHorizontal, nil
}

// levelFields builds the fields every plane's directory of level l
// carries, its tiles coded as c.
func (im *Image) levelFields(l int, c TileCoding) *ifd.Builder {
	g, s := im.levels[l], im.spec
	b := &ifd.Builder{}
	subfile := tiff.SubfileFullResolution
	if l > 0 {
		subfile = tiff.SubfileReducedImage
	}
	b.AddLong(tiff.TagNewSubfileType, subfile)
	b.AddUint(tiff.TagImageWidth, uint64(g.width))
	b.AddUint(tiff.TagImageLength, uint64(g.height))
	bits, formats := make([]uint16, s.SamplesPerPixel), make([]uint16, s.SamplesPerPixel)
	for i := range bits {
		bits[i], formats[i] = uint16(8*s.PixelType.Size()), pixelTypes[s.PixelType].sampleFormat
	}
	b.AddShort(tiff.TagBitsPerSample, bits...)
	addCoding(b, c, s.SamplesPerPixel)
	b.AddShort(tiff.TagSamplesPerPixel, uint16(s.SamplesPerPixel))
	b.AddShort(tiff.TagPlanarConfiguration, tiff.PlanarContig)
	scale := math.Pow(float64(im.factor), float64(l)) // a level's pixels are this much larger
	if x, ok := pixelsPerCentimeter(s.PhysicalSizeX*scale, s.PhysicalSizeXUnit); ok {
		if y, ok := pixelsPerCentimeter(s.PhysicalSizeY*scale, s.PhysicalSizeYUnit); ok {
			b.AddRational(tiff.TagXResolution, x)
			b.AddRational(tiff.TagYResolution, y)
			b.AddShort(tiff.TagResolutionUnit, tiff.ResolutionUnitCentimeter)
		}
	}
	b.AddASCII(tiff.TagSoftware, software)
	b.AddShort(tiff.TagSampleFormat, formats...)
	return b
}

// pixelsPerCentimeter converts a pixel size to a TIFF resolution.
func pixelsPerCentimeter(size float64, unit string) (ifd.Fraction, bool) {
	cm := lengthUnits[unit]
	if size <= 0 || cm == 0 {
		return ifd.Fraction{}, false
	}
	return fraction(1 / (size * cm))
}

// fraction returns the closest fraction with 32-bit terms, by continued
// fractions, or false when v is out of their range.
func fraction(v float64) (ifd.Fraction, bool) {
	if v <= 0 || v > math.MaxUint32 || math.IsNaN(v) {
		return ifd.Fraction{}, false
	}
	// Convergents h/k of v's continued fraction.
	h0, h1, k0, k1 := 0.0, 1.0, 1.0, 0.0
	x := v
	best := ifd.Fraction{}
	for range 64 {
		a := math.Floor(x)
		h2, k2 := a*h1+h0, a*k1+k0
		if h2 > math.MaxUint32 || k2 > math.MaxUint32 {
			break
		}
		best = ifd.Fraction{Num: uint32(h2), Den: uint32(k2)}
		if x == a || math.Abs(h2/k2-v) <= v*1e-15 {
			break
		}
		h0, h1, k0, k1 = h1, h2, k1, k2
		x = 1 / (x - a)
	}
	return best, best.Den != 0 && best.Num != 0
}

// tilesPerPlane counts the tiles of every level of one plane.
func (im *Image) tilesPerPlane() int64 {
	var n int64
	for _, g := range im.levels {
		n += int64(g.tiles())
	}
	return n
}

// Spec returns the image's spec with defaults filled in. Once TruncateT
// has shrunk the image, its SizeT, its PlaneInfo and its OME element are
// those of the image as written: the element, a view of the one given,
// describes the time points kept, with their Plane elements only (its
// Document is the one given, unchanged). Another writer's AddImage takes
// such a spec as it is.
func (im *Image) Spec() ImageSpec {
	if im == nil {
		return ImageSpec{}
	}
	if im.w == nil {
		return im.spec
	}
	return im.written()
}

// written returns the spec the file describes: the spec as added, with
// the time points TruncateT kept.
func (im *Image) written() ImageSpec {
	s, kept := im.spec, im.keptT()
	if kept == s.SizeT {
		return s
	}
	s.SizeT, s.PlaneInfo = kept, nil
	for _, p := range im.spec.PlaneInfo {
		if p.T < kept {
			s.PlaneInfo = append(s.PlaneInfo, p)
		}
	}
	if s.OME != nil {
		s.OME = s.OME.truncated(im.spec.SizeT, kept)
	}
	return s
}

// keptT returns the time points kept.
func (im *Image) keptT() int { return int(im.sizeT.Load()) }

// timePoints says n time points, for messages.
func timePoints(n int) string {
	if n == 1 {
		return "1 time point"
	}
	return fmt.Sprintf("%d time points", n)
}

// planeIndex returns the index of plane (z, c, t) in the spec as added; a
// plane outside the image is judged, and named, by the SizeT it has now.
func (im *Image) planeIndex(z, c, t int) (int, error) {
	p, err := im.spec.PlaneIndex(z, c, t)
	if err != nil && im.w != nil {
		now := im.spec
		now.SizeT = im.keptT()
		_, err = now.PlaneIndex(z, c, t)
	}
	return p, err
}

// kept counts the planes of the time points kept. The caller holds w.mu.
func (im *Image) kept() int { return len(im.planes) / im.spec.SizeT * im.keptT() }

// chain returns the planes kept, by index in the spec as added, in the
// order of the main chain: the DimensionOrder of the image as written,
// with its SizeT. The caller holds w.mu.
func (im *Image) chain() iter.Seq[int] {
	return func(yield func(int) bool) {
		if im.keptT() == im.spec.SizeT {
			for p := range im.planes {
				if !yield(p) {
					return
				}
			}
			return
		}
		s := im.spec
		s.SizeT = im.keptT()
		for q := range s.Planes() {
			z, c, t := s.PlaneCoords(q)
			if p, _ := im.spec.PlaneIndex(z, c, t); !yield(p) {
				return
			}
		}
	}
}

// TruncateT shrinks the image to its first sizeT time points: an
// acquisition stopped before the SizeT it was added with is written as if
// it had been added with SizeT sizeT, its planes of the first sizeT time
// points in their DimensionOrder. Those planes must still all be written
// before Close; the planes of later time points are refused from then on
// (ErrPlane). A plane of a later time point written already is left out
// of the file's directories, and its tiles stay in the file unused, as an
// aborted plane's do. The PlaneInfo, and the Plane elements of
// ImageSpec.OME, of later time points are dropped; Spec reports the new
// SizeT.
//
// TruncateT only shrinks: sizeT must be from 1 to the SizeT the image has
// (ErrSize), that of the last TruncateT if there was one. An acquisition
// stopped before its first time point was complete has no file to close:
// end it with Writer.Abort. A plane of a later time point that is open
// (started and not complete: give it back with PlaneWriter.Abort or
// EncodedPlaneWriter.Abort first) or being read by ReadPlanes is ErrPlane,
// and nothing changes: TruncateT never waits for another goroutine's
// plane of the image (ReadPlanes on another image makes it wait as that
// doc says), so stop the goroutines writing planes, or have them give
// back theirs, before it is called. ReadPlanes refuses a truncated image.
// Images of a dataset's part cannot be truncated.
func (im *Image) TruncateT(sizeT int) error {
	if im == nil || im.w == nil {
		return errZero
	}
	w := im.w
	im.readMu.Lock()
	if im.reading.Load() {
		im.readMu.Unlock()
		return fmt.Errorf("%w: TruncateT on image %d, whose planes ReadPlanes is writing", ErrPlane, im.index)
	}
	w.mu.Lock()
	im.readMu.Unlock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	if im.origin != nil {
		return fmt.Errorf("%w: image %d belongs to a dataset's part, whose planes the dataset fixes", ErrPlane, im.index)
	}
	now := im.keptT()
	if sizeT < 1 || sizeT > now {
		return fmt.Errorf("%w: TruncateT(%d) on image %d of %s: it keeps 1 to %d", ErrSize, sizeT, im.index, timePoints(now), now)
	}
	var dropped, started int
	for p := range im.planes {
		st := &im.planes[p]
		z, c, t := im.spec.PlaneCoords(p)
		if t < sizeT || t >= now {
			continue
		}
		switch {
		case st.reserved:
			return fmt.Errorf("%w: TruncateT on image %d, whose planes ReadPlanes is writing", ErrPlane, im.index)
		case st.dirs != nil && !st.done:
			abort := "PlaneWriter.Abort"
			if im.encoded > 0 {
				abort = "EncodedPlaneWriter.Abort"
			}
			return fmt.Errorf("%w: TruncateT(%d) on image %d, whose plane z=%d c=%d t=%d is open: complete it or give it back (%s) first", ErrPlane, sizeT, im.index, z, c, t, abort)
		case st.dirs != nil:
			started++
		}
		dropped++
	}
	// The planes dropped that were written keep their tiles in
	// Progress's TotalTiles, as they are in its Tiles.
	w.totalTiles.Add(-im.tilesPerPlane() * int64(dropped-started))
	im.started -= started
	im.sizeT.Store(int64(sizeT))
	// The file's directories for the planes dropped are free again.
	w.dirs -= int64(len(im.planes)/im.spec.SizeT*(now-sizeT)) * int64(len(im.levels))
	if im.started == im.kept() {
		im.free = nil
	}
	return nil
}

// Levels returns the number of resolutions of each plane, the full one
// included.
func (im *Image) Levels() int {
	if im == nil {
		return 0
	}
	return len(im.levels)
}

// EncodedLevels returns how many of the levels, the first ones, take
// their tiles encoded (AddEncodedImage): 0 for an image added otherwise.
// When it is less than Levels, the planes take rows too, to compute the
// others from.
func (im *Image) EncodedLevels() int {
	if im == nil {
		return 0
	}
	return im.encoded
}

// EncodedLevel returns level l (below EncodedLevels) as AddEncodedImage
// was given it: the coding its tiles must have, for a caller that copies
// tiles from elsewhere to check that they do (package source's WritePlanes
// does). Another level is ErrOption.
func (im *Image) EncodedLevel(l int) (EncodedLevel, error) {
	if im == nil || im.w == nil {
		return EncodedLevel{}, errZero
	}
	if l < 0 || l >= im.encoded {
		return EncodedLevel{}, fmt.Errorf("%w: level %d is not given encoded (image %d has %d such levels)", ErrOption, l, im.index, im.encoded)
	}
	e := im.codings[l]
	e.JPEGTables, e.ReferenceBlackWhite = slices.Clone(e.JPEGTables), slices.Clone(e.ReferenceBlackWhite)
	return e, nil
}

// PlaneBytes is the length of one plane's pixel data: SizeY rows of SizeX
// pixels of SamplesPerPixel little-endian samples.
func (im *Image) PlaneBytes() int64 {
	if im == nil {
		return 0
	}
	return int64(im.spec.SizeY) * int64(im.spec.SizeX) * int64(im.spec.pixelBytes())
}

// WritePlane writes plane (z, c, t) whole: SizeY rows of SizeX pixels of
// SamplesPerPixel little-endian samples, interleaved. pix is not kept
// after WritePlane returns.
//
// The bytes must be little-endian: an image.Gray16's or image.RGBA64's Pix
// is big-endian and would be written byte-swapped. Pass such an image to
// Writer.AddImageData instead, which converts it, or typed samples to
// WriteSamples.
func (im *Image) WritePlane(z, c, t int, pix []byte) error {
	if im == nil || im.w == nil {
		return errZero
	}
	if int64(len(pix)) != im.PlaneBytes() {
		if err := im.w.usable(); err != nil {
			return err
		}
		return fmt.Errorf("%w: %d bytes for a plane of %d", ErrData, len(pix), im.PlaneBytes())
	}
	pw, err := im.Plane(z, c, t)
	if err != nil {
		return err
	}
	return pw.writeAll(pix)
}

// Plane starts plane (z, c, t) for streaming: write its rows in order, in
// bands of any size, through the returned writer. Each plane is written
// once (unless given back by PlaneWriter.Abort, to start again). Several
// planes may be open at once, and written from different goroutines.
func (im *Image) Plane(z, c, t int) (*PlaneWriter, error) {
	if im == nil {
		return nil, errZero
	}
	p, err := im.planeIndex(z, c, t)
	return im.openPlane(p, err, openRows)
}

// PlaneComplete reports whether plane (z, c, t) is written whole: its rows
// and the tiles given encoded, all of them. It is for resuming after an
// error (source.Image.WritePlanes does): a plane started and not complete
// is given back with Abort, and written again from its start. Another
// goroutine may complete the plane right after the answer. A plane
// outside the image, or of a time point TruncateT dropped, is ErrPlane;
// after Close or Abort, or once the writer failed, it returns the error
// Plane would.
func (im *Image) PlaneComplete(z, c, t int) (bool, error) {
	if im == nil || im.w == nil {
		return false, errZero
	}
	p, err := im.planeIndex(z, c, t)
	if err != nil {
		return false, err
	}
	im.w.mu.Lock()
	defer im.w.mu.Unlock()
	if err := im.w.usableLocked(); err != nil {
		return false, err
	}
	if err := im.dropped(p); err != nil {
		return false, err
	}
	return im.planes[p].done, nil
}

// How a plane is opened: for its rows (Plane), for its rows by ReadPlanes,
// which reserved the image's planes, or for tiles given encoded
// (EncodedPlane).
type openMode int

const (
	openRows openMode = iota
	openReserved
	openEncoded
)

// openPlane starts plane p, unless indexErr says it does not exist. It
// returns the plane's row writer, nil for a plane of an encoded image
// that takes no rows.
func (im *Image) openPlane(p int, indexErr error, mode openMode) (*PlaneWriter, error) {
	w := im.w
	if w == nil {
		return nil, errZero
	}
	w.mu.Lock()
	err := w.usableLocked()
	if err == nil {
		err = indexErr
	}
	if err == nil {
		err = im.claim(p, mode)
	}
	var s *planeStream
	if err == nil && im.computes() {
		s = im.takeStream()
		if im.started == im.kept() {
			im.free = nil // no plane is left to take the others
		}
	}
	w.mu.Unlock()
	if err != nil || !im.computes() {
		return nil, err
	}
	st := &im.planes[p]
	if s == nil {
		s = im.newStream()
	}
	s.state = st
	return &PlaneWriter{im: im, st: st, stream: s, index: p, size: im.PlaneBytes()}, nil
}

// dropped is ErrPlane for plane p of a time point TruncateT dropped, else
// nil. The caller holds w.mu.
func (im *Image) dropped(p int) error {
	image, z, c, t := im.planeAt(p)
	if t >= im.keptT() && im.origin == nil { // a part's image, whose t is the dataset's, is not truncated
		return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d: TruncateT kept %s", ErrPlane, z, c, t, image, timePoints(im.keptT()))
	}
	return nil
}

// claim gives plane p its directories, with room for the sequence numbers
// of all its tiles, unless it is started already, reserved by ReadPlanes,
// or opened in the way its image does not take. The caller holds w.mu.
func (im *Image) claim(p int, mode openMode) error {
	if err := im.dropped(p); err != nil {
		return err
	}
	st := &im.planes[p]
	image, z, c, t := im.planeAt(p)
	switch {
	case st.dirs != nil && st.done:
		return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d written twice", ErrPlane, z, c, t, image)
	case im.encoded > 0 && mode != openEncoded: // whatever the plane's state: the way it is written is wrong
		return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d: its tiles are given encoded (EncodedPlane)", ErrPlane, z, c, t, image)
	case st.dirs != nil:
		return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d is started already, and not complete", ErrPlane, z, c, t, image)
	case st.reserved && mode != openReserved:
		return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d is being written by ReadPlanes", ErrPlane, z, c, t, image)
	case im.encoded == 0 && mode == openEncoded:
		return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d: EncodedPlane is for images added with AddEncodedImage", ErrPlane, z, c, t, image)
	}
	im.planeDirs(st)
	st.rowsDue, st.tilesDue = im.computes(), im.encoded > 0
	return nil
}

// planeOrigin says which planes of a dataset's image an image of a part
// holds (see Part): count planes of image index from first on.
type planeOrigin struct {
	index int
	spec  ImageSpec // normalized
	first int
}

// planeAt returns the image and the coordinates of plane p, for messages:
// for an image of a part, those of the dataset.
func (im *Image) planeAt(p int) (image, z, c, t int) {
	if o := im.origin; o != nil {
		z, c, t = o.spec.PlaneCoords(o.first + p)
		return o.index, z, c, t
	}
	z, c, t = im.spec.PlaneCoords(p)
	return im.index, z, c, t
}

// maxBand bounds the bytes of one row of full-resolution tiles, the band
// the first level holds while rows stream in: 1 TiB is past any machine's
// memory but far below what a Go allocation can ask, so a larger image is
// ErrSize rather than a failed allocation of an impossible size.
const maxBand = 1 << 40

// seqBatch bounds the tile sequence numbers planeDirs allocates at once
// (8 MiB): the planes still to come share one allocation up to it.
const seqBatch = 1 << 20

// planeDirs gives a plane its directories, with room for the sequence
// numbers of all its tiles; a plane of more tiles than seqBatch gets no
// room, and its numbers grow as its tiles come. The caller holds w.mu.
func (im *Image) planeDirs(st *planeState) {
	levels, tiles := len(im.levels), int(im.tilesPerPlane())
	if len(im.dirStore) < levels {
		n := min(im.kept()-im.started, max(1, seqBatch/tiles))
		im.dirStore = make([]levelDir, n*levels)
		im.subStore = make([]*tiff.Directory, n*(levels-1))
		if tiles <= seqBatch {
			im.seqStore = make([]int64, n*tiles)
		}
	}
	im.started++
	st.dirs, im.dirStore = im.dirStore[:levels:levels], im.dirStore[levels:]
	var seqs []int64
	if tiles <= seqBatch {
		seqs, im.seqStore = im.seqStore[:tiles:tiles], im.seqStore[tiles:]
	}
	for l, g := range im.levels {
		n := min(g.tiles(), len(seqs))
		st.dirs[l] = levelDir{
			dir:  tiff.Directory{Fields: im.fields[l], OffsetsTag: tiff.TagTileOffsets, CountsTag: tiff.TagTileByteCounts},
			seqs: seqs[:0:n],
		}
		seqs = seqs[n:]
	}
	if levels > 1 {
		subs := im.subStore[: 0 : levels-1]
		im.subStore = im.subStore[levels-1:]
		for l := 1; l < levels; l++ {
			subs = append(subs, &st.dirs[l].dir)
		}
		st.dirs[0].dir.SubIFDs = subs
	}
}
