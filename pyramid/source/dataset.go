package source

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// maxDatasetFiles bounds the files of a multi-file dataset that one
// document makes New open (and keep open while the File is): its
// TiffData elements could name millions. A variable for the tests.
var maxDatasetFiles = 4096

// uuidConflict marks a UUID that TiffData elements give to files of
// different names.
const uuidConflict = "\x00"

// Part is a file of a multi-file OME-TIFF dataset, other than the one
// opened, that holds planes of its images.
type Part struct {
	// Name is the file's path in the dataset's directory, as the
	// TiffData elements give it.
	Name string
	// TIFF is the file's structure, less its first ImageDescription: the
	// dataset's document, which File.OMEXML holds, or a BinaryOnly one.
	TIFF *tiff.File
}

// part is a TIFF file of a dataset whose pages the mapping reads: the
// one opened, or one a TiffData names.
type part struct {
	name, uuid string
	tf         *tiff.File // nil for a companion opened: it holds no pages
	used       []bool     // the main chain's pages an image maps
	other      bool       // not the file opened
	ome        bool       // its first ImageDescription is OME-XML
	info       os.FileInfo
}

// partPage is a page of a part: the IFD-th of its main chain.
type partPage struct {
	part *part
	ifd  int
}

// page returns the page.
func (r partPage) page() *tiff.Page { return r.part.tf.Pages[r.ifd] }

// String names the page in errors: "page 3", and the file when it is
// not the one opened.
func (r partPage) String() string {
	return fmt.Sprintf("page %d%s", r.ifd, r.part.in())
}

// in names the file, when it is not the one opened, for errors: " in
// NAME".
func (p *part) in() string {
	if !p.other {
		return ""
	}
	return " in " + p.name
}

// indexRanges writes ascending indexes as ranges ("0-4, 7"), the first
// eight: a note of a file of a million pages stays a line.
func indexRanges(idx []int) string {
	var ranges []string
	for i := 0; i < len(idx); {
		if len(ranges) == 8 {
			ranges = append(ranges, "...")
			break
		}
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if j > i {
			ranges = append(ranges, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		} else {
			ranges = append(ranges, strconv.Itoa(idx[i]))
		}
		i = j + 1
	}
	return strings.Join(ranges, ", ")
}

// addPart adds a TIFF file of the dataset to the mapping.
func (m *mapper) addPart(name, uuid string, tf *tiff.File, other bool) *part {
	p := &part{name: name, uuid: uuid, tf: tf, other: other}
	if m.pages == nil {
		m.pages = map[*tiff.Page]partPage{}
	}
	if tf != nil {
		p.used = make([]bool, len(tf.Pages))
		for i, pg := range tf.Pages {
			m.pages[pg] = partPage{p, i}
		}
	}
	if other {
		if m.byName == nil {
			m.byName = map[string]*part{}
		}
		m.byName[name] = p
	}
	m.parts = append(m.parts, p)
	return p
}

// pathOr returns datasetName's path, or "" when it names none.
func pathOr(p string, ok bool) string {
	if !ok {
		return ""
	}
	return p
}

// datasetName returns the file a FileName (or MetadataFile) names, as
// a path below the dataset's directory, as Bio-Formats resolves it: a
// name, or a relative path within the directory (either separator); of an
// absolute path, written by a tool on the machine that acquired the
// dataset, the file of its base name in the directory (Bio-Formats looks
// there when the path is not found). A path through ".." names none
// (false): the dataset's files are in its directory or below.
func datasetName(name string) (string, bool) {
	if name == "" || strings.ContainsRune(name, 0) {
		return "", false
	}
	slashed := strings.ReplaceAll(name, "\\", "/")
	drive := len(slashed) >= 2 && slashed[1] == ':' && ('a' <= slashed[0]|0x20 && slashed[0]|0x20 <= 'z') // C:/data/x.tif
	if strings.HasPrefix(slashed, "/") || drive {
		slashed = slashed[strings.LastIndexByte(slashed, '/')+1:]
		if drive && !strings.Contains(name, "/") && !strings.Contains(name, "\\") {
			slashed = slashed[2:] // C:x.tif
		}
	}
	var parts []string
	for p := range strings.SplitSeq(slashed, "/") {
		switch p {
		case "..":
			return "", false
		case "", ".":
		default:
			parts = append(parts, p)
		}
	}
	return filepath.Join(parts...), len(parts) > 0
}

// errNoCompanion is a file that is no OME-XML document at all.
var errNoCompanion = errors.New("not an OME-XML document")

// readCompanion reads the OME-XML document of a companion file, name in
// dir, of at most pyramid.MaxOMEXMLSize bytes; kind names the file in
// errors (a BinaryOnly element's MetadataFile may also be a master
// OME-TIFF). A file that does not start as XML is errNoCompanion, told
// from its first bytes.
func readCompanion(dir, name, kind string) (string, error) {
	// A FIFO or a device would block the open, or never end.
	f, err := tiff.OpenRegular(filepath.Join(dir, name))
	if errors.Is(err, tiff.ErrNotRegular) {
		return "", fmt.Errorf("%w: the %s %q is not a regular file (but a pipe, device, socket or directory)", ErrMetadata, kind, name)
	}
	if err != nil {
		return "", fmt.Errorf("%w: the %s %q: %w", ErrMetadata, kind, name, err)
	}
	defer f.Close()
	// A byte order mark does not count in the document's size.
	br := bufio.NewReader(io.LimitReader(f, int64(len(byteOrderMark))+pyramid.MaxOMEXMLSize+1))
	head, _ := br.Peek(64)
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte(byteOrderMark)), " \t\r\n")
	if !bytes.HasPrefix(head, []byte("<")) {
		return "", fmt.Errorf("%w: the %s %q: %w", ErrMetadata, kind, name, errNoCompanion)
	}
	data, err := io.ReadAll(br)
	data = bytes.TrimPrefix(data, []byte(byteOrderMark))
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: the %s %q: %w", ErrMetadata, kind, name, err)
	case len(data) > pyramid.MaxOMEXMLSize:
		return "", fmt.Errorf("%w: the %s %q is larger than %d bytes", ErrMetadata, kind, name, pyramid.MaxOMEXMLSize)
	case !isOMEXML(string(data)):
		return "", fmt.Errorf("%w: the %s %q: %w", ErrMetadata, kind, name, errNoCompanion)
	}
	return string(data), nil
}

