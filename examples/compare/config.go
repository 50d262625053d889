//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
)

// config is what the flags ask for.
type config struct {
	workloads []workload
	peers     []string // the peers to run beside ours
	runs      int
	workers   int
	dir       string
	python    string
	strace    bool
	markdown  bool
}

// defaultWorkloads is every workload but huge, which is for memory, not
// for comparison.
const defaultWorkloads = "slide,slide-deflate,slide-zstd,slide-none,slide-rgb,slide-rgb-deflate,slide-rgb-jpeg,stack,stack-lzw"

// parseArgs reads the command line. Errors are one line; the usage goes to
// stderr only when asked for with -h.
func parseArgs(args []string, stdout io.Writer) (config, error) {
	var cfg config
	fs := cli.NewFlagSet("compare", "usage: compare [flags]\n\n"+
		"Compare writes the slide, stack and huge workloads with ometiff and with\n"+
		"the peers installed here (libvips, tifffile, GDAL, dd) and prints their\n"+
		"costs.\n\n")
	names := fs.String("workloads", defaultWorkloads, "comma-separated `names` from: "+strings.Join(workloadNames(), ", "))
	peers := fs.String("peers", strings.Join(peerNames, ","), "comma-separated `peers` to run beside ometiff, those installed of: "+strings.Join(peerNames, ", "))
	fs.IntVar(&cfg.runs, "runs", 3, "measured runs per writer and workload; the table gives medians")
	fs.IntVar(&cfg.workers, "workers", runtime.GOMAXPROCS(0), "encoding threads of our writer, tifffile and GDAL")
	fs.StringVar(&cfg.dir, "dir", os.TempDir(), "`directory` for the inputs and outputs (a temporary directory is made in it)")
	fs.StringVar(&cfg.python, "python", "/usr/bin/python3", "Python `interpreter` with tifffile and numpy")
	fs.BoolVar(&cfg.strace, "strace", false, "also run each writer once under strace and count write, lseek and ftruncate calls")
	fs.BoolVar(&cfg.markdown, "markdown", false, "also print the table as Markdown")
	slideSize := fs.Int("slide-size", 8192, "width and height of the slide workloads")
	stackSeries := fs.Int("stack-series", 84, "series of the stack workloads (each 90 z x 2 channels)")
	hugeSize := fs.Int("huge-size", 65536, "width and height of the huge workload")
	if err := cli.ParseFlagsOnly(fs, args, stdout); err != nil {
		return cfg, err
	}
	switch {
	case cfg.runs < 1 || cfg.workers < 1:
		return cfg, fmt.Errorf("-runs %d, -workers %d: want at least 1", cfg.runs, cfg.workers)
	case *slideSize < 1 || *stackSeries < 1 || *hugeSize < 1:
		return cfg, fmt.Errorf("-slide-size %d, -stack-series %d, -huge-size %d: want at least 1", *slideSize, *stackSeries, *hugeSize)
	}
	var err error
	if cfg.peers, err = pickPeers(*peers); err != nil {
		return cfg, err
	}
	cfg.workloads, err = pick(*names, catalog(*slideSize, *stackSeries, *hugeSize))
	return cfg, err
}

// pickPeers returns the peers named in the comma-separated list; an empty
// list names none.
func pickPeers(list string) ([]string, error) {
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case slices.Contains(peerNames, name):
			out = append(out, name)
		default:
			return nil, fmt.Errorf("-peers: unknown peer %q (want %s)", name, strings.Join(peerNames, ", "))
		}
	}
	return out, nil
}

// workloadNames lists every workload's name.
func workloadNames() []string {
	var names []string
	for _, w := range catalog(1, 1, 1) {
		names = append(names, w.Name)
	}
	return names
}

// pick returns the workloads named in the comma-separated list, in the
// order given.
func pick(list string, all []workload) ([]workload, error) {
	var out []workload
	for name := range strings.SplitSeq(list, ",") {
		found := false
		for _, w := range all {
			if w.Name == strings.TrimSpace(name) {
				out, found = append(out, w), true
			}
		}
		if !found {
			return nil, fmt.Errorf("-workloads: unknown workload %q (want %s)", name, strings.Join(workloadNames(), ", "))
		}
	}
	return out, nil
}
