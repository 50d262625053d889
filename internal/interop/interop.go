// Package interop runs the external TIFF readers (libtiff's tools,
// tifffile, libvips, GDAL, xmllint, and Viv's loader under Node.js) from
// tests, so that files the library writes are checked by readers nobody on
// the team wrote.
//
// The checks against external readers are tests named TestInterop...;
// they call Selected first and run only under OMETIFF_INTEROP=1 (`make
// interop`), so `make test` does not repeat them. Every test that uses a
// tool calls Need: without OMETIFF_INTEROP a missing tool skips the test,
// so `go test` passes on a bare machine; with it (as in CI) a missing tool
// fails the test.
package interop

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Required reports whether missing tools must fail tests.
func Required() bool { return os.Getenv("OMETIFF_INTEROP") != "" }

// Selected skips an external-reader check unless OMETIFF_INTEROP is set.
func Selected(t testing.TB) {
	t.Helper()
	if !Required() {
		t.Skip("interop: external-reader check; run it with make interop (OMETIFF_INTEROP=1)")
	}
}

// Need skips the test, or fails it under OMETIFF_INTEROP, unless every
// named tool is available. "tifffile" stands for a Python 3 with the
// tifffile and numpy modules.
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		ok := false
		if tool == "tifffile" {
			ok = Python() != ""
		} else {
			_, err := exec.LookPath(tool)
			ok = err == nil
		}
		if ok {
			continue
		}
		if Required() {
			t.Fatalf("interop: %s is not installed (OMETIFF_INTEROP is set)", tool)
		}
		t.Skipf("interop: %s is not installed", tool)
	}
}

// SchemaPath returns where the OME 2016-06 schema is: OMETIFF_OME_XSD, else
// shared/schema/ome.xsd in a parent of the project's root (CI clones the
// project beside shared/), else where that would be beside the root.
func SchemaPath() string {
	if p := os.Getenv("OMETIFF_OME_XSD"); p != "" {
		return p
	}
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "..", "..") // the project's root
	for range 3 {
		dir = filepath.Dir(dir)
		p := filepath.Join(dir, "shared", "schema", "ome.xsd")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join(filepath.Dir(self), "..", "..", "..", "shared", "schema", "ome.xsd")
}

// NeedSchema skips the test unless xmllint and the OME schema are there,
// or fails it under OMETIFF_INTEROP, like Need, and returns the schema's
// path.
func NeedSchema(t testing.TB) string {
	t.Helper()
	Need(t, "xmllint")
	path := SchemaPath()
	if _, err := os.Stat(path); err != nil {
		msg := "OME schema not found at " + path + " (looked for shared/schema/ome.xsd beside the project; set OMETIFF_OME_XSD)"
		if Required() {
			t.Fatal(msg + "; OMETIFF_INTEROP is set")
		}
		t.Skip(msg)
	}
	return path
}

var python = sync.OnceValue(func() string {
	candidates := []string{os.Getenv("OMETIFF_PYTHON"), "/usr/bin/python3", "python3"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if err := exec.Command(c, "-c", "import tifffile, numpy").Run(); err == nil {
			return c
		}
	}
	return ""
})

// Python returns a Python 3 interpreter that can import tifffile and numpy
// (OMETIFF_PYTHON, then the system's /usr/bin/python3, then python3 on the
// PATH), or "" if there is none.
func Python() string { return python() }

// Result is what a tool printed.
type Result struct {
	Stdout, Stderr string
	Err            error
}

// Run runs a tool and returns what it printed.
func Run(name string, args ...string) Result {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// MustRun runs a tool and fails the test if it fails or writes to stderr.
func MustRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	r := Run(name, args...)
	if r.Err != nil || r.Stderr != "" {
		t.Fatalf("%s %v: %v\nstderr: %s\nstdout: %.2000s", name, args, r.Err, r.Stderr, r.Stdout)
	}
	return r.Stdout
}

// RunPython runs a Python script with tifffile available and returns its
// standard output; a failure or anything on stderr fails the test.
func RunPython(t testing.TB, script string, args ...string) string {
	t.Helper()
	return MustRun(t, Python(), append([]string{"-c", script}, args...)...)
}

// Viv returns the path of viv/read.mjs, the script that reads an OME-TIFF
// with Viv's loader under Node.js, once node and the script's modules are
// there (`npm ci` in that folder, as `make interop` runs it). Otherwise it
// skips the test, or fails it under OMETIFF_INTEROP, like Need.
func Viv(t testing.TB) string {
	t.Helper()
	Need(t, "node")
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "viv")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@vivjs", "loaders")); err != nil {
		if Required() {
			t.Fatalf("interop: Viv's loader is not installed in %s (run npm ci there)", dir)
		}
		t.Skipf("interop: Viv's loader is not installed in %s (npm ci there)", dir)
	}
	return filepath.Join(dir, "read.mjs")
}
