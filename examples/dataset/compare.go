package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
)

// programEnv is set in the environment of the processes compare starts,
// which run this program's write command: a test binary standing in for
// the program runs it when it finds the variable.
const programEnv = "OMETIFF_DATASET_PROGRAM"

// comparison is what compare's flags ask for.
type comparison struct {
	s                   stack
	opts                pyramid.Options
	runs, files, jobs   int
	dir                 string
	nosync              bool
	singleWorkers, each int // workers of the single process, of each of the split's
}

// runCompare is the compare command.
func runCompare(args []string, stdout, stderr io.Writer) int {
	c := comparison{singleWorkers: 2, each: 1}
	fs := cli.NewFlagSet("dataset compare", "usage: dataset compare [flags]\n\n"+
		"Compare times the stack workload written by one process into one file\n"+
		"(-workers 2) against the same planes written as -files files by\n"+
		"processes run -jobs at a time (-workers 1 each), in alternating runs, and\n"+
		"prints the medians and the ratio of their throughputs.\n\n")
	fs.IntVar(&c.runs, "runs", 5, "measured runs of each")
	fs.IntVar(&c.files, "files", 8, "files of the split write")
	fs.IntVar(&c.jobs, "jobs", 2, "processes of the split write at a time")
	fs.StringVar(&c.dir, "dir", os.TempDir(), "`directory` for the outputs (a temporary directory is made in it)")
	fs.BoolVar(&c.nosync, "nosync", false, "skip the fsync at the end of each file")
	stackFlags(fs, &c.s, &c.opts)
	if err := cli.ParseFlagsOnly(fs, args, stdout); err != nil {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: err})
	}
	if err := c.s.check(); err != nil {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: err})
	}
	if c.runs < 1 || c.files < 1 || c.jobs < 1 {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: fmt.Errorf("-runs %d, -files %d, -jobs %d: want at least 1", c.runs, c.files, c.jobs)})
	}
	return cli.Run("dataset", stderr, func(ctx context.Context) error { return c.run(ctx, stdout) })
}

// run makes the plans, times the writes and prints the result.
func (c comparison) run(ctx context.Context, w io.Writer) error {
	tmp, err := os.MkdirTemp(c.dir, "dataset-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	single, split := c.s.spec("single", c.opts), c.s.spec("split", c.opts)
	split.Split.Files = c.files
	plans := map[string]*pyramid.Dataset{}
	for name, spec := range map[string]pyramid.DatasetSpec{"single": single, "split": split} {
		d, err := pyramid.NewDataset(spec)
		if err != nil {
			return cli.UsageError{Err: err}
		}
		if err := savePlan(filepath.Join(tmp, name+".json"), d); err != nil {
			return err
		}
		plans[name] = d
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	raw := float64(c.s.series*c.s.z*c.s.channels) * float64(2*c.s.size*c.s.size)
	fmt.Fprintf(w, "stack %d x %d x %d of %d x %d uint16, %v, %.1f MB raw; %d runs each, alternating\n",
		c.s.series, c.s.z, c.s.channels, c.s.size, c.s.size, c.opts.Compression, raw/1e6, c.runs)
	var times, cpus [2][]time.Duration
	for r := range c.runs {
		for k := range 2 {
			which := (r + k) % 2 // 0 single, 1 split; the first of each run alternates
			var elapsed, cpu time.Duration
			if which == 0 {
				elapsed, cpu, err = c.write(ctx, exe, tmp, plans["single"], "single", 1, c.singleWorkers)
			} else {
				elapsed, cpu, err = c.write(ctx, exe, tmp, plans["split"], "split", c.jobs, c.each)
			}
			if err != nil {
				return err
			}
			times[which], cpus[which] = append(times[which], elapsed), append(cpus[which], cpu)
		}
	}
	a, b := median(times[0]), median(times[1])
	fmt.Fprintf(w, "one process, one file, -workers %d: wall median %.2f s, %.1f MB/s, CPU median %.2f s (wall %v)\n",
		c.singleWorkers, a.Seconds(), raw/1e6/a.Seconds(), median(cpus[0]).Seconds(), seconds(times[0]))
	fmt.Fprintf(w, "%d files, %d processes at a time, -workers %d: wall median %.2f s, %.1f MB/s, CPU median %.2f s (wall %v)\n",
		c.files, c.jobs, c.each, b.Seconds(), raw/1e6/b.Seconds(), median(cpus[1]).Seconds(), seconds(times[1]))
	_, err = fmt.Fprintf(w, "throughput of the split write: %.3fx the single write's (target 0.95x); CPU %.3fx\n",
		a.Seconds()/b.Seconds(), median(cpus[1]).Seconds()/median(cpus[0]).Seconds())
	return err
}

// write runs the write command for every file of d, jobs processes at a
// time, each with workers, and returns the time from the first start to
// the last end, and the CPU time (user and system) of the processes. The
// files are removed afterwards.
func (c comparison) write(ctx context.Context, exe, dir string, d *pyramid.Dataset, name string, jobs, workers int) (elapsed, cpu time.Duration, err error) {
	sem := make(chan struct{}, jobs)
	errs := make([]error, d.Files())
	cpus := make([]time.Duration, d.Files())
	var wg sync.WaitGroup
	start := time.Now()
	for i := range d.Files() {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			args := []string{"write", "-workers", strconv.Itoa(workers)}
			if c.nosync {
				args = append(args, "-nosync")
			}
			cmd := exec.CommandContext(ctx, exe, append(args, filepath.Join(dir, name+".json"), strconv.Itoa(i))...)
			cmd.Env = append(os.Environ(), programEnv+"=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("%s file %d: %v: %s", name, i, err, bytes.TrimSpace(stderr.Bytes()))
				return
			}
			cpus[i] = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		})
	}
	wg.Wait()
	elapsed = time.Since(start)
	for i := range d.Files() {
		_ = os.Remove(filepath.Join(dir, d.File(i).Name))
		cpu += cpus[i]
	}
	for _, err := range errs {
		if err != nil {
			return 0, 0, err
		}
	}
	return elapsed, cpu, nil
}

// median returns the median of ts.
func median(ts []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ts))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// seconds formats times as seconds.
func seconds(ts []time.Duration) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf("%.2f", t.Seconds())
	}
	return out
}
