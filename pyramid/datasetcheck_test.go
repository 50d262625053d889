package pyramid

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// TestCheckDatasetComplete: a whole dataset checks from any of its files,
// and from the plan, and the report says what each file holds.
func TestCheckDatasetComplete(t *testing.T) {
	for _, companion := range []bool{false, true} {
		spec := stackPlan(5, 3, 2, 40, Split{Files: 4})
		spec.Companion = companion
		d := mustDataset(t, spec)
		dir := t.TempDir()
		writeParts(t, d, dir, PartOptions{}, allParts(d)...)
		want := DatasetReport{Metadata: d.File(0).Name, Images: 5, Planes: 30}
		starts := []string{}
		for i := range d.Files() {
			want.Files = append(want.Files, CheckedFile{Name: d.File(i).Name, UUID: d.UUID(i), Planes: []int{8, 8, 7, 7}[i], IFDs: []int{8, 8, 7, 7}[i]})
			starts = append(starts, d.File(i).Name)
		}
		if companion {
			name, _ := d.Companion()
			want.Metadata, want.Companion, want.BinaryOnly = name, true, 4
			starts = append(starts, name)
		}
		for _, start := range starts {
			got, err := CheckDataset(filepath.Join(dir, start))
			require.NoError(t, err, start)
			if !companion {
				want.Metadata = start
			}
			assert.Equal(t, want, got, start)
		}
		if !companion {
			want.Metadata = d.File(0).Name
		}
		got, err := d.Check(dir)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
}

// TestCheckDatasetFaults: a missing, failed, damaged or foreign part is
// reported by name, with its kind, by CheckDataset from another file and
// by the plan's Check; the other parts are untouched.
func TestCheckDatasetFaults(t *testing.T) {
	spec := stackPlan(8, 3, 2, 40, Split{Files: 6})
	foreign := spec
	foreign.Seed = "another acquisition"
	tests := []struct {
		name      string
		companion bool
		fault     func(t *testing.T, d *Dataset, dir string) // to part 3 (or the companion)
		kind      error
		want      string // the problem, as listed
		plan      string // what Check says, if other
	}{
		{"part never written", false, func(t *testing.T, d *Dataset, dir string) {}, ErrMissingFile,
			"stack_3.ome.tif: missing (8 planes of images 4 to 5)", ""},
		{"part failed", false, func(t *testing.T, d *Dataset, dir string) {
			err := d.WritePart(context.Background(), dir, 3, PartOptions{}, func(PlaneRef, []byte) error { return errors.New("killed") })
			require.Error(t, err)
		}, ErrMissingFile, "stack_3.ome.tif: missing (8 planes of images 4 to 5)", ""},
		{"part's writer killed", false, func(t *testing.T, d *Dataset, dir string) {
			// What a writer killed at once leaves where the output cannot be
			// unnamed (O_TMPFILE): its hidden temporary file.
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".stack_3.ome.tif.0123456789abcdef.tmp"), []byte("II*"), 0o644))
		}, ErrMissingFile, "stack_3.ome.tif: missing (8 planes of images 4 to 5); .stack_3.ome.tif.0123456789abcdef.tmp is there: its writer is still running, or was killed", ""},
		{"part cut short", false, func(t *testing.T, d *Dataset, dir string) {
			writeParts(t, d, dir, PartOptions{}, 3)
			path := filepath.Join(dir, d.File(3).Name)
			info, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, info.Size()/2))
		}, ErrWrongFile, "stack_3.ome.tif: not a readable TIFF", ""},
		{"part of another dataset", false, func(t *testing.T, d *Dataset, dir string) {
			writeParts(t, mustDataset(t, foreign), dir, PartOptions{}, 3)
		}, ErrWrongFile, `stack_3.ome.tif: its UUID is "urn:uuid:`, ""},
		{"part of another plan", false, func(t *testing.T, d *Dataset, dir string) {
			writeParts(t, mustDataset(t, foreign), dir, PartOptions{}, 3)
		}, ErrWrongFile, `stack_3.ome.tif: its UUID is "urn:uuid:`, "stack_3.ome.tif: its UUID is \"" + mustDataset(t, foreign).UUID(3) + "\", not the plan's \"" +
			mustDataset(t, spec).UUID(3) + "\": it was written from another plan, or the plan was changed since"},
		{"part with other metadata", false, func(t *testing.T, d *Dataset, dir string) {
			writeEdited(t, d, dir, 3, func(xml string) string { return strings.Replace(xml, `Name="Channel 2"`, `Name="DAPI"`, 1) })
		}, ErrWrongFile, "stack_3.ome.tif: its OME-XML differs from stack_0.ome.tif's", "stack_3.ome.tif: its OME-XML is not the plan's"},
		{"not a TIFF", false, func(t *testing.T, d *Dataset, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, d.File(3).Name), []byte("<html/>"), 0o644))
		}, ErrWrongFile, "stack_3.ome.tif: not a TIFF", ""},
		{"companion part never written", true, func(t *testing.T, d *Dataset, dir string) {}, ErrMissingFile,
			"stack_3.ome.tif: missing (8 planes of images 4 to 5)", ""},
		{"companion part with metadata of its own", true, func(t *testing.T, d *Dataset, dir string) {
			whole, err := d.companionXML()
			require.NoError(t, err)
			_, companionUUID := d.Companion()
			writeEdited(t, d, dir, 3, func(string) string { return strings.Replace(string(whole), companionUUID, d.UUID(3), 1) })
		}, ErrWrongFile, "stack_3.ome.tif: it holds metadata of its own, not a BinaryOnly element pointing to stack.companion.ome", "stack_3.ome.tif: its OME-XML is not the plan's"},
		{"companion part pointing elsewhere", true, func(t *testing.T, d *Dataset, dir string) {
			writeEdited(t, d, dir, 3, func(xml string) string { return strings.Replace(xml, "stack.companion.ome", "other.companion.ome", 1) })
		}, ErrWrongFile, `stack_3.ome.tif: its BinaryOnly points to "other.companion.ome"`, "stack_3.ome.tif: its OME-XML is not the plan's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec
			s.Companion = tt.companion
			d := mustDataset(t, s)
			dir := t.TempDir()
			writeParts(t, d, dir, PartOptions{}, 0, 1, 2, 4, 5)
			before := readFiles(t, dir)
			tt.fault(t, d, dir)
			after := readFiles(t, dir)
			for name, data := range before {
				assert.Equal(t, data, after[name], "%s changed", name)
			}
			start := filepath.Join(dir, d.File(0).Name)
			if tt.companion {
				name, _ := d.Companion()
				start = filepath.Join(dir, name)
			}
			for _, check := range []struct {
				name string
				run  func() (DatasetReport, error)
				want string
			}{
				{"CheckDataset", func() (DatasetReport, error) { return CheckDataset(start) }, tt.want},
				{"Check", func() (DatasetReport, error) { return d.Check(dir) }, cmp.Or(tt.plan, tt.want)},
			} {
				_, err := check.run()
				var de *DatasetError
				require.ErrorAs(t, err, &de, check.name)
				require.ErrorIs(t, err, tt.kind, check.name)
				require.Len(t, de.Problems, 1, "%s: %v", check.name, err)
				assert.Equal(t, d.File(3).Name, de.Problems[0].File, check.name)
				assert.True(t, strings.HasPrefix(de.Problems[0].String(), check.want), "%s: %q", check.name, de.Problems[0].String())
				assert.Contains(t, err.Error(), "pyramid: dataset "+filepath.Dir(start))
				requireTyped(t, err)
			}
		})
	}
}

