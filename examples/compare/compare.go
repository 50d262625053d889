//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// hugeRSSLimit is the peak resident memory our writer must stay under on
// the huge workload.
const hugeRSSLimit = 300 << 20

// A comparison is one run of the program: where it works, the writers it
// runs and what they cost.
type comparison struct {
	ctx      context.Context // cancelled by a signal: stop
	cfg      config
	dir      string
	writers  []writer
	verifier verifier
	log      io.Writer // progress
	results  []*result
	verified []string // what the readers saw of our outputs, per workload
	failures []string
}

// An entry is one writer's part in one workload.
type entry struct {
	w writer
	t task
	r *result
}

// compare runs every workload of cfg with every writer that can do it,
// printing the header at once and the table at the end to stdout, and
// progress to stderr. It returns an error if anything failed. Cancelling
// ctx kills the writer running and stops the comparison, which removes its
// temporary directory and returns ctx's error.
func compare(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	start := time.Now()
	dir, err := os.MkdirTemp(cfg.dir, "ometiff-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := checkLauncher(dir); err != nil {
		return err
	}
	if launcherWrites.missing != nil {
		fmt.Fprintf(stderr, "compare: warning: %v\n", launcherWrites.missing)
	}
	installed, skipped := findWriters(cfg.python, dir)
	// Our output is verified with every reader installed, asked to run or not.
	writers := slices.DeleteFunc(slices.Clone(installed), func(w writer) bool { return w.name != ours && !slices.Contains(cfg.peers, w.name) })
	c := &comparison{ctx: ctx, cfg: cfg, dir: dir, writers: writers, verifier: newVerifier(installed, cfg.python, dir), log: stderr}
	c.printHeader(stdout, skipped, start)
	for _, wl := range cfg.workloads {
		if err := c.run(wl); err != nil {
			return err
		}
	}
	c.printReport(stdout, time.Since(start))
	if len(c.failures) > 0 {
		return fmt.Errorf("%d failed: %s", len(c.failures), strings.Join(c.failures, "; "))
	}
	return nil
}

// run measures every writer that can do the workload, interleaving their
// runs (see roundOrder), then verifies our output and removes every
// output.
func (c *comparison) run(wl workload) error {
	raw, err := c.input(wl)
	if err != nil {
		return fmt.Errorf("%s: generating the input: %w", wl.Name, err)
	}
	entries := c.entries(wl, raw)
	for run := 1; run <= c.cfg.runs; run++ {
		for _, e := range roundOrder(run-1, entries) {
			if err := c.ctx.Err(); err != nil {
				return err
			}
			c.measure(e, run)
		}
	}
	if c.cfg.strace {
		for _, e := range entries {
			if err := c.ctx.Err(); err != nil {
				return err
			}
			c.trace(e)
		}
	}
	if err := c.ctx.Err(); err != nil {
		return err
	}
	c.check(wl, entries[0])
	for _, e := range entries {
		os.Remove(e.t.out)
	}
	return nil
}

// roundOrder returns the entries in the order round r (from 0) runs
// them: as they are, ours first, in even rounds; ours after the peers in
// odd ones, so that neither side always runs on a machine the other has
// just warmed (or left writing back). Entries without ours stay as they
// are.
func roundOrder(r int, entries []entry) []entry {
	if r%2 == 0 || len(entries) == 0 || entries[0].w.name != ours {
		return entries
	}
	return append(slices.Clone(entries[1:]), entries[0])
}

// input generates the workload's raw input, untimed, unless an earlier
// workload with the same pixels did. The huge workload has none.
func (c *comparison) input(wl workload) (string, error) {
	if wl.Kind == hugeKind {
		return "", nil
	}
	raw := filepath.Join(c.dir, wl.input())
	if _, err := os.Stat(raw); err == nil {
		return raw, nil
	}
	fmt.Fprintf(c.log, "%s: generating %s (%.0f MiB, untimed)\n", wl.Name, wl.input(), float64(wl.rawBytes())/(1<<20))
	return raw, writeInput(wl, raw)
}

// entries prepares the input of every writer that can do the workload,
// ours first. A writer whose input cannot be prepared is a failure.
func (c *comparison) entries(wl workload, raw string) []entry {
	var entries []entry
	for _, w := range c.writers {
		if !w.can(wl) {
			continue
		}
		in := raw
		if w.prepare != nil {
			var err error
			if in, err = w.prepare(wl, raw); err != nil {
				c.fail("%s/%s: preparing the input: %v", wl.Name, w.name, err)
				continue
			}
		}
		r := &result{workload: wl.Name, writer: w.name}
		c.results = append(c.results, r)
		out := filepath.Join(c.dir, wl.Name+"-"+w.name+w.ext)
		entries = append(entries, entry{w: w, t: task{w: wl, in: in, out: out, workers: c.cfg.workers}, r: r})
	}
	return entries
}

