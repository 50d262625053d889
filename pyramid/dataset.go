package pyramid

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"
)

// Errors of datasets: of a plan (NewDataset, ParseDataset) and of a
// written set (CheckDataset, Dataset.Check).
var (
	// ErrPlan is a dataset plan that cannot be written: JSON that does not
	// parse, a file name that is not one, planes in no file or in two, a
	// split that cannot be made. A bad image or option of a plan matches
	// its own kind too (ErrSize, ErrOption...).
	ErrPlan = errors.New("pyramid: bad dataset plan")
	// ErrMissingFile is a file of a dataset that is not there.
	ErrMissingFile = errors.New("pyramid: dataset file missing")
	// ErrWrongFile is a file of a dataset that is not what the dataset's
	// metadata says: not a TIFF, another UUID, OME-XML that differs, IFDs
	// that hold no plane or too few IFDs, planes of another size or type.
	ErrWrongFile = errors.New("pyramid: dataset file does not match")
)

// MaxDatasetFiles is the most files a dataset plan may have: as many as
// this module's reader (package source) opens for one dataset, keeping
// each open, and more than a batch system runs at once. (Every file of
// the set also repeats the companion-less layout's OME-XML, which grows
// with the files.)
const MaxDatasetFiles = 4096

// DatasetSpec describes a multi-file OME-TIFF dataset: its images, the
// writer options of its files, and which planes go in which file. It is
// the plan that independent processes share, as a Go value or as the JSON
// file ParseDataset reads and Dataset.MarshalJSON writes; NewDataset
// checks it.
//
// Every file of the dataset holds the OME-XML of the whole dataset (or,
// with Companion, points to a companion file that does): each Image's
// Pixels has a TiffData for each run of its planes in one file, naming the
// file and its UUID, so that Bio-Formats, OMERO and tifffile open the
// whole set from any one file.
type DatasetSpec struct {
	// Name names the files when DatasetFile.Name does not: NAME.ome.tif
	// for a dataset of one file, NAME_0.ome.tif, NAME_1.ome.tif... for
	// more (numbered with as many digits as the last needs, so that they
	// sort), and NAME.companion.ome for the companion. It must be usable
	// as a file name.
	Name string
	// Seed is hashed into the files' UUIDs and written nowhere else: the
	// UUIDs derive from the plan, so two datasets with equal plans (the
	// same shape and metadata, other pixels) have equal UUIDs unless
	// their names or seeds differ. Give it something that tells them
	// apart, such as the acquisition's ID or the source's path.
	Seed string
	// Companion selects the layout in which the metadata is written once,
	// to NAME.companion.ome, and each TIFF's OME-XML holds only a
	// BinaryOnly element pointing to it: for datasets whose OME-XML is too
	// large to repeat in every file (it is at most MaxOMEXMLSize in either
	// layout). tifffile does not read it; Bio-Formats does. Without it,
	// every file holds the whole OME-XML and is a master.
	Companion bool
	// Options are the writer options of every file: TileSize, Compression,
	// Level, Quality, JPEGColor, Predictor, Levels, Downsampling and
	// BigTIFF. The others belong
	// to the process writing a file (PartOptions) or are the dataset's own
	// (the UUIDs, the OME document), and must be zero.
	Options Options
	// OME, if set, is an OME-XML document (2016-06) that the files' OME-XML
	// is merged with, as Options.OME is for one file: its Image elements,
	// if it has any, describe Images in order (ImageSpec.OME must then be
	// nil, as it must be anyway in a plan).
	OME string
	// Images are the dataset's images (its OME series), in order. Images
	// that share one *Instrument share one OME Instrument.
	Images []ImageSpec
	// Files say which planes each file holds, in order: every plane of
	// every image in exactly one file. Empty, Split decides.
	Files []DatasetFile
	// Split assigns the planes to files by a rule when Files is empty;
	// NewDataset resolves it into Files, which the plan's JSON then lists.
	Split Split
}

