package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/datasettest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// The UUIDs of two files of a dataset built in a test.
const uuidA, uuidB = "urn:uuid:00000000-0000-4000-8000-00000000000a", "urn:uuid:00000000-0000-4000-8000-00000000000b"

// writeGrays writes a file of n 8 x 8 gray pages, the first described by
// d, in dir.
func writeGrays(t *testing.T, dir, name, d string, n int) {
	t.Helper()
	data, _ := fileOf(t, binary.LittleEndian, false, grays(n, d)...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
}

// TestDatasetOpen opens a multi-file dataset from each of its files, and
// from its companion: every file gives the dataset's two images, whole,
// with their metadata, each plane read from the file holding it.
func TestDatasetOpen(t *testing.T) {
	for _, companion := range []bool{false, true} {
		t.Run(fmt.Sprintf("companion %v", companion), func(t *testing.T) {
			dir := t.TempDir()
			d := datasettest.Write(t, dir, companion)
			names := []string{d.File(0).Name, d.File(1).Name, d.File(2).Name}
			if companion {
				name, _ := d.Companion()
				names = append(names, name)
			}
			for k, name := range names {
				f, err := Open(filepath.Join(dir, name), Options{})
				require.NoError(t, err, name)
				assert.Equal(t, OMETIFF, f.Kind)
				require.Len(t, f.Images, 2, name)
				for _, p := range f.Parts { // the document again, not kept for each file
					assert.Empty(t, p.TIFF.Pages[0].Description(), p.Name)
				}
				if k == 3 {
					assert.Nil(t, f.TIFF, "a companion holds no pages")
					assert.Len(t, f.Parts, 3)
				} else {
					assert.NotNil(t, f.TIFF)
					assert.Len(t, f.Parts, 2, "the other files")
				}
				for i, im := range f.Images {
					s := im.Spec
					assert.Equal(t, fmt.Sprintf("well %d", i), s.Name)
					assert.Equal(t, [5]int{datasettest.Width, datasettest.Height, 3, 2, 1}, [5]int{s.SizeX, s.SizeY, s.SizeZ, s.SizeC, s.SizeT})
					assert.Equal(t, 0.5, s.PhysicalSizeX)
					require.Len(t, s.Channels, 2)
					assert.Equal(t, "GFP", s.Channels[1].Name)
					assert.NotNil(t, s.OME, "the document is carried")
					require.Len(t, im.Planes, 6)
					for p, pl := range im.Planes {
						z, c, tt := s.PlaneCoords(p)
						wantPix := make([]byte, datasettest.Width*datasettest.Height*2)
						require.NoError(t, datasettest.Fill(pyramid.PlaneRef{Image: i, Z: z, C: c, T: tt}, wantPix))
						assert.Equal(t, wantPix, planePixels(t, pl), "%s: image %d plane %d", name, i, p)
					}
				}
				require.NoError(t, f.Close())
			}
		})
	}
}

// TestDatasetPageInNoTiffData: a page of another file of the dataset
// that no TiffData places is noted, naming the file, and not converted.
func TestDatasetPageInNoTiffData(t *testing.T) {
	dir := t.TempDir()
	write := func(name, d string, n int) { writeGrays(t, dir, name, d, n) }
	write("a.ome.tif", omeDocument(`UUID="`+uuidA+`"`, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`),
		pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"><UUID FileName="b.ome.tif">`+uuidB+`</UUID></TiffData>`)), 1)
	write("b.ome.tif", omeDocument(`UUID="`+uuidB+`"`), 2)
	f, err := Open(filepath.Join(dir, "a.ome.tif"), Options{})
	require.NoError(t, err)
	defer f.Close()
	assert.Len(t, f.Images, 2)
	assert.Empty(t, f.Skipped)
	assert.Equal(t, []string{"page 1 in b.ome.tif of the OME-TIFF, in no image's TiffData, not converted: ignored, as the OME-TIFF specification asks"}, f.Notes)
}

