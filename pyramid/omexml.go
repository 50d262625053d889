package pyramid

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"image/color"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// OME-XML names (OME Data Model and File Formats, schema 2016-06).
const (
	omeNamespace      = "http://www.openmicroscopy.org/Schemas/OME/2016-06"
	omeSchemaLocation = omeNamespace + " " + omeNamespace + "/ome.xsd"
	mapAnnotationNS   = "openmicroscopy.org/omero/client/mapAnnotation"
	software          = "ometiff"
)

// lengthUnits are the OME UnitsLength symbols with their size in
// centimetres, the TIFF resolution unit; 0 marks units with no fixed size.
var lengthUnits = map[string]float64{
	"Ym": 1e26, "Zm": 1e23, "Em": 1e20, "Pm": 1e17, "Tm": 1e14, "Gm": 1e11, "Mm": 1e8,
	"km": 1e5, "hm": 1e4, "dam": 1e3, "m": 100, "dm": 10, "cm": 1, "mm": 0.1,
	"µm": 1e-4, "nm": 1e-7, "pm": 1e-10, "fm": 1e-13, "am": 1e-16, "zm": 1e-19, "ym": 1e-22,
	"Å": 1e-8, "thou": 2.54e-3, "li": 2.54 / 12, "in": 2.54, "ft": 30.48, "yd": 91.44,
	"mi": 160934.4, "ua": 1.495978707e13, "ly": 9.4607304725808e17, "pc": 3.0856775814913673e18,
	"pt": 2.54 / 72, "pixel": 0, "reference frame": 0,
}

// checkXMLText rejects text that XML 1.0 cannot carry.
func checkXMLText(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: invalid UTF-8 in %q", ErrMetadata, s)
	}
	for _, r := range s {
		if !(r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
			return fmt.Errorf("%w: character %U cannot be stored in XML", ErrMetadata, r)
		}
	}
	return nil
}

