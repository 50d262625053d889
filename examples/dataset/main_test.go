package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/examples/internal/stackpool"
	"github.com/ometiff-go/ometiff/internal/readback"
)

// pauseEnv, in the environment of the program run by the tests, makes a
// part stop after that many planes, say "paused" on stderr, and wait for
// a SIGTERM (or a SIGKILL), so that a test can signal it in the middle of
// its file.
const pauseEnv = "OMETIFF_DATASET_PAUSE"

// TestMain runs the program instead of the tests when programEnv is set:
// the tests and compare start the test binary as the program's processes.
func TestMain(m *testing.M) {
	if os.Getenv(programEnv) != "" {
		if n, _ := strconv.Atoi(os.Getenv(pauseEnv)); n > 0 {
			afterPlane = func(k int) {
				if k == n {
					term := make(chan os.Signal, 1)
					signal.Notify(term, syscall.SIGTERM)
					fmt.Fprintln(os.Stderr, "paused")
					<-term
					time.Sleep(time.Second) // for the program's handler to cancel its work too
				}
			}
		}
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// program returns the command that runs the program with args in a
// process of its own.
func program(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), programEnv+"=1")
	return cmd
}

// mustRun runs the program in-process and fails the test unless it
// succeeds; it returns what it printed.
func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	code, stdout, stderr := clitest.Run(run, args...)
	require.Equal(t, 0, code, "dataset %v: %s", args, stderr)
	assert.Empty(t, stderr)
	return stdout
}

// smallPlan writes a small stack's plan in a new directory and returns
// the plan's path.
func smallPlan(t testing.TB, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stack", "plan.json") // plan makes the directory
	mustRun(t, append([]string{"plan", "-o", path, "-series", "6", "-z", "3", "-channels", "2", "-size", "64", "-files", "4"}, args...)...)
	return path
}

func TestUsage(t *testing.T) {
	code, stdout, stderr := clitest.Run(run)
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "usage: dataset COMMAND")
	assert.Contains(t, stderr, "dataset: no command\n")
	clitest.AssertUsage(t, run, "plan [flags]", "$SLURM_ARRAY_TASK_ID")
	for _, command := range []string{"plan", "write", "check", "compare"} {
		code, stdout, _ := clitest.Run(run, command, "-h")
		assert.Equal(t, 0, code, command)
		assert.Contains(t, stdout, "usage: dataset "+command, command)
	}
	code, _, stderr = clitest.Run(run, "merge")
	assert.Equal(t, 2, code)
	clitest.AssertErrorLine(t, "dataset", stderr)
}