// TestDatasetMasterTIFF: a BinaryOnly element whose MetadataFile is the
// dataset's master OME-TIFF (the specification's other metadata file,
// which Bio-Formats reads) maps the dataset from any file, through the
// master's first ImageDescription; a TIFF without OME-XML is no master.
func TestDatasetMasterTIFF(t *testing.T) {
	dir := t.TempDir()
	write := func(name, d string) { writeGrays(t, dir, name, d, 1) }
	write("a.ome.tif", omeDocument(`UUID="`+uuidA+`"`, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"><UUID FileName="a.ome.tif">`+uuidA+`</UUID></TiffData>`),
		pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"><UUID FileName="b.ome.tif">`+uuidB+`</UUID></TiffData>`)))
	binaryOnly := func(file string) string {
		return `<?xml version="1.0"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="` + uuidB + `">` +
			`<BinaryOnly MetadataFile="` + file + `" UUID="` + uuidA + `"/></OME>`
	}
	write("b.ome.tif", binaryOnly("a.ome.tif"))
	for name, want := range map[string][]string{ // -1: a page of the other file
		"a.ome.tif": {`"im0" 8x8 Z1 C1 T1 XYZCT uint16 x1: 0:*`, `"im1" 8x8 Z1 C1 T1 XYZCT uint16 x1: -1:*`},
		"b.ome.tif": {`"im0" 8x8 Z1 C1 T1 XYZCT uint16 x1: -1:*`, `"im1" 8x8 Z1 C1 T1 XYZCT uint16 x1: 0:*`},
	} {
		f, err := Open(filepath.Join(dir, name), Options{})
		require.NoError(t, err, name)
		assert.Equal(t, want, summary(f), name)
		assert.Len(t, f.Parts, 1, name)
		require.NoError(t, f.Close())
	}
	write("plain.tif", "no OME-XML")
	write("c.ome.tif", binaryOnly("plain.tif"))
	_, err := Open(filepath.Join(dir, "c.ome.tif"), Options{})
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, `the metadata file "plain.tif": not an OME-XML document`)
}

// TestDatasetLinks: a file of the dataset that is a link is read, to a
// file in its directory or out of it (a workflow's staged inputs, links
// to files elsewhere, which Bio-Formats reads), as is a dataset in a
// directory reached through a link.
func TestDatasetLinks(t *testing.T) {
	real := t.TempDir()
	dir := filepath.Join(t.TempDir(), "linked")
	require.NoError(t, os.Symlink(real, dir))
	write := func(name, d string) { writeGrays(t, real, name, d, 1) }
	write("a.ome.tif", omeDocument(`UUID="`+uuidA+`"`, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`),
		pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"><UUID FileName="b.ome.tif">`+uuidB+`</UUID></TiffData>`)))
	require.NoError(t, os.Mkdir(filepath.Join(real, "sub"), 0o755))
	write("sub/stored.tif", omeDocument(`UUID="`+uuidB+`"`))
	require.NoError(t, os.Symlink("sub/stored.tif", filepath.Join(real, "b.ome.tif")))
	f, err := Open(filepath.Join(dir, "a.ome.tif"), Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{`"im0" 8x8 Z1 C1 T1 XYZCT uint16 x1: 0:*`, `"im1" 8x8 Z1 C1 T1 XYZCT uint16 x1: -1:*`}, summary(f))
	require.NoError(t, f.Close())

	// Staged: every file a link to one of the dataset's, elsewhere.
	staged := t.TempDir()
	for _, name := range []string{"a.ome.tif", "b.ome.tif"} {
		require.NoError(t, os.Symlink(filepath.Join(dir, name), filepath.Join(staged, name)))
	}
	f, err = Open(filepath.Join(staged, "a.ome.tif"), Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{`"im0" 8x8 Z1 C1 T1 XYZCT uint16 x1: 0:*`, `"im1" 8x8 Z1 C1 T1 XYZCT uint16 x1: -1:*`}, summary(f))
	require.NoError(t, f.Close())
}

// TestDatasetWithoutDir checks that New, given no directory to read the
// other files from, refuses a dataset whose planes are in them.
func TestDatasetWithoutDir(t *testing.T) {
	for _, companion := range []bool{false, true} {
		dir := t.TempDir()
		d := datasettest.Write(t, dir, companion)
		rc, err := tiff.Open(filepath.Join(dir, d.File(1).Name))
		require.NoError(t, err)
		_, err = New(rc.File, d.File(1).Name, Options{})
		assert.ErrorIs(t, err, ErrMultiFile, "companion %v", companion)
		assert.ErrorContains(t, err, "Options.DatasetDir")
		require.NoError(t, rc.Close())
	}
}