// DatasetFile is one file of a dataset.
type DatasetFile struct {
	// Name is the file's name, without a directory, ending in .tif,
	// .tiff, .btf, .tf2 or .tf8 (".ome.tif" by convention), by which
	// Bio-Formats knows a TIFF; empty, the dataset's Name makes it.
	Name string `json:",omitempty"`
	// Planes are the runs of planes the file holds, in the order of its
	// IFDs.
	Planes []PlaneRange
}

// PlaneRange is a run of planes of one image: Count planes from First
// on, in the image's DimensionOrder (the order of ImageSpec.PlaneIndex).
type PlaneRange struct {
	Image, First, Count int
}

// Split is a rule assigning the planes of a dataset's images to files.
// The zero value puts every plane in one file.
type Split struct {
	// Files is the number of files. Without ByImage, the planes of all
	// images, images in order and each image's in DimensionOrder, are cut
	// into Files runs of equal plane counts (the first files take one
	// more when they do not divide), so that an image may span files.
	Files int `json:",omitempty"`
	// ByImage keeps each image in one file: one file per image when Files
	// is 0, or Files files of consecutive images whose plane counts come
	// as close to equal as whole images allow.
	ByImage bool `json:",omitempty"`
}

// PlaneRef names one plane of a dataset: plane (Z, C, T) of image Image.
type PlaneRef struct {
	Image, Z, C, T int
}

// Dataset is a checked dataset plan, the same in every process that makes
// it from the same DatasetSpec or JSON: the same file names, the same
// UUIDs and the same OME-XML. A process writes one or several of its files
// (CreatePart, WritePart), independently of the others: no lock, no
// shared state and no finishing step, only the plan.
//
// # UUIDs
//
// A single file written by Create derives its UUID from its content, known
// only at Close. In a dataset every file names every other file's UUID
// before any is written, so the UUIDs derive from the plan instead: from a
// SHA-256 of its canonical JSON (MarshalJSON, which holds the resolved
// assignment of planes to files and DatasetSpec.Seed), and the file's
// index, as name-based UUIDs (RFC 9562 version 8). They never come from a
// clock or a random source, and they are part of the format: a later
// version of this package gives a plan the same UUIDs, so that a part
// written again after an upgrade still matches the others.
//
// # Deterministic bytes
//
// A part's file depends only on the plan, its index and its pixels: the
// tiles are encoded in the order they are written at any Workers, the
// directories and the OME-XML come from the plan, and nothing of the
// process (time, host, order of the processes) enters the file. A part
// whose planes are written from one goroutine in the order of Planes (as
// WritePart does) is byte-identical on every run. Planes written from
// several goroutines give the same pixels and metadata, but their tiles
// may lie at other offsets.
//
// A Dataset never changes once made, and is safe for concurrent use: one
// process may write several parts at once.
type Dataset struct {
	spec      DatasetSpec    // resolved and normalized; the images' OME nil
	images    []ImageSpec    // normalized, with the OME document's Image elements bound
	doc       *OMEDocument   // parsed DatasetSpec.OME, or nil
	canonical []byte         // the plan's JSON, compact
	digest    [32]byte       // its SHA-256
	uuids     []string       // per file
	ifds      [][]int        // per file, per run: its first IFD
	byImage   [][]planeRun   // per image, its runs in plane order
	companion [2]string      // name and UUID of the companion, if any
	xml       func() xmlBase // the dataset's OME-XML, built once on first use
}

// planeRun is a run of planes of an image, with the file and IFD holding
// it.
type planeRun struct {
	first, count int
	file, ifd    int
}

// xmlBase is the dataset's OME-XML with a placeholder for the root's UUID
// at rootAt, or why it could not be built.
type xmlBase struct {
	xml    []byte
	rootAt int
	err    error
}

