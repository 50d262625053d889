package pyramid

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/iohandle/iohandletest"
	"github.com/ometiff-go/ometiff/tiff"
)

// requireOnePrefix fails unless err's message carries this package's
// prefix once and no other package's.
func requireOnePrefix(t testing.TB, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) || strings.Count(msg, prefix) != 1 {
		t.Fatalf("want one %q at the start: %q", prefix, msg)
	}
	for _, other := range []string{"compress: ", "tiff: ", "iohandle: ", "ifd: "} {
		if strings.Contains(msg, other) {
			t.Fatalf("another package's prefix %q in %q", other, msg)
		}
	}
}

// TestBadOptionNamesItsField: each bad option is reported alone, by name,
// with one prefix; a bad compression level is ErrOption and
// compress.ErrLevel, in this package's words.
func TestBadOptionNamesItsField(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{Levels: -1}, "pyramid: bad option: Levels -1 is negative"},
		{Options{Downsampling: 5}, "pyramid: bad option: Downsampling 5"},
		{Options{Compression: 9}, "pyramid: bad option: Compression 9"},
		{Options{Predictor: 7}, "pyramid: bad option: Predictor 7"},
		{Options{TileSize: 24}, "pyramid: bad option: TileSize 24 is not a multiple of 16 between 16 and 32768"},
		{Options{BigTIFF: 4}, "pyramid: bad option: BigTIFF 4"},
		{Options{Workers: -1}, "pyramid: bad option: Workers -1 is negative"},
		{Options{Levels: -1, Workers: -2}, "pyramid: bad option: Levels -1 is negative"},
		{Options{Compression: Deflate, Level: 99}, "pyramid: bad option: Level 99: Deflate takes 1 to 9 (0 for the default, 3)"},
		{Options{Compression: Zstd, Level: -1}, "pyramid: bad option: Level -1: Zstd takes 1 to 22 (0 for the default, 3)"},
	}
	for _, tc := range tests {
		_, err := New(iohandle.NewMemory(), tc.opts)
		require.ErrorIs(t, err, ErrOption, "%+v", tc.opts)
		assert.Equal(t, tc.want, err.Error())
		requireOnePrefix(t, err)
		if tc.opts.Level != 0 {
			assert.ErrorIs(t, err, compress.ErrLevel)
		}
	}
}

// TestCreateExistingNamesReplace: an existing destination is an error that
// says how to replace it, matches fs.ErrExist, and names no other package.
func TestCreateExistingNamesReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "there.ome.tif")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
	_, err := Create(path, Options{})
	require.ErrorIs(t, err, fs.ErrExist)
	require.ErrorIs(t, err, iohandle.ErrExist)
	assert.Equal(t, "pyramid: "+path+" exists (to replace it, give New a handle from iohandle.Create with Options.Replace)", err.Error())
	requireOnePrefix(t, err)
	w := createNoSync(t, path, iohandle.Options{Replace: true}, Options{})
	im, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4})
	require.NoError(t, err)
	require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 16)))
	require.NoError(t, w.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "II", string(data[:2]), "the file replaced")
}

// TestCreateRefusesUpFront: what Create and New can tell before any work,
// they refuse with this package's errors: no path, a directory (which
// Options.Replace could not replace either), a handle holding bytes.
func TestCreateRefusesUpFront(t *testing.T) {
	_, err := Create("", Options{})
	require.ErrorIs(t, err, ErrOption)
	assert.Equal(t, `pyramid: bad option: no path ("")`, err.Error())

	dir := t.TempDir()
	_, err = Create(dir, Options{})
	require.ErrorIs(t, err, fs.ErrExist)
	assert.Equal(t, "pyramid: "+dir+" is a directory", err.Error())
	_, err = iohandle.Create(dir, iohandle.Options{Replace: true})
	require.ErrorIs(t, err, iohandle.ErrExist)
	assert.ErrorContains(t, err, dir+" is a directory")

	h := iohandle.NewMemory()
	_, err = h.Write([]byte("II*\x00"))
	require.NoError(t, err)
	_, err = New(h, Options{})
	require.ErrorIs(t, err, ErrOption)
	assert.Equal(t, "pyramid: bad option: the output handle already holds 4 bytes", err.Error())

}

