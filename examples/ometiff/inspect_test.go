package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/internal/ndpitest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/pyramid/source"
	"github.com/ometiff-go/ometiff/tiff"
)

// writeOMETIFF writes a small OME-TIFF of two series to dir and returns
// its path.
func writeOMETIFF(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "two.ome.tif")
	w, err := pyramid.Create(path, pyramid.Options{TileSize: 64})
	require.NoError(t, err)
	specs := []pyramid.ImageSpec{
		{Name: "cells", SizeX: 100, SizeY: 80, SizeC: 2, PixelType: pyramid.Uint16,
			Channels: []pyramid.Channel{{Name: "DAPI"}, {Name: "FITC"}}},
		{Name: "overview", SizeX: 40, SizeY: 30, PixelType: pyramid.Uint8, SamplesPerPixel: 3},
	}
	for _, spec := range specs {
		im, err := w.AddImage(spec)
		require.NoError(t, err)
		for c := range max(spec.SizeC, 1) {
			require.NoError(t, im.WritePlane(0, c, 0, make([]byte, im.PlaneBytes())))
		}
	}
	require.NoError(t, w.Close())
	return path
}

func TestInspectDescribesFiles(t *testing.T) {
	dir := t.TempDir()
	path := writeOMETIFF(t, dir)
	summary := clitest.Describe(t, path, pyramid.InspectOptions{})
	fields := clitest.Describe(t, path, pyramid.InspectOptions{Fields: true})
	require.Contains(t, summary, `"overview": 40 x 30`)
	require.Contains(t, fields, "TileByteCounts")

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"summary", []string{path}, summary},
		{"fields", []string{"-fields", path}, fields},
		{"two files", []string{path, path}, "==> " + path + " <==\n" + summary + "\n==> " + path + " <==\n" + summary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := clitest.Run(runInspect, tt.args...)
			assert.Equal(t, 0, code)
			assert.Empty(t, stderr)
			assert.Equal(t, tt.want, stdout)
		})
	}
}

func TestInspectRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeOMETIFF(t, dir)
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("not a TIFF at all"), 0o644))
	truncated := filepath.Join(dir, "truncated.tif")
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(truncated, data[:len(data)-100], 0o644))
	missing := filepath.Join(dir, "missing.tif")

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // in stderr
	}{
		{"no file", nil, 2, "no file given"},
		{"unknown flag", []string{"-all", good}, 2, "flag provided but not defined: -all"},
		{"missing file", []string{missing}, 1, "no such file or directory"},
		{"not a TIFF", []string{text}, 1, text + ": pyramid: "},
		{"truncated", []string{truncated}, 1, truncated + ": pyramid: "},
		{"directory", []string{dir}, 1, "not a regular file"},
		{"one bad among good ones", []string{good, missing, good}, 1, "missing.tif"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := clitest.Run(runInspect, tt.args...)
			assert.Equal(t, tt.code, code)
			clitest.AssertErrorLine(t, inspectName, stderr)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}

func TestInspectPrintsUsage(t *testing.T) {
	clitest.AssertUsage(t, runInspect, "usage: ometiff inspect [-fields] file...")
}

// TestPagesOfManyFiles: the pages of an image in a dataset of many files
// are said in a line: the first files and the last.
func TestPagesOfManyFiles(t *testing.T) {
	index := map[*tiff.Page]pageAt{}
	im := &source.Image{}
	for i := range 10 {
		p := &tiff.Page{}
		index[p] = pageAt{fmt.Sprintf("f%d.tif", i), 0}
		im.Planes = append(im.Planes, source.Plane{Page: p, Sample: -1})
	}
	assert.Equal(t, "page 0 of f0.tif; page 0 of f1.tif; page 0 of f2.tif; page 0 of f3.tif; ... (2 more files); "+
		"page 0 of f6.tif; page 0 of f7.tif; page 0 of f8.tif; page 0 of f9.tif", pagesOf(index, im))
	im.Planes = im.Planes[:8]
	assert.NotContains(t, pagesOf(index, im), "more files")
}

// TestPagesOfEmbedded: an image read from no page of the file's (a
// Philips label held in its XML, read from a TIFF made in memory) is said
// to be so, not to be stored after the file's data.
func TestPagesOfEmbedded(t *testing.T) {
	read := func() *tiff.File {
		data, err := ndpitest.File(ndpitest.Page{Width: 16, Height: 16, RGB: ndpitest.Pattern(16, 16, 0), Magnification: 20})
		require.NoError(t, err)
		f, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		return f
	}
	file, memory := read(), read()
	index := map[*tiff.Page]pageAt{file.Pages[0]: {"", 0}}
	im := &source.Image{Planes: []source.Plane{{Page: memory.Pages[0], Sample: -1}}}
	assert.Equal(t, "not a page: an image the file's metadata holds", pagesOf(index, im))
	im.Planes = append(im.Planes, source.Plane{Page: file.Pages[0], Sample: -1})
	assert.Equal(t, "page 0, not a page: an image the file's metadata holds", pagesOf(index, im))
}

// TestStandardInputNamed: - given to info or inspect is said to be no
// file, as convert says it, not "no such file".
func TestStandardInputNamed(t *testing.T) {
	for _, cmd := range []string{"info", "inspect"} {
		code, _, stderr := clitest.Run(run, cmd, "-")
		assert.Equal(t, 1, code, cmd)
		assert.Contains(t, stderr, "-: standard input is not read as such", cmd)
	}
}
