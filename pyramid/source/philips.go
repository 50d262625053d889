package source

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"regexp"
	"strings"
	"unicode"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/tiff"
)

// isPhilips reports whether a description is a Philips slide's XML: a
// DataObject of ObjectType DPUfsImport.
func isPhilips(d string) bool {
	return strings.HasPrefix(d, "<?xml") && strings.Contains(d[:min(len(d), 512)], `ObjectType="DPUfsImport"`)
}

// maxEmbeddedPixels bounds the label or macro image a Philips XML holds:
// a scanner's are a megapixel or two, and a larger one would have the
// reader decode what the slide's metadata cannot justify. It is decoded
// when mapped, before -max-memory's planning: a progressive JPEG of this
// size takes about 60 MiB to decode.
const maxEmbeddedPixels = 1 << 22

// philipsAssociated maps the label and macro of a Philips slide, whose
// XML is description, as OpenSlide reads them. A page of a plain image
// described "Label..." or "Macro..." is the image named "label" or
// "macro"; failing one, the base64 JPEG of PIM_DP_IMAGE_DATA in the first
// DPScannedImage of PIM_DP_SCANNED_IMAGES whose PIM_DP_IMAGE_TYPE is
// LABELIMAGE or MACROIMAGE is, read from a TIFF held in memory: one page,
// the JPEG its one strip, and all such base64 leaves the slide's
// description, which keeps the rest of the XML. An XML that does not
// parse leaves them unread, in a note of the slide's, and its
// description whole; an image that cannot be read is left out (refused,
// unless SkipUnsupported).
func (m *mapper) philipsAssociated(description string) error {
	for _, im := range m.file.Images {
		if len(im.Planes) == 0 {
			continue
		}
		d := strings.TrimSpace(im.Planes[0].Page.Description())
		for _, name := range []string{"Label", "Macro"} {
			if im.Spec.Name == "" && strings.HasPrefix(d, name) && !m.named(strings.ToLower(name)) {
				im.Spec.Name = strings.ToLower(name)
			}
		}
	}
	if !strings.Contains(description, "PIM_DP_IMAGE_DATA") {
		return nil // no image in the XML: nothing to parse it for
	}
	found, err := philipsImages(description)
	if err != nil {
		slide := m.file.Images[0]
		slide.Notes = append(slide.Notes, fmt.Sprintf("its Philips XML does not parse (%v): a label or macro it holds is not read", err))
		return nil
	}
	// The XML read, its images are images of their own (or refused, or
	// left out by request): their base64 leaves the description.
	for _, im := range m.file.Images {
		if d, n := withoutImageData(im.Spec.Description); n > 0 {
			im.Notes = append(im.Notes, fmt.Sprintf("the base64 data of %d image(s) in its Philips XML (PIM_DP_IMAGE_DATA, %d bytes) is left out of its description",
				n, len(im.Spec.Description)-len(d)))
			im.Spec.Description = d
		}
	}
	for _, kind := range []struct{ typ, name string }{{"LABELIMAGE", "label"}, {"MACROIMAGE", "macro"}} {
		data, ok := found[kind.typ]
		if !ok || strings.TrimSpace(data) == "" || m.named(kind.name) {
			continue // none, or the first of its type holds no data: OpenSlide reads none either
		}
		im, err := embeddedJPEG(data)
		if err != nil {
			err = fmt.Errorf("the %s in the Philips XML (%s's PIM_DP_IMAGE_DATA): %w", kind.name, kind.typ, err)
			if err := m.skipImage(err); err != nil {
				return err
			}
			continue
		}
		im.Spec.Name = kind.name
		im.Notes = append(im.Notes, fmt.Sprintf("decoded from the base64 JPEG of %s in the Philips XML, as OpenSlide reads it", kind.typ))
		m.add(im)
	}
	return nil
}

