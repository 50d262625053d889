//go:build linux

// Compare writes the workloads this module is measured on (the slides,
// the stacks and huge, described below) with this module's pyramid
// writer and with the peers installed on the machine, side by side in
// one run, and prints what each cost: wall time, CPU time (user +
// system), peak resident memory, output size and OS write calls, as
// medians of several runs, with ratios against libvips and against dd,
// the floor of copying the raw bytes. The runs go in rounds, every writer
// once a round, ours first in even rounds and after the peers in odd ones,
// each run after a sync.
//
// Usage:
//
//	go run ./examples/compare [flags]
//
// The workloads are:
//
//   - slide: one 8192 x 8192 uint16 plane of internal/synth's fluorescence
//     slide (nuclei, tissue structures and mild noise), in 256 x 256
//     tiles, LZW with the horizontal predictor, levels by 2x2 mean until
//     one fits in a tile; slide-deflate, slide-zstd and slide-none are the
//     same with Deflate, Zstd or no compression;
//   - slide-rgb, slide-rgb-deflate and slide-rgb-jpeg: the same slide as
//     8192 x 8192 interleaved RGB uint8, with LZW, Deflate or JPEG at
//     quality 85 (libvips with --Q 85, GDAL with QUALITY=85 and no
//     predictor);
//   - stack: many series of small planes in one file, 84 series of 90
//     focal planes x 2 channels of 128 x 128 uint16, 15,120 planes each
//     its own directory of the main chain, uncompressed; its floor is dd
//     writing the same raw bytes in one sequential stream; stack-lzw is the
//     same with LZW;
//   - huge: one 65536 x 65536 uint8 plane (4 GiB raw, so BigTIFF) streamed
//     in row bands, ours only, for our peak memory, which must stay under
//     300 MiB.
//
// Every workload but huge runs by default.
//
// Inputs are generated with internal/synth before anything is timed, as
// raw files in a temporary directory; each peer gets them in a form it
// loads cheaply, made untimed too: libvips a .v file from vips rawload,
// GDAL a VRT over the raw file, tifffile and dd the raw file. Every
// measured run is a child process started by GNU time (/usr/bin/time,
// Debian's package time; without it, started directly, its peak memory
// at least this program's, which compare warns of), so its times and
// peak memory are its own: its
// times come from its rusage, its peak memory from time's report (the
// rusage of a child Go starts holds at least this program's peak memory,
// Go starting it with vfork); our writer runs as this program re-executed in a worker
// mode, which streams the raw input from its file into package pyramid
// (Image.ReadPlanes, in bands: its memory does not grow with the image, as
// libvips and GDAL stream theirs), writes without fsync, like the peers,
// and prints the write calls its output handle made; for huge it
// generates the bands as it goes. The peers' write calls are the kernel's count of
// their write system calls. The peers are:
//
//	vips tiffsave IN.v OUT --tile --tile-width 256 --tile-height 256 --pyramid --subifd --compression lzw
//	tifffile: TiffWriter(OUT, bigtiff=True, ome=True).write(data, subifds=N, tile=(256, 256),
//	    compression='zlib', predictor=True, maxworkers=W) and the levels by numpy 2x2 mean
//	gdal_translate -of COG -co COMPRESS=LZW -co BLOCKSIZE=256 -co PREDICTOR=2 -co NUM_THREADS=W -co RESAMPLING=AVERAGE IN.vrt OUT
//	dd if=IN of=OUT bs=4M
//
// with the codec of the workload. tifffile has no LZW or zstd without
// imagecodecs, so it takes part in the deflate and uncompressed workloads
// only; libvips writes a stack as the pages of one tall image
// (--page-height); GDAL takes part in the slides only. A peer that is not
// installed is skipped with a line saying so. Each of our outputs is then
// opened with vipsheader and tifffile, which must see the workload's
// series and levels.
//
// The flags are:
//
//	-workloads list  comma-separated workloads (default all but huge)
//	-peers list      comma-separated peers to run beside ours (default vips,tifffile,gdal,dd)
//	-runs n          measured runs per writer and workload (default 3)
//	-workers n       encoding threads of ours, tifffile and GDAL (default GOMAXPROCS)
//	-dir path        where the temporary directory goes (default $TMPDIR)
//	-python path     Python with tifffile and numpy (default /usr/bin/python3)
//	-strace          also count write, lseek and ftruncate calls under strace, one run each
//	-markdown        also print the table as Markdown
//	-slide-size n    width and height of the slides (default 8192)
//	-stack-series n  series of the stacks (default 84)
//	-huge-size n     width and height of huge (default 65536)
//
// SIGINT (Ctrl-C) and SIGTERM stop the comparison: the writer running is
// killed, the temporary directory of inputs and outputs is removed, and the
// program exits with 130 or 143 (128 plus the signal's number).
//
// Compare runs on Linux: it reads /proc and wait4's rusage.
package main

import (
	"context"
	"io"
	"os"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
)

func main() {
	if spec := os.Getenv(jobEnv); spec != "" {
		os.Exit(work(spec, os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program: it parses args, runs the comparison and returns the
// exit code: 2 for bad flags, 1 if anything failed.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stdout)
	if err != nil {
		return cli.Exit("compare", stderr, cli.UsageError{Err: err})
	}
	return cli.Run("compare", stderr, func(ctx context.Context) error {
		return compare(ctx, cfg, stdout, stderr)
	})
}
