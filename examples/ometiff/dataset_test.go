package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/internal/datasettest"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/pyramid"
)

// TestConvertDataset converts a multi-file dataset, named by one of its
// TIFFs or by its companion, into one file: both images, every plane (in
// the output's main chain, images in order) with its pixels, the tiles
// copied through. info says which file holds which pages.
func TestConvertDataset(t *testing.T) {
	for _, companion := range []bool{false, true} {
		dir := t.TempDir()
		datasettest.Write(t, dir, companion)
		inputs := []string{"set_1.ome.tif"}
		if companion {
			inputs = append(inputs, "set.companion.ome")
		}
		for _, name := range inputs {
			t.Run(fmt.Sprintf("companion %v, from %s", companion, name), func(t *testing.T) {
				in, out := filepath.Join(dir, name), filepath.Join(dir, "out.ome.tif")
				code, stdout, stderr := clitest.Run(runConvert, "-force", in, out)
				require.Equal(t, 0, code, stderr)
				assert.Contains(t, stdout, "2 images, 12 planes")
				assert.Contains(t, stderr, "image 1: Deflate tiles of 32 x 32 copied through")
				data, err := os.ReadFile(out)
				require.NoError(t, err)
				file, err := readback.Parse(data)
				require.NoError(t, err)
				require.Len(t, file.IFDs, 12)
				description := file.IFDs[0].Text(270)
				assert.Contains(t, description, `Name="well 1"`)
				assert.Contains(t, description, `Name="GFP"`)
				assert.NotContains(t, description, "set_0.ome.tif", "the output names itself only")
				for k, d := range file.IFDs {
					im, err := file.Image(d)
					require.NoError(t, err)
					// XYZCT: Z fastest, then C.
					want := make([]byte, datasettest.Width*datasettest.Height*2)
					require.NoError(t, datasettest.Fill(pyramid.PlaneRef{Image: k / 6, Z: k % 6 % 3, C: k % 6 / 3}, want))
					assert.Equal(t, want, im.Pix, "plane %d", k)
				}

				code, stdout, stderr = clitest.Run(runInfo, in)
				require.Equal(t, 0, code, stderr)
				files := "in 3 files"
				if name == "set.companion.ome" {
					files = "in 3 files and the companion"
				}
				assert.Contains(t, stdout, "OME-TIFF, 2 images, 12 planes, "+files+"\n")
				assert.Contains(t, stdout, `image 1 "well 1": 40 x 24, Z 3 x C 2 x T 1, XYZCT, uint16, pages 2-3 of set_1.ome.tif; pages 0-3 of set_2.ome.tif`)
			})
		}
	}
}

// TestConvertDatasetRefused checks a dataset that cannot be converted
// whole: an output naming one of its files is a usage error that leaves
// the file as it was; a file missing is named, and -skip-unsupported
// converts the images of the files there.
func TestConvertDatasetRefused(t *testing.T) {
	dir := t.TempDir()
	datasettest.Write(t, dir, false)
	part := filepath.Join(dir, "set_2.ome.tif")
	before, err := os.ReadFile(part)
	require.NoError(t, err)
	for _, force := range [][]string{{"-force"}, nil} { // without it too: not "exists (use -force...)"
		code, _, stderr := clitest.Run(runConvert, append(force, filepath.Join(dir, "set_0.ome.tif"), part)...)
		assert.Equal(t, 2, code)
		assert.Equal(t, "ometiff convert: "+part+" is a file of the input dataset: name another output (the conversion would replace it)\n", stderr,
			"%v: the refusal alone", force)
	}
	after, err := os.ReadFile(part)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the dataset's file is left as it was")

	require.NoError(t, os.Remove(part))
	out := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, filepath.Join(dir, "set_0.ome.tif"), out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `the dataset's file "set_2.ome.tif"`)
	assert.Contains(t, stderr, "no such file")
	assert.Contains(t, stderr, "(-skip-unsupported, or -images naming images ometiff info lists, converts the rest)")
	assert.NoFileExists(t, out)

	code, _, stderr = clitest.Run(runConvert, "-skip-unsupported", filepath.Join(dir, "set_0.ome.tif"), out)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 1, strings.Count(stderr, "left out (-skip-unsupported)"), stderr)
	assert.Contains(t, stderr, `OME image 1 (Image:1)`, "the image in the missing file")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	file, err := readback.Parse(data)
	require.NoError(t, err)
	assert.Len(t, file.IFDs, 6, "the planes of image 0")
	assert.Contains(t, file.IFDs[0].Text(270), `Name="well 0"`)
	assert.NotContains(t, file.IFDs[0].Text(270), `Name="well 1"`)
}

// TestConvertDatasetCompanion checks the companion layout's edges: an
// output naming the companion a part's BinaryOnly points to is refused
// and leaves it as it was, and a companion starting with blank lines is
// recognized as one.
func TestConvertDatasetCompanion(t *testing.T) {
	dir := t.TempDir()
	datasettest.Write(t, dir, true)
	companion := filepath.Join(dir, "set.companion.ome")
	before, err := os.ReadFile(companion)
	require.NoError(t, err)
	renamed := filepath.Join(dir, "set.companion.tif") // an output name convert takes, as long as the old
	require.NoError(t, os.Rename(companion, renamed))
	for _, name := range []string{"set_0.ome.tif", "set_1.ome.tif", "set_2.ome.tif"} { // point the parts to it
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		data = bytes.Replace(data, []byte(`MetadataFile="set.companion.ome"`), []byte(`MetadataFile="set.companion.tif"`), 1)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	code, _, stderr := clitest.Run(runConvert, "-force", filepath.Join(dir, "set_0.ome.tif"), renamed)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "is a file of the input dataset")
	after, err := os.ReadFile(renamed)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the companion is left as it was")

	blank := filepath.Join(dir, "blank.companion.ome")
	require.NoError(t, os.WriteFile(blank, append([]byte("\n\n\n\n  \n"), before...), 0o644))
	out := filepath.Join(dir, "out.ome.tif")
	code, stdout, stderr := clitest.Run(runConvert, blank, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "2 images, 12 planes")
}

// TestInfoDatasetRefused: ometiff info names what is wrong with a
// dataset it cannot read, as convert does, whichever file names it: for
// its companion it said "not a TIFF ... file", the reason lost.
func TestInfoDatasetRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		named string // the file given
		msg   string
	}{
		{"companion", "set.companion.ome", `the dataset's file "set_1.ome.tif" is missing`},
		{"a part", "set_0.ome.tif", `the dataset's file "set_1.ome.tif" is missing`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			datasettest.Write(t, dir, true)
			// The file of both images' first planes: no image can be read.
			require.NoError(t, os.Remove(filepath.Join(dir, "set_1.ome.tif")))
			code, stdout, stderr := clitest.Run(runInfo, filepath.Join(dir, tt.named))
			assert.Equal(t, 1, code, stdout)
			clitest.AssertErrorLine(t, infoName, stderr)
			assert.Contains(t, stderr, tt.msg)
			assert.NotContains(t, stderr, "not a TIFF")
		})
	}
}
