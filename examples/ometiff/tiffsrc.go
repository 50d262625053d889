package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/pyramid/source"
	"github.com/ometiff-go/ometiff/tiff"
)

// tiffSource is a TIFF, BigTIFF, OME-TIFF or SVS file, its images mapped
// by package pyramid/source and streamed from its blocks.
type tiffSource struct {
	name string
	file *source.File
	opts source.Options
	lim  limits
	// wopts are the writer's options: the flags', with the first copied
	// image's tile size unless -tile is given.
	wopts pyramid.Options
	// encoded are the levels of each image whose tiles are copied
	// through (nil: the image is encoded again), and coding the coding of
	// each such image, and of an image encoded again in JPEG at
	// -jpeg-color (nil: the writer's).
	encoded [][]pyramid.EncodedLevel
	coding  []*pyramid.Coding
	// number is each image's number in the file, as ometiff info gives
	// it: the messages name images so when -images selects some.
	number []int
	// described is set when flags give metadata of the first image
	// (-physical-unit, say): the writer's refusal of its metadata may be
	// theirs. Any other image's metadata is the input's alone.
	described bool
}

// isTIFF reports whether a file's first bytes are a TIFF or BigTIFF
// header.
func isTIFF(head []byte) bool {
	for _, magic := range []string{"II*\x00", "MM\x00*", "II+\x00", "MM\x00+"} {
		if bytes.HasPrefix(head, []byte(magic)) {
			return true
		}
	}
	return false
}

// isXML reports whether a file's first bytes may start an XML document
// (a companion file of a multi-file OME-TIFF dataset): "<", after a byte
// order mark or white space.
func isXML(head []byte) bool {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF")), " \t\r\n")
	return bytes.HasPrefix(head, []byte("<"))
}

// openTIFF opens the input as a TIFF file when it is one (ok), or as the
// companion of a multi-file OME-TIFF dataset, and checks it against the
// limits before anything large is allocated. The source holds the other
// files of a multi-file dataset open until it is closed.
func openTIFF(in *input, cfg config, stderr io.Writer) (src sourceImages, ok bool, err error) {
	// A TIFF header, or the start of an XML document (64 bytes, as
	// source.Open tells a companion).
	var buf [64]byte
	n, _ := io.ReadFull(in.header(), buf[:])
	head := buf[:n]
	if !isTIFF(head) && !(isXML(head) && in.size >= 0) {
		return nil, false, nil
	}
	if in.size < 0 {
		return nil, true, fmt.Errorf("%s: a TIFF file is read where its blocks lie: give a file, not a pipe", in.name)
	}
	// Bands as high as the writer's tiles (or the most whole blocks in
	// them) reach the writer's tiles without a copy.
	s := &tiffSource{name: in.name, lim: cfg.limits, opts: source.Options{
		Workers: cfg.options.Workers, SkipUnsupported: cfg.skipUnsupported, Rows: cfg.limits.tileSize(),
		DatasetDir: filepath.Dir(in.name), MaxDecodeRatio: cmp.Or(cfg.limits.maxDecodeRatio, -1)}}
	s.described = slices.ContainsFunc([]string{"name", "channels", "physical-size", "physical-size-z", "physical-unit"},
		func(flag string) bool { return cfg.set[flag] })
	// A band or block larger than the reader's default bound (a whole
	// scan in one JPEG strip) is read when -max-memory is set above it:
	// the memory planned is checked against it (checkLimits). Without a
	// limit (0), the bound is what the file can hold, decoded: a thousand
	// times its size (a small file claiming a huge strip allocates
	// nothing).
	switch m := int64(cfg.limits.maxMemory); {
	case m > source.DefaultMaxBandBytes:
		s.opts.MaxBandBytes = m
	case m == 0 && in.size > source.DefaultMaxBandBytes/1000:
		s.opts.MaxBandBytes = mul(in.size, 1000)
	}
	var tf *tiff.File
	if isTIFF(head) {
		if tf, err = tiff.Read(in.f, in.size); err != nil {
			return nil, true, fmt.Errorf("%s: %w", in.name, err)
		}
		if tf.LoopsTo != 0 {
			fmt.Fprintf(stderr, "%s: %s: %s\n", convertName, in.name, loopNote(tf))
		}
	}
	mapFile := func(opts source.Options) (*source.File, error) {
		if tf == nil {
			return source.Open(in.name, opts)
		}
		return source.New(tf, filepath.Base(in.name), opts)
	}
	if s.file, err = mapFile(s.opts); err != nil {
		if tf == nil && errors.Is(err, tiff.ErrNotTIFF) { // XML, but no companion
			return nil, false, nil
		}
		// Mapped with -skip-unsupported, the file may still have
		// something to convert: metadata the writer cannot carry left
		// out, or other pages.
		var rest *source.File
		if !cfg.skipUnsupported {
			opts := s.opts
			opts.SkipUnsupported = true
			rest, _ = mapFile(opts)
		}
		// -images numbers the images as ometiff info does, mapped so:
		// the images it leaves out whole are in no selection, and the
		// images selected lose nothing unless something else was left
		// out (metadata, or the pages of some image's planes).
		if rest != nil && cfg.images != nil && !slices.ContainsFunc(rest.Skipped, func(err error) bool {
			return !errors.Is(err, source.ErrLeftOut) && !ofUnselected(rest.Images, cfg.images, err)
		}) {
			s.file, err = rest, nil
			s.file.Skipped = nil
		} else {
			// What New refuses is the input's, whatever package pyramid's
			// errors it wraps (the writer's refusal of its OME-XML).
			err = fmt.Errorf("%s: %w", in.name, err)
			if errors.Is(err, source.ErrBomb) {
				err = fmt.Errorf("%w (-max-decode-ratio 0 converts it, if you trust the file)", err)
			}
			if rest != nil {
				how := "-skip-unsupported"
				whole := slices.ContainsFunc(rest.Images, func(im *source.Image) bool {
					return !slices.ContainsFunc(rest.Skipped, func(err error) bool { return source.SkippedImage(err) == im })
				})
				if whole && !slices.ContainsFunc(rest.Skipped, func(err error) bool {
					return !errors.Is(err, source.ErrLeftOut) && !slices.Contains(rest.Images, source.SkippedImage(err))
				}) {
					// Only whole images, or some images' metadata, are left
					// out: the images listed, or those that lose nothing,
					// convert whole, as ometiff info says.
					how += ", or -images naming images ometiff info lists,"
				}
				rest.Close()
				err = fmt.Errorf("%w (%s converts the rest)", err, how)
			}
			return nil, true, cli.InputError{Err: err}
		}
	}
	if err := s.selectImages(cfg.images); err != nil {
		s.Close()
		return nil, true, err
	}
	if err := s.checkJPEG(cfg); err != nil {
		s.Close()
		return nil, true, err
	}
	s.planCopy(cfg, stderr)
	s.notePixels(stderr)
	s.opts.Rows, s.lim.tile = s.wopts.TileSize, s.wopts.TileSize
	if err := s.checkLimits(); err != nil {
		s.Close()
		return nil, true, err
	}
	return s, true, nil
}

