package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
)

// runConvert is the convert command: it converts the input named in args,
// prints what it wrote to stdout, and reports a failure as one line on
// stderr. It returns the exit code: 0, 1 when the conversion fails, 2 for
// a usage error (bad flags or flag values, including those the writer
// rejects).
func runConvert(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stdout)
	if err != nil {
		return cli.Exit(convertName, stderr, cli.UsageError{Err: err})
	}
	return cli.Run(convertName, stderr, func(ctx context.Context) error {
		start := time.Now()
		bar := newProgress(stderr)
		if bar.visible {
			cfg.options.Progress = bar.update
		}
		specs, err := convert(ctx, cfg, stderr)
		bar.done()
		if err != nil {
			return err
		}
		return printSummary(stdout, cfg.output, specs, time.Since(start))
	})
}

// convertName prefixes the convert command's error lines.
const convertName = "ometiff convert"

// convert writes cfg.input to cfg.output and returns the specs of the
// images written. The input's header is read and checked before the
// output is created, so an input refused leaves nothing behind; on any
// later failure the output is discarded. What the input holds and the
// output cannot carry is refused, or with -skip-unsupported reported on
// stderr.
func convert(ctx context.Context, cfg config, stderr io.Writer) ([]pyramid.ImageSpec, error) {
	if cfg.input == "-" { // a file of that name is ./-
		return nil, cli.UsageError{Err: errors.New("-: standard input is not read as such: name the input file (a PNG, JPEG or raw input may be /dev/stdin)")}
	}
	in, err := openInput(cfg.input)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if err := checkOutput(in, cfg.output); err != nil {
		return nil, err
	}
	// An output that exists is refused before the source is read, and so
	// are flags its codec does not take, unless the source may be a
	// multi-file dataset or a TIFF whose tiles are copied: then the output
	// may name a file of the dataset, which is refused as such once the
	// source is open, and the output's codecs are the source's.
	tiffFile, early := sourceKind(in, cfg)
	if early {
		if err := checkExists(cfg); err != nil {
			return nil, err
		}
		// A TIFF from a pipe is refused for that, whatever its flags.
		if err := checkCodecFlags(cfg, cfg.options, cfg.options.Compression.String()); err != nil && !tiffFile {
			return nil, err
		}
	}
	// What reading the source says waits until the output is known to be
	// one to write: a refusal of the output comes alone.
	notes := &heldWriter{w: stderr}
	src, err := openSource(in, cfg, notes)
	if err != nil {
		if !errors.As(err, new(existsError)) { // openTIFF's, before it decodes a TIFF whole
			notes.release()
		}
		return nil, err
	}
	options := cfg.options
	output := options.Compression.String() // the codecs of the output's images
	if ts, ok := src.(*tiffSource); ok {
		defer ts.Close()
		options, output = ts.wopts, ts.codecs()
		if err := checkParts(ts.parts(), cfg.output); err != nil {
			return nil, err
		}
	}
	if !early {
		if err := checkExists(cfg); err != nil {
			return nil, err
		}
		if err := checkCodecFlags(cfg, options, output); err != nil {
			return nil, err
		}
	}
	notes.release()
	for _, s := range src.skipped() {
		fmt.Fprintf(stderr, "%s: %s: left out (-skip-unsupported): %v\n", convertName, in.name, s)
	}
	var numbers []int // the images' numbers in the input, where some are not converted
	if t, ok := src.(*tiffSource); ok {
		numbers = t.number
	}
	specs, err := cfg.describe(src.specs(), numbers)
	if err != nil {
		return specs, err
	}
	// Until the file is closed: closing lays out the directories of every
	// tile while the bands are still held. An image decoded whole is live
	// too, and pointer-free, so collecting within a sixteenth of it costs
	// little: without, the heap grew to twice it (GOGC=100).
	defer holdMemory()()
	h, err := iohandle.Create(cfg.output, iohandle.Options{BufferSize: iohandle.BigBuffer, Replace: cfg.force, DirectIO: directIO(cfg, options, src)})
	if errors.Is(err, fs.ErrExist) {
		err = outputExists(cfg.output)
	}
	if err != nil {
		return specs, err
	}
	defer h.Close() // discards the output unless the writer committed it
	w, err := pyramid.NewContext(ctx, h, options)
	if err != nil {
		return specs, err
	}
	if specs, err = src.write(ctx, w, specs); err != nil {
		_ = w.Abort()
		return specs, outputError(err, cfg)
	}
	return specs, outputError(w.Close(), cfg)
}

