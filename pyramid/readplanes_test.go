package pyramid

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/iohandle/iohandletest"
)

// readPlanesCase is an image written once plane by plane and once with
// ReadPlanes.
type readPlanesCase struct {
	name     string
	spec     ImageSpec
	opts     Options
	tileIsIt bool // ReadPlanes writes the planes without cutting tiles
}

func readPlanesCases() []readPlanesCase {
	return []readPlanesCase{
		{"tile is the plane", ImageSpec{SizeX: 128, SizeY: 64, SizeZ: 3, SizeC: 2, PixelType: Uint16}, Options{Compression: None, TileSize: 128}, true},
		{"tile is the plane, UUID given", ImageSpec{SizeX: 16, SizeY: 16, SizeT: 9, PixelType: Float64}, Options{Compression: None, TileSize: 16, UUID: "0f0e0d0c-0b0a-4908-8706-050403020100"}, true},
		{"RGB tile is the plane", ImageSpec{SizeX: 32, SizeY: 48, SizeT: 5, SamplesPerPixel: 3}, Options{Compression: None}, true},
		{"padded tile", ImageSpec{SizeX: 100, SizeY: 60, SizeZ: 4, PixelType: Int16}, Options{Compression: None}, false},
		{"several tiles and levels", ImageSpec{SizeX: 300, SizeY: 200, SizeC: 3, DimensionOrder: XYCZT}, Options{Compression: None, TileSize: 64}, false},
		{"LZW", ImageSpec{SizeX: 128, SizeY: 128, SizeZ: 2, PixelType: Float32}, Options{}, false},
		{"planes larger than a read", ImageSpec{SizeX: 1500, SizeY: 1450, SizeC: 2, PixelType: Uint16}, Options{Compression: Deflate, Workers: 2}, false},
	}
}

// rawPlanes returns the image's planes, in plane order, and all of them
// concatenated.
func rawPlanes(spec ImageSpec) ([][]byte, []byte) {
	n, _ := spec.normalized()
	var planes [][]byte
	var all []byte
	for p := range n.Planes() {
		pix := randomPlane(n.SizeX, n.SizeY, n.SamplesPerPixel, n.PixelType, uint64(p), false).pix
		planes = append(planes, pix)
		all = append(all, pix...)
	}
	return planes, all
}

// TestReadPlanes: ReadPlanes writes the same file as WritePlane plane by
// plane, in memory and to a file, and where the tile is the plane it hands
// the output all the planes in one append instead of one each.
func TestReadPlanes(t *testing.T) {
	for _, tc := range readPlanesCases() {
		t.Run(tc.name, func(t *testing.T) {
			planes, all := rawPlanes(tc.spec)
			write := func(h iohandle.Handle, bulk bool) {
				w, err := New(h, tc.opts)
				require.NoError(t, err)
				im, err := w.AddImage(tc.spec)
				require.NoError(t, err)
				if bulk {
					require.NoError(t, im.ReadPlanes(bytes.NewReader(all)))
				} else {
					for p, pix := range planes {
						z, c, tt := im.Spec().PlaneCoords(p)
						require.NoError(t, im.WritePlane(z, c, tt, pix))
					}
				}
				require.NoError(t, w.Close())
			}
			one, bulk := iohandle.NewMemory(), iohandle.NewMemory()
			write(one, false)
			write(bulk, true)
			assert.True(t, bytes.Equal(one.Bytes(), bulk.Bytes()), "ReadPlanes and WritePlane files differ")
			if tc.tileIsIt {
				assert.Equal(t, one.Stats().Appends-int64(len(planes))+1, bulk.Stats().Appends, "appends with ReadPlanes")
			}

			// To files whose buffer is smaller than a plane and out of step
			// with the planes, so that planes span reads.
			var files [2][]byte
			for i, bulk := range []bool{false, true} {
				path := filepath.Join(t.TempDir(), "out.ome.tif")
				f, err := iohandle.Create(path, iohandle.Options{NoSync: true, BufferSize: 1000})
				require.NoError(t, err)
				write(f, bulk)
				files[i], err = os.ReadFile(path)
				require.NoError(t, err)
			}
			assert.True(t, bytes.Equal(files[0], files[1]), "ReadPlanes and WritePlane files differ")
		})
	}
}