// selectImages keeps the images numbered in images (all when nil).
func (s *tiffSource) selectImages(images []int) error {
	all := s.file.Images
	if images == nil {
		s.number = make([]int, len(all))
		for i := range all {
			s.number[i] = i
		}
		return nil
	}
	if last := images[len(images)-1]; last >= len(all) {
		var past []string // every number named past the last image
		for _, i := range images[slices.IndexFunc(images, func(i int) bool { return i >= len(all) }):] {
			past = append(past, strconv.Itoa(i))
		}
		return cli.UsageError{Err: fmt.Errorf("-images %s: %s holds %s (ometiff info lists them)", strings.Join(past, ","), s.name, plural(len(all), "image"))}
	}
	s.file.Images, s.number = nil, images
	for _, i := range images {
		s.file.Images = append(s.file.Images, all[i])
	}
	// The images left out whole are in no selection, as without
	// -skip-unsupported: saying them would name images ("OME image 3")
	// apart from those -images numbers ("image 3"); nor is the metadata
	// of images not selected.
	s.file.Skipped = slices.DeleteFunc(slices.Clone(s.file.Skipped), func(err error) bool {
		return errors.Is(err, source.ErrLeftOut) || ofUnselected(all, images, err)
	})
	return nil
}

// ofUnselected reports whether an entry of File.Skipped is of the
// metadata of one of the images that -images (selected, their numbers)
// does not convert.
func ofUnselected(images []*source.Image, selected []int, err error) bool {
	i := slices.Index(images, source.SkippedImage(err))
	return i >= 0 && !slices.Contains(selected, i)
}

// Close closes the other files of a multi-file dataset, and the
// companion's source.Open opened.
func (s *tiffSource) Close() error { return s.file.Close() }

// parts returns the paths of the other files of a multi-file dataset,
// and of the companion read.
func (s *tiffSource) parts() []string {
	var out []string
	for _, p := range s.file.Parts {
		out = append(out, filepath.Join(s.opts.DatasetDir, p.Name))
	}
	if s.file.Companion != "" {
		out = append(out, filepath.Join(s.opts.DatasetDir, s.file.Companion))
	}
	return out
}

// notePixels says what the mapping notes (source.File.Notes,
// source.Image.Notes: among them how the pixels are written where a viewer
// could expect otherwise).
func (s *tiffSource) notePixels(stderr io.Writer) {
	for _, n := range s.file.Notes {
		fmt.Fprintf(stderr, "%s: %s: %s\n", convertName, s.name, n)
	}
	for i, im := range s.file.Images {
		for _, n := range im.Notes {
			fmt.Fprintf(stderr, "%s: %s: image %d: %s\n", convertName, s.name, s.number[i], n)
		}
	}
}

// loopNote says where the main chain of a file's directories loops back,
// and that the pages before are read, as libtiff reads them.
func loopNote(f *tiff.File) string {
	return fmt.Sprintf("the chain of directories loops back to the one at %d after %s: read up to there, as libtiff reads it",
		f.LoopsTo, plural(len(f.Pages), "page"))
}