// escape returns s escaped for XML text and attribute values.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		case '\t':
			b.WriteString("&#x9;")
		case '\n':
			b.WriteString("&#xA;")
		case '\r':
			b.WriteString("&#xD;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// omeColor is an OME Color: RGBA packed in a signed 32-bit integer.
func omeColor(c color.Color) int32 {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return int32(uint32(n.R)<<24 | uint32(n.G)<<16 | uint32(n.B)<<8 | uint32(n.A))
}

// normalizeUUID accepts "urn:uuid:..." or a bare UUID and returns the URN.
func normalizeUUID(s string) (string, error) {
	bare := strings.TrimPrefix(strings.ToLower(s), "urn:uuid:")
	if len(bare) != 36 || bare[8] != '-' || bare[13] != '-' || bare[18] != '-' || bare[23] != '-' {
		return "", fmt.Errorf("%w: UUID %q", ErrOption, s)
	}
	for i, r := range bare {
		if i != 8 && i != 13 && i != 18 && i != 23 && !strings.ContainsRune("0123456789abcdef", r) {
			return "", fmt.Errorf("%w: UUID %q", ErrOption, s)
		}
	}
	return "urn:uuid:" + bare, nil
}

// uuidPlaceholder stands for the UUID in OME-XML written before the UUID
// is known; it has the UUID's length.
const uuidPlaceholder = "urn:uuid:00000000-0000-0000-0000-000000000000"

// contentUUID derives a name-based UUID (RFC 9562 version 8, SHA-256) from
// a digest of the file's content and metadata.
func contentUUID(digest []byte) string {
	sum := sha256.Sum256(digest)
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// omeImage is what the OME-XML needs of one image.
type omeImage struct {
	spec     ImageSpec
	firstIFD int // main-chain index of its first plane
}

// omeXML writes the OME-XML of the whole file: every Image with its
// Pixels, Channels, TiffData and Planes, and the annotations.
func omeXML(images []omeImage, uuid, fileName string) []byte {
	var b bytes.Buffer
	b.Grow(xmlSizeHint(images, fileName))
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+
		`<OME xmlns="%s" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="%s" UUID="%s" Creator="%s">`,
		omeNamespace, omeSchemaLocation, uuid, software)
	annotation := 0
	for i, im := range images {
		writeImage(&b, i, im, uuid, fileName, &annotation)
	}
	if annotation > 0 {
		b.WriteString("<StructuredAnnotations>")
		annotation = 0
		for _, im := range images {
			if len(im.spec.Annotations) == 0 {
				continue
			}
			fmt.Fprintf(&b, `<MapAnnotation ID="Annotation:%d" Namespace="%s"><Value>`, annotation, mapAnnotationNS)
			for _, kv := range im.spec.Annotations {
				fmt.Fprintf(&b, `<M K="%s">%s</M>`, escape(kv.Key), escape(kv.Value))
			}
			b.WriteString("</Value></MapAnnotation>")
			annotation++
		}
		b.WriteString("</StructuredAnnotations>")
	}
	b.WriteString("</OME>")
	return b.Bytes()
}

// xmlSizeHint estimates the OME-XML's length, so that it is built without
// regrowing: a file of thousands of planes has a Plane element for each.
func xmlSizeHint(images []omeImage, fileName string) int {
	n := 1024
	for _, im := range images {
		s := im.spec
		n += 1024 + len(fileName) + len(s.Channels)*128 + len(s.Annotations)*128 + s.Planes()*planeElementSize(s)
	}
	return n
}

// planeElementSize is the longest Plane element of an image:
// <Plane TheZ="z" TheC="c" TheT="t"/> with its largest indices.
func planeElementSize(s ImageSpec) int {
	digits := func(n int) int { return len(strconv.Itoa(max(n-1, 0))) }
	return len(`<Plane TheZ="" TheC="" TheT=""/>`) + digits(s.SizeZ) + digits(s.SizeC) + digits(s.SizeT)
}

// writeImage writes one Image element; annotation counts MapAnnotations.
func writeImage(b *bytes.Buffer, i int, im omeImage, uuid, fileName string, annotation *int) {
	s := im.spec
	fmt.Fprintf(b, `<Image ID="Image:%d" Name="%s">`, i, escape(s.Name))
	if !s.AcquisitionDate.IsZero() {
		fmt.Fprintf(b, "<AcquisitionDate>%s</AcquisitionDate>", s.AcquisitionDate.Format(time.RFC3339Nano))
	}
	if s.Description != "" {
		fmt.Fprintf(b, "<Description>%s</Description>", escape(s.Description))
	}
	fmt.Fprintf(b, `<Pixels ID="Pixels:%d" DimensionOrder="%s" Type="%s" SizeX="%d" SizeY="%d" SizeZ="%d" SizeC="%d" SizeT="%d" BigEndian="false" Interleaved="%t"`,
		i, s.DimensionOrder, s.PixelType, s.SizeX, s.SizeY, s.SizeZ, s.OMESizeC(), s.SizeT, s.SamplesPerPixel > 1)
	writePhysical(b, "X", s.PhysicalSizeX, s.PhysicalSizeXUnit)
	writePhysical(b, "Y", s.PhysicalSizeY, s.PhysicalSizeYUnit)
	writePhysical(b, "Z", s.PhysicalSizeZ, s.PhysicalSizeZUnit)
	b.WriteString(">")
	for c := range s.SizeC {
		fmt.Fprintf(b, `<Channel ID="Channel:%d:%d" SamplesPerPixel="%d"`, i, c, s.SamplesPerPixel)
		if c < len(s.Channels) {
			if s.Channels[c].Name != "" {
				fmt.Fprintf(b, ` Name="%s"`, escape(s.Channels[c].Name))
			}
			if s.Channels[c].Color != nil {
				fmt.Fprintf(b, ` Color="%d"`, omeColor(s.Channels[c].Color))
			}
		}
		b.WriteString("/>")
	}
	// The planes are consecutive IFDs in DimensionOrder, so one TiffData
	// maps them all: PlaneCount planes from IFD on, starting at Z, C, T = 0.
	// The UUID names the file holding the planes. Without a file name it is
	// left out (a TiffData without UUID refers to its own file): readers
	// such as Viv's require the FileName of every UUID.
	if fileName != "" {
		fmt.Fprintf(b, `<TiffData IFD="%d" PlaneCount="%d">`, im.firstIFD, s.Planes())
		fmt.Fprintf(b, `<UUID FileName="%s">%s</UUID>`, escape(fileName), uuid)
		b.WriteString("</TiffData>")
	} else {
		fmt.Fprintf(b, `<TiffData IFD="%d" PlaneCount="%d"/>`, im.firstIFD, s.Planes())
	}
	// Thousands of planes: append numbers directly rather than format.
	var line []byte
	for p := range s.Planes() {
		z, c, t := s.PlaneCoords(p)
		line = appendZCT(append(line[:0], "<Plane"...), ` TheZ="`, `" TheC="`, `" TheT="`, z, c, t)
		b.Write(append(line, `"/>`...))
	}
	b.WriteString("</Pixels>")
	if len(s.Annotations) > 0 {
		fmt.Fprintf(b, `<AnnotationRef ID="Annotation:%d"/>`, *annotation)
		*annotation++
	}
	b.WriteString("</Image>")
}

// appendZCT appends three labelled numbers.
func appendZCT(dst []byte, zLabel, cLabel, tLabel string, z, c, t int) []byte {
	dst = strconv.AppendInt(append(dst, zLabel...), int64(z), 10)
	dst = strconv.AppendInt(append(dst, cLabel...), int64(c), 10)
	return strconv.AppendInt(append(dst, tLabel...), int64(t), 10)
}

// writePhysical writes a PhysicalSize attribute and its unit, if known.
func writePhysical(b *bytes.Buffer, axis string, v float64, unit string) {
	if v > 0 {
		fmt.Fprintf(b, ` PhysicalSize%s="%s" PhysicalSize%sUnit="%s"`, axis, strconv.FormatFloat(v, 'g', -1, 64), axis, escape(unit))
	}
}
