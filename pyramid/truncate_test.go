package pyramid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// truncateDoc returns the Image element of a document for an image of 2
// focal planes, 2 channels and sizeT time points in order, with a Plane
// element for each plane of planes ({z, c, t}).
func truncateDoc(t *testing.T, order DimensionOrder, sizeT int, planes ...[3]int) *OMEImage {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, `%s<Image ID="Image:0" Name="time-lapse"><Pixels ID="Pixels:0" DimensionOrder="%s" Type="uint8" SizeX="300" SizeY="200" SizeZ="2" SizeC="2" SizeT="%d">`, omeRoot, order, sizeT)
	b.WriteString(`<Channel ID="Channel:0:0" Name="GFP"/><Channel ID="Channel:0:1" Name="RFP"/><TiffData/>`)
	for _, p := range planes {
		fmt.Fprintf(&b, `<Plane TheZ="%d" TheC="%d" TheT="%d" ExposureTime="%d"/>`, p[0], p[1], p[2], 10+p[2])
	}
	b.WriteString(`</Pixels></Image>` + omeEnd)
	doc, err := ParseOME(b.Bytes())
	require.NoError(t, err)
	return doc.Image(0)
}

// TestTruncateT: an acquisition of 5 time points stopped after 3, with a
// plane of the fourth written and another given back, closes as the file
// of an image added with SizeT 3: the same pixels and the same OME-XML
// (UUID included, derived from the tiles the directories name), in every
// DimensionOrder, the plane metadata of later time points dropped. The
// planes of later time points are refused once it is truncated, and so
// is TruncateT while one of them is open.
func TestTruncateT(t *testing.T) {
	const sizeT, kept = 5, 3
	for _, order := range []DimensionOrder{XYZCT, XYTZC, XYCTZ} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, workers %d", order, workers), func(t *testing.T) {
				opts := Options{Compression: LZW, Workers: workers, TileSize: 128}
				spec := ImageSpec{SizeX: 300, SizeY: 200, SizeZ: 2, SizeC: 2, SizeT: sizeT, DimensionOrder: order, PixelType: Uint8,
					PlaneInfo: []Plane{{Z: 1, C: 0, T: 1, DeltaT: Quantity{Value: 1.5, Unit: "s"}}, {Z: 0, C: 1, T: 4, DeltaT: Quantity{Value: 4, Unit: "s"}}}}
				spec.OME = truncateDoc(t, order, sizeT, [3]int{0, 1, 2}, [3]int{1, 1, 3})
				pix := func(z, c, tt int) []byte {
					return randomPlane(300, 200, 1, Uint8, uint64(100*z+10*c+tt), false).pix
				}

				want := spec
				want.SizeT, want.PlaneInfo = kept, spec.PlaneInfo[:1]
				want.OME = truncateDoc(t, order, kept, [3]int{0, 1, 2})
				clean := writeMemory(t, opts, func(w *Writer) error {
					im, err := w.AddImage(want)
					require.NoError(t, err)
					for p := range want.Planes() {
						z, c, tt := want.PlaneCoords(p)
						require.NoError(t, im.WritePlane(z, c, tt, pix(z, c, tt)))
					}
					return nil
				})

				h := iohandle.NewMemory()
				w, err := New(h, opts)
				require.NoError(t, err)
				im, err := w.AddImage(spec)
				require.NoError(t, err)
				require.NoError(t, im.WritePlane(0, 0, 3, pix(0, 0, 3)), "a plane of a time point dropped, written whole")
				later, err := im.Plane(1, 1, 3)
				require.NoError(t, err)
				_, err = later.Write(pix(1, 1, 3)[:300*150])
				require.NoError(t, err)
				err = im.TruncateT(kept)
				assert.ErrorIs(t, err, ErrPlane, "a plane dropped is open")
				assert.ErrorContains(t, err, "plane z=1 c=1 t=3 is open")
				assert.Equal(t, sizeT, im.Spec().SizeT, "nothing changed")
				require.NoError(t, later.Abort())

				// Every kept plane but one, from the last; that one half
				// written, open while the image is truncated.
				for p := want.Planes() - 1; p > 0; p-- {
					z, c, tt := want.PlaneCoords(p)
					require.NoError(t, im.WritePlane(z, c, tt, pix(z, c, tt)))
				}
				first, err := im.Plane(0, 0, 0)
				require.NoError(t, err)
				_, err = first.Write(pix(0, 0, 0)[:300*100])
				require.NoError(t, err)

				require.NoError(t, im.TruncateT(kept))
				got := im.Spec()
				assert.Equal(t, kept, got.SizeT)
				assert.Equal(t, want.PlaneInfo, got.PlaneInfo)
				for _, n := range []int{kept + 1, sizeT, 0, -1} {
					err := im.TruncateT(n)
					assert.ErrorIs(t, err, ErrSize, "TruncateT(%d)", n)
					assert.ErrorContains(t, err, fmt.Sprintf("TruncateT(%d) on image 0 of 3 time points: it keeps 1 to 3", n))
				}
				_, err = im.Plane(0, 0, sizeT)
				assert.ErrorIs(t, err, ErrPlane)
				assert.ErrorContains(t, err, "outside Z 2, C 2, T 3", "the SizeT it has now")
				err = im.WritePlane(1, 0, 3, pix(1, 0, 3))
				assert.ErrorIs(t, err, ErrPlane, "a time point dropped")
				assert.ErrorContains(t, err, "TruncateT kept 3 time points")
				_, err = im.Plane(0, 0, 4)
				assert.ErrorIs(t, err, ErrPlane)
				assert.ErrorIs(t, im.ReadPlanes(bytes.NewReader(nil)), ErrPlane)

				_, err = first.Write(pix(0, 0, 0)[300*100:])
				require.NoError(t, err)
				require.NoError(t, first.Close())
				require.NoError(t, w.Close())
				compareFiles(t, clean, h.Bytes(), true)
				final := w.progress()
				assert.Equal(t, final.Tiles, final.TotalTiles, "the tiles of the planes dropped are counted in both")
			})
		}
	}
}

