package pyramid

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/tiff"
)

// interopDatasets are the plans the external readers are given, with
// Deflate, which tifffile decodes without imagecodecs: a stack whose
// images span files, and the rich plan (XYCTZ, time points, instruments, a
// caller's document) without its companion.
func interopDatasets() map[string]DatasetSpec {
	stack := stackPlan(12, 5, 2, 72, Split{Files: 5})
	stack.Options = Options{Compression: Deflate, TileSize: 32}
	rich := richPlan()
	rich.Companion = false
	rich.Options.Compression, rich.Options.Level = Deflate, 0
	return map[string]DatasetSpec{"stack": stack, "rich": rich}
}

// TestInteropDatasetTifffile: tifffile opens each dataset from any one of
// its files as the whole set of series, every plane there, with the
// pixels of a single file of the same images.
func TestInteropDatasetTifffile(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	for name, spec := range interopDatasets() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			single := spec
			single.Name, single.Split = "single", Split{}
			s := mustDataset(t, single)
			writeParts(t, s, dir, PartOptions{}, 0)
			d := mustDataset(t, spec)
			writeParts(t, d, dir, PartOptions{}, allParts(d)...)
			args := []string{filepath.Join(dir, s.File(0).Name)}
			for i := range d.Files() {
				args = append(args, filepath.Join(dir, d.File(i).Name))
			}
			out := interop.RunPython(t, interop.TifffileDataset, args...)
			series, planes := len(spec.Images), 0
			for _, im := range spec.Images {
				planes += im.Planes()
			}
			for i := range d.Files() {
				assert.Contains(t, out, fmt.Sprintf("%s: %d series, %d planes, ", d.File(i).Name, series, planes))
			}
			assert.NotContains(t, out, " 0 across files", "images span files")
		})
	}
}

// TestInteropDatasetSchema: xmllint validates against the OME schema the
// OME-XML of a dataset's master files, the BinaryOnly element of its
// TIFFs in the companion layout, and the companion.
func TestInteropDatasetSchema(t *testing.T) {
	needSchema(t)
	for name, spec := range interopDatasets() {
		for _, companion := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, companion %v", name, companion), func(t *testing.T) {
				spec.Companion = companion
				d := mustDataset(t, spec)
				dir := t.TempDir()
				writeParts(t, d, dir, PartOptions{}, 0, d.Files()-1)
				paths := []string{}
				for _, i := range []int{0, d.Files() - 1} {
					data, err := os.ReadFile(filepath.Join(dir, d.File(i).Name))
					require.NoError(t, err)
					f, err := readback.Parse(data)
					require.NoError(t, err)
					path := filepath.Join(dir, fmt.Sprintf("%d.xml", i))
					require.NoError(t, os.WriteFile(path, []byte(f.IFDs[0].Text(tiff.TagImageDescription)), 0o644))
					paths = append(paths, path)
				}
				if companion {
					name, _ := d.Companion()
					paths = append(paths, filepath.Join(dir, name))
				}
				for _, path := range paths {
					r := interop.Run("xmllint", "--noout", "--nonet", "--schema", schemaPath(), path)
					require.NoError(t, r.Err, r.Stderr)
					assert.True(t, strings.HasSuffix(strings.TrimSpace(r.Stderr), "validates"), r.Stderr)
				}
			})
		}
	}
}
