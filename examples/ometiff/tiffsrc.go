package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"

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
	// wopts are the writer's options: the flags', or the source's coding
	// when its tiles are copied through.
	wopts pyramid.Options
	// encoded are the levels of each image whose tiles are copied
	// through (nil: the image is encoded again).
	encoded [][]pyramid.EncodedLevel
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

// openTIFF opens the input as a TIFF file when it is one (ok), and checks
// it against the limits before anything large is allocated. A one-page
// file of palette colours or samples of fewer than 8 bits, which the
// streaming reader does not read, is left to the image decoders (not ok).
func openTIFF(in *input, cfg config, stderr io.Writer) (src sourceImages, ok bool, err error) {
	var head [4]byte
	if _, err := io.ReadFull(in.header(), head[:]); err != nil || !isTIFF(head[:]) {
		return nil, false, nil
	}
	if in.size < 0 {
		return nil, true, fmt.Errorf("%s: a TIFF file is read where its blocks lie: give a file, not a pipe", in.name)
	}
	tf, err := tiff.Read(in.f, in.size)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", in.name, err)
	}
	if len(tf.Pages) == 1 && decodedWhole(tf.Pages[0]) {
		return nil, false, nil
	}
	// Bands as high as the writer's tiles (or the most whole blocks in
	// them) reach the writer's tiles without a copy.
	s := &tiffSource{name: in.name, lim: cfg.limits, opts: source.Options{
		Workers: cfg.options.Workers, SkipUnsupported: cfg.skipUnsupported, Rows: cfg.limits.tileSize()}}
	if s.file, err = source.New(tf, filepath.Base(in.name), s.opts); err != nil {
		// What New refuses is the input's, whatever package pyramid's
		// errors it wraps (the writer's refusal of its OME-XML).
		err = fmt.Errorf("%s: %w", in.name, err)
		if !cfg.skipUnsupported && (errors.Is(err, source.ErrUnsupported) || errors.Is(err, source.ErrMetadata)) {
			err = fmt.Errorf("%w (-skip-unsupported converts the rest)", err)
		}
		return nil, true, cli.InputError{Err: err}
	}
	s.planCopy(cfg, stderr)
	s.opts.Rows, s.lim.tile = s.wopts.TileSize, s.wopts.TileSize
	if err := s.checkLimits(); err != nil {
		return nil, true, err
	}
	return s, true, nil
}

// decodedWhole reports whether a page is one the image decoders read and
// the streaming reader does not: palette colours, or samples of 1, 2 or 4
// bits.
func decodedWhole(p *tiff.Page) bool {
	l, err := p.Layout()
	return err == nil && (l.Photometric == tiff.PhotometricPalette || l.BitsPerSample < 8)
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
			return fmt.Errorf("%s: image %d (%d x %d) needs about %v for the bands read and written at tile %d and the blocks decoded, more than -max-memory %v (raise it, or use a smaller -tile)",
				s.name, i, spec.SizeX, spec.SizeY, byteSize(need), lim.tileSize(), lim.maxMemory)
		}
	}
	return nil
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
	rows := int64(max(1, s.opts.Rows/l.BlockHeight) * l.BlockHeight)
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
	return mul(3, rows, pageRow) + mul(planes, s.lim.bandBytes(spec.SizeX, outPixel)) + mul(workers, blockSamples, perSample)
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
		if s.encoded[i] != nil {
			dsts[i], err = w.AddEncodedImage(spec, s.encoded[i]...)
		} else {
			dsts[i], err = w.AddImage(spec)
		}
		if err != nil {
			return specs, fmt.Errorf("image %d (%q): %w", i, spec.Name, err)
		}
		specs[i] = dsts[i].Spec()
	}
	for i, im := range s.file.Images {
		if err := im.WritePlanes(ctx, dsts[i], s.opts); err != nil {
			return specs, fmt.Errorf("%s: image %d (%q): %w", s.name, i, specs[i].Name, err)
		}
	}
	return specs, nil
}