// TestCreateNameNotXML: a file whose name XML cannot carry (a control
// character, bytes not UTF-8) is written, its TiffData without the UUID
// that would name it, and its OME-XML stays XML.
func TestCreateNameNotXML(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"ctl\x01.ome.tif", "bad\xff.ome.tif", "plain.ome.tif"} {
		path := filepath.Join(dir, name)
		w, err := Create(path, Options{})
		require.NoError(t, err, name)
		im, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4})
		require.NoError(t, err)
		require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 16)))
		require.NoError(t, w.Close())
		f, err := tiff.Open(path)
		require.NoError(t, err)
		d := f.Pages[0].Description()
		f.Close()
		assert.NoError(t, xml.Unmarshal([]byte(d), new(struct{})), name)
		assert.Equal(t, name == "plain.ome.tif", strings.Contains(d, `FileName="plain.ome.tif"`), name)
	}
}

// TestWrapLower: errors of the layers below pass unchanged, whatever their
// text says, except tiff's ErrTooLarge, described as this package's; this
// package's own errors pass unchanged.
func TestWrapLower(t *testing.T) {
	foreign := errors.New("pyramid: an error of another package that looks like ours")
	assert.Same(t, foreign, wrapLower(foreign))
	assert.Same(t, io.ErrShortWrite, wrapLower(io.ErrShortWrite))
	ours := ErrData
	assert.Same(t, ours, wrapLower(ours))
	assert.Nil(t, wrapLower(nil))
}

// TestArgumentErrorsKeepTheWriter: a call refused for its arguments takes
// nothing and leaves the writer as it was: the planes can still be written
// and Close commits a correct file.
func TestArgumentErrorsKeepTheWriter(t *testing.T) {
	spec := ImageSpec{SizeX: 20, SizeY: 10, SizeZ: 2, PixelType: Uint16}
	set := makePlaneSet(spec, 4, false)
	want := writeSequential(t, Options{TileSize: 16}, []planeSet{set})
	cases := []struct {
		name string
		bad  func(w *Writer, im *Image) error
		kind error
	}{
		{"AddImage with a bad size", func(w *Writer, _ *Image) error { _, err := w.AddImage(ImageSpec{SizeX: -1, SizeY: 1}); return err }, ErrSize},
		{"AddImage with a bad pixel type", func(w *Writer, _ *Image) error {
			_, err := w.AddImage(ImageSpec{SizeX: 1, SizeY: 1, PixelType: Int8, SamplesPerPixel: 3})
			return err
		}, ErrPixelType},
		{"AddImage with bad metadata", func(w *Writer, _ *Image) error {
			_, err := w.AddImage(ImageSpec{SizeX: 1, SizeY: 1, Name: "\x00"})
			return err
		}, ErrMetadata},
		{"a plane out of range", func(_ *Writer, im *Image) error { return im.WritePlane(0, 1, 0, set.planes[0]) }, ErrPlane},
		{"a short plane", func(_ *Writer, im *Image) error { return im.WritePlane(0, 0, 0, set.planes[0][1:]) }, ErrData},
		{"samples of another type", func(_ *Writer, im *Image) error { return WriteSamples(im, 0, 0, 0, make([]int16, 200)) }, ErrData},
		{"rows past the end", func(_ *Writer, im *Image) error {
			pw, err := im.Plane(0, 0, 0)
			if err != nil {
				return err
			}
			if _, err := pw.Write(append(set.planes[0], 0, 0)); !errors.Is(err, ErrData) {
				return err
			}
			return pw.writeAll(set.planes[0])
		}, nil},
		{"ReadPlanes's input ends", func(_ *Writer, im *Image) error { return im.ReadPlanes(strings.NewReader("short")) }, ErrData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := writeMemory(t, Options{TileSize: 16}, func(w *Writer) error {
				im, err := w.AddImage(spec)
				if err != nil {
					return err
				}
				if err := tc.bad(w, im); tc.kind != nil {
					require.ErrorIs(t, err, tc.kind)
					requireOnePrefix(t, err)
				} else if err != nil {
					return err
				}
				for p, pix := range set.planes {
					z, c, tt := im.Spec().PlaneCoords(p)
					if err := im.WritePlane(z, c, tt, pix); err != nil && !(p == 0 && errors.Is(err, ErrPlane)) {
						return err // plane 0 may be written by the case already
					}
				}
				return nil
			})
			compareFiles(t, want, got, true)
		})
	}
}