// masterDescription returns the OME-XML of the TIFF at path, the first
// page's ImageDescription, if the file is a TIFF that has one.
func masterDescription(path string) (string, bool) {
	f, err := tiff.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if len(f.Pages) == 0 {
		return "", false
	}
	d := strings.TrimPrefix(f.Pages[0].Description(), byteOrderMark)
	return d, isOMEXML(d)
}

// rootUUID returns the UUID attribute of an OME-XML document's root, or
// "" when the text is no OME-XML or its root has none.
func rootUUID(text string) string {
	text = strings.TrimPrefix(text, byteOrderMark)
	if !isOMEXML(text) {
		return ""
	}
	d := xml.NewDecoder(strings.NewReader(text))
	for {
		tok, err := d.RawToken()
		if err != nil {
			return ""
		}
		if s, ok := tok.(xml.StartElement); ok {
			for _, a := range s.Attr {
				if a.Name.Local == "UUID" {
					return strings.TrimSpace(a.Value)
				}
			}
			return ""
		}
	}
}

// companion makes the document a BinaryOnly element points to the
// mapping's: the TIFF opened is then one part of the dataset.
func (m *mapper) companion(doc *omeDoc) (*omeDoc, string, error) {
	bo := doc.BinaryOnly
	name := strings.TrimSpace(bo.MetadataFile)
	switch {
	case m.opts.DatasetDir == "":
		return nil, "", fmt.Errorf("%w: the OME-XML is BinaryOnly: its MetadataFile %q holds the metadata (Open, or Options.DatasetDir, reads it)", ErrMultiFile, name)
	}
	name, ok := datasetName(name)
	if !ok {
		return nil, "", fmt.Errorf("%w: BinaryOnly MetadataFile %q names no file in the dataset's directory (a path through .. is not followed: open the metadata file itself)", ErrMetadata, bo.MetadataFile)
	}
	text, err := readCompanion(m.opts.DatasetDir, name, "metadata file")
	if errors.Is(err, errNoCompanion) {
		// A master OME-TIFF (the specification's other kind of metadata
		// file, read by Bio-Formats): its first page's ImageDescription.
		if desc, ok := masterDescription(filepath.Join(m.opts.DatasetDir, name)); ok {
			text, err = desc, nil
		}
	}
	if err != nil {
		return nil, "", err
	}
	full, err := parseOME(text)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("the metadata file %q: %w", name, err)
	case full.BinaryOnly != nil:
		return nil, "", fmt.Errorf("%w: the metadata file %q is BinaryOnly too", ErrMetadata, name)
	case bo.UUID != "" && strings.TrimSpace(bo.UUID) != strings.TrimSpace(full.UUID):
		return nil, "", fmt.Errorf("%w: the metadata file %q has UUID %q; the BinaryOnly element names %q", ErrMetadata, name, full.UUID, bo.UUID)
	}
	return full, text, nil
}