// planCopy decides which images have their tiles copied through, and the
// writer's options: the flags' when -compression is given, or when the
// first image's tiles cannot be copied (strips, a codec the writer does
// not write, tiles of another size than -tile or not square, or a
// predictor other than -predictor's); otherwise the first image's coding,
// and every image coded alike is copied. With -copy-levels the source's
// reduced levels are copied too when they form an OME pyramid. It says
// what it does on stderr.
func (s *tiffSource) planCopy(cfg config, stderr io.Writer) {
	s.wopts = cfg.options
	s.encoded = make([][]pyramid.EncodedLevel, len(s.file.Images))
	if cfg.set["compression"] {
		return
	}
	say := func(format string, args ...any) {
		fmt.Fprintf(stderr, "%s: %s: %s\n", convertName, s.name, fmt.Sprintf(format, args...))
	}
	// again says how the tiles of an image not copied are written: with
	// the writer's codec, the default until image 0's tiles are copied.
	again := func() string {
		if s.wopts.Compression == pyramid.None {
			return "tiles written again uncompressed"
		}
		return "tiles encoded again as " + s.wopts.Compression.String()
	}
	// encoded returns an image's levels to copy, and with -copy-levels
	// why its own levels are not among them.
	encoded := func(im *source.Image) (levels []pyramid.EncodedLevel, why, err error) {
		if !cfg.copyLevels {
			levels, err = im.Encoded(false)
			return levels, nil, err
		}
		if levels, why = im.Encoded(true); why == nil {
			return levels, nil, nil
		}
		levels, err = im.Encoded(false)
		return levels, why, err
	}
	first, why, err := encoded(s.file.Images[0])
	if err != nil {
		if cfg.copyLevels {
			say(again()+": %v", err)
		}
		return
	}
	c := first[0].TileCoding
	o := s.wopts
	switch {
	case c.TileWidth != c.TileHeight:
		say(again()+": the source's are %d x %d, and the writer's square", c.TileWidth, c.TileHeight)
		return
	case cfg.set["tile"] && o.TileSize != c.TileWidth:
		say(again()+": -tile %d, the source's are %d x %d", o.TileSize, c.TileWidth, c.TileHeight)
		return
	case cfg.set["predictor"] && o.Predictor != pyramid.PredictorAuto && o.Predictor != c.Predictor && c.Compression != pyramid.JPEG:
		name := func(p pyramid.Predictor) string { text, _ := p.MarshalText(); return string(text) }
		say(again()+": -predictor %s, the source's is %s", name(o.Predictor), name(c.Predictor))
		return
	}
	o.Compression, o.TileSize, o.Predictor = c.Compression, c.TileWidth, c.Predictor
	if c.Compression == pyramid.JPEG {
		o.Predictor = pyramid.PredictorAuto
		if !cfg.set["quality"] {
			q, _, err := compress.JPEGQuality(c.JPEGTables)
			if err != nil { // the tiles hold their quantization tables
				tile, _ := s.file.Images[0].Planes[0].Page.ReadBlock(nil, 0)
				q, _, err = compress.JPEGQuality(tile)
			}
			if err == nil {
				o.Quality = q
			}
		}
		if !cfg.set["jpeg-color"] && c.Photometric == tiff.PhotometricRGB {
			o.JPEGColor = pyramid.JPEGRGB
		}
	}
	if o.Compression != pyramid.Deflate && o.Compression != pyramid.Zstd {
		o.Level = 0
	}
	s.wopts = o
	for i, im := range s.file.Images {
		levels := first
		if i > 0 {
			if levels, why, err = encoded(im); err != nil {
				say("image %d: %s: %v", i, again(), err)
				continue
			}
			// Its levels are computed with the writer's options, image 0's
			// (for JPEG, image 0's quality and coding of colour).
			e := levels[0].TileCoding
			jpegDiffers := c.Compression == pyramid.JPEG && (e.Photometric != c.Photometric || !bytes.Equal(e.JPEGTables, c.JPEGTables))
			if e.Compression != c.Compression || e.TileWidth != c.TileWidth || e.TileHeight != c.TileHeight || e.Predictor != c.Predictor || jpegDiffers {
				say("image %d: %s: not coded as image 0's", i, again())
				continue
			}
		}
		if why != nil {
			say("image %d: the levels are computed: %v", i, why)
		}
		s.encoded[i] = levels
		how := "the levels computed"
		if len(levels) > 1 {
			how = plural(len(levels)-1, "level") + " copied"
		} else if o.Compression == pyramid.JPEG {
			q := o.Quality
			if q == 0 {
				q = 75 // the writer's default
			}
			how += fmt.Sprintf(" at quality %d", q)
		}
		say("image %d: %v tiles of %d x %d copied through, %s (-compression encodes them again)",
			i, c.Compression, c.TileWidth, c.TileHeight, how)
	}
}