// TestFailuresCloseTheWriter: a failure of the writing itself (the output,
// the context, a file too large) fails the writer: every later call is
// ErrClosed wrapping it, with one prefix, Close returns it and discards the
// output.
func TestFailuresCloseTheWriter(t *testing.T) {
	cases := []struct {
		name  string
		opts  Options
		setup func(h iohandle.Handle) iohandle.Handle
		fail  func(w *Writer, im *Image, cancel func()) error
		cause error
	}{
		{"the output fails", Options{Compression: None},
			func(h iohandle.Handle) iohandle.Handle {
				return iohandletest.NewFaulty(h, iohandletest.Faults{Write: 2})
			},
			func(_ *Writer, im *Image, _ func()) error { return im.WritePlane(0, 0, 0, make([]byte, 256*256)) }, iohandletest.ErrInjected},
		{"the output fails, compressed", Options{Compression: LZW, Workers: 2},
			func(h iohandle.Handle) iohandle.Handle {
				return iohandletest.NewFaulty(h, iohandletest.Faults{Write: 2})
			},
			func(w *Writer, im *Image, _ func()) error {
				for z := range 2 {
					if err := im.WritePlane(z, 0, 0, make([]byte, 256*256)); err != nil {
						return err
					}
				}
				return w.Close()
			}, iohandletest.ErrInjected},
		{"the context is cancelled", Options{Compression: None}, nil,
			func(_ *Writer, im *Image, cancel func()) error {
				cancel()
				return im.WritePlane(0, 0, 0, make([]byte, 256*256))
			}, context.Canceled},
		{"the file needs BigTIFF", Options{Compression: None, BigTIFF: BigTIFFNever},
			func(h iohandle.Handle) iohandle.Handle { return &pastHandle{} }, // its output starts near 4 GiB
			func(_ *Writer, im *Image, _ func()) error { return im.WritePlane(0, 0, 0, make([]byte, 256*256)) }, ErrTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f, err := iohandle.Create(filepath.Join(dir, "out.ome.tif"), iohandle.Options{NoSync: true, BufferSize: 4096})
			require.NoError(t, err)
			var h iohandle.Handle = f
			if tc.setup != nil {
				h = tc.setup(f)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w, err := NewContext(ctx, h, tc.opts)
			require.NoError(t, err)
			if past, ok := h.(*pastHandle); ok {
				past.skip = math.MaxUint32 - 10_000
			}
			im, err := w.AddImage(ImageSpec{SizeX: 256, SizeY: 256, SizeZ: 2})
			require.NoError(t, err)
			err = tc.fail(w, im, cancel)
			require.ErrorIs(t, err, tc.cause)
			later := []error{im.WritePlane(1, 0, 0, make([]byte, 256*256))}
			_, err = w.AddImage(ImageSpec{SizeX: 1, SizeY: 1})
			later = append(later, err)
			for _, err := range later {
				require.ErrorIs(t, err, ErrClosed)
				require.ErrorIs(t, err, tc.cause)
				assert.True(t, strings.HasPrefix(err.Error(), prefix), err.Error())
				assert.Equal(t, 1, strings.Count(err.Error(), prefix), "one prefix of this package: %s", err)
			}
			require.ErrorIs(t, w.Close(), tc.cause)
			_ = f.Abort() // the pastHandle case never used f
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries)
		})
	}
}

