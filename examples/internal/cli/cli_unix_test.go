//go:build unix

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stopSelf sends sig to this process, as a scheduler or Ctrl-C would.
func stopSelf(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
}

func TestRunStopsOnSignal(t *testing.T) {
	errDisk := errors.New("disk full")
	tests := []struct {
		name   string
		sig    syscall.Signal
		result func(ctx context.Context) error // what the work returns once cancelled
		code   int
		stderr string
	}{
		{"SIGTERM", syscall.SIGTERM, func(ctx context.Context) error { return fmt.Errorf("writing: %w", ctx.Err()) }, 143, "prog: stopped by SIGTERM\n"},
		{"SIGINT", syscall.SIGINT, func(ctx context.Context) error { return ctx.Err() }, 130, "prog: stopped by SIGINT\n"},
		{"SIGHUP", syscall.SIGHUP, func(ctx context.Context) error { return ctx.Err() }, 129, "prog: stopped by SIGHUP\n"},
		{"the cause", syscall.SIGTERM, func(ctx context.Context) error { return fmt.Errorf("writing: %w", context.Cause(ctx)) }, 143, "prog: stopped by SIGTERM\n"},
		{"another error", syscall.SIGTERM, func(context.Context) error { return errDisk }, 143, "prog: stopped by SIGTERM: disk full\n"},
		{"done anyway", syscall.SIGTERM, func(context.Context) error { return nil }, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			code := Run("prog", &stderr, func(ctx context.Context) error {
				stopSelf(t, tt.sig)
				<-ctx.Done()
				return tt.result(ctx)
			})
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.stderr, stderr.String())
		})
	}
}

// TestRunLeavesNoGoroutine runs Run in a bubble: its signal goroutine ends
// before Run returns, with or without a signal.
func TestRunLeavesNoGoroutine(t *testing.T) {
	// The first signal.Notify of a process starts the signal package's own
	// goroutine, which lives as long as the process: not in the bubble.
	Run("prog", io.Discard, func(context.Context) error { return nil })
	synctest.Test(t, func(t *testing.T) {
		assert.Equal(t, 0, Run("prog", io.Discard, func(context.Context) error { return nil }))
	})
}

// stuckChild makes the test binary, re-run by TestStuckWorkEnds, run
// work that ignores its cancellation, with the grace time the variable's
// value gives.
const stuckChild = "CLI_STUCK_CHILD"

// TestStuckWorkEnds: after the first signal has cancelled the work, a
// program whose work does not stop ends at a second signal, or when the
// grace time has passed, by the signal itself. A signal ignored when the
// program started (under nohup, or in a job a script started with &)
// stays ignored: the run goes on until another signal.
func TestStuckWorkEnds(t *testing.T) {
	if grace := os.Getenv(stuckChild); grace != "" {
		graceTime, _ = time.ParseDuration(grace)
		Run("prog", os.Stderr, func(ctx context.Context) error {
			fmt.Println("working")
			<-ctx.Done()
			fmt.Println("cancelled")
			select {} // stuck
		})
		return
	}
	tests := []struct {
		name    string
		ignored syscall.Signal // ignored when the program starts, and sent first (0: none)
		sig     syscall.Signal
		twice   bool
		grace   string // the child's graceTime
		stderr  string
	}{
		{"second SIGTERM", 0, syscall.SIGTERM, true, "1h", ""},
		{"SIGTERM, not stopped in time", 0, syscall.SIGTERM, false, "200ms", "prog: stopped by SIGTERM, and not stopped 200ms after it: ended\n"},
		{"second SIGHUP", 0, syscall.SIGHUP, true, "1h", ""},
		{"second SIGINT", 0, syscall.SIGINT, true, "1h", ""},
		{"SIGINT ignored at start", syscall.SIGINT, syscall.SIGTERM, false, "200ms", "prog: stopped by SIGTERM, and not stopped 200ms after it: ended\n"},
		{"SIGHUP ignored at start (nohup)", syscall.SIGHUP, syscall.SIGTERM, false, "200ms", "prog: stopped by SIGTERM, and not stopped 200ms after it: ended\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{os.Args[0], "-test.run=^TestStuckWorkEnds$", "-test.count=1"}
			if tt.ignored != 0 { // sh's trap "" makes the signal ignored in what it runs
				name := map[syscall.Signal]string{syscall.SIGINT: "INT", syscall.SIGHUP: "HUP"}[tt.ignored]
				args = append([]string{"sh", "-c", `trap "" ` + name + `; exec "$@"`, "sh"}, args...)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), stuckChild+"="+tt.grace)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			lines := bufio.NewScanner(stdout)
			require.True(t, lines.Scan())
			require.Equal(t, "working", lines.Text())
			if tt.ignored != 0 {
				require.NoError(t, cmd.Process.Signal(tt.ignored))
				time.Sleep(200 * time.Millisecond) // time to act on it, were it caught
			}
			require.NoError(t, cmd.Process.Signal(tt.sig))
			require.True(t, lines.Scan())
			require.Equal(t, "cancelled", lines.Text())
			if tt.twice {
				require.NoError(t, cmd.Process.Signal(tt.sig))
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				<-done
				t.Fatal("the program did not end")
			}
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit)
			status := exit.Sys().(syscall.WaitStatus)
			assert.True(t, status.Signaled(), "killed by the signal: %v", err)
			assert.Equal(t, tt.sig, status.Signal())
			assert.Equal(t, tt.stderr, stderr.String())
		})
	}
}
