package pyramid

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// TestDatasetBytesDeterministic: the parts of a plan are the same bytes
// whatever order the processes write them in, at any Workers, on a second
// run, and from a plan read back from its JSON; two parts written at once
// by one process too.
func TestDatasetBytesDeterministic(t *testing.T) {
	for _, layout := range []string{"masters", "companion"} {
		t.Run(layout, func(t *testing.T) {
			spec := stackPlan(7, 3, 2, 72, Split{Files: 5})
			spec.Options.TileSize = 32
			spec.Companion = layout == "companion"
			d := mustDataset(t, spec)
			first := t.TempDir()
			writeParts(t, d, first, PartOptions{Workers: 1}, allParts(d)...)
			want := readFiles(t, first)
			require.Len(t, want, d.Files()+b2i(spec.Companion))

			plan, err := d.MarshalJSON()
			require.NoError(t, err)
			loaded, err := ParseDataset(plan)
			require.NoError(t, err)
			runs := map[string]func(dir string){
				"reverse order, 3 workers": func(dir string) { writeParts(t, d, dir, PartOptions{Workers: 3}, 4, 3, 2, 1, 0) },
				"second run, from JSON":    func(dir string) { writeParts(t, loaded, dir, PartOptions{}, allParts(d)...) },
				"all at once": func(dir string) {
					var wg sync.WaitGroup
					for i := range d.Files() {
						wg.Go(func() {
							assert.NoError(t, loaded.WritePart(context.Background(), dir, i, PartOptions{Workers: 2}, fillPlane))
						})
					}
					wg.Wait()
				},
			}
			for name, run := range runs {
				dir := t.TempDir()
				run(dir)
				got := readFiles(t, dir)
				require.Len(t, got, len(want), name)
				for file, data := range want {
					assert.True(t, bytes.Equal(data, got[file]), "%s: %s differs", name, file)
				}
			}
		})
	}
}

// TestDatasetPixelsEqualSingleFile: every plane of the dataset, at every
// level, read back by an independent reader through the TiffData of any
// file, equals the plane a single file of the same images holds.
func TestDatasetPixelsEqualSingleFile(t *testing.T) {
	spec := stackPlan(4, 3, 2, 72, Split{})
	spec.Options.TileSize = 32
	dir := t.TempDir()
	single := mustDataset(t, spec)
	writeParts(t, single, dir, PartOptions{}, 0)
	spec.Split = Split{Files: 3}
	d := mustDataset(t, spec)
	writeParts(t, d, dir, PartOptions{}, allParts(d)...)

	want := levelsByPlane(t, dir, single.File(0).Name)
	require.Len(t, want, 24)
	for i := range d.Files() {
		got := levelsByPlane(t, dir, d.File(i).Name)
		require.Len(t, got, len(want), "through %s", d.File(i).Name)
		for ref, levels := range want {
			require.Equal(t, len(levels), len(got[ref]), "%v", ref)
			for l := range levels {
				require.True(t, bytes.Equal(levels[l], got[ref][l]), "through %s: %v level %d differs", d.File(i).Name, ref, l)
			}
		}
	}
}

// levelsByPlane reads the dataset whose master is the file name in dir
// through its TiffData, as a reader does, and returns every plane's pixels
// at every level, decoded by internal/readback.
func levelsByPlane(t *testing.T, dir, name string) map[PlaneRef][][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	f, err := readback.Parse(data)
	require.NoError(t, err)
	meta, err := parseDatasetMeta([]byte(f.IFDs[0].Text(tiff.TagImageDescription)))
	require.NoError(t, err)
	files := map[string]*readback.File{}
	out := map[PlaneRef][][]byte{}
	for k, im := range meta.images {
		s := im.spec()
		for _, td := range im.tiffData {
			rf := files[td.fileName]
			if rf == nil {
				data, err := os.ReadFile(filepath.Join(dir, td.fileName))
				require.NoError(t, err)
				rf, err = readback.Parse(data)
				require.NoError(t, err)
				files[td.fileName] = rf
			}
			start, err := s.PlaneIndex(td.first[0], td.first[1], td.first[2])
			require.NoError(t, err)
			for p := range td.count {
				z, c, tt := s.PlaneCoords(start + p)
				ifd := rf.IFDs[td.ifd+p]
				var levels [][]byte
				for _, dir := range append([]*readback.IFD{ifd}, ifd.SubIFDs...) {
					img, err := rf.Image(dir)
					require.NoError(t, err)
					levels = append(levels, img.Pix)
				}
				out[PlaneRef{Image: k, Z: z, C: c, T: tt}] = levels
			}
		}
	}
	return out
}