// TestEndingTwice: after Close or Abort, a later Close returns nil if the
// file was committed and ErrClosed otherwise, and a later Abort returns nil
// and leaves a committed file alone.
func TestEndingTwice(t *testing.T) {
	type step struct {
		abort bool
		want  error // nil, ErrClosed or ErrMissingPlanes
	}
	cases := []struct {
		name     string
		complete bool // every plane written
		steps    []step
		file     bool // the file exists at the end
	}{
		{"Close, Close", true, []step{{false, nil}, {false, nil}}, true},
		{"Close, Abort", true, []step{{false, nil}, {true, nil}}, true},
		{"Close, Abort, Close", true, []step{{false, nil}, {true, nil}, {false, nil}}, true},
		{"Abort, Close", true, []step{{true, nil}, {false, ErrClosed}}, false},
		{"Abort, Abort", true, []step{{true, nil}, {true, nil}}, false},
		{"failed Close, Close", false, []step{{false, ErrMissingPlanes}, {false, ErrClosed}}, false},
		{"failed Close, Abort", false, []step{{false, ErrMissingPlanes}, {true, nil}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.ome.tif")
			w := createNoSync(t, path, iohandle.Options{}, Options{})
			im, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 8})
			require.NoError(t, err)
			if tc.complete {
				require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 64)))
			}
			for i, s := range tc.steps {
				var err error
				if s.abort {
					err = w.Abort()
				} else {
					err = w.Close()
				}
				if s.want == nil {
					require.NoError(t, err, "step %d", i)
				} else {
					require.ErrorIs(t, err, s.want, "step %d", i)
				}
			}
			if s := tc.steps[len(tc.steps)-1]; s.want == ErrClosed && !tc.complete {
				assert.ErrorIs(t, w.Close(), ErrMissingPlanes, "the ErrClosed of a failed writer wraps its failure")
			}
			_, err = os.Stat(path)
			assert.Equal(t, tc.file, err == nil, "the file exists")
		})
	}
}

// assertUnmade checks the calls on a writer, an image and plane writers
// this package did not make (zero values, or nil pointers): each gives
// ErrClosed, never a panic.
func assertUnmade(t *testing.T, w *Writer, im *Image, pw *PlaneWriter, ep *EncodedPlaneWriter) {
	t.Helper()
	_, err := w.AddImage(ImageSpec{SizeX: 16, SizeY: 16})
	assert.ErrorIs(t, err, ErrClosed, "AddImage")
	_, err = w.AddImageData(ImageSpec{}, image.NewGray(image.Rect(0, 0, 4, 4)))
	assert.ErrorIs(t, err, ErrClosed, "AddImageData")
	_, err = w.AddEncodedImage(ImageSpec{SizeX: 16, SizeY: 16})
	assert.ErrorIs(t, err, ErrClosed, "AddEncodedImage")
	assert.ErrorIs(t, w.Close(), ErrClosed, "Close")
	assert.ErrorIs(t, w.Abort(), ErrClosed, "Abort")
	assert.Equal(t, iohandle.Stats{}, w.Stats())
	assert.ErrorContains(t, w.Close(), "a zero value, not made by New, Create")

	assert.ErrorIs(t, im.WritePlane(0, 0, 0, nil), ErrClosed, "WritePlane")
	_, err = im.Plane(0, 0, 0)
	assert.ErrorIs(t, err, ErrClosed, "Plane")
	_, err = im.EncodedPlane(0, 0, 0)
	assert.ErrorIs(t, err, ErrClosed, "EncodedPlane")
	assert.ErrorIs(t, im.ReadPlanes(strings.NewReader("")), ErrClosed, "ReadPlanes")
	assert.ErrorIs(t, WriteSamples(im, 0, 0, 0, []uint8{}), ErrClosed, "WriteSamples")

	_, err = pw.Write([]byte{1})
	assert.ErrorIs(t, err, ErrClosed, "PlaneWriter.Write")
	assert.ErrorIs(t, pw.Close(), ErrClosed, "PlaneWriter.Close")
	assert.ErrorIs(t, ep.WriteTile(0, []byte{1}), ErrClosed, "WriteTile")
	_, err = ep.Write([]byte{1})
	assert.ErrorIs(t, err, ErrClosed, "EncodedPlaneWriter.Write")
	assert.ErrorIs(t, ep.Close(), ErrClosed, "EncodedPlaneWriter.Close")
}