// writeEdited writes part i of d with its OME-XML changed by edit: the
// UUID the plan gives, other content.
func writeEdited(t *testing.T, d *Dataset, dir string, i int, edit func(string) string) {
	t.Helper()
	h, err := iohandle.Create(filepath.Join(dir, d.File(i).Name), iohandle.Options{NoSync: true})
	require.NoError(t, err)
	p, err := d.NewPart(context.Background(), h, i, PartOptions{})
	require.NoError(t, err)
	p.w.description = []byte(edit(string(p.w.description)))
	pix := make([]byte, d.planeBytesOf(0))
	for ref := range d.Planes(i) {
		require.NoError(t, fillPlane(ref, pix))
		require.NoError(t, p.WritePlane(ref, pix))
	}
	require.NoError(t, p.Close())
}

// TestCheckDatasetMetadataFaults: what the metadata says is checked
// against the files: IFDs beyond a file, IFDs of no plane, IFDs and planes
// given twice, planes in no TiffData, files named twice or outside the
// directory, a missing or foreign companion.
func TestCheckDatasetMetadataFaults(t *testing.T) {
	spec := stackPlan(2, 2, 1, 16, Split{Files: 2}) // image i's 2 planes in file i
	spec.Companion = true
	d := mustDataset(t, spec)
	dir := t.TempDir()
	writeParts(t, d, dir, PartOptions{}, allParts(d)...)
	name, _ := d.Companion()
	companion, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	tiffData := func(ifd, count int, file int) string {
		return `<TiffData IFD="` + itoa(ifd) + `" PlaneCount="` + itoa(count) + `"><UUID FileName="` + d.File(file).Name + `">` + d.UUID(file) + `</UUID></TiffData>`
	}
	image1 := tiffData(0, 2, 1)
	tests := []struct {
		name  string
		edit  func(xml string) string
		kinds []error
		want  []string
	}{
		// A PlaneCount of 0 is valid OME-XML (NonNegativeInt): a problem
		// of its image, not a document the check gives up on.
		{"a PlaneCount of 0", func(x string) string { return strings.Replace(x, image1, tiffData(0, 0, 1), 1) },
			[]error{ErrWrongFile, ErrPlane, ErrMissingPlanes}, []string{"stack_1.ome.tif: IFDs 0 to 1 hold no plane of the dataset",
				"stack.companion.ome: TiffData 0 of image 1: PlaneCount 0 puts no plane",
				"stack.companion.ome: image 1: planes 0 to 1 (z=0 c=0 t=0 to z=1 c=0 t=0) in no TiffData"}},
		{"IFDs beyond the file", func(x string) string { return strings.Replace(x, image1, tiffData(0, 3, 1), 1) },
			[]error{ErrWrongFile, ErrPlane}, []string{"stack_1.ome.tif: has 2 IFDs; TiffData 0 of image 1 puts planes in IFDs 0 to 2",
				"stack.companion.ome: TiffData 0 of image 1: 3 planes from z=0 c=0 t=0, in an image of 2 x 1 x 1"}},
		{"an IFD of no plane, a plane in no TiffData", func(x string) string { return strings.Replace(x, image1, tiffData(0, 1, 1), 1) },
			[]error{ErrWrongFile, ErrMissingPlanes}, []string{"stack_1.ome.tif: IFD 1 holds no plane of the dataset",
				"stack.companion.ome: image 1: plane 1 (z=1 c=0 t=0) in no TiffData"}},
		{"IFDs and planes twice", func(x string) string { return strings.Replace(x, image1, image1+tiffData(1, 1, 1), 1) },
			[]error{ErrPlane}, []string{"stack_1.ome.tif: IFD 1 holds planes of TiffData 0 of image 1 and TiffData 1 of image 1",
				"stack.companion.ome: image 1: plane 0 (z=0 c=0 t=0) in two TiffData"}},
		{"a file outside the directory", func(x string) string {
			return strings.Replace(x, `FileName="stack_1.ome.tif"`, `FileName="../stack_1.ome.tif"`, 1)
		},
			[]error{ErrWrongFile, ErrMissingPlanes}, []string{`stack.companion.ome: TiffData 0 of image 1: FileName "../stack_1.ome.tif" is not a file name in its directory`,
				"stack.companion.ome: image 1: planes 0 to 1 (z=0 c=0 t=0 to z=1 c=0 t=0) in no TiffData"}},
		{"a UUID under two names", func(x string) string { return strings.Replace(x, d.UUID(1), d.UUID(0), 1) },
			[]error{ErrWrongFile, ErrMissingPlanes}, []string{`stack.companion.ome: TiffData 0 of image 1 names stack_1.ome.tif with UUID "` + d.UUID(0) + `", which is stack_0.ome.tif's`,
				"stack.companion.ome: image 1: planes 0 to 1"}},
		{"a foreign companion", func(x string) string {
			_, uuid := d.Companion()
			return strings.Replace(x, uuid, "urn:uuid:00000000-0000-8000-8000-000000000000", 1)
		}, []error{ErrWrongFile}, []string{`stack.companion.ome: its UUID is "urn:uuid:00000000-0000-8000-8000-000000000000"; stack_0.ome.tif's BinaryOnly says`}},
		{"a companion that does not parse", func(x string) string { return x[:len(x)-3] }, []error{ErrWrongFile}, []string{"stack.companion.ome: OME-XML does not parse"}},
		{"no companion", nil, []error{ErrMissingFile}, []string{"stack.companion.ome: missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if tt.edit == nil {
				require.NoError(t, os.Remove(path))
			} else {
				edited := tt.edit(string(companion))
				require.NotEqual(t, string(companion), edited)
				require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
			}
			defer func() { require.NoError(t, os.WriteFile(path, companion, 0o644)) }()
			_, err := CheckDataset(filepath.Join(dir, d.File(0).Name))
			var de *DatasetError
			require.ErrorAs(t, err, &de)
			for _, kind := range tt.kinds {
				assert.ErrorIs(t, err, kind)
			}
			require.Len(t, de.Problems, len(tt.want), "%v", err)
			for i, want := range tt.want {
				assert.True(t, strings.HasPrefix(de.Problems[i].String(), want), "%q", de.Problems[i].String())
			}
		})
	}
	_, err = CheckDataset(filepath.Join(dir, d.File(0).Name))
	require.NoError(t, err, "the dataset is whole again")
}