// TestDatasetPlanesAreTheCallers: the pixels of each plane are those fill
// gave for it.
func TestDatasetPlanesAreTheCallers(t *testing.T) {
	spec := richPlan() // XYCTZ, planes spanning files
	spec.Companion = false
	spec.Options = Options{Compression: None}
	d := mustDataset(t, spec)
	dir := t.TempDir()
	writeParts(t, d, dir, PartOptions{}, allParts(d)...)
	got := levelsByPlane(t, dir, d.File(2).Name)
	require.Len(t, got, 16)
	pix := make([]byte, 40*33*2)
	for ref, levels := range got {
		require.NoError(t, fillPlane(ref, pix))
		assert.True(t, bytes.Equal(pix, levels[0]), "%v", ref)
	}
}

// TestPartRefuses: a part takes its own planes only, each once, and all
// of them, saying which plane and file in the dataset's terms; the file
// index must be one of the dataset's, and an existing file is kept.
func TestPartRefuses(t *testing.T) {
	d := mustDataset(t, stackPlan(3, 2, 2, 16, Split{Files: 3}))
	dir := t.TempDir()
	ctx := context.Background()
	pix := make([]byte, 16*16*2)

	_, err := d.CreatePart(ctx, dir, 3, PartOptions{})
	require.ErrorIs(t, err, ErrOption)
	assert.Contains(t, err.Error(), "file 3 of a dataset of 3")
	//lint:ignore SA1012 a nil context on purpose
	_, err = d.NewPart(nil, iohandle.NewMemory(), 0, PartOptions{})
	require.ErrorIs(t, err, ErrOption)

	p, err := d.CreatePart(ctx, dir, 1, PartOptions{})
	require.NoError(t, err)
	err = p.WritePlane(PlaneRef{Image: 0, Z: 0, C: 0}, pix)
	require.ErrorIs(t, err, ErrPlane)
	assert.Equal(t, "pyramid: bad plane: plane z=0 c=0 t=0 of image 0 is in stack_0.ome.tif, not in this part, stack_1.ome.tif", err.Error())
	_, err = p.Plane(PlaneRef{Image: 3})
	require.ErrorIs(t, err, ErrPlane)
	_, err = p.Plane(PlaneRef{Image: 1, Z: 2})
	require.ErrorIs(t, err, ErrPlane)
	assert.Contains(t, err.Error(), "outside Z 2")
	require.NoError(t, p.WritePlane(PlaneRef{Image: 1, Z: 1, C: 1}, pix))
	err = p.WritePlane(PlaneRef{Image: 1, Z: 1, C: 1}, pix)
	require.ErrorIs(t, err, ErrPlane)
	assert.Equal(t, "pyramid: bad plane: plane z=1 c=1 t=0 of image 1 written twice", err.Error())
	err = p.Close()
	require.ErrorIs(t, err, ErrMissingPlanes)
	assert.Equal(t, "pyramid: planes not written: 3 missing: image 1 z=0 c=0 t=0, image 1 z=1 c=0 t=0, image 1 z=0 c=1 t=0 (the output is discarded)", err.Error())
	assert.NoFileExists(t, filepath.Join(dir, d.File(1).Name))

	writeParts(t, d, dir, PartOptions{}, 1)
	before, err := os.ReadFile(filepath.Join(dir, d.File(1).Name))
	require.NoError(t, err)
	_, err = d.CreatePart(ctx, dir, 1, PartOptions{})
	require.ErrorIs(t, err, fs.ErrExist)
	assert.Contains(t, err.Error(), "set PartOptions.File.Replace")
	require.NoError(t, d.WritePart(ctx, dir, 1, PartOptions{File: iohandle.Options{Replace: true}}, fillPlane))
	after, err := os.ReadFile(filepath.Join(dir, d.File(1).Name))
	require.NoError(t, err)
	assert.Equal(t, before, after, "a part written again is the same")
}

