//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
)

// TestMain lets the test binary act as the generator, as the program does
// when it re-executes itself.
func TestMain(m *testing.M) {
	if job := os.Getenv(generateEnv); job != "" {
		if err := generate(job, os.Args[1:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSVSPeers checks that every workload on the SVS-like slide measures
// libvips both ways: the command first (vips tiffsave, which reads
// the slide through OpenSlide), then vips tiffload (RGB), with the same
// save options.
func TestSVSPeers(t *testing.T) {
	for _, tc := range []struct {
		workload string
		options  string // libvips's save options, as tiffload's output gets them
	}{
		{"svs", "[tile,pyramid,subifd,compression=lzw,predictor=horizontal]"},
		{"copy", "[tile,tile-width=240,tile-height=240,pyramid,subifd,compression=jpeg,Q=70]"},
		{"copy-levels", "[tile,tile-width=240,tile-height=240,pyramid,subifd,compression=jpeg,Q=70]"},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			w := find(t, tc.workload)
			require.Len(t, w.peers, 2)
			assert.Equal(t, vipsOpenSlide, w.peers[0].name)
			assert.Equal(t, []string{"vips", "tiffsave", "IN", "OUT"}, w.peers[0].argv[:4], "the issue's command")
			assert.Equal(t, vipsTiffload, w.peers[1].name)
			assert.Equal(t, []string{"vips", "tiffload", "in.svs", "out.tif" + tc.options},
				substituteOut(substitute(w.peers[1].argv, "in.svs"), "out.tif"))
		})
	}
}

// find returns the workload of the name.
func find(t *testing.T, name string) workload {
	t.Helper()
	for _, w := range workloads {
		if w.name == name {
			return w
		}
	}
	t.Fatalf("no workload %q", name)
	return workload{}
}

// needTools skips the test unless the tools that make the inputs and the
// peers are installed.
func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"vips", "tiffcp", "tiffset", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
}

// buildOmetiff builds the ometiff program into dir.
func buildOmetiff(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "ometiff")
	out, err := exec.Command("go", "build", "-o", bin, "../ometiff").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestRunSmallSVS runs the SVS-like workloads on a small slide: each has a
// row for ours and one for each way libvips reads the slide.
func TestRunSmallSVS(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	code, stdout, stderr := clitest.Run(run, "-workloads", "svs,copy", "-runs", "1", "-svs-size", "600x400", "-dir", dir,
		"-ometiff", buildOmetiff(t, t.TempDir()))
	require.Equal(t, 0, code, stderr)
	for _, workload := range []string{"svs", "copy"} {
		for _, writer := range []string{"ometiff", vipsOpenSlide, vipsTiffload} {
			re := regexp.MustCompile(`(?m)^` + workload + ` +` + regexp.QuoteMeta(writer) + ` .*$`)
			line := re.FindString(stdout)
			require.NotEmpty(t, line, "no row for %s/%s in\n%s", workload, writer, stdout)
			if writer != "ometiff" {
				assert.Regexp(t, `\d+\.\d\d +\d+\.\d\d$`, line, "the ratios of ours to %s", writer)
			}
		}
	}
}

// TestRoundOrder checks that ours (0) goes first in even rounds and after
// the peers in odd ones.
func TestRoundOrder(t *testing.T) {
	for _, tc := range []struct {
		round, runners int
		want           []int
	}{
		{0, 1, []int{0}},
		{1, 1, []int{0}},
		{0, 2, []int{0, 1}},
		{1, 2, []int{1, 0}},
		{0, 3, []int{0, 1, 2}},
		{1, 3, []int{1, 2, 0}},
		{2, 3, []int{0, 1, 2}},
		{5, 3, []int{1, 2, 0}},
	} {
		assert.Equal(t, tc.want, roundOrder(tc.round, tc.runners), "round %d of %d runners", tc.round, tc.runners)
	}
}

// TestMedian checks the median of odd and even counts: the mean of the two
// middle values for an even one.
func TestMedian(t *testing.T) {
	sec := func(s ...float64) []sample {
		var out []sample
		for _, v := range s {
			out = append(out, sample{wall: time.Duration(v * float64(time.Second)), rss: int64(v * 10)})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		samples []sample
		want    time.Duration
		rss     int64
	}{
		{"one", sec(3), 3 * time.Second, 30},
		{"odd", sec(5, 1, 3), 3 * time.Second, 30},
		{"even", sec(4, 1, 2, 8), 3 * time.Second, 30},
		{"two", sec(1, 2), 1500 * time.Millisecond, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := median(tc.samples)
			assert.Equal(t, tc.want, m.wall)
			assert.Equal(t, tc.rss, m.rss)
		})
	}
}

// writePyramid writes an RGB (or gray) pyramid of width x height in tiles
// of tile pixels with package pyramid, and returns its path.
func writePyramid(t *testing.T, width, height, samples, tile int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.ome.tif")
	h, err := iohandle.Create(path, iohandle.Options{Replace: true, NoSync: true})
	require.NoError(t, err)
	defer h.Close()
	w, err := pyramid.New(h, pyramid.Options{TileSize: tile})
	require.NoError(t, err)
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: width, SizeY: height, SizeZ: 1, SizeC: 1, PixelType: pyramid.Uint8, SamplesPerPixel: samples})
	require.NoError(t, err)
	require.NoError(t, im.ReadPlanes(bytes.NewReader(make([]byte, width*height*samples))))
	require.NoError(t, w.Close())
	return path
}