// TestReadPlanesShortInput: when the reader ends early or fails, the
// planes read whole are written, the error says so, and Close lists the
// others; written then, whatever ReadPlanes had read of them, they give
// the pixels and the OME-XML of a file written plane by plane.
func TestReadPlanesShortInput(t *testing.T) {
	for _, tc := range readPlanesCases() {
		t.Run(tc.name, func(t *testing.T) {
			planes, all := rawPlanes(tc.spec)
			want := writeMemory(t, tc.opts, func(w *Writer) error {
				im, err := w.AddImage(tc.spec)
				require.NoError(t, err)
				for p, pix := range planes {
					z, c, tt := im.Spec().PlaneCoords(p)
					require.NoError(t, im.WritePlane(z, c, tt, pix))
				}
				return nil
			})
			cut := len(all) - len(planes[0])*3/2 // the last plane and half the one before
			inputs := map[string]func() io.Reader{
				"ends":  func() io.Reader { return bytes.NewReader(all[:cut]) },
				"fails": func() io.Reader { return io.MultiReader(bytes.NewReader(all[:cut]), &failingReader{}) },
			}
			for name, input := range inputs {
				w, err := New(iohandle.NewMemory(), tc.opts)
				require.NoError(t, err)
				im, err := w.AddImage(tc.spec)
				require.NoError(t, err)
				err = im.ReadPlanes(input())
				if name == "ends" {
					require.ErrorIs(t, err, io.ErrUnexpectedEOF)
					require.ErrorIs(t, err, ErrData)
					assert.ErrorContains(t, err, "image 0: the input ends in plane")
				} else {
					require.ErrorIs(t, err, errReader)
				}
				err = w.Close()
				require.ErrorIs(t, err, ErrMissingPlanes, name)
				assert.ErrorContains(t, err, ": 2 missing", name)

				h := iohandle.NewMemory()
				var last Progress
				opts := tc.opts
				opts.Progress = func(p Progress) { last = p }
				w, err = New(h, opts)
				require.NoError(t, err)
				im, err = w.AddImage(tc.spec)
				require.NoError(t, err)
				require.Error(t, im.ReadPlanes(input()))
				for p := len(planes) - 2; p < len(planes); p++ {
					z, c, tt := im.Spec().PlaneCoords(p)
					require.NoError(t, im.WritePlane(z, c, tt, planes[p]), "%s: plane %d written after ReadPlanes", name, p)
				}
				require.NoError(t, w.Close(), name)
				compareFiles(t, want, h.Bytes(), true) // the OME-XML too, UUID included
				assert.Equal(t, last.TotalTiles, last.Tiles, "%s: the tiles of a plane cut off count in both", name)
			}
		})
	}
}

// TestReadPlanesCutAfterAPiece cuts the input of planes larger than a
// piece after the first piece, so that tiles of the plane cut off are
// stored: written again, the plane gives the pixels and the derived UUID
// of a clean write, and the stored tiles count in Progress's total.
func TestReadPlanesCutAfterAPiece(t *testing.T) {
	spec := ImageSpec{SizeX: 2048, SizeY: 1536, SizeZ: 2, PixelType: Uint16} // 6 MiB a plane
	planes, all := rawPlanes(spec)
	for _, comp := range []Compression{None, Deflate} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%v, workers %d", comp, workers), func(t *testing.T) {
				opts := Options{Compression: comp, Workers: workers}
				clean := writeZPlanes(t, opts, spec, planes)
				var last Progress
				opts.Progress = func(p Progress) { last = p }
				h := iohandle.NewMemory()
				w, err := New(h, opts)
				require.NoError(t, err)
				im, err := w.AddImage(spec)
				require.NoError(t, err)
				total := w.progress().TotalTiles
				err = im.ReadPlanes(bytes.NewReader(all[:len(planes[0])+5<<20])) // plane 1 cut after its first piece
				require.ErrorIs(t, err, io.ErrUnexpectedEOF)
				cutOff := w.progress().TotalTiles - total
				assert.Positive(t, cutOff, "tiles of plane 1 were stored")
				require.NoError(t, im.WritePlane(1, 0, 0, planes[1]))
				require.NoError(t, w.Close())
				compareFiles(t, clean, h.Bytes(), true) // the UUID derives from the tiles the directories name
				assert.Equal(t, Progress{Tiles: total + cutOff, TotalTiles: total + cutOff, Bytes: int64(len(h.Bytes()))}, last)
			})
		}
	}
}