// outputError is err as the command reports it: a failure to write the
// output (a full disk) alone, not as one of the input's plane it was
// writing, and an output that appeared meanwhile as one that exists.
func outputError(err error, cfg config) error {
	var op *iohandle.OpError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &op) && errors.Is(op, syscall.EFBIG):
		return fmt.Errorf("%w (the process's file-size limit, ulimit -f, or the file system's)", op) // not TIFF's 4 GiB
	case errors.As(err, &op):
		return op
	case errors.Is(err, fs.ErrExist) && !cfg.force:
		return outputExists(cfg.output)
	}
	return err
}

// checkOutput refuses an output path that names a directory, or the
// input itself, which -force would replace with its conversion, or whose
// directory is missing or one the process cannot create files in.
func checkOutput(in *input, path string) error {
	out, err := os.Stat(path)
	if err == nil {
		if out.IsDir() {
			return cli.UsageError{Err: fmt.Errorf("%s is a directory: name the output file", path)}
		}
		if info, err := in.f.Stat(); err == nil && os.SameFile(info, out) {
			return cli.UsageError{Err: fmt.Errorf("%s is the input: name another output (the conversion would replace its source)", path)}
		}
	}
	// A missing output is the common case: its directory must be there.
	// The directory is the path's text before its last separator, not
	// cleaned: "link/.." is the parent of the link's target, and
	// "missing/.." is none.
	dir, _ := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if d := strings.TrimSuffix(dir, string(filepath.Separator)); d != "" {
		dir = d // as the path names it, and the system opens it so
	}
	if err != nil {
		if info, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: its directory, %s, does not exist", path, dir)
		} else if err != nil {
			return fmt.Errorf("%s: its directory: %w", path, err)
		} else if !info.IsDir() {
			return fmt.Errorf("%s: its directory, %s, is not a directory", path, dir)
		}
	}
	// The output is written to a temporary file there and renamed, even
	// one that exists (-force): without this, a directory the process
	// cannot write was found only once the whole input was decoded.
	if err := writableDir(dir); err != nil {
		return fmt.Errorf("%s: its directory, %s, is not writable: %w", path, dir, err)
	}
	return nil
}

// sourceKind reads the input's header: whether it is a TIFF (not raw
// samples that start as one), and whether its output can be checked
// before it is read. It cannot when the input may be a file of a
// multi-file OME-TIFF dataset, or its companion (a TIFF or XML file, not
// a pipe), which the output may name.
func sourceKind(in *input, cfg config) (tiffFile, early bool) {
	if cfg.raw.set {
		return false, true
	}
	var buf [64]byte
	n, _ := io.ReadFull(in.header(), buf[:])
	head := buf[:n]
	return isTIFF(head), in.size < 0 || !isTIFF(head) && !isXML(head)
}

// heldWriter holds what is written to it until release, then writes it,
// and everything after, straight through.
type heldWriter struct {
	mu       sync.Mutex
	w        io.Writer
	held     []byte
	released bool
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return h.w.Write(p)
	}
	h.held = append(h.held, p...)
	return len(p), nil
}

// release writes what is held and lets what comes after through.
func (h *heldWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.released {
		h.released = true
		_, _ = h.w.Write(h.held)
		h.held = nil
	}
}

// checkExists refuses an output that exists, unless -force is given: a
// link too, even one to nothing, which Create would refuse.
func checkExists(cfg config) error {
	if _, err := os.Lstat(cfg.output); err == nil && !cfg.force {
		return outputExists(cfg.output) // Create refuses it again, should it appear in the meantime
	}
	return nil
}

