//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// A verifier opens our outputs with readers we did not write: libvips
// (through libtiff) and tifffile's OME-TIFF series parser.
type verifier struct {
	vipsheader     bool
	python, script string // empty without tifffile
}

// newVerifier uses the readers that are installed; the tifffile script is
// the one findWriters wrote to dir.
func newVerifier(writers []writer, python, dir string) verifier {
	var v verifier
	_, err := exec.LookPath("vipsheader")
	v.vipsheader = err == nil
	if slices.ContainsFunc(writers, func(w writer) bool { return w.name == tifffile }) {
		v.python, v.script = python, filepath.Join(dir, "tifffile_peer.py")
	}
	return v
}

// check opens our output of w at path and returns what the readers saw,
// or the first disagreement with the workload.
func (v verifier) check(w workload, path string) (string, error) {
	var seen []string
	if v.vipsheader {
		out, err := output("vipsheader", path)
		if err != nil {
			return "", err
		}
		seen = append(seen, "vipsheader "+strings.TrimPrefix(out, path+": "))
	}
	if v.script != "" {
		out, err := output(v.python, v.script, "describe", path)
		if err != nil {
			return "", fmt.Errorf("tifffile: %w", err)
		}
		var got struct {
			OME            bool
			Series, Levels int
			Shape          []int
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			return "", fmt.Errorf("tifffile: %w", err)
		}
		if !got.OME || got.Series != w.Series || got.Levels != w.levels() {
			return "", fmt.Errorf("tifffile reads OME %t, %d series, %d levels; want OME, %d series, %d levels", got.OME, got.Series, got.Levels, w.Series, w.levels())
		}
		seen = append(seen, fmt.Sprintf("tifffile OME, series %d, levels %d, shape %v", got.Series, got.Levels, got.Shape))
	}
	if len(seen) == 0 {
		return "not verified: neither vipsheader nor tifffile is installed", nil
	}
	return strings.Join(seen, "; "), nil
}

// output runs a reader and returns its stdout. Anything on stderr (a
// warning) or a failed exit is an error.
func output(argv ...string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %v: %s", argv[0], err, lastLine(stderr.Bytes()))
	}
	if stderr.Len() > 0 {
		return "", fmt.Errorf("%s warns: %s", argv[0], lastLine(stderr.Bytes()))
	}
	return strings.TrimSpace(stdout.String()), nil
}