// TestZeroValues: the writer's types are made by this package; their zero
// values, and a nil PlaneWriter, give ErrClosed (or ErrPlane) naming it,
// never a panic.
func TestZeroValues(t *testing.T) {
	var (
		w  Writer
		im Image
		pw PlaneWriter
		ep EncodedPlaneWriter
	)
	assertUnmade(t, &w, &im, &pw, &ep)
	_, err := NewSampleWriter[uint8](&pw)
	assert.ErrorIs(t, err, ErrClosed, "NewSampleWriter of a zero PlaneWriter")
	_, err = NewSampleWriter[uint8](nil)
	assert.ErrorIs(t, err, ErrPlane, "NewSampleWriter(nil)")
	var sw SampleWriter[uint16]
	_, err = sw.Write([]uint16{1})
	assert.ErrorIs(t, err, ErrClosed, "SampleWriter.Write")
	assert.ErrorIs(t, sw.Close(), ErrClosed, "SampleWriter.Close")

	// Values a caller can make that the writer cannot use: errors, where
	// they panicked.
	var part Part
	assert.ErrorIs(t, part.WritePlane(PlaneRef{}, nil), ErrClosed, "Part.WritePlane")
	_, err = part.Plane(PlaneRef{})
	assert.ErrorIs(t, err, ErrClosed, "Part.Plane")
	_, err = New(iohandle.NewMemory(), Options{OME: &OMEDocument{}})
	assert.ErrorIs(t, err, ErrOption, "a zero OMEDocument")
	live, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer live.Abort()
	_, err = live.AddImage(ImageSpec{SizeX: 4, SizeY: 4, OME: &OMEImage{}})
	assert.ErrorIs(t, err, ErrMetadata, "a zero OMEImage")
	assert.ErrorIs(t, (&OMEImage{}).Check(ImageSpec{SizeX: 4, SizeY: 4}), ErrMetadata)
	_, err = live.AddImage(ImageSpec{SizeX: 4, SizeY: 4, Channels: []Channel{{Color: (*color.RGBA)(nil)}}})
	assert.ErrorIs(t, err, ErrMetadata, "a nil colour")
	assert.ErrorContains(t, err, "Channels[0].Color is a nil *color.RGBA")
	assert.Zero(t, PixelType(8).Size(), "no such pixel type")
	assert.Zero(t, PixelType(-1).Size())
	var nilSamples *SampleWriter[uint8]
	_, err = nilSamples.Write([]uint8{1})
	assert.ErrorIs(t, err, ErrClosed, "a nil SampleWriter")
	assert.ErrorIs(t, nilSamples.Close(), ErrClosed)

	// A nil *Image (an AddImage that failed, its result kept): zeros, as
	// its Spec.
	var nilImage *Image
	assert.Zero(t, nilImage.Levels())
	assert.Zero(t, nilImage.EncodedLevels())
	assert.Zero(t, nilImage.PlaneBytes())
	assert.Zero(t, nilImage.Spec())
}

