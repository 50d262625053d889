//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The crash test converts a raw input of random samples, which LZW cannot
// shrink, so that the output is at least as large as the input and takes
// a while to write: 4 planes of 2048 x 2048 uint16, 32 MiB.
const (
	crashPlanes = 4
	crashSize   = 2048
	crashInput  = crashPlanes * crashSize * crashSize * 2
	crashOutput = "out.ome.tif"
)

// crashTemp matches the fallback's temporary names for crashOutput.
var crashTemp = regexp.MustCompile(`^\.` + regexp.QuoteMeta(crashOutput) + `\.[0-9a-f]{16}\.tmp$`)

// TestCrashSafety runs the converter as a child process and stops it at
// random points of its write, once its output has a random size between
// an eighth and a half of the input's. With the output in an unnamed file
// (O_TMPFILE), SIGKILL leaves nothing in the destination's directory and
// SIGTERM neither, with exit status 143. With the fallback forced
// (OMETIFF_NO_TMPFILE=1), SIGKILL leaves the writer's temporary file, and
// the next run removes it; SIGTERM leaves nothing.
func TestCrashSafety(t *testing.T) {
	c := crashTest{bin: buildProgram(t), in: randomRaw(t)}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	c.rng = rand.New(rand.NewPCG(seed, 0))
	t.Run("unnamed", func(t *testing.T) {
		dir := t.TempDir()
		for range 3 {
			c.interrupt(t, dir, false, syscall.SIGKILL)
			assert.Empty(t, entries(t, dir), "SIGKILL")
		}
		for range 2 {
			c.interrupt(t, dir, false, syscall.SIGTERM)
			assert.Empty(t, entries(t, dir), "SIGTERM")
		}
	})
	t.Run("named", func(t *testing.T) {
		dir := t.TempDir()
		for range 2 {
			got := c.interrupt(t, dir, true, syscall.SIGKILL)
			assert.Equal(t, []string{got.temp}, entries(t, dir),
				"the killed run's temporary file, and no earlier one")
		}
		c.interrupt(t, dir, true, syscall.SIGTERM)
		assert.Empty(t, entries(t, dir), "SIGTERM: the earlier run's file and its own removed")
		killed := c.interrupt(t, dir, true, syscall.SIGKILL)
		require.Equal(t, []string{killed.temp}, entries(t, dir))
		next := c.run(t, dir, true, 0, 0)
		require.Equal(t, 0, next.code, next.stderr)
		assert.Equal(t, []string{crashOutput}, entries(t, dir), "the next run removed the dead one's file")
		requireWhole(t, dir)
		// A next run that refuses the output, which exists, removes it too.
		killed = c.interrupt(t, dir, true, syscall.SIGKILL)
		require.Equal(t, []string{killed.temp}, entries(t, dir))
		require.NoError(t, os.WriteFile(filepath.Join(dir, crashOutput), []byte("kept"), 0o644))
		refused := c.run(t, dir, true, 0, 0)
		require.Equal(t, 1, refused.code, refused.stderr)
		assert.Contains(t, refused.stderr, "exists (use -force to replace it)")
		assert.Equal(t, []string{crashOutput}, entries(t, dir), "the refusing run removed the dead one's file")
	})
}

// requireWhole checks that dir holds the converter's whole output (at
// least as large as the input, since LZW cannot shrink random samples)
// and removes it.
func requireWhole(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, crashOutput))
	require.NoError(t, err)
	require.GreaterOrEqual(t, fi.Size(), int64(crashInput))
	require.NoError(t, os.Remove(filepath.Join(dir, crashOutput)))
}

// crashTest is what the runs of TestCrashSafety share.
type crashTest struct {
	bin, in string // the converter and its raw input
	rng     *rand.Rand
}

// outcome is how a run of the converter ended.
type outcome struct {
	code   int            // exit status; -1 when killed by a signal
	signal syscall.Signal // that killed it
	stderr string
	temp   string // the base name of its file, when it had one
}

// interrupt runs the converter until it is stopped by sig in the middle of
// writing to dir, and checks how it ended. A run that committed its output
// before the signal came (the machine descheduled the test at the wrong
// moment) must have written the whole of it; it is removed and the run
// tried again.
func (c *crashTest) interrupt(t *testing.T, dir string, named bool, sig syscall.Signal) outcome {
	t.Helper()
	for range 5 {
		target := crashInput/8 + c.rng.Int64N(crashInput*3/8)
		got := c.run(t, dir, named, sig, target)
		if slices.Contains(entries(t, dir), crashOutput) {
			requireWhole(t, dir)
			t.Logf("the run finished before %v at %d bytes: code %d, %s", sig, target, got.code, got.stderr)
			continue
		}
		require.NotEqual(t, 0, got.code, "exit 0 without the output")
		switch sig {
		case syscall.SIGKILL:
			assert.Equal(t, syscall.SIGKILL, got.signal, "code %d, %s", got.code, got.stderr)
		case syscall.SIGTERM:
			assert.Equal(t, 143, got.code, got.stderr)
			assert.Equal(t, "ometiff convert: stopped by SIGTERM\n", got.stderr)
		}
		return got
	}
	t.Fatalf("no run could be stopped by %v before it finished", sig)
	return outcome{}
}

