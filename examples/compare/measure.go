//go:build linux

package main

import (
	"bytes"
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
// environment, and returns its cost. The output file out must exist after
// the run. Write calls are the child's: what it prints on stdout when
// printsWrites, else the kernel's count of write system calls of the
// child and its descendants, which reaches this process's own I/O
// accounting when the child is reaped.
func measure(argv, env []string, out string, printsWrites bool) (sample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	before, err := writeCalls()
	if err != nil {
		return sample{}, err
	}
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, lastLine(stderr.Bytes()))
	}
	wall := time.Since(start)
	after, err := writeCalls()
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

// writeCalls returns the write system calls (syscw of /proc/self/io) of
// this process and of every child it has reaped.
func writeCalls() (int64, error) {
	text, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/self/io has no syscw")
}

// straceCalls are the system calls the -strace runs count.
const straceCalls = "write,pwrite64,writev,lseek,ftruncate,fallocate"

// traceCalls runs argv once under strace -f -c and returns the number of
// calls of each traced system call, by name.
func traceCalls(argv, env []string, dir string) (map[string]int64, error) {
	log := filepath.Join(dir, "strace.txt")
	cmd := exec.Command("strace", append([]string{"-f", "-c", "-o", log, "-e", "trace=" + straceCalls}, argv...)...)
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