// TestDatasetRefused checks datasets whose other files cannot be read as
// the document says: each is refused with a typed error naming what, and
// with SkipUnsupported the image concerned is left out, the other kept.
func TestDatasetRefused(t *testing.T) {
	const (
		uuidA = "urn:uuid:00000000-0000-4000-8000-00000000000a"
		uuidB = "urn:uuid:00000000-0000-4000-8000-00000000000b"
		uuidC = "urn:uuid:00000000-0000-4000-8000-00000000000c"
	)
	inA := `<TiffData IFD="0"/>`
	inB := func(name, uuid string) string {
		return fmt.Sprintf(`<TiffData IFD="0"><UUID FileName="%s">%s</UUID></TiffData>`, name, uuid)
	}
	doc := func(root, second string) string {
		return omeDocument(root, pixels(1, 1, 1, "XYZCT", inA), pixels(1, 1, 1, "XYZCT", second))
	}
	companionOf := func(uuid string) string { return `<BinaryOnly MetadataFile="set.companion.ome" UUID="` + uuid + `"/>` }
	binaryOnly := func(uuid string) string {
		return `<?xml version="1.0"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="` + uuidA + `">` + companionOf(uuid) + `</OME>`
	}
	companionDoc := doc(`UUID="`+uuidC+`"`, inB("b.ome.tif", uuidB))
	companionDoc = strings.Replace(companionDoc, inA, inB("a.ome.tif", uuidA), 1)
	tests := []struct {
		name string
		a    string // a.ome.tif's OME-XML
		// files are the other files: a TIFF of one page with this
		// description ("2:" and it: two pages), or "companion:" and a
		// companion's text.
		files map[string]string
		is    []error
		says  string
		kept  int // images kept with SkipUnsupported; -1: refused even then
	}{
		{"the other file missing", doc(`UUID="`+uuidA+`"`, inB("b.ome.tif", uuidB)), nil,
			[]error{ErrMetadata, fs.ErrNotExist}, `the dataset's file "b.ome.tif" is missing (`, 1},
		{"the other file damaged", doc(`UUID="`+uuidA+`"`, inB("b.ome.tif", uuidB)), map[string]string{"b.ome.tif": "cut:" + omeDocument(`UUID="`+uuidB+`"`)},
			[]error{tiff.ErrMalformed}, `source: the dataset's file "b.ome.tif" is damaged: tiff: malformed file`, 1},
		{"another UUID", doc(`UUID="`+uuidA+`"`, inB("b.ome.tif", uuidB)), map[string]string{"b.ome.tif": omeDocument(`UUID="` + uuidC + `"`)},
			[]error{ErrMetadata}, `names "b.ome.tif" with UUID ` + uuidB + `, but the file's UUID is ` + uuidC, 1},
		{"a path", doc(`UUID="`+uuidA+`"`, inB("../b.ome.tif", uuidB)), nil,
			[]error{ErrMetadata}, `names "../b.ome.tif", no file in the dataset's directory`, 1},
		{"a UUID alone", doc(`UUID="`+uuidA+`"`, `<TiffData IFD="0"><UUID>`+uuidB+`</UUID></TiffData>`), nil,
			[]error{ErrMultiFile}, "by its UUID alone", 1},
		{"a UUID of two lines, alone", doc(`UUID="`+uuidA+`"`, `<TiffData IFD="0"><UUID>urn:uuid:1&#10;forged</UUID></TiffData>`), nil,
			[]error{ErrMultiFile}, `names a file by its UUID alone, "urn:uuid:1\nforged" (no TiffData gives its FileName)`, 1},
		{"the other file no OME-TIFF", doc(`UUID="`+uuidA+`"`, inB("b.ome.tif", uuidB)), map[string]string{"b.ome.tif": "a plain TIFF"},
			[]error{ErrMetadata}, `names "b.ome.tif" with UUID ` + uuidB + `, but the file has no OME-XML`, 1},
		// A link out of the directory, to a file of the wrong UUID.
		{"a link out", doc(`UUID="`+uuidA+`"`, inB("b.ome.tif", uuidB)), map[string]string{"b.ome.tif": "link:" + omeDocument(`UUID="`+uuidC+`"`)},
			[]error{ErrMetadata}, `names "b.ome.tif" with UUID ` + uuidB + `, but the file's UUID is ` + uuidC, 1},
		{"not a TIFF", doc(`UUID="`+uuidA+`"`, inB("b.ome.tif", uuidB)), map[string]string{"b.ome.tif": "companion:" + omeDocument(``)},
			[]error{ErrUnsupported, tiff.ErrNotTIFF}, `the dataset's file "b.ome.tif"`, 1},
		{"the companion missing", binaryOnly(uuidC), nil, []error{ErrMetadata, fs.ErrNotExist}, `the metadata file "set.companion.ome"`, -1},
		{"the companion's UUID", binaryOnly(uuidB), map[string]string{"set.companion.ome": "companion:" + companionDoc, "b.ome.tif": omeDocument(`UUID="` + uuidB + `"`)},
			[]error{ErrMetadata}, `the metadata file "set.companion.ome" has UUID "` + uuidC + `"; the BinaryOnly element names "` + uuidB + `"`, -1},
		{"the companion BinaryOnly", binaryOnly(uuidC), map[string]string{"set.companion.ome": "companion:" + binaryOnly(uuidC)},
			[]error{ErrMetadata}, `the metadata file "set.companion.ome" is BinaryOnly too`, -1},
		{"the companion no OME-XML", binaryOnly(uuidC), map[string]string{"set.companion.ome": "companion:<svg/>"},
			[]error{ErrMetadata}, `the metadata file "set.companion.ome": not an OME-XML document`, -1},
		{"the companion a path out", strings.Replace(binaryOnly(uuidC), "set.companion.ome", "../set.companion.ome", 1), nil,
			[]error{ErrMetadata}, `BinaryOnly MetadataFile "../set.companion.ome" names no file in the dataset's directory`, -1},
		// An absolute path is read as its base name in the directory.
		{"the companion an absolute path", strings.Replace(binaryOnly(uuidC), "set.companion.ome", "/etc/set.companion.ome", 1), nil,
			[]error{ErrMetadata, fs.ErrNotExist}, `the metadata file "set.companion.ome": open `, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name string, pages ...testPage) {
				data, _ := fileOf(t, binary.LittleEndian, false, pages...)
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
			}
			write("a.ome.tif", gray(8, 8, description(tt.a)))
			for name, text := range tt.files {
				switch {
				case strings.HasPrefix(text, "companion:"):
					require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.TrimPrefix(text, "companion:")), 0o644))
				case strings.HasPrefix(text, "cut:"): // its first directory past its end
					data, _ := fileOf(t, binary.LittleEndian, false, gray(8, 8, description(strings.TrimPrefix(text, "cut:"))))
					require.NoError(t, os.WriteFile(filepath.Join(dir, name), data[:16], 0o644))
				case strings.HasPrefix(text, "2:"):
					write(name, gray(8, 8, description(strings.TrimPrefix(text, "2:"))), gray(8, 8))
				case strings.HasPrefix(text, "link:"): // to a file out of the directory
					data, _ := fileOf(t, binary.LittleEndian, false, gray(8, 8, description(strings.TrimPrefix(text, "link:"))))
					out := filepath.Join(t.TempDir(), name)
					require.NoError(t, os.WriteFile(out, data, 0o644))
					require.NoError(t, os.Symlink(out, filepath.Join(dir, name)))
				default:
					write(name, gray(8, 8, description(text)))
				}
			}
			_, err := Open(filepath.Join(dir, "a.ome.tif"), Options{})
			assert.Equal(t, errors.Is(err, ErrUnsupported), slices.Contains(tt.is, ErrUnsupported), "ErrUnsupported only where said: %v", err)
			for _, is := range tt.is {
				require.ErrorIs(t, err, is)
			}
			assert.ErrorContains(t, err, tt.says)
			f, err := Open(filepath.Join(dir, "a.ome.tif"), Options{SkipUnsupported: true})
			if tt.kept < 0 {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, f.Images, tt.kept)
			require.NotEmpty(t, f.Skipped)
			assert.ErrorContains(t, f.Skipped[0], tt.says)
			// The image of the other file is left out whole; a stray page
			// is kept as an image of its own.
			assert.Equal(t, tt.kept == 1, errors.Is(f.Skipped[0], ErrLeftOut))
			require.NoError(t, f.Close())
		})
	}
}

