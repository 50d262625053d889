// Convert converts an image into a pyramidal OME-TIFF.
//
// It reads PNG, JPEG, GIF, BMP, TIFF and WebP files, decoded by the
// standard library and golang.org/x/image (non-interlaced PNGs by a
// streaming reader of their rows), and raw files of little-endian samples
// described by the -raw flags. A decoded image becomes one plane: gray
// images one uint8 or uint16 channel, colour images interleaved RGB,
// uint16 for 16-bit colour models and uint8 otherwise; alpha is dropped. A
// raw file is read plane by plane, in the -raw-order of its planes.
//
// # Memory
//
// A non-interlaced PNG and a raw file are streamed: their rows reach the
// writer a band at a time, so memory grows with the image's width, not
// its height, and a file larger than memory converts. The writer's bands
// take about 3 x tile x width x bytes per pixel (3 for RGB uint8), and Go's
// garbage collector lets the process peak at about twice that, plus
// 48 MiB for the rest: under 180 MiB for a 30000-pixel-wide RGB image at
// the default 256-pixel tiles, however tall. Every other image (JPEG, GIF, BMP, TIFF, WebP and
// interlaced PNG) is decoded whole by Go's decoders, which hold all of it.
//
// # Limits
//
// The input's header is read and checked before the output is created,
// and an input refused leaves no file. The converter refuses:
//   - an image whose header claims more than -max-pixels pixels (default
//     2^32, 65536 x 65536; 0 lifts it);
//   - a PNG shorter than the image it claims can be, as deflate expands at
//     most 1032 times: a decompression bomb or a truncated file;
//   - an image whose plan needs more than -max-memory (default 1 GiB; 0
//     lifts it): the decoded image and the writer's bands for an image
//     decoded whole, the bands alone for one streamed. Go's decoders'
//     working buffers are counted (a progressive JPEG's coefficients, say).
//     An image refused because it must be decoded whole can be rewritten as
//     a non-interlaced PNG, which streams: vips copy in.jpg in.png.
//
// -max-memory bounds what the converter plans to hold; GOMEMLIMIT set to it
// holds the process's heap to it as well, at the cost of more garbage
// collection.
//
// Usage:
//
//	go run ./examples/convert [flags] input output.ome.tif
//
// For example:
//
//	convert -physical-size 0.25 -compression zstd slide.png slide.ome.tif
//	convert -raw-width 2048 -raw-height 2048 -raw-type uint16 -raw-channels 3 \
//		-raw-z 40 -channels DAPI,FITC,TRITC stack.raw stack.ome.tif
//
// The output appears only when the conversion succeeds, and replaces an
// existing file only with -force. A progress bar of the tiles written is
// drawn on stderr when it is a terminal. Run with -h for every flag.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program: it converts the input named in args, prints one line
// about the output to stdout, and reports a failure as one line on stderr.
// It returns the exit code: 0, 1 when the conversion fails, 2 for a usage
// error (bad flags or flag values, including those the writer rejects).
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if err != nil {
		return cli.Exit("convert", stderr, cli.UsageError{Err: err})
	}
	return cli.Run("convert", stderr, func(ctx context.Context) error {
		start := time.Now()
		bar := newProgress(stderr)
		if bar.visible {
			cfg.options.Progress = bar.update
		}
		spec, err := convert(ctx, cfg)
		bar.done()
		if err != nil {
			return err
		}
		return printSummary(stdout, cfg.output, spec, time.Since(start))
	})
}

// convert writes cfg.input to cfg.output and returns the spec of the image
// written. The input's header is read and checked before the output is
// created, so an input refused leaves nothing behind; on any later failure
// the output is discarded. ctx stops the writing.
func convert(ctx context.Context, cfg config) (pyramid.ImageSpec, error) {
	in, err := openInput(cfg.input)
	if err != nil {
		return pyramid.ImageSpec{}, err
	}
	defer in.Close()
	src, err := openSource(in, cfg)
	if err != nil {
		return pyramid.ImageSpec{}, err
	}
	spec, err := cfg.describe(src.spec())
	if err != nil {
		return spec, err
	}
	h, err := iohandle.Create(cfg.output, iohandle.Options{BufferSize: iohandle.BigBuffer, Replace: cfg.force})
	if errors.Is(err, fs.ErrExist) { // the library's message names its option, not the flag
		err = fmt.Errorf("%s exists (use -force to replace it)", cfg.output)
	}
	if err != nil {
		return spec, err
	}
	defer h.Close() // discards the output unless the writer committed it
	w, err := pyramid.NewContext(ctx, h, cfg.options)
	if err != nil {
		return spec, err
	}
	if spec, err = src.write(w, spec); err != nil {
		_ = w.Abort()
		return spec, err
	}
	return spec, w.Close()
}

// source is an input: the description of its image and its planes.
type source interface {
	// spec gives the size and planes of the image, and what the input
	// knows of its pixel type and samples.
	spec() pyramid.ImageSpec
	// write adds the image to w with spec, writes every plane and returns
	// the spec written.
	write(w *pyramid.Writer, spec pyramid.ImageSpec) (pyramid.ImageSpec, error)
}

// openSource returns the raw input the -raw flags describe, or the image
// in the input, streamed or decoded.
func openSource(in *input, cfg config) (source, error) {
	if cfg.raw.set {
		return newRawSource(in, cfg.raw, cfg.limits)
	}
	return openImage(in, cfg.limits)
}

// printSummary prints one line about the file written.
func printSummary(w io.Writer, path string, spec pyramid.ImageSpec, elapsed time.Duration) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	rgb := ""
	if spec.SamplesPerPixel == 3 {
		rgb = " RGB"
	}
	_, err = fmt.Fprintf(w, "wrote %s: %d x %d%s %s, Z %d x C %d x T %d, %.1f MB in %.2f s\n",
		path, spec.SizeX, spec.SizeY, rgb, spec.PixelType, spec.SizeZ, spec.SizeC, spec.SizeT,
		float64(info.Size())/1e6, elapsed.Seconds())
	return err
}
