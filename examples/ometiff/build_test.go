package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildProgram builds this program (ometiff), without the race detector,
// into a temporary directory and returns its path. Tests that run it as a
// subprocess (to measure its memory, or to stop it with a signal) give it
// the command first: bin convert [flags] input output.
func buildProgram(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ometiff")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}
