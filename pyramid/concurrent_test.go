package pyramid

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// planeSet is an image of the concurrency tests and its planes' bytes, in
// plane order.
type planeSet struct {
	spec   ImageSpec
	planes [][]byte
}

func makePlaneSet(spec ImageSpec, seed uint64, labels bool) planeSet {
	n, err := spec.normalized()
	if err != nil {
		panic(err)
	}
	ps := planeSet{spec: spec}
	for p := range n.Planes() {
		ps.planes = append(ps.planes, randomPlane(n.SizeX, n.SizeY, n.SamplesPerPixel, n.PixelType, seed+uint64(p), labels).pix)
	}
	return ps
}

// writeSequential writes the images from one goroutine, plane after plane
// in plane order: the reference the concurrent writes are compared with.
func writeSequential(t *testing.T, opts Options, sets []planeSet) []byte {
	t.Helper()
	return writeMemory(t, opts, func(w *Writer) error {
		for _, s := range sets {
			im, err := w.AddImage(s.spec)
			if err != nil {
				return err
			}
			for p, pix := range s.planes {
				z, c, tt := im.Spec().PlaneCoords(p)
				if err := im.WritePlane(z, c, tt, pix); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// planeJob is one plane to write, and how.
type planeJob struct {
	im    *Image
	p     int
	pix   []byte
	how   int  // 0 WritePlane, 1 bands of PlaneWriter.Write, 2 WriteSamples, 3 bands of a SampleWriter
	band  int  // bytes per band (rounded to samples for SampleWriter)
	yield bool // runtime.Gosched between bands
}

func (j planeJob) run() error {
	z, c, t := j.im.Spec().PlaneCoords(j.p)
	switch j.how {
	case 0:
		return j.im.WritePlane(z, c, t, j.pix)
	case 1:
		return writeBands(j.im, z, c, t, j.pix, j.band, j.yield)
	case 2:
		return typedWritersFor[j.im.Spec().PixelType].write(j.im, z, c, t, j.pix)
	}
	pw, err := j.im.Plane(z, c, t)
	if err != nil {
		return err
	}
	return typedWritersFor[j.im.Spec().PixelType].stream(pw, j.pix, j.band, j.yield)
}

// runJobs runs the jobs on goroutines goroutines, job i on goroutine
// i%goroutines, and returns the first error.
func runJobs(jobs []planeJob, goroutines int) error {
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := g; i < len(jobs); i += goroutines {
				if err := jobs[i].run(); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// compareFiles reads two files back and requires the same main chain: the
// same pixels at every level of every plane, and, when sameXML, the same
// OME-XML (UUID included).
func compareFiles(t *testing.T, want, got []byte, sameXML bool) {
	t.Helper()
	fw, err := readback.Parse(want)
	require.NoError(t, err)
	fg, err := readback.Parse(got)
	require.NoError(t, err)
	require.Len(t, fg.IFDs, len(fw.IFDs), "planes")
	if sameXML {
		require.Equal(t, fw.IFDs[0].Text(tiff.TagImageDescription), fg.IFDs[0].Text(tiff.TagImageDescription), "OME-XML")
	}
	for i := range fw.IFDs {
		dw, dg := fw.IFDs[i], fg.IFDs[i]
		require.Len(t, dg.SubIFDs, len(dw.SubIFDs), "plane %d levels", i)
		for l := range len(dw.SubIFDs) + 1 {
			lw, lg := dw, dg
			if l > 0 {
				lw, lg = dw.SubIFDs[l-1], dg.SubIFDs[l-1]
			}
			imw, err := fw.Image(lw)
			require.NoError(t, err)
			img, err := fg.Image(lg)
			require.NoError(t, err, "plane %d level %d", i, l)
			require.Equal(t, [3]int{imw.Width, imw.Height, imw.Samples}, [3]int{img.Width, img.Height, img.Samples}, "plane %d level %d", i, l)
			if !bytes.Equal(imw.Pix, img.Pix) {
				t.Fatalf("plane %d level %d: pixels differ", i, l)
			}
		}
	}
}

var allCodecs = []Compression{None, LZW, Deflate, Zstd}

// TestConcurrentPlanes writes the planes of a multi-channel, multi-z image
// from 8 goroutines, and the planes of several images at once, for every
// codec at 1, 2 and 8 workers: every level of every plane reads back as
// from a one-goroutine write, and the OME-XML, derived UUID included, is
// the same.
func TestConcurrentPlanes(t *testing.T) {
	sets := []planeSet{
		makePlaneSet(ImageSpec{Name: "zc", SizeX: 70, SizeY: 45, SizeZ: 4, SizeC: 2, PixelType: Uint16}, 0, false),
		makePlaneSet(ImageSpec{Name: "rgb", SizeX: 40, SizeY: 33, SizeZ: 2, SizeT: 2, SamplesPerPixel: 3}, 100, false),
		makePlaneSet(ImageSpec{Name: "float", SizeX: 33, SizeY: 20, SizeC: 3, PixelType: Float32, DimensionOrder: XYCZT}, 200, false),
	}
	for _, comp := range allCodecs {
		for _, workers := range []int{1, 2, 8} {
			opts := Options{TileSize: 16, Compression: comp, Workers: workers}
			t.Run(fmt.Sprintf("%v/workers %d", comp, workers), func(t *testing.T) {
				want := writeSequential(t, opts, sets)
				// jobs lists the planes of the images from first on, each
				// written a different way.
				jobs := func(ims []*Image, first int) []planeJob {
					var jobs []planeJob
					for i := first; i < len(ims); i++ {
						for p, pix := range sets[i].planes {
							jobs = append(jobs, planeJob{im: ims[i], p: p, pix: pix, how: len(jobs) % 4, band: 37 + 101*p})
						}
					}
					return jobs
				}
				t.Run("8 goroutines on one image", func(t *testing.T) {
					got := writeMemory(t, opts, func(w *Writer) error {
						ims, err := addImages(w, sets)
						if err != nil {
							return err
						}
						first := jobs(ims, 0)[:len(sets[0].planes)]
						if err := runJobs(first, 8); err != nil {
							return err
						}
						return runJobs(jobs(ims, 1), 1)
					})
					compareFiles(t, want, got, true)
				})
				t.Run("every plane of every image at once", func(t *testing.T) {
					got := writeMemory(t, opts, func(w *Writer) error {
						ims, err := addImages(w, sets)
						if err != nil {
							return err
						}
						all := jobs(ims, 0)
						return runJobs(all, len(all))
					})
					compareFiles(t, want, got, true)
				})
			})
		}
	}
}

// addImages adds the images of sets in order.
func addImages(w *Writer, sets []planeSet) ([]*Image, error) {
	var ims []*Image
	for _, s := range sets {
		im, err := w.AddImage(s.spec)
		if err != nil {
			return nil, err
		}
		ims = append(ims, im)
	}
	return ims, nil
}

// imageNames matches the images of the OME-XML, in order.
var imageNames = regexp.MustCompile(`<Image ID="Image:(\d+)" Name="([^"]*)"`)

// TestConcurrentAddImage adds images from several goroutines at once, with
// AddImage, and with AddImageData giving the default names: the images are
// in the order they were added, each named after its own index, and each
// reads back as written.
func TestConcurrentAddImage(t *testing.T) {
	const n = 8
	var sets []planeSet
	for i := range n {
		// Each image's width tells which goroutine wrote it.
		sets = append(sets, makePlaneSet(ImageSpec{SizeX: 20 + i, SizeY: 17, PixelType: Uint16}, uint64(i), false))
	}
	for _, comp := range allCodecs {
		t.Run(comp.String(), func(t *testing.T) {
			opts := Options{TileSize: 16, Compression: comp, Workers: 2}
			got := writeMemory(t, opts, func(w *Writer) error {
				errs := make([]error, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						if i%2 == 0 {
							errs[i] = addGray16(w, sets[i])
							return
						}
						im, err := w.AddImage(sets[i].spec)
						if err == nil {
							err = WriteSamples(im, 0, 0, 0, typed[uint16](sets[i].planes[0]))
						}
						errs[i] = err
					})
				}
				wg.Wait()
				return errors.Join(errs...)
			})
			f, err := readback.Parse(got)
			require.NoError(t, err)
			require.Len(t, f.IFDs, n)
			names := imageNames.FindAllStringSubmatch(f.IFDs[0].Text(tiff.TagImageDescription), -1)
			require.Len(t, names, n)
			for k, d := range f.IFDs {
				i := int(d.Uint(tiff.TagImageWidth, 0)) - 20
				require.True(t, i >= 0 && i < n, "width %d", i+20)
				if i%2 == 0 {
					assert.Equal(t, "image "+strconv.Itoa(k), names[k][2], "the default name is the image's index")
				}
				im, err := f.Image(d)
				require.NoError(t, err)
				assert.True(t, bytes.Equal(sets[i].planes[0], im.Pix), "image %d (goroutine %d)", k, i)
			}
		})
	}
}

// addGray16 adds a plane as an image.Gray16 through AddImageData, with no
// name.
func addGray16(w *Writer, s planeSet) error {
	m := gray16Of(s.spec.SizeX, s.spec.SizeY, s.planes[0])
	_, err := w.AddImageData(ImageSpec{}, m)
	return err
}

// TestConcurrentStress writes random images with random codecs, from a
// random number of goroutines, each plane by a random method in bands of
// random sizes, yielding at random: every file reads back as its
// one-goroutine write, OME-XML included.
func TestConcurrentStress(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		r := rand.New(rand.NewPCG(uint64(round), 0x5eed))
		opts := Options{TileSize: []int{16, 32}[r.IntN(2)], Compression: allCodecs[r.IntN(4)],
			Workers: []int{1, 2, 8}[r.IntN(3)], Downsampling: Downsampling(r.IntN(3))}
		var sets []planeSet
		for i := range 1 + r.IntN(3) {
			spec := ImageSpec{Name: fmt.Sprint("image ", i), SizeX: 1 + r.IntN(90), SizeY: 1 + r.IntN(70),
				SizeZ: 1 + r.IntN(3), SizeC: 1 + r.IntN(3), SizeT: 1 + r.IntN(2),
				PixelType: PixelType(r.IntN(8)), DimensionOrder: []DimensionOrder{XYZCT, XYZTC, XYCTZ, XYCZT, XYTCZ, XYTZC}[r.IntN(6)]}
			if (spec.PixelType == Uint8 || spec.PixelType == Uint16) && r.IntN(3) == 0 {
				spec.SamplesPerPixel = 3
			}
			sets = append(sets, makePlaneSet(spec, r.Uint64(), opts.Downsampling == Mode))
		}
		t.Run(fmt.Sprintf("round %d", round), func(t *testing.T) {
			want := writeSequential(t, opts, sets)
			got := writeMemory(t, opts, func(w *Writer) error {
				ims, err := addImages(w, sets)
				if err != nil {
					return err
				}
				var jobs []planeJob
				for i, s := range sets {
					for p, pix := range s.planes {
						jobs = append(jobs, planeJob{im: ims[i], p: p, pix: pix, how: r.IntN(4), band: 1 + r.IntN(len(pix)+len(pix)/2), yield: r.IntN(2) == 0})
					}
				}
				r.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
				return runJobs(jobs, 1+r.IntN(8))
			})
			compareFiles(t, want, got, true)
		})
	}
}

// TestTwoGoroutinesOnOnePlane holds one goroutine inside a PlaneWriter's
// Write (in the Progress callback of its first tile) while another calls
// the same PlaneWriter: each of its calls is refused with ErrPlane and
// takes nothing, and the file is the one-goroutine write.
func TestTwoGoroutinesOnOnePlane(t *testing.T) {
	base := randomPlane(48, 40, 1, Uint16, 5, false)
	spec := ImageSpec{SizeX: 48, SizeY: 40, PixelType: Uint16}
	opts := Options{TileSize: 16, Compression: None}
	want := writeSequential(t, opts, []planeSet{{spec: spec, planes: [][]byte{base.pix}}})

	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	opts.Progress = func(Progress) {
		once.Do(func() {
			close(inside)
			<-release
		})
	}
	got := writeMemory(t, opts, func(w *Writer) error {
		im, err := w.AddImage(spec)
		if err != nil {
			return err
		}
		pw, err := im.Plane(0, 0, 0)
		if err != nil {
			return err
		}
		done := make(chan error)
		go func() { done <- pw.writeAll(base.pix) }()
		<-inside // the first goroutine is in Write
		n, err := pw.Write(base.pix[:96])
		assert.ErrorIs(t, err, ErrPlane, "Write while another goroutine writes")
		assert.Zero(t, n)
		assert.ErrorContains(t, err, "in use by a call under way")
		assert.ErrorIs(t, pw.Close(), ErrPlane, "Close while another goroutine writes")
		sw, err := NewSampleWriter[uint16](pw)
		require.NoError(t, err)
		_, err = sw.Write(make([]uint16, 10))
		assert.ErrorIs(t, err, ErrPlane, "SampleWriter.Write while another goroutine writes")
		close(release)
		if err := <-done; err != nil {
			return err
		}
		_, err = im.Plane(0, 0, 0)
		assert.ErrorIs(t, err, ErrPlane, "the plane again")
		return nil
	})
	assert.True(t, bytes.Equal(want, got), "the refused calls changed the file")
}

// TestSamePlaneFromManyGoroutines starts one plane from several goroutines
// at once: exactly one gets it, the others get ErrPlane, and the file is
// right.
func TestSamePlaneFromManyGoroutines(t *testing.T) {
	for _, comp := range allCodecs {
		t.Run(comp.String(), func(t *testing.T) {
			set := makePlaneSet(ImageSpec{SizeX: 40, SizeY: 30, SizeZ: 2}, 9, false)
			want := writeSequential(t, Options{TileSize: 16, Compression: comp}, []planeSet{set})
			got := writeMemory(t, Options{TileSize: 16, Compression: comp}, func(w *Writer) error {
				im, err := w.AddImage(set.spec)
				if err != nil {
					return err
				}
				var won atomic.Int32
				var wg sync.WaitGroup
				for range 6 {
					for z := range 2 {
						wg.Go(func() {
							err := im.WritePlane(z, 0, 0, set.planes[z])
							if err == nil {
								won.Add(1)
							} else {
								assert.ErrorIs(t, err, ErrPlane)
							}
						})
					}
				}
				wg.Wait()
				assert.Equal(t, int32(2), won.Load(), "one writer per plane")
				return nil
			})
			compareFiles(t, want, got, true)
		})
	}
}

// TestCallsRacingClose writes planes from goroutines while Close or Abort
// runs: every call returns nil or a typed error, and then either Close
// succeeded and the file holds every plane, or no file is left.
func TestCallsRacingClose(t *testing.T) {
	set := makePlaneSet(ImageSpec{SizeX: 64, SizeY: 48, SizeZ: 8, PixelType: Uint16}, 3, false)
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for round := range rounds {
		for _, comp := range []Compression{None, Deflate} {
			for _, abort := range []bool{false, true} {
				r := rand.New(rand.NewPCG(uint64(round), 7))
				dir := t.TempDir()
				path := filepath.Join(dir, "out.ome.tif")
				w := createNoSync(t, path, iohandle.Options{}, Options{TileSize: 16, Compression: comp, Workers: 2})
				im, err := w.AddImage(set.spec)
				require.NoError(t, err)
				var jobs []planeJob
				for p, pix := range set.planes {
					jobs = append(jobs, planeJob{im: im, p: p, pix: pix, how: r.IntN(4), band: 1 + r.IntN(4000), yield: true})
				}
				errs := make([]error, len(jobs))
				var wg sync.WaitGroup
				for i := range jobs {
					wg.Go(func() { errs[i] = jobs[i].run() })
				}
				for range r.IntN(200) {
					runtime.Gosched()
				}
				var endErr error
				if abort {
					endErr = w.Abort()
				} else {
					endErr = w.Close()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						require.ErrorIs(t, err, ErrClosed)
					}
				}
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				switch {
				case abort:
					require.NoError(t, endErr)
					assert.Empty(t, entries)
				case endErr != nil:
					require.ErrorIs(t, endErr, ErrMissingPlanes)
					assert.Empty(t, entries)
				default:
					require.Len(t, entries, 1)
					data, err := os.ReadFile(path)
					require.NoError(t, err)
					compareFiles(t, writeSequential(t, Options{TileSize: 16, Compression: comp}, []planeSet{set}), data, false)
				}
			}
		}
	}
}

// TestStatsWhileWriting calls Stats between the planes of a compressing
// writer and from another goroutine all along (go test -race finds a data
// race if Stats reads the handle's counters while the pipeline's consumer
// writes them): the counts only grow, and end at the file's.
func TestStatsWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.ome.tif")
	h, err := iohandle.Create(path, iohandle.Options{NoSync: true, BufferSize: 4096})
	require.NoError(t, err)
	w, err := New(h, Options{TileSize: 64, Compression: Deflate, Workers: 2})
	require.NoError(t, err)
	set := makePlaneSet(ImageSpec{SizeX: 256, SizeY: 256, SizeZ: 6, PixelType: Uint16}, 1, false)
	im, err := w.AddImage(set.spec)
	require.NoError(t, err)

	grows := func(last *iohandle.Stats, s iohandle.Stats) {
		assert.GreaterOrEqual(t, s.Appends, last.Appends)
		assert.GreaterOrEqual(t, s.Bytes, last.Bytes)
		*last = s
	}
	stop := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() {
		var last iohandle.Stats
		for {
			select {
			case <-stop:
				return
			default:
				grows(&last, w.Stats())
			}
		}
	})
	var last iohandle.Stats
	for z := range 3 { // from this goroutine, between planes
		require.NoError(t, im.WritePlane(z, 0, 0, set.planes[z]))
		grows(&last, w.Stats())
	}
	require.NoError(t, runJobs([]planeJob{ // and while goroutines write planes
		{im: im, p: 3, pix: set.planes[3]}, {im: im, p: 4, pix: set.planes[4], how: 1, band: 100}, {im: im, p: 5, pix: set.planes[5]},
	}, 3))
	grows(&last, w.Stats())
	require.NoError(t, w.Close())
	close(stop)
	watcher.Wait()
	assert.Equal(t, h.Stats(), w.Stats())
	assert.Greater(t, w.Stats().Appends, last.Appends, "Close wrote the rest")
}