// TestPlanWriteCheck: the plan, each file written by its index (given, or
// from Slurm's or Kubernetes's variable), and the check; the planes are
// examples/stack's.
func TestPlanWriteCheck(t *testing.T) {
	plan := smallPlan(t)
	dir := filepath.Dir(plan)
	out := mustRun(t, "write", plan, "0")
	assert.Regexp(t, `^wrote stack_0.ome.tif: 9 planes of images 0 to 1, [0-9.]+ MB in [0-9.]+ s \([0-9.]+ MB/s raw\)\n$`, out)
	mustRun(t, "write", "-workers", "2", plan, "1")
	t.Setenv("SLURM_ARRAY_TASK_ID", "2")
	assert.Contains(t, mustRun(t, "write", plan), "wrote stack_2.ome.tif: 9 planes of images 3 to 4")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	t.Setenv("JOB_COMPLETION_INDEX", "3")
	assert.Contains(t, mustRun(t, "write", plan), "wrote stack_3.ome.tif: 9 planes of images 4 to 5")

	out = mustRun(t, "check", plan, dir)
	assert.Contains(t, out, "\n"+plan+": 6 images, 36 planes in 4 files, every file a master: complete\n", "the metadata is the plan's")
	assert.Regexp(t, `stack_2.ome.tif urn:uuid:[0-9a-f-]{36}: 9 planes, 9 IFDs\n`, out)
	assert.Contains(t, mustRun(t, "check", filepath.Join(dir, "stack_3.ome.tif")), "stack_3.ome.tif: 6 images, 36 planes in 4 files, every file a master: complete\n")

	// The plan alone is not a file of the dataset.
	code, stdout, stderr := clitest.Run(run, "check", plan)
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, plan+" is a plan: give the dataset's directory after it (check PLAN DIR)")

	// A file whose companion is missing: the problem alone, no summary of
	// metadata never read.
	withCompanion := smallPlan(t, "-companion")
	mustRun(t, "write", withCompanion, "0")
	require.NoError(t, os.Remove(filepath.Join(filepath.Dir(withCompanion), "stack.companion.ome")))
	code, stdout, stderr = clitest.Run(run, "check", filepath.Join(filepath.Dir(withCompanion), "stack_0.ome.tif"))
	assert.Equal(t, 1, code)
	assert.Equal(t, "stack.companion.ome: missing\n", stdout)
	assert.Contains(t, stderr, "incomplete: 1 problem\n")

	pool := stackpool.New(64, 36)
	i := 0
	for k := range 4 {
		for _, plane := range clitest.Planes(t, filepath.Join(dir, fmt.Sprintf("stack_%d.ome.tif", k))) {
			require.True(t, bytes.Equal(pool[i], plane.Pix), "plane %d of the dataset is not the stack's", i)
			i++
		}
	}
}

// TestProcessesInAnyOrder: the files written by processes at once, in any
// order, are those written one after the other in the test's process.
func TestProcessesInAnyOrder(t *testing.T) {
	for _, layout := range [][]string{nil, {"-companion"}} {
		plan := smallPlan(t, layout...)
		mustRun(t, "write", "-nosync", "-workers", "0", plan, "0")
		for i := 1; i < 4; i++ {
			mustRun(t, "write", "-nosync", plan, strconv.Itoa(i))
		}
		want := readDir(t, filepath.Dir(plan))
		other := t.TempDir()
		var cmds []*exec.Cmd
		for i := 3; i >= 0; i-- {
			cmd := program(t, "write", "-dir", other, plan, strconv.Itoa(i))
			require.NoError(t, cmd.Start())
			cmds = append(cmds, cmd)
		}
		for _, cmd := range cmds {
			require.NoError(t, cmd.Wait())
		}
		got := readDir(t, other)
		delete(want, "plan.json")
		require.Len(t, got, len(want), "%v", layout)
		for name, data := range want {
			assert.True(t, bytes.Equal(data, got[name]), "%v: %s differs", layout, name)
		}
	}
}

// readDir reads every file of dir.
func readDir(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files, err := readback.Dir(dir)
	require.NoError(t, err)
	return files
}