// TestCheckDatasetMasterMetadataFile: TIFFs whose BinaryOnly elements
// point to a master OME-TIFF (the OME-TIFF specification's other kind of
// metadata file, which Bio-Formats reads) check from any file: the master
// was refused as "a TIFF, not a companion".
func TestCheckDatasetMasterMetadataFile(t *testing.T) {
	spec := stackPlan(2, 2, 1, 16, Split{Files: 2})
	spec.Companion = true
	d := mustDataset(t, spec)
	dir := t.TempDir()
	writeParts(t, d, dir, PartOptions{}, allParts(d)...)
	name, _ := d.Companion()
	document, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	// The companion made a master OME-TIFF of its name: a TIFF of one
	// pixel whose first ImageDescription is the document.
	h := iohandle.NewMemory()
	tw, err := tiff.NewWriter(h, tiff.Options{})
	require.NoError(t, err)
	blk, err := tw.WriteBlock([]byte{0})
	require.NoError(t, err)
	b := &ifd.Builder{}
	b.AddUint(tiff.TagImageWidth, 1)
	b.AddUint(tiff.TagImageLength, 1)
	b.AddShort(tiff.TagBitsPerSample, 8)
	b.AddShort(tiff.TagCompression, tiff.CompressionNone)
	b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricBlackIsZero)
	b.AddASCII(tiff.TagImageDescription, string(document))
	b.AddUint(tiff.TagRowsPerStrip, 1)
	require.NoError(t, tw.AddDirectory(&tiff.Directory{Fields: b, Blocks: []tiff.Block{blk}, OffsetsTag: tiff.TagStripOffsets, CountsTag: tiff.TagStripByteCounts}))
	require.NoError(t, tw.Close())
	require.NoError(t, h.Commit())
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), h.Bytes(), 0o644))
	for _, start := range []string{d.File(0).Name, d.File(1).Name, name} {
		got, err := CheckDataset(filepath.Join(dir, start))
		require.NoError(t, err, start)
		assert.Equal(t, [3]any{name, false, 2}, [3]any{got.Metadata, got.Companion, got.BinaryOnly}, start)
		assert.Equal(t, 4, got.Planes)
	}
}