// TestWritePartFillFails: an error of fill stops the part and comes back
// as it is; no file is left, and the other parts are untouched. A nil fill
// is refused (it panicked).
func TestWritePartFillFails(t *testing.T) {
	d := mustDataset(t, stackPlan(3, 2, 2, 16, Split{Files: 3}))
	dir := t.TempDir()
	writeParts(t, d, dir, PartOptions{}, 0, 2)
	before := readFiles(t, dir)
	boom := errors.New("camera unplugged")
	n := 0
	err := d.WritePart(context.Background(), dir, 1, PartOptions{}, func(ref PlaneRef, pix []byte) error {
		if n++; n == 3 {
			return boom
		}
		return fillPlane(ref, pix)
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, before, readFiles(t, dir))

	err = d.WritePart(context.Background(), dir, 1, PartOptions{}, nil)
	require.ErrorIs(t, err, ErrOption)
	assert.EqualError(t, err, "pyramid: bad option: no fill function (nil)")
	assert.Equal(t, before, readFiles(t, dir))
}

// TestPartCancelled: a cancelled context fails the part and leaves no
// file.
func TestPartCancelled(t *testing.T) {
	d := mustDataset(t, stackPlan(2, 2, 2, 16, Split{Files: 2}))
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	err := d.WritePart(ctx, dir, 0, PartOptions{Workers: 1}, func(ref PlaneRef, pix []byte) error {
		cancel()
		return fillPlane(ref, pix)
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, readFiles(t, dir))
}

// TestPartProgressMayCallThePart calls the part's Close and Abort from
// Progress: Close at the report of a committed file returns nil, Abort at
// the first report discards the part; neither waits for ever.
func TestPartProgressMayCallThePart(t *testing.T) {
	spec := stackPlan(2, 2, 2, 16, Split{Files: 2})
	spec.Companion = true
	d := mustDataset(t, spec)
	for _, abort := range []bool{false, true} {
		dir := t.TempDir()
		done := make(chan error)
		go func() {
			var p *Part
			var calls []error
			closing := false // Progress is called from the part's Close
			p, err := d.CreatePart(context.Background(), dir, 0, PartOptions{Workers: 1, Progress: func(pr Progress) {
				switch {
				case abort:
					calls = append(calls, p.Abort())
				case closing:
					calls = append(calls, p.Close())
				}
			}})
			if err != nil {
				done <- err
				return
			}
			for k, r := range d.spec.Files[0].Planes {
				for i := r.First; i < r.First+r.Count; i++ {
					z, c, tt := d.images[r.Image].PlaneCoords(i)
					pix := make([]byte, p.images[k].PlaneBytes())
					ref := PlaneRef{Image: r.Image, Z: z, C: c, T: tt}
					assert.NoError(t, fillPlane(ref, pix)) // not require: this is not the test's goroutine
					if err := p.WritePlane(ref, pix); err != nil {
						assert.True(t, abort, "%v", err)
						assert.ErrorIs(t, err, ErrClosed)
					}
				}
			}
			closing = true
			err = p.Close()
			assert.NotEmpty(t, calls)
			for _, c := range calls {
				assert.NoError(t, c)
			}
			done <- err
		}()
		select {
		case err := <-done:
			if abort {
				assert.ErrorIs(t, err, ErrClosed)
				assert.Empty(t, readFiles(t, dir))
			} else {
				assert.NoError(t, err)
				assert.Len(t, readFiles(t, dir), 2, "the part and the companion")
			}
		case <-time.After(time.Minute):
			t.Fatal("a call from Progress waits for ever")
		}
	}
}

// TestDatasetCompanion: in the companion layout each TIFF holds a
// BinaryOnly element naming the companion, every part writes the same
// companion or finds it there, and a different one is kept unless
// Replace.
func TestDatasetCompanion(t *testing.T) {
	spec := stackPlan(2, 2, 2, 16, Split{Files: 2})
	spec.Companion = true
	d := mustDataset(t, spec)
	name, uuid := d.Companion()
	dir := t.TempDir()
	writeParts(t, d, dir, PartOptions{}, 1)
	companion, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err, "the first part to finish writes the companion")
	assert.True(t, bytes.HasPrefix(companion, []byte(`<?xml version="1.0" encoding="UTF-8"?><OME `)))
	assert.Contains(t, string(companion), `UUID="`+uuid+`" Creator="ometiff">`)
	assert.Contains(t, string(companion), `<UUID FileName="stack_0.ome.tif">`+d.UUID(0)+`</UUID>`)
	writeParts(t, d, dir, PartOptions{}, 0)
	again, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	assert.Equal(t, companion, again)

	for i := range d.Files() {
		data, err := os.ReadFile(filepath.Join(dir, d.File(i).Name))
		require.NoError(t, err)
		f, err := readback.Parse(data)
		require.NoError(t, err)
		assert.Equal(t, `<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" `+
			`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openmicroscopy.org/Schemas/OME/2016-06 http://www.openmicroscopy.org/Schemas/OME/2016-06/ome.xsd" `+
			`UUID="`+d.UUID(i)+`" Creator="ometiff"><BinaryOnly MetadataFile="stack.companion.ome" UUID="`+uuid+`"/></OME>`, f.IFDs[0].Text(tiff.TagImageDescription))
	}

	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, name), []byte("<OME/>"), 0o644))
	err = d.WritePart(context.Background(), other, 0, PartOptions{}, fillPlane)
	require.ErrorIs(t, err, fs.ErrExist)
	assert.Contains(t, err.Error(), "is another plan's companion, or this plan's before it changed (set Replace to replace it")
	assert.NoFileExists(t, filepath.Join(other, d.File(0).Name), "a part is not committed without its companion")
	p, err := d.CreatePart(context.Background(), other, 0, PartOptions{})
	require.NoError(t, err)
	for ref := range d.Planes(0) {
		pix := make([]byte, d.planeBytesOf(ref.Image))
		require.NoError(t, fillPlane(ref, pix))
		require.NoError(t, p.WritePlane(ref, pix))
	}
	first := p.Close()
	require.ErrorIs(t, first, fs.ErrExist)
	assert.Equal(t, first, p.Close(), "a second Close says the same")
	require.NoError(t, d.WritePart(context.Background(), other, 0, PartOptions{File: iohandle.Options{Replace: true}}, fillPlane))
	replaced, err := os.ReadFile(filepath.Join(other, name))
	require.NoError(t, err)
	assert.Equal(t, companion, replaced)

	require.ErrorIs(t, mustDataset(t, stackPlan(1, 1, 1, 16, Split{})).WriteCompanion(dir, iohandle.Options{}), ErrOption)
}