// checkLimits refuses images that -max-pixels (when given) or -max-memory
// forbid. The memory planned for an image is its page's bands, read and
// decoded ahead, and the writer's bands for each plane the page holds.
func (s *tiffSource) checkLimits() error {
	lim := s.lim
	for i, im := range s.file.Images {
		spec := im.Spec
		if lim.pixelsGiven {
			if err := lim.checkPixels(s.name, spec.SizeX, spec.SizeY); err != nil {
				return err
			}
		}
		need := s.planned(im)
		if lim.overBudget(need) {
			// A smaller -tile is advised only when one fits: the bands
			// read hold whole blocks whatever the tile, so blocks as tall
			// as the tile (JPEG tiles copied through) or taller need as
			// much at any -tile but for the writer's bands.
			advice := "raise it"
			if t := s.fittingTile(im); t > 0 {
				advice = fmt.Sprintf("raise it, or give -tile %d or less", t)
			} else if l, err := im.Planes[0].Page.Layout(); err == nil && l.BlockHeight > 16 {
				advice = fmt.Sprintf("its blocks are %d x %d pixels, each decoded whole at any -tile, and no -tile brings it within: raise -max-memory (0: no limit)",
					l.BlockWidth, l.BlockHeight)
			}
			return fmt.Errorf("%s: image %d (%d x %d) needs about %v for the bands read and written at tile %d and the blocks decoded, more than -max-memory %v (%s)",
				s.name, s.number[i], spec.SizeX, spec.SizeY, byteSize(need), lim.tileSize(), lim.maxMemory, advice)
		}
	}
	return nil
}

// fittingTile returns the largest -tile below the writer's tile at which
// the memory planned for an image fits -max-memory, or 0 when none does.
func (s *tiffSource) fittingTile(im *source.Image) int {
	at := *s
	for t := (s.lim.tileSize() - 1) / 16 * 16; t >= 16; t -= 16 {
		at.opts.Rows, at.lim.tile = t, t
		if !at.lim.overBudget(at.planned(im)) {
			return t
		}
	}
	return 0
}

// planned is the memory an image's conversion holds: two bands of its
// pages (one handed out, one decoding), the samples split apart when they
// are channels, the writer's bands of every plane a page holds, and what
// each decoding worker holds for a block: a tile or a plane of separate
// samples decoded aside (a strip is decoded into its band) and, for JPEG,
// image/jpeg's decoded components and the coefficients of a progressive
// frame (4 bytes a sample), which for one large tile (a 16384² progressive
// JPEG tile takes 1.6 GB) outweigh the bands.
func (s *tiffSource) planned(im *source.Image) int64 {
	spec := im.Spec
	l, err := im.Planes[0].Page.Layout()
	if err != nil {
		return 0
	}
	// The bands read hold whole blocks, and no more rows than the image's
	// (a short image's few rows, not a band's or a tile's worth).
	rows := int64(min(max(1, s.opts.Rows/l.BlockHeight)*l.BlockHeight, spec.SizeY))
	pageRow := mul(int64(spec.SizeX), int64(l.SamplesPerPixel), int64(spec.PixelType.Size()))
	planes := int64(1)
	if im.Planes[0].Sample >= 0 {
		planes = int64(l.SamplesPerPixel)
	}
	outPixel := max(spec.SamplesPerPixel, 1) * spec.PixelType.Size()
	blockSamples := mul(int64(l.BlockWidth), int64(l.BlockHeight), int64(l.SamplesPerPixel/l.Planes))
	perSample := int64(0)
	if l.Planes > 1 || l.BlockWidth != l.Width {
		perSample = int64(spec.PixelType.Size())
	}
	if l.Compression == tiff.CompressionJPEG {
		perSample += 1 + 4 // image/jpeg's components, and a progressive frame's coefficients
	}
	workers := int64(s.opts.Workers)
	if workers <= 0 {
		workers = int64(runtime.GOMAXPROCS(0))
	}
	workers = min(workers, mul(int64(l.BlocksAcross), int64(l.BlocksDown), int64(l.Planes)))
	colours := int64(0) // a band of a palette's colours, from its indices (counted for ImageJ's too, which keep theirs)
	if l.Photometric == tiff.PhotometricPalette {
		colours = mul(rows, int64(spec.SizeX), int64(outPixel))
	}
	return mul(3, rows, pageRow) + colours + mul(planes, s.lim.bandBytes(spec.SizeX, spec.SizeY, outPixel)) + mul(workers, blockSamples, perSample)
}

func (s *tiffSource) specs() []pyramid.ImageSpec {
	out := make([]pyramid.ImageSpec, len(s.file.Images))
	for i, im := range s.file.Images {
		out[i] = im.Spec
	}
	return out
}

func (s *tiffSource) skipped() []error { return s.file.Skipped }

