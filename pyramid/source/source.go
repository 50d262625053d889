package source

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// More errors of this package (ErrUnsupported, ErrSize and ErrClosed are
// the band reader's).
var (
	// ErrMetadata reports metadata that cannot be mapped: OME-XML that does
	// not parse or contradicts the pages it describes (sizes, pixel type,
	// a TiffData naming a page the file lacks), or that the pyramid
	// writer cannot carry to its output (a document pyramid.ParseOME
	// refuses, or an Image element that does not describe the image's
	// pixels as the writer requires); the error then wraps the
	// *pyramid.OMEError.
	ErrMetadata = errors.New("source: bad metadata")
	// ErrMultiFile reports an OME-TIFF whose planes lie in other files too
	// (a TiffData naming another file, or BinaryOnly metadata) that New is
	// not to read: no Options.DatasetDir is given, a TiffData names its
	// file by UUID alone, or the dataset names more than 4096 files.
	ErrMultiFile = errors.New("source: multi-file dataset")
	// ErrLeftOut marks the errors of whole images that cannot be mapped:
	// a page of a generic TIFF of a size no page mapped has (one of such a
	// size might have been a plane of its image), an Image element of an
	// OME-TIFF, the image, label or macro of an SVS file. Left out with
	// Options.SkipUnsupported, they leave the images kept as they would be
	// otherwise, while the other File.Skipped entries take something from
	// a kept image (its metadata, or the pages of its planes).
	ErrLeftOut = errors.New("source: image left out")
	// ErrNotCarried marks the File.Skipped entries of metadata left out of
	// images that are kept (an OME-XML the writer cannot carry, a physical
	// size of no OME unit, GDAL metadata that does not parse...): the
	// images are converted without it. The other entries leave out images
	// or pages.
	ErrNotCarried = errors.New("source: metadata not carried")
)

// leftOut is the error of an image that cannot be mapped whole: it says
// what err says, and is ErrLeftOut too.
type leftOut struct{ error }

func (e leftOut) Unwrap() error { return e.error }

func (e leftOut) Is(target error) bool { return target == ErrLeftOut }

// notCarried is the error of metadata left out of a kept image: it says
// what err says, and is ErrNotCarried too. image is the image it is of,
// nil for metadata of the file as a whole.
type notCarried struct {
	error
	image *Image
}

// SkippedImage returns the image of File.Images that an entry of
// File.Skipped took metadata from (ErrNotCarried), so that a caller
// converting some images only can tell what concerns them; nil for an
// entry about the file as a whole, or about pages or images left out.
func SkippedImage(err error) *Image {
	if e, ok := errors.AsType[notCarried](err); ok {
		return e.image
	}
	return nil
}

func (e notCarried) Unwrap() error { return e.error }

func (e notCarried) Is(target error) bool { return target == ErrNotCarried }

// Kind is what a TIFF file was recognized as, which decides how its pages
// map to images.
type Kind int

// Kinds of files.
const (
	// TIFF is a plain TIFF or BigTIFF: pages of one shape are the planes
	// of one image, along T (or along Z, C and T as an ImageJ
	// description says); pages of other shapes are further images.
	TIFF Kind = iota
	// OMETIFF is an OME-TIFF: its OME-XML describes every image, and its
	// TiffData elements say which page holds each plane.
	OMETIFF
	// SVS is an Aperio SVS slide: page 0 is the image, the label and
	// macro pages are further images named "label" and "macro", and the
	// thumbnail and the reduced levels are left out.
	SVS
	// NDPI is a Hamamatsu NDPI slide: the pages of page 0's size are the
	// focal planes of the image, along Z, the macro and map pages are
	// further images named "macro" and "map", and the reduced levels are
	// left out.
	NDPI
	// BIF is a Roche/Ventana BIF slide: the page described level=0 is the
	// image, its other levels its levels, and the label (overview),
	// thumbnail and probability pages are further images. It is told by
	// page 0's XMP packet (iScan) or Software (Ventana), and level=N pages.
	BIF
	// SCN is a Leica SCN slide: each image of its XML is an image, its
	// other resolutions the levels of its planes.
	SCN
	// QPTIFF is an Akoya/PerkinElmer QPTIFF (Vectra, PhenoImager,
	// PhenoCycler): page 0 and the pages of its size are the channels of
	// the image, the groups of reduced pages after the thumbnail its
	// levels, the thumbnail and the other pages (overview, label) further
	// images. It is told by page 0's Software (PerkinElmer-QPI).
	QPTIFF
	// Philips is a Philips TIFF slide (IntelliSite): mapped as a plain
	// TIFF, with the pixel size of its XML, and its label and macro, from
	// pages or from the XML's base64, named so. It is told, as OpenSlide
	// tells it, by page 0's Software ("Philips...") and description, a
	// DPUfsImport DataObject; a description of that kind alone is read
	// the same, as a TIFF.
	Philips
	// STK is a MetaMorph STK stack (Molecular Devices): its one page is
	// the first of the planes its UIC2tag counts, the others stored after
	// its data, one image along Z, C and T as Bio-Formats lays them.
	STK
	// LSM is a Zeiss LSM file (confocal stacks of the LSM 510 to 980):
	// every second page is a plane of the image, its samples the
	// channels, the pages between thumbnails left out; page 0's
	// CZ_LSMINFO (34412) says how the planes go along Z and T, and gives
	// the physical sizes, channel names and colours.
	LSM
	// MetaSeries is a MetaMorph/MetaXpress MetaSeries TIFF: every page's
	// description is MetaData XML, each page a plane, along C (its
	// wavelength), Z (its z-position) and T as Bio-Formats'
	// MetamorphTiffReader lays them, each field (stage position) an image.
	MetaSeries
)

