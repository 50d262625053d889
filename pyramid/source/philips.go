package source

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"image/jpeg"
	"io"
	"strings"

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
// reader decode what the slide's metadata cannot justify.
const maxEmbeddedPixels = 1 << 24

// philipsAssociated maps the label and macro of a Philips slide, whose
// XML is description, as OpenSlide reads them. A page of a plain image
// described "Label..." or "Macro..." is the image named "label" or
// "macro"; failing one, the base64 JPEG of PIM_DP_IMAGE_DATA in the first
// DPScannedImage of PIM_DP_SCANNED_IMAGES whose PIM_DP_IMAGE_TYPE is
// LABELIMAGE or MACROIMAGE is, read from a TIFF held in memory: one page,
// the JPEG its one strip. An XML that does not parse leaves them unread,
// in a note of the slide's; an image that cannot be read is left out
// (refused, unless SkipUnsupported).
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
	for {
		tok, err := d.Token()
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
		if 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '+' || r == '/' {
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
	frame, err := jpegFrame(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	// Decoded once here, so that an image the writer would fail on mid-way
	// is left out now, named: it is small (maxEmbeddedPixels).
	if _, err := jpeg.Decode(bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("%w: a JPEG image/jpeg does not decode: %v", ErrUnsupported, err)
	}
	b := new(ifd.Builder)
	b.AddUint(tiff.TagImageWidth, uint64(cfg.Width))
	b.AddUint(tiff.TagImageLength, uint64(cfg.Height))
	b.AddShort(tiff.TagBitsPerSample, []uint16{8, 8, 8}[:frame.components]...)
	b.AddShort(tiff.TagCompression, tiff.CompressionJPEG)
	switch {
	case frame.components == 1:
		b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricBlackIsZero)
	case frame.rgb:
		b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricRGB)
	default:
		b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricYCbCr)
		b.AddShort(tiff.TagYCbCrSubSampling, uint16(frame.h), uint16(frame.v))
	}
	const at = 8 // the strip, after the header
	b.AddUint(tiff.TagStripOffsets, at)
	b.AddShort(tiff.TagSamplesPerPixel, uint16(frame.components))
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
	l, err := pageLayoutOf(f.Pages[0], false)
	if err != nil {
		return nil, err
	}
	return genericImage(f.Pages, l, nil), nil
}

// frame is what the TIFF fields of a JPEG strip need of its frame.
type frame struct {
	components int
	h, v       int  // the luma's sampling factors, over chroma of 1 x 1
	rgb        bool // 3 components coded as RGB (Adobe's transform 0)
}

// jpegFrame reads the frame header of a JPEG (baseline, extended or
// progressive), and Adobe's segment before it: of 1 or 3 components, the
// chroma sampled 1 x 1 and the luma 1 or 2 each way.
func jpegFrame(j []byte) (frame, error) {
	if len(j) < 4 || j[0] != 0xff || j[1] != 0xd8 {
		return frame{}, errors.New("no JPEG start of image")
	}
	adobe := -1
	for i := 2; i+4 <= len(j); {
		if j[i] != 0xff {
			return frame{}, fmt.Errorf("no marker at byte %d", i)
		}
		marker, n := j[i+1], int(binary.BigEndian.Uint16(j[i+2:]))
		if n < 2 || i+2+n > len(j) {
			return frame{}, fmt.Errorf("a segment of %d bytes at byte %d, in %d", n, i, len(j))
		}
		seg := j[i+4 : i+2+n]
		switch {
		case marker == 0xee && len(seg) >= 12 && string(seg[:5]) == "Adobe":
			adobe = int(seg[11])
		case marker == 0xc0 || marker == 0xc1 || marker == 0xc2:
			if len(seg) < 6 {
				return frame{}, errors.New("a frame header cut short")
			}
			f := frame{components: int(seg[5]), h: 1, v: 1}
			if (f.components != 1 && f.components != 3) || len(seg) < 6+3*f.components {
				return frame{}, fmt.Errorf("a frame of %d components", f.components)
			}
			if f.components == 1 {
				return f, nil
			}
			f.h, f.v = int(seg[7]>>4), int(seg[7]&15)
			for c := 1; c < 3; c++ {
				if seg[7+3*c] != 0x11 {
					return frame{}, fmt.Errorf("chroma sampled %#x", seg[7+3*c])
				}
			}
			// TIFF's YCbCrSubSampling: 1, 2 or 4 across, and down no more.
			if f.h != 1 && f.h != 2 && f.h != 4 || f.v != 1 && f.v != 2 && f.v != 4 || f.v > f.h {
				return frame{}, fmt.Errorf("luma sampled %d x %d", f.h, f.v)
			}
			f.rgb = adobe == 0
			if f.rgb && (f.h != 1 || f.v != 1) {
				return frame{}, errors.New("RGB subsampled")
			}
			return f, nil
		}
		i += 2 + n
	}
	return frame{}, errors.New("no frame header")
}
