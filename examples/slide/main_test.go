package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/pyramid"
)

func TestRunWritesSlide(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // in the description of the file
	}{
		{"defaults", []string{"-size", "512"}, []string{
			`"synthetic slide": 512 x 512, Z 1, C 3, T 1, uint16, XYZCT, 3 planes in TiffData, pixel 0.325 µm x 0.325 µm`,
			`channel 0 "DAPI", 1 sample, colour #0000FFFF`, `channel 2 "TRITC"`,
			"IFD 2: 512 x 512, 1 x uint16, tiles 256 x 256 (2 x 2), LZW, predictor horizontal",
			"SubIFD 2.1: 256 x 256"}},
		{"uint8 uncompressed", []string{"-size", "300", "-channels", "1", "-type", "uint8", "-compression", "none", "-tile", "128"}, []string{
			"Z 1, C 1, T 1, uint8", "IFD 0: 300 x 300, 1 x uint8, tiles 128 x 128 (3 x 3), none",
			"SubIFD 0.1: 150 x 150", "SubIFD 0.2: 75 x 75, 1 x uint8, tiles 80 x 80 (1 x 1)"}},
		{"float32 zstd", []string{"-size", "200", "-channels", "2", "-type", "float32", "-compression", "zstd", "-level", "3"}, []string{
			"C 2, T 1, float", "IFD 1: 200 x 200, 1 x float32, tiles 208 x 208 (1 x 1), Zstd, predictor floating point"}},
		{"rgb8 deflate", []string{"-size", "256", "-channels", "1", "-type", "rgb8", "-compression", "deflate", "-tile", "64", "-levels", "2"}, []string{
			`channel 0 "Brightfield 1", 3 samples`, "IFD 0: 256 x 256, 3 x uint8, tiles 64 x 64 (4 x 4), Deflate",
			"SubIFD 0.1: 128 x 128"}},
		{"rgb8 jpeg", []string{"-size", "300", "-channels", "1", "-type", "rgb8", "-compression", "jpeg", "-quality", "85", "-tile", "128"}, []string{
			"IFD 0: 300 x 300, 3 x uint8, tiles 128 x 128 (3 x 3), JPEG", "SubIFD 0.1: 150 x 150, 3 x uint8, tiles 128 x 128 (2 x 2), JPEG"}},
		{"uint8 jpeg, RGB coding ignored", []string{"-size", "100", "-channels", "2", "-type", "uint8", "-compression", "jpeg", "-jpeg-color", "rgb"}, []string{
			"IFD 1: 100 x 100, 1 x uint8, tiles 112 x 112 (1 x 1), JPEG"}},
		{"BigTIFF, one worker", []string{"-size", "64", "-channels", "6", "-bigtiff", "always", "-workers", "1"}, []string{
			"BigTIFF, little-endian", `channel 5 "Channel 6"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "slide.ome.tif")
			code, stdout, stderr := clitest.Run(run, append(tt.args, "-o", path)...)
			require.Equal(t, 0, code, stderr)
			assert.Empty(t, stderr)
			for _, line := range []string{"wrote " + path, "MB/s", "OS write calls"} {
				assert.Contains(t, stdout, line)
			}
			description := clitest.Describe(t, path, pyramid.InspectOptions{})
			for _, want := range tt.want {
				assert.Contains(t, description, want)
			}
			clitest.CheckTiffinfo(t, path)
		})
	}
}

func TestRunStoresGeneratedPixels(t *testing.T) {
	const size, channels = 300, 2
	for _, name := range []string{"uint16", "float64", "rgb8"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "slide.ome.tif")
			code, _, stderr := clitest.Run(run, "-o", path, "-size", "300", "-channels", "2", "-type", name, "-tile", "64")
			require.Equal(t, 0, code, stderr)
			planes := clitest.Planes(t, path)
			require.Len(t, planes, channels)
			kind := kindNamed(t, name)
			for c, img := range planes {
				want := make([]byte, size*size*kind.pixelBytes())
				kind.newGenerator(c, size, size).fill(want, 0, size)
				assert.True(t, bytes.Equal(want, img.Pix), "channel %d differs from the generated pixels", c)
			}
		})
	}
}

// kindNamed returns the pixel kind the -type flag reads from name.
func kindNamed(tb testing.TB, name string) pixelKind {
	tb.Helper()
	var k pixelKind
	require.NoError(tb, k.UnmarshalText([]byte(name)))
	return k
}

func TestPixelKindNames(t *testing.T) {
	for name, want := range map[string]string{"uint16": "uint16", "UINT8": "uint8", "float": "float32", "double": "float64", "rgb8": "rgb8"} {
		text, err := kindNamed(t, name).MarshalText()
		require.NoError(t, err)
		assert.Equal(t, want, string(text), "-type %s", name)
	}
	var k pixelKind
	for _, name := range []string{"int8", "uint32", "rgb16", ""} {
		assert.EqualError(t, k.UnmarshalText([]byte(name)), "want one of uint16, uint8, float32, float64, rgb8", "-type %s", name)
	}
}

func TestRunReplacesItsOutputWithTheSameBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slide.ome.tif")
	var files [2][]byte
	for i, direct := range []string{"-direct=false", "-direct"} {
		code, _, stderr := clitest.Run(run, "-o", path, "-size", "128", "-channels", "2", direct)
		require.Equal(t, 0, code, stderr)
		var err error
		files[i], err = os.ReadFile(path)
		require.NoError(t, err)
	}
	assert.True(t, bytes.Equal(files[0], files[1]), "two runs, the second with -direct, wrote different files")
}

func TestRunRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"unknown flag", []string{"-colour"}, 2},
		{"unknown compression", []string{"-compression", "webp"}, 2},
		{"jpeg of uint16", []string{"-size", "64", "-compression", "jpeg"}, 2},
		{"quality past 100", []string{"-size", "64", "-type", "rgb8", "-compression", "jpeg", "-quality", "101"}, 2},
		{"quality without jpeg", []string{"-size", "64", "-quality", "90"}, 2},
		{"unknown jpeg coding", []string{"-jpeg-color", "cmyk"}, 2},
		{"unknown type", []string{"-type", "int4"}, 2},
		{"type slide does not generate", []string{"-type", "int16"}, 2},
		{"unknown bigtiff", []string{"-bigtiff", "sometimes"}, 2},
		{"not a number", []string{"-size", "big"}, 2},
		{"zero size", []string{"-size", "0"}, 2},
		{"no channels", []string{"-channels", "0"}, 2},
		{"argument", []string{"-size", "64", "out.ome.tif"}, 2},
		{"tile not a multiple of 16", []string{"-size", "64", "-tile", "100"}, 2},
		{"too many levels", []string{"-size", "64", "-levels", "9"}, 2},
		{"negative workers", []string{"-size", "64", "-workers", "-1"}, 2},
		{"bad deflate level", []string{"-size", "64", "-compression", "deflate", "-level", "99"}, 2},
		{"missing directory", []string{"-size", "64", "-o", "missing/slide.ome.tif"}, 1},
		{"workers past 256", []string{"-size", "64", "-workers", "100000"}, 2},
		{"not a TIFF name", []string{"-size", "64", "-o", "slide.png"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clitest.AssertFails(t, run, "slide", t.TempDir(), tt.code, tt.args...)
		})
	}
}

func TestRunPrintsUsage(t *testing.T) {
	clitest.AssertUsage(t, run, "usage: slide [flags]", "-compression codec")
}
