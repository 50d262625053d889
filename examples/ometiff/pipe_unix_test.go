//go:build linux || darwin

package main

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
)

// feedFIFO makes a named pipe "in" in dir and writes data into it from a
// goroutine, once a reader opens it; the channel gives the write's error.
func feedFIFO(t *testing.T, dir string, data []byte) (string, <-chan error) {
	fifo := filepath.Join(dir, "in")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write(data)
			f.Close()
		}
		done <- err
	}()
	return fifo, done
}

// TestPipedInputs converts images read from a named pipe, which can be
// read only once: the header is peeked, then the data read.
func TestPipedInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"streamed PNG", randomPNG(rng, 2, 16, 50, 70, false)},
		{"JPEG", encoded(t, nrgbaImage(40, 30, false), encodeJPEG)},
		{"interlaced PNG", interlaced(t, 20, 9)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo, done := feedFIFO(t, dir, tt.data)
			output := filepath.Join(dir, "out.ome.tif")
			code, _, stderr := clitest.Run(runConvert, "-compression", "none", fifo, output)
			require.NoError(t, <-done)
			require.Equal(t, 0, code, stderr)
			decoded, _, err := image.Decode(bytes.NewReader(tt.data))
			require.NoError(t, err)
			_, _, want := wantPixels(decoded)
			assert.True(t, bytes.Equal(want, clitest.Planes(t, output)[0].Pix), "the pixels differ")
		})
	}
}

// TestPipedTIFF checks that a TIFF read from a pipe, whose blocks cannot
// be read where they lie, is refused with a clear error.
func TestPipedTIFF(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.tif")
	writeTIFF(t, file, page{width: 8, height: 8, samples: 1, bits: 8, photometric: 1})
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	// With a flag its output's codec refuses too: that refusal, before
	// the input is read, would send the user to a second one.
	for i, args := range [][]string{nil, {"-quality", "80"}} {
		fifo := filepath.Join(dir, fmt.Sprintf("in%d", i))
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		go func() {
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				f.Write(data)
				f.Close()
			}
		}()
		clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, fifo+": a TIFF file is read where its blocks lie: give a file, not a pipe",
			append(args, fifo, "out.ome.tif")...)
	}
}

// TestPipedAnimatedGIF: an animated GIF read from a pipe is refused as
// one read from a file is: its frames are counted before the decoder
// reads past the pipe's header.
func TestPipedAnimatedGIF(t *testing.T) {
	dir := t.TempDir()
	fifo, done := feedFIFO(t, dir, animatedGIF(t, 3))
	output := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, fifo, output)
	<-done
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "an animated GIF of 3 frames: only the first is written")
	assert.NoFileExists(t, output)
}

// TestPipedJPEGMaxMemory: a JPEG read from a pipe is held whole, as one
// read from a file is, and -max-memory counts it once read: a bound that
// its pixels and bands fit, and not its stream too, refuses it from a
// pipe as from a file (from a pipe, it went past the bound unseen).
func TestPipedJPEGMaxMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	noise := image.NewGray(image.Rect(0, 0, 256, 256))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(rng.Uint32())
	}
	data := encoded(t, noise, func(w io.Writer, m image.Image) error {
		return jpeg.Encode(w, m, &jpeg.Options{Quality: 100})
	})
	// The pixels (1 byte each, as image/jpeg decodes gray) and the
	// writer's bands (3 rows of tiles of 256).
	fits := 256*256 + 3*256*256
	require.Greater(t, len(data), 20000)
	bound := fmt.Sprint(fits + len(data)/2)
	const saying = "more than -max-memory"
	dir := t.TempDir()
	file := filepath.Join(dir, "noise.jpg")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	code, _, stderr := clitest.Run(runConvert, "-max-memory", bound, file, filepath.Join(dir, "file.ome.tif"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, saying)

	fifo, done := feedFIFO(t, dir, data)
	output := filepath.Join(dir, "pipe.ome.tif")
	code, _, stderr = clitest.Run(runConvert, "-max-memory", bound, fifo, output)
	<-done // the writer may meet the pipe closed: the converter stopped reading
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, saying)
	assert.NoFileExists(t, output)

	// With room for the stream, the pipe converts.
	require.NoError(t, os.Remove(fifo))
	fifo, done = feedFIFO(t, dir, data)
	code, _, stderr = clitest.Run(runConvert, "-max-memory", fmt.Sprint(fits+len(data)+1), "-compression", "none", fifo, output)
	require.NoError(t, <-done)
	require.Equal(t, 0, code, stderr)
	decoded, err := jpeg.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, decoded.(*image.Gray).Pix, clitest.Planes(t, output)[0].Pix)
}

// TestInspectNamedPipe: ometiff inspect refuses a named pipe before it
// opens it (opened, it waited for a writer for ever).
func TestInspectNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	code, _, stderr := clitest.Run(runInspect, fifo)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, fifo+": not a regular file")
}

// TestPipedRawSize: raw samples from a pipe, whose size is known only once
// read, are refused when bytes follow the last plane, as a file of that
// size is (they were dropped, and the planes written); a pipe of exactly
// the planes converts.
func TestPipedRawSize(t *testing.T) {
	args := []string{"-raw-width", "10", "-raw-height", "10", "-raw-z", "2"}
	for _, tt := range []struct {
		name string
		size int
		code int
		msg  string
	}{
		{"exact", 200, 0, ""},
		{"one byte more", 201, 2, " holds more than the 2 planes of 10 x 10 x 1 uint8 samples (200 bytes) the -raw flags describe"},
		{"a plane more", 300, 2, " holds more than the 2 planes"},
		{"short", 150, 1, ": plane 1 (z 1, c 0, t 0): the input ends after 50 of the plane's 100 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := bytes.Repeat([]byte{7, 8, 9}, tt.size)[:tt.size]
			fifo, done := feedFIFO(t, dir, data)
			output := filepath.Join(dir, "out.ome.tif")
			code, _, stderr := clitest.Run(runConvert, append(args, fifo, output)...)
			<-done // the writer may meet the pipe closed: the converter stopped reading
			require.Equal(t, tt.code, code, stderr)
			if tt.code == 0 {
				assert.Len(t, clitest.Planes(t, output), 2)
				return
			}
			clitest.AssertErrorLine(t, convertName, stderr)
			assert.Contains(t, stderr, fifo+tt.msg)
			assert.NoFileExists(t, output)
		})
	}
}