// write adds every image first, so that the progress counts the tiles of
// all of them, then streams each image's planes.
func (s *tiffSource) write(ctx context.Context, w *pyramid.Writer, specs []pyramid.ImageSpec) ([]pyramid.ImageSpec, error) {
	dsts := make([]*pyramid.Image, len(specs))
	for i, spec := range specs {
		var err error
		spec.Coding = s.coding[i]
		if s.encoded[i] != nil {
			dsts[i], err = w.AddEncodedImage(spec, s.encoded[i]...)
		} else {
			dsts[i], err = w.AddImage(spec)
		}
		if err != nil {
			err = fmt.Errorf("%s: image %d (%q): %w", s.name, s.number[i], spec.Name, err)
			// Metadata the writer refuses that no flag gave is the
			// input's (exit status 1), not a bad command line (2), which
			// package pyramid's ErrMetadata is taken for. (A flag's
			// option, -predictor say, stays the command line's.)
			if errors.Is(err, pyramid.ErrMetadata) && (i > 0 || !s.described) {
				err = cli.InputError{Err: err}
			}
			return specs, err
		}
		specs[i] = dsts[i].Spec()
	}
	for i, im := range s.file.Images {
		if err := im.WritePlanes(ctx, dsts[i], s.opts); err != nil {
			switch {
			case !errors.Is(err, source.ErrSize) || errors.Is(err, source.ErrBomb):
			case s.lim.maxMemory == 0:
				// No limit given: the bound is what the file can hold, or
				// the reader's default when that is more (openTIFF leaves
				// MaxBandBytes 0 for a small file): not a -max-memory to
				// raise, which the user lifted.
				bound := "at most 1000 times the file's size"
				if s.opts.MaxBandBytes == 0 {
					bound = fmt.Sprintf("at most %v (more than 1000 times the file's size)", byteSize(source.DefaultMaxBandBytes))
				}
				err = fmt.Errorf("%w (with -max-memory 0, a band takes %s; a -max-memory above the band reads it)", err, bound)
			case s.opts.MaxBandBytes == 0:
				err = fmt.Errorf("%w (-max-memory above %v raises the bound)", err, byteSize(source.DefaultMaxBandBytes))
			}
			return specs, fmt.Errorf("%s: image %d (%q): %w", s.name, s.number[i], specs[i].Name, err)
		}
	}
	return specs, nil
}

