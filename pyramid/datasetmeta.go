package pyramid

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// datasetMeta is what the dataset check reads of an OME-XML document: the
// root's UUID, its BinaryOnly element if it has one, and where each
// image's planes are.
type datasetMeta struct {
	uuid       string
	binaryOnly *binaryOnly
	images     []metaImage
}

// binaryOnly is a BinaryOnly element: the metadata is in another file.
type binaryOnly struct {
	file, uuid string
}

// metaImage is an Image: its Pixels' layout and its TiffData.
type metaImage struct {
	name     string
	order    DimensionOrder
	sizeX    int
	sizeY    int
	sizes    zct // Z, C (in planes: the OME SizeC over the samples per pixel) and T
	samples  int
	typ      PixelType
	tiffData []metaTiffData
}

// metaTiffData is a TiffData element: planes from first on (Z, C, T) at
// IFDs from ifd on of the file its UUID names.
type metaTiffData struct {
	ifd, count       int
	hasIFD, hasCount bool
	first            zct
	uuid, fileName   string
	hasUUID          bool
}

// planes is the number of planes of the image.
func (m metaImage) planes() int { return m.sizes[0] * m.sizes[1] * m.sizes[2] }

// spec is the image's layout as an ImageSpec, for its plane indices.
func (m metaImage) spec() ImageSpec {
	return ImageSpec{SizeX: m.sizeX, SizeY: m.sizeY, SizeZ: m.sizes[0], SizeC: m.sizes[1], SizeT: m.sizes[2], DimensionOrder: m.order}
}

// errMetaSyntax is OME-XML the dataset check cannot read.
var errMetaSyntax = errors.New("OME-XML")

// parseDatasetMeta reads what the dataset check needs of an OME-XML
// document of at most MaxOMEXMLSize bytes. Elements are matched by their
// local names, in any namespace; what the check does not need is skipped.
// Sizes and indices must be integers the schema allows, and an image of
// more planes than an int holds is refused.
func parseDatasetMeta(data []byte) (*datasetMeta, error) {
	if len(data) > MaxOMEXMLSize {
		return nil, fmt.Errorf("%w of %d bytes, more than %d", errMetaSyntax, len(data), MaxOMEXMLSize)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.CharsetReader = asUTF8
	m := &datasetMeta{}
	var path []string // local names of the open elements
	var uuid *strings.Builder
	roots := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w does not parse: %v", errMetaSyntax, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(path) == 0 {
				if roots++; roots > 1 {
					return nil, fmt.Errorf("%w: a second root element", errMetaSyntax)
				}
			}
			path = append(path, t.Name.Local)
			if err := m.start(path, t.Attr); err != nil {
				return nil, err
			}
			if uuid = nil; m.inUUID(path) {
				uuid = &strings.Builder{}
			}
		case xml.CharData:
			if uuid != nil {
				uuid.Write(t)
			}
		case xml.EndElement:
			if uuid != nil {
				td := m.lastTiffData()
				td.uuid = strings.TrimSpace(uuid.String())
				uuid = nil
			}
			path = path[:len(path)-1]
		}
	}
	if roots == 0 {
		return nil, fmt.Errorf("%w: no OME element", errMetaSyntax)
	}
	for i, im := range m.images {
		if err := im.finish(); err != nil {
			return nil, fmt.Errorf("%w: Image %d: %v", errMetaSyntax, i, err)
		}
		m.images[i] = im
	}
	return m, nil
}

// inUUID reports whether path is a TiffData's UUID.
func (m *datasetMeta) inUUID(path []string) bool {
	return len(path) == 5 && path[3] == "TiffData" && path[4] == "UUID" && m.lastTiffData() != nil
}

// lastTiffData is the TiffData being read, or nil.
func (m *datasetMeta) lastTiffData() *metaTiffData {
	if len(m.images) == 0 {
		return nil
	}
	im := &m.images[len(m.images)-1]
	if len(im.tiffData) == 0 {
		return nil
	}
	return &im.tiffData[len(im.tiffData)-1]
}