// String returns the kind's name: "TIFF", "OME-TIFF", "SVS", "NDPI", "BIF",
// "SCN", "QPTIFF", "Philips", "STK", "LSM" or "MetaSeries".
func (k Kind) String() string {
	switch k {
	case TIFF:
		return "TIFF"
	case OMETIFF:
		return "OME-TIFF"
	case SVS:
		return "SVS"
	case NDPI:
		return "NDPI"
	case BIF:
		return "BIF"
	case SCN:
		return "SCN"
	case QPTIFF:
		return "QPTIFF"
	case Philips:
		return "Philips"
	case STK:
		return "STK"
	case LSM:
		return "LSM"
	case MetaSeries:
		return "MetaSeries"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// File is a TIFF file mapped to images (OME series) as the pyramid writer
// takes them, following what Bio-Formats reports for the same file.
//
// Reduced-resolution levels of the file (SubIFDs, pages marked reduced
// in the main chain, COG overviews, an SVS's levels and thumbnail) are
// not images and not planes: the writer computes the levels again from
// the full-resolution planes, or copies them (Image.Encoded).
//
// A File does not change once made, and is safe for concurrent use; its
// images' planes are read through BandReaders.
type File struct {
	// Kind is what the file was recognized as.
	Kind Kind
	// Images are the file's images, in the order of the file.
	Images []*Image
	// OMEXML is the OME-XML document of an OME-TIFF, whole, as the first
	// page's ImageDescription holds it; "" for other kinds. Parsed by
	// pyramid.ParseOME, it goes with the images in their Spec.OME, unless
	// the writer cannot carry it (see New).
	OMEXML string
	// Skipped lists the images, or pages, that could not be mapped and
	// were left out because Options.SkipUnsupported was set; each error
	// says what and why, and is ErrLeftOut when it left out an image
	// whole. It is empty otherwise: New fails instead.
	Skipped []error
	// TIFF is the file's structure; nil when the file opened is the
	// companion of a multi-file dataset (its OME-XML alone).
	TIFF *tiff.File
	// Parts are the other files of a multi-file OME-TIFF dataset whose
	// pages hold planes of the images, in the order they were first
	// named; empty for a file that holds all its planes.
	Parts []Part
	// Companion is the name of the companion file whose OME-XML a
	// BinaryOnly element of the file opened pointed to, read from
	// Options.DatasetDir; "" when there is none.
	Companion string
	// Notes say what the mapping passed over that a reader might look
	// for: the pages of an OME-TIFF that no TiffData places, which the
	// OME-TIFF specification has readers ignore. Each is a sentence, for
	// showing; most files have none.
	Notes []string

	closeMu sync.Mutex
	closers []func() error
}

// Image is one image of a file: its spec and where each plane's pixels
// are.
type Image struct {
	// Spec describes the image as the pyramid writer takes it; add it to
	// a writer unchanged (or with metadata changed) and write its planes
	// with WritePlanes. For an OME-TIFF, Spec.OME is the image's element
	// of the file's document, which the writer keeps whole but for what
	// it writes itself; the typed fields restate what the writer writes
	// back as the document has it (name, description, physical sizes,
	// channels' names and colours), and a typed field a caller sets takes
	// precedence over the document. The acquisition date and the map
	// annotations of such an image are the document's alone. An image
	// is named only as the file names it (an OME Image's Name, a
	// PageName, an SVS's label and macro, an SCN's images): the ometiff command names the
	// others after the file ("slide", "slide #1").
	Spec pyramid.ImageSpec
	// Planes says where each plane is, by its index in the spec's
	// DimensionOrder (pyramid.ImageSpec.PlaneIndex).
	Planes []Plane
	// OMEImage is the index of the image's Image element among those of
	// File.OMEXML, for carrying the rest of its metadata; -1 when the file
	// is not an OME-TIFF.
	OMEImage int
	// AcquisitionDate is the acquisition date of an image whose Image
	// element is carried (Spec.OME set), as the element gives it; for
	// showing it, as Spec.AcquisitionDate stays zero so that the writer
	// keeps the element's own text (a date without a time zone stays one).
	AcquisitionDate string
	// Notes say how the mapping read what the file leaves unsaid, or says
	// in terms OME has no place for: axes put along T, a plane order
	// taken as XYZCT, and what of its pages the output does not carry or
	// writes otherwise than a viewer expects (an ICC profile, an
	// Orientation not applied, white-is-zero values kept). Each is a
	// sentence, for showing; the images of most files have none.
	Notes []string
	// mapsLost says why the typed annotations lack the image's map
	// annotations (too many to copy); nil when they have them. It is said
	// only if the Image element is not carried, which carries them.
	mapsLost error
	// noCopy says why the image's tiles are not copied through, whatever
	// their coding (checkCopies); nil when nothing in the file stops it.
	noCopy error
	// palette says that the image's pages are palette pages whose
	// ColorMap's colours are written, not their values (paletteColours).
	palette bool
}

// Plane is where the pixels of one plane of an image lie: a page of the
// file, or one sample of a page whose samples are separate channels.
type Plane struct {
	// Page holds the plane.
	Page *tiff.Page
	// Sample is the page's sample the plane is, when the page's samples
	// are channels of their own (2 or 4 samples, or 3 that are not 8- or
	// 16-bit RGB); -1 when the plane is the page's pixels, all samples.
	Sample int
	// Levels are the page's reduced resolutions as the file stores them,
	// largest first: its SubIFDs, or the pages marked reduced that follow
	// it in the main chain (a libvips or COG pyramid, an SVS's tiled
	// levels). The writer computes its levels again; they are there for
	// copying them through.
	Levels []*tiff.Page
}

// Open reads the structure of the named file and maps its pages to
// images, as New does, reading the other files of a multi-file OME-TIFF
// dataset from the file's directory (unless opts.DatasetDir names
// another). The file may also be the companion file of such a dataset
// (NAME.companion.ome): an OME-XML document, of at most
// pyramid.MaxOMEXMLSize bytes, describing TIFFs that hold only a
// BinaryOnly element. Close releases the files.
func Open(name string, opts Options) (*File, error) {
	if opts.DatasetDir == "" {
		opts.DatasetDir = filepath.Dir(name)
	}
	rc, err := tiff.Open(name)
	// A file that is no TIFF may be a companion; a directory, pipe or
	// device is neither, as tiff.Open says.
	if errors.Is(err, tiff.ErrNotTIFF) && isRegular(name) {
		text, cerr := readCompanion(filepath.Dir(name), filepath.Base(name), "companion")
		if cerr == nil {
			return NewCompanion(text, filepath.Base(name), opts)
		}
		if !errors.Is(cerr, errNoCompanion) { // XML, but none this reads
			return nil, cerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	f, err := New(rc.File, filepath.Base(name), opts)
	if err != nil {
		rc.Close()
		return nil, err
	}
	f.closers = append(f.closers, rc.Close)
	return f, nil
}

// isRegular reports whether name is a regular file (or a link to one).
func isRegular(name string) bool {
	info, err := os.Stat(name)
	return err == nil && info.Mode().IsRegular()
}

// NewCompanion maps the images a companion file of a multi-file OME-TIFF
// dataset describes, as New does from one of its TIFFs: text is its
// OME-XML document, name its name, and the TIFFs holding the planes are
// read from opts.DatasetDir. File.TIFF is nil; File.Parts are the TIFFs.
// Close releases them.
func NewCompanion(text, name string, opts Options) (*File, error) {
	text = strings.TrimPrefix(text, byteOrderMark)
	if !isOMEXML(text) {
		return nil, fmt.Errorf("%w: the companion %q is not an OME-XML document", ErrMetadata, name)
	}
	return newFile(nil, text, name, opts)
}

// Close closes the files Open, New or NewCompanion opened: the other
// files of a multi-file dataset, and the file Open opened.
func (f *File) Close() error {
	if f == nil {
		return nil
	}
	f.closeMu.Lock() // closed once, whatever goroutines call it
	closers := f.closers
	f.closers = nil
	f.closeMu.Unlock()
	var errs []error
	for _, c := range closers {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// New maps the pages of a TIFF file, read with tiff.Read, to images. name
// is the file's base name: TiffData elements of an OME-TIFF name the file
// that holds their planes, and those naming this one are read from it;
// those naming others, from opts.DatasetDir, which New opens (Close closes
// them).
//
// The file is recognized by its first page's ImageDescription: OME-XML
// (ending in "OME>", as tifffile tests it) makes an OME-TIFF, a text
// starting "Aperio Image" an SVS, a first page with NDPI's format flag an
// NDPI, a first page with Ventana's XMP and a page described "level=N" a
// BIF (isBIF), XML naming Leica's SCN namespace an SCN, a first page whose
// Software starts "PerkinElmer-QPI" a QPTIFF, a first page with a UIC1tag
// a MetaMorph STK, a first page with Zeiss's CZ_LSMINFO field an LSM, a
// first description that is a MetaData XML element a MetaSeries TIFF, a
// description that is a Philips DPUfsImport DataObject, with Software
// starting "Philips", a Philips slide, and anything else a plain TIFF. A
// description that begins as OME-XML and does not end so (cut short) is
// ErrMetadata: read as a plain TIFF, the file would lose its metadata. Every
// page mapped to a plane is checked to be readable by a BandReader, its
// blocks within the file (a file cut short is tiff.ErrMalformed), so that
// what New accepts can be converted; a page that is not, or
// metadata that cannot be mapped, fails New with an error naming the
// field (matching ErrUnsupported, ErrMetadata, ErrMultiFile or
// tiff.ErrMalformed), unless
// opts.SkipUnsupported is set: then the images concerned are left out and
// listed in File.Skipped. A dataset's file that cannot be opened for want
// of the system's resources (descriptors, memory: syscall.EMFILE, ENFILE,
// ENOMEM) fails New whatever opts say: a raised limit maps it.
//
// An OME-TIFF's document is parsed once more, by pyramid.ParseOME, for
// the images to carry it (Image.Spec). One the writer cannot carry (of
// another schema version, with elements the schema does not allow,
// duplicate IDs or references to nothing), or an Image element that does
// not describe its image's pixels as the writer requires, fails New with
// ErrMetadata wrapping the *pyramid.OMEError, unless opts.SkipUnsupported
// is set: then the images concerned keep only their typed metadata, and
// the error is listed in File.Skipped.
func New(f *tiff.File, name string, opts Options) (*File, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: no file (nil)", ErrMetadata)
	}
	if len(f.Pages) == 0 {
		return nil, fmt.Errorf("%w: the file has no pages", ErrMetadata)
	}
	return newFile(f, f.Pages[0].Description(), name, opts)
}

// newFile maps a TIFF file whose first page's ImageDescription is
// description, or with no file, the companion whose document it is.
func newFile(f *tiff.File, description, name string, opts Options) (*File, error) {
	description = strings.TrimPrefix(description, byteOrderMark)
	out := &File{TIFF: f}
	m := &mapper{file: out, name: name, opts: opts}
	var err error
	switch {
	case isOMEXML(description):
		out.Kind, out.OMEXML = OMETIFF, description
		err = m.ome(description)
		if _, unreadable := errors.AsType[omeUnreadable](err); unreadable && f != nil && opts.SkipUnsupported {
			// As a document cut short: the pages are read as a plain
			// TIFF's, the metadata reported lost.
			out.Kind, out.OMEXML = TIFF, ""
			if err = m.skipMetadata(fmt.Errorf("%w; the file is read as a plain TIFF", err)); err == nil {
				err = m.generic()
				dropDescription(out, f.Pages[0])
			}
		}
	case isSVS(description):
		out.Kind = SVS
		err = m.svs()
	case isNDPI(f):
		out.Kind = NDPI
		err = m.ndpi()
	case isBIF(f):
		out.Kind = BIF
		err = m.bif()
	case f != nil && isSCN(description):
		err = m.scn(description) // sets out.Kind: SCN, or TIFF when its XML is not read
	case isQPTIFF(f):
		out.Kind = QPTIFF
		err = m.qptiff()
	case isSTK(f):
		out.Kind = STK
		err = m.stk()
	case isLSM(f):
		err = m.lsm() // sets out.Kind: LSM, or TIFF when CZ_LSMINFO is not read
	case isMetaSeries(f):
		err = m.metaSeries() // sets out.Kind: MetaSeries, or TIFF when its XML is not read
	case looksOMEXML(description):
		err = m.skipMetadata(fmt.Errorf("%w: the first page's ImageDescription begins as OME-XML but does not end with the OME element (%d bytes: cut short?), so its OME metadata is not read",
			ErrMetadata, len(description)))
		if err == nil && f != nil { // a companion's text is OME-XML whole (NewCompanion)
			err = m.generic()
			dropDescription(out, f.Pages[0])
		}
	default:
		err = m.generic()
		if err == nil && isPhilips(description) {
			if f != nil && strings.HasPrefix(f.Pages[0].Software(), "Philips") {
				out.Kind = Philips // as OpenSlide tells one
			}
			err = m.philipsAssociated(description)
		}
	}
	if err == nil && len(out.Images) == 0 {
		// The reason goes with the refusal: a caller that set
		// SkipUnsupported has no File to list the skipped images from.
		err = noImageError{skipped: out.Skipped}
	}
	if err == nil {
		err = m.checkShared()
	}
	if err == nil {
		m.checkCopies()
		for _, im := range out.Images {
			im.Notes = append(im.Notes, pixelNotes(im)...)
		}
	}
	if err == nil {
		err = m.boundText()
	}
	if err != nil {
		out.Close()
		return nil, err
	}
	return out, nil
}

// pixelNotes says how an image's pixels are written where a viewer could
// expect otherwise, and what of its first page no OME field carries: an
// ICC profile, an orientation, white-is-zero or ink samples, samples of 2
// or 4 bits.
func pixelNotes(im *Image) []string {
	if len(im.Planes) == 0 {
		return nil
	}
	var out []string
	page := im.Planes[0].Page
	if l, err := page.Layout(); err == nil {
		switch l.Photometric {
		case tiff.PhotometricWhiteIsZero:
			out = append(out, "stored white-is-zero (PhotometricInterpretation 0): its values are kept, so viewers show it inverted")
		case tiff.PhotometricSeparated:
			inks := "CMYK"
			if v, ok := page.Uint(tiff.TagInkSet); ok && v != 1 {
				inks = fmt.Sprintf("%d inks, not CMYK", l.SamplesPerPixel)
			}
			out = append(out, fmt.Sprintf("stored as inks (PhotometricInterpretation 5, %s): its samples are kept as channels, not made RGB", inks))
		}
		if (l.BitsPerSample == 2 || l.BitsPerSample == 4) && l.Photometric != tiff.PhotometricPalette {
			out = append(out, fmt.Sprintf("%d-bit samples are written as uint8, their values as stored (0-%d), as tifffile reads them",
				l.BitsPerSample, 1<<l.BitsPerSample-1))
		}
	}
	if _, ok := page.Field(tiff.TagICCProfile); ok {
		out = append(out, "its ICC colour profile is not kept (OME has no field for it)")
	}
	// Microscopy readers (tifffile, Bio-Formats) give the pixels as
	// stored, and so does the output; a photo viewer turns them.
	if o, ok := page.Uint(tiff.TagOrientation); ok && o > 1 {
		out = append(out, fmt.Sprintf("Orientation %d is not applied: the pixels are written as stored, as tifffile and Bio-Formats read them", o))
	}
	return out
}

// maxCarriedText bounds the text of the images' names, descriptions,
// channel names and map annotations (keys and values) a file carries, as
// the writer escapes it for XML: the OME-XML a writer makes of it, beside
// its own (about 40 bytes a plane), stays below pyramid.MaxOMEXMLSize,
// past which this package reads no OME-XML, so that a file converted can
// be read again. Files hold a few KB; a 15 MB description of ampersands
// made 75 MB of OME-XML.
const maxCarriedText = 16 << 20

// boundText keeps the images' text while it fits what is left of
// maxCarriedText, image by image: its name, its description, its
// channels' names, then its annotations. A name or description that does
// not fit is left out, and the annotations from the first that does not;
// what a later image has may still fit. Each is reported (ErrMetadata,
// through skipImageMetadata).
func (m *mapper) boundText() error {
	left := maxCarriedText
	for k, im := range m.file.Images {
		s := &im.Spec
		fit := func(what string, text *string, attr bool) error {
			n := escapedLen(*text, attr)
			if n <= left {
				left -= n
				return nil
			}
			err := fmt.Errorf("%w: %s of image %d, %d bytes as XML, is past what is left of the %d bytes of text carried", ErrMetadata, what, k, n, maxCarriedText)
			*text = ""
			return m.skipImageMetadata(im, err)
		}
		if err := fit("the name", &s.Name, true); err != nil {
			return err
		}
		if err := fit("the description", &s.Description, false); err != nil {
			return err
		}
		for c := range s.Channels {
			if err := fit(fmt.Sprintf("the name of channel %d", c), &s.Channels[c].Name, true); err != nil {
				return err
			}
		}
		for i, kv := range s.Annotations {
			n := escapedLen(kv.Key, true) + escapedLen(kv.Value, false) + len(`<M K=""></M>`)
			if n <= left {
				left -= n
				continue
			}
			err := fmt.Errorf("%w: %d of the %d annotations of image %d, from %q on, are past what is left of the %d bytes of text carried",
				ErrMetadata, len(s.Annotations)-i, len(s.Annotations), k, kv.Key, maxCarriedText)
			s.Annotations = slices.Clone(s.Annotations[:i]) // the rest's memory freed
			if err := m.skipImageMetadata(im, err); err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// escapedLen is the length of s escaped as the writer escapes XML text,
// or an attribute's value (attr): & < > and CR as references, and in an
// attribute the double quote, tab and newline too.
func escapedLen(s string, attr bool) int {
	n := len(s)
	for i := range len(s) {
		switch c := s[i]; {
		case c == '&':
			n += len("&amp;") - 1
		case c == '<' || c == '>':
			n += len("&lt;") - 1
		case c == '\r':
			n += len("&#xD;") - 1
		case attr && c == '"':
			n += len("&quot;") - 1
		case attr && (c == '\t' || c == '\n'):
			n += len("&#xA;") - 1
		}
	}
	return n
}

// noImageError is New's refusal of a file none of whose images can be
// read. It matches ErrUnsupported, and the first image's reason.
type noImageError struct{ skipped []error }

// reason returns the first entry that left out an image or pages, which
// is usually every image's reason: not metadata a kept image would have
// gone without (ErrNotCarried), such as an OME-XML read as a plain TIFF's.
func (e noImageError) reason() error {
	for _, err := range e.skipped {
		if !errors.Is(err, ErrNotCarried) {
			return err
		}
	}
	if len(e.skipped) > 0 {
		return e.skipped[0]
	}
	return nil
}

// Error names the first image's reason.
func (e noImageError) Error() string {
	switch n := len(e.skipped); n {
	case 0:
		return ErrUnsupported.Error() + ": no image of the file can be read"
	case 1:
		return "source: no image of the file can be read: " + e.skipped[0].Error()
	default:
		return fmt.Sprintf("source: no image of the file can be read: %v (and %d more)", e.reason(), n-1)
	}
}

// Unwrap returns ErrUnsupported and the first image's reason.
func (e noImageError) Unwrap() []error {
	if len(e.skipped) == 0 {
		return []error{ErrUnsupported}
	}
	return []error{ErrUnsupported, e.reason()}
}

// mapper builds a File's images.
type mapper struct {
	file    *File
	name    string
	opts    Options
	layouts map[layoutKey]layoutResult
	// The TIFF files of an OME-TIFF dataset: the one opened first (its
	// TIFF nil for a companion), the others by name, and where each of
	// their pages is.
	parts     []*part
	byName    map[string]*part
	failed    map[string]error // the files that could not be opened
	uuidNames map[string]string
	pages     map[*tiff.Page]partPage
	explicit  map[*part][][2]int // the runs of pages TiffData elements map themselves
	// pending are the metadata an OME image being mapped goes without,
	// listed in File.Skipped if the image is kept.
	pending []error
	// mapBudget is how many more map entries the OME images may copy into
	// their typed annotations (an image of one map shares it instead): the
	// document's size in the entries' memory.
	mapBudget int
}

// sharedFloor is what any input may decode to, however small its file:
// a few seconds of work (GDAL writes a small raster of no data as a file
// of a few hundred bytes of empty tiles).
const sharedFloor = 256 << 20

// filesSize is the size of the files the images' pages are in.
func (m *mapper) filesSize() int64 {
	var size int64
	for _, p := range m.parts {
		if p.tf != nil {
			size += p.tf.Size
		}
	}
	if size == 0 && m.file.TIFF != nil {
		size = m.file.TIFF.Size
	}
	return size
}

// copyRatio and copyFloor bound the bytes the images' tiles copied
// through would write: past copyRatio times the files' size, and
// copyFloor, blocks share their data (a sound file stores each once, and
// its blocks add up to less than its size; a writer that stores one blank
// tile for many adds a little), and copying each would write what the
// file's size cannot justify: 256 tiles naming one block of 1 MiB wrote
// 268 MB. Decoded and encoded again instead, they cost what checkShared
// lets them.
const (
	copyRatio = 16
	copyFloor = 64 << 20
)

// checkCopies adds up the blocks of every page the images' tiles would be
// copied from, their reduced levels' too (Plane.Levels, for
// Encoded(true)), and past copyRatio and copyFloor sets every image's
// noCopy: the tiles are then decoded, not copied.
func (m *mapper) checkCopies() {
	size := m.filesSize()
	var stored uint64
	seen := map[*tiff.Page]bool{}
	add := func(p *tiff.Page) {
		if seen[p] {
			return
		}
		seen[p] = true
		for i := range p.NumBlocks() {
			if b, err := p.Block(i); err == nil {
				stored += b.Size
			}
		}
	}
	for _, im := range m.file.Images {
		for _, pl := range im.Planes {
			add(pl.Page)
			for _, l := range pl.Levels {
				add(l)
			}
		}
	}
	if stored <= uint64(max(copyFloor, copyRatio*size)) {
		return
	}
	err := fmt.Errorf("%w: tiles copied through: the blocks of the images' pages hold %d bytes, more than %d times the %d bytes of their files: "+
		"blocks that share their data, which copied would each be written again (they are decoded)", ErrUnsupported, stored, copyRatio, size)
	for _, im := range m.file.Images {
		im.noCopy = err
	}
}

// checkShared refuses images whose planes decode to more than
// Options.MaxDecodeRatio times the size of their files (and more than
// sharedFloor) when their blocks are not each stored once, apart: two blocks stored at one offset, or overlapping (one small
// block named by every tile of a huge page, or by thousands of pages, or
// blocks each one byte after the last), a page that is a plane of two
// images, or blocks that store nothing (sparse: a small file of a huge
// image of empty tiles) would cost in time and output what the file's
// size cannot justify.
func (m *mapper) checkShared() error {
	size, decoded := m.filesSize(), int64(0)
	for _, im := range m.file.Images {
		s := im.Spec
		plane := uint64(s.SizeX) * uint64(s.SizeY) * uint64(max(s.SamplesPerPixel, 1)) * uint64(s.PixelType.Size()) // below 2^64 * 2^-1
		hi, lo := bits.Mul64(plane, uint64(len(im.Planes)))
		if hi != 0 || lo > math.MaxInt64/2 || decoded+int64(lo) > math.MaxInt64/2 {
			decoded = math.MaxInt64 / 2 // saturated: past any file's size
			break
		}
		decoded += int64(lo)
	}
	ratio := int64(cmp.Or(m.opts.MaxDecodeRatio, DefaultMaxDecodeRatio))
	if ratio < 0 || decoded/ratio <= size || decoded <= sharedFloor {
		return nil
	}
	bomb := func(why string, args ...any) error {
		return fmt.Errorf("%w: the images decode to %d bytes or more from %d bytes of files, more than %d times their size, and %s",
			ErrBomb, decoded, size, ratio, fmt.Sprintf(why, args...))
	}
	type stored struct {
		file         int // its file's number: a part's, or one made in memory (a Philips label)
		offset, size uint64
		page         *tiff.Page
		block        int
	}
	var blocks []stored
	seen, files := map[*tiff.Page]*Image{}, map[*tiff.File]int{}
	empty, emptyPage := 0, (*tiff.Page)(nil)
	for _, im := range m.file.Images {
		for _, pl := range im.Planes {
			if other, ok := seen[pl.Page]; ok && other != im {
				return bomb("the page at %d is a plane of two of them", pl.Page.Offset)
			} else if ok { // a page of several planes (samples)
				continue
			}
			seen[pl.Page] = im
			for i := range pl.Page.NumBlocks() {
				b, err := pl.Page.Block(i)
				if err != nil {
					continue
				}
				if b.Size == 0 {
					if empty++; emptyPage == nil {
						emptyPage = pl.Page
					}
					continue
				}
				f, ok := files[pl.Page.File()]
				if !ok {
					f = len(files)
					files[pl.Page.File()] = f
				}
				blocks = append(blocks, stored{f, b.Offset, b.Size, pl.Page, i})
			}
		}
	}
	// The files' blocks by offset: each must end before the next starts.
	slices.SortFunc(blocks, func(a, b stored) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.offset, b.offset), cmp.Compare(a.page.Offset, b.page.Offset), cmp.Compare(a.block, b.block))
	})
	for k := 1; k < len(blocks); k++ {
		p, q := blocks[k-1], blocks[k]
		if p.file == q.file && q.offset-p.offset < p.size {
			return bomb("their blocks share their data (block %d of the page at %d, stored at %d, overlaps block %d of the page at %d, stored at %d, %d bytes)",
				q.block, q.page.Offset, q.offset, p.block, p.page.Offset, p.offset, p.size)
		}
	}
	if empty > 0 {
		return bomb("%d of their blocks store nothing (sparse: the page at %d has one)", empty, emptyPage.Offset)
	}
	return nil
}

// layoutResult is what layoutOf returned for a page.
type layoutResult struct {
	l   pageLayout
	err error
}

// layoutKey is a page's layout as a mapping takes its palette.
type layoutKey struct {
	page *tiff.Page
	mode paletteMode
}

// layout is layoutOf, once per page.
func (m *mapper) layout(p *tiff.Page) (pageLayout, error) { return m.layoutAs(p, paletteRefused) }

// layoutAs is pageLayoutOf, once per page and mode.
func (m *mapper) layoutAs(p *tiff.Page, mode paletteMode) (pageLayout, error) {
	key := layoutKey{p, mode}
	if r, ok := m.layouts[key]; ok {
		return r.l, r.err
	}
	if m.layouts == nil {
		m.layouts = map[layoutKey]layoutResult{}
	}
	l, err := pageLayoutOf(p, mode)
	m.layouts[key] = layoutResult{l, err}
	return l, err
}

// skip records what cannot be mapped, or fails with it.
func (m *mapper) skip(err error) error {
	if !m.opts.SkipUnsupported {
		return err
	}
	m.file.Skipped = append(m.file.Skipped, err)
	return nil
}

// skipImage is skip for an image that cannot be mapped whole.
func (m *mapper) skipImage(err error) error { return m.skip(leftOut{err}) }

// skipMetadata is skip for metadata the kept images go without.
func (m *mapper) skipMetadata(err error) error { return m.skip(notCarried{error: err}) }

// skipImageMetadata is skip for metadata the kept image im goes without.
func (m *mapper) skipImageMetadata(im *Image, err error) error {
	return m.skip(notCarried{error: err, image: im})
}

// maxAnnotations bounds the fields of a scanner's metadata kept as one
// image's annotations (an Aperio description's, a BIF's iScan attributes),
// as a QPTIFF's and an SCN's are bounded: scanners write a few dozen.
const maxAnnotations = 1024

// boundAnnotations keeps the first maxAnnotations of im's annotations and
// reports the rest (ErrMetadata, through skipImageMetadata); what names
// the metadata they come from, whose fields are all the annotations so
// far (the caller bounds them before adding others).
func (m *mapper) boundAnnotations(im *Image, what string) error {
	n := len(im.Spec.Annotations)
	if n <= maxAnnotations {
		return nil
	}
	im.Spec.Annotations = slices.Clone(im.Spec.Annotations[:maxAnnotations]) // the rest's memory freed
	return m.skipImageMetadata(im, fmt.Errorf("%w: %s has %d more fields than the %d kept as annotations", ErrMetadata, what, n-maxAnnotations, maxAnnotations))
}

// plainTIFF maps the file as a plain TIFF when its vendor's metadata
// cannot be read, as err says: the error is reported (skipMetadata),
// saying so, or the file refused without SkipUnsupported.
func (m *mapper) plainTIFF(err error) error {
	m.file.Kind = TIFF
	if err := m.skipMetadata(fmt.Errorf("%w; the file is read as a plain TIFF", err)); err != nil {
		return err
	}
	return m.generic()
}

// add appends an image whose planes are all set.
func (m *mapper) add(im *Image) { m.file.Images = append(m.file.Images, im) }

// pageLayout is what the mapping needs of a page: its size, pixel type
// and how its samples become planes.
type pageLayout struct {
	width, height int
	pixelType     pyramid.PixelType
	samples       int  // of the page
	rgb           bool // the samples are interleaved RGB the writer keeps
	mask          bool // a transparency mask (NewSubfileType bit 2)
	inverted      bool // WhiteIsZero: kept as stored, so no plane of a BlackIsZero image
	palette       bool // the colours of a ColorMap, RGB (rgb) or gray, stand for the page's indices
}

// String describes the layout, as the errors about pages unlike others
// say it.
func (l pageLayout) String() string {
	s := fmt.Sprintf("%d x %d, %d samples of %v", l.width, l.height, l.samples, l.pixelType)
	if l.rgb {
		s += ", RGB"
	}
	if l.mask {
		s += ", a mask"
	}
	if l.inverted {
		s += ", white-is-zero"
	}
	if l.palette {
		s += ", the colours of a palette"
	}
	return s
}

// planesPerPage is the number of planes a page holds: 1 for RGB or a
// single sample, one per sample otherwise.
func (l pageLayout) planesPerPage() int {
	if l.rgb {
		return 1
	}
	return l.samples
}

// specSamples is the SamplesPerPixel of the image's spec.
func (l pageLayout) specSamples() int {
	if l.rgb {
		return 3
	}
	return 1
}

// maxChannelSamples bounds the samples of a page read as channels: each
// is a plane of its own, written at the same time as the others (a few
// bands of the writer's each), so a page of a small file that claims
// thousands of samples would make the conversion hold thousands of planes
// open.
const maxChannelSamples = 256

// maxBlockBytes bounds the bytes of one decoded block (a tile, or a strip):
// 1 TiB, past any machine's memory and any band a reader is allowed.
const maxBlockBytes = 1 << 40

// layoutOf checks that the page can be read by a BandReader and converted,
// and returns its layout. The error names the field that cannot be.
func layoutOf(p *tiff.Page) (pageLayout, error) { return pageLayoutOf(p, paletteRefused) }

// paletteMode says what a mapping takes a palette page's values for.
type paletteMode int

const (
	// paletteRefused refuses palette pages: a vendor's layout has none.
	paletteRefused paletteMode = iota
	// paletteIndices takes the values of a page of one sample as they
	// are, indices: ImageJ's lookup tables and an OME-TIFF's palette pages
	// (whose Pixels say one sample), as Bio-Formats and tifffile read them.
	paletteIndices
	// paletteColours takes the colours of the page's ColorMap (palette),
	// as libvips reads a palette TIFF.
	paletteColours
)

// pageLayoutOf is layoutOf, with palette pages taken as mode says.
func pageLayoutOf(p *tiff.Page, mode paletteMode) (pageLayout, error) {
	l, f, err := BlockFormat(p)
	if err != nil {
		return pageLayout{}, err
	}
	if c := l.Compression; c == tiff.CompressionJPEG2000Aperio || c == tiff.CompressionJPEG2000AperioRGB {
		return pageLayout{}, fmt.Errorf("%w: Compression %d (JPEG 2000, as Aperio writes it) of the page at %d: convert it to another codec first (vips or bfconvert read it)",
			ErrUnsupported, c, p.Offset)
	}
	// Every block within the file, so that what New accepts can be read
	// (a file cut short is refused here, before any output exists).
	for i := range p.NumBlocks() {
		if _, err := p.Block(i); err != nil {
			return pageLayout{}, err
		}
	}
	if order, ok := p.Uint(tiff.TagFillOrder); ok && order != 1 {
		// libtiff reverses the bits of every byte of such a page's
		// blocks before decoding them (for most codecs): read as stored,
		// they would be other pixels.
		return pageLayout{}, fmt.Errorf("%w: FillOrder %d of the page at %d (bits least significant first)", ErrUnsupported, order, p.Offset)
	}
	out := pageLayout{width: l.Width, height: l.Height, samples: l.SamplesPerPixel,
		mask: p.NewSubfileType()&tiff.SubfileMask != 0, inverted: l.Photometric == tiff.PhotometricWhiteIsZero}
	if out.pixelType, err = pixelTypeOf(l, p.Offset); err != nil {
		return out, err
	}
	switch l.Photometric {
	case tiff.PhotometricWhiteIsZero, tiff.PhotometricBlackIsZero, tiff.PhotometricRGB, tiff.PhotometricSeparated, tiff.PhotometricMask:
	case tiff.PhotometricYCbCr:
		if l.Compression != tiff.CompressionJPEG {
			name := fmt.Sprint(l.Compression)
			if n, ok := tiff.ValueName(tiff.TagCompression, uint64(l.Compression)); ok {
				name += " (" + n + ")" // "6 (old JPEG)": JPEG, but not the one read
			}
			return out, fmt.Errorf("%w: PhotometricInterpretation YCbCr with Compression %s of the page at %d (YCbCr is read from new-style JPEG, 7, only)",
				ErrUnsupported, name, p.Offset)
		}
	case tiff.PhotometricPalette:
		if mode == paletteIndices && l.SamplesPerPixel == 1 {
			break
		}
		if mode == paletteColours {
			t, err := paletteOf(p, l)
			if err != nil {
				return out, err
			}
			out.palette, out.rgb = true, !t.gray // pixelTypeOf's type: uint8, or uint16 for 16-bit indices
			break
		}
		return out, fmt.Errorf("%w: PhotometricInterpretation palette (ColorMap) of the page at %d", ErrUnsupported, p.Offset)
	default:
		return out, fmt.Errorf("%w: PhotometricInterpretation %d of the page at %d", ErrUnsupported, l.Photometric, p.Offset)
	}
	colour := l.Photometric == tiff.PhotometricRGB || l.Photometric == tiff.PhotometricYCbCr
	out.rgb = out.rgb || l.SamplesPerPixel == 3 && colour && (out.pixelType == pyramid.Uint8 || out.pixelType == pyramid.Uint16)
	if !out.rgb && l.SamplesPerPixel > maxChannelSamples {
		return out, fmt.Errorf("%w: SamplesPerPixel %d of the page at %d, more than the %d samples read as channels",
			ErrUnsupported, l.SamplesPerPixel, p.Offset, maxChannelSamples)
	}
	// A block no band can hold (a single strip of 2^32-1 rows of 2^32-1
	// pixels) is an image too large, as a band past MaxBandBytes is, not
	// a layout the decoders do not take.
	pixel := int64(max(1, f.Format.SamplesPerPixel)) * int64(max(8, f.Format.BitsPerSample)/8)
	if bw, bh := int64(f.Width), int64(f.Height); bw > 0 && bh > 0 && bh > maxBlockBytes/bw/pixel {
		return out, fmt.Errorf("%w: the page at %d has blocks of %d x %d pixels of %d bytes, more than %d bytes",
			ErrSize, p.Offset, bw, bh, pixel, int64(maxBlockBytes))
	}
	// pixelTypeOf took whole bytes only: the band reader's decoder is
	// made as it will be.
	if _, err := compress.NewDecoder(f); err != nil {
		if errors.Is(err, compress.ErrCompression) || errors.Is(err, compress.ErrFormat) || errors.Is(err, compress.ErrPredictor) {
			return out, fmt.Errorf("%w: the page at %d: %w", ErrUnsupported, p.Offset, err)
		}
		return out, fmt.Errorf("source: the page at %d: %w", p.Offset, err)
	}
	return out, nil
}

// pixelTypeOf maps a page's samples to the writer's pixel type.
func pixelTypeOf(l tiff.Layout, offset int64) (pyramid.PixelType, error) {
	signed, float := l.SampleFormat == tiff.SampleFormatInt, l.SampleFormat == tiff.SampleFormatFloat
	switch {
	case l.BitsPerSample == 1 && l.SampleFormat == tiff.SampleFormatUint:
		// Bilevel images and masks: 0 and 1 as bytes, as Bio-Formats
		// (type bit) and tifffile (bool) read them.
		return pyramid.Uint8, nil
	case (l.BitsPerSample == 2 || l.BitsPerSample == 4) && l.SampleFormat == tiff.SampleFormatUint:
		// Values as stored (0-3, 0-15), as tifffile reads them.
		return pyramid.Uint8, nil
	case l.BitsPerSample == 8 && !float:
		return map[bool]pyramid.PixelType{false: pyramid.Uint8, true: pyramid.Int8}[signed], nil
	case l.BitsPerSample == 16 && !float:
		return map[bool]pyramid.PixelType{false: pyramid.Uint16, true: pyramid.Int16}[signed], nil
	case l.BitsPerSample == 32 && !float:
		return map[bool]pyramid.PixelType{false: pyramid.Uint32, true: pyramid.Int32}[signed], nil
	case l.BitsPerSample == 32, l.BitsPerSample == 16:
		// Half floats widen to float32 exactly, as Bio-Formats reads
		// them: OME has no 16-bit float type.
		return pyramid.Float32, nil
	case l.BitsPerSample == 64 && float:
		return pyramid.Float64, nil
	}
	kind, read := "integer", "8, 16 or 32"
	switch {
	case float:
		kind, read = "floating-point", "16, 32 or 64"
	case !signed:
		kind, read = "unsigned integer", "1, 2, 4, 8, 16 or 32"
	}
	return 0, fmt.Errorf("%w: BitsPerSample %d of %s samples of the page at %d (%s are read)",
		ErrUnsupported, l.BitsPerSample, kind, offset, read)
}

// sameShape reports whether two pages can be planes of one image.
func sameShape(a, b pageLayout) bool { return a == b }

// planesOf returns the planes a page holds, in sample order, with its
// reduced levels.
func planesOf(p *tiff.Page, l pageLayout, levels []*tiff.Page) []Plane {
	if len(levels) == 0 {
		levels = p.SubIFDs
	}
	if l.rgb || l.samples == 1 {
		return []Plane{{Page: p, Sample: -1, Levels: levels}}
	}
	out := make([]Plane, l.samples)
	for s := range out {
		out[s] = Plane{Page: p, Sample: s, Levels: levels}
	}
	return out
}