// planCopy decides which images have their tiles copied through, each
// in its own coding, which its computed levels take too. An image's tiles
// are not copied when they are strips or of a codec the writer does not
// write (the image takes the flags' coding, LZW by default), or not
// square, of another size than -tile, or of another predictor than
// -predictor's (the image is encoded again in its codec: a JPEG slide
// stays JPEG). Nothing is copied when -compression is given. The writer's tile size is the
// first copied image's, unless -tile is given. With -copy-levels the
// source's reduced levels are copied too when they form an OME pyramid.
// It says what it does on stderr.
func (s *tiffSource) planCopy(cfg config, stderr io.Writer) {
	s.wopts = cfg.options
	s.encoded = make([][]pyramid.EncodedLevel, len(s.file.Images))
	s.coding = make([]*pyramid.Coding, len(s.file.Images))
	say := func(format string, args ...any) {
		fmt.Fprintf(stderr, "%s: %s: %s\n", convertName, s.name, fmt.Sprintf(format, args...))
	}
	defer s.planPredictor(cfg, say)
	if cfg.set["compression"] {
		if cfg.copyLevels {
			say("-copy-levels does not apply: -compression encodes every image again")
		}
		s.planJPEG(cfg, say)
		return
	}
	again := "encoded again as " + cfg.options.Compression.String()
	if cfg.options.Compression == pyramid.None {
		again = "written again uncompressed"
	}
	// encoded returns an image's levels to copy, and with -copy-levels
	// why its own levels are not among them.
	encoded := func(im *source.Image) (levels []pyramid.EncodedLevel, why, err error) {
		if !cfg.copyLevels {
			levels, err = im.Encoded(false)
			return levels, nil, err
		}
		if levels, why = im.Encoded(true); why == nil {
			// -levels counts the levels written, the full resolution
			// included, copied or computed: the first of the source's
			// (with one, the writer computes none: -levels 1).
			if n := cfg.options.Levels; n > 0 && len(levels) > n {
				levels = levels[:n]
			}
			return levels, nil, nil
		}
		levels, err = im.Encoded(false)
		return levels, why, err
	}
	o := cfg.options
	copiedJPEG, copiedLevel := false, false
	computed := false        // some image's tiles or levels are encoded by the writer
	sized := cfg.set["tile"] // the writer's tile size is set
	for i, im := range s.file.Images {
		levels, why, err := encoded(im)
		computed = computed || err != nil || len(levels) == 1
		var c pyramid.TileCoding
		if err == nil {
			c = levels[0].TileCoding
		} else if c, err = jpegTiles(im, err); err != nil {
			if why, ok := notCopied(im, err); ok || cfg.copyLevels {
				say("image %d: %s: %s", s.number[i], again, why)
			}
			continue
		}
		side, square, fits := tileSide(im.Spec, c)
		// encodeAgain codes an image whose tiles cannot be copied in the
		// source's codec all the same (a JPEG slide stays JPEG, at its
		// quality), but with -predictor's predictor (auto by default).
		encodeAgain := func(format string, args ...any) {
			computed = true
			if c.Compression == pyramid.None && cfg.set["predictor"] && o.Predictor != pyramid.PredictorNone && o.Predictor != pyramid.PredictorAuto {
				// A predictor asks for compression: the flags' coding.
				say("image %d: %s: %s", s.number[i], again, fmt.Sprintf(format, args...))
				return
			}
			coding := s.copyCoding(cfg, im, c)
			if c.Compression != pyramid.JPEG && c.Compression != pyramid.None {
				// Encoded here, the tiles take -predictor's predictor, or
				// auto's (2 or 3), whatever the source's was.
				coding.Predictor = pyramid.PredictorAuto
				if cfg.set["predictor"] {
					coding.Predictor = s.predictorFor(cfg, i)
				}
			}
			s.coding[i] = &coding
			copiedJPEG = copiedJPEG || c.Compression == pyramid.JPEG
			copiedLevel = copiedLevel || c.Compression == pyramid.Deflate || c.Compression == pyramid.Zstd
			what := "encoded again as " + c.Compression.String()
			switch c.Compression {
			case pyramid.JPEG:
				what = fmt.Sprintf("encoded again as JPEG at quality %d", cmp.Or(coding.Quality, compress.DefaultJPEGQuality))
				if lost := chromaLost(c, coding); lost != "" {
					what += lost + ")"
				}
			case pyramid.None:
				what = "written again uncompressed"
			}
			if cfg.copyLevels {
				format += "; -copy-levels does not apply"
			}
			say("image %d: %s: %s", s.number[i], what, fmt.Sprintf(format, args...))
		}
		switch {
		case levels == nil: // JPEG tiles the writer cannot copy
			encodeAgain("the source's are %d x %d, not multiples of 16", c.TileWidth, c.TileHeight)
			continue
		case !square:
			encodeAgain("the source's are %d x %d, and the writer's square", c.TileWidth, c.TileHeight)
			continue
		case cfg.set["tile"] && !fits(o.TileSize):
			encodeAgain("-tile %d, the source's are %d x %d", o.TileSize, c.TileWidth, c.TileHeight)
			continue
		case !cfg.set["tile"] && !viewable(im.Spec, c, side):
			encodeAgain("the source's are %d x %d, and tiles of %d to %d a side are copied (-tile %d copies these)",
				c.TileWidth, c.TileHeight, minCopiedTile, maxCopiedTile, side)
			continue
		case cfg.set["predictor"] && o.Predictor != pyramid.PredictorAuto && s.predictorFor(cfg, i) != c.Predictor && c.Compression != pyramid.JPEG:
			encodeAgain("-predictor %v, the source's is %v", s.predictorFor(cfg, i), c.Predictor)
			continue
		case cfg.set["jpeg-color"] && c.Compression == pyramid.JPEG && im.Spec.SamplesPerPixel == 3 &&
			(o.JPEGColor == pyramid.JPEGRGB) != (c.Photometric == tiff.PhotometricRGB):
			// Levels coded otherwise than the full resolution would make
			// a pyramid of two colour codings: every level is encoded
			// again, in JPEG as -jpeg-color asks. Gray tiles are alike in
			// both codings, and copied.
			coding := s.copyCoding(cfg, im, c)
			s.coding[i] = &coding
			copiedJPEG = true
			note := ""
			if cfg.copyLevels { // as encodeAgain says it
				note = "; -copy-levels does not apply"
			}
			say("image %d: encoded again as JPEG (%v) at quality %d: -jpeg-color %s, the source's are %s%s", s.number[i], o.JPEGColor,
				cmp.Or(coding.Quality, compress.DefaultJPEGQuality), map[bool]string{true: "rgb", false: "ycbcr"}[o.JPEGColor == pyramid.JPEGRGB],
				map[bool]string{true: "RGB-coded", false: "YCbCr"}[c.Photometric == tiff.PhotometricRGB], note)
			continue
		}
		// The computed levels' tiles are the first copied image's, unless
		// its one tile says nothing of them.
		if !sized && !fits(side+16) {
			s.wopts.TileSize, sized = side, true
		}
		coding := s.copyCoding(cfg, im, c)
		s.coding[i], s.encoded[i] = &coding, levels
		copiedJPEG = copiedJPEG || c.Compression == pyramid.JPEG
		copiedLevel = copiedLevel || c.Compression == pyramid.Deflate || c.Compression == pyramid.Zstd
		// An image within one tile of the writer's has no levels to
		// compute (nor had its source any to copy), unless -levels asks.
		oneTile := o.Levels == 0 && max(im.Spec.SizeX, im.Spec.SizeY) <= cmp.Or(s.wopts.TileSize, 256)
		if why != nil && o.Levels != 1 && !oneTile {
			say("image %d: its levels are computed, as -copy-levels cannot copy them: %s", s.number[i], plainWhy(why))
		}
		if len(levels) > 1 {
			if o.Levels > len(levels) {
				say("image %d: -levels %d: the source has %s, all copied (none is computed past them)", s.number[i], o.Levels, plural(len(levels), "level"))
			}
			var unused []string // the flags of computed levels
			for _, f := range []string{"downsampling", "quality", "level"} {
				if cfg.set[f] {
					unused = append(unused, "-"+f)
				}
			}
			if len(unused) > 0 {
				say("image %d: %s %s: the source's %s %s copied", s.number[i], strings.Join(unused, ", "),
					map[bool]string{true: "does not apply", false: "do not apply"}[len(unused) == 1], plural(len(levels)-1, "reduced level"),
					map[bool]string{true: "is", false: "are"}[len(levels) == 2])
			}
		}
		if cfg.set["predictor"] && c.Compression == pyramid.JPEG && o.Predictor != pyramid.PredictorAuto && o.Predictor != pyramid.PredictorNone {
			say("image %d: -predictor %v does not apply: JPEG tiles take no predictor", s.number[i], o.Predictor)
		}
		how := "the levels computed"
		switch {
		case len(levels) > 1:
			how = plural(len(levels)-1, "level") + " copied"
		case cfg.options.Levels == 1:
			how = "no reduced levels (-levels 1)"
		case oneTile:
			how = "no reduced levels (one tile)"
		case coding.Compression == pyramid.JPEG:
			how += fmt.Sprintf(" at quality %d", cmp.Or(coding.Quality, compress.DefaultJPEGQuality)) // 0: the writer's default
			if lost := chromaLost(c, coding); lost != "" {
				how += lost + ", but encodes every level again)"
			}
		}
		say("image %d: %s tiles of %d x %d copied through, %s (-compression encodes them again)",
			s.number[i], codecName(c.Compression), c.TileWidth, c.TileHeight, how)
	}
	// The flags of the copied images' codecs were theirs, not the writer's
	// LZW's (which refuses them when nothing takes them).
	if copiedJPEG {
		s.wopts.Quality, s.wopts.JPEGColor = 0, pyramid.JPEGYCbCr420
	}
	if copiedLevel || !computed { // -level was theirs, or every level is copied: it applies to nothing
		s.wopts.Level = 0
	}
	if !computed { // nor does any other flag of a codec
		s.wopts.Quality, s.wopts.JPEGColor = 0, pyramid.JPEGYCbCr420
	}
}