// TestAddImageDataSpecDisagrees: a spec whose layout disagrees with the
// image's is ErrData naming the field.
func TestAddImageDataSpecDisagrees(t *testing.T) {
	w, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w.Abort()
	gray := image.NewGray(image.Rect(0, 0, 4, 3))
	for spec, says := range map[*ImageSpec]string{
		{SizeT: 2}:           "the spec's SizeT is 2 where the image has 1",
		{SizeY: 4}:           "the spec's SizeY is 4 where the image has 3",
		{SamplesPerPixel: 3}: "the spec's SamplesPerPixel is 3 where the image has 1",
		{PixelType: Float32}: "the spec's PixelType is float, the image holds uint8",
	} {
		_, err := w.AddImageData(*spec, gray)
		assert.ErrorIs(t, err, ErrData)
		assert.ErrorContains(t, err, says)
	}
}

// TestNilValues: nil pointers of the writer's types, a nil handle and a
// nil reader give errors as zero values do, never a panic (a deferred
// Abort of a writer Create did not make, say).
func TestNilValues(t *testing.T) {
	assertUnmade(t, nil, nil, nil, nil)

	_, err := New(nil, Options{})
	assert.ErrorIs(t, err, ErrOption, "a nil handle")
	live, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer live.Abort()
	gray, err := live.AddImage(ImageSpec{SizeX: 4, SizeY: 4})
	require.NoError(t, err)
	assert.ErrorIs(t, gray.ReadPlanes(nil), ErrData, "a nil reader")
}

// TestPlaneCoordsOutOfRange: an index with no plane gives -1s, not the
// coordinates of another plane.
func TestPlaneCoordsOutOfRange(t *testing.T) {
	s := ImageSpec{SizeX: 1, SizeY: 1, SizeZ: 2, SizeC: 3, SizeT: 4}
	for _, p := range []int{-1, 24, 99} {
		z, c, tt := s.PlaneCoords(p)
		assert.Equal(t, [3]int{-1, -1, -1}, [3]int{z, c, tt}, "plane %d", p)
	}
	for p := range s.Planes() {
		z, c, tt := s.PlaneCoords(p)
		got, err := s.PlaneIndex(z, c, tt)
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
}

// TestOMEXMLTooLargeAtClose: a file whose OME-XML would be longer than
// MaxOMEXMLSize, which ParseOME refuses, is not committed (it was, and
// this module's readers then refused its metadata).
func TestOMEXMLTooLargeAtClose(t *testing.T) {
	// A caller's document of almost MaxOMEXMLSize, which only Close adds
	// to the images' elements.
	big := []byte(omeRoot + `<StructuredAnnotations><CommentAnnotation ID="Annotation:0"><Value>`)
	big = append(big, bytes.Repeat([]byte("x"), MaxOMEXMLSize-1000)...)
	big = append(big, `</Value></CommentAnnotation></StructuredAnnotations>`+omeEnd...)
	doc, err := ParseOME(big)
	require.NoError(t, err)
	h := iohandle.NewMemory()
	w, err := New(h, Options{OME: doc})
	require.NoError(t, err)
	defer w.Abort()
	im, err := w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, Description: strings.Repeat("a", 1000)})
	require.NoError(t, err)
	require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 16)))
	err = w.Close()
	require.ErrorIs(t, err, ErrOMETooLarge)
	assert.ErrorContains(t, err, "more than MaxOMEXMLSize (67108864), which ParseOME reads")
	assert.Nil(t, h.Bytes(), "discarded")

	// An image whose elements, as the writer makes them, pass it, though
	// its text and the least of its elements do not, is refused as it is
	// added: here 330,000 planes of 35 bytes at the least, and about 180
	// more each of PlaneInfo (it was refused at Close, every plane
	// written).
	w, err = New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w.Abort()
	const planes = 330000
	spec := ImageSpec{SizeX: 1, SizeY: 1, SizeZ: planes, PlaneInfo: make([]Plane, planes)}
	for i := range spec.PlaneInfo {
		um := Quantity{Value: float64(i), Unit: "µm"}
		spec.PlaneInfo[i] = Plane{Z: i, DeltaT: Quantity{Value: 1.5, Unit: "s"}, ExposureTime: Quantity{Value: 10, Unit: "ms"}, PositionX: um, PositionY: um, PositionZ: um}
	}
	require.LessOrEqual(t, specText(spec)+leastXML(spec), int64(MaxOMEXMLSize))
	_, err = w.AddImage(spec)
	require.ErrorIs(t, err, ErrOMETooLarge)
	assert.ErrorContains(t, err, "more than MaxOMEXMLSize (67108864)")

	// Text already past it is refused as the image is added, before any
	// tile is encoded.
	w, err = New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w.Abort()
	half := strings.Repeat("a", MaxOMEXMLSize/2+1)
	_, err = w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, Description: half})
	require.NoError(t, err)
	_, err = w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, Annotations: []KeyValue{{Key: "k", Value: half}}})
	require.ErrorIs(t, err, ErrOMETooLarge)
	first := ownXML(ImageSpec{SizeX: 4, SizeY: 4, Description: half}.withDefaults())
	assert.Greater(t, first, int64(len(half)+minWrittenImageXML+minPlaneXML))
	assert.ErrorContains(t, err, fmt.Sprintf("the images' OME-XML takes at least %d bytes (their elements as the writer makes them of the specs, "+
		"264 an image and 35 a plane at the least), more than MaxOMEXMLSize (67108864)", first+int64(len(half)+1+minWrittenImageXML+minPlaneXML)))
	_, err = w.AddImage(ImageSpec{SizeX: 4, SizeY: 4, Name: "small"})
	assert.NoError(t, err, "an image of less text still fits")

	// So are images of no text past the elements of their images (a
	// writer of millions ran out of memory before Close refused them).
	w, err = New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w.Abort()
	for i := range 250000 {
		if _, err = w.AddImage(ImageSpec{SizeX: 4, SizeY: 4}); err != nil {
			assert.Greater(t, i, 150000, "refused after %d images", i)
			break
		}
	}
	assert.ErrorIs(t, err, ErrOMETooLarge)
}

