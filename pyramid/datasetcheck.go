package pyramid

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// DatasetReport is what a dataset check found: the files of the dataset
// and what they hold.
type DatasetReport struct {
	// Metadata is the name of the file whose OME-XML the check read the
	// dataset from: the file given, or the companion it points to.
	Metadata string
	// Companion reports whether that file is a companion (the TIFFs hold
	// BinaryOnly elements).
	Companion bool
	// BinaryOnly counts the TIFFs whose OME-XML is a BinaryOnly element
	// pointing to the metadata: every TIFF with a companion; beside a
	// master OME-TIFF, those that do not repeat its metadata.
	BinaryOnly int
	// Images and Planes count the dataset's images and their planes.
	Images, Planes int
	// Files are the TIFF files the metadata names, in the order it first
	// names them.
	Files []CheckedFile
}

// CheckedFile is one file of a checked dataset.
type CheckedFile struct {
	// Name and UUID are the file's as the metadata names it.
	Name, UUID string
	// Planes counts the planes the metadata puts in the file, and IFDs the
	// directories of its main chain (0 if it is missing or unreadable).
	Planes, IFDs int
}

// DatasetProblem is one thing wrong with a dataset.
type DatasetProblem struct {
	// File names the file at fault: one the metadata names, or the
	// metadata's own (for an image whose planes are missing, say).
	File string
	// Err is the kind of problem: ErrMissingFile, ErrWrongFile,
	// ErrMissingPlanes (planes no file holds) or ErrPlane (planes or IFDs
	// given twice, or out of range).
	Err error
	// Detail says what is wrong.
	Detail string
}

// String returns "file: detail".
func (p DatasetProblem) String() string { return p.File + ": " + p.Detail }

// DatasetError is a dataset that a check found incomplete or inconsistent:
// every problem found, each naming its file. errors.Is finds the kinds of
// its problems.
type DatasetError struct {
	// Path is what was checked: the file given to CheckDataset, or the
	// directory given to Dataset.Check.
	Path     string
	Problems []DatasetProblem
}

// maxListed bounds the problems an error message lists.
const maxListed = 10