// start reads the element that path ends with.
func (m *datasetMeta) start(path []string, attrs []xml.Attr) error {
	attr := func(name string) (string, bool) {
		for _, a := range attrs {
			if a.Name.Space == "" && a.Name.Local == name {
				return a.Value, true
			}
		}
		return "", false
	}
	name := strings.Join(path, "/")
	switch {
	case len(path) == 1 && path[0] != "OME":
		return fmt.Errorf("%w: the root is %s, not OME", errMetaSyntax, path[0])
	case name == "OME":
		m.uuid, _ = attr("UUID")
	case name == "OME/BinaryOnly":
		file, _ := attr("MetadataFile")
		uuid, _ := attr("UUID")
		m.binaryOnly = &binaryOnly{file: file, uuid: uuid}
	case name == "OME/Image":
		im := metaImage{samples: 1}
		im.name, _ = attr("Name")
		m.images = append(m.images, im)
	case name == "OME/Image/Pixels":
		return m.pixels(&m.images[len(m.images)-1], attr)
	case name == "OME/Image/Pixels/Channel":
		im := &m.images[len(m.images)-1]
		if v, ok := attr("SamplesPerPixel"); ok && im.samples == 1 {
			n, err := metaInt("Channel@SamplesPerPixel", v, 1)
			if err != nil {
				return err
			}
			im.samples = n
		}
	case name == "OME/Image/Pixels/TiffData":
		return m.tiffData(&m.images[len(m.images)-1], attr)
	case name == "OME/Image/Pixels/TiffData/UUID":
		if td := m.lastTiffData(); td != nil {
			td.hasUUID = true
			td.fileName, _ = attr("FileName")
		}
	}
	return nil
}

// pixels reads a Pixels element.
func (m *datasetMeta) pixels(im *metaImage, attr func(string) (string, bool)) error {
	order, _ := attr("DimensionOrder")
	if _, ok := planeStrides(DimensionOrder(order)); !ok || order == "" {
		return fmt.Errorf("%w: Pixels@DimensionOrder %q", errMetaSyntax, order)
	}
	im.order = DimensionOrder(order)
	typ, _ := attr("Type")
	if err := im.typ.UnmarshalText([]byte(typ)); err != nil {
		return fmt.Errorf("%w: Pixels@Type %q", errMetaSyntax, typ)
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"SizeX", &im.sizeX}, {"SizeY", &im.sizeY}, {"SizeZ", &im.sizes[0]}, {"SizeC", &im.sizes[1]}, {"SizeT", &im.sizes[2]}} {
		v, _ := attr(f.name)
		n, err := metaInt("Pixels@"+f.name, v, 1)
		if err != nil {
			return err
		}
		*f.dst = n
	}
	return nil
}

// tiffData reads a TiffData element.
func (m *datasetMeta) tiffData(im *metaImage, attr func(string) (string, bool)) error {
	var td metaTiffData
	for _, f := range []struct {
		name string
		dst  *int
		has  *bool
	}{{"IFD", &td.ifd, &td.hasIFD}, {"PlaneCount", &td.count, &td.hasCount}, {"FirstZ", &td.first[0], nil},
		{"FirstC", &td.first[1], nil}, {"FirstT", &td.first[2], nil}} {
		v, ok := attr(f.name)
		if !ok {
			continue
		}
		// Every one is a NonNegativeInt: a PlaneCount of 0, which the
		// schema allows and puts no plane, is a problem of its image
		// (checkPlanes), not of the document.
		n, err := metaInt("TiffData@"+f.name, v, 0)
		if err != nil {
			return err
		}
		*f.dst = n
		if f.has != nil {
			*f.has = true
		}
	}
	im.tiffData = append(im.tiffData, td)
	return nil
}

// metaInt reads an integer attribute of at least least; the schema's
// non-negative and positive integers fit in 31 bits here.
func metaInt(name, v string, least int) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || int(n) < least {
		return 0, fmt.Errorf("%w: %s %q is not an integer of at least %d", errMetaSyntax, name, v, least)
	}
	return int(n), nil
}

// finish checks the image's sizes: samples divide SizeC, and the planes
// fit in an int.
func (im *metaImage) finish() error {
	if im.order == "" {
		return errors.New("no Pixels")
	}
	if im.sizes[1]%im.samples != 0 {
		return fmt.Errorf("SizeC %d is not a multiple of %d samples per pixel", im.sizes[1], im.samples)
	}
	im.sizes[1] /= im.samples
	if _, ok := mul(im.sizes[0], im.sizes[1], im.sizes[2]); !ok {
		return fmt.Errorf("%d x %d x %d planes", im.sizes[0], im.sizes[1], im.sizes[2])
	}
	return nil
}
