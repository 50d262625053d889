// Stack writes the stack workload: many series of Z x C small planes in one
// OME-TIFF, the shape of the export that motivated this module, and
// reports how fast it went.
//
// With no arguments it writes stack.ome.tif in the current directory,
// replacing the file a previous run left there: 84 series of 90 focal
// planes x 2 channels of 128 x 128 uint16 pixels, 15,120 planes in all,
// each its own directory of the main chain. The planes cycle through a pool
// of 64 distinct synthetic planes from internal/synth, generated before the
// clock starts, so the time is the writer's. The summary gives the time,
// the throughput (raw input bytes over wall time), the file size, the
// write calls the operating system saw and the peak resident memory.
//
// SIGINT (Ctrl-C) and SIGTERM stop the run: the new file is discarded, a
// file of an earlier run stays as it was, and the program exits with 130
// or 143 (128 plus the signal's number).
//
// Usage:
//
//	go run ./examples/stack [flags]
//
// The flags are:
//
//	-o path          output file (default stack.ome.tif)
//	-series n        number of series (default 84)
//	-z n             focal planes per series (default 90)
//	-channels n      channels per series (default 2)
//	-size n          width and height of each plane (default 128)
//	-compression c   lzw, none, deflate or zstd (default lzw)
//	-level n         deflate or zstd level, 0 for the codec's default
//	-workers n       encoding goroutines, 0 for one per CPU
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/examples/internal/rusage"
	"github.com/ometiff-go/ometiff/examples/internal/stackpool"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program: it parses args, writes the stack and prints the
// summary to stdout, or one line to stderr. It returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stdout)
	if err != nil {
		return cli.Exit("stack", stderr, cli.UsageError{Err: err})
	}
	return cli.Run("stack", stderr, func(ctx context.Context) error {
		pool := stackpool.New(cfg.size, stackpool.Planes(cfg.size, cfg.planes()))
		rep, err := writeStack(ctx, cfg, pool)
		if err != nil {
			return err
		}
		return printSummary(stdout, cfg, rep)
	})
}

// config is what the flags ask for.
type config struct {
	output              string
	series, z, channels int
	size                int // width and height of a plane
	options             pyramid.Options
}

// parseArgs reads the command line. Errors are one line; the usage goes to
// stderr only when asked for with -h.
func parseArgs(args []string, stdout io.Writer) (config, error) {
	cfg := config{}
	fs := cli.NewFlagSet("stack", "usage: stack [flags]\n\n"+
		"Stack writes many series of small planes to one OME-TIFF and reports\n"+
		"the time, throughput, file size, write calls and peak memory.\n\n")
	fs.StringVar(&cfg.output, "o", "stack.ome.tif", "output `path`, replaced if it exists")
	fs.IntVar(&cfg.series, "series", 84, "number of series")
	fs.IntVar(&cfg.z, "z", 90, "focal planes per series")
	fs.IntVar(&cfg.channels, "channels", 2, "channels per series")
	fs.IntVar(&cfg.size, "size", 128, "width and height of each plane in pixels")
	fs.TextVar(&cfg.options.Compression, "compression", pyramid.LZW, "tile `codec`: lzw, none, deflate or zstd")
	fs.IntVar(&cfg.options.Level, "level", 0, "deflate or zstd level; 0 is the codec's default")
	fs.IntVar(&cfg.options.Workers, "workers", 0, "encoding goroutines; 0 is one per CPU")
	if err := cli.ParseFlagsOnly(fs, args, stdout); err != nil {
		return cfg, err
	}
	for _, n := range []struct {
		flag  string
		value int
	}{{"series", cfg.series}, {"z", cfg.z}, {"channels", cfg.channels}, {"size", cfg.size}} {
		if n.value < 1 {
			return cfg, fmt.Errorf("-%s %d: want at least 1", n.flag, n.value)
		}
	}
	// One file: at most the directories package tiff reads, a plane each
	// (checked by division, so that the product cannot overflow).
	if max := tiff.MaxDirectories; cfg.series > max || cfg.z > max/cfg.series || cfg.channels > max/(cfg.series*cfg.z) {
		return cfg, fmt.Errorf("-series %d x -z %d x -channels %d: more than %d planes, the directories package tiff reads in a file",
			cfg.series, cfg.z, cfg.channels, max)
	}
	if err := stackpool.CheckSize("size", cfg.size); err != nil {
		return cfg, err
	}
	if err := cli.CheckWorkers(cfg.options.Workers); err != nil {
		return cfg, err
	}
	return cfg, cli.CheckOutputName("stack", cfg.output)
}