// TestDatasetFilesBounded checks that a document naming more files than
// a dataset may hold is refused once the bound is reached, whatever
// files are there.
func TestDatasetFilesBounded(t *testing.T) {
	defer func(n int) { maxDatasetFiles = n }(maxDatasetFiles)
	maxDatasetFiles = 8
	dir := t.TempDir()
	var tds strings.Builder
	for i := range maxDatasetFiles + 1 {
		fmt.Fprintf(&tds, `<TiffData IFD="0" FirstT="%d" PlaneCount="1"><UUID FileName="p%d.tif">urn:uuid:%d</UUID></TiffData>`, i, i, i)
	}
	text := omeDocument(`UUID="urn:uuid:a"`, pixels(1, 1, maxDatasetFiles+1, "XYZCT", tds.String()))
	data, _ := fileOf(t, binary.LittleEndian, false, gray(8, 8, description(text)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.ome.tif"), data, 0o644))
	for i := range maxDatasetFiles + 1 {
		part := fmt.Sprintf(`<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="urn:uuid:%d"><BinaryOnly MetadataFile="a.ome.tif" UUID="urn:uuid:a"/></OME>`, i)
		page, _ := fileOf(t, binary.LittleEndian, false, gray(8, 8, description(part)))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.tif", i)), page, 0o644))
	}
	_, err := Open(filepath.Join(dir, "a.ome.tif"), Options{})
	require.ErrorIs(t, err, ErrMultiFile)
	assert.ErrorContains(t, err, fmt.Sprintf("more than %d files", maxDatasetFiles))
}

// openFiles counts the process's open file descriptors.
func openFiles(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err, "Linux's /proc")
	return len(entries)
}

// TestDatasetNames checks how TiffData elements find their files: a file
// that cannot be opened is tried once however many images name it (and
// holds no descriptor), a file named two ways is one part, a UUID given
// alone finds the name another TiffData gives it wherever that one is,
// a UUID given two names is refused, and so is a TiffData of a
// companion's document that names no file.
func TestDatasetNames(t *testing.T) {
	inB := func(name, uuid string, ifd int) string {
		return fmt.Sprintf(`<TiffData IFD="%d"><UUID FileName="%s">%s</UUID></TiffData>`, ifd, name, uuid)
	}
	byUUID := func(uuid string, ifd int) string {
		return fmt.Sprintf(`<TiffData IFD="%d"><UUID>%s</UUID></TiffData>`, ifd, uuid)
	}
	setup := func(t *testing.T, a string, bPages int) string {
		dir := t.TempDir()
		data, _ := fileOf(t, binary.LittleEndian, false, gray(8, 8, description(a)))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a.ome.tif"), data, 0o644))
		pages := []testPage{gray(8, 8, description(omeDocument(`UUID="`+uuidB+`"`)))}
		for range bPages - 1 {
			pages = append(pages, gray(8, 8))
		}
		data, _ = fileOf(t, binary.LittleEndian, false, pages...)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "b.ome.tif"), data, 0o644))
		return filepath.Join(dir, "a.ome.tif")
	}
	one := func(inside string) string { return pixels(1, 1, 1, "XYZCT", inside) }

	t.Run("a file of no pages", func(t *testing.T) {
		var images []string
		for range 50 {
			images = append(images, one(inB("e.tif", "", 0)))
		}
		path := setup(t, omeDocument(`UUID="`+uuidA+`"`, append([]string{one(`<TiffData IFD="0"/>`)}, images...)...), 1)
		require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), "e.tif"), []byte("II*\x00\x00\x00\x00\x00"), 0o644))
		before := openFiles(t)
		f, err := Open(path, Options{SkipUnsupported: true})
		require.NoError(t, err)
		assert.ErrorContains(t, f.Skipped[49], `the dataset's file "e.tif" has no pages`)
		assert.LessOrEqual(t, openFiles(t), before+1, "the file opened, and nothing for the empty one")
		assert.Len(t, f.Images, 1)
		assert.Len(t, f.Skipped, 50)
		require.NoError(t, f.Close())
	})
	t.Run("a file named two ways", func(t *testing.T) {
		path := setup(t, omeDocument(`UUID="`+uuidA+`"`, one(`<TiffData IFD="0"/>`), one(inB("b.ome.tif", uuidB, 0)), one(inB("link.ome.tif", "", 1))), 2)
		require.NoError(t, os.Symlink("b.ome.tif", filepath.Join(filepath.Dir(path), "link.ome.tif")))
		f, err := Open(path, Options{})
		require.NoError(t, err, "every page of b is mapped, through either name")
		assert.Len(t, f.Parts, 1)
		require.NoError(t, f.Close())
	})
	// Paths as Bio-Formats resolves them: within the directory, either
	// separator; an absolute one (the acquiring machine's) by its base
	// name in the directory.
	for _, name := range []string{"sub/b.ome.tif", `sub\b.ome.tif`, "./sub//b.ome.tif", "/data/old/b.ome.tif", `C:\\data\\b.ome.tif`, "C:b.ome.tif"} {
		t.Run("FileName "+name, func(t *testing.T) {
			path := setup(t, omeDocument(`UUID="`+uuidA+`"`, one(`<TiffData IFD="0"/>`), one(inB(name, uuidB, 0))), 1)
			want := "b.ome.tif"
			if strings.Contains(name, "sub") {
				want = filepath.Join("sub", "b.ome.tif")
				dir := filepath.Dir(path)
				require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
				require.NoError(t, os.Rename(filepath.Join(dir, "b.ome.tif"), filepath.Join(dir, want)))
			}
			f, err := Open(path, Options{})
			require.NoError(t, err)
			require.Len(t, f.Parts, 1)
			assert.Equal(t, want, f.Parts[0].Name)
			assert.Len(t, f.Images, 2)
			require.NoError(t, f.Close())
		})
	}
	// An absolute path whose base name is the file opened's, of another
	// UUID: another file, elsewhere, not read for this one.
	t.Run("FileName of the file opened, another UUID", func(t *testing.T) {
		path := setup(t, omeDocument(`UUID="`+uuidA+`"`, one(`<TiffData IFD="0"/>`), one(inB("/elsewhere/a.ome.tif", uuidB, 0))), 1)
		_, err := Open(path, Options{})
		require.ErrorIs(t, err, ErrMetadata)
		assert.ErrorContains(t, err, `names "/elsewhere/a.ome.tif" with UUID `+uuidB+`, but the file of that name here has UUID `+uuidA)
	})
	for _, name := range []string{"sub/../b.ome.tif", "..", "/", "C:", "./"} {
		t.Run("FileName "+name, func(t *testing.T) {
			path := setup(t, omeDocument(`UUID="`+uuidA+`"`, one(`<TiffData IFD="0"/>`), one(inB(name, uuidB, 0))), 1)
			_, err := Open(path, Options{})
			require.ErrorIs(t, err, ErrMetadata)
			assert.ErrorContains(t, err, "no file in the dataset's directory")
		})
	}
	t.Run("a UUID alone, its name given later", func(t *testing.T) {
		path := setup(t, omeDocument(`UUID="`+uuidA+`"`, one(`<TiffData IFD="0"/>`), one(byUUID(uuidB, 1)), one(inB("b.ome.tif", uuidB, 0))), 2)
		f, err := Open(path, Options{})
		require.NoError(t, err)
		assert.Len(t, f.Images, 3)
		require.NoError(t, f.Close())
	})
	t.Run("a UUID given one name two ways", func(t *testing.T) {
		path := setup(t, omeDocument(`UUID="`+uuidA+`"`, one(`<TiffData IFD="0"/>`), one(inB("b.ome.tif", uuidB, 0)), one(inB("./b.ome.tif", uuidB, 1))), 2)
		f, err := Open(path, Options{})
		require.NoError(t, err)
		assert.Len(t, f.Images, 3)
		require.NoError(t, f.Close())
	})
	t.Run("a UUID given two names", func(t *testing.T) {
		path := setup(t, omeDocument(`UUID="`+uuidA+`"`, one(`<TiffData IFD="0"/>`), one(inB("b.ome.tif", uuidB, 0)), one(inB("c.ome.tif", uuidB, 0))), 1)
		_, err := Open(path, Options{})
		require.ErrorIs(t, err, ErrMetadata)
		assert.ErrorContains(t, err, "give UUID "+uuidB+" to files of different names")
	})
	// A file renamed whose root gives no UUID (as a hand-edited or old
	// writer's may not): Bio-Formats takes the missing file its TiffData
	// names for the file opened, whose UUID it becomes; a second missing
	// UUID then is a missing file.
	renamed := []struct {
		name    string
		root    string
		images  []string
		b       int // b.ome.tif's pages, 0 for none
		refused string
	}{
		{"renamed, no root UUID", "", []string{one(inB("old.ome.tif", uuidA, 0))}, 0, ""},
		{"renamed, no root UUID, no UUID value", "", []string{one(inB("old.ome.tif", "", 0))}, 0, ""},
		{"renamed, no root UUID, a UUID alone after", "", []string{one(inB("old.ome.tif", uuidA, 0)), one(byUUID(uuidA, 0))}, 0, ""},
		{"renamed, no root UUID, another file", "", []string{one(inB("old.ome.tif", uuidA, 0)), one(inB("b.ome.tif", uuidB, 0))}, 1, ""},
		{"renamed, no root UUID, two missing", "", []string{one(inB("old.ome.tif", uuidA, 0)), one(inB("c.ome.tif", "urn:uuid:c", 0))}, 0,
			`the dataset's file "c.ome.tif" is missing`},
		{"renamed, a root UUID of its own", `UUID="urn:uuid:c"`, []string{one(inB("old.ome.tif", uuidA, 0))}, 0,
			`the dataset's file "old.ome.tif" is missing`},
		// Not renamed: named as it is, with a UUID, which is its own; the
		// other file's is another's, missing, whichever comes first.
		{"no root UUID, its own name, another missing", "", []string{one(inB("a.ome.tif", uuidA, 0)), one(inB("c.ome.tif", "urn:uuid:c", 0))}, 0,
			`the dataset's file "c.ome.tif" is missing`},
		{"no root UUID, another missing, its own name", "", []string{one(inB("c.ome.tif", "urn:uuid:c", 0)), one(inB("a.ome.tif", uuidA, 0))}, 0,
			`the dataset's file "c.ome.tif" is missing`},
	}
	for _, tt := range renamed {
		t.Run(tt.name, func(t *testing.T) {
			path := setup(t, omeDocument(tt.root, tt.images...), max(tt.b, 1))
			if tt.b == 0 {
				require.NoError(t, os.Remove(filepath.Join(filepath.Dir(path), "b.ome.tif")))
			}
			f, err := Open(path, Options{})
			if tt.refused != "" {
				require.ErrorIs(t, err, ErrMetadata)
				assert.ErrorContains(t, err, tt.refused)
				return
			}
			require.NoError(t, err)
			assert.Len(t, f.Images, len(tt.images))
			assert.Len(t, f.Parts, tt.b)
			assert.Empty(t, f.Skipped)
			require.NoError(t, f.Close())
		})
	}
	t.Run("a companion's TiffData naming no file", func(t *testing.T) {
		path := setup(t, `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="`+uuidA+`"><BinaryOnly MetadataFile="set.companion.ome"/></OME>`, 1)
		companion := omeDocument(`UUID="urn:uuid:c"`, one(`<TiffData IFD="0"/>`), one(inB("b.ome.tif", uuidB, 0)))
		require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), "set.companion.ome"), []byte(companion), 0o644))
		_, err := Open(path, Options{})
		require.ErrorIs(t, err, ErrMetadata)
		assert.ErrorContains(t, err, `TiffData 0 of the companion "set.companion.ome" names no file`)
		f, err := Open(path, Options{SkipUnsupported: true})
		require.NoError(t, err)
		assert.Equal(t, "set.companion.ome", f.Companion)
		require.NoError(t, f.Close())
	})
}

