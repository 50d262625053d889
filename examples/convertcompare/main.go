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
//	strips  the 8192 x 8192 RGB slide as a striped Deflate TIFF (vips
//	        tiffsave --compression deflate) converted likewise, against
//	        vips tiffsave in.tif out.tif --tile --tile-width 256 --tile-height 256 --pyramid --subifd --compression lzw --predictor horizontal
//	copy    the SVS-like slide converted with its JPEG tiles copied
//	        through (the converter's default) and the levels computed
//	        from the decoded slide, against libvips re-encoding it:
//	        vips tiffsave in.svs out.tif --tile --tile-width 240 --tile-height 240 --pyramid --subifd --compression jpeg --Q 70
//	copy-levels  the same with -copy-levels: the slide's own levels
//	        copied too, nothing decoded; against the same command
//	huge    a 100,000 x 100,000 RGB JPEG BigTIFF (vips replicate of a
//	        10,000 x 10,000 slide, vips tiffsave --compression jpeg --tile
//	        --bigtiff) converted to LZW: ours only, for its peak memory,
//	        which must stay under 256 MiB; its output (about 15 GB) is
//	        removed after each run
//
// Our converter is given 256 x 256 tiles, LZW and the horizontal
// predictor where libvips is, and halves the levels until one tile, the
// same work as the libvips commands. The slides are internal/synth's RGB slide, generated
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
//
// The figures depend on the machine and on what else runs on it:
// measure on a quiet machine. Times are reported; a peak memory past its
// bound, which does not depend on the load, makes the program fail.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	if job := os.Getenv(generateEnv); job != "" {
		if err := generate(job, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "convertcompare:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "convertcompare:", err)
		os.Exit(1)
	}
}

// config is what the command line asks for.
type config struct {
	workloads []string
	runs      int
	dir       string
	keep      bool
	ometiff   string
}

// workload is a conversion measured with both converters.
type workload struct {
	name string
	// make writes the input at path into dir, untimed.
	make func(dir, path string) error
	// ext is the input's extension.
	ext string
	// input names the input, when it is another workload's; "": its own.
	input string
	// flags are ometiff convert's flags.
	flags []string
	// peer is libvips's command, IN and OUT standing for the files; nil:
	// ours only.
	peer []string
	// target is the largest ratio of our wall time to the peer's we aim
	// for, and maxRSS our largest peak memory; 0: none.
	target float64
	maxRSS int64
}

// lzw are the flags converting to LZW with the horizontal predictor in
// 256 x 256 tiles, as the libvips commands do, rather than copying a
// source's tiles through.
var lzw = []string{"-compression", "lzw", "-predictor", "horizontal", "-tile", "256"}

// vipsJPEG70 re-encodes the SVS-like slide as libvips would copy it: a
// JPEG Q70 SubIFD pyramid in the source's 240 x 240 tiles.
var vipsJPEG70 = []string{"vips", "tiffsave", "IN", "OUT", "--tile", "--tile-width", "240", "--tile-height", "240", "--pyramid", "--subifd",
	"--compression", "jpeg", "--Q", "70"}

var workloads = []workload{
	{name: "svs", make: makeSVS, ext: ".svs", target: 0.45, maxRSS: 256 << 20, flags: lzw,
		peer: []string{"vips", "tiffsave", "IN", "OUT", "--tile", "--pyramid", "--subifd", "--compression", "lzw", "--predictor", "horizontal"}},
	{name: "strips", make: makeStrips, ext: ".tif", target: 0.5, maxRSS: 128 << 20, flags: lzw,
		peer: []string{"vips", "tiffsave", "IN", "OUT", "--tile", "--tile-width", "256", "--tile-height", "256", "--pyramid", "--subifd",
			"--compression", "lzw", "--predictor", "horizontal"}},
	{name: "copy", make: makeSVS, ext: ".svs", input: "svs", target: 0.35, maxRSS: 256 << 20, peer: vipsJPEG70},
	{name: "copy-levels", make: makeSVS, ext: ".svs", input: "svs", target: 0.05, maxRSS: 256 << 20, flags: []string{"-copy-levels"}, peer: vipsJPEG70},
	{name: "huge", make: makeHuge, ext: ".tif", maxRSS: 256 << 20, flags: lzw},
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("convertcompare", flag.ContinueOnError)
	list := fs.String("workloads", "svs,strips,copy,copy-levels", "comma-separated `workloads`: svs, strips, copy, copy-levels, huge")
	cfg := config{}
	fs.IntVar(&cfg.runs, "runs", 3, "measured `runs` of each converter")
	fs.StringVar(&cfg.dir, "dir", "", "`folder` for the inputs (kept) and outputs; default: a temporary one")
	fs.StringVar(&cfg.ometiff, "ometiff", "", "the ometiff `program` to measure; default: built from this module")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", cfg.runs)
	}
	for _, name := range strings.Split(*list, ",") {
		if !slices.ContainsFunc(workloads, func(w workload) bool { return w.name == name }) {
			return fmt.Errorf("unknown workload %q", name)
		}
		cfg.workloads = append(cfg.workloads, name)
	}
	cfg.keep = cfg.dir != ""
	if !cfg.keep {
		dir, err := os.MkdirTemp("", "convertcompare")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		stop := removeOnSignal(dir)
		defer stop()
		cfg.dir = dir
	}
	if cfg.ometiff == "" {
		cfg.ometiff = filepath.Join(cfg.dir, "ometiff")
		if out, err := exec.Command("go", "build", "-o", cfg.ometiff, "./examples/ometiff").CombinedOutput(); err != nil {
			return fmt.Errorf("building ometiff (run from the module's root): %v: %s", err, out)
		}
	}
	fmt.Fprintf(stdout, "%-8s %-8s %9s %9s %10s %10s %8s %s\n", "workload", "writer", "wall s", "cpu s", "peak MiB", "output MB", "wall/vips", "target")
	var missed []string
	for _, w := range workloads {
		if !slices.Contains(cfg.workloads, w.name) {
			continue
		}
		rss, err := measureWorkload(stdout, cfg, w)
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

// removeOnSignal removes dir when the program is interrupted, and exits.
func removeOnSignal(dir string) (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-c; ok {
			os.RemoveAll(dir)
			os.Exit(130)
		}
	}()
	return func() { signal.Stop(c); close(c) }
}

