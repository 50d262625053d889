//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// A result is one writer's runs on one workload.
type result struct {
	workload, writer string
	samples          []sample
	calls            map[string]int64 // by system call, from strace; nil without -strace
	err              error            // the run that failed, if one did
}

// sorted returns metric over the samples, in increasing order.
func (r *result) sorted(metric func(sample) float64) []float64 {
	v := make([]float64, len(r.samples))
	for i, s := range r.samples {
		v[i] = metric(s)
	}
	slices.Sort(v)
	return v
}

// median returns the median of metric over the samples.
func (r *result) median(metric func(sample) float64) float64 {
	return median(r.sorted(metric))
}

// quantile returns the q-quantile (0 the fastest, 0.25 the first
// quartile) of metric over the samples: the sample at or below it.
func (r *result) quantile(metric func(sample) float64, q float64) float64 {
	v := r.sorted(metric)
	return v[int(q*float64(len(v)-1))]
}

// median returns the median of v, sorted.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// ok reports whether the result has samples to show.
func (r *result) ok() bool { return r != nil && r.err == nil && len(r.samples) > 0 }

// Metrics, in the table's units.
func wallSeconds(s sample) float64 { return s.wall.Seconds() }
func cpuSeconds(s sample) float64  { return s.cpu.Seconds() }
func rssMiB(s sample) float64      { return float64(s.rss) / (1 << 20) }
func sizeMiB(s sample) float64     { return float64(s.size) / (1 << 20) }
func writeCount(s sample) float64  { return float64(s.writes) }

// table returns the rows of the report, the header first: one row per
// result, with ratios against the vips and dd results of its workload.
func table(results []*result, withStrace bool) [][]string {
	header := []string{"workload", "writer", "wall s", "cpu s", "peak RSS MiB", "output MiB", "OS writes", "wall/vips", "size/vips", "wall/dd"}
	if withStrace {
		header = append(header, "strace writes", "strace lseek", "strace ftruncate")
	}
	find := func(workload, writer string) *result {
		for _, r := range results {
			if r.workload == workload && r.writer == writer {
				return r
			}
		}
		return nil
	}
	rows := [][]string{header}
	for _, r := range results {
		row := []string{r.workload, r.writer}
		if !r.ok() {
			rows = append(rows, append(row, "failed"))
			continue
		}
		vipsResult, ddResult := find(r.workload, vips), find(r.workload, dd)
		row = append(row,
			fmt.Sprintf("%.2f", r.median(wallSeconds)), fmt.Sprintf("%.2f", r.median(cpuSeconds)),
			fmt.Sprintf("%.0f", r.median(rssMiB)), fmt.Sprintf("%.1f", r.median(sizeMiB)),
			thousands(int64(r.median(writeCount))),
			ratio(r, vipsResult, wallSeconds), ratio(r, vipsResult, sizeMiB), ratio(r, ddResult, wallSeconds))
		if withStrace {
			row = append(row, traced(r, "write", "pwrite64", "writev"), traced(r, "lseek"), traced(r, "ftruncate", "fallocate"))
		}
		rows = append(rows, row)
	}
	return rows
}

// againstFloor compares our wall times with dd's for every workload both
// ran more than once, by median, first quartile, fastest run and run by
// run: dd's time varies most between runs on a shared machine, so one
// statistic alone can mislead.
func againstFloor(results []*result) []string {
	var lines []string
	for _, r := range results {
		if r.writer != ours || !r.ok() || len(r.samples) < 2 {
			continue
		}
		i := slices.IndexFunc(results, func(f *result) bool {
			return f.workload == r.workload && f.writer == dd && f.ok() && len(f.samples) == len(r.samples)
		})
		if i < 0 {
			continue
		}
		floor := results[i]
		perRun := make([]float64, len(r.samples))
		for k, s := range r.samples {
			perRun[k] = wallSeconds(s) / wallSeconds(floor.samples[k])
		}
		slices.Sort(perRun)
		stats := func(f *result) [3]float64 {
			return [3]float64{f.median(wallSeconds), f.quantile(wallSeconds, 0.25), f.quantile(wallSeconds, 0)}
		}
		o, d := stats(r), stats(floor)
		lines = append(lines, fmt.Sprintf("%s: ometiff %.1f / %.1f / %.1f ms, dd %.1f / %.1f / %.1f ms (median / first quartile / fastest); "+
			"ometiff/dd %.2f / %.2f / %.2f, median of the per-run ratios %.2f",
			r.workload, o[0]*1000, o[1]*1000, o[2]*1000, d[0]*1000, d[1]*1000, d[2]*1000, o[0]/d[0], o[1]/d[1], o[2]/d[2], median(perRun)))
	}
	return lines
}

// ratio is r's median metric over base's, or "-" without a base.
func ratio(r, base *result, metric func(sample) float64) string {
	if !base.ok() {
		return "-"
	}
	return fmt.Sprintf("%.2f", r.median(metric)/base.median(metric))
}

// traced sums the strace counts of the named calls.
func traced(r *result, calls ...string) string {
	if r.calls == nil {
		return "-"
	}
	var n int64
	for _, c := range calls {
		n += r.calls[c]
	}
	return thousands(n)
}

// thousands formats n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// printText prints rows as a plain-text table: names left-aligned,
// numbers right-aligned.
func printText(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, cell := range row {
			if i < 2 {
				cells[i] = fmt.Sprintf("%-*s", widths[i], cell)
			} else {
				cells[i] = fmt.Sprintf("%*s", widths[i], cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(strings.Join(cells, "  "), " "))
	}
}

// printMarkdown prints rows as a Markdown table.
func printMarkdown(w io.Writer, rows [][]string) {
	align := []string{"---", "---"}
	for range rows[0][2:] {
		align = append(align, "---:")
	}
	fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(rows[0], " | "), strings.Join(align, "|"))
	for _, row := range rows[1:] {
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
}

// machine describes the CPU, memory and load of this machine.
func machine() string {
	model, mem := "unknown CPU", 0.0
	if text, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(text), "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				model = strings.TrimSpace(value)
				break
			}
		}
	}
	if text, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kib float64
		if _, err := fmt.Sscanf(string(text), "MemTotal: %g kB", &kib); err == nil {
			mem = kib / (1 << 20)
		}
	}
	return fmt.Sprintf("%s, %d cores, %.1f GiB RAM, load average %s", model, runtime.NumCPU(), mem, loadAverage())
}

// loadAverage is the 1, 5 and 15 minute load average.
func loadAverage() string {
	text, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(text))
	return strings.Join(f[:min(3, len(f))], " ")
}
