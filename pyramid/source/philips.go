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
// a scanner's are a few megapixels, and a larger one would have the
// reader decode what the slide's metadata cannot justify.
const maxEmbeddedPixels = 1 << 25

// philipsAssociated maps the label and macro a Philips slide stores in
// its XML (description): the base64 JPEG of PIM_DP_IMAGE_DATA in the
// first DPScannedImage whose PIM_DP_IMAGE_TYPE is LABELIMAGE or
// MACROIMAGE, as OpenSlide reads them, when no page of the file is an
// image so named. Each becomes an image of its own, "label" or "macro",
// read from a TIFF held in memory: one page, the JPEG as its one strip.
func (m *mapper) philipsAssociated(description string) error {
	if !strings.Contains(description, "PIM_DP_IMAGE_DATA") {
		return nil // no image in the XML: nothing to parse it for
	}
	found, err := philipsImages(description)
	if err != nil {
		return m.skipMetadata(fmt.Errorf("%w: the Philips XML: %v, so its label and macro are not read", ErrMetadata, err))
	}
	for _, kind := range []struct{ typ, name string }{{"LABELIMAGE", "label"}, {"MACROIMAGE", "macro"}} {
		data, ok := found[kind.typ]
		if !ok || m.named(kind.name) {
			continue
		}
		im, err := embeddedJPEG(data)
		if err != nil {
			err = fmt.Errorf("the %s of the Philips XML (%s's PIM_DP_IMAGE_DATA): %w", kind.name, kind.typ, err)
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

// philipsImages returns the text of PIM_DP_IMAGE_DATA of the first
// DataObject of each PIM_DP_IMAGE_TYPE in a Philips XML.
func philipsImages(description string) (map[string]string, error) {
	type object struct {
		typ, data string
	}
	var objects []*object // the DataObject elements open, innermost last
	attr := ""            // the Name of the Attribute element open, or ""
	var text strings.Builder
	found := map[string]string{}
	d := xml.NewDecoder(strings.NewReader(description))
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
			switch t.Name.Local {
			case "DataObject":
				objects = append(objects, &object{})
				attr = ""
			case "Attribute":
				attr = ""
				for _, a := range t.Attr {
					if a.Name.Local == "Name" && (a.Value == "PIM_DP_IMAGE_TYPE" || a.Value == "PIM_DP_IMAGE_DATA") {
						attr = a.Value
					}
				}
				text.Reset()
			default:
				attr = "" // an Array of DataObjects, or other structure
			}
		case xml.CharData:
			if attr != "" {
				text.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "Attribute":
				if attr != "" && len(objects) > 0 {
					o := objects[len(objects)-1]
					if attr == "PIM_DP_IMAGE_TYPE" {
						o.typ = strings.TrimSpace(text.String())
					} else {
						o.data = text.String()
					}
				}
				attr = ""
			case "DataObject":
				if len(objects) == 0 {
					return nil, errors.New("a DataObject closed that was not open")
				}
				o := objects[len(objects)-1]
				objects = objects[:len(objects)-1]
				if _, seen := found[o.typ]; o.typ != "" && o.data != "" && !seen {
					found[o.typ] = o.data
				}
			}
		}
	}
}

// embeddedJPEG returns an image of the base64 JPEG data, read from a TIFF
// made in memory whose one page holds the JPEG as its one strip.
func embeddedJPEG(data string) (*Image, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(data), ""))
	if err != nil {
		return nil, fmt.Errorf("%w: not base64: %v", ErrMetadata, err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: not a JPEG: %v", ErrUnsupported, err)
	}
	if cfg.Width*cfg.Height > maxEmbeddedPixels {
		return nil, fmt.Errorf("%w: a JPEG of %d x %d pixels, more than %d", ErrSize, cfg.Width, cfg.Height, maxEmbeddedPixels)
	}
	frame, err := jpegFrame(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
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
			if f.h < 1 || f.h > 2 || f.v < 1 || f.v > 2 {
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