// TestTruncateTMissing: the planes of the time points kept are still due
// at Close, and only those are listed missing; a second TruncateT shrinks
// further, and the writer closes once they are written.
func TestTruncateTMissing(t *testing.T) {
	spec := ImageSpec{SizeX: 40, SizeY: 30, SizeC: 2, SizeT: 4, DimensionOrder: XYTZC, PixelType: Uint16}
	w, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w.Abort()
	im, err := w.AddImage(spec)
	require.NoError(t, err)
	plane := make([]byte, im.PlaneBytes())
	require.NoError(t, im.WritePlane(0, 1, 0, plane))
	require.NoError(t, im.TruncateT(3))
	require.NoError(t, im.TruncateT(2))
	assert.ErrorIs(t, im.TruncateT(3), ErrSize, "it never grows")
	require.NoError(t, im.TruncateT(2), "the same again")

	other, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer other.Abort()
	missing, err := other.AddImage(spec)
	require.NoError(t, err)
	require.NoError(t, missing.TruncateT(1))
	err = missing.WritePlane(0, 0, 1, plane)
	assert.ErrorIs(t, err, ErrPlane)
	assert.True(t, strings.HasSuffix(err.Error(), "TruncateT kept 1 time point"), err)
	err = other.Close()
	assert.ErrorIs(t, err, ErrMissingPlanes)
	assert.ErrorContains(t, err, "2 missing: image 0 z=0 c=0 t=0, image 0 z=0 c=1 t=0")

	for _, p := range [][2]int{{0, 0}, {1, 0}, {1, 1}} {
		require.NoError(t, im.WritePlane(0, p[1], p[0], plane))
	}
	require.NoError(t, w.Close())
	assert.ErrorIs(t, im.TruncateT(1), ErrClosed)
}