// NewDataset checks a dataset plan and resolves it: Split into Files,
// default file names, the images' defaults. Errors name the field at
// fault; they match ErrPlan, and the kind of a bad image or option. A plan
// whose OME-XML would be longer than MaxOMEXMLSize, which CheckDataset and
// the converter refuse to read, is refused: it takes about 370 bytes an
// image and 40 a plane, with no plane information (about 1.6 million
// planes in all).
func NewDataset(spec DatasetSpec) (*Dataset, error) {
	if !hostLittleEndian {
		return nil, fmt.Errorf("%w: big-endian hosts are not supported", ErrOption)
	}
	if err := checkXMLBound(spec.Images); err != nil {
		return nil, err
	}
	d := &Dataset{}
	if err := d.resolve(spec); err != nil {
		return nil, err
	}
	for i, im := range d.spec.Images {
		if date := im.AcquisitionDate; !date.IsZero() && xsdTime(date).Year() > 9999 {
			return nil, planErrorf("image %d: AcquisitionDate %s: a year of more than 4 digits, which a plan's RFC 3339 cannot hold", i, xsdDate(date))
		}
	}
	canonical, err := d.marshal()
	if err != nil {
		return nil, err
	}
	d.canonical, d.digest = canonical, sha256.Sum256(canonical)
	d.uuids = make([]string, len(d.spec.Files))
	for i := range d.uuids {
		d.uuids[i] = d.derivedUUID("file " + strconv.Itoa(i))
	}
	if d.spec.Companion {
		d.companion[1] = d.derivedUUID("companion")
	}
	d.xml = sync.OnceValue(d.buildXML)
	// The OME-XML is built now, once for every file: a plan the readers of
	// the set would refuse (CheckDataset, the sources) is refused before
	// any file is written.
	if base := d.xml(); base.err != nil {
		return nil, planError("OME", base.err)
	} else if len(base.xml) > MaxOMEXMLSize {
		return nil, tooLarge("the OME-XML is %d bytes, more than MaxOMEXMLSize (%d), which the readers of the set take", len(base.xml), MaxOMEXMLSize)
	}
	return d, nil
}

// The least OME-XML an image and a plane of a dataset take: an Image with
// its Pixels, a Channel and a TiffData naming a file by its UUID, and a
// Plane element (TestDatasetXMLBound checks that none is smaller).
const (
	minImageXML = 300
	minPlaneXML = 35
)

// tooLarge is a plan whose OME-XML would be longer than MaxOMEXMLSize,
// described: ErrPlan and ErrOMETooLarge.
func tooLarge(format string, args ...any) error {
	return classify(ErrPlan, fmt.Sprintf(format, args...), ErrOMETooLarge)
}

// checkImageCount refuses a plan of more images than an OME-XML of
// MaxOMEXMLSize bytes can describe.
func checkImageCount(n int) error {
	if n > MaxOMEXMLSize/minImageXML {
		return tooLarge("%d images: more than an OME-XML of MaxOMEXMLSize (%d bytes), which the readers of the set take, describes", n, MaxOMEXMLSize)
	}
	return nil
}

// checkXMLBound refuses a plan of so many images and planes that its
// OME-XML cannot be at most MaxOMEXMLSize bytes, before resolving it,
// which takes memory in proportion to them.
func checkXMLBound(images []ImageSpec) error {
	if err := checkImageCount(len(images)); err != nil {
		return err
	}
	least := len(images) * minImageXML
	for _, s := range images {
		planes, ok := mul(max(s.SizeZ, 1), max(s.SizeC, 1), max(s.SizeT, 1))
		if !ok || planes > MaxOMEXMLSize/minPlaneXML {
			planes = MaxOMEXMLSize / minPlaneXML
		}
		if least += planes * minPlaneXML; least > MaxOMEXMLSize {
			break
		}
	}
	if least > MaxOMEXMLSize {
		return tooLarge("the OME-XML of %s takes more than MaxOMEXMLSize (%d bytes), which the readers of the set take", plural(len(images), "image"), MaxOMEXMLSize)
	}
	return nil
}

