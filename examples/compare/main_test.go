//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
)

// TestMain lets the test binary act as the worker, as the program does
// when it re-executes itself.
func TestMain(m *testing.M) {
	if spec := os.Getenv(jobEnv); spec != "" {
		os.Exit(work(spec, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// small are flags that shrink every workload to a fraction of a second.
func small(t *testing.T, workloads string) []string {
	return []string{"-workloads", workloads, "-runs", "1", "-dir", t.TempDir(),
		"-slide-size", "300", "-stack-series", "1", "-huge-size", "600"}
}

// row returns the fields of the table row of a workload and writer.
func row(t *testing.T, stdout, workload, writer string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(workload) + ` +` + writer + ` .*$`)
	line := re.FindString(stdout)
	require.NotEmpty(t, line, "no row for %s/%s in\n%s", workload, writer, stdout)
	return strings.Fields(line)
}

func TestRunPrintsTable(t *testing.T) {
	code, stdout, stderr := clitest.Run(run, small(t, "slide,stack,huge")...)
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{"ometiff compare, ", "machine: ", "medians of 1 runs",
		"wall s  cpu s  peak RSS MiB  output MiB  OS writes  wall/vips  size/vips  wall/dd", "our outputs read back:", "total "} {
		assert.Contains(t, stdout, want)
	}
	for _, workload := range []string{"slide", "stack", "huge"} {
		fields := row(t, stdout, workload, ours)
		require.Len(t, fields, 10, "row %q", fields)
		assert.Regexp(t, `^\d+\.\d\d$`, fields[2], "wall s")
		assert.NotEqual(t, "0", fields[6], "OS writes")
	}
	if _, err := exec.LookPath("vips"); err == nil {
		assert.Equal(t, "1.00", row(t, stdout, "slide", vips)[7], "vips's wall ratio against itself")
		assert.Contains(t, stdout, "slide: vipsheader 300x300 ushort")
	}
	if _, err := exec.LookPath("dd"); err == nil {
		assert.Equal(t, "1", row(t, stdout, "slide", dd)[6], "dd copies 176 KiB in one write")
		assert.Equal(t, "-", row(t, stdout, "huge", ours)[9], "huge has no floor")
	}
	assert.Contains(t, stderr, "slide: generating slide-300-uint16.raw")
}

// TestRunOnlyTheNamedPeers runs ometiff beside dd alone: no other peer has
// a row, and our output is still read back by the readers installed.
func TestRunOnlyTheNamedPeers(t *testing.T) {
	if _, err := exec.LookPath("dd"); err != nil {
		t.Skip("dd is not installed")
	}
	code, stdout, stderr := clitest.Run(run, append(small(t, "stack"), "-peers", "dd")...)
	require.Equal(t, 0, code, stderr)
	assert.Len(t, row(t, stdout, "stack", ours), 10)
	assert.Len(t, row(t, stdout, "stack", dd), 10)
	for _, peer := range []string{vips, tifffile, gdal} {
		assert.NotRegexp(t, `(?m)^stack +`+peer+` `, stdout)
	}
	if _, err := exec.LookPath("vipsheader"); err == nil {
		assert.Contains(t, stdout, "stack: vipsheader 128x128 ushort")
	}
}

func TestRunSkipsMissingPeersAndReportsFailingOnes(t *testing.T) {
	// A PATH holding only a dd that fails to copy: every other peer and
	// reader is missing.
	bin := t.TempDir()
	fake := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'dd (fake) 1.0'; exit 0; fi\necho 'dd: disk full' >&2\nexit 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "dd"), []byte(fake), 0o755))
	t.Setenv("PATH", bin)
	args := append(small(t, "slide"), "-python", filepath.Join(bin, "python3"))
	code, stdout, stderr := clitest.Run(run, args...)
	assert.Equal(t, 1, code)
	for _, want := range []string{"skipped: vips: not installed", "skipped: tifffile: " + filepath.Join(bin, "python3") + ": not installed",
		"skipped: gdal_translate: not installed", "dd (fake) 1.0", "slide: not verified", "FAILED: slide/dd: exit status 1: dd: disk full"} {
		assert.Contains(t, stdout, want)
	}
	assert.Len(t, row(t, stdout, "slide", ours), 10)
	assert.Equal(t, []string{"slide", "dd", "failed"}, row(t, stdout, "slide", dd))
	assert.True(t, strings.HasSuffix(stderr, "compare: 1 failed: slide/dd: exit status 1: dd: disk full\n"), stderr)
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-runs", "0"}, {"-runs", "x"}, {"-workers", "0"}, {"-workloads", "slide,nope"}, {"-peers", "vips,nope"},
		{"-slide-size", "0"}, {"-bogus"}, {"extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			clitest.AssertFails(t, run, "compare", t.TempDir(), 2, args...)
		})
	}
}

func TestRunHelp(t *testing.T) {
	clitest.AssertUsage(t, run, "-workloads names")
}

func TestWorkerRejectsBadJob(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, work("{", &stdout, &stderr))
	assert.Contains(t, stderr.String(), "compare worker: bad job")
}

