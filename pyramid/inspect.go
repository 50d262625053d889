package pyramid

import (
	"bufio"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/ometiff-go/ometiff/tiff"
)

// InspectOptions tunes Inspect. The zero value prints the summary only.
type InspectOptions struct {
	// Fields adds every field of every directory (tiff.Dump's listing).
	Fields bool
}

// Inspect writes a stable, human-readable description of any TIFF or
// OME-TIFF of size bytes read through r: the header, a summary of the
// OME-XML (images, dimensions, pixel types, channels, annotations), and
// every directory of the main chain with its SubIFDs (size, tiling,
// compression, predictor, pixel type). The text depends only on the file's
// bytes, so it suits golden-file tests.
func Inspect(w io.Writer, r io.ReaderAt, size int64, opts InspectOptions) error {
	f, err := tiff.Read(r, size)
	if err != nil {
		return fmt.Errorf("pyramid: %w", err)
	}
	bw := bufio.NewWriter(w)
	order := "little-endian"
	if f.Header.Order == binary.BigEndian {
		order = "big-endian"
	}
	fmt.Fprintf(bw, "%s, %s, %d bytes, %s in the main chain\n", f.Kind(), order, size, plural(len(f.Pages), "IFD"))
	if len(f.Pages) > 0 {
		if text, ok := f.Pages[0].Text(tiff.TagImageDescription); ok {
			summarizeOME(bw, text)
		}
	}
	for i, p := range f.Pages {
		fmt.Fprintf(bw, "IFD %d: %s\n", i, describePage(p))
		for j, s := range p.SubIFDs {
			fmt.Fprintf(bw, "    SubIFD %d.%d: %s\n", i, j+1, describePage(s))
		}
	}
	if opts.Fields {
		bw.WriteString("\n")
		if err := tiff.Dump(bw, f, tiff.DumpOptions{}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// describePage summarizes one directory in a line.
func describePage(d *tiff.Page) string {
	get := func(tag uint16, def uint64) uint64 {
		if v, ok := d.Uint(tag); ok {
			return v
		}
		return def
	}
	width, height := get(tiff.TagImageWidth, 0), get(tiff.TagImageLength, 0)
	samples := get(tiff.TagSamplesPerPixel, 1)
	bits := get(tiff.TagBitsPerSample, 1)
	format := valueName(tiff.TagSampleFormat, get(tiff.TagSampleFormat, 1))
	s := fmt.Sprintf("%d x %d, %d x %s%d", width, height, samples, format, bits)
	if tw, ok := d.Uint(tiff.TagTileWidth); ok {
		th := get(tiff.TagTileLength, 0)
		s += fmt.Sprintf(", tiles %d x %d (%d x %d)", tw, th, ceilDivU(width, tw), ceilDivU(height, th))
	} else {
		s += fmt.Sprintf(", strips of %d rows", get(tiff.TagRowsPerStrip, height))
	}
	s += ", " + valueName(tiff.TagCompression, get(tiff.TagCompression, 1))
	if p := get(tiff.TagPredictor, 1); p != 1 {
		s += ", predictor " + valueName(tiff.TagPredictor, p)
	}
	if blocks, err := d.Blocks(); err == nil {
		var n uint64
		for _, b := range blocks {
			n += b.Size
		}
		s += fmt.Sprintf(", %d bytes", n)
	}
	if sub := get(tiff.TagNewSubfileType, 0); sub&uint64(tiff.SubfileReducedImage) != 0 {
		s += ", reduced"
	}
	return s
}

func ceilDivU(a, b uint64) uint64 {
	if b == 0 {
		return 0
	}
	return (a + b - 1) / b
}

// valueName renders a field value by its name, if it has one.
func valueName(tag uint16, v uint64) string {
	if n, ok := tiff.ValueName(tag, v); ok {
		return n
	}
	return fmt.Sprintf("%d", v)
}

// length renders an OME physical size: its unit is µm when not given, and
// a size not given (0) is unknown.
func length(v float64, unit string) string {
	if v <= 0 {
		return "unknown"
	}
	if unit == "" {
		unit = "µm"
	}
	return fmt.Sprintf("%g %s", v, plain(unit))
}

// plain is a string of the file as printed: as it is when it is one
// printable line, else quoted, so that what a file holds cannot pass for
// lines of the report or for terminal controls.
func plain(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// said shows value, of a field the document may leave out or empty: the
// value as plain shows it ("XYZCT"), or "no DimensionOrder".
func said(field, value string) string {
	if value == "" {
		return "no " + field
	}
	if field == "UUID" {
		return "UUID " + plain(value)
	}
	return plain(value)
}

// numbered names a run of numbered things: "IFD 9", "IFDs 9 to 12".
func numbered(noun string, first, last int) string {
	if first == last {
		return fmt.Sprintf("%s %d", noun, first)
	}
	return fmt.Sprintf("%ss %d to %d", noun, first, last)
}

// verb is one when a run from first to last is of one thing, else many:
// "IFD 3 holds", "IFDs 3 to 5 hold".
func verb(first, last int, one, many string) string {
	if first == last {
		return one
	}
	return many
}

// plural returns "1 plane", "2 planes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// omeDoc is the part of the OME-XML Inspect reports.
type omeDoc struct {
	UUID       string `xml:"UUID,attr"`
	Creator    string `xml:"Creator,attr"`
	BinaryOnly *struct {
		MetadataFile string `xml:"MetadataFile,attr"`
		UUID         string `xml:"UUID,attr"`
	} `xml:"BinaryOnly"`
	Images []struct {
		ID              string `xml:"ID,attr"`
		Name            string `xml:"Name,attr"`
		AcquisitionDate string `xml:"AcquisitionDate"`
		Pixels          struct {
			DimensionOrder string  `xml:"DimensionOrder,attr"`
			Type           string  `xml:"Type,attr"`
			SizeX          int     `xml:"SizeX,attr"`
			SizeY          int     `xml:"SizeY,attr"`
			SizeZ          int     `xml:"SizeZ,attr"`
			SizeC          int     `xml:"SizeC,attr"`
			SizeT          int     `xml:"SizeT,attr"`
			PhysicalSizeX  float64 `xml:"PhysicalSizeX,attr"`
			PhysicalSizeXU string  `xml:"PhysicalSizeXUnit,attr"`
			PhysicalSizeY  float64 `xml:"PhysicalSizeY,attr"`
			PhysicalSizeYU string  `xml:"PhysicalSizeYUnit,attr"`
			PhysicalSizeZ  float64 `xml:"PhysicalSizeZ,attr"`
			PhysicalSizeZU string  `xml:"PhysicalSizeZUnit,attr"`
			Channels       []struct {
				Name            string `xml:"Name,attr"`
				SamplesPerPixel int    `xml:"SamplesPerPixel,attr"`
				Color           *int32 `xml:"Color,attr"`
			} `xml:"Channel"`
			TiffData []struct {
				IFD        int  `xml:"IFD,attr"`
				PlaneCount *int `xml:"PlaneCount,attr"`
				UUID       struct {
					FileName string `xml:"FileName,attr"`
				} `xml:"UUID"`
			} `xml:"TiffData"`
			Planes []struct{} `xml:"Plane"`
		} `xml:"Pixels"`
		AnnotationRefs []struct {
			ID string `xml:"ID,attr"`
		} `xml:"AnnotationRef"`
	} `xml:"Image"`
	MapAnnotations []struct {
		ID     string `xml:"ID,attr"`
		Values []struct {
			Key   string `xml:"K,attr"`
			Value string `xml:",chardata"`
		} `xml:"Value>M"`
	} `xml:"StructuredAnnotations>MapAnnotation"`
}

// summarizeOME writes the OME-XML summary, or says the description is not
// OME-XML.
func summarizeOME(w *bufio.Writer, text string) {
	trimmed := strings.TrimSpace(text)
	if !strings.HasPrefix(trimmed, "<") || !strings.HasSuffix(trimmed, "OME>") {
		fmt.Fprintf(w, "ImageDescription: %d bytes, not OME-XML\n", len(text))
		return
	}
	if err := CheckOMEXML(trimmed); err != nil {
		fmt.Fprintf(w, "OME-XML: %d bytes, not read: %v\n", len(text), err)
		return
	}
	var doc omeDoc
	if err := xml.Unmarshal([]byte(trimmed), &doc); err != nil {
		fmt.Fprintf(w, "OME-XML: %d bytes, does not parse: %v\n", len(text), err)
		return
	}
	if bo := doc.BinaryOnly; bo != nil {
		fmt.Fprintf(w, "OME-XML: %d bytes, %s, creator %q, BinaryOnly: the metadata is in %s (%s)\n", len(text), said("UUID", doc.UUID), doc.Creator, plain(bo.MetadataFile), said("UUID", bo.UUID))
		return
	}
	files := map[string]bool{}
	for _, im := range doc.Images {
		for _, td := range im.Pixels.TiffData {
			files[td.UUID.FileName] = true
		}
	}
	fmt.Fprintf(w, "OME-XML: %d bytes, %s, %s, creator %q", len(text), plural(len(doc.Images), "image"), said("UUID", doc.UUID), doc.Creator)
	if len(files) > 1 {
		fmt.Fprintf(w, ", planes in %d files", len(files))
	}
	w.WriteString("\n")
	annotations := map[string]int{}
	for i, a := range doc.MapAnnotations {
		annotations[a.ID] = i
	}
	for _, im := range doc.Images {
		p := im.Pixels
		planes := 0
		for _, td := range p.TiffData {
			if td.PlaneCount != nil {
				planes += *td.PlaneCount
			} else {
				planes++ // PlaneCount is 1 by default when IFD is given
			}
		}
		fmt.Fprintf(w, "  %s %q: %d x %d, Z %d, C %d, T %d, %s, %s, %s in TiffData",
			plain(im.ID), im.Name, p.SizeX, p.SizeY, p.SizeZ, p.SizeC, p.SizeT, said("type", p.Type), said("DimensionOrder", p.DimensionOrder), plural(planes, "plane"))
		if p.PhysicalSizeX > 0 {
			fmt.Fprintf(w, ", pixel %s x %s", length(p.PhysicalSizeX, p.PhysicalSizeXU), length(p.PhysicalSizeY, p.PhysicalSizeYU))
		}
		if p.PhysicalSizeZ > 0 {
			fmt.Fprintf(w, ", Z step %s", length(p.PhysicalSizeZ, p.PhysicalSizeZU))
		}
		if im.AcquisitionDate != "" {
			fmt.Fprintf(w, ", acquired %s", plain(im.AcquisitionDate))
		}
		w.WriteString("\n")
		for i, c := range p.Channels {
			fmt.Fprintf(w, "    channel %d", i)
			if c.Name != "" {
				fmt.Fprintf(w, " %q", c.Name)
			}
			if c.SamplesPerPixel > 0 {
				fmt.Fprintf(w, ", %s", plural(c.SamplesPerPixel, "sample"))
			} else {
				w.WriteString(", SamplesPerPixel not said")
			}
			if c.Color != nil {
				fmt.Fprintf(w, ", colour #%08X", uint32(*c.Color))
			}
			w.WriteString("\n")
		}
		for _, ref := range im.AnnotationRefs {
			if i, ok := annotations[ref.ID]; ok {
				for _, kv := range doc.MapAnnotations[i].Values {
					fmt.Fprintf(w, "    %q = %q\n", kv.Key, kv.Value)
				}
			}
		}
	}
}
