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
	"syscall"
	"time"
)

// A sample is what one run of a writer cost.
type sample struct {
	wall, cpu time.Duration
	rss       int64 // peak resident bytes
	size      int64 // output bytes
	writes    int64 // OS write calls
}

// measure runs argv as a child process, with env added to the
// environment, and returns its cost; cancelling ctx kills it. The output file out must exist after
// the run. Write calls are the child's: what it prints on stdout when
// printsWrites, else the kernel's count of write system calls of the
// child and its descendants, which reaches this process's own I/O
// accounting when the child is reaped (see childWriteCalls).
func measure(ctx context.Context, argv, env []string, out string, printsWrites bool) (sample, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	killGroupOnCancel(cmd)
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
	s := sample{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rss: ru.Maxrss * 1024, writes: after - before}
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
	killGroupOnCancel(cmd)
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

// killGroupOnCancel runs cmd in a process group of its own, which
// cancelling its context kills: cmd and every process it started, such as
// the program strace traces, which outlives a killed strace otherwise.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
