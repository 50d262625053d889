package source

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// omeUnreadable is the error of an OME-XML document that cannot be read
// at all (not XML, not UTF-8, nested too deep): with SkipUnsupported the
// file is read as a plain TIFF.
type omeUnreadable struct{ error }

func (e omeUnreadable) Unwrap() error { return e.error }

// dropDescription clears the description images read as a plain TIFF's
// took from the first page, whose OME-XML could not be read: the document
// is no description.
func dropDescription(f *File, first *tiff.Page) {
	d := pyramid.XMLText(strings.TrimSpace(first.Description())) // as genericImage takes it
	for _, im := range f.Images {
		if im.Spec.Description == d {
			im.Spec.Description = ""
		}
	}
}

// byteOrderMark is UTF-8's, which an XML document may start with (XML
// 1.0, 4.3.3): tifffile and Bio-Formats read OME-XML after it.
const byteOrderMark = "\uFEFF"

// isOMEXML reports whether an ImageDescription is OME-XML, as tifffile
// tests it: XML whose text ends with the OME element's end tag; comments
// after it are let pass, as Bio-Formats, which parses the text, does.
func isOMEXML(d string) bool {
	d = strings.TrimSpace(d)
	for strings.HasSuffix(d, "-->") {
		i := strings.LastIndex(d, "<!--")
		if i < 0 {
			return false
		}
		d = strings.TrimSpace(d[:i])
	}
	return strings.HasPrefix(d, "<") && (strings.HasSuffix(d, "OME>") || emptyOMERoot(d))
}

// emptyOMERoot reports whether a document ends with an empty OME element,
// <OME .../> (or with a prefix, <ome:OME .../>): its last tag, as no "<"
// may stand in an attribute's value. A document cut after another empty
// element is not one: looksOMEXML says it was cut short.
func emptyOMERoot(d string) bool {
	if !strings.HasSuffix(d, "/>") {
		return false
	}
	tag := d[strings.LastIndex(d, "<")+1:]                   // `OME xmlns="..."/>`, `ome:OME/>`...
	name := strings.TrimSuffix(strings.Fields(tag)[0], "/>") // tag holds "/>" at least
	return name[strings.LastIndex(name, ":")+1:] == "OME"
}

// looksOMEXML reports whether an ImageDescription that isOMEXML refuses
// begins as OME-XML: XML whose first 4 KB hold an OME element or the OME
// namespace. Such a document was cut short (a writer's field limit, an
// edit), and reading the file as a plain TIFF would lose its metadata and
// its planes' order without a word, as tifffile and Bio-Formats do.
func looksOMEXML(d string) bool {
	d = strings.TrimSpace(d)
	if !strings.HasPrefix(d, "<") {
		return false
	}
	head := d[:min(len(d), 4096)]
	return strings.Contains(head, "<OME") || strings.Contains(head, "openmicroscopy.org/Schemas/OME/")
}

// omeDoc is the part of an OME-XML document the mapping reads. Elements
// are matched by their local names, whatever the schema's namespace.
// parseOME fills it; the struct tags say what it reads where, as
// encoding/xml would, which the tests use as the reference.
type omeDoc struct {
	UUID       string         `xml:"UUID,attr"`
	BinaryOnly *omeBinaryOnly `xml:"BinaryOnly"`
	Images     []omeImage     `xml:"Image"`
	Maps       []omeMap       `xml:"StructuredAnnotations>MapAnnotation"`
}

// omeMap is a MapAnnotation.
type omeMap struct {
	ID     string        `xml:"ID,attr"`
	Values []omeMapEntry `xml:"Value>M"`
}

// omeMapEntry is an M element of a MapAnnotation's Value.
type omeMapEntry struct {
	Key   string `xml:"K,attr"`
	Value string `xml:",chardata"`
}

// omeRef is a reference to another element, such as an AnnotationRef.
type omeRef struct {
	ID string `xml:"ID,attr"`
}

// omeBinaryOnly is a BinaryOnly element: the document is in the companion
// file it names.
type omeBinaryOnly struct {
	MetadataFile string `xml:"MetadataFile,attr"`
	UUID         string `xml:"UUID,attr"`
}

// omeImage is an Image element.
type omeImage struct {
	ID              string     `xml:"ID,attr"`
	Name            string     `xml:"Name,attr"`
	AcquisitionDate string     `xml:"AcquisitionDate"`
	Description     string     `xml:"Description"`
	Pixels          *omePixels `xml:"Pixels"`
	AnnotationRefs  []omeRef   `xml:"AnnotationRef"`
}