// writeZPlanes writes an image of planes along Z, each whole, in memory.
func writeZPlanes(t *testing.T, opts Options, spec ImageSpec, planes [][]byte) []byte {
	t.Helper()
	return writeMemory(t, opts, func(w *Writer) error {
		im, err := w.AddImage(spec)
		require.NoError(t, err)
		for z, pix := range planes {
			require.NoError(t, im.WritePlane(z, 0, 0, pix))
		}
		return nil
	})
}

var errReader = errors.New("the reader broke")

type failingReader struct{ left int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, errReader
	}
	n := min(len(p), f.left)
	clear(p[:n])
	f.left -= n
	return n, nil
}

// stuckReader returns neither bytes nor an error.
type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func TestReadPlanesErrors(t *testing.T) {
	spec := ImageSpec{SizeX: 64, SizeY: 64, SizeZ: 4}
	opts := Options{Compression: None}
	// A failing input is an error of ReadPlanes, not of the writer: the
	// missing planes can still be written, in memory and to a file.
	inputs := []struct {
		name  string
		r     func() io.Reader
		err   error
		whole int // planes read before the failure
	}{
		{"reader error", func() io.Reader { return &failingReader{left: 64 * 64 * 2} }, errReader, 2},
		{"reader makes no progress", func() io.Reader { return stuckReader{} }, io.ErrNoProgress, 0},
	}
	for _, in := range inputs {
		for _, toFile := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, to a file: %t", in.name, toFile), func(t *testing.T) {
				var h iohandle.Handle = iohandle.NewMemory()
				if toFile {
					f, err := iohandle.Create(filepath.Join(t.TempDir(), "out.ome.tif"), iohandle.Options{NoSync: true})
					require.NoError(t, err)
					h = f
				}
				w, err := New(h, opts)
				require.NoError(t, err)
				im, err := w.AddImage(spec)
				require.NoError(t, err)
				require.ErrorIs(t, im.ReadPlanes(in.r()), in.err)
				for z := in.whole; z < 4; z++ {
					require.NoError(t, im.WritePlane(z, 0, 0, make([]byte, 64*64)))
				}
				require.NoError(t, w.Close())
			})
		}
	}
	t.Run("a plane already started", func(t *testing.T) {
		w, err := New(iohandle.NewMemory(), opts)
		require.NoError(t, err)
		im, err := w.AddImage(spec)
		require.NoError(t, err)
		_, err = im.Plane(1, 0, 0)
		require.NoError(t, err)
		require.ErrorIs(t, im.ReadPlanes(bytes.NewReader(make([]byte, 4*64*64))), ErrPlane)
		require.NoError(t, w.Abort())
	})
	t.Run("after Close", func(t *testing.T) {
		w, err := New(iohandle.NewMemory(), opts)
		require.NoError(t, err)
		im, err := w.AddImage(spec)
		require.NoError(t, err)
		require.NoError(t, im.ReadPlanes(bytes.NewReader(make([]byte, 4*64*64))))
		require.NoError(t, w.Close())
		require.ErrorIs(t, im.ReadPlanes(bytes.NewReader(nil)), ErrClosed)
	})
	t.Run("output fails", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.ome.tif")
		f, err := iohandle.Create(path, iohandle.Options{NoSync: true, BufferSize: 4096})
		require.NoError(t, err)
		w, err := New(iohandletest.NewFaulty(f, iohandletest.Faults{Write: 2}), opts)
		require.NoError(t, err)
		im, err := w.AddImage(spec)
		require.NoError(t, err)
		err = im.ReadPlanes(bytes.NewReader(make([]byte, 4*64*64)))
		require.ErrorIs(t, err, iohandletest.ErrInjected)
		require.ErrorIs(t, w.Close(), iohandletest.ErrInjected)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries)
	})
	t.Run("the context is cancelled between reads", func(t *testing.T) {
		// Planes of 1 MiB that are their own tile: copied 4 to a read.
		big := ImageSpec{SizeX: 1024, SizeY: 1024, SizeZ: 8}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w, err := NewContext(ctx, iohandle.NewMemory(), Options{Compression: None, TileSize: 1024})
		require.NoError(t, err)
		im, err := w.AddImage(big)
		require.NoError(t, err)
		require.True(t, im.tileIsPlane())
		r := cancellingReader{r: bytes.NewReader(make([]byte, 8*im.PlaneBytes())), cancel: cancel}
		require.ErrorIs(t, im.ReadPlanes(r), context.Canceled)
		require.ErrorIs(t, w.Close(), context.Canceled)
	})
}

