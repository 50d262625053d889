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
// grace time has passed; by the signal itself, or, where the signal was
// ignored when the program started (a job started with & by a script),
// with 128 plus its number.
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
		name     string
		sig      syscall.Signal
		twice    bool
		ignored  bool   // the signal ignored when the program starts
		grace    string // the child's graceTime
		signaled bool   // killed by sig, else exited with 128 + sig
		stderr   string
	}{
		{"second SIGTERM", syscall.SIGTERM, true, false, "1h", true, ""},
		{"SIGTERM, not stopped in time", syscall.SIGTERM, false, false, "200ms", true, "prog: stopped by SIGTERM, and not stopped 200ms after it: ended\n"},
		{"second SIGHUP", syscall.SIGHUP, true, false, "1h", true, ""},
		{"second SIGINT, ignored at start", syscall.SIGINT, true, true, "1h", false, ""},
		{"SIGINT ignored at start, not stopped in time", syscall.SIGINT, false, true, "200ms", false, "prog: stopped by SIGINT, and not stopped 200ms after it: ended\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{os.Args[0], "-test.run=^TestStuckWorkEnds$", "-test.count=1"}
			if tt.ignored { // sh's trap "" makes the signal ignored in what it runs
				args = append([]string{"sh", "-c", `trap "" INT; exec "$@"`, "sh"}, args...)
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
			if tt.signaled {
				assert.True(t, status.Signaled(), "killed by the signal: %v", err)
				assert.Equal(t, tt.sig, status.Signal())
			} else {
				assert.Equal(t, 128+int(tt.sig), status.ExitStatus(), "%v", err)
			}
			assert.Equal(t, tt.stderr, stderr.String())
		})
	}
}