// omePixels is a Pixels element.
type omePixels struct {
	DimensionOrder    string        `xml:"DimensionOrder,attr"`
	Type              string        `xml:"Type,attr"`
	SizeX             uint32        `xml:"SizeX,attr"`
	SizeY             uint32        `xml:"SizeY,attr"`
	SizeZ             *uint32       `xml:"SizeZ,attr"` // nil: absent, taken as 1
	SizeC             *uint32       `xml:"SizeC,attr"` // nil: absent, taken as 1
	SizeT             *uint32       `xml:"SizeT,attr"` // nil: absent, taken as 1
	PhysicalSizeX     float64       `xml:"PhysicalSizeX,attr"`
	PhysicalSizeXUnit string        `xml:"PhysicalSizeXUnit,attr"`
	PhysicalSizeY     float64       `xml:"PhysicalSizeY,attr"`
	PhysicalSizeYUnit string        `xml:"PhysicalSizeYUnit,attr"`
	PhysicalSizeZ     float64       `xml:"PhysicalSizeZ,attr"`
	PhysicalSizeZUnit string        `xml:"PhysicalSizeZUnit,attr"`
	TimeIncrement     string        `xml:"TimeIncrement,attr"` // parsed by omeTimeIncrement
	TimeIncrementUnit string        `xml:"TimeIncrementUnit,attr"`
	Channels          []omeChannel  `xml:"Channel"`
	TiffData          []omeTiffData `xml:"TiffData"`
	// MetadataOnly and BinData are set when the element has one: its
	// pixels are in no file, or in the XML.
	MetadataOnly *struct{} `xml:"MetadataOnly"`
	BinData      *struct{} `xml:"BinData"`
}

// omeChannel is a Channel element.
type omeChannel struct {
	Name            string `xml:"Name,attr"`
	Color           *int32 `xml:"Color,attr"`
	SamplesPerPixel uint32 `xml:"SamplesPerPixel,attr"`
}

// omeTiffData is a TiffData element: where planes of the image lie.
type omeTiffData struct {
	IFD        *uint32  `xml:"IFD,attr"`
	PlaneCount *uint32  `xml:"PlaneCount,attr"`
	FirstZ     *uint32  `xml:"FirstZ,attr"`
	FirstC     *uint32  `xml:"FirstC,attr"`
	FirstT     *uint32  `xml:"FirstT,attr"`
	UUID       *omeUUID `xml:"UUID"`
}

// omeUUID is a TiffData's UUID element: the file's UUID, and its name.
type omeUUID struct {
	Value    string `xml:",chardata"`
	FileName string `xml:"FileName,attr"`
}