// withoutImageData returns a Philips XML with the text of each
// PIM_DP_IMAGE_DATA Attribute element removed, and how many held any.
// That text is a label's or macro's JPEG in base64, often megabytes: read
// as an image of its own, or noted, it would only bloat the OME-XML every
// reader parses. Only base64 text right after such an element's start tag
// (its attributes read with their quotes, not self-closing) goes, so the
// document stays well formed and nothing else is cut.
func withoutImageData(d string) (string, int) {
	var b strings.Builder
	n := 0
	for {
		i := strings.Index(d, "<Attribute")
		if i < 0 {
			break
		}
		end := startTagEnd(d[i:])
		if end < 0 {
			break
		}
		tag := d[i : i+end+1]
		b.WriteString(d[:i+end+1])
		d = d[i+end+1:]
		text := d[:max(strings.IndexByte(d, '<'), 0)]
		if strings.HasSuffix(tag, "/>") || !imageDataName.MatchString(tag) || strings.TrimSpace(text) == "" ||
			strings.ContainsFunc(text, func(r rune) bool { return !isBase64(r) && !unicode.IsSpace(r) }) {
			continue
		}
		n++
		d = d[len(text):]
	}
	b.WriteString(d)
	return b.String(), n
}

// imageDataName matches the Name attribute of a PIM_DP_IMAGE_DATA
// Attribute element's start tag.
var imageDataName = regexp.MustCompile(`(?s)^<Attribute\s(?:.*\s)?Name\s*=\s*(?:"PIM_DP_IMAGE_DATA"|'PIM_DP_IMAGE_DATA')`)

// startTagEnd returns the index of the '>' that ends the start tag at the
// start of s, skipping quoted attribute values; -1 if it does not end.
func startTagEnd(s string) int {
	var quote byte
	for k := 1; k < len(s); k++ {
		switch c := s[k]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return k
		}
	}
	return -1
}

// isBase64 reports whether r is of base64's alphabet or its padding.
func isBase64(r rune) bool {
	return 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '+' || r == '/' || r == '='
}

// named reports whether an image mapped so far is named name.
func (m *mapper) named(name string) bool {
	for _, im := range m.file.Images {
		if im.Spec.Name == name {
			return true
		}
	}
	return false
}

// philipsImages returns, for each PIM_DP_IMAGE_TYPE, the PIM_DP_IMAGE_DATA
// text of the first DataObject of that type in the Array of the root's
// PIM_DP_SCANNED_IMAGES ("" when it has none), as OpenSlide's XPath
// selects it: the type's text exact, the first data attribute's text.
func philipsImages(description string) (map[string]string, error) {
	// The path from the root: DataObject, Attribute PIM_DP_SCANNED_IMAGES,
	// Array, DataObject (a scanned image), Attribute (of that image).
	const image, attribute = 4, 5
	var path []string // the names of the open elements, an Attribute's with its Name
	var typ, data string
	hasData := false
	var text strings.Builder
	found := map[string]string{}
	d := xml.NewDecoder(strings.NewReader(description))
	d.CharsetReader = latin1
	b := &boundedXML{d: d} // as a slide's other XML: a scanner's document is far inside
	for {
		tok, err := b.Token()
		if err == io.EOF {
			return found, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if name == "Attribute" {
				for _, a := range t.Attr {
					if a.Name.Local == "Name" {
						name += " " + a.Value
					}
				}
			}
			path = append(path, name)
			switch {
			case len(path) == image && path[0] == "DataObject" && path[1] == "Attribute PIM_DP_SCANNED_IMAGES" && path[2] == "Array" && name == "DataObject":
				typ, data, hasData = "", "", false
			case len(path) == attribute:
				text.Reset()
			}
		case xml.CharData:
			if len(path) == attribute {
				text.Write(t)
			}
		case xml.EndElement:
			if len(path) == 0 {
				return nil, errors.New("an element closed that was not open") // the decoder checks, but to be sure
			}
			inImage := len(path) >= image && path[0] == "DataObject" && path[1] == "Attribute PIM_DP_SCANNED_IMAGES" && path[2] == "Array" && path[3] == "DataObject"
			switch {
			case inImage && len(path) == attribute && path[4] == "Attribute PIM_DP_IMAGE_TYPE":
				typ = text.String()
			case inImage && len(path) == attribute && path[4] == "Attribute PIM_DP_IMAGE_DATA" && !hasData:
				data, hasData = text.String(), true
			case inImage && len(path) == image:
				if _, seen := found[typ]; typ != "" && !seen {
					found[typ] = data
				}
			}
			path = path[:len(path)-1]
		}
	}
}

// latin1 reads a document declared ISO-8859-1 (or US-ASCII) as UTF-8,
// for encoding/xml, which reads UTF-8 alone.
func latin1(charset string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii":
	default:
		return nil, fmt.Errorf("the encoding %q", charset)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	out := make([]rune, len(b))
	for i, c := range b {
		out[i] = rune(c)
	}
	return strings.NewReader(string(out)), nil
}