// TestKilledPart: a part killed in the middle of its file (SIGKILL), or
// stopped (SIGTERM, as a batch system's time limit), leaves no file; the
// check names it, the other files are untouched, and the part run again
// completes the set.
func TestKilledPart(t *testing.T) {
	for _, tt := range []struct {
		signal   syscall.Signal
		layout   []string
		code     int
		checkArg func(plan string) []string
	}{
		{syscall.SIGKILL, nil, -1, func(plan string) []string { return []string{filepath.Join(filepath.Dir(plan), "stack_0.ome.tif")} }},
		{syscall.SIGTERM, []string{"-companion"}, 143, func(plan string) []string { return []string{plan, filepath.Dir(plan)} }},
	} {
		t.Run(tt.signal.String(), func(t *testing.T) {
			plan := smallPlan(t, tt.layout...)
			dir := filepath.Dir(plan)
			for _, i := range []string{"0", "1", "2"} {
				mustRun(t, "write", plan, i)
			}
			before := readDir(t, dir)

			cmd := program(t, "write", plan, "3")
			cmd.Env = append(cmd.Env, pauseEnv+"=4")
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(stderr).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "paused\n", line, "the part stopped after 4 of its 9 planes")
			require.NoError(t, cmd.Process.Signal(tt.signal))
			rest, _ := io.ReadAll(stderr)
			err = cmd.Wait()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit)
			assert.Equal(t, tt.code, exit.ExitCode())
			if tt.signal == syscall.SIGTERM {
				assert.Equal(t, "dataset: stopped by SIGTERM\n", string(rest))
			}

			assert.Equal(t, before, readDir(t, dir), "no file of part 3, not even a temporary one, and the others untouched")
			code, stdout, errOut := clitest.Run(run, append([]string{"check"}, tt.checkArg(plan)...)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, stdout, "stack_3.ome.tif: missing (9 planes of images 4 to 5)\n")
			if len(tt.checkArg(plan)) == 2 { // the plan's metadata, which lists the file first
				assert.Regexp(t, `stack_3.ome.tif urn:uuid:[0-9a-f-]{36}: 9 planes, not read\n`, stdout)
			}
			clitest.AssertErrorLine(t, "dataset", errOut)
			assert.Contains(t, errOut, "incomplete: 1 problem\n")

			mustRun(t, "write", plan, "3")
			assert.Contains(t, mustRun(t, append([]string{"check"}, tt.checkArg(plan)...)...), ": complete\n")
		})
	}
}

// TestWriteRefuses: a bad command line is a usage error; a file there is
// kept without -replace; a plan the example cannot fill is refused.
func TestWriteRefuses(t *testing.T) {
	plan := smallPlan(t)
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	t.Setenv("JOB_COMPLETION_INDEX", "")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"write", plan}, 2, "no INDEX, and neither $SLURM_ARRAY_TASK_ID nor $JOB_COMPLETION_INDEX is set"},
		{[]string{"write", plan, "4"}, 2, "INDEX 4: the plan has 4 files"},
		{[]string{"write", plan, "-1"}, 2, `INDEX "-1" is not a file index`},
		{[]string{"write"}, 2, "write takes a plan and an index"},
		{[]string{"write", filepath.Join(t.TempDir(), "none.json"), "0"}, 1, "no such file"},
		{[]string{"plan", "-o", filepath.Join(t.TempDir(), "p.json"), "-series", "6", "-z", "3", "-files", "100"}, 2, "Split.Files 100: more files than the 36 planes"},
		{[]string{"plan", "-o", filepath.Join(t.TempDir(), "p.json"), "-z", "0"}, 2, "-z 0: want at least 1"},
		// These ran out of memory (the specs made before their count was
		// bounded; a pool of planes of 20 GB).
		{[]string{"plan", "-o", filepath.Join(t.TempDir(), "p.json"), "-series", "3000000", "-z", "1", "-channels", "1"}, 2,
			"-series 3000000: more images than an OME-XML of 64 MiB"},
		{[]string{"plan", "-o", filepath.Join(t.TempDir(), "p.json"), "-size", "100000"}, 2, "-size 100000: want at most 16384"},
		{[]string{"write", "-workers", "1000", plan, "0"}, 2, "-workers 1000: want 0 (one per CPU) to 256"},
		{[]string{"check"}, 2, "check takes a plan and a directory, or a file"},
	}
	for _, tt := range tests {
		code, stdout, stderr := clitest.Run(run, tt.args...)
		assert.Equal(t, tt.code, code, "%v: %s", tt.args, stderr)
		assert.Empty(t, stdout)
		clitest.AssertErrorLine(t, "dataset", stderr)
		assert.Contains(t, stderr, tt.want, tt.args)
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "x")
	code, _, stderr := clitest.Run(run, "write", plan)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `$SLURM_ARRAY_TASK_ID "x" is not a file index`)
	t.Setenv("SLURM_ARRAY_TASK_ID", "7")
	code, _, stderr = clitest.Run(run, "write", plan)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "$SLURM_ARRAY_TASK_ID 7: the plan has 4 files")

	mustRun(t, "write", plan, "1")
	code, _, stderr = clitest.Run(run, "write", plan, "1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "stack_1.ome.tif exists (use -replace to replace it)")
	mustRun(t, "write", "-replace", plan, "1")

	// A companion file of other content is refused as that, not as the part.
	withCompanion := smallPlan(t, "-companion")
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(withCompanion), "stack.companion.ome"), []byte("other"), 0o644))
	code, _, stderr = clitest.Run(run, "write", withCompanion, "0")
	assert.Equal(t, 1, code)
	assert.NotContains(t, stderr, "stack_0.ome.tif exists")
	assert.Contains(t, stderr, "stack.companion.ome exists and is another plan's companion, or this plan's before it changed (use -replace to replace it, and write every file again)")
	assert.NotContains(t, stderr, "set Replace")

	// A directory in the part's place is said to be one, -replace or not,
	// also beside this plan's companion.
	for _, layout := range [][]string{nil, {"-companion"}} {
		inTheWay := smallPlan(t, layout...)
		if layout != nil {
			mustRun(t, "write", inTheWay, "1") // the companion
		}
		require.NoError(t, os.Mkdir(filepath.Join(filepath.Dir(inTheWay), "stack_0.ome.tif"), 0o755))
		for _, args := range [][]string{{"write", inTheWay, "0"}, {"write", "-replace", inTheWay, "0"}} {
			code, _, stderr = clitest.Run(run, args...)
			assert.Equal(t, 1, code, args)
			assert.Contains(t, stderr, "stack_0.ome.tif is a directory", args)
			assert.NotContains(t, stderr, "replace it", args)
		}
	}

	rgb := filepath.Join(t.TempDir(), "rgb.json")
	require.NoError(t, os.WriteFile(rgb, []byte(`{"Version": 1, "Name": "rgb", "Images": [{"SizeX": 8, "SizeY": 8, "SamplesPerPixel": 3}]}`), 0o644))
	code, _, stderr = clitest.Run(run, "write", rgb, "0")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "image 0 is 8 x 8 x 3 uint8: the example writes planes of one square size of one uint16 sample")
}

