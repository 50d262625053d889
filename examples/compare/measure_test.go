//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
