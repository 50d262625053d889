//go:build linux

// Convertcompare measures ometiff convert against libvips on the
// conversions below, side by side in one run: wall time, CPU time
// (user + system) and peak resident memory, as medians of alternating
// runs, with the ratio of our wall time to libvips's.
//
// Usage:
//
//	go run ./examples/convertcompare [flags]
//
// The workloads are:
//
//	svs     a 24576 x 16384 SVS-like slide (RGB JPEG at quality 70 in
//	        240 x 240 tiles, its levels in the main chain, an LZW label and
//	        a JPEG macro, an Aperio description) converted to LZW with the
//	        horizontal predictor, against
//	        vips tiffsave in.svs out.tif --tile --pyramid --subifd --compression lzw --predictor horizontal
//	        the command the targets are set on, with which libvips reads
//	        the slide through OpenSlide (openslideload, which libvips
//	        prefers to tiffload for a slide it recognizes): 4 bands, RGBA,
//	        and an RGBA pyramid written; and against libvips reading page 0
//	        with tiffload, 3 bands (RGB) as ours reads it, written likewise:
//	        vips tiffload in.svs 'out.tif[tile,pyramid,subifd,compression=lzw,predictor=horizontal]'
//	strips  the 8192 x 8192 RGB slide as a striped Deflate TIFF (vips
//	        tiffsave --compression deflate) converted likewise, against
//	        vips tiffsave in.tif out.tif --tile --tile-width 256 --tile-height 256 --pyramid --subifd --compression lzw --predictor horizontal
//	copy    the SVS-like slide converted with its JPEG tiles copied
//	        through (the converter's default) and the levels computed
//	        from the decoded slide, against libvips re-encoding it:
//	        vips tiffsave in.svs out.tif --tile --tile-width 240 --tile-height 240 --pyramid --subifd --compression jpeg --Q 70
//	        (OpenSlide, RGBA) and, through tiffload (RGB):
//	        vips tiffload in.svs 'out.tif[tile,tile-width=240,tile-height=240,pyramid,subifd,compression=jpeg,Q=70]'
//	copy-levels  the same with -copy-levels: the slide's own levels
//	        copied too, nothing decoded; against the same commands
//	huge    a 100,000 x 100,000 RGB JPEG BigTIFF (vips replicate of a
//	        10,000 x 10,000 slide, vips tiffsave --compression jpeg --tile
//	        --bigtiff) converted to LZW: ours only, for its peak memory,
//	        which must stay under 256 MiB; its output (about 15 GB) is
//	        removed after each run
//
// Our converter is given 256 x 256 tiles, LZW and the horizontal
// predictor where libvips is, and halves the levels until one tile, the
// same work as the libvips commands. The runs go in rounds, each writer
// once a round, ours first in even rounds and last in odd ones, each run
// after a sync so that none pays for the writeback of the one before; the
// table gives medians (the mean of the middle two for an even -runs).
// After each run, the output's structure (not its pixels) is read with
// package tiff: its first page must be tiled, of the input's size, with the
// samples per pixel the writer makes (3, or 4 when libvips writes the RGBA
// OpenSlide gives it as LZW) and the pyramid's levels in SubIFDs, halving
// until one fits in a tile (ours rounding up, libvips down; with
// -copy-levels, the input's levels); anything else fails the comparison.
// Each libvips command is a row of the
// table, with the ratios of our wall and CPU time to its own; a workload's
// target is on the ratio to its first command, the one of the issue. The slides are internal/synth's RGB slide, generated
// before anything is timed, by this program re-run in a generator mode so
// that the memory it held is not counted in a measured run's peak (Linux
// gives a child the peak resident memory of the process it was forked
// from). Each run is a child process; its times and peak memory come from
// its own rusage. The flags are:
//
//	-workloads list  comma-separated workloads (default svs,strips,copy,copy-levels)
//	-runs n          measured runs of each converter (default 3)
//	-dir path        where the inputs and outputs go; the inputs are kept
//	                 and reused when it is given (default: a temporary
//	                 directory, removed)
//	-ometiff path    the ometiff program to measure (default: built from
//	                 this module)
//	-svs-size WxH    the SVS-like slide's size (default 24576x16384)
//	-strips-size n   the striped TIFF's width and height (default 8192)
//	-huge-size n     huge's width and height, a multiple of 10 (default 100000)
//
// -h prints the flags; a bad flag exits with 2. SIGINT (Ctrl-C), SIGTERM
// and SIGHUP stop the comparison: the process group of the program running
// (a measured run, or one making an input) is killed, the outputs (and an
// input half made) are removed, the temporary directory too when -dir is
// not given, and the program exits with 128 plus the signal's number (130
// for SIGINT, 143 for SIGTERM).
//
// The figures depend on the machine and on what else runs on it:
// measure on a quiet machine. Times are reported; a peak memory past its
// bound, which does not depend on the load, makes the program fail.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/tiff"
)