// checkCodecFlags refuses the flags of a codec the output, whose codecs
// output names, does not take: the writer's refusal would name its
// options, and without -compression a codec the user did not ask for.
func checkCodecFlags(cfg config, options pyramid.Options, output string) error {
	give := func(flag, codecs string) string { // what to do
		if cfg.set["compression"] {
			return fmt.Sprintf("-compression %s takes no %s", strings.ToLower(options.Compression.String()), flag)
		}
		return fmt.Sprintf("give -compression %s (the output is %s)", codecs, output)
	}
	switch {
	case options.Level != 0 && options.Compression != pyramid.Deflate && options.Compression != pyramid.Zstd:
		return cli.UsageError{Err: fmt.Errorf("-level %d is Deflate's or Zstd's: %s", options.Level, give("-level", "deflate or zstd"))}
	case options.Quality != 0 && options.Compression != pyramid.JPEG:
		return cli.UsageError{Err: fmt.Errorf("-quality %d is JPEG's: %s", options.Quality, give("-quality", "jpeg"))}
	case options.JPEGColor != pyramid.JPEGYCbCr420 && options.Compression != pyramid.JPEG:
		return cli.UsageError{Err: fmt.Errorf("-jpeg-color rgb is JPEG's: %s", give("-jpeg-color", "jpeg"))}
	}
	return nil
}

// outputExists is the error of an output that exists, without -force: the
// library's message names its option, not the flag. A dead run's
// temporary file goes all the same, as Create would remove it.
func outputExists(path string) error {
	iohandle.RemoveStale(path)
	return existsError(path)
}

// existsError is outputExists's error: the output it names exists.
type existsError string

func (e existsError) Error() string {
	return fmt.Sprintf("%s exists (use -force to replace it)", string(e))
}

// checkParts refuses an output path that names one of the other files
// of a multi-file dataset read.
func checkParts(parts []string, path string) error {
	out, err := os.Stat(path)
	if err != nil {
		return nil
	}
	for _, p := range parts {
		if info, err := os.Stat(p); err == nil && os.SameFile(info, out) {
			return cli.UsageError{Err: fmt.Errorf("%s is a file of the input dataset: name another output (the conversion would replace it)", path)}
		}
	}
	return nil
}

// directIO says whether the output goes around the page cache: with
// -direct, when the writer compresses the full-resolution tiles of some
// image itself. Compression then keeps every core busy, and copying each
// buffer into the page cache, and having the kernel find pages for it,
// takes CPU time from the encoders. Tiles copied through, and uncompressed
// ones, go through the cache, which takes them without waiting for the
// device. It is not the default: on a network file system every direct
// write waits for the server.
func directIO(cfg config, options pyramid.Options, src sourceImages) bool {
	if !cfg.direct || options.Compression == pyramid.None {
		return false
	}
	if ts, ok := src.(*tiffSource); ok {
		return slices.ContainsFunc(ts.encoded, func(levels []pyramid.EncodedLevel) bool { return levels == nil })
	}
	return true
}

// sourceImages is an input: the description of its images and their
// planes.
type sourceImages interface {
	// specs gives the size and planes of each image, and what the input
	// knows of its pixel type, samples and metadata.
	specs() []pyramid.ImageSpec
	// skipped lists what the input holds and the conversion leaves out
	// (with -skip-unsupported).
	skipped() []error
	// write adds the images to w with specs, writes every plane and
	// returns the specs written.
	write(ctx context.Context, w *pyramid.Writer, specs []pyramid.ImageSpec) ([]pyramid.ImageSpec, error)
}

// openSource returns the raw input the -raw flags describe, the images of
// a TIFF file, streamed from its blocks, or the image in the input,
// streamed or decoded.
func openSource(in *input, cfg config, stderr io.Writer) (sourceImages, error) {
	var im imageInput
	var err error
	// An input of one image is image 0: other -images are refused before
	// it is read.
	onlyImage0 := func() error {
		if cfg.images != nil && (len(cfg.images) > 1 || cfg.images[0] != 0) {
			return cli.UsageError{Err: fmt.Errorf("-images %d: %s holds 1 image (0)", cfg.images[len(cfg.images)-1], in.name)}
		}
		return nil
	}
	switch {
	case cfg.raw.set:
		if err := onlyImage0(); err != nil {
			return nil, err
		}
		im, err = newRawSource(in, cfg.raw, cfg.limits)
	default:
		var src sourceImages
		var ok bool
		if src, ok, err = openTIFF(in, cfg, stderr); ok || err != nil {
			return src, err
		}
		if err := onlyImage0(); err != nil {
			return nil, err
		}
		im, err = openImage(in, cfg.limits)
	}
	if err == nil && cfg.copyLevels {
		fmt.Fprintf(stderr, "%s: %s: -copy-levels does not apply: the input is no TIFF, whose levels it copies\n", convertName, in.name)
	}
	if err != nil {
		return nil, err
	}
	// What the image file holds beyond the one image written (frames, a
	// CMYK JPEG's black) is refused, or left out with -skip-unsupported.
	var left []error
	if l, ok := im.(interface{ leftOut() []error }); ok {
		left = l.leftOut()
	}
	if n, ok := im.(interface{ said() []string }); ok {
		for _, note := range n.said() {
			fmt.Fprintf(stderr, "%s: %s: %s\n", convertName, in.name, note)
		}
	}
	if len(left) > 0 && !cfg.skipUnsupported {
		return nil, cli.InputError{Err: fmt.Errorf("%s: %w (-skip-unsupported converts it so)", in.name, left[0])}
	}
	return oneImage{im, alphaPolicy{drop: cfg.skipUnsupported, stderr: stderr}, left}, nil
}