// partOf returns the part holding a TiffData's planes: the file opened
// when the TiffData names no file, or names it by its UUID or name; else
// the file its FileName names in the dataset's directory, opened once and
// checked to have the UUID the TiffData gives. A file missing from the
// directory is the one opened when that has no UUID of its own, neither
// at its root nor from a TiffData naming it by its name (nameUUIDs): it
// was renamed, as Bio-Formats takes it; the TiffData's UUID is then its.
func (m *mapper) partOf(td omeTiffData, i int) (*part, error) {
	own := m.parts[0]
	u := td.UUID
	var value, name string
	if u != nil {
		value, name = strings.TrimSpace(u.Value), strings.TrimSpace(u.FileName)
	}
	if m.uuidNames[value] == uuidConflict {
		return nil, fmt.Errorf("%w: TiffData %d: the TiffData elements give UUID %s to files of different names", ErrMetadata, i, plainText(value))
	}
	if value == "" && name == "" && m.file.Companion != "" {
		// The companion's document describes every file: its planes are
		// in no TIFF in particular.
		return nil, fmt.Errorf("%w: TiffData %d of the companion %q names no file", ErrMetadata, i, m.file.Companion)
	}
	rel, _ := datasetName(name)
	if value == "" && name == "" || value != "" && value == own.uuid || name != "" && (name == own.name || rel == own.name) {
		if own.tf == nil {
			return nil, fmt.Errorf("%w: TiffData %d names no file, and the companion holds no pages", ErrMetadata, i)
		}
		// An absolute path of the file opened's base name, of another
		// UUID: another file of that name, elsewhere, whose pixels these
		// are not. (Named as the file, its UUID is not checked, as
		// Bio-Formats finds a file by its name.)
		if name != own.name && value != "" && own.uuid != "" && value != own.uuid {
			return nil, fmt.Errorf("%w: TiffData %d names %q with UUID %s, but the file of that name here has UUID %s",
				ErrMetadata, i, name, plainText(value), plainText(own.uuid))
		}
		return own, nil
	}
	if name == "" {
		// Another TiffData may give the UUID's file name, as Bio-Formats
		// reads them.
		if name = m.uuidNames[value]; name == "" {
			return nil, fmt.Errorf("%w: TiffData %d names a file by its UUID alone, %s (no TiffData gives its FileName)", ErrMultiFile, i, plainText(value))
		}
		if r, _ := datasetName(name); (name == own.name || r == own.name) && own.tf != nil {
			// Named by another TiffData as the file opened: read from it,
			// as Bio-Formats finds a file by its name (not opened again).
			return own, nil
		}
	}
	if m.opts.DatasetDir == "" {
		return nil, fmt.Errorf("%w: TiffData %d is in another file, %q (%s): Open, or Options.DatasetDir, reads it", ErrMultiFile, i, name, value)
	}
	given := name
	name, ok := datasetName(name)
	if !ok {
		return nil, fmt.Errorf("%w: TiffData %d names %q, no file in the dataset's directory (a path through .. is not followed)", ErrMetadata, i, given)
	}
	p := m.byName[name]
	if p == nil && own.tf != nil && own.uuid == "" && m.missing(name) {
		// A file renamed, whose root gives no UUID, still names itself by
		// its first name: Bio-Formats then takes a missing file for the
		// one opened, whose UUID the TiffData's becomes.
		own.uuid = value
		return own, nil
	}
	if p == nil {
		var err error
		if p, err = m.openPart(name); err != nil {
			return nil, fmt.Errorf("TiffData %d: %w", i, err)
		}
	}
	if value != "" && p.uuid != "" && value != p.uuid {
		return nil, fmt.Errorf("%w: TiffData %d names %q with UUID %s, but the file's UUID is %s", ErrMetadata, i, name, plainText(value), plainText(p.uuid))
	}
	if value != "" && !p.ome {
		// Every file of an OME-TIFF dataset has OME-XML (BinaryOnly at
		// the least): a plain TIFF put in a part's place is not its file.
		return nil, fmt.Errorf("%w: TiffData %d names %q with UUID %s, but the file has no OME-XML", ErrMetadata, i, name, plainText(value))
	}
	return p, nil
}

// missing reports whether the dataset's directory has no file of the
// name (one that cannot be looked at is not missing: opening it says why).
func (m *mapper) missing(name string) bool {
	if _, ok := m.failed[name]; ok {
		return false
	}
	_, err := os.Stat(filepath.Join(m.opts.DatasetDir, name))
	return errors.Is(err, fs.ErrNotExist)
}