func main() {
	if job := os.Getenv(generateEnv); job != "" {
		if err := generate(job, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "convertcompare:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program: it parses args, runs the comparison and returns the
// exit code: 0 for -h, 2 for bad flags, 1 if anything failed, 128 plus
// the signal's number when a signal stopped it.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stdout)
	if err != nil {
		return cli.Exit("convertcompare", stderr, cli.UsageError{Err: err})
	}
	return cli.Run("convertcompare", stderr, func(ctx context.Context) error {
		return compare(ctx, cfg, stdout, stderr)
	})
}

// config is what the command line asks for.
type config struct {
	workloads []string
	runs      int
	dir       string
	keep      bool
	ometiff   string
	sizes     sizes
}

// sizes are the sizes of the inputs: the full ones by default, small ones
// for a quick run.
type sizes struct {
	svsWidth, svsHeight int
	strips              int
	huge                int // a multiple of 10: a slide of a tenth, replicated
}

var fullSizes = sizes{svsWidth: 24576, svsHeight: 16384, strips: 8192, huge: 100000}

// suffix is what the name of the input of a workload gets when its size
// is not the full one, so that an input kept in -dir is reused only at
// its size.
func (sz sizes) suffix(input string) string {
	switch {
	case input == "svs" && (sz.svsWidth != fullSizes.svsWidth || sz.svsHeight != fullSizes.svsHeight):
		return fmt.Sprintf("-%dx%d", sz.svsWidth, sz.svsHeight)
	case input == "strips" && sz.strips != fullSizes.strips:
		return fmt.Sprintf("-%d", sz.strips)
	case input == "huge" && sz.huge != fullSizes.huge:
		return fmt.Sprintf("-%d", sz.huge)
	}
	return ""
}

// workload is a conversion measured with both converters.
type workload struct {
	name string
	// make writes the input at path into dir, untimed; cancelling ctx
	// kills the program running.
	make func(ctx context.Context, dir, path string, sz sizes) error
	// ext is the input's extension.
	ext string
	// input names the input, when it is another workload's; "": its own.
	input string
	// flags are ometiff convert's flags.
	flags []string
	// tile is the tile size of our output's levels.
	tile int
	// copyLevels says that ours copies the input's levels: its output
	// has as many as the input's main pyramid, not as halving gives.
	copyLevels bool
	// peers are libvips's commands, each a row of the table; none: ours
	// only.
	peers []peer
	// target is the largest ratio of our wall time to the first peer's
	// we aim for, and maxRSS our largest peak memory; 0: none.
	target float64
	maxRSS int64
}

// A peer is a libvips command measured beside ours.
type peer struct {
	// name labels its row.
	name string
	// argv is the command, IN standing for the input and OUT (alone or
	// followed by libvips's options in brackets) for the output.
	argv []string
	// samples are the samples per pixel of its output: 4 (RGBA) when
	// libvips reads the slide through OpenSlide and writes LZW, 3
	// otherwise (JPEG has no alpha: libvips drops it); tile is the
	// output's tile size.
	samples, tile int
}

// lzw are the flags converting to LZW with the horizontal predictor in
// 256 x 256 tiles, as the libvips commands do, rather than copying a
// source's tiles through.
var lzw = []string{"-compression", "lzw", "-predictor", "horizontal", "-tile", "256"}

// The names of the rows of libvips on the SVS-like slide: vips tiffsave
// reads it through OpenSlide (openslideload, which libvips tries before
// tiffload), as 4 bands, and writes RGBA; vips tiffload reads page 0 with
// libtiff, as 3 bands, as ours does.
const (
	vipsOpenSlide = "libvips (OpenSlide, RGBA)"
	vipsTiffload  = "libvips (tiffload, RGB)"
)

// svsLZW are the libvips commands converting the SVS-like slide to an LZW
// pyramid: the command (OpenSlide), then the same save from
// tiffload, in libvips's default tiles as the command has them.
var svsLZW = []peer{
	{vipsOpenSlide, []string{"vips", "tiffsave", "IN", "OUT", "--tile", "--pyramid", "--subifd", "--compression", "lzw", "--predictor", "horizontal"}, 4, 128},
	{vipsTiffload, []string{"vips", "tiffload", "IN", "OUT[tile,pyramid,subifd,compression=lzw,predictor=horizontal]"}, 3, 128},
}

// svsJPEG70 re-encode the SVS-like slide as libvips would copy it: a JPEG
// Q70 SubIFD pyramid in the source's 240 x 240 tiles, read through
// OpenSlide, then through tiffload.
var svsJPEG70 = []peer{
	{vipsOpenSlide, []string{"vips", "tiffsave", "IN", "OUT", "--tile", "--tile-width", "240", "--tile-height", "240", "--pyramid", "--subifd",
		"--compression", "jpeg", "--Q", "70"}, 3, 240}, // JPEG drops the alpha
	{vipsTiffload, []string{"vips", "tiffload", "IN", "OUT[tile,tile-width=240,tile-height=240,pyramid,subifd,compression=jpeg,Q=70]"}, 3, 240},
}

var workloads = []workload{
	{name: "svs", make: makeSVS, ext: ".svs", target: 0.45, maxRSS: 256 << 20, flags: lzw, tile: 256, peers: svsLZW},
	{name: "strips", make: makeStrips, ext: ".tif", target: 0.5, maxRSS: 128 << 20, flags: lzw, tile: 256,
		peers: []peer{{"libvips", []string{"vips", "tiffsave", "IN", "OUT", "--tile", "--tile-width", "256", "--tile-height", "256", "--pyramid", "--subifd",
			"--compression", "lzw", "--predictor", "horizontal"}, 3, 256}}},
	{name: "copy", make: makeSVS, ext: ".svs", input: "svs", target: 0.35, maxRSS: 256 << 20, tile: 240, peers: svsJPEG70},
	{name: "copy-levels", make: makeSVS, ext: ".svs", input: "svs", target: 0.05, maxRSS: 256 << 20, flags: []string{"-copy-levels"}, tile: 240,
		copyLevels: true, peers: svsJPEG70},
	{name: "huge", make: makeHuge, ext: ".tif", maxRSS: 256 << 20, flags: lzw, tile: 256},
}

// parseArgs reads the command line. -h prints the usage to stdout and
// returns flag.ErrHelp.
func parseArgs(args []string, stdout io.Writer) (config, error) {
	fs := cli.NewFlagSet("convertcompare", "usage: convertcompare [flags]\n\n"+
		"Convertcompare measures ometiff convert against libvips on an SVS-like slide\n"+
		"and a striped TIFF and prints medians and ratios.\n\n")
	list := fs.String("workloads", "svs,strips,copy,copy-levels", "comma-separated `workloads`: svs, strips, copy, copy-levels, huge")
	cfg := config{}
	fs.IntVar(&cfg.runs, "runs", 3, "measured `runs` of each converter")
	fs.StringVar(&cfg.dir, "dir", "", "`folder` for the inputs (kept) and outputs; default: a temporary one")
	fs.StringVar(&cfg.ometiff, "ometiff", "", "the ometiff `program` to measure; default: built from this module")
	svsSize := fs.String("svs-size", fmt.Sprintf("%dx%d", fullSizes.svsWidth, fullSizes.svsHeight), "the SVS-like slide's `WxH`")
	fs.IntVar(&cfg.sizes.strips, "strips-size", fullSizes.strips, "the striped TIFF's width and height")
	fs.IntVar(&cfg.sizes.huge, "huge-size", fullSizes.huge, "huge's width and height, a multiple of 10")
	if err := cli.ParseFlagsOnly(fs, args, stdout); err != nil {
		return cfg, err
	}
	if cfg.runs < 1 {
		return cfg, fmt.Errorf("-runs %d: want at least 1", cfg.runs)
	}
	if n, err := fmt.Sscanf(*svsSize, "%dx%d", &cfg.sizes.svsWidth, &cfg.sizes.svsHeight); n != 2 || err != nil ||
		cfg.sizes.svsWidth < 1 || cfg.sizes.svsHeight < 1 {
		return cfg, fmt.Errorf("-svs-size %q: want WxH, both at least 1", *svsSize)
	}
	if cfg.sizes.strips < 1 || cfg.sizes.huge < 10 || cfg.sizes.huge%10 != 0 {
		return cfg, fmt.Errorf("-strips-size %d, -huge-size %d: want at least 1, and a multiple of 10", cfg.sizes.strips, cfg.sizes.huge)
	}
	for _, name := range strings.Split(*list, ",") {
		if !slices.ContainsFunc(workloads, func(w workload) bool { return w.name == name }) {
			return cfg, fmt.Errorf("-workloads: unknown workload %q", name)
		}
		cfg.workloads = append(cfg.workloads, name)
	}
	cfg.keep = cfg.dir != ""
	return cfg, nil
}

// compare runs the workloads of cfg, printing the table to stdout and
// progress to stderr. Cancelling ctx kills the program running, and
// compare returns ctx's error once its outputs are removed.
func compare(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	if !cfg.keep {
		dir, err := os.MkdirTemp("", "convertcompare")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.dir = dir
	}
	if cfg.ometiff == "" {
		cfg.ometiff = filepath.Join(cfg.dir, "ometiff")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", cfg.ometiff, "./examples/ometiff")
		cli.KillGroupOnCancel(cmd)
		if out, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("building ometiff (run from the module's root): %v: %s", err, out)
		}
	}
	fmt.Fprintf(stdout, "%-11s %-25s %8s %8s %9s %10s %13s %12s  %s\n", "workload", "writer", "wall s", "cpu s", "peak MiB", "output MB",
		"ours/it wall", "ours/it cpu", "target")
	var missed []string
	for _, w := range workloads {
		if !slices.Contains(cfg.workloads, w.name) {
			continue
		}
		rss, err := measureWorkload(ctx, stdout, stderr, cfg, w)
		if ctx.Err() != nil {
			return ctx.Err() // stopped by a signal: not the workload's failure
		}
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		if w.maxRSS > 0 && rss >= w.maxRSS {
			missed = append(missed, fmt.Sprintf("%s: peak memory %d MiB, not under %d MiB", w.name, rss>>20, w.maxRSS>>20))
		}
	}
	if len(missed) > 0 {
		return errors.New(strings.Join(missed, "; "))
	}
	return nil
}

// sample is what one run cost.
type sample struct {
	wall, cpu time.Duration
	rss, size int64
}

// measureWorkload makes the input (unless kept from before), runs ours and
// the peers in rounds, each once a round, ours first in even rounds and
// last in odd ones, prints the medians and returns our peak memory, the
// largest of the runs.
func measureWorkload(ctx context.Context, stdout, stderr io.Writer, cfg config, w workload) (int64, error) {
	in := filepath.Join(cfg.dir, cmp.Or(w.input, w.name)+cfg.sizes.suffix(cmp.Or(w.input, w.name))+w.ext)
	if _, err := os.Stat(in); err != nil || !cfg.keep && w.input == "" {
		fmt.Fprintf(stderr, "making %s...\n", in)
		if err := w.make(ctx, cfg.dir, in, cfg.sizes); err != nil {
			os.Remove(in) // half made: not to be reused
			return 0, err
		}
	}
	ours := append(append([]string{cfg.ometiff, "convert", "-force"}, w.flags...), in, "OUT")
	src, err := readInput(in)
	if err != nil {
		return 0, fmt.Errorf("reading the input: %w", err)
	}
	// runners[0] is ours, then the peers; samples[i] are runners[i]'s.
	// Each output must have the samples and levels wanted[i].
	levels := pyramidLevels(src.width, src.height, w.tile, true)
	if w.copyLevels {
		levels = src.levels
	}
	runners := []peer{{"ometiff", ours, 3, w.tile}}
	outs := []string{filepath.Join(cfg.dir, "ours.ome.tif")}
	wanted := []shape{{src.width, src.height, 3, w.tile, levels}}
	for _, p := range w.peers {
		runners = append(runners, peer{p.name, substitute(p.argv, in), p.samples, p.tile})
		outs = append(outs, filepath.Join(cfg.dir, "peer.tif"))
		wanted = append(wanted, shape{src.width, src.height, p.samples, p.tile, pyramidLevels(src.width, src.height, p.tile, false)})
	}
	samples := make([][]sample, len(runners))
	for r := range cfg.runs {
		for _, i := range roundOrder(r, len(runners)) {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			// Every run starts with nothing left to write back: otherwise
			// the kernel's writeback of the run before competes with it.
			syscall.Sync()
			s, err := measure(ctx, runners[i].argv, outs[i], wanted[i])
			if err != nil {
				return 0, fmt.Errorf("%s: %w", runners[i].name, err)
			}
			samples[i] = append(samples[i], s)
		}
	}
	mine, theirs := samples[0], samples[1:]
	m := median(mine)
	target := ""
	if len(w.peers) > 0 {
		target = fmt.Sprintf("wall ≤ %.2f of %s", w.target, w.peers[0].name)
	}
	if w.maxRSS > 0 {
		target = strings.TrimPrefix(target+fmt.Sprintf("; peak < %d MiB", w.maxRSS>>20), "; ")
	}
	printRow(stdout, w.name, "ometiff", m, "", "", target)
	for i, p := range w.peers {
		s := median(theirs[i])
		printRow(stdout, w.name, p.name, s, fmt.Sprintf("%.2f", m.wall.Seconds()/s.wall.Seconds()),
			fmt.Sprintf("%.2f", m.cpu.Seconds()/s.cpu.Seconds()), "")
	}
	peak := int64(0)
	for _, s := range mine {
		peak = max(peak, s.rss)
	}
	return peak, nil
}

// printRow prints a row of the table: a writer's medians, and for a peer
// the ratios of ours to them.
func printRow(w io.Writer, workload, writer string, s sample, wallRatio, cpuRatio, target string) {
	line := fmt.Sprintf("%-11s %-25s %8.2f %8.2f %9.0f %10.1f %13s %12s  %s", workload, writer, s.wall.Seconds(), s.cpu.Seconds(),
		float64(s.rss)/(1<<20), float64(s.size)/1e6, wallRatio, cpuRatio, target)
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

// substitute replaces IN in a command with the input.
func substitute(argv []string, in string) []string {
	out := slices.Clone(argv)
	for i, a := range out {
		if a == "IN" {
			out[i] = in
		}
	}
	return out
}

// substituteOut replaces OUT in a command with the output: OUT alone, or
// followed by libvips's save options in brackets.
func substituteOut(argv []string, out string) []string {
	argv = slices.Clone(argv)
	for i, a := range argv {
		if a == "OUT" || strings.HasPrefix(a, "OUT[") {
			argv[i] = out + strings.TrimPrefix(a, "OUT")
		}
	}
	return argv
}

// measure runs argv, OUT standing for out, as a child process, checks
// that its output has the shape wanted, and returns its cost; the output
// is removed afterwards. Cancelling ctx kills the child's process group.
func measure(ctx context.Context, argv []string, out string, want shape) (sample, error) {
	argv = substituteOut(argv, out)
	os.Remove(out)
	defer os.Remove(out)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cli.KillGroupOnCancel(cmd)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, stderr.String())
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := sample{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rss: int64(ru.Maxrss) * 1024}
	fi, err := os.Stat(out)
	if err != nil {
		return s, errors.New("no output")
	}
	s.size = fi.Size()
	if err := checkOutput(out, want); err != nil {
		return s, fmt.Errorf("wrong output: %w", err)
	}
	return s, nil
}

// A shape is what an output must be: its level 0's size, its samples per
// pixel, its tile size and its number of levels (level 0 and its SubIFDs).
type shape struct {
	width, height, samples, tile, levels int
}

// checkOutput reads the structure of the TIFF at path, not its pixels,
// and returns an error unless its first page has the shape wanted.
func checkOutput(path string, want shape) error {
	f, err := tiff.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if len(f.Pages) == 0 {
		return errors.New("no page")
	}
	p := f.Pages[0]
	l, err := p.Layout()
	if err != nil {
		return fmt.Errorf("page 0: %w", err)
	}
	got := shape{l.Width, l.Height, l.SamplesPerPixel, l.BlockWidth, 1 + len(p.SubIFDs)}
	if !l.Tiled {
		got.tile = 0
	}
	if got != want {
		return fmt.Errorf("page 0 is %dx%d, %d samples, %d-pixel tiles, %d levels; want %dx%d, %d samples, %d-pixel tiles, %d levels",
			got.width, got.height, got.samples, got.tile, got.levels, want.width, want.height, want.samples, want.tile, want.levels)
	}
	return nil
}

// pyramidLevels counts the levels of a pyramid of width x height in tiles
// of tile pixels: each level half the one before until one fits in a
// tile, halved rounding up (ours) or down (libvips).
func pyramidLevels(width, height, tile int, roundUp bool) int {
	n := 1
	for width > tile || height > tile {
		if roundUp {
			width, height = (width+1)/2, (height+1)/2
		} else {
			width, height = width/2, height/2
		}
		n++
	}
	return n
}

// input is what the comparison needs to know of an input: its first
// page's size and the levels of its main pyramid (the pages of the main
// chain that are not an SVS's label or macro).
type input struct {
	width, height, levels int
}

// readInput reads the structure of the input at path.
func readInput(path string) (input, error) {
	f, err := tiff.Open(path)
	if err != nil {
		return input{}, err
	}
	defer f.Close()
	if len(f.Pages) == 0 {
		return input{}, errors.New("no page")
	}
	l, err := f.Pages[0].Layout()
	if err != nil {
		return input{}, err
	}
	in := input{width: l.Width, height: l.Height}
	for _, p := range f.Pages {
		if d := p.Description(); strings.Contains(d, "\nlabel ") || strings.Contains(d, "\nmacro ") {
			continue
		}
		in.levels++
	}
	return in, nil
}

// roundOrder returns the order in which round r (from 0) runs n runners,
// ours being runner 0: ours first in even rounds, after the peers in odd
// ones, so that neither side always runs on a machine the other has just
// warmed (or left writing back).
func roundOrder(r, n int) []int {
	order := make([]int, 0, n)
	for i := range n {
		order = append(order, i)
	}
	if r%2 == 1 {
		order = append(order[1:], 0)
	}
	return order
}

// median returns the median of each figure of the samples: the middle
// value, or the mean of the two middle ones for an even count.
func median(samples []sample) sample {
	pick := func(f func(sample) int64) int64 {
		v := make([]int64, len(samples))
		for i, s := range samples {
			v[i] = f(s)
		}
		slices.Sort(v)
		n := len(v)
		if n%2 == 0 {
			return (v[n/2-1] + v[n/2]) / 2
		}
		return v[n/2]
	}
	return sample{
		wall: time.Duration(pick(func(s sample) int64 { return int64(s.wall) })),
		cpu:  time.Duration(pick(func(s sample) int64 { return int64(s.cpu) })),
		rss:  pick(func(s sample) int64 { return s.rss }),
		size: pick(func(s sample) int64 { return s.size }),
	}
}