// planes is the number of planes of the stack.
func (cfg config) planes() int { return cfg.series * cfg.z * cfg.channels }

// planeBytes is the size of one plane's pixels.
func (cfg config) planeBytes() int64 { return 2 * int64(cfg.size) * int64(cfg.size) }

// spec describes series s.
func (cfg config) spec(s int) pyramid.ImageSpec {
	channels := make([]pyramid.Channel, cfg.channels)
	for c := range channels {
		channels[c].Name = fmt.Sprintf("Channel %d", c+1)
	}
	return pyramid.ImageSpec{
		Name:          fmt.Sprintf("series %d", s+1),
		SizeX:         cfg.size,
		SizeY:         cfg.size,
		SizeZ:         cfg.z,
		SizeC:         cfg.channels,
		PixelType:     pyramid.Uint16,
		PhysicalSizeX: 0.325,
		PhysicalSizeY: 0.325,
		PhysicalSizeZ: 1,
		Channels:      channels,
	}
}

// report is what a run measured.
type report struct {
	elapsed time.Duration // from creating the file to committing it
	stats   iohandle.Stats
	before  rusage.Usage // of the process when the run started
	after   rusage.Usage // and when it ended
}

// writeStack writes the stack cfg describes, its planes taken in turn from
// pool, replacing the file a previous run left there, until ctx is done.
// On any failure the output is discarded.
func writeStack(ctx context.Context, cfg config, pool [][]byte) (report, error) {
	before := rusage.Self()
	start := time.Now()
	h, err := iohandle.Create(cfg.output, iohandle.Options{BufferSize: iohandle.BigBuffer, Replace: true})
	if err != nil {
		return report{}, err
	}
	defer h.Close() // discards the output unless the writer committed it
	w, err := pyramid.NewContext(ctx, h, cfg.options)
	if err != nil {
		return report{}, err
	}
	if err := writeSeries(w, cfg, pool); err != nil {
		_ = w.Abort()
		return report{}, err
	}
	if err := w.Close(); err != nil {
		return report{}, err
	}
	return report{elapsed: time.Since(start), stats: w.Stats(), before: before, after: rusage.Self()}, nil
}

// writeSeries adds every series and writes its planes in the order of the
// file, Z fastest.
func writeSeries(w *pyramid.Writer, cfg config, pool [][]byte) error {
	next := 0
	for s := range cfg.series {
		im, err := w.AddImage(cfg.spec(s))
		if err != nil {
			return err
		}
		for c := range cfg.channels {
			for z := range cfg.z {
				if err := im.WritePlane(z, c, 0, pool[next%len(pool)]); err != nil {
					return err
				}
				next++
			}
		}
	}
	return nil
}

// printSummary prints what was written and what the run measured.
func printSummary(w io.Writer, cfg config, rep report) error {
	info, err := os.Stat(cfg.output)
	if err != nil {
		return err
	}
	raw := int64(cfg.planes()) * cfg.planeBytes()
	fmt.Fprintf(w, "wrote %s: %d series x %d z x %d channels = %d planes of %d x %d uint16, %v\n",
		cfg.output, cfg.series, cfg.z, cfg.channels, cfg.planes(), cfg.size, cfg.size, cfg.options.Compression)
	fmt.Fprintf(w, "input   %.1f MB raw\n", float64(raw)/1e6)
	fmt.Fprintf(w, "output  %.1f MB\n", float64(info.Size())/1e6)
	fmt.Fprintf(w, "time    %.2f s\n", rep.elapsed.Seconds())
	fmt.Fprintf(w, "speed   %.1f MB/s (raw input over wall time)\n", float64(raw)/1e6/rep.elapsed.Seconds())
	rusage.Print(w, rep.before, rep.after, rep.elapsed)
	_, err = fmt.Fprintf(w, "writes  %d OS write calls (%d sequential, %d positioned), %d fsync\n",
		rep.stats.Writes(), rep.stats.Appends, rep.stats.Patches, rep.stats.Syncs)
	return err
}