// TestCompanionByteOrderMark: a companion file and a part's description
// may start with UTF-8's byte order mark, which counts neither in the
// document's size (a document of pyramid.MaxOMEXMLSize bytes after it is
// read whole, one byte more is refused as larger) nor before its root's
// UUID.
func TestCompanionByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	const root = `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="urn:uuid:0"><!--`
	doc := func(size int) string {
		return root + strings.Repeat(" ", size-len(root)-len("--></OME>")) + "--></OME>"
	}
	for _, tc := range []struct {
		size    int
		refused bool
	}{{pyramid.MaxOMEXMLSize, false}, {pyramid.MaxOMEXMLSize + 1, true}} {
		name := fmt.Sprintf("c%d.companion.ome", tc.size)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(byteOrderMark+doc(tc.size)), 0o644))
		text, err := readCompanion(dir, name, "companion")
		if tc.refused {
			require.ErrorIs(t, err, ErrMetadata)
			assert.ErrorContains(t, err, "is larger than")
			continue
		}
		require.NoError(t, err)
		assert.Len(t, text, tc.size, "the document whole, without the mark")
	}
	assert.Equal(t, "urn:uuid:0", rootUUID(byteOrderMark+doc(200)))
}

// TestDatasetDescriptorsExhausted: a dataset's file that cannot be opened
// for want of file descriptors fails the mapping, naming the limit, even
// with SkipUnsupported: an image left out for the system's limits would
// be lost to a run that a raised limit completes.
func TestDatasetDescriptorsExhausted(t *testing.T) {
	dir := t.TempDir()
	write := func(name, d string) { writeGrays(t, dir, name, d, 1) }
	// Image 0 in the file opened, image 1 in the other.
	write("a.ome.tif", omeDocument(`UUID="`+uuidA+`"`, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`),
		pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"><UUID FileName="b.ome.tif">`+uuidB+`</UUID></TiffData>`)))
	write("b.ome.tif", omeDocument(`UUID="`+uuidB+`"`))
	var limit syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit))
	// The limit that leaves one descriptor free below it: the lowest
	// number not open, the one the next open takes.
	listing, err := os.Open("/proc/self/fd")
	if err != nil {
		t.Fatalf("the open descriptors are listed in /proc/self/fd (Linux): %v", err)
	}
	names, err := listing.Readdirnames(-1)
	require.NoError(t, err)
	own := int(listing.Fd())
	require.NoError(t, listing.Close())
	open := map[int]bool{}
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd != own {
			open[fd] = true
		}
	}
	free := 0
	for open[free] {
		free++
	}
	for _, skip := range []bool{false, true} {
		// Room for the file opened (and the directory read) but not for
		// the dataset's other files.
		low := limit
		low.Cur = uint64(free + 1)
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
		f, err := Open(filepath.Join(dir, "a.ome.tif"), Options{SkipUnsupported: skip})
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit))
		if f != nil {
			f.Close()
		}
		require.ErrorIs(t, err, syscall.EMFILE, "skip %v", skip)
		assert.ErrorContains(t, err, "ulimit -n")
	}
}