// cancellingReader cancels a context when it is first read.
type cancellingReader struct {
	r      io.Reader
	cancel func()
}

func (c cancellingReader) Read(p []byte) (int, error) {
	c.cancel()
	return c.r.Read(p)
}

// TestTruncateTDuringReadPlanes: TruncateT on an image whose planes
// ReadPlanes is copying into the file (each plane its own tile), its
// reader stalled mid-plane, is ErrPlane at once: it does not wait for the
// writer's lock, which ReadPlanes holds while it reads.
func TestTruncateTDuringReadPlanes(t *testing.T) {
	w, err := New(iohandle.NewMemory(), Options{Compression: None})
	require.NoError(t, err)
	defer w.Abort()
	im, err := w.AddImage(ImageSpec{SizeX: 64, SizeY: 64, SizeT: 3, PixelType: Uint16})
	require.NoError(t, err)
	require.True(t, im.tileIsPlane())
	pr, pw := io.Pipe()
	read := make(chan error, 1)
	go func() { read <- im.ReadPlanes(pr) }()
	_, err = pw.Write(make([]byte, im.PlaneBytes()+100)) // plane 0, and plane 1 begun
	require.NoError(t, err)
	truncated := make(chan error, 1)
	go func() { truncated <- im.TruncateT(1) }()
	select {
	case err := <-truncated:
		require.ErrorIs(t, err, ErrPlane)
		assert.ErrorContains(t, err, "whose planes ReadPlanes is writing")
	case <-time.After(time.Minute): // a hang, not a timing
		pw.Close()
		t.Fatal("TruncateT waits for ReadPlanes's reader")
	}
	require.NoError(t, pw.Close())
	assert.Error(t, <-read, "the input ended mid-plane")
	var nilImage *Image
	assert.Equal(t, ImageSpec{}, nilImage.Spec())
}

// panicReader reads from r until after bytes have gone, then panics.
type panicReader struct {
	r     io.Reader
	after int
}

func (p *panicReader) Read(b []byte) (int, error) {
	if p.after <= 0 {
		panic("the reader fails")
	}
	n, err := p.r.Read(b[:min(len(b), p.after)])
	p.after -= n
	return n, err
}

// TestReadPlanesReaderPanics: a reader that panics, in each of
// ReadPlanes' ways (the planes copied straight, buffered, or streamed in
// pieces of planes larger than readChunk), leaves a writer that the
// caller who recovers can still use: the planes read whole are written,
// the others (the one streamed halfway given back) may be written again,
// and a deferred Abort returns (it waited for ever on the output's lock,
// which the straight copy held around the reader).
func TestReadPlanesReaderPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec ImageSpec
		comp Compression
		tile int
	}{
		{"straight", ImageSpec{SizeX: 64, SizeY: 64, SizeT: 8}, None, 64},
		{"buffered", ImageSpec{SizeX: 64, SizeY: 64, SizeT: 8}, Deflate, 64},
		{"streamed", ImageSpec{SizeX: 1536, SizeY: 1536, SizeT: 3, PixelType: Uint16}, Deflate, 512}, // 4.5 MiB a plane
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			w, err := New(iohandle.NewMemory(), Options{Compression: tc.comp, Levels: 1, TileSize: tc.tile})
			require.NoError(t, err)
			im, err := w.AddImage(spec)
			require.NoError(t, err)
			planes, all := rawPlanes(spec)
			recovered := make(chan any, 1)
			go func() {
				defer func() { recovered <- recover() }()
				_ = im.ReadPlanes(&panicReader{r: bytes.NewReader(all), after: len(planes[0]) + len(planes[1])/2})
			}()
			require.Equal(t, "the reader fails", <-recovered)
			done := make(chan error, 1)
			go func() {
				for p, pix := range planes {
					if ok, _ := im.PlaneComplete(0, 0, p); !ok {
						if err := im.WritePlane(0, 0, p, pix); err != nil {
							done <- err
							return
						}
					}
				}
				done <- w.Close()
			}()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("the writer is stuck after the reader panicked")
			}
		})
	}
}