// Error lists the first problems: "pyramid: dataset d/a.ome.tif: 2
// problems: a_3.ome.tif: missing; ...".
func (e *DatasetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%sdataset %s: ", prefix, e.Path)
	if len(e.Problems) != 1 {
		fmt.Fprintf(&b, "%d problems: ", len(e.Problems))
	}
	for i, p := range e.Problems[:min(len(e.Problems), maxListed)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if len(e.Problems) > maxListed {
		fmt.Fprintf(&b, "; and %d more", len(e.Problems)-maxListed)
	}
	return b.String()
}

// Unwrap returns the kinds of the problems, each once.
func (e *DatasetError) Unwrap() []error {
	var kinds []error
	for _, p := range e.Problems {
		if !slices.Contains(kinds, p.Err) {
			kinds = append(kinds, p.Err)
		}
	}
	return kinds
}

// CheckDataset checks a written multi-file OME-TIFF dataset from one of
// its files, path: a TIFF whose OME-XML describes the dataset (a master),
// a TIFF whose BinaryOnly element points to a companion or a master, or
// the companion itself. Every file the metadata names must be in path's
// directory, a TIFF, with the UUID the metadata gives it, and the same
// metadata (a master) or a BinaryOnly element pointing to it. Every plane
// of every image must be in exactly one TiffData, and every IFD of every
// file must hold exactly one plane, of the image's size and type.
//
// It checks the layout this package writes, which is stricter than the
// OME-TIFF specification: files in subdirectories or named by absolute
// paths, and IFDs that hold no plane (which readers ignore), are
// problems, though package source reads such datasets.
//
// It returns what it found, and a *DatasetError listing every problem, or
// nil if there is none. An error reading a file other than its absence is
// returned as it is.
func CheckDataset(path string) (DatasetReport, error) {
	dir, name := filepath.Dir(path), filepath.Base(path)
	c := &datasetChecker{dir: dir, path: path}
	data, f, err := c.open(name)
	if f == nil && data == nil {
		return c.report, c.result(err)
	}
	if f != nil {
		defer f.Close()
		if data = c.description(name, f.File); data == nil {
			return c.report, c.result(nil)
		}
	}
	meta, err := parseDatasetMeta(data)
	if err != nil {
		c.problem(name, ErrWrongFile, "%v", err)
		return c.report, c.result(nil)
	}
	c.metaName, c.metaXML, c.meta = name, data, meta
	if f != nil {
		c.given = [2]string{name, meta.uuid}
	}
	if bo := meta.binaryOnly; bo != nil {
		if f == nil {
			c.problem(name, ErrWrongFile, "a companion with a BinaryOnly element")
			return c.report, c.result(nil)
		}
		if !c.readCompanion(bo) {
			return c.report, c.result(nil)
		}
	} else if f == nil {
		c.companion = true
	}
	return c.report, c.result(c.run())
}

// Check checks the dataset written in dir against the plan, as
// CheckDataset does from one of its files, and more strictly: the OME-XML
// of every file, and the companion, must be the plan's byte for byte. It
// works whatever files are missing.
func (d *Dataset) Check(dir string) (DatasetReport, error) {
	if d.unmade() {
		return DatasetReport{}, errUnmade
	}
	c := &datasetChecker{dir: dir, path: dir, companion: d.spec.Companion}
	var err error
	if d.spec.Companion {
		c.metaName = d.companion[0]
		c.metaXML, err = d.companionXML()
	} else {
		c.metaName = d.spec.Files[0].Name
		c.metaXML, err = d.metadata(d.uuids[0])
	}
	if err != nil {
		return c.report, err
	}
	if c.meta, err = parseDatasetMeta(c.metaXML); err != nil {
		return c.report, fmt.Errorf("pyramid: the plan's metadata: %w", err)
	}
	index := map[string]int{}
	for i, f := range d.spec.Files {
		index[f.Name] = i
	}
	c.expect = func(name string) ([]byte, bool) {
		i, ok := index[name]
		if !ok {
			return nil, false
		}
		want, err := d.description(i)
		return want, err == nil
	}
	if d.spec.Companion {
		data, f, err := c.open(c.metaName)
		switch {
		case err != nil:
			return c.report, c.result(err)
		case f != nil:
			f.Close()
			c.problem(c.metaName, ErrWrongFile, "a TIFF, not the companion")
		case data != nil && !bytes.Equal(data, c.metaXML):
			c.problem(c.metaName, ErrWrongFile, "is not the plan's companion")
		}
	}
	return c.report, c.result(c.run())
}

// datasetChecker checks a dataset from its metadata.
type datasetChecker struct {
	dir, path string
	metaName  string    // the file the metadata is in
	given     [2]string // the name and UUID of the TIFF CheckDataset was given
	metaXML   []byte
	meta      *datasetMeta
	companion bool // the metadata is a companion's
	// expect, if set, gives the exact OME-XML each TIFF must hold.
	expect func(name string) ([]byte, bool)

	report    DatasetReport
	problems  []DatasetProblem
	absent    map[string]bool
	lookedFor int // missing files whose temporary files were looked for
}

// maxTempLookups bounds the missing files whose writers' temporary files
// a check looks for (iohandle.Temporaries).
const maxTempLookups = 64

// problem records a problem of file.
func (c *datasetChecker) problem(file string, kind error, format string, args ...any) {
	c.problems = append(c.problems, DatasetProblem{File: file, Err: kind, Detail: fmt.Sprintf(format, args...)})
}

// missing reports whether open found file missing.
func (c *datasetChecker) missing(file string) bool { return c.absent[file] }

// result is the check's error: err if reading failed, else the problems.
func (c *datasetChecker) result(err error) error {
	if err != nil {
		return err
	}
	if len(c.problems) == 0 {
		return nil
	}
	return &DatasetError{Path: c.path, Problems: c.problems}
}

// open opens a file of the dataset as a TIFF, or reads it whole when it is
// no TIFF (a companion). A missing or malformed file is a problem, and
// both results are nil; err is an error reading it otherwise.
func (c *datasetChecker) open(name string) (data []byte, f *tiff.ReadCloser, err error) {
	path := filepath.Join(c.dir, name)
	f, err = tiff.Open(path)
	switch {
	case err == nil:
		return nil, f, nil
	case errors.Is(err, fs.ErrNotExist):
		if c.absent == nil {
			c.absent = map[string]bool{}
		}
		c.absent[name] = true
		c.problem(name, ErrMissingFile, "missing")
		return nil, nil, nil
	case errors.Is(err, tiff.ErrNotTIFF):
		data, err := readAtMost(path, MaxOMEXMLSize)
		if err != nil {
			return nil, nil, err
		}
		if data == nil {
			c.problem(name, ErrWrongFile, "neither a TIFF nor an OME-XML document of at most %d bytes", MaxOMEXMLSize)
		}
		return data, nil, nil
	case errors.Is(err, tiff.ErrMalformed), errors.Is(err, tiff.ErrUnsupported):
		c.problem(name, ErrWrongFile, "not a readable TIFF: %v", strings.TrimPrefix(err.Error(), "tiff: "))
		return nil, nil, nil
	}
	return nil, nil, err
}

// readAtMost reads the file at path whole, or returns nil data when it is
// longer than limit.
func readAtMost(path string, limit int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(data)) > limit {
		return nil, err
	}
	return data, nil
}

