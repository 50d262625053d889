//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
)

// A sample is what one run of a writer cost.
type sample struct {
	wall, cpu time.Duration
	rss       int64 // peak resident bytes
	size      int64 // output bytes
	writes    int64 // OS write calls
}

// launcher is GNU time, which runs each measured program and reports its
// peak resident memory (%M, in KiB). The program's own rusage from wait4
// would not do: Go starts a child with CLONE_VM|CLONE_VFORK, so until it
// execs it runs in this process's memory, and Linux keeps that memory's
// peak in the child's ru_maxrss across the exec: every child would report
// at least this process's peak (the inputs it generated, say). time forks
// normally, from its own small memory, so the program's ru_maxrss that it
// prints is the program's own. It comes with Debian's package time.
const launcher = "/usr/bin/time"

// launcherWrites counts the write calls the launcher itself makes around a
// program (its report), which measure takes from the count of write calls;
// missing is set when the launcher is not installed.
var launcherWrites struct {
	once    sync.Once
	n       int64
	missing error
	err     error
}

// checkLauncher counts the launcher's own write calls around /bin/true,
// which makes none. Without the launcher, measure runs each program itself,
// and checkLauncher returns nil but notes why in launcherWrites.missing:
// the peak memory of every run is then at least this program's (see
// launcher), which compare says, and only Go is needed to test it.
func checkLauncher(dir string) error {
	launcherWrites.once.Do(func() {
		if _, err := os.Stat(launcher); err != nil {
			launcherWrites.missing = fmt.Errorf("without GNU time (%s, Debian's package time) the peak memory of every run is at least this program's: %w", launcher, err)
			return
		}
		report := filepath.Join(dir, "launcher-check.rss")
		defer os.Remove(report)
		before, err := childWriteCalls()
		if err != nil {
			launcherWrites.err = err
			return
		}
		if out, err := exec.Command(launcher, "-f", "%M", "-o", report, "--", "/bin/true").CombinedOutput(); err != nil {
			launcherWrites.err = fmt.Errorf("%s: %v: %s", launcher, err, out)
			return
		}
		after, err := childWriteCalls()
		launcherWrites.n, launcherWrites.err = after-before, err
	})
	return launcherWrites.err
}

// measure runs argv as a child process under the launcher, with env added
// to the environment, and returns its cost; cancelling ctx kills it. The
// output file out must exist after the run. Wall and CPU time are the
// launcher's and the program's (the launcher's own are a millisecond), the
// peak memory the program's, which the launcher reports. Write calls are
// the child's: what it prints on stdout when printsWrites, else the
// kernel's count of write system calls of the child and its descendants,
// which reaches this process's own I/O accounting when the child is reaped
// (see childWriteCalls), less the launcher's own.
func measure(ctx context.Context, argv, env []string, out string, printsWrites bool) (sample, error) {
	if err := checkLauncher(filepath.Dir(out)); err != nil {
		return sample{}, err
	}
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return sample{}, err
	}
	report := out + ".rss"
	defer os.Remove(report)
	cmd := exec.CommandContext(ctx, launcher, append([]string{"-f", "%M", "-o", report, "--", prog}, argv[1:]...)...)
	if launcherWrites.missing != nil {
		cmd = exec.CommandContext(ctx, prog, argv[1:]...)
	}
	cli.KillGroupOnCancel(cmd)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	before, err := childWriteCalls()
	if err != nil {
		return sample{}, err
	}
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, lastLine(stderr.Bytes()))
	}
	wall := time.Since(start)
	after, err := childWriteCalls()
	if err != nil {
		return sample{}, err
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	rss := ru.Maxrss // KiB on Linux
	if launcherWrites.missing == nil {
		if rss, err = peakKiB(report); err != nil {
			return sample{}, err
		}
	}
	s := sample{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rss: rss * 1024, writes: after - before - launcherWrites.n}
	if printsWrites {
		if s.writes, err = strconv.ParseInt(strings.TrimSpace(stdout.String()), 10, 64); err != nil {
			return sample{}, fmt.Errorf("write calls on stdout: %w", err)
		}
	}
	fi, err := os.Stat(out)
	if err != nil {
		return sample{}, err
	}
	s.size = fi.Size()
	return s, nil
}

// peakKiB reads the peak resident memory in KiB that the launcher wrote
// to report: the last line (a line before says how a failed program
// ended).
func peakKiB(report string) (int64, error) {
	text, err := os.ReadFile(report)
	if err != nil {
		return 0, fmt.Errorf("%s's report: %w", launcher, err)
	}
	kib, err := strconv.ParseInt(lastLine(text), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s's report %q: %w", launcher, text, err)
	}
	return kib, nil
}

// childWriteCalls returns the write system calls of the children this
// process has reaped: the count of /proc/self/io, which adds this
// process's own threads' calls to its reaped children's, less the calls of
// its threads (/proc/self/task/*/io). Its own writes, a log line or a
// test's output on another goroutine, would otherwise be charged to the
// child measured. The threads are read before and after the process, until
// no write fell between.
func childWriteCalls() (int64, error) {
	for {
		own, err := threadWriteCalls()
		if err != nil {
			return 0, err
		}
		all, err := syscw("/proc/self/io")
		if err != nil {
			return 0, err
		}
		again, err := threadWriteCalls()
		if err != nil {
			return 0, err
		}
		if again == own {
			return all - own, nil
		}
	}
}

// threadWriteCalls returns the write system calls of this process's
// threads. A thread that exits while it is read is left out.
func threadWriteCalls() (int64, error) {
	files, err := filepath.Glob("/proc/self/task/*/io")
	if err != nil {
		return 0, err
	}
	var n int64
	for _, f := range files {
		if calls, err := syscw(f); err == nil {
			n += calls
		}
	}
	return n, nil
}

// syscw returns the write system calls that an io file of /proc counts.
func syscw(path string) (int64, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no syscw", path)
}

// straceCalls are the system calls the -strace runs count.
const straceCalls = "write,pwrite64,writev,lseek,ftruncate,fallocate"

// traceCalls runs argv once under strace -f -c and returns the number of
// calls of each traced system call, by name. Cancelling ctx kills strace
// and argv.
func traceCalls(ctx context.Context, argv, env []string, dir string) (map[string]int64, error) {
	log := filepath.Join(dir, "strace.txt")
	cmd := exec.CommandContext(ctx, "strace", append([]string{"-f", "-c", "-o", log, "-e", "trace=" + straceCalls}, argv...)...)
	cli.KillGroupOnCancel(cmd)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("strace: %v: %s", err, lastLine(stderr.Bytes()))
	}
	text, err := os.ReadFile(log)
	if err != nil {
		return nil, err
	}
	return parseStrace(text), nil
}

// parseStrace reads the summary strace -c prints: one line per system
// call, "% time, seconds, usecs/call, calls, [errors,] syscall".
func parseStrace(text []byte) map[string]int64 {
	counts := map[string]int64{}
	for line := range strings.SplitSeq(string(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if n, err := strconv.ParseInt(f[3], 10, 64); err == nil && f[len(f)-1] != "total" {
			counts[f[len(f)-1]] = n
		}
	}
	return counts
}