// TestWriteCompanionRace: processes that write the companion at once all
// succeed, and leave it whole.
func TestWriteCompanionRace(t *testing.T) {
	spec := stackPlan(2, 2, 2, 16, Split{Files: 2})
	spec.Companion = true
	d := mustDataset(t, spec)
	want, err := d.companionXML()
	require.NoError(t, err)
	for range 5 {
		dir := t.TempDir()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { assert.NoError(t, d.WriteCompanion(dir, iohandle.Options{NoSync: true})) })
		}
		wg.Wait()
		files := readFiles(t, dir)
		require.Len(t, files, 1)
		name, _ := d.Companion()
		assert.Equal(t, want, files[name])
	}
}

// TestNewPartToMemory: a part written to a handle without a name carries
// the plan's names all the same, and no companion.
func TestNewPartToMemory(t *testing.T) {
	spec := stackPlan(2, 1, 1, 16, Split{Files: 2})
	d := mustDataset(t, spec)
	h := iohandle.NewMemory()
	p, err := d.NewPart(context.Background(), h, 1, PartOptions{})
	require.NoError(t, err)
	pix := make([]byte, 16*16*2)
	require.NoError(t, p.WritePlane(PlaneRef{Image: 1}, pix))
	require.NoError(t, p.Close())
	assert.Positive(t, p.Stats().Appends)
	f, err := readback.Parse(h.Bytes())
	require.NoError(t, err)
	description := f.IFDs[0].Text(tiff.TagImageDescription)
	assert.Contains(t, description, `UUID="`+d.UUID(1)+`"`)
	assert.Equal(t, 2, strings.Count(description, "<TiffData "))
	assert.Contains(t, description, `<UUID FileName="stack_0.ome.tif">`+d.UUID(0))
}

// TestDatasetWithCallersImages: a plan whose OME document describes its
// images gives every file the document's Image elements, with the
// dataset's TiffData, and the set checks.
func TestDatasetWithCallersImages(t *testing.T) {
	spec := DatasetSpec{Name: "caller", OME: tifffileDoc(), Images: []ImageSpec{tifffileSpec}, Split: Split{Files: 2}}
	d := mustDataset(t, spec)
	dir := t.TempDir()
	writeParts(t, d, dir, PartOptions{}, allParts(d)...)
	_, err := d.Check(dir)
	require.NoError(t, err)
	xml, err := d.metadata(d.UUID(1))
	require.NoError(t, err)
	s := string(xml)
	assert.Contains(t, s, `<Image ID="Image:0" Name="Image0">`)
	assert.Contains(t, s, `<Channel ID="Channel:0:1" SamplesPerPixel="1" Name="b"><LightPath/></Channel>`)
	assert.Contains(t, s, `<TiffData IFD="0" PlaneCount="8"><UUID FileName="caller_0.ome.tif">`+d.UUID(0)+`</UUID></TiffData>`)
	assert.Contains(t, s, `<TiffData IFD="0" FirstZ="3" FirstC="1" FirstT="0" PlaneCount="7"><UUID FileName="caller_1.ome.tif">`+d.UUID(1)+`</UUID></TiffData>`)
	assert.NotContains(t, s, `<TiffData IFD="0" PlaneCount="15"/>`, "the document's own TiffData are the writer's to write")
	assert.Contains(t, s, `<Plane TheZ="4" TheC="2" TheT="0" PositionX="1.0"/>`)
}
