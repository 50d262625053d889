// Package clitest helps test the example programs: it runs a program
// in-process and checks what it printed, what it left behind and the files
// it wrote.
package clitest

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/pyramid"
)

// A Program is the run function of an example program: it runs the
// program with args and returns the exit code.
type Program func(args []string, stdout, stderr io.Writer) int

// Run runs the program in-process with args and returns its exit code and
// output.
func Run(run Program, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// AssertUsage checks that the program, run with -h, succeeds and prints
// on stdout only a usage that holds each of wants.
func AssertUsage(t *testing.T, run Program, wants ...string) {
	t.Helper()
	code, stdout, stderr := Run(run, "-h")
	assert.Equal(t, 0, code)
	assert.Empty(t, stderr)
	for _, want := range wants {
		assert.Contains(t, stdout, want)
	}
}

// AssertFails runs the program named name with args in dir, made the
// working directory, and checks that it fails as the programs do: with
// code, nothing on stdout, one line on stderr and no file left in dir.
func AssertFails(t *testing.T, run Program, name, dir string, code int, args ...string) {
	t.Helper()
	AssertFailsSaying(t, run, name, dir, code, "", args...)
}

// AssertFailsSaying is AssertFails that also checks that the error line
// holds msg, when msg is not empty.
func AssertFailsSaying(t *testing.T, run Program, name, dir string, code int, msg string, args ...string) {
	t.Helper()
	t.Chdir(dir)
	gotCode, stdout, stderr := Run(run, args...)
	assert.Equal(t, code, gotCode, stderr)
	assert.Empty(t, stdout)
	AssertErrorLine(t, name, stderr)
	assert.Contains(t, stderr, msg)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "files left behind")
}

// AssertErrorLine checks that stderr is one line prefixed with the name of
// the program, as the programs report a failure.
func AssertErrorLine(t testing.TB, name, stderr string) {
	t.Helper()
	assert.Regexp(t, "^"+regexp.QuoteMeta(name)+": [^\n]+\n$", stderr, "stderr is not one line prefixed with %q", name+": ")
}

// Describe returns pyramid.Inspect's description of the file at path.
func Describe(t testing.TB, path string, opts pyramid.InspectOptions) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, pyramid.Inspect(&out, bytes.NewReader(data), int64(len(data)), opts))
	return out.String()
}

// Planes returns the decoded full-resolution planes of the file at path,
// the directories of its main chain.
func Planes(t testing.TB, path string) []*readback.Image {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := readback.Parse(data)
	require.NoError(t, err)
	planes := make([]*readback.Image, len(f.IFDs))
	for i, d := range f.IFDs {
		planes[i], err = f.Image(d)
		require.NoError(t, err)
	}
	return planes
}

// CheckTiffinfo checks, in a subtest, that libtiff's tiffinfo reads the
// file at path without a word on stderr, when it is installed.
func CheckTiffinfo(t *testing.T, path string) {
	t.Run("tiffinfo", func(t *testing.T) {
		interop.Need(t, "tiffinfo")
		interop.MustRun(t, "tiffinfo", path)
	})
}