// exhausted reports whether err is the system's resources running out
// (descriptors, memory), which SkipUnsupported does not skip.
func exhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOMEM)
}

// openPart opens a file of the dataset, as a TIFF, and keeps it open with
// the File.
// A file that cannot be opened is so for every TiffData naming it, and
// one opened under another name (a link) is the part opened first.
func (m *mapper) openPart(name string) (*part, error) {
	if err, ok := m.failed[name]; ok {
		return nil, err
	}
	if len(m.byName)+len(m.failed) >= maxDatasetFiles {
		return nil, fmt.Errorf("%w: the dataset names more than %d files", ErrMultiFile, maxDatasetFiles)
	}
	fail := func(err error) (*part, error) {
		if m.failed == nil {
			m.failed = map[string]error{}
		}
		m.failed[name] = err
		return nil, err
	}
	path := filepath.Join(m.opts.DatasetDir, name)
	info, err := os.Stat(path)
	if err == nil {
		for _, p := range m.parts {
			if p.info != nil && os.SameFile(p.info, info) {
				m.byName[name] = p
				return p, nil
			}
		}
	}
	rc, err := tiff.Open(path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		return fail(fmt.Errorf("%w: the dataset's file %q is missing (%w)", ErrMetadata, name, err))
	case errors.Is(err, tiff.ErrMalformed): // damaged, not of a layout this package does not read
		return fail(fmt.Errorf("source: the dataset's file %q is damaged: %w", name, err))
	case errors.Is(err, tiff.ErrUnsupported) || errors.Is(err, tiff.ErrNotTIFF):
		return fail(fmt.Errorf("%w: the dataset's file %q: %w", ErrUnsupported, name, err))
	case errors.Is(err, syscall.EMFILE):
		return fail(fmt.Errorf("source: the dataset's file %q: %w (the dataset's files are open at once: raise the limit, ulimit -n)", name, err))
	default: // the system's (permissions), not the input's
		return fail(fmt.Errorf("source: the dataset's file %q: %w", name, err))
	}
	if len(rc.Pages) == 0 {
		rc.Close()
		return fail(fmt.Errorf("%w: the dataset's file %q has no pages", ErrMetadata, name))
	}
	m.file.closers = append(m.file.closers, rc.Close)
	desc := rc.Pages[0].Description()
	p := m.addPart(name, rootUUID(desc), rc.File, true)
	p.ome = isOMEXML(strings.TrimPrefix(desc, byteOrderMark))
	// Each file of a dataset may hold the whole document again, which
	// grows with the files: kept for each, n files would cost n times
	// the document (2,000 files of 400 KB each, 800 MB).
	rc.Pages[0].Fields = slices.DeleteFunc(rc.Pages[0].Fields, func(e ifd.Entry) bool { return e.Tag == tiff.TagImageDescription })
	p.info = info
	m.file.Parts = append(m.file.Parts, Part{Name: name, TIFF: rc.File})
	return p, nil
}

// nameUUIDs records the file name each UUID of the TiffData elements is
// given, so that a TiffData naming a file by its UUID alone finds it
// wherever the name is given; a UUID given to two names is a conflict.
func (m *mapper) nameUUIDs(doc *omeDoc) {
	m.uuidNames = map[string]string{}
	for _, im := range doc.Images {
		if im.Pixels == nil {
			continue
		}
		for _, td := range im.Pixels.TiffData {
			if td.UUID == nil {
				continue
			}
			value, name := strings.TrimSpace(td.UUID.Value), strings.TrimSpace(td.UUID.FileName)
			if value == "" || name == "" {
				continue
			}
			if prev, ok := m.uuidNames[value]; ok && prev != name {
				// Two spellings of one path are one name.
				if a, ok1 := datasetName(prev); !ok1 || a != pathOr(datasetName(name)) {
					name = uuidConflict
				}
			}
			m.uuidNames[value] = name
		}
	}
	// A file whose root gives no UUID has the one its TiffData give its
	// own name, as Bio-Formats takes it: a file missing then is another
	// (partOf), whatever the order of the TiffData.
	// The first TiffData naming it, in the document's order: two UUIDs
	// given its name would otherwise make the mapping differ run to run.
	if own := m.parts[0]; own.tf != nil && own.uuid == "" {
		for _, im := range doc.Images {
			if im.Pixels == nil || own.uuid != "" {
				continue
			}
			for _, td := range im.Pixels.TiffData {
				if td.UUID == nil {
					continue
				}
				value, name := strings.TrimSpace(td.UUID.Value), strings.TrimSpace(td.UUID.FileName)
				if value != "" && name == own.name && m.uuidNames[value] == own.name {
					own.uuid = value
					break
				}
			}
		}
	}
}