// planError is an error of the plan's field: ErrPlan, and err's own kind
// if it has one, with this package's prefix once.
func planError(field string, err error) error {
	text := strings.TrimPrefix(err.Error(), prefix)
	return &describedError{msg: ErrPlan.Error() + ": " + field + ": " + text, errs: []error{ErrPlan, err}}
}

// planErrorf is a bad plan, described.
func planErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrPlan}, args...)...)
}

// resolve checks spec and keeps it resolved.
func (d *Dataset) resolve(spec DatasetSpec) error {
	opts, err := planOptions(spec.Options)
	if err != nil {
		return err
	}
	spec.Options = opts
	if len(spec.Images) == 0 {
		return planErrorf("no images")
	}
	if spec.Name == "" {
		return planErrorf("Name is empty")
	}
	if err := checkFileName("Name", spec.Name+".ome.tif"); err != nil {
		return err
	}
	if spec.OME != "" {
		if d.doc, err = ParseOME([]byte(spec.OME)); err != nil {
			return planError("OME", err)
		}
		if n := d.doc.Images(); n > 0 && n != len(spec.Images) {
			return planError("OME", &OMEError{Err: ErrOMEConflict, Element: "OME", Detail: fmt.Sprintf("%d Images; the plan has %d", n, len(spec.Images))})
		}
	}
	codec, err := newCodec(opts.coding())
	if err != nil {
		return planError("Options", err)
	}
	probe := &Writer{opts: opts, codec: codec} // layoutImage reads only these
	spec.Images = cloneImages(spec.Images)
	d.images = make([]ImageSpec, len(spec.Images))
	for i, s := range spec.Images {
		field := fmt.Sprintf("Images[%d]", i)
		if s.OME != nil {
			return planErrorf("%s.OME is set: a plan takes its images' elements from DatasetSpec.OME", field)
		}
		if s.Coding != nil {
			return planErrorf("%s.Coding is set: a dataset's images take the coding of DatasetSpec.Options", field)
		}
		im, err := probe.layoutImage(s, nil)
		if err != nil {
			return planError(field, err)
		}
		spec.Images[i] = im.spec
		d.images[i] = im.spec
		if d.doc != nil && d.doc.Images() > 0 {
			m := d.doc.Image(i)
			if _, err := m.check(im.spec); err != nil {
				return planError("OME", err)
			}
			d.images[i].OME = m
		}
	}
	if len(spec.Files) > 0 && spec.Split != (Split{}) {
		return planErrorf("both Files and Split are given")
	}
	if len(spec.Files) == 0 {
		if spec.Files, err = spec.Split.files(d.images); err != nil {
			return err
		}
	} else {
		spec.Files = slices.Clone(spec.Files)
	}
	spec.Split = Split{}
	if len(spec.Files) > MaxDatasetFiles {
		return planErrorf("%d files, more than %d", len(spec.Files), MaxDatasetFiles)
	}
	width := len(strconv.Itoa(len(spec.Files) - 1))
	for i := range spec.Files {
		f := &spec.Files[i]
		f.Planes = slices.Clone(f.Planes)
		if f.Name == "" {
			f.Name = spec.Name + ".ome.tif"
			if len(spec.Files) > 1 {
				f.Name = fmt.Sprintf("%s_%0*d.ome.tif", spec.Name, width, i)
			}
		}
	}
	d.spec = spec
	if spec.Companion {
		d.companion[0] = spec.Name + ".companion.ome"
	}
	if err := d.checkNames(); err != nil {
		return err
	}
	return d.mapPlanes()
}

// planOptions checks the writer options of a plan and returns them with
// their defaults.
func planOptions(o Options) (Options, error) {
	for _, f := range []struct {
		name string
		set  bool
	}{{"Workers", o.Workers != 0}, {"Progress", o.Progress != nil}, {"UUID", o.UUID != ""}, {"OME", o.OME != nil}} {
		if f.set {
			return o, planError("Options."+f.name, fmt.Errorf("%w: set, but it is the writing process's (PartOptions) or the dataset's, not the plan's", ErrOption))
		}
	}
	o, err := o.withDefaults()
	if err != nil {
		return o, planError("Options", err)
	}
	return o, nil
}