// openRegular opens the regular file at path: a FIFO or a device, whose
// open would block or read for ever, is refused, as tiff.Open refuses it.
func openRegular(path string) (*os.File, error) { return tiff.OpenRegular(path) }

// description returns the OME-XML of a TIFF: its first IFD's
// ImageDescription. A TIFF without one is a problem, and nil.
func (c *datasetChecker) description(name string, f *tiff.File) []byte {
	if len(f.Pages) > 0 {
		if text, ok := f.Pages[0].Text(tiff.TagImageDescription); ok {
			return []byte(text)
		}
	}
	c.problem(name, ErrWrongFile, "no OME-XML: its first IFD has no ImageDescription")
	return nil
}

// readCompanion makes the metadata file a BinaryOnly element points to
// the check's metadata: a companion, or a master OME-TIFF (the OME-TIFF
// specification's two kinds of metadata file; Bio-Formats reads both).
// It reports whether it could.
func (c *datasetChecker) readCompanion(bo *binaryOnly) bool {
	if !isFileName(bo.file) {
		c.problem(c.metaName, ErrWrongFile, "BinaryOnly@MetadataFile %q is not a file name in its directory", bo.file)
		return false
	}
	data, f, err := c.open(bo.file)
	if err != nil {
		c.problem(bo.file, ErrWrongFile, "cannot be read: %v", err)
		return false
	}
	kind := "a companion"
	if f != nil {
		data, kind = c.description(bo.file, f.File), "a master OME-TIFF"
		f.Close()
	}
	if data == nil {
		return false
	}
	meta, err := parseDatasetMeta(data)
	switch {
	case err != nil:
		c.problem(bo.file, ErrWrongFile, "%v", err)
		return false
	case meta.binaryOnly != nil:
		c.problem(bo.file, ErrWrongFile, "%s with a BinaryOnly element", kind)
		return false
	case meta.uuid != bo.uuid:
		c.problem(bo.file, ErrWrongFile, "its UUID is %q; %s's BinaryOnly says %q", meta.uuid, c.metaName, bo.uuid)
		return false
	}
	c.metaName, c.metaXML, c.meta, c.companion = bo.file, data, meta, f == nil
	return true
}

// isFileName reports whether name names a file in the dataset's
// directory, and nothing outside it.
func isFileName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// checkFile is a file the metadata names, with the TiffData it holds.
type checkFile struct {
	name, uuid string
	refs       []tiffRef
	ifds       int  // of its main chain
	ok         bool // read, and with the right UUID and metadata
}

// tiffRef is a TiffData of an image.
type tiffRef struct{ image, k int }

// run checks the files the metadata names and the planes of its images.
// It returns an error only when reading a file fails.
func (c *datasetChecker) run() error {
	c.report.Metadata, c.report.Companion, c.report.Images = c.metaName, c.companion, len(c.meta.images)
	files := c.files()
	for _, f := range files {
		if err := c.checkFile(f); err != nil {
			return err
		}
	}
	for k := range c.meta.images {
		c.report.Planes += c.meta.images[k].planes()
		c.checkPlanes(k, files)
	}
	for _, f := range files {
		planes := 0
		for _, r := range f.refs {
			planes += c.count(r, f)
		}
		c.report.Files = append(c.report.Files, CheckedFile{Name: f.name, UUID: f.uuid, Planes: planes, IFDs: f.ifds})
	}
	return nil
}