// TestInteropTruncateT: tifffile reads a truncated image, written with
// the time points inside the other dimensions (XYTZC), at its new shape
// with every plane's pixels in place, and its OME-XML is valid.
func TestInteropTruncateT(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	needSchema(t)
	spec := ImageSpec{SizeX: 70, SizeY: 50, SizeZ: 2, SizeC: 2, SizeT: 6, DimensionOrder: XYTZC, PixelType: Uint16,
		PlaneInfo: []Plane{{Z: 1, C: 1, T: 1, DeltaT: Quantity{Value: 2, Unit: "s"}}, {T: 5, DeltaT: Quantity{Value: 10, Unit: "s"}}}}
	pix := func(z, c, tt int) []byte { return randomPlane(70, 50, 1, Uint16, uint64(100*z+10*c+tt), false).pix }
	dir := t.TempDir()
	path := filepath.Join(dir, "stopped.ome.tif")
	w, err := Create(path, Options{Compression: Deflate, TileSize: 32})
	require.NoError(t, err)
	defer w.Abort()
	im, err := w.AddImage(spec)
	require.NoError(t, err)
	for p := range spec.Planes() {
		if z, c, tt := spec.PlaneCoords(p); tt < 4 {
			require.NoError(t, im.WritePlane(z, c, tt, pix(z, c, tt)))
		}
	}
	require.NoError(t, im.TruncateT(3))
	require.NoError(t, w.Close())

	kept := im.Spec()
	var want []byte
	for p := range kept.Planes() {
		want = append(want, pix(kept.PlaneCoords(p))...)
	}
	raw := filepath.Join(dir, "pixels.raw")
	var got struct {
		Series []tifffileSeries `json:"series"`
	}
	out := interop.RunPython(t, tifffileSummary, path, "0,0", raw)
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got.Series, 1)
	assert.Equal(t, []int{2, 2, 3, 50, 70}, got.Series[0].Shape, got.Series[0].Axes)
	data, err := os.ReadFile(raw)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, data), "pixels")

	file, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := readback.Parse(file)
	require.NoError(t, err)
	description := f.IFDs[0].Text(tiff.TagImageDescription)
	assert.Contains(t, description, `SizeT="3"`)
	assert.Contains(t, description, `<TiffData IFD="0" PlaneCount="12">`)
	assert.NotContains(t, description, `TheT="5"`)
	xml := filepath.Join(dir, "ome.xml")
	require.NoError(t, os.WriteFile(xml, []byte(description), 0o644))
	r := interop.Run("xmllint", "--noout", "--nonet", "--schema", schemaPath(), xml)
	require.NoError(t, r.Err, r.Stderr)
}

// TestTruncateTConcurrent: TruncateT and Spec called while other
// goroutines write the planes kept (run under -race by make test) give the
// file of the image added with the SizeT kept.
func TestTruncateTConcurrent(t *testing.T) {
	spec := ImageSpec{SizeX: 200, SizeY: 150, SizeC: 4, SizeT: 5, DimensionOrder: XYTCZ, PixelType: Uint8}
	pix := func(c, tt int) []byte { return randomPlane(200, 150, 1, Uint8, uint64(10*c+tt), false).pix }
	opts := Options{Compression: Zstd, Workers: 2, TileSize: 64}
	want := spec
	want.SizeT = 2
	clean := writeMemory(t, opts, func(w *Writer) error {
		im, err := w.AddImage(want)
		require.NoError(t, err)
		for c := range 4 {
			for tt := range 2 {
				require.NoError(t, im.WritePlane(0, c, tt, pix(c, tt)))
			}
		}
		return nil
	})
	for range 5 {
		data := writeMemory(t, opts, func(w *Writer) error {
			im, err := w.AddImage(spec)
			require.NoError(t, err)
			errs := make(chan error, 4)
			for c := range 4 {
				go func() {
					var err error
					for tt := range 2 {
						if err == nil {
							err = im.WritePlane(0, c, tt, pix(c, tt))
						}
					}
					errs <- err
				}()
			}
			require.NoError(t, im.TruncateT(3))
			_ = im.Spec()
			require.NoError(t, im.TruncateT(2))
			for range 4 {
				require.NoError(t, <-errs)
			}
			return nil
		})
		compareFiles(t, clean, data, true)
	}
}

// TestTruncateTEncoded: an image given encoded truncates as the others do,
// and the plane that stops TruncateT is named with the Abort that gives it
// back.
func TestTruncateTEncoded(t *testing.T) {
	levels, tiles := factor4Source(t)
	spec := ImageSpec{SizeX: 300, SizeY: 200, SizeT: 3, PixelType: Uint8}
	var files [2][]byte
	for i, sizeT := range []int{3, 1} {
		s := spec
		s.SizeT = sizeT
		files[i] = writeMemory(t, Options{}, func(w *Writer) error {
			im, err := w.AddEncodedImage(s, levels...)
			require.NoError(t, err)
			write := func(tt int) *EncodedPlaneWriter {
				ep, err := im.EncodedPlane(0, 0, tt)
				require.NoError(t, err)
				for l := range tiles {
					for _, tile := range tiles[l] {
						require.NoError(t, ep.WriteTile(l, tile))
					}
				}
				return ep
			}
			require.NoError(t, write(0).Close())
			if sizeT == 1 {
				return nil
			}
			open, err := im.EncodedPlane(0, 0, 2)
			require.NoError(t, err)
			require.NoError(t, open.WriteTile(0, tiles[0][0]))
			err = im.TruncateT(1)
			assert.ErrorIs(t, err, ErrPlane)
			assert.ErrorContains(t, err, "plane z=0 c=0 t=2 is open: complete it or give it back (EncodedPlaneWriter.Abort) first")
			require.NoError(t, open.Abort())
			require.NoError(t, write(1).Close())
			return im.TruncateT(1)
		})
	}
	compareFiles(t, files[1], files[0], true)
}