// sample is what one run cost.
type sample struct {
	wall, cpu time.Duration
	rss, size int64
}

// measureWorkload makes the input (unless kept from before), runs ours and
// the peer alternately, prints the medians and returns our peak memory,
// the largest of the runs.
func measureWorkload(stdout io.Writer, cfg config, w workload) (int64, error) {
	in := filepath.Join(cfg.dir, cmp.Or(w.input, w.name)+w.ext)
	if _, err := os.Stat(in); err != nil || !cfg.keep && w.input == "" {
		fmt.Fprintf(os.Stderr, "making %s...\n", in)
		if err := w.make(cfg.dir, in); err != nil {
			return 0, err
		}
	}
	ours := append(append([]string{cfg.ometiff, "convert", "-force"}, w.flags...), in, "OUT")
	var mine, theirs []sample
	for range cfg.runs {
		s, err := measure(ours, filepath.Join(cfg.dir, "ours.ome.tif"))
		if err != nil {
			return 0, fmt.Errorf("ometiff: %w", err)
		}
		mine = append(mine, s)
		if w.peer == nil {
			continue
		}
		s, err = measure(substitute(w.peer, in), filepath.Join(cfg.dir, "peer.tif"))
		if err != nil {
			return 0, fmt.Errorf("vips: %w", err)
		}
		theirs = append(theirs, s)
	}
	m := median(mine)
	ratio, target := "", ""
	if w.peer != nil {
		p := median(theirs)
		ratio = fmt.Sprintf("%.2f", m.wall.Seconds()/p.wall.Seconds())
		target = fmt.Sprintf("≤ %.2f", w.target)
		defer printRow(stdout, w.name, "vips", p, "", "")
	}
	if w.maxRSS > 0 {
		target = strings.TrimSpace(target + fmt.Sprintf(" < %d MiB", w.maxRSS>>20))
	}
	printRow(stdout, w.name, "ometiff", m, ratio, target)
	peak := int64(0)
	for _, s := range mine {
		peak = max(peak, s.rss)
	}
	return peak, nil
}

func printRow(w io.Writer, workload, writer string, s sample, ratio, target string) {
	fmt.Fprintf(w, "%-8s %-8s %9.2f %9.2f %10.0f %10.1f %8s %s\n", workload, writer, s.wall.Seconds(), s.cpu.Seconds(),
		float64(s.rss)/(1<<20), float64(s.size)/1e6, ratio, target)
}

// substitute replaces IN and OUT in a command with the files.
func substitute(argv []string, in string) []string {
	out := slices.Clone(argv)
	for i, a := range out {
		if a == "IN" {
			out[i] = in
		}
	}
	return out
}

// measure runs argv, OUT standing for out, as a child process, and
// returns its cost; the output is removed afterwards.
func measure(argv []string, out string) (sample, error) {
	argv = slices.Clone(argv)
	for i, a := range argv {
		if a == "OUT" {
			argv[i] = out
		}
	}
	os.Remove(out)
	defer os.Remove(out)
	cmd := exec.Command(argv[0], argv[1:]...)
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
	return s, nil
}

// median returns the median of each figure of the samples.
func median(samples []sample) sample {
	pick := func(f func(sample) int64) int64 {
		v := make([]int64, len(samples))
		for i, s := range samples {
			v[i] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return sample{
		wall: time.Duration(pick(func(s sample) int64 { return int64(s.wall) })),
		cpu:  time.Duration(pick(func(s sample) int64 { return int64(s.cpu) })),
		rss:  pick(func(s sample) int64 { return s.rss }),
		size: pick(func(s sample) int64 { return s.size }),
	}
}