// files gathers the files the TiffData elements name, in order, checking
// that names and UUIDs pair up.
func (c *datasetChecker) files() []*checkFile {
	var files []*checkFile
	byName, byUUID := map[string]*checkFile{}, map[string]*checkFile{}
	for k, im := range c.meta.images {
		for j, td := range im.tiffData {
			name, uuid := td.fileName, td.uuid
			if !td.hasUUID {
				if c.companion {
					c.problem(c.metaName, ErrWrongFile, "TiffData %d of image %d has no UUID, which a companion's TiffData must give with its file's name", j, k)
					continue
				}
				name, uuid = c.metaName, c.meta.uuid // this file
			}
			if !isFileName(name) {
				c.problem(c.metaName, ErrWrongFile, "TiffData %d of image %d: FileName %q is not a file name in its directory", j, k, name)
				continue
			}
			f := byName[name]
			if g := byUUID[uuid]; g != f {
				other := name
				if g != nil {
					other = g.name
				}
				c.problem(c.metaName, ErrWrongFile, "TiffData %d of image %d names %s with UUID %q, which is %s's", j, k, name, uuid, other)
				continue
			}
			if f == nil {
				f = &checkFile{name: name, uuid: uuid}
				files = append(files, f)
				byName[name], byUUID[uuid] = f, f
			}
			f.refs = append(f.refs, tiffRef{k, j})
		}
	}
	return files
}

// checkFile checks one file: there, a TIFF, with its UUID and metadata, and
// IFDs that hold the planes its TiffData say, once each.
func (c *datasetChecker) checkFile(f *checkFile) error {
	data, rc, err := c.open(f.name)
	switch {
	case err != nil:
		return err
	case rc == nil && c.missing(f.name):
		detail := "missing (" + c.holds(f) + ")"
		if c.given[1] != "" && c.given[1] == f.uuid && c.given[0] != f.name {
			detail = fmt.Sprintf("missing (%s); %s, the file checked from, has its UUID: renamed?", c.holds(f), c.given[0])
		}
		if c.lookedFor < maxTempLookups {
			// Each look reads the directory: a few, for the files a run
			// left unfinished, not one for each of thousands missing.
			c.lookedFor++
			if temps, _ := iohandle.Temporaries(filepath.Join(c.dir, f.name)); len(temps) > 0 {
				detail += fmt.Sprintf("; %s is there: its writer is still running, or was killed (the next run for it removes it)",
					filepath.Base(temps[0]))
			}
		}
		c.problems[len(c.problems)-1].Detail = detail
		return nil
	case rc == nil && data != nil:
		c.problem(f.name, ErrWrongFile, "not a TIFF")
		return nil
	case rc == nil:
		return nil // open said what it is
	}
	defer rc.Close()
	f.ifds = len(rc.Pages)
	description := c.description(f.name, rc.File)
	if description == nil {
		return nil
	}
	meta, err := parseDatasetMeta(description)
	if err != nil {
		c.problem(f.name, ErrWrongFile, "%v", err)
		return nil
	}
	switch {
	case meta.uuid != f.uuid && c.expect != nil:
		c.problem(f.name, ErrWrongFile, "its UUID is %q, not the plan's %q: it was written from another plan, or the plan was changed since", meta.uuid, f.uuid)
		return nil
	case meta.uuid != f.uuid:
		c.problem(f.name, ErrWrongFile, "its UUID is %q; %s says %q", meta.uuid, c.metaName, f.uuid)
		return nil
	}
	if !c.sameMetadata(f.name, description, meta) {
		return nil
	}
	f.ok = true
	c.checkIFDs(f, rc.File)
	return nil
}