func TestWorkloadLevels(t *testing.T) {
	for size, want := range map[int]int{8192: 6, 65536: 9, 300: 2, 256: 1, 100: 1} {
		w := catalog(size, 1, size)[0]
		assert.Equal(t, want, w.levels(), "size %d", size)
	}
	stack, err := pick("stack", catalog(1, 1, 1))
	require.NoError(t, err)
	assert.Equal(t, 128, stack[0].Tile, "stack tiles")
}

func TestParseStrace(t *testing.T) {
	summary := `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 61.90    0.001300           1      1786           write
 38.10    0.000800           0      2199        12 lseek
------ ----------- ----------- --------- --------- ----------------
100.00    0.002100           0      3985        12 total
`
	assert.Equal(t, map[string]int64{"write": 1786, "lseek": 2199}, parseStrace([]byte(summary)))
}

func TestTableRatiosAndMedians(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	results := []*result{
		{workload: "slide", writer: ours, samples: []sample{{wall: sec(1), size: 100 << 20, writes: 1234}, {wall: sec(3), size: 100 << 20, writes: 1234}, {wall: sec(2), size: 100 << 20, writes: 1234}}},
		{workload: "slide", writer: vips, samples: []sample{{wall: sec(4), size: 200 << 20, writes: 1786}}},
	}
	rows := table(results, false)
	assert.Equal(t, []string{"slide", ours, "2.00", "0.00", "0", "100.0", "1,234", "0.50", "0.50", "-"}, rows[1])
	assert.Equal(t, []string{"slide", vips, "4.00", "0.00", "0", "200.0", "1,786", "1.00", "1.00", "-"}, rows[2])
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 121472: "121,472", 1234567: "1,234,567", -1000: "-1,000"} {
		assert.Equal(t, want, thousands(n))
	}
}

// TestAgainstFloor checks the run-by-run comparison with dd on made-up
// samples: dd's one slow run moves its median, not the per-run ratio.
func TestAgainstFloor(t *testing.T) {
	walls := func(ms ...int) []sample {
		var s []sample
		for _, m := range ms {
			s = append(s, sample{wall: time.Duration(m) * time.Millisecond})
		}
		return s
	}
	results := []*result{
		{workload: "stack", writer: ours, samples: walls(150, 160, 170, 180)},
		{workload: "stack", writer: dd, samples: walls(100, 300, 110, 120)},
		{workload: "slide", writer: ours, samples: walls(1000)}, // one run: no line
		{workload: "slide", writer: dd, samples: walls(100)},
	}
	assert.Equal(t, []string{"stack: ometiff 165.0 / 150.0 / 150.0 ms, dd 115.0 / 100.0 / 100.0 ms (median / first quartile / fastest); " +
		"ometiff/dd 1.43 / 1.50 / 1.50, median of the per-run ratios 1.50"}, againstFloor(results))
}

// TestRunJPEGWorkload: the RGB slide as JPEG at quality 85 runs for ours,
// libvips (--Q 85) and GDAL (QUALITY=85), and our output is read back.
func TestRunJPEGWorkload(t *testing.T) {
	code, stdout, stderr := clitest.Run(run, append(small(t, "slide-rgb-jpeg"), "-peers", "vips,gdal")...)
	require.Equal(t, 0, code, stderr)
	assert.Len(t, row(t, stdout, "slide-rgb-jpeg", ours), 10)
	for _, peer := range []string{vips, gdal} {
		if _, err := exec.LookPath(map[string]string{vips: "vips", gdal: "gdal_translate"}[peer]); err == nil {
			assert.Len(t, row(t, stdout, "slide-rgb-jpeg", peer), 10, peer)
		}
	}
	if _, err := exec.LookPath("vips"); err == nil {
		assert.Contains(t, stdout, "slide-rgb-jpeg: vipsheader 300x300 uchar, 3 bands, srgb")
	}
}

// TestRoundOrder checks that ours goes first in even rounds and after the
// peers in odd ones.
func TestRoundOrder(t *testing.T) {
	names := func(es []entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.w.name)
		}
		return out
	}
	entries := func(ws ...string) []entry {
		var out []entry
		for _, w := range ws {
			out = append(out, entry{w: writer{name: w}})
		}
		return out
	}
	for _, tc := range []struct {
		round   int
		entries []entry
		want    []string
	}{
		{0, entries(ours, vips, dd), []string{ours, vips, dd}},
		{1, entries(ours, vips, dd), []string{vips, dd, ours}},
		{2, entries(ours, vips, dd), []string{ours, vips, dd}},
		{3, entries(ours, vips), []string{vips, ours}},
		{1, entries(ours), []string{ours}},
		{1, entries(vips, dd), []string{vips, dd}},
		{1, nil, nil},
	} {
		in := names(tc.entries)
		assert.Equal(t, tc.want, names(roundOrder(tc.round, tc.entries)), "round %d of %v", tc.round, in)
		assert.Equal(t, in, names(tc.entries), "the entries are left as they were")
	}
}