// ome maps an OME-TIFF, as Bio-Formats' OMETiffReader does:
//   - every Image with a Pixels element is an image; its DimensionOrder,
//     sizes, channel names and colours, physical sizes and units,
//     acquisition date, name and description, and the MapAnnotations it
//     references, are mapped to typed fields, and the whole document goes
//     with the images (see carry). An image without a DimensionOrder (the
//     schema requires one) is read only if its planes lie along one axis
//     or none, or each TiffData places one plane, where every order is the
//     same;
//   - each TiffData element maps planes to pages of the main chain: the
//     plane at FirstZ, FirstC and FirstT (0 by default, or counted from 1
//     when the writer did so, as Bio-Formats guesses it) is page IFD (0 by
//     default), and the PlaneCount planes after it (1 by default) the
//     pages after that, in DimensionOrder. A TiffData without PlaneCount
//     also maps the planes after it that no other TiffData maps, to the
//     pages after it: a TiffData without attributes maps every plane;
//   - SizeC counts samples: with pages of several samples, an RGB page
//     (3 samples of 8 or 16 bits) is one plane of SizeC / 3 channels, and
//     the samples of another are channels of their own;
//   - a TiffData whose UUID is the file's own or whose FileName names the
//     file is read from it; one naming another file (by its FileName, in
//     Options.DatasetDir) is read from that file, whose OME-XML must have
//     the UUID the TiffData gives; BinaryOnly metadata is read from the
//     companion file it names. Without a DatasetDir, such a multi-file
//     dataset is refused (ErrMultiFile);
//   - SubIFDs are the pages' reduced levels, not planes;
//   - the one Image of a document, without TiffData, has the pages in
//     order, as Bio-Formats and tifffile read it.
//
// An image whose planes are not all mapped, whose pages differ from its
// Pixels, or that cannot be read is refused (ErrMetadata or
// ErrUnsupported). A full-resolution page of the main chain that no
// image maps is noted (File.Notes) and ignored, as the OME-TIFF
// specification has readers ignore such "extraneous IFDs".
func (m *mapper) ome(text string) error {
	doc, err := parseOME(text)
	if err != nil {
		return omeUnreadable{err}
	}
	m.addPart(m.name, strings.TrimSpace(doc.UUID), m.file.TIFF, false)
	if doc.BinaryOnly != nil {
		if m.file.TIFF == nil {
			return fmt.Errorf("%w: the companion %q is BinaryOnly", ErrMetadata, m.name)
		}
		companion := strings.TrimSpace(doc.BinaryOnly.MetadataFile)
		if doc, text, err = m.companion(doc); err != nil {
			return err
		}
		m.file.OMEXML, m.file.Companion = text, companion
	}
	if len(doc.Images) == 0 {
		return fmt.Errorf("%w: the OME-XML describes no Image", ErrMetadata)
	}
	if len(doc.Images) == 1 && doc.Images[0].Pixels != nil && len(doc.Images[0].Pixels.TiffData) == 0 {
		// One image's planes, with no TiffData to say where: the pages in
		// order, as Bio-Formats and tifffile read them.
		doc.Images[0].Pixels.TiffData = []omeTiffData{{}}
	}
	m.nameUUIDs(doc)
	m.explicitPages(doc)
	m.mapBudget = len(text) / keyValueSize
	// doc.Maps are the MapAnnotations images refer to (parseOME keeps
	// only those, but in a document out of the schema's order); the
	// images' references make them typed annotations.
	maps := map[string][]pyramid.KeyValue{}
	for _, a := range doc.Maps {
		for _, kv := range a.Values {
			maps[a.ID] = append(maps[a.ID], pyramid.KeyValue{Key: pyramid.XMLText(kv.Key), Value: pyramid.XMLText(kv.Value)})
		}
	}
	// A page (or a sample of one) is one plane of an image: TiffData
	// elements that map it to two overlap. Images that share pages are
	// read as Bio-Formats reads them; what they cost is bounded with the
	// blocks shared (checkShared).
	type sampleOf struct {
		page   *tiff.Page
		sample int
	}
	for i, oi := range doc.Images {
		m.pending = m.pending[:0]
		im, err := m.omeImage(oi, maps)
		if err == nil {
			mine := map[sampleOf]bool{}
			for _, p := range im.Planes {
				k := sampleOf{p.Page, p.Sample}
				if mine[k] {
					err = fmt.Errorf("%w: %v is a plane of OME image %d twice (its TiffData elements overlap)", ErrMetadata, partPage{m.pages[p.Page].part, m.pages[p.Page].ifd}, i)
					break
				}
				mine[k] = true
			}
		}
		if err == nil {
			im.OMEImage = i
			for _, p := range im.Planes {
				r := m.pages[p.Page]
				r.part.used[r.ifd] = true
			}
			m.add(im)
			for _, e := range m.pending {
				if err := m.skipImageMetadata(im, e); err != nil {
					return err
				}
			}
			continue
		}
		err = fmt.Errorf("OME image %d (%s): %w", i, plainText(oi.ID), err)
		if exhausted(err) {
			// The system's limits, not the input: an image left out for
			// them would be lost to a run that a raised limit completes.
			return err
		}
		if err := m.skipImage(err); err != nil {
			return err
		}
	}
	if len(m.file.Images) == 0 {
		return nil
	}
	if len(m.file.Skipped) == 0 { // else the pages left may be the images' left out
		for _, part := range m.parts {
			if part.tf == nil {
				continue
			}
			// The specification's own examples hold such pages ("extraneous
			// IFDs", which readers ignore, as Bio-Formats does): said, not
			// refused.
			var unused []int
			for i, p := range part.tf.Pages {
				if !part.used[i] && p.NewSubfileType()&tiff.SubfileReducedImage == 0 {
					unused = append(unused, i)
				}
			}
			if len(unused) > 0 {
				what := "page " + indexRanges(unused)
				if len(unused) > 1 {
					what = fmt.Sprintf("%d pages (%s)", len(unused), indexRanges(unused))
				}
				m.file.Notes = append(m.file.Notes, fmt.Sprintf("%s%s of the OME-TIFF, in no image's TiffData, not converted: ignored, as the OME-TIFF specification asks",
					what, part.in()))
			}
		}
	}
	return m.carry(doc, text)
}

// typedMetadata is what the typed fields hold of an OME-TIFF's images,
// for the errors about metadata that cannot be carried.
const typedMetadata = "names, descriptions, acquisition dates, physical sizes, channel names and colours, map annotations"