// TestCheckDatasetCompanionEdited: a companion edited after it was written
// (a channel renamed: a document CheckDataset still accepts) is reported by
// the plan's Check as not the plan's, its parts untouched.
func TestCheckDatasetCompanionEdited(t *testing.T) {
	spec := stackPlan(2, 2, 1, 16, Split{Files: 2})
	spec.Companion = true
	d := mustDataset(t, spec)
	dir := t.TempDir()
	writeParts(t, d, dir, PartOptions{}, allParts(d)...)
	_, err := d.Check(dir)
	require.NoError(t, err, "the dataset as written")
	name, _ := d.Companion()
	path := filepath.Join(dir, name)
	companion, err := os.ReadFile(path)
	require.NoError(t, err)
	edited := strings.Replace(string(companion), `Name="Channel 1"`, `Name="DAPI"`, 1)
	require.NotEqual(t, string(companion), edited)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	_, err = CheckDataset(path)
	require.NoError(t, err, "the edited companion is a whole dataset's")

	_, err = d.Check(dir)
	var de *DatasetError
	require.ErrorAs(t, err, &de)
	require.ErrorIs(t, err, ErrWrongFile)
	require.Len(t, de.Problems, 1, "%v", err)
	assert.Equal(t, name, de.Problems[0].File)
	assert.Equal(t, name+": is not the plan's companion", de.Problems[0].String())
	requireTyped(t, err)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestCheckDatasetStart: the file given must be there and hold OME-XML.
func TestCheckDatasetStart(t *testing.T) {
	dir := t.TempDir()
	_, err := CheckDataset(filepath.Join(dir, "none.ome.tif"))
	require.ErrorIs(t, err, ErrMissingFile)
	assert.Equal(t, "pyramid: dataset "+filepath.Join(dir, "none.ome.tif")+": none.ome.tif: missing", err.Error())

	plain := filepath.Join(dir, "plain.tif")
	w, err := Create(plain, Options{UUID: "urn:uuid:00000000-0000-8000-8000-000000000001"})
	require.NoError(t, err)
	im, err := w.AddImage(ImageSpec{SizeX: 16, SizeY: 16})
	require.NoError(t, err)
	require.NoError(t, im.WritePlane(0, 0, 0, make([]byte, 256)))
	require.NoError(t, w.Close())
	report, err := CheckDataset(plain)
	require.NoError(t, err, "a single OME-TIFF is a dataset of one file")
	assert.Equal(t, []CheckedFile{{Name: "plain.tif", UUID: "urn:uuid:00000000-0000-8000-8000-000000000001", Planes: 1, IFDs: 1}}, report.Files)

	// Renamed, it is said to hold the missing file's UUID.
	renamed := filepath.Join(dir, "renamed.tif")
	require.NoError(t, os.Rename(plain, renamed))
	_, err = CheckDataset(renamed)
	require.ErrorIs(t, err, ErrMissingFile)
	assert.Contains(t, err.Error(), "plain.tif: missing (1 plane of image 0); renamed.tif, the file checked from, has its UUID: renamed?")

	// Without UUIDs (blanked, the file's name changed in its TiffData),
	// nothing says it was renamed.
	data, err := os.ReadFile(renamed)
	require.NoError(t, err)
	uuid := []byte("urn:uuid:00000000-0000-8000-8000-000000000001")
	require.Equal(t, 2, bytes.Count(data, uuid), "the root's and the TiffData's")
	root := append(append([]byte(`UUID="`), uuid...), '"')
	data = bytes.Replace(data, root, bytes.Repeat([]byte(" "), len(root)), 1) // no attribute
	data = bytes.ReplaceAll(data, uuid, bytes.Repeat([]byte(" "), len(uuid))) // an empty element
	data = bytes.Replace(data, []byte(`FileName="plain.tif"`), []byte(`FileName="other.tif"`), 1)
	blank := filepath.Join(dir, "blank.tif")
	require.NoError(t, os.WriteFile(blank, data, 0o644))
	_, err = CheckDataset(blank)
	require.ErrorIs(t, err, ErrMissingFile)
	assert.Contains(t, err.Error(), "other.tif: missing (1 plane of image 0)")
	assert.NotContains(t, err.Error(), "renamed?")

	xml := filepath.Join(dir, "x.companion.ome")
	require.NoError(t, os.WriteFile(xml, []byte("not xml"), 0o644))
	_, err = CheckDataset(xml)
	require.ErrorIs(t, err, ErrWrongFile)
	assert.Contains(t, err.Error(), "x.companion.ome: OME-XML: no OME element")
}

// TestInspectDataset: Inspect says in how many files a master puts the
// planes, and where a BinaryOnly TIFF's metadata is.
func TestInspectDataset(t *testing.T) {
	for _, companion := range []bool{false, true} {
		spec := stackPlan(3, 2, 2, 16, Split{Files: 3})
		spec.Companion = companion
		d := mustDataset(t, spec)
		h := iohandle.NewMemory()
		p, err := d.NewPart(context.Background(), h, 1, PartOptions{})
		require.NoError(t, err)
		pix := make([]byte, d.planeBytesOf(1))
		for ref := range d.Planes(1) {
			require.NoError(t, p.WritePlane(ref, pix))
		}
		require.NoError(t, p.Close())
		var out strings.Builder
		require.NoError(t, Inspect(&out, bytes.NewReader(h.Bytes()), int64(len(h.Bytes())), InspectOptions{}))
		if companion {
			_, uuid := d.Companion()
			assert.Contains(t, out.String(), `creator "ometiff", BinaryOnly: the metadata is in stack.companion.ome (UUID `+uuid+")\n")
		} else {
			assert.Contains(t, out.String(), `3 images, UUID `+d.UUID(1)+`, creator "ometiff", planes in 3 files`+"\n")
		}
	}
}