// TestLeastXMLBound: the Image element of every image (with its Plane
// elements) is no smaller than leastXML says, so that AddImage refuses no
// file Close would write: images of no name and one plane, the smallest,
// and others, in files without a name (no UUID element) and named.
func TestLeastXMLBound(t *testing.T) {
	specs := []ImageSpec{{SizeX: 1, SizeY: 1}, {SizeX: 1, SizeY: 1}, {SizeX: 2, SizeY: 1, PixelType: Uint16},
		{SizeX: 1, SizeY: 1, SizeZ: 3, SizeC: 2, SizeT: 4}, {SizeX: 1, SizeY: 1, SizeZ: 50, PixelType: Float64}, {SizeX: 1, SizeY: 1, SamplesPerPixel: 3}}
	for _, named := range []bool{false, true} {
		var h iohandle.Handle = iohandle.NewMemory()
		path := filepath.Join(t.TempDir(), "a.tif")
		if named {
			var err error
			h, err = iohandle.Create(path, iohandle.Options{})
			require.NoError(t, err)
		}
		w, err := New(h, Options{})
		require.NoError(t, err)
		for _, s := range specs {
			im, err := w.AddImage(s)
			require.NoError(t, err)
			for p := range s.Planes() {
				z, c, tm := im.Spec().PlaneCoords(p)
				require.NoError(t, im.WritePlane(z, c, tm, make([]byte, im.PlaneBytes())))
			}
		}
		require.NoError(t, w.Close())
		var data []byte
		if named {
			data, err = os.ReadFile(path)
			require.NoError(t, err)
		} else {
			data = h.(*iohandle.Memory).Bytes()
		}
		f, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		images := strings.Split(f.Pages[0].Description(), "<Image ")[1:]
		require.Len(t, images, len(specs))
		for i, part := range images {
			element := "<Image " + part[:strings.Index(part, "</Image>")+len("</Image>")]
			assert.GreaterOrEqual(t, int64(len(element)), leastXML(specs[i]), "named %v: %s", named, element)
		}
	}
}
