//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChildWriteCalls checks that the write calls of a reaped child are
// counted and this process's own are not.
func TestChildWriteCalls(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "own"))
	require.NoError(t, err)
	defer f.Close()
	before, err := childWriteCalls()
	require.NoError(t, err)
	for range 5 {
		_, err := f.Write([]byte("own"))
		require.NoError(t, err)
	}
	mid, err := childWriteCalls()
	require.NoError(t, err)
	assert.Equal(t, before, mid, "this process's writes")

	require.NoError(t, exec.Command("sh", "-c", "echo a > /dev/null; echo b > /dev/null; echo c > /dev/null").Run())
	after, err := childWriteCalls()
	require.NoError(t, err)
	assert.Equal(t, int64(3), after-mid, "the child's three echoes")
}

// TestCancelKillsTheRun cancels a measured run and a traced one: each
// returns at once, and the program it ran (under strace for the second)
// is gone, not left running on its own.
func TestCancelKillsTheRun(t *testing.T) {
	for _, traced := range []bool{false, true} {
		t.Run(fmt.Sprintf("traced=%v", traced), func(t *testing.T) {
			if traced {
				if _, err := exec.LookPath("strace"); err != nil {
					t.Skip("strace is not installed")
				}
			}
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			argv := []string{"sh", "-c", `echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 60`, pidFile}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				var err error
				if traced {
					_, err = traceCalls(ctx, argv, nil, dir)
				} else {
					_, err = measure(ctx, argv, nil, pidFile, false)
				}
				done <- err
			}()
			var pid int
			require.Eventually(t, func() bool {
				text, err := os.ReadFile(pidFile)
				if err != nil {
					return false
				}
				pid, err = strconv.Atoi(strings.TrimSpace(string(text)))
				return err == nil
			}, time.Minute, 10*time.Millisecond, "the program never started")
			cancel()
			select {
			case err := <-done:
				require.Error(t, err)
			case <-time.After(30 * time.Second): // the program sleeps for 60
				t.Fatal("still running after the cancellation")
			}
			assert.Eventually(t, func() bool {
				state, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
				// Gone, or a zombie waiting for a parent to reap it.
				return err != nil || strings.Contains(string(state), ") Z ")
			}, time.Minute, 10*time.Millisecond, "process %d survived", pid)
		})
	}
}

// TestMeasureOwnPeakMemory checks that a measured program's peak memory is
// its own, not this process's: Linux keeps the peak of the memory a child
// runs in before it execs, which for Go's vfork is this process's, in the
// child's ru_maxrss. With this process past 256 MiB, /bin/true and a dd of
// 64 KiB must stay under 32 MiB, and dd's one write is counted once.
func TestMeasureOwnPeakMemory(t *testing.T) {
	if _, err := os.Stat(launcher); err != nil {
		t.Skip("GNU time is not installed (.ci/run installs it): the peak memory is this process's")
	}
	ballast := make([]byte, 256<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists")
	require.NoError(t, os.WriteFile(exists, nil, 0o644))
	for _, tc := range []struct {
		name   string
		argv   []string
		out    string
		writes int64
	}{
		{"true", []string{"/bin/true"}, exists, 0},
		{"dd", []string{"dd", "if=/dev/zero", "of=" + filepath.Join(dir, "dd.out"), "bs=64k", "count=1", "status=none"}, filepath.Join(dir, "dd.out"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := measure(context.Background(), tc.argv, nil, tc.out, false)
			require.NoError(t, err)
			assert.Positive(t, s.rss)
			assert.Less(t, s.rss, int64(32<<20), "peak RSS %d MiB", s.rss>>20)
			assert.Equal(t, tc.writes, s.writes, "write calls")
		})
	}
	runtime.KeepAlive(ballast)
}