// TestOwnNameTwoUUIDs: an OME-TIFF whose root has no UUID and whose
// TiffData give its own name two UUIDs, one of them also named by UUID
// alone, maps the same at every run, every plane from the file opened,
// which is no part of its own (the file took one UUID or the other by a
// map's order, and was then opened again as a part, or not).
func TestOwnNameTwoUUIDs(t *testing.T) {
	image := func(i int, uuid string) string {
		return fmt.Sprintf(`<Image ID="Image:%d"><Pixels ID="Pixels:%d" DimensionOrder="XYZCT" Type="uint8" SizeX="16" SizeY="16" SizeZ="1" SizeC="1" SizeT="1">`+
			`<Channel ID="Channel:%d:0" SamplesPerPixel="1"/><TiffData IFD="%d" PlaneCount="1">%s</TiffData></Pixels></Image>`, i, i, i, i, uuid)
	}
	doc := `<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06">` +
		image(0, `<UUID FileName="a.ome.tif">urn:uuid:1</UUID>`) + image(1, `<UUID FileName="a.ome.tif">urn:uuid:2</UUID>`) +
		image(2, `<UUID>urn:uuid:2</UUID>`) + `</OME>`
	pages := make([]testPage, 3)
	for i := range pages {
		pages[i] = testPage{width: 16, height: 16, samples: 1, bits: 8, seed: i}
	}
	pages[0].more = description(doc)
	file, images := fileOf(t, binary.LittleEndian, false, pages...)
	path := filepath.Join(t.TempDir(), "a.ome.tif")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	for range 20 {
		f, err := Open(path, Options{})
		require.NoError(t, err)
		assert.Empty(t, f.Parts, "the file opened is no part of its own")
		require.Len(t, f.Images, 3)
		for i, im := range f.Images {
			assert.Same(t, f.TIFF.Pages[i], im.Planes[0].Page, "image %d", i)
			assert.Equal(t, images[i], planePixels(t, im.Planes[0]), "image %d", i)
		}
		require.NoError(t, f.Close())
	}
}