// holds says what the metadata puts in a file, for the message of a
// missing one.
func (c *datasetChecker) holds(f *checkFile) string {
	planes, images := 0, map[int]bool{}
	for _, r := range f.refs {
		planes += c.count(r, f)
		images[r.image] = true
	}
	keys := make([]int, 0, len(images))
	for k := range images {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return fmt.Sprintf("%s of %s", plural(planes, "plane"), imageList(keys))
}

// imageList names images: "image 3", "images 3 to 5", "images 1, 4".
func imageList(keys []int) string {
	switch {
	case len(keys) == 1:
		return fmt.Sprintf("image %d", keys[0])
	case keys[len(keys)-1]-keys[0] == len(keys)-1:
		return numbered("image", keys[0], keys[len(keys)-1])
	}
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = fmt.Sprint(k)
	}
	return "images " + strings.Join(s, ", ")
}

// sameMetadata checks that a TIFF's OME-XML goes with the dataset's: the
// plan's exactly (Dataset.Check), a BinaryOnly element pointing to the
// companion, or, beside a master, the master's but for the root's UUID or
// a BinaryOnly element pointing to the master.
func (c *datasetChecker) sameMetadata(name string, description []byte, meta *datasetMeta) bool {
	if c.expect != nil {
		if want, ok := c.expect(name); !ok || !bytes.Equal(description, want) {
			c.problem(name, ErrWrongFile, "its OME-XML is not the plan's")
			return false
		}
		if meta.binaryOnly != nil {
			c.report.BinaryOnly++
		}
		return true
	}
	if bo := meta.binaryOnly; bo != nil {
		if bo.file != c.metaName || bo.uuid != c.meta.uuid {
			c.problem(name, ErrWrongFile, "its BinaryOnly points to %q with UUID %q, not to %s with %q", bo.file, bo.uuid, c.metaName, c.meta.uuid)
			return false
		}
		c.report.BinaryOnly++
		return true
	}
	if c.companion {
		c.problem(name, ErrWrongFile, "it holds metadata of its own, not a BinaryOnly element pointing to %s", c.metaName)
		return false
	}
	same := bytes.Replace(description, []byte(meta.uuid), []byte(c.meta.uuid), 1)
	if !bytes.Equal(same, c.metaXML) {
		c.problem(name, ErrWrongFile, "its OME-XML differs from %s's", c.metaName)
		return false
	}
	return true
}

// count is the number of planes of TiffData r, in file f: PlaneCount, or
// 1 with IFD, or every IFD of the file; 0 when unknown.
func (c *datasetChecker) count(r tiffRef, f *checkFile) int {
	td := c.meta.images[r.image].tiffData[r.k]
	switch {
	case td.hasCount:
		return td.count
	case td.hasIFD:
		return 1
	case f.ok:
		return f.ifds
	}
	return 0
}

// span is a run of indices [from, to) of a TiffData.
type span struct {
	from, to int
	ref      tiffRef
}