// TestCompare: a small comparison runs both writes and prints the ratio.
func TestCompare(t *testing.T) {
	out := mustRun(t, "compare", "-runs", "1", "-series", "2", "-z", "3", "-size", "32", "-files", "3", "-nosync", "-dir", t.TempDir())
	assert.Contains(t, out, "one process, one file, -workers 2: wall median")
	assert.Contains(t, out, "3 files, 2 processes at a time, -workers 1: wall median")
	assert.Regexp(t, `throughput of the split write: [0-9.]+x the single write's \(target 0.95x\); CPU [0-9.]+x\n$`, out)
	assert.False(t, strings.Contains(out, "NaN"))
}

// TestPlanSeed: two plans of the same flags get other UUIDs (a random
// seed, kept in the plan), which readers would take for one dataset's;
// plans given one -seed get the same.
func TestPlanSeed(t *testing.T) {
	uuids := func(args ...string) string {
		plan := filepath.Join(t.TempDir(), "plan.json")
		mustRun(t, append([]string{"plan", "-o", plan, "-series", "2", "-z", "2", "-size", "16", "-files", "2"}, args...)...)
		d, err := loadPlan(plan)
		require.NoError(t, err)
		again, err := loadPlan(plan)
		require.NoError(t, err)
		require.Equal(t, d.UUID(1), again.UUID(1), "the plan keeps its seed")
		return d.UUID(0) + " " + d.UUID(1)
	}
	assert.NotEqual(t, uuids(), uuids())
	assert.Equal(t, uuids("-seed", "plate 7"), uuids("-seed", "plate 7"))
}
