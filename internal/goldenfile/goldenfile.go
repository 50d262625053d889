// Package goldenfile compares files the tests write with the golden copies
// committed in testdata/, each with a human-readable text dump beside it
// (the same name plus ".txt"). Run the tests with -update to rewrite them.
package goldenfile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Check compares data with the golden file at path byte for byte, and text
// with its dump line for line; with -update it first rewrites both. It
// returns the golden bytes.
func Check(t *testing.T, path string, data []byte, text string) []byte {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, data, 0o644))
		require.NoError(t, os.WriteFile(path+".txt", []byte(text), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create")
	wantText, err := os.ReadFile(path + ".txt")
	require.NoError(t, err)
	assert.Equal(t, string(wantText), text)
	assert.True(t, bytes.Equal(want, data), "%s differs from the golden file", path)
	return want
}