// carry gives each image its Image element of the document, parsed again
// by pyramid.ParseOME, as Spec.OME: the writer then keeps the whole
// document but what it writes itself (the layout of the planes and the
// file's identity). The typed fields restate what the writer writes back
// as the document has it: the name, the description, the physical sizes,
// the channels' names and colours. The acquisition date and the map
// annotations are left to the document: the writer writes a typed date
// in its own form, with a zone the document may not give, and typed
// annotations as a MapAnnotation of their own, which would repeat the
// document's.
//
// A document ParseOME refuses (another schema version, elements the
// schema does not allow, duplicate IDs, references to nothing), or an
// Image element that does not describe its image's pixels as the writer
// requires (pyramid.OMEImage.Check: SizeC not counting an RGB page's
// samples, a Channel per sample of an RGB page), cannot be carried: New
// fails (ErrMetadata, wrapping the *pyramid.OMEError), or with
// SkipUnsupported the images keep their typed metadata only, and the
// error is listed in File.Skipped.
func (m *mapper) carry(doc *omeDoc, text string) error {
	full, err := pyramid.ParseOME([]byte(text))
	if err != nil {
		if err := m.skipMetadata(fmt.Errorf("%w: the OME-XML cannot be carried to the output: %w; without it, the images keep only their typed metadata (%s)",
			ErrMetadata, err, typedMetadata)); err != nil {
			return err
		}
		for _, im := range m.file.Images {
			if im.mapsLost != nil {
				if err := m.skipImageMetadata(im, im.mapsLost); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, im := range m.file.Images {
		oi, i := full.Image(im.OMEImage), im.OMEImage
		if oi == nil {
			err = fmt.Errorf("the document has %d Image elements", full.Images())
		} else {
			err = oi.Check(im.Spec)
		}
		if err != nil {
			err = fmt.Errorf("%w: the Image element of OME image %d (%s) cannot be carried to the output: %w; without it, the image keeps only its typed metadata (%s)",
				ErrMetadata, i, plainText(doc.Images[i].ID), err, typedMetadata)
			if err := m.skipImageMetadata(im, err); err != nil {
				return err
			}
			if im.mapsLost != nil {
				if err := m.skipImageMetadata(im, im.mapsLost); err != nil {
					return err
				}
			}
			continue
		}
		im.Spec.OME = oi
		im.Spec.Description = pyramid.XMLText(doc.Images[i].Description)
		im.Spec.AcquisitionDate, im.Spec.Annotations = time.Time{}, nil
		im.AcquisitionDate = strings.TrimSpace(doc.Images[i].AcquisitionDate)
	}
	return nil
}

// annotations returns the entries of the maps an Image refers to. A map
// referred to twice is the same map. The entries of an image of one map
// are the map's, shared (without room to append), so that images sharing
// a large map cost nothing more; those of several maps are copied, as long
// as the copies of all images take no more memory than the document's
// size: past that, the image goes without them, and the error says so
// (carry lists it when the Image element, which has them, is not
// carried).
func (m *mapper) annotations(oi omeImage, maps map[string][]pyramid.KeyValue) ([]pyramid.KeyValue, error) {
	var ids []string
	for _, ref := range oi.AnnotationRefs {
		if len(maps[ref.ID]) > 0 && !slices.Contains(ids, ref.ID) {
			ids = append(ids, ref.ID)
		}
	}
	switch len(ids) {
	case 0:
		return nil, nil
	case 1:
		kv := maps[ids[0]]
		return kv[:len(kv):len(kv)], nil
	}
	n := 0
	for _, id := range ids {
		n += len(maps[id])
	}
	if n > m.mapBudget {
		return nil, fmt.Errorf("%w: OME image %s: its %d map annotations hold %d entries, more than the images may copy; "+
			"without its Image element, the image goes without them", ErrMetadata, plainText(oi.ID), len(ids), n)
	}
	m.mapBudget -= n
	out := make([]pyramid.KeyValue, 0, n)
	for _, id := range ids {
		out = append(out, maps[id]...)
	}
	return out, nil
}

// keyValueSize is the memory of a pyramid.KeyValue, two strings.
const keyValueSize = 32

// lengthAliases are spellings of µm that tools write in place of OME's
// symbol: tifffile writes what its caller gives, ImageJ says "micron",
// and some write the Greek mu (U+03BC) for the micro sign (U+00B5).
var lengthAliases = map[string]string{"um": "µm", "micron": "µm", "microns": "µm", "\u03bcm": "µm"}

// omeLengthUnits are the symbols of OME's UnitsLength (2016-06), and ""
// for the default, µm.
var omeLengthUnits = map[string]bool{
	"": true, "Ym": true, "Zm": true, "Em": true, "Pm": true, "Tm": true, "Gm": true, "Mm": true, "km": true, "hm": true,
	"dam": true, "m": true, "dm": true, "cm": true, "mm": true, "µm": true, "nm": true, "pm": true, "fm": true, "am": true,
	"zm": true, "ym": true, "Å": true, "thou": true, "li": true, "in": true, "ft": true, "yd": true, "mi": true, "ua": true,
	"ly": true, "pc": true, "pt": true, "pixel": true, "reference frame": true,
}

// omeTypes maps OME pixel types to the writer's.
var omeTypes = map[string]pyramid.PixelType{
	"uint8": pyramid.Uint8, "int8": pyramid.Int8, "uint16": pyramid.Uint16, "int16": pyramid.Int16,
	"uint32": pyramid.Uint32, "int32": pyramid.Int32, "float": pyramid.Float32, "double": pyramid.Float64,
	"bit": pyramid.Uint8, // 1-bit samples, read as 0 and 1
}

// omeImage maps one Image element.
func (m *mapper) omeImage(oi omeImage, maps map[string][]pyramid.KeyValue) (*Image, error) {
	px := oi.Pixels
	if px == nil {
		return nil, fmt.Errorf("%w: no Pixels", ErrMetadata)
	}
	switch {
	case len(px.TiffData) > 0:
	case px.MetadataOnly != nil:
		return nil, fmt.Errorf("%w: MetadataOnly: the image's pixels are in no file", ErrUnsupported)
	case px.BinData != nil:
		return nil, fmt.Errorf("%w: BinData: the image's pixels are in the OME-XML, which is not read for pixels", ErrUnsupported)
	default:
		return nil, fmt.Errorf("%w: Pixels without TiffData, beside other images (which pages hold its planes is not said)", ErrUnsupported)
	}
	// The files of the TiffData, and the pages they hold, which bound the
	// planes they can map.
	parts := make([]*part, len(px.TiffData))
	pages, counted := 0, map[*part]bool{}
	for i, td := range px.TiffData {
		p, err := m.partOf(td, i)
		if err != nil {
			return nil, err
		}
		parts[i] = p
		if !counted[p] {
			counted[p] = true
			pages += len(p.tf.Pages)
		}
	}
	// The pages' layout comes from the first TiffData's page, as
	// Bio-Formats takes the samples per pixel from it.
	first := partPage{part: parts[0], ifd: int(value(px.TiffData[0].IFD))}
	if n := len(first.part.tf.Pages); first.ifd >= n {
		return nil, fmt.Errorf("%w: TiffData IFD %d, past the file's %d pages%s", ErrMetadata, first.ifd, n, first.part.in())
	}
	// A palette page's values are its indices, as the Pixels describe
	// them and Bio-Formats reads them (its lookup table aside).
	l, err := m.layoutAs(first.page(), paletteIndices)
	if err != nil {
		return nil, err
	}
	if err := checkPixels(px, l); err != nil {
		return nil, err
	}
	// RGB pages whose document describes their samples one by one (SizeC
	// 3 of three Channels of one sample, schema-valid, as some writers
	// describe them) are read as those channels, each a sample of its
	// page: the Image element then holds, its channels' metadata with it.
	// JPEG pages stay RGB: apart, their tiles could not be copied, and
	// would be encoded again, lossless, many times larger.
	c, _ := first.page().Uint(tiff.TagCompression)
	split := l.rgb && c != uint64(tiff.CompressionJPEG) && int(omeSize(px.SizeC)) == len(px.Channels) && len(px.Channels)%l.samples == 0 &&
		!slices.ContainsFunc(px.Channels, func(c omeChannel) bool { return c.SamplesPerPixel > 1 })
	if split {
		l.rgb = false
	}
	spec := pyramid.ImageSpec{
		Name: pyramid.XMLText(oi.Name), Description: pyramid.XMLText(strings.TrimSpace(oi.Description)),
		SizeX: l.width, SizeY: l.height, SizeZ: omeSize(px.SizeZ), SizeT: omeSize(px.SizeT),
		DimensionOrder: pyramid.DimensionOrder(px.DimensionOrder), PixelType: l.pixelType, SamplesPerPixel: l.specSamples(),
		PhysicalSizeX: positive(px.PhysicalSizeX), PhysicalSizeY: positive(px.PhysicalSizeY), PhysicalSizeZ: positive(px.PhysicalSizeZ),
		PhysicalSizeXUnit: px.PhysicalSizeXUnit, PhysicalSizeYUnit: px.PhysicalSizeYUnit, PhysicalSizeZUnit: px.PhysicalSizeZUnit,
	}
	// SizeC counts samples: effC planes of each (z, t) are pages, and the
	// spec has one channel per page (RGB) or per sample.
	sizeC := omeSize(px.SizeC)
	effC := max(sizeC/l.samples, 1)
	spec.SizeC = effC * l.planesPerPage()
	// The planes are checked against the pages first: what follows takes
	// time and memory in proportion to them.
	pageSpec := spec // the planes counted in pages: effC along C
	pageSpec.SizeC = effC
	planesInPages, ok := mulInts(pageSpec.SizeZ, effC, pageSpec.SizeT)
	if !ok || planesInPages > pages {
		files := "a file"
		if len(counted) > 1 {
			files = fmt.Sprintf("%d files", len(counted))
		}
		return nil, fmt.Errorf("%w: Z %d x C %d x T %d planes in %s of %d pages", ErrMetadata, pageSpec.SizeZ, effC, pageSpec.SizeT, files, pages)
	}
	spec.Channels = omeChannels(px.Channels, effC, l)
	if t, ok := omeTime(oi.AcquisitionDate); ok && t.Year() >= 1 { // xsd:dateTime's years
		spec.AcquisitionDate = t
	}
	spec.TimeIncrement = omeTimeIncrement(px.TimeIncrement, px.TimeIncrementUnit)
	var mapsLost error
	spec.Annotations, mapsLost = m.annotations(oi, maps)
	for _, size := range []struct {
		axis  string
		value *float64
		unit  *string
	}{{"X", &spec.PhysicalSizeX, &spec.PhysicalSizeXUnit}, {"Y", &spec.PhysicalSizeY, &spec.PhysicalSizeYUnit}, {"Z", &spec.PhysicalSizeZ, &spec.PhysicalSizeZUnit}} {
		if u, ok := lengthAliases[*size.unit]; ok {
			*size.unit = u
		}
		if _, ok := omeLengthUnits[*size.unit]; !ok {
			err := fmt.Errorf("%w: OME image %s: PhysicalSize%sUnit %q is no OME length unit (the physical size is left out)", ErrMetadata, plainText(oi.ID), size.axis, *size.unit)
			if !m.opts.SkipUnsupported {
				return nil, err
			}
			// Listed once the image is kept: a left-out image goes
			// without more than its metadata.
			m.pending = append(m.pending, err)
			*size.value, *size.unit = 0, ""
		}
	}
	// The schema requires the order. Without it, the pages of planes
	// along two axes or more could be read in the wrong order; along one
	// axis or none, every order is the same, and so it is when every
	// TiffData places one plane (PlaneCount 1). The TiffData elements are
	// checked first, their faults said before the order's.
	orderless := px.DimensionOrder == ""
	if orderless {
		spec.DimensionOrder, pageSpec.DimensionOrder = pyramid.XYZCT, pyramid.XYZCT
	}
	if _, err := pageSpec.PlaneIndex(0, 0, 0); err != nil {
		return nil, fmt.Errorf("%w: DimensionOrder %q", ErrMetadata, px.DimensionOrder)
	}
	at, err := m.tiffData(px.TiffData, parts, pageSpec, planesInPages, l.samples)
	if err != nil {
		return nil, err
	}
	if orderless {
		axes := 0
		for _, n := range []int{pageSpec.SizeZ, effC, pageSpec.SizeT} {
			if n > 1 {
				axes++
			}
		}
		placed := !slices.ContainsFunc(px.TiffData, func(td omeTiffData) bool { return td.PlaneCount == nil || *td.PlaneCount != 1 })
		if axes > 1 && !placed {
			return nil, fmt.Errorf("%w: no DimensionOrder, and Z %d x C %d x T %d planes: the order of its pages is not said", ErrMetadata, pageSpec.SizeZ, effC, pageSpec.SizeT)
		}
	}
	im := &Image{Spec: spec, Planes: make([]Plane, 0, planesInPages*l.planesPerPage()), mapsLost: mapsLost}
	if orderless && spec.Planes() > 1 { // of one plane, the order is moot
		im.Notes = append(im.Notes, "no DimensionOrder: taken as XYZCT (its planes lie along one axis, or each TiffData places one)")
	}
	if ph, _ := first.page().Uint(tiff.TagPhotometricInterpretation); ph == uint64(tiff.PhotometricPalette) {
		im.Notes = append(im.Notes, "palette pages: their indices are written, as the Pixels describe them and Bio-Formats reads them; "+
			"the ColorMap is not kept (OME has no lookup table)")
	}
	pageAt := make([]*tiff.Page, planesInPages)
	for p, ref := range at {
		if ref.part == nil {
			z, c, t := pageSpec.PlaneCoords(p)
			return nil, fmt.Errorf("%w: no TiffData maps plane z=%d c=%d t=%d", ErrMetadata, z, c, t)
		}
		page := ref.page()
		pl, err := m.layoutAs(page, paletteIndices)
		if err != nil {
			return nil, err
		}
		if split {
			pl.rgb = false
		}
		if !sameShape(pl, l) {
			return nil, fmt.Errorf("%w: %v is %s, unlike %v (%s)", ErrMetadata, ref, pl, first, l)
		}
		pageAt[p] = page
	}
	// The spec's planes in its DimensionOrder: plane (z, c, t) is sample
	// c % n of the page of (z, c / n, t), n the planes per page.
	n := l.planesPerPage()
	for p := range spec.Planes() {
		z, c, t := spec.PlaneCoords(p)
		q, _ := pageSpec.PlaneIndex(z, c/n, t)
		sample := -1
		if n > 1 {
			sample = c % n
		}
		im.Planes = append(im.Planes, Plane{Page: pageAt[q], Sample: sample, Levels: pageAt[q].SubIFDs})
	}
	return im, nil
}

// checkPixels checks the Pixels element against the layout of its first
// page: its sizes and type.
func checkPixels(px *omePixels, l pageLayout) error {
	if int64(px.SizeX) != int64(l.width) || int64(px.SizeY) != int64(l.height) {
		return fmt.Errorf("%w: Pixels SizeX %d and SizeY %d, but its first page is %d x %d", ErrMetadata, px.SizeX, px.SizeY, l.width, l.height)
	}
	if t, ok := omeTypes[px.Type]; !ok || t != l.pixelType {
		return fmt.Errorf("%w: Pixels Type %q, but its first page holds %v samples", ErrMetadata, px.Type, l.pixelType)
	}
	for _, size := range []struct {
		name string
		v    *uint32
	}{{"SizeZ", px.SizeZ}, {"SizeC", px.SizeC}, {"SizeT", px.SizeT}} {
		if size.v != nil && *size.v == 0 {
			return fmt.Errorf("%w: Pixels %s 0 (the schema's sizes are at least 1)", ErrMetadata, size.name)
		}
	}
	return nil
}

// omeSize is a Pixels size: 1 when absent (as Bio-Formats takes it).
func omeSize(v *uint32) int {
	if v == nil {
		return 1
	}
	return int(*v)
}

// omeChannels maps the Channel elements to the spec's channels: one per
// page (effC of them) when its samples are RGB or one, else one per
// sample, each named after its Channel.
func omeChannels(cs []omeChannel, effC int, l pageLayout) []pyramid.Channel {
	n := l.planesPerPage()
	// Each Channel for as many samples as it has, as the writer carries
	// a Channel of several samples (pyramid.OMEImage); past the image's
	// channels, the count is wrong, and no more are listed.
	var bySamples []omeChannel
	for _, oc := range cs {
		for k := uint32(0); k < max(oc.SamplesPerPixel, 1) && len(bySamples) <= effC*n; k++ {
			bySamples = append(bySamples, oc)
		}
	}
	var out []pyramid.Channel
	for c := range effC * n {
		var oc omeChannel
		switch {
		case len(cs) == effC*n: // one Channel per sample
			oc = cs[c]
		case len(cs) == effC: // one Channel per page
			oc = cs[c/n]
		case len(cs) == effC*l.samples && n == 1: // RGB described sample by sample
			oc = cs[c*l.samples]
		case len(bySamples) == effC*n && n > 1: // Channels of several samples each
			oc = bySamples[c]
		case c < len(cs):
			// More or fewer Channels than channels: channel c is Channel c,
			// as Bio-Formats reads them.
			oc = cs[c]
		}
		ch := pyramid.Channel{Name: pyramid.XMLText(oc.Name)}
		if oc.Color != nil {
			v := uint32(*oc.Color)
			ch.Color = color.NRGBA{R: uint8(v >> 24), G: uint8(v >> 16), B: uint8(v >> 8), A: uint8(v)}
		}
		out = append(out, ch)
	}
	for len(out) > 0 && out[len(out)-1] == (pyramid.Channel{}) {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// tiffData maps the planes of an image (counted in pages) to pages,
// following the TiffData elements, whose files are parts, as Bio-Formats
// does; a partPage of no part marks a plane no element maps. Each page
// holds samples samples.
func (m *mapper) tiffData(tds []omeTiffData, parts []*part, spec pyramid.ImageSpec, n, samples int) ([]partPage, error) {
	at := make([]partPage, n)
	certain := make([]bool, n)
	size := [3]uint32{uint32(spec.SizeZ), uint32(spec.SizeC), uint32(spec.SizeT)}
	oneBased := oneBasedIndexes(tds, size)
	for i, td := range tds {
		part := parts[i]
		pages := len(part.tf.Pages)
		given := [3]uint32{value(td.FirstZ), value(td.FirstC), value(td.FirstT)}
		first := given
		for d := range first {
			if oneBased[d] && first[d] > 0 {
				first[d]--
			}
			if first[d] >= size[d] { // named as the document gives it
				return nil, fmt.Errorf("%w: TiffData %d starts at FirstZ %d, FirstC %d, FirstT %d, outside Z %d, C %d, T %d",
					ErrMetadata, i, given[0], given[1], given[2], size[0], size[1], size[2])
			}
		}
		index, _ := spec.PlaneIndex(int(first[0]), int(first[1]), int(first[2]))
		count := uint32(1)
		if td.PlaneCount != nil {
			count = *td.PlaneCount
		}
		if count == 0 {
			return nil, fmt.Errorf("%w: TiffData %d has PlaneCount 0", ErrMetadata, i)
		}
		ifd := int64(value(td.IFD))
		if int64(index)+int64(count) > int64(n) || ifd+int64(count) > int64(pages) {
			// A page of several samples is one plane of them all: a
			// PlaneCount counting its channels counts too many.
			pageSamples := ""
			if samples > 1 {
				pageSamples = fmt.Sprintf(" (a plane is a page of %d samples, however many Channel elements describe them)", samples)
			}
			return nil, fmt.Errorf("%w: TiffData %d maps %d planes from plane %d of %d to pages from %d of %d%s%s",
				ErrMetadata, i, count, index, n, ifd, pages, part.in(), pageSamples)
		}
		for q := range int(count) {
			at[index+q], certain[index+q] = partPage{part, int(ifd) + q}, true
		}
		if td.PlaneCount != nil {
			continue
		}
		for p := index + 1; p < n && !certain[p]; p++ {
			next := partPage{part, at[p-1].ifd + 1}
			if next.ifd >= pages || m.isExplicit(next) {
				break // past the file, or a page a TiffData maps itself
			}
			at[p] = next
		}
	}
	return at, nil
}

// explicitPages records the pages the TiffData elements of the document
// map themselves (their IFD, and PlaneCount pages from it), as runs per
// file: the planes a TiffData without PlaneCount maps after its own never
// take one, so that no page is two planes, of one image or of two.
func (m *mapper) explicitPages(doc *omeDoc) {
	m.explicit = map[*part][][2]int{}
	for _, im := range doc.Images {
		if im.Pixels == nil {
			continue
		}
		for i, td := range im.Pixels.TiffData {
			part, err := m.partOf(td, i)
			if err != nil || part.tf == nil {
				continue // reported when the image is mapped
			}
			first := int64(value(td.IFD))
			end := min(first+max(int64(value(td.PlaneCount)), 1), int64(len(part.tf.Pages)))
			if first < end {
				m.explicit[part] = append(m.explicit[part], [2]int{int(first), int(end)})
			}
		}
	}
	for part, runs := range m.explicit { // sorted and merged, for isExplicit's search
		slices.SortFunc(runs, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
		merged := runs[:1]
		for _, r := range runs[1:] {
			if last := &merged[len(merged)-1]; r[0] <= last[1] {
				last[1] = max(last[1], r[1])
				continue
			}
			merged = append(merged, r)
		}
		m.explicit[part] = merged
	}
}

// isExplicit reports whether a TiffData maps the page itself.
func (m *mapper) isExplicit(p partPage) bool {
	runs := m.explicit[p.part]
	i := sort.Search(len(runs), func(i int) bool { return runs[i][1] > p.ifd })
	return i < len(runs) && runs[i][0] <= p.ifd
}

// oneBasedIndexes guesses, per dimension Z, C and T, whether the TiffData
// elements count from 1, as Bio-Formats does: they do when the first
// element that tells (before one starting at 0, 0, 0) starts at the size
// of the dimension or past it.
func oneBasedIndexes(tds []omeTiffData, size [3]uint32) [3]bool {
	var known [3]bool
	var out [3]bool
	for _, td := range tds {
		first := [3]uint32{value(td.FirstZ), value(td.FirstC), value(td.FirstT)}
		for d := range first {
			switch {
			case first[d] >= size[d] && !known[d]:
				out[d], known[d] = true, true
			case first[d] == 0:
				out[d], known[d] = false, true
			}
		}
		if first == [3]uint32{} {
			break
		}
	}
	return out
}

// value returns *v, or 0 for nil.
func value(v *uint32) uint32 {
	if v == nil {
		return 0
	}
	return *v
}

// positive returns v when it is a usable size, else 0: a positive
// xsd:float (not 0 when rounded to one), below 1e12.
func positive(v float64) float64 {
	if v > 0 && float32(v) > 0 && v < 1e12 {
		return v
	}
	return 0
}

// positiveDecimal reads a positive number of a scanner's metadata, as
// positive keeps it, written with a decimal point or, by a scanner set to
// a European locale, a decimal comma ("0,2500"), as OpenSlide and
// Bio-Formats read both.
func positiveDecimal(v string) (float64, bool) {
	f, ok := decimal(v)
	return positive(f), ok && positive(f) > 0
}

// objective returns an instrument of one objective of the nominal
// magnification a slide's metadata gives.
func objective(mag float64) *pyramid.Instrument {
	return &pyramid.Instrument{Objectives: []pyramid.Objective{{NominalMagnification: mag}}}
}

// mulInts multiplies non-negative ints, reporting overflow.
func mulInts(v ...int) (int, bool) {
	p := 1
	for _, x := range v {
		hi, lo := bits.Mul64(uint64(p), uint64(x))
		if hi != 0 || lo > 1<<62 {
			return 0, false
		}
		p = int(lo)
	}
	return p, true
}

// omeTimeUnits are the symbols of OME's UnitsTime (2016-06); "" is the
// default, seconds.
var omeTimeUnits = map[string]bool{
	"": true, "Ys": true, "Zs": true, "Es": true, "Ps": true, "Ts": true, "Gs": true, "Ms": true, "ks": true, "hs": true,
	"das": true, "s": true, "ds": true, "cs": true, "ms": true, "µs": true, "ns": true, "ps": true, "fs": true, "as": true,
	"zs": true, "ys": true, "min": true, "h": true, "d": true,
}

// omeTimeIncrement reads a Pixels TimeIncrement and its unit (seconds by
// default). A value the typed field cannot hold (not a positive finite
// float, or with a unit OME lacks) gives none: the Image element, when it
// goes with the image, still carries it as written.
func omeTimeIncrement(v, unit string) pyramid.Quantity {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if u, ok := map[string]string{"us": "µs", "\u03bcs": "µs", "sec": "s"}[unit]; ok {
		unit = u
	}
	if err != nil || !(f > 0 && float32(f) > 0 && f <= math.MaxFloat32) || !omeTimeUnits[unit] {
		return pyramid.Quantity{}
	}
	if unit == "" {
		unit = "s"
	}
	return pyramid.Quantity{Value: f, Unit: unit}
}

// omeTime reads an OME Timestamp (xsd:dateTime), with or without a zone
// (pyramid.NoZone then), with or without fractions of a second.
func omeTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, pyramid.NoZone); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// plainText is a string of the file as a message shows it: as it is when
// it is one printable line, else quoted, so that it cannot pass for more
// lines or for terminal controls.
func plainText(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