// checkFileName checks that name can name a file in a directory, on any
// system, and in OME-XML.
func checkFileName(field, name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return planErrorf("%s %q is not a file name", field, name)
	case strings.ContainsAny(name, "/\\\x00"):
		return planErrorf("%s %q is not a file name: it has a path separator or NUL", field, name)
	case len(name) > 255:
		return planErrorf("%s is %d bytes long, more than a file name may be (255)", field, len(name))
	case windowsDevice(name):
		return planErrorf("%s %q is not a file name on Windows, where it names a device (whatever its extension)", field, name)
	case strings.HasSuffix(name, ".") || strings.HasSuffix(name, " "):
		return planErrorf("%s %q is not a file name on Windows, which drops a final dot or space", field, name)
	case strings.HasPrefix(name, " "):
		return planErrorf("%s %q starts with a space, which readers of TiffData's FileName trim", field, name)
	case strings.ContainsAny(name, `:*?"<>|`) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }):
		// ':' names a drive ("C:x") or a file's stream ("a:b") there.
		return planErrorf("%s %q is not a file name on Windows, which refuses : * ? \" < > | and control characters in one", field, name)
	}
	if err := checkXMLText(name); err != nil {
		return planError(field, err)
	}
	return nil
}

// tiffExtensions are the extensions of the files of a dataset, after
// ".ome" or not: those of TIFF and BigTIFF files that Bio-Formats'
// OME-TIFF reader takes by name.
var tiffExtensions = []string{".tif", ".tiff", ".btf", ".tf2", ".tf8"}

// windowsDevice reports whether Windows takes name for a device (CON,
// PRN, AUX, NUL, COM1 to COM9, LPT1 to LPT9, in any case, before any
// extension): a file written under it would go to the device.
func windowsDevice(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	switch base = strings.ToUpper(strings.TrimRight(base, " ")); {
	case base == "CON" || base == "PRN" || base == "AUX" || base == "NUL":
		return true
	case strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT"):
		n := base[3:] // a digit, or a superscript one, as Windows takes them
		return len(n) == 1 && n[0] >= '1' && n[0] <= '9' || n == "¹" || n == "²" || n == "³"
	}
	return false
}

// checkNames checks the files' names, and that no two of them, nor the
// companion's, are the same, even where case does not count.
func (d *Dataset) checkNames() error {
	seen := map[string]int{}
	names := make([]string, 0, len(d.spec.Files)+1)
	for _, f := range d.spec.Files {
		names = append(names, f.Name)
	}
	if d.companion[0] != "" {
		names = append(names, d.companion[0])
	}
	for i, name := range names {
		field := fmt.Sprintf("Files[%d].Name", i)
		if i == len(d.spec.Files) {
			field = "the companion"
		}
		if err := checkFileName(field, name); err != nil {
			return err
		}
		if ext := strings.ToLower(filepath.Ext(name)); i < len(d.spec.Files) && !slices.Contains(tiffExtensions, ext) {
			return planErrorf("%s %q does not end in .tif, .tiff, .btf, .tf2 or .tf8: Bio-Formats goes by the name, and would not read it as OME-TIFF", field, name)
		}
		// Case and Unicode normalization aside, as Windows and macOS
		// compare names ("café" composed or decomposed is one file on
		// macOS). (The companion's name, of another extension, is no
		// file's.)
		key := strings.ToLower(norm.NFC.String(name))
		if j, dup := seen[key]; dup {
			return planErrorf("%s %q is the name of Files[%d] too", field, name, j)
		}
		seen[key] = i
	}
	return nil
}