// TestCheckOutput checks an output's structure against the shape wanted.
func TestCheckOutput(t *testing.T) {
	rgb := writePyramid(t, 600, 400, 3, 128)
	gray := writePyramid(t, 600, 400, 1, 128)
	notTIFF := filepath.Join(t.TempDir(), "out.tif")
	require.NoError(t, os.WriteFile(notTIFF, []byte("not a TIFF at all"), 0o644))
	want := shape{width: 600, height: 400, samples: 3, tile: 128, levels: 4}
	for _, tc := range []struct {
		name  string
		path  string
		want  shape
		error string // "": none
	}{
		{"right", rgb, want, ""},
		{"samples", gray, want, "1 samples"},
		{"rgba wanted", rgb, shape{600, 400, 4, 128, 4}, "3 samples"},
		{"levels", rgb, shape{600, 400, 3, 128, 5}, "4 levels; want"},
		{"size", rgb, shape{601, 400, 3, 128, 4}, "page 0 is 600x400"},
		{"tile", rgb, shape{600, 400, 3, 256, 4}, "128-pixel tiles"},
		{"not a TIFF", notTIFF, want, "tiff"},
		{"missing", filepath.Join(t.TempDir(), "none.tif"), want, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkOutput(tc.path, tc.want)
			if tc.error == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.error)
			}
		})
	}
}

// TestPyramidLevels checks the count of levels halving until one fits in
// a tile, rounding up (ours) and down (libvips, whose 1023 x 515 slide
// has levels 511 x 257 and 255 x 128).
func TestPyramidLevels(t *testing.T) {
	for _, tc := range []struct {
		width, height, tile int
		roundUp             bool
		want                int
	}{
		{2400, 1600, 128, false, 6},
		{2400, 1600, 256, true, 5},
		{24576, 16384, 240, true, 8},
		{8192, 8192, 256, true, 6},
		{1024, 1024, 256, false, 3},
		{1023, 515, 256, false, 3},
		{513, 100, 256, false, 2},
		{513, 100, 256, true, 3},
		{100, 100, 256, true, 1},
	} {
		assert.Equal(t, tc.want, pyramidLevels(tc.width, tc.height, tc.tile, tc.roundUp), "%+v", tc)
	}
}

func TestRunHelp(t *testing.T) {
	clitest.AssertUsage(t, run, "-workloads workloads", "-runs runs")
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-runs", "0"}, {"-runs", "x"}, {"-workloads", "svs,nope"}, {"-svs-size", "600"}, {"-svs-size", "0x400"},
		{"-strips-size", "0"}, {"-huge-size", "15"}, {"-bogus"}, {"extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			clitest.AssertFails(t, run, "convertcompare", t.TempDir(), 2, args...)
		})
	}
}

// TestCancelKillsTheRun cancels a measured run: measure returns at once,
// the program it ran and the one that program started are gone, and the
// output is removed.
func TestCancelKillsTheRun(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	out := filepath.Join(dir, "out.tif")
	// The shell writes the output, starts a sleep in the background and
	// waits for it: killing the shell alone would leave the sleep running.
	argv := []string{"sh", "-c", `echo partial > "$1"; sleep 60 & echo $! > "$0.tmp" && mv "$0.tmp" "$0"; wait`, pidFile, "OUT"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := measure(ctx, argv, out, shape{})
		done <- err
	}()
	var pid int
	require.Eventually(t, func() bool {
		text, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		_, err = fmt.Sscan(string(text), &pid)
		return err == nil
	}, time.Minute, 10*time.Millisecond, "the program never started")
	cancel()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("still running after the cancellation")
	}
	assert.NoFileExists(t, out)
	assert.Eventually(t, func() bool {
		state, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil || strings.Contains(string(state), ") Z ")
	}, time.Minute, 10*time.Millisecond, "the background sleep %d survived", pid)
}