// run runs the converter from the raw input to dir/crashOutput, with the
// fallback forced when named. With sig, it sends sig once the output has
// target bytes, and checks that the output was the kind of file asked for.
func (c *crashTest) run(t *testing.T, dir string, named bool, sig syscall.Signal, target int64) outcome {
	t.Helper()
	cmd := exec.Command(c.bin, "convert", "-raw-width", fmt.Sprint(crashSize), "-raw-height", fmt.Sprint(crashSize),
		"-raw-type", "uint16", "-raw-z", fmt.Sprint(crashPlanes), c.in, filepath.Join(dir, crashOutput))
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "OMETIFF_NO_TMPFILE=") })
	if named {
		cmd.Env = append(cmd.Env, "OMETIFF_NO_TMPFILE=1")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	before := entries(t, dir) // a dead run's files, which this one's cleanup opens to remove
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var got outcome
	var err error
	if sig == 0 {
		err = <-done
	} else {
		got.temp, err = c.stopAt(t, cmd.Process, done, dir, before, named, sig, target)
	}
	got.stderr = stderr.String()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		status := exit.Sys().(syscall.WaitStatus)
		got.code = status.ExitStatus()
		if status.Signaled() {
			got.signal = status.Signal()
		}
	default:
		t.Fatal(err)
	}
	return got
}

// stopAt watches the output file of the running child p through
// /proc/PID/fd and sends it sig once the file has target bytes, then
// waits for it. It returns the base name of the file if it has one, and
// the child's Wait error.
func (c *crashTest) stopAt(t *testing.T, p *os.Process, done chan error, dir string, before []string, named bool, sig syscall.Signal, target int64) (string, error) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", p.Pid)
	var output, name string // its /proc entry and base name
	for {
		select {
		case err := <-done:
			return name, err
		default:
		}
		if output == "" {
			output, name = findOutput(fds, dir, before)
		}
		if output != "" {
			if fi, err := os.Stat(output); err == nil && fi.Size() >= target {
				break
			}
		}
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, p.Signal(sig))
	err := <-done
	if named {
		assert.Regexp(t, crashTemp, name, "the fallback writes under a temporary name")
	} else {
		assert.Equal(t, "", name, "the output has no name")
	}
	return name, err
}

// findOutput returns the /proc entry of the file in dir that the process
// whose descriptors are listed in fds has open, and the file's base name,
// or "" for an unnamed file; or "", "" before it opens one. The files
// named in before were there when the process started: a dead writer's,
// which its cleanup opens before it removes them.
func findOutput(fds, dir string, before []string) (entry, name string) {
	entries, err := os.ReadDir(fds)
	if err != nil {
		return "", ""
	}
	for _, e := range entries {
		path := filepath.Join(fds, e.Name())
		link, err := os.Readlink(path)
		if err != nil || !strings.HasPrefix(link, dir+"/") {
			continue
		}
		base := strings.TrimPrefix(link, dir+"/")
		if slices.Contains(before, base) {
			continue
		}
		if strings.HasSuffix(base, " (deleted)") {
			if strings.HasPrefix(base, "#") {
				return path, "" // how Linux shows an O_TMPFILE file
			}
			// A dead writer's temporary file that Create's cleanup has
			// removed and not yet closed: not the output.
			continue
		}
		return path, base
	}
	return "", ""
}

// randomRaw writes the crash test's raw input, random samples, into a
// directory of its own.
func randomRaw(t *testing.T) string {
	t.Helper()
	data := make([]byte, crashInput)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(data)
	path := filepath.Join(t.TempDir(), "in.raw")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := []string{}
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

// TestOutputWriteFails: an output the system refuses to grow (here a file
// size limit; a full disk alike) is reported alone, not as a failure of
// the input's plane being written, and leaves nothing behind.
func TestOutputWriteFails(t *testing.T) {
	bin := buildProgram(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.tif")
	writeTIFF(t, in, page{width: 2048, height: 2048, samples: 1, bits: 16, photometric: 1}) // 8 MiB, past the output's buffer
	out := filepath.Join(dir, "out", "x.ome.tif")
	require.NoError(t, os.Mkdir(filepath.Dir(out), 0o755))
	for _, named := range []string{"0", "1"} { // an unnamed file, and the named fallback's
		cmd := exec.Command("sh", "-c", `ulimit -f 2048 && exec "$0" convert -compression none "$1" "$2"`, bin, in, out) // 1 or 2 MiB
		cmd.Env = append(os.Environ(), "OMETIFF_NO_TMPFILE="+named)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v", err)
		assert.Equal(t, 1, exit.ExitCode())
		assert.Equal(t, fmt.Sprintf("ometiff convert: iohandle: write %s: file too large (the process's file-size limit, ulimit -f, or the file system's)\n", out), stderr.String())
		assert.Empty(t, entries(t, filepath.Dir(out)), "OMETIFF_NO_TMPFILE=%s", named)
	}
}