// TestTruncateTSpecRoundTrip: the Spec of a truncated image, its OME
// element included, is taken by another writer's AddImage as it is, and
// gives the same file; truncated again, it gives the file of the smaller
// SizeT.
func TestTruncateTSpecRoundTrip(t *testing.T) {
	spec := ImageSpec{SizeX: 300, SizeY: 200, SizeZ: 2, SizeC: 2, SizeT: 5, DimensionOrder: XYCTZ, PixelType: Uint8,
		PlaneInfo: []Plane{{T: 1, DeltaT: Quantity{Value: 1, Unit: "s"}}, {T: 4, DeltaT: Quantity{Value: 4, Unit: "s"}}}}
	spec.OME = truncateDoc(t, XYCTZ, 5, [3]int{0, 1, 2}, [3]int{1, 1, 3})
	pix := func(z, c, tt int) []byte { return randomPlane(300, 200, 1, Uint8, uint64(100*z+10*c+tt), false).pix }
	write := func(spec ImageSpec, keep ...int) ([]byte, ImageSpec) {
		var got ImageSpec
		data := writeMemory(t, Options{}, func(w *Writer) error {
			im, err := w.AddImage(spec)
			if err != nil {
				return err
			}
			for _, n := range keep {
				require.NoError(t, im.TruncateT(n))
			}
			got = im.Spec()
			for p := range got.Planes() {
				z, c, tt := got.PlaneCoords(p)
				require.NoError(t, im.WritePlane(z, c, tt, pix(z, c, tt)))
			}
			return nil
		})
		return data, got
	}
	truncated, got := write(spec, 3)
	again, _ := write(got)
	compareFiles(t, truncated, again, true)
	assert.NoError(t, got.OME.Check(got))
	raised := got
	raised.SizeT = 4 // the view is of 3 time points: its dropped Plane elements do not come back
	err := raised.OME.Check(raised)
	assert.ErrorIs(t, err, ErrOMEConflict)
	assert.ErrorContains(t, err, "Pixels@SizeT")
	assert.ErrorContains(t, err, "5, of which TruncateT kept 3; the image is 4 time points")

	twice, _ := write(spec, 3, 2)
	fromSpec, _ := write(got, 2)
	compareFiles(t, twice, fromSpec, true)
	direct := spec
	direct.SizeT, direct.PlaneInfo, direct.OME = 2, spec.PlaneInfo[:1], truncateDoc(t, XYCTZ, 2)
	want, _ := write(direct)
	compareFiles(t, want, twice, true)
}

// TestTruncateTSpecFromReader: Spec called from the reader ReadPlanes
// copies straight into the output, which holds the writer's lock while it
// reads, returns; it once waited for that lock for ever.
func TestTruncateTSpecFromReader(t *testing.T) {
	// No deferred Abort: it too would wait for ever on a regression.
	w, err := New(iohandle.NewMemory(), Options{Compression: None, TileSize: 16})
	require.NoError(t, err)
	im, err := w.AddImage(ImageSpec{SizeX: 16, SizeY: 16, SizeT: 2, PixelType: Uint8})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		done <- im.ReadPlanes(readerFunc(func(p []byte) (int, error) {
			if im.Spec().SizeT != 2 {
				return 0, errReader
			}
			clear(p)
			return len(p), nil
		}))
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("ReadPlanes still waits: Spec, called from its reader, takes a lock it holds")
	}
	require.NoError(t, w.Close())
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestTruncateTDirectories: the directories of the planes TruncateT drops
// are free again for the images added after, up to what package tiff
// reads.
func TestTruncateTDirectories(t *testing.T) {
	w, err := New(iohandle.NewMemory(), Options{Levels: 1})
	require.NoError(t, err)
	defer w.Abort()
	im, err := w.AddImage(ImageSpec{SizeX: 1, SizeY: 1, SizeT: tiff.MaxDirectories, PixelType: Uint8})
	require.NoError(t, err)
	_, err = w.AddImage(ImageSpec{SizeX: 1, SizeY: 1, PixelType: Uint8})
	require.ErrorIs(t, err, ErrSize, "the file is full")
	require.NoError(t, im.TruncateT(tiff.MaxDirectories-2))
	for range 2 {
		_, err = w.AddImage(ImageSpec{SizeX: 1, SizeY: 1, PixelType: Uint8})
		require.NoError(t, err)
	}
	_, err = w.AddImage(ImageSpec{SizeX: 1, SizeY: 1, PixelType: Uint8})
	require.ErrorIs(t, err, ErrSize, "full again")
}
