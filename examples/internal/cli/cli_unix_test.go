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

// secondSignalChild makes the test binary, re-run by TestSecondSignalKills,
// run work that ignores its cancellation.
const secondSignalChild = "CLI_SECOND_SIGNAL_CHILD"

// TestSecondSignalKills: after the first SIGTERM has cancelled the work, a
// second one kills a program whose work does not stop.
func TestSecondSignalKills(t *testing.T) {
	if os.Getenv(secondSignalChild) != "" {
		Run("prog", os.Stderr, func(ctx context.Context) error {
			fmt.Println("working")
			<-ctx.Done()
			fmt.Println("cancelled")
			select {} // stuck
		})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignalKills$", "-test.count=1")
	cmd.Env = append(os.Environ(), secondSignalChild+"=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan())
	require.Equal(t, "working", lines.Text())
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.True(t, lines.Scan())
	require.Equal(t, "cancelled", lines.Text())
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("the second SIGTERM did not kill the program")
	}
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	status := exit.Sys().(syscall.WaitStatus)
	assert.True(t, status.Signaled(), "killed by the signal: %v", err)
	assert.Equal(t, syscall.SIGTERM, status.Signal())
}