// embeddedJPEG returns an image of the base64 JPEG data, read from a TIFF
// made in memory whose one page holds the JPEG as its one strip.
func embeddedJPEG(data string) (*Image, error) {
	// As glib decodes base64 for OpenSlide: characters outside the
	// alphabet (line breaks, stray marks) skipped, the padding optional.
	b64 := strings.Map(func(r rune) rune {
		if isBase64(r) && r != '=' {
			return r
		}
		return -1
	}, data)
	raw, err := base64.RawStdEncoding.DecodeString(b64)
	if err != nil || len(raw) == 0 {
		return nil, fmt.Errorf("%w: no base64 data (%d characters of it): %v", ErrMetadata, len(b64), err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: a JPEG image/jpeg does not read: %v", ErrUnsupported, err)
	}
	if cfg.Width*cfg.Height > maxEmbeddedPixels {
		return nil, fmt.Errorf("%w: a JPEG of %d x %d pixels, more than %d", ErrSize, cfg.Width, cfg.Height, maxEmbeddedPixels)
	}
	// Within the bounds of the writer's decoder (its scans), which
	// image/jpeg lacks: what decodes here decodes there too.
	if err := compress.CheckJPEG(raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	// Decoded once here, so that an image the writer would fail on mid-way
	// is left out now, named: it is small (maxEmbeddedPixels). What it
	// decodes to says the strip's fields.
	m, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: a JPEG image/jpeg does not decode: %v", ErrUnsupported, err)
	}
	samples, photometric := uint16(3), tiff.PhotometricYCbCr
	var subsampling []uint16
	switch m := m.(type) {
	case *image.Gray:
		samples, photometric = 1, tiff.PhotometricBlackIsZero
	case *image.RGBA: // coded as RGB (Adobe's transform 0)
		photometric = tiff.PhotometricRGB
	case *image.YCbCr:
		// TIFF's YCbCrSubSampling: 1, 2 or 4 across, and down no more.
		ratios := map[image.YCbCrSubsampleRatio][]uint16{image.YCbCrSubsampleRatio444: {1, 1}, image.YCbCrSubsampleRatio422: {2, 1},
			image.YCbCrSubsampleRatio420: {2, 2}, image.YCbCrSubsampleRatio411: {4, 1}, image.YCbCrSubsampleRatio410: {4, 2}}
		if subsampling = ratios[m.SubsampleRatio]; subsampling == nil {
			return nil, fmt.Errorf("%w: a JPEG of chroma subsampled %v", ErrUnsupported, m.SubsampleRatio)
		}
	default:
		return nil, fmt.Errorf("%w: a JPEG decoded to %T (CMYK?)", ErrUnsupported, m)
	}
	b := new(ifd.Builder)
	b.AddUint(tiff.TagImageWidth, uint64(cfg.Width))
	b.AddUint(tiff.TagImageLength, uint64(cfg.Height))
	b.AddShort(tiff.TagBitsPerSample, []uint16{8, 8, 8}[:samples]...)
	b.AddShort(tiff.TagCompression, tiff.CompressionJPEG)
	b.AddShort(tiff.TagPhotometricInterpretation, photometric)
	if subsampling != nil {
		b.AddShort(tiff.TagYCbCrSubSampling, subsampling...)
	}
	const at = 8 // the strip, after the header
	b.AddUint(tiff.TagStripOffsets, at)
	b.AddShort(tiff.TagSamplesPerPixel, samples)
	b.AddUint(tiff.TagRowsPerStrip, uint64(cfg.Height))
	b.AddUint(tiff.TagStripByteCounts, uint64(len(raw)))
	dir := at + int64(len(raw)+len(raw)&1)
	file, err := tiff.Header{Order: binary.LittleEndian, FirstIFD: uint64(dir)}.Append(nil)
	if err != nil {
		return nil, err
	}
	file = append(append(file, raw...), make([]byte, len(raw)&1)...)
	if file, err = b.Encode(file, dir, 0, ifd.Format{}); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSize, err)
	}
	f, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		return nil, err
	}
	l, err := layoutOf(f.Pages[0])
	if err != nil {
		return nil, err
	}
	return genericImage(f.Pages, l, nil), nil
}