// mapPlanes checks that the files hold every plane of every image once,
// and maps the runs to IFDs.
func (d *Dataset) mapPlanes() error {
	d.ifds = make([][]int, len(d.spec.Files))
	d.byImage = make([][]planeRun, len(d.images))
	for i, f := range d.spec.Files {
		if len(f.Planes) == 0 {
			return planErrorf("Files[%d] (%s) holds no planes", i, f.Name)
		}
		ifd := 0
		d.ifds[i] = make([]int, len(f.Planes))
		for j, r := range f.Planes {
			field := fmt.Sprintf("Files[%d].Planes[%d]", i, j)
			if r.Image < 0 || r.Image >= len(d.images) {
				return planErrorf("%s: image %d of %d", field, r.Image, len(d.images))
			}
			planes := d.images[r.Image].Planes()
			if r.First < 0 || r.Count < 1 || r.First > planes || r.Count > planes-r.First {
				return planErrorf("%s: %d planes from %d, of an image of %d", field, r.Count, r.First, planes)
			}
			d.ifds[i][j] = ifd
			d.byImage[r.Image] = append(d.byImage[r.Image], planeRun{first: r.First, count: r.Count, file: i, ifd: ifd})
			ifd += r.Count
		}
	}
	for k, runs := range d.byImage {
		slices.SortStableFunc(runs, func(a, b planeRun) int { return cmp.Compare(a.first, b.first) })
		next := 0
		for _, r := range runs {
			if r.first < next {
				return planErrorf("image %d: %s %s in %s and %s", k, numbered("plane", r.first, min(next, r.first+r.count)-1), verb(r.first, min(next, r.first+r.count)-1, "is", "are"), d.spec.Files[r.file].Name, d.fileHolding(k, r.first, r.file))
			}
			if r.first > next {
				return planErrorf("image %d: %s %s in no file", k, numbered("plane", next, r.first-1), verb(next, r.first-1, "is", "are"))
			}
			next = r.first + r.count
		}
		if planes := d.images[k].Planes(); next < planes {
			return planErrorf("image %d: %s %s in no file", k, numbered("plane", next, planes-1), verb(next, planes-1, "is", "are"))
		}
	}
	return nil
}

// fileHolding names a file other than not holding plane p of image k.
func (d *Dataset) fileHolding(k, p, not int) string {
	for _, r := range d.byImage[k] {
		if r.file != not && p >= r.first && p < r.first+r.count {
			return d.spec.Files[r.file].Name
		}
	}
	return d.spec.Files[not].Name
}

// files resolves the rule for images.
func (s Split) files(images []ImageSpec) ([]DatasetFile, error) {
	if s.Files < 0 {
		return nil, planErrorf("Split.Files %d is negative", s.Files)
	}
	total := 0
	counts := make([]int, len(images))
	for i, im := range images {
		counts[i] = im.Planes()
		total += counts[i]
	}
	switch {
	case s.ByImage && s.Files == 0:
		if len(images) > MaxDatasetFiles {
			return nil, planErrorf("Split.ByImage: %d images, more files than %d", len(images), MaxDatasetFiles)
		}
		files := make([]DatasetFile, len(images))
		for i, n := range counts {
			files[i].Planes = []PlaneRange{{Image: i, Count: n}}
		}
		return files, nil
	case s.ByImage:
		if s.Files > len(images) {
			return nil, planErrorf("Split.Files %d with ByImage: more files than the %d images", s.Files, len(images))
		}
		return groupImages(counts, s.Files), nil
	case s.Files > total:
		return nil, planErrorf("Split.Files %d: more files than the %d planes", s.Files, total)
	case s.Files > MaxDatasetFiles:
		return nil, planErrorf("Split.Files %d: more than MaxDatasetFiles (%d)", s.Files, MaxDatasetFiles)
	}
	n := max(s.Files, 1)
	files := make([]DatasetFile, n)
	image, first := 0, 0 // the next plane to place
	for k := range files {
		size := total/n + b2i(k < total%n)
		for size > 0 {
			take := min(size, counts[image]-first)
			files[k].Planes = append(files[k].Planes, PlaneRange{Image: image, First: first, Count: take})
			size -= take
			if first += take; first == counts[image] {
				image, first = image+1, 0
			}
		}
	}
	return files, nil
}