// chromaLost says, when the writer encodes tiles of a source coded as c in
// YCbCr 4:2:0 and the source's chroma is subsampled less, what it loses,
// with its remedy, the parenthesis left open; else "".
func chromaLost(c pyramid.TileCoding, coding pyramid.Coding) string {
	h, v := c.YCbCrSubSampling[0], c.YCbCrSubSampling[1]
	if c.Photometric != tiff.PhotometricYCbCr || h*v >= 4 || h > 2 || v > 2 || coding.JPEGColor != pyramid.JPEGYCbCr420 {
		return "" // 4:2:0 or less chroma: nothing lost
	}
	return fmt.Sprintf(" in YCbCr 4:2:0 (the source's subsampling is %d x %d; -jpeg-color rgb keeps the full chroma", h, v)
}

// codecs names the compressions of the images written, in the order of
// the images: each its own coding's (a source's tiles copied through keep
// theirs), else the writer's.
func (s *tiffSource) codecs() string {
	var names []string
	for i := range s.file.Images {
		c := s.wopts.Compression
		if s.coding[i] != nil {
			c = s.coding[i].Compression
		}
		if name := codecName(c); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return strings.Join(names, " and ")
}

// codecName names a compression in messages: "uncompressed" for None.
func codecName(c pyramid.Compression) string {
	if c == pyramid.None {
		return "uncompressed"
	}
	return c.String()
}

// tileSide returns the side of the square tiles the writer would cut an
// image in tiles coded as c with, and whether it would: tiles are square,
// but where the image is narrower or shorter than a tile, shrunk to it
// rounded up to 16 (a 300 x 200 image in tiles of 256 x 208), as this
// writer, libtiff and libvips cut them. Tiles shrunk to the image both
// ways (its one tile) would be cut at any larger side too: fits reports
// whether a side gives them.
func tileSide(spec pyramid.ImageSpec, c pyramid.TileCoding) (side int, square bool, fits func(int) bool) {
	side = max(c.TileWidth, c.TileHeight)
	fits = func(s int) bool {
		return c.TileWidth == min(s, (spec.SizeX+15)&^15) && c.TileHeight == min(s, (spec.SizeY+15)&^15)
	}
	if fits(math.MaxInt) { // one tile, shrunk to the image: any side from its own
		return side, true, func(s int) bool { return s >= side }
	}
	return side, c.TileWidth == c.TileHeight || fits(side), func(s int) bool { return s == side }
}

// The tile sides convert copies without -tile. Tiles of 16 pixels (the
// least TIFF allows) make a file of many small reads at every level
// (libvips then reads it several times slower); larger ones than 1024
// make a viewer decode megabytes for a glance, and a pyramid that stops
// after a level or two, as its levels halve until one tile. libvips
// writes 128 by default, Bio-Formats and QuPath 256 to 1024.
const (
	minCopiedTile = 32
	maxCopiedTile = 1024
)

// copiable reports whether convert, without -tile, copies tiles coded
// as c of an image: whether the writer would cut them alike, and their
// side is one viewers read quickly (an image within one tile takes any
// side up to maxCopiedTile).
func copiable(spec pyramid.ImageSpec, c pyramid.TileCoding) bool {
	side, square, _ := tileSide(spec, c)
	return square && viewable(spec, c, side)
}

// viewable reports whether tiles coded as c, of side side, are of a size
// convert copies without -tile.
func viewable(spec pyramid.ImageSpec, c pyramid.TileCoding, side int) bool {
	oneTile := c.TileWidth >= spec.SizeX && c.TileHeight >= spec.SizeY
	return side <= maxCopiedTile && (side >= minCopiedTile || oneTile)
}

// predictorFor returns the predictor -predictor asks of image i: the
// flag's, or when it does not suit the image's samples (horizontal for
// floats, floating-point for integers) but suits some other image's, the
// one that does, as -compression jpeg leaves the images JPEG cannot code
// in LZW. When it suits none, the writer's refusal says why.
func (s *tiffSource) predictorFor(cfg config, i int) pyramid.Predictor {
	flag := cfg.options.Predictor
	if flag != pyramid.PredictorHorizontal && flag != pyramid.PredictorFloatingPoint {
		return flag
	}
	suits := func(im *source.Image) bool {
		t := im.Spec.PixelType
		return (t == pyramid.Float32 || t == pyramid.Float64) == (flag == pyramid.PredictorFloatingPoint)
	}
	if suits(s.file.Images[i]) || !slices.ContainsFunc(s.file.Images, suits) {
		return flag
	}
	if flag == pyramid.PredictorHorizontal {
		return pyramid.PredictorFloatingPoint
	}
	return pyramid.PredictorHorizontal
}

// planPredictor gives the images that take the flags' coding the
// predictor predictorFor says, and says so where it is not -predictor's.
func (s *tiffSource) planPredictor(cfg config, say func(string, ...any)) {
	if !cfg.set["predictor"] {
		return
	}
	for i, im := range s.file.Images {
		p := s.predictorFor(cfg, i)
		if p == cfg.options.Predictor {
			continue
		}
		c := s.coding[i]
		if c == nil {
			o := s.wopts
			c = &pyramid.Coding{Compression: o.Compression, Level: o.Level, Quality: o.Quality, JPEGColor: o.JPEGColor, Predictor: o.Predictor}
		}
		if c.Predictor != cfg.options.Predictor {
			continue // its tiles' own, copied or encoded again
		}
		c.Predictor, s.coding[i] = p, c
		say("image %d: predictor %v, not -predictor's %v, which is not for %v samples", s.number[i], p, cfg.options.Predictor, im.Spec.PixelType)
	}
}

// jpegable reports whether JPEG codes an image's samples: 8-bit gray or
// RGB.
func jpegable(spec pyramid.ImageSpec) bool {
	return spec.PixelType == pyramid.Uint8 && (spec.SamplesPerPixel == 1 || spec.SamplesPerPixel == 3)
}

// checkJPEG refuses -compression jpeg for an input none of whose images
// JPEG codes, in the flag's words (the writer's names its options).
func (s *tiffSource) checkJPEG(cfg config) error {
	if cfg.options.Compression != pyramid.JPEG || slices.ContainsFunc(s.file.Images, func(im *source.Image) bool { return jpegable(im.Spec) }) {
		return nil
	}
	spec := s.file.Images[0].Spec
	return cli.UsageError{Err: fmt.Errorf("-compression jpeg takes 8-bit gray or RGB samples, and no image of %s has them (image %d is %d x %v): give lzw, deflate or zstd",
		s.name, s.number[0], max(spec.SamplesPerPixel, 1), spec.PixelType)}
}

// planJPEG gives LZW to the images JPEG cannot code (other samples than
// 8-bit gray or RGB) when -compression jpeg asks for it and some other
// image takes it (when none does, checkJPEG refused it).
func (s *tiffSource) planJPEG(cfg config, say func(string, ...any)) {
	if cfg.options.Compression != pyramid.JPEG {
		return
	}
	if !slices.ContainsFunc(s.file.Images, func(im *source.Image) bool { return jpegable(im.Spec) }) {
		return
	}
	for i, im := range s.file.Images {
		if !jpegable(im.Spec) {
			s.coding[i] = &pyramid.Coding{Compression: pyramid.LZW}
			say("image %d: LZW, not JPEG, which takes 8-bit gray or RGB samples, not %d x %v", s.number[i], im.Spec.SamplesPerPixel, im.Spec.PixelType)
			continue
		}
		// JPEG tiles encoded again lose more: said, with the qualities,
		// as the copied path says what it keeps.
		page := im.Planes[0].Page
		if l, err := page.Layout(); err == nil && l.Compression == tiff.CompressionJPEG {
			q, _, err := compress.JPEGQuality(page.JPEGTables())
			if err != nil && l.Tiled { // the tiles hold their quantization tables (a strip may be the whole image: not read)
				tile, _ := page.ReadBlock(nil, 0)
				q, _, err = compress.JPEGQuality(tile)
			}
			source := ""
			if err == nil {
				source = fmt.Sprintf(" (the source's: %d)", q)
			}
			copied := ""
			if levels, err := im.Encoded(false); err == nil && copiable(im.Spec, levels[0].TileCoding) {
				copied = "; without -compression they are copied"
			}
			say("image %d: its JPEG %s decoded and encoded again at quality %d%s%s", s.number[i],
				map[bool]string{true: "tiles are", false: "strips are"}[l.Tiled], cmp.Or(cfg.options.Quality, compress.DefaultJPEGQuality), source, copied)
		}
		// A source in YCbCr of more chroma than 4:2:0 loses it, as the
		// copied path says.
		if l, err := page.Layout(); err == nil && l.Photometric == tiff.PhotometricYCbCr {
			if h, v, err := page.YCbCrSubsampling(); err == nil {
				c := pyramid.TileCoding{Photometric: l.Photometric, YCbCrSubSampling: [2]int{h, v}}
				if lost := chromaLost(c, pyramid.Coding{JPEGColor: cfg.options.JPEGColor}); lost != "" {
					say("image %d: encoded as JPEG%s)", s.number[i], lost)
				}
			}
		}
	}
}

// jpegTiles returns the coding of an image whose JPEG tiles the writer
// cannot copy, for their size alone (an NDPI's restart intervals of 8
// rows, at 4:4:4, 4:2:2 or gray), so that it is encoded again in JPEG at
// their quality, as tiles not square are; else err, Image.Encoded's.
func jpegTiles(im *source.Image, err error) (pyramid.TileCoding, error) {
	page := im.Planes[0].Page
	l, lerr := page.Layout()
	if lerr != nil || !l.Tiled || l.Compression != tiff.CompressionJPEG || l.Planes > 1 || im.Planes[0].Sample >= 0 ||
		l.BlockWidth%16 == 0 && l.BlockHeight%16 == 0 {
		return pyramid.TileCoding{}, err
	}
	c := pyramid.TileCoding{Compression: pyramid.JPEG, TileWidth: l.BlockWidth, TileHeight: l.BlockHeight,
		Photometric: l.Photometric, JPEGTables: page.JPEGTables()}
	if l.Photometric == tiff.PhotometricYCbCr {
		h, v, serr := page.YCbCrSubsampling()
		if serr != nil {
			return pyramid.TileCoding{}, err
		}
		c.YCbCrSubSampling = [2]int{h, v}
	}
	return c, nil
}

// notCopied says in a few words why an image's tiles are not copied
// (Image.Encoded's error), and whether that is worth saying unasked:
// strips are, but for JPEG strips, whose output grows several times,
// lossless strips lose nothing encoded again.
func notCopied(im *source.Image, err error) (string, bool) {
	if l, lerr := im.Planes[0].Page.Layout(); lerr == nil && !l.Tiled {
		name, ok := tiff.ValueName(tiff.TagCompression, uint64(l.Compression))
		if !ok {
			name = fmt.Sprintf("Compression %d", l.Compression)
		}
		if l.Compression == tiff.CompressionNone {
			name = "uncompressed"
		}
		return fmt.Sprintf("its %s strips are not copied (tiles only)", name), l.Compression == tiff.CompressionJPEG
	}
	return plainWhy(err), true
}

// plainWhy is the text of Image.Encoded's error without the packages'
// prefixes, for saying why tiles or levels are not copied.
func plainWhy(err error) string {
	why := err.Error()
	for _, prefix := range []string{"source: unsupported layout: ", "tiles copied through: ", "pyramid: bad option: "} {
		why = strings.Replace(why, prefix, "", 1)
	}
	return why
}

// copyCoding returns the coding of an image whose tiles, coded as c, are
// copied through: c's, which its computed levels take too. For JPEG, the
// quality is -quality's, else the source's as its quantization tables
// give it, and the colour coding -jpeg-color's, else the source's.
func (s *tiffSource) copyCoding(cfg config, im *source.Image, c pyramid.TileCoding) pyramid.Coding {
	coding := pyramid.Coding{Compression: c.Compression, Predictor: c.Predictor}
	switch c.Compression {
	case pyramid.Deflate, pyramid.Zstd:
		coding.Level = cfg.options.Level
	case pyramid.JPEG:
		coding.Predictor = pyramid.PredictorAuto
		coding.Quality, coding.JPEGColor = cfg.options.Quality, cfg.options.JPEGColor
		if !cfg.set["quality"] {
			q, _, err := compress.JPEGQuality(c.JPEGTables)
			if err != nil { // the tiles hold their quantization tables
				tile, _ := im.Planes[0].Page.ReadBlock(nil, 0)
				q, _, err = compress.JPEGQuality(tile)
			}
			if err == nil {
				coding.Quality = q
			}
		}
		if !cfg.set["jpeg-color"] && c.Photometric == tiff.PhotometricRGB {
			coding.JPEGColor = pyramid.JPEGRGB
		}
	}
	return coding
}