// checkIFDs checks that the TiffData in file f use each of its IFDs once,
// for planes of their image's size and type.
func (c *datasetChecker) checkIFDs(f *checkFile, file *tiff.File) {
	var spans []span
	for _, r := range f.refs {
		td := c.meta.images[r.image].tiffData[r.k]
		n := c.count(r, f)
		if td.ifd > f.ifds || n > f.ifds-td.ifd {
			c.problem(f.name, ErrWrongFile, "has %s; TiffData %d of image %d puts planes in %s", plural(f.ifds, "IFD"), r.k, r.image, numbered("IFD", td.ifd, td.ifd+n-1))
			n = max(f.ifds-td.ifd, 0) // the IFDs there are used
		}
		spans = append(spans, span{td.ifd, td.ifd + n, r})
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	next := 0
	for i, s := range spans {
		if s.from < next {
			p := spans[i-1].ref
			c.problem(f.name, ErrPlane, "%s planes of TiffData %d of image %d and TiffData %d of image %d", numbered("IFD", s.from, min(next, s.to)-1)+" "+verb(s.from, min(next, s.to)-1, "holds", "hold"), p.k, p.image, s.ref.k, s.ref.image)
		} else if s.from > next {
			c.problem(f.name, ErrWrongFile, "%s no plane of the dataset", numbered("IFD", next, s.from-1)+" "+verb(next, s.from-1, "holds", "hold"))
		}
		next = max(next, s.to)
		if bad := c.checkPages(file, s); bad != "" {
			c.problem(f.name, ErrWrongFile, "%s", bad)
		}
	}
	if next < f.ifds {
		c.problem(f.name, ErrWrongFile, "%s no plane of the dataset", numbered("IFD", next, f.ifds-1)+" "+verb(next, f.ifds-1, "holds", "hold"))
	}
}

// checkPages returns what is wrong with the first page of s that is not of
// its image's size and type, or "".
func (c *datasetChecker) checkPages(file *tiff.File, s span) string {
	im := c.meta.images[s.ref.image]
	for i := s.from; i < s.to; i++ {
		p := file.Pages[i]
		l, err := p.Layout()
		switch {
		case err != nil:
			return fmt.Sprintf("IFD %d: %v", i, strings.TrimPrefix(err.Error(), "tiff: "))
		case l.Width != im.sizeX || l.Height != im.sizeY:
			return fmt.Sprintf("IFD %d is %d x %d; image %d is %d x %d", i, l.Width, l.Height, s.ref.image, im.sizeX, im.sizeY)
		case l.SamplesPerPixel != im.samples || l.BitsPerSample != 8*im.typ.Size() || l.SampleFormat != pixelTypes[im.typ].sampleFormat:
			return fmt.Sprintf("IFD %d has %d samples of %d bits (format %d); image %d has %d of %v", i, l.SamplesPerPixel, l.BitsPerSample, l.SampleFormat, s.ref.image, im.samples, im.typ)
		}
	}
	return ""
}

// checkPlanes checks that the TiffData of image k hold each of its planes
// once.
func (c *datasetChecker) checkPlanes(k int, files []*checkFile) {
	im := c.meta.images[k]
	spec, planes := im.spec(), im.planes()
	fileOf := map[int]*checkFile{}
	for _, f := range files {
		for _, r := range f.refs {
			if r.image == k {
				fileOf[r.k] = f
			}
		}
	}
	var spans []span
	for j, td := range im.tiffData {
		f := fileOf[j]
		if f == nil {
			continue // its file could not be named; a problem says so
		}
		if td.hasCount && td.count == 0 {
			// Bio-Formats drops the image of such a TiffData.
			c.problem(c.metaName, ErrPlane, "TiffData %d of image %d: PlaneCount 0 puts no plane", j, k)
			continue
		}
		n := c.count(tiffRef{k, j}, f)
		if n == 0 {
			continue // a file that is missing, with a count that depends on it
		}
		start, err := spec.PlaneIndex(td.first[0], td.first[1], td.first[2])
		if err != nil || n > planes-start {
			c.problem(c.metaName, ErrPlane, "TiffData %d of image %d: %s from z=%d c=%d t=%d, in an image of %d x %d x %d", j, k, plural(n, "plane"), td.first[0], td.first[1], td.first[2], im.sizes[0], im.sizes[1], im.sizes[2])
			if err != nil {
				continue
			}
			n = planes - start // the planes there are given
		}
		spans = append(spans, span{start, start + n, tiffRef{k, j}})
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	next := 0
	for _, s := range spans {
		if s.from < next {
			c.problem(c.metaName, ErrPlane, "image %d: %s in two TiffData", k, planeSpan(spec, s.from, min(next, s.to)))
		} else if s.from > next {
			c.missingPlanes(k, spec, next, s.from)
		}
		next = max(next, s.to)
	}
	if next < planes {
		c.missingPlanes(k, spec, next, planes)
	}
}

// missingPlanes records planes [from, to) of image k as in no TiffData
// (or in TiffData whose count depends on a file that is missing).
func (c *datasetChecker) missingPlanes(k int, spec ImageSpec, from, to int) {
	c.problem(c.metaName, ErrMissingPlanes, "image %d: %s in no TiffData", k, planeSpan(spec, from, to))
}

// planeSpan names planes [from, to) of an image: "plane 3 (z=3 c=0 t=0)"
// or "planes 3 to 9 (z=3 c=0 t=0 to z=9 c=0 t=0)".
func planeSpan(s ImageSpec, from, to int) string {
	z, c, t := s.PlaneCoords(from)
	if to-from == 1 {
		return fmt.Sprintf("plane %d (z=%d c=%d t=%d)", from, z, c, t)
	}
	z2, c2, t2 := s.PlaneCoords(to - 1)
	return fmt.Sprintf("planes %d to %d (z=%d c=%d t=%d to z=%d c=%d t=%d)", from, to-1, z, c, t, z2, c2, t2)
}