// groupImages cuts the images, of counts planes each, into n runs of
// consecutive images, each ending where the planes so far come closest
// to their share, leaving an image at least to each run.
func groupImages(counts []int, n int) []DatasetFile {
	cum := make([]int, len(counts)+1) // planes of the images before each
	for i, c := range counts {
		cum[i+1] = cum[i] + c
	}
	total := cum[len(counts)]
	files := make([]DatasetFile, n)
	start := 0
	for k := range files {
		end := len(counts)
		if k < n-1 {
			target := total / n * (k + 1)
			target += total % n * (k + 1) / n
			lo, hi := start+1, len(counts)-(n-1-k)
			end, _ = slices.BinarySearch(cum[lo:hi+1], target)
			end += lo
			if end > hi || end > lo && target-cum[end-1] <= cum[end]-target {
				end--
			}
		}
		for i := start; i < end; i++ {
			files[k].Planes = append(files[k].Planes, PlaneRange{Image: i, Count: counts[i]})
		}
		start = end
	}
	return files
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// derivedUUID is the UUID of what the dataset calls what ("file 3",
// "companion"): a name-based UUID of the plan's canonical JSON, through
// its digest, so that a plan of many files is hashed once.
func (d *Dataset) derivedUUID(what string) string {
	var b bytes.Buffer
	b.WriteString("ometiff dataset\n")
	b.Write(d.digest[:])
	b.WriteString("\n" + what)
	return contentUUID(b.Bytes())
}

// Spec returns the plan, resolved: Files lists every file with its name,
// Split is zero, and the images and options have their defaults filled in.
// Its slices are the caller's to change.
func (d *Dataset) Spec() DatasetSpec {
	if d.unmade() {
		return DatasetSpec{}
	}
	s := d.spec
	s.Images = cloneImages(s.Images)
	s.Files = slices.Clone(s.Files)
	for i := range s.Files {
		s.Files[i].Planes = slices.Clone(s.Files[i].Planes)
	}
	return s
}

// cloneImages copies images with what the plan's OME-XML and UUIDs depend
// on that a caller could change through a slice or pointer: channels (and
// their settings), annotations, planes, objective settings, coding, the
// instrument. Images that share an *Instrument share its copy: that makes
// them share one OME Instrument.
func cloneImages(images []ImageSpec) []ImageSpec {
	out := slices.Clone(images)
	instruments := map[*Instrument]*Instrument{}
	for i := range out {
		s := &out[i]
		if in := s.Instrument; in != nil {
			if instruments[in] == nil {
				c := *in
				c.LightSources, c.Detectors, c.Objectives = slices.Clone(c.LightSources), slices.Clone(c.Detectors), slices.Clone(c.Objectives)
				if c.Microscope != nil {
					m := *c.Microscope
					c.Microscope = &m
				}
				instruments[in] = &c
			}
			s.Instrument = instruments[in]
		}
		s.Channels, s.Annotations, s.PlaneInfo = slices.Clone(s.Channels), slices.Clone(s.Annotations), slices.Clone(s.PlaneInfo)
		for c := range s.Channels {
			ch := &s.Channels[c]
			ch.LightSourceSettings, ch.DetectorSettings = clonePointer(ch.LightSourceSettings), clonePointer(ch.DetectorSettings)
		}
		s.ObjectiveSettings = clonePointer(s.ObjectiveSettings) // Coding is refused in a dataset
	}
	return out
}

// clonePointer returns a pointer to a copy of *p, or nil for nil.
func clonePointer[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Files returns the number of files of the dataset, the companion aside:
// 0 for a nil or zero Dataset.
func (d *Dataset) Files() int {
	if d.unmade() {
		return 0
	}
	return len(d.spec.Files)
}

// unmade reports a nil or zero Dataset, which NewDataset and ParseDataset
// never return.
func (d *Dataset) unmade() bool { return d == nil || len(d.spec.Files) == 0 }

// errUnmade is the error of a zero Dataset's methods.
var errUnmade = fmt.Errorf("%w: a zero Dataset, not made by NewDataset or ParseDataset", ErrPlan)

// File returns file i: its name and the planes it holds. Its slice is the
// caller's. It panics if i is not in [0, d.Files()), as an index of a
// slice does.
func (d *Dataset) File(i int) DatasetFile {
	f := d.spec.Files[i]
	f.Planes = slices.Clone(f.Planes)
	return f
}

// UUID returns the UUID of file i, "urn:uuid:..." as the OME-XML writes it.
// It panics if i is not in [0, d.Files()), as File does.
func (d *Dataset) UUID(i int) string { return d.uuids[i] }

// Companion returns the name and the UUID of the companion file, or two
// empty strings when the plan has none (DatasetSpec.Companion) or the
// Dataset is nil or zero.
func (d *Dataset) Companion() (name, uuid string) {
	if d.unmade() {
		return "", ""
	}
	return d.companion[0], d.companion[1]
}

// Planes returns the planes of file i in the order of its IFDs: the order
// in which writing them gives a byte-identical file on every run. Ranging
// over it panics if i is not in [0, d.Files()), as File does.
func (d *Dataset) Planes(i int) iter.Seq[PlaneRef] {
	return func(yield func(PlaneRef) bool) {
		for _, r := range d.spec.Files[i].Planes {
			s := d.images[r.Image]
			for p := r.First; p < r.First+r.Count; p++ {
				z, c, t := s.PlaneCoords(p)
				if !yield(PlaneRef{Image: r.Image, Z: z, C: c, T: t}) {
					return
				}
			}
		}
	}
}

// checkIndex checks a file index given to the methods that write or
// check one.
func (d *Dataset) checkIndex(i int) error {
	if d.unmade() {
		return errUnmade
	}
	if i < 0 || i >= len(d.spec.Files) {
		return fmt.Errorf("%w: file %d of a dataset of %d", ErrOption, i, len(d.spec.Files))
	}
	return nil
}

// buildXML builds the dataset's OME-XML, with a placeholder for the root's
// UUID.
func (d *Dataset) buildXML() xmlBase {
	images := make([]omeImage, len(d.images))
	for k, s := range d.images {
		images[k].spec = s
		for _, r := range d.byImage[k] {
			images[k].files = append(images[k].files, tiffData{ifd: r.ifd, first: r.first, count: r.count,
				fileName: d.spec.Files[r.file].Name, uuid: d.uuids[r.file]})
		}
	}
	xml, uuidAt, err := omeXML(images, d.doc, uuidPlaceholder, "")
	if err == nil && len(uuidAt) != 1 {
		err = fmt.Errorf("%w: the OME-XML has %d UUIDs to fill in, not 1", ErrMetadata, len(uuidAt))
	}
	if err != nil {
		return xmlBase{err: err}
	}
	return xmlBase{xml: xml, rootAt: uuidAt[0]}
}

// metadata returns the dataset's full OME-XML with uuid as the root's.
func (d *Dataset) metadata(uuid string) ([]byte, error) {
	base := d.xml()
	if base.err != nil {
		return nil, base.err
	}
	out := make([]byte, len(base.xml), len(base.xml)+1) // room for the NUL of the ASCII field
	copy(out, base.xml)
	copy(out[base.rootAt:], uuid)
	return out, nil
}

// description returns the OME-XML of file i: the whole metadata, or the
// BinaryOnly element pointing to the companion.
func (d *Dataset) description(i int) ([]byte, error) {
	if d.spec.Companion {
		return binaryOnlyXML(d.uuids[i], d.companion[0], d.companion[1]), nil
	}
	return d.metadata(d.uuids[i])
}

// companionXML returns the companion's content.
func (d *Dataset) companionXML() ([]byte, error) { return d.metadata(d.companion[1]) }