// imageInput is an input of one image.
type imageInput interface {
	// spec gives the size and planes of the image, and what the input
	// knows of its pixel type and samples.
	spec() pyramid.ImageSpec
	// write adds the image to w with spec, writes every plane and returns
	// the spec written. An image with transparency, which the output does
	// not hold, is refused or its transparency dropped, as alpha says.
	write(w *pyramid.Writer, spec pyramid.ImageSpec, alpha alphaPolicy) (pyramid.ImageSpec, error)
}

// oneImage is the source of an input of one image.
type oneImage struct {
	in    imageInput
	alpha alphaPolicy
	left  []error // what the conversion leaves out, with -skip-unsupported
}

func (s oneImage) specs() []pyramid.ImageSpec { return []pyramid.ImageSpec{s.in.spec()} }
func (s oneImage) skipped() []error           { return s.left }
func (s oneImage) write(_ context.Context, w *pyramid.Writer, specs []pyramid.ImageSpec) ([]pyramid.ImageSpec, error) {
	spec, err := s.in.write(w, specs[0], s.alpha)
	return []pyramid.ImageSpec{spec}, err
}

// printSummary prints what was written: one line for one image; for
// several, a line for the file and one for each image. Its error (stdout
// full or closed) says the output is written all the same, so that a
// user whose run fails so does not take the file for missing or partial.
func printSummary(w io.Writer, path string, specs []pyramid.ImageSpec, elapsed time.Duration) error {
	var b strings.Builder
	err := summary(&b, path, specs, elapsed)
	if err == nil {
		_, err = io.WriteString(w, b.String())
	}
	if err != nil {
		return fmt.Errorf("%s is written, but what it holds cannot be printed: %w", path, err)
	}
	return nil
}

// summary writes printSummary's lines to b.
func summary(b *strings.Builder, path string, specs []pyramid.ImageSpec, elapsed time.Duration) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	describe := func(spec pyramid.ImageSpec) string {
		rgb := ""
		if spec.SamplesPerPixel == 3 {
			rgb = " RGB"
		}
		text := fmt.Sprintf("%d x %d%s %s, Z %d x C %d x T %d", spec.SizeX, spec.SizeY, rgb, spec.PixelType, spec.SizeZ, spec.SizeC, spec.SizeT)
		// The pixel size said, since a tool's default resolution (libvips's
		// 10 pixels/cm, 72 dpi) becomes one (-physical-size replaces it).
		if spec.PhysicalSizeX > 0 {
			text += ", pixel " + length(spec.PhysicalSizeX, spec.PhysicalSizeXUnit)
			if spec.PhysicalSizeY > 0 && (spec.PhysicalSizeY != spec.PhysicalSizeX || spec.PhysicalSizeYUnit != spec.PhysicalSizeXUnit) {
				text += " x " + length(spec.PhysicalSizeY, spec.PhysicalSizeYUnit)
			}
		}
		return text
	}
	size := fmt.Sprintf("%.1f MB in %.2f s", float64(info.Size())/1e6, elapsed.Seconds())
	if len(specs) == 1 {
		fmt.Fprintf(b, "wrote %s: %s, %s\n", path, describe(specs[0]), size)
		return nil
	}
	planes := 0
	for _, s := range specs {
		planes += s.Planes()
	}
	fmt.Fprintf(b, "wrote %s: %d images, %d planes, %s\n", path, len(specs), planes, size)
	for i, s := range specs {
		fmt.Fprintf(b, "  image %d %q: %s\n", i, s.Name, describe(s))
	}
	return nil
}
