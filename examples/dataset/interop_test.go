package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/tiff"
)

// TestInteropDatasetStack writes the whole stack workload (84 series x 90
// z x 2 channels of 128 x 128 uint16) as 8 files by 8 processes at once,
// with Deflate, which tifffile decodes without imagecodecs (it has no LZW
// decoder here). tifffile opens the whole set from each of the 8 files:
// all 84 series, every plane there, with the pixels of the same stack
// written by one process into one file. The files written again by the
// processes one after the other, last first, are the same bytes. In the
// companion layout, the check finds the set complete, xmllint validates
// the companion, and every plane of every TIFF, at every level, is the
// single file's plane, tile for tile.
func TestInteropDatasetStack(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	schema := interop.NeedSchema(t)
	dir := t.TempDir()
	plan := func(name string, args ...string) string {
		path := filepath.Join(dir, name+".json")
		mustRun(t, append([]string{"plan", "-o", path, "-name", name, "-compression", "deflate"}, args...)...)
		return path
	}
	single := plan("single", "-files", "1")
	mustRun(t, "write", "-nosync", "-workers", "0", single, "0")
	masters := plan("stack", "-files", "8")
	companion := plan("companion", "-files", "8", "-companion")
	for _, p := range []string{masters, companion} {
		runAll(t, p, "", []int{0, 1, 2, 3, 4, 5, 6, 7}, 8)
	}

	args := []string{filepath.Join(dir, "single.ome.tif")}
	for i := range 8 {
		args = append(args, filepath.Join(dir, fmt.Sprintf("stack_%d.ome.tif", i)))
	}
	out := interop.RunPython(t, interop.TifffileDataset, args...)
	for i := range 8 {
		assert.Contains(t, out, fmt.Sprintf("stack_%d.ome.tif: 84 series, 15120 planes, ", i))
	}
	assert.NotContains(t, out, " 0 across files")

	again := t.TempDir()
	runAll(t, masters, again, []int{7, 6, 5, 4, 3, 2, 1, 0}, 1)
	for i := range 8 {
		name := fmt.Sprintf("stack_%d.ome.tif", i)
		a, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(again, name))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s differs on a second run", name)
	}

	assert.Contains(t, mustRun(t, "check", filepath.Join(dir, "companion.companion.ome")),
		"companion.companion.ome: 84 images, 15120 planes in 8 files, metadata in the companion: complete\n")
	r := interop.Run("xmllint", "--noout", "--nonet", "--schema", schema, filepath.Join(dir, "companion.companion.ome"))
	require.NoError(t, r.Err, r.Stderr)
	assert.Contains(t, r.Stderr, "validates")
	sameTiles(t, dir, companion)
}

// runAll runs the write command for the given files of plan in processes
// of their own, jobs at a time, into dir (the plan's if empty).
func runAll(t *testing.T, plan, dir string, files []int, jobs int) {
	t.Helper()
	for start := 0; start < len(files); start += jobs {
		var cmds []*exec.Cmd
		for _, i := range files[start:min(start+jobs, len(files))] {
			args := []string{"write", "-nosync"}
			if dir != "" {
				args = append(args, "-dir", dir)
			}
			cmd := program(t, append(args, plan, strconv.Itoa(i))...)
			cmd.Stderr = &strings.Builder{}
			require.NoError(t, cmd.Start())
			cmds = append(cmds, cmd)
		}
		for _, cmd := range cmds {
			require.NoError(t, cmd.Wait(), "%v: %s", cmd.Args, cmd.Stderr)
		}
	}
}

// sameTiles checks that every plane of the dataset plan, in the files the
// plan names, has the tiles, at every level, of the plane at the same
// place in single.ome.tif, which holds the same planes in one file.
func sameTiles(t *testing.T, dir, plan string) {
	t.Helper()
	d, err := loadPlan(plan)
	require.NoError(t, err)
	ref, err := tiff.Open(filepath.Join(dir, "single.ome.tif"))
	require.NoError(t, err)
	defer ref.Close()
	at := 0 // the plane's index in the single file
	for i := range d.Files() {
		f, err := tiff.Open(filepath.Join(dir, d.File(i).Name))
		require.NoError(t, err)
		n := 0
		for range d.Planes(i) {
			n++
		}
		require.Len(t, f.Pages, n, d.File(i).Name)
		for p, page := range f.Pages {
			want := ref.Pages[at]
			require.Len(t, page.SubIFDs, len(want.SubIFDs))
			for l, level := range append([]*tiff.Page{page}, page.SubIFDs...) {
				wantLevel := want
				if l > 0 {
					wantLevel = want.SubIFDs[l-1]
				}
				require.Equal(t, wantLevel.NumBlocks(), level.NumBlocks())
				for b := range level.NumBlocks() {
					got, err := level.ReadBlock(nil, b)
					require.NoError(t, err)
					w, err := wantLevel.ReadBlock(nil, b)
					require.NoError(t, err)
					require.True(t, bytes.Equal(w, got), "%s IFD %d level %d tile %d", d.File(i).Name, p, l, b)
				}
			}
			at++
		}
		require.NoError(t, f.Close())
	}
	require.Len(t, ref.Pages, at)
}
