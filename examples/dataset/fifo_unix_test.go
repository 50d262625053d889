//go:build unix

package main

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
)

// TestCheckFIFO: dataset check of a named pipe says it is no regular file
// (it waited for ever, opening it to see whether it was a plan).
func TestCheckFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := clitest.Run(run, "check", fifo)
		done <- result{code, stderr}
	}()
	select {
	case r := <-done:
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "is not a regular file")
	case <-time.After(20 * time.Second):
		t.Fatal("dataset check waited on the pipe")
	}
}
