// Slide writes a synthetic fluorescence slide as a pyramidal OME-TIFF and
// reports how fast it went.
//
// With no arguments it writes pyramid.ome.tif in the current directory,
// replacing the file a previous run left there: one image of three channels
// (DAPI, FITC and TRITC) of 8192 x 8192 uint16 pixels of 0.325 µm, with
// 256 x 256 LZW tiles and levels halved until one fits in a tile. The pixels
// come from internal/synth, generated band by band and streamed through
// pyramid.PlaneWriter, so memory stays bounded whatever the size. The
// summary gives the layout of the file, the wall time split between
// generating pixels, writing them and closing the file, the throughput
// (raw input bytes over wall time), the peak resident memory and the write
// calls the operating system saw.
//
// SIGINT (Ctrl-C) and SIGTERM stop the run: the new file is discarded, a
// file of an earlier run stays as it was, and the program exits with 130
// or 143 (128 plus the signal's number).
//
// Usage:
//
//	go run ./examples/slide [flags]
//
// The flags are:
//
//	-o path          output file (default pyramid.ome.tif)
//	-size n          width and height of the slide in pixels (default 8192)
//	-channels n      number of channels (default 3)
//	-type t          uint8, uint16, float32, float64 or rgb8 (default uint16)
//	-compression c   lzw, none, deflate, zstd or jpeg (default lzw; jpeg
//	                 takes -type uint8 or rgb8)
//	-level n         deflate or zstd level, 0 for the codec's default
//	-quality n       JPEG quality, 1 to 100, 0 for the default (75)
//	-jpeg-color c    RGB JPEG tiles as ycbcr (4:2:0, the default) or rgb
//	-tile n          tile width and height, a multiple of 16 (default 256)
//	-workers n       encoding goroutines, 0 for one per CPU
//	-levels n        resolutions including the full one, 0 until one tile
//	-bigtiff b       auto, always or never (default auto)
//	-direct          write around the page cache (iohandle.Options.DirectIO)
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/examples/internal/rusage"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program: it parses args, writes the slide and prints the
// summary to stdout, or one line to stderr. It returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stdout)
	if err != nil {
		return cli.Exit("slide", stderr, cli.UsageError{Err: err})
	}
	return cli.Run("slide", stderr, func(ctx context.Context) error {
		rep, err := writeSlide(ctx, cfg)
		if err != nil {
			return err
		}
		if err := printSummary(stdout, cfg, rep); err != nil {
			// The file is whole: a run failing here must not pass for one
			// that left nothing.
			return fmt.Errorf("%s is written, but what it holds cannot be printed: %w", cfg.output, err)
		}
		return nil
	})
}

// report is what a run measured.
type report struct {
	total    time.Duration // wall time from creating the file to committing it
	generate time.Duration // producing pixels
	write    time.Duration // inside PlaneWriter.Write
	close    time.Duration // inside Writer.Close
	stats    iohandle.Stats
	before   rusage.Usage // of the process when the run started
	after    rusage.Usage // and when it ended
}

// writeSlide writes the slide cfg describes to cfg.output, replacing the
// file a previous run left there, until ctx is done. On any failure the
// output is discarded.
func writeSlide(ctx context.Context, cfg config) (report, error) {
	rep := report{before: rusage.Self()}
	start := time.Now()
	h, err := iohandle.Create(cfg.output, iohandle.Options{BufferSize: iohandle.BigBuffer, Replace: true, DirectIO: cfg.direct})
	if err != nil {
		return rep, err
	}
	defer h.Close() // discards the output unless the writer committed it
	w, err := pyramid.NewContext(ctx, h, cfg.options)
	if err != nil {
		return rep, err
	}
	im, err := w.AddImage(cfg.spec())
	if err == nil {
		err = writeChannels(im, cfg, &rep)
	}
	if err != nil {
		_ = w.Abort()
		return rep, err
	}
	closeStart := time.Now()
	if err := w.Close(); err != nil {
		return rep, err
	}
	rep.close = time.Since(closeStart)
	rep.total = time.Since(start)
	rep.after = rusage.Self()
	rep.stats = w.Stats()
	return rep, nil
}

// writeChannels generates every channel band by band, one tile row at a
// time, and streams the bands into the image's planes.
func writeChannels(im *pyramid.Image, cfg config, rep *report) error {
	bandRows := cfg.tileSize()
	rowBytes := cfg.size * cfg.kind.pixelBytes()
	band := make([]byte, bandRows*rowBytes)
	for c := range cfg.channels {
		pw, err := im.Plane(0, c, 0)
		if err != nil {
			return err
		}
		gen := cfg.kind.newGenerator(c, cfg.size, bandRows)
		for y := 0; y < cfg.size; y += bandRows {
			rows := min(bandRows, cfg.size-y)
			t0 := time.Now()
			gen.fill(band[:rows*rowBytes], y, rows)
			t1 := time.Now()
			if _, err := pw.Write(band[:rows*rowBytes]); err != nil {
				return err
			}
			rep.generate += t1.Sub(t0)
			rep.write += time.Since(t1)
		}
		if err := pw.Close(); err != nil {
			return err
		}
	}
	return nil
}