// measure runs an entry once, unless an earlier run of it failed.
func (c *comparison) measure(e entry, run int) {
	if e.r.err != nil {
		return
	}
	os.Remove(e.t.out)
	// Every run starts with nothing left to write back: otherwise the
	// kernel's writeback of earlier outputs competes with the run measured.
	syscall.Sync()
	argv, env := e.w.command(e.t)
	s, err := measure(c.ctx, argv, env, e.t.out, e.w.printsWrites)
	if c.ctx.Err() != nil {
		return // killed: not the writer's failure
	}
	if err != nil {
		e.r.err = err
		c.fail("%s/%s: %v", e.r.workload, e.r.writer, err)
		return
	}
	e.r.samples = append(e.r.samples, s)
	fmt.Fprintf(c.log, "%-13s %-8s run %d/%d: %6.2f s wall, %6.2f s cpu, %5.0f MiB peak RSS\n",
		e.r.workload, e.r.writer, run, c.cfg.runs, wallSeconds(s), cpuSeconds(s), rssMiB(s))
}

// trace runs an entry once more under strace.
func (c *comparison) trace(e entry) {
	if !e.r.ok() {
		return
	}
	os.Remove(e.t.out)
	argv, env := e.w.command(e.t)
	calls, err := traceCalls(c.ctx, argv, env, c.dir)
	if c.ctx.Err() != nil {
		return
	}
	if err != nil {
		c.fail("%s/%s: %v", e.r.workload, e.r.writer, err)
		return
	}
	e.r.calls = calls
}

// check verifies our output of the workload, and for huge our peak memory.
func (c *comparison) check(wl workload, ours entry) {
	if !ours.r.ok() {
		return
	}
	seen, err := c.verifier.check(wl, ours.t.out)
	if err != nil {
		c.fail("%s: our output does not read back: %v", wl.Name, err)
		return
	}
	c.verified = append(c.verified, fmt.Sprintf("%s: %s", wl.Name, seen))
	if rss := ours.r.median(rssMiB); wl.Kind == hugeKind && rss > hugeRSSLimit>>20 {
		c.fail("%s: our peak RSS %.0f MiB is over the %d MiB limit", wl.Name, rss, hugeRSSLimit>>20)
	}
}

// fail records a failure and reports it at once.
func (c *comparison) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.failures = append(c.failures, msg)
	fmt.Fprintln(c.log, "FAILED:", msg)
}

// printHeader prints the date, the machine and the writers.
func (c *comparison) printHeader(w io.Writer, skipped []string, start time.Time) {
	fmt.Fprintf(w, "ometiff compare, %s\n", start.UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(w, "machine: %s\n", machine())
	fmt.Fprintf(w, "medians of %d runs; %d encoding threads for ometiff, tifffile and GDAL; inputs generated untimed in %s\n",
		c.cfg.runs, c.cfg.workers, c.dir)
	fmt.Fprintln(w, "writers:")
	for _, wr := range c.writers {
		fmt.Fprintf(w, "  %-8s  %s\n", wr.name, wr.version)
	}
	for _, s := range skipped {
		fmt.Fprintf(w, "  skipped: %s\n", s)
	}
}

// printReport prints the table, what the readers saw of our outputs, the
// failures and the time the whole comparison took.
func (c *comparison) printReport(w io.Writer, total time.Duration) {
	rows := table(c.results, c.cfg.strace)
	fmt.Fprintln(w)
	printText(w, rows)
	if c.cfg.markdown {
		fmt.Fprintln(w)
		printMarkdown(w, rows)
	}
	if lines := againstFloor(c.results); len(lines) > 0 {
		fmt.Fprintln(w, "\nagainst the floor, run by run:")
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintln(w, "\nour outputs read back:")
	for _, v := range c.verified {
		fmt.Fprintf(w, "  %s\n", v)
	}
	for _, f := range c.failures {
		fmt.Fprintf(w, "FAILED: %s\n", f)
	}
	fmt.Fprintf(w, "load average at end %s; total %s\n", loadAverage(), total.Round(time.Second))
}
