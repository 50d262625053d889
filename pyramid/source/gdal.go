package source

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// gdalMetadata is GDAL's metadata document (tag 42112): the dataset's
// items, and each band's, which name their band by its sample (from 0)
// and their role ("description", "scale", "offset", "unittype"...).
type gdalMetadata struct {
	XMLName xml.Name `xml:"GDALMetadata"`
	Items   []struct {
		Name   string `xml:"name,attr"`
		Sample *int   `xml:"sample,attr"`
		Role   string `xml:"role,attr"`
		Domain string `xml:"domain,attr"`
		Value  string `xml:",chardata"`
	} `xml:"Item"`
}

// gdal maps the GDAL metadata of an image's first page, as tifffile reads
// it (its gdal_metadata and gdal_nodata). The bands' descriptions name
// the channels when each sample is a channel of its own and no channel is
// named yet. Every other item, and the value of pixels holding no data,
// becomes a key of the image's map annotation, since OME has no field for
// them: the item's name, after its domain when it has one, and with its
// band (counted from 1, as GDAL counts them) when it is a band's.
//
// GDAL escapes the items' values for XML twice (its own reading takes
// the escapes off again after parsing the document), so they are
// unescaped once more; a value that is no escaped text is kept as it is.
//
// A document that is not GDAL's XML is refused (ErrMetadata), or left out
// with SkipUnsupported.
func (m *mapper) gdal(im *Image, l pageLayout) error {
	p := im.Planes[0].Page
	s := &im.Spec
	if text, ok := p.Text(tiff.TagGDALMetadata); ok {
		var doc gdalMetadata
		if err := xml.Unmarshal([]byte(text), &doc); err != nil {
			err = fmt.Errorf("%w: GDAL metadata (tag 42112) of the page at %d: %v", ErrMetadata, p.Offset, err)
			if err := m.skipImageMetadata(im, fmt.Errorf("%w (left out)", err)); err != nil {
				return err
			}
		}
		named := !l.rgb && len(s.Channels) == 0 && s.SizeC == l.planesPerPage()
		for _, it := range doc.Items {
			value := pyramid.XMLText(strings.TrimSpace(unescapeXML(it.Value)))
			band := it.Sample != nil && *it.Sample >= 0
			if named && band && it.Role == "description" && *it.Sample < s.SizeC && it.Domain == "" {
				if len(s.Channels) == 0 {
					s.Channels = make([]pyramid.Channel, s.SizeC)
				}
				s.Channels[*it.Sample].Name = value
				continue
			}
			key := pyramid.XMLText(strings.TrimSpace(it.Name))
			if key == "" {
				key = it.Role
			}
			if it.Domain != "" {
				key = pyramid.XMLText(it.Domain) + ":" + key
			}
			if band {
				key = fmt.Sprintf("%s (band %d)", key, *it.Sample+1)
			}
			s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: key, Value: value})
		}
	}
	if nodata, ok := p.Text(tiff.TagGDALNoData); ok {
		s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: "GDAL_NODATA", Value: pyramid.XMLText(strings.TrimSpace(nodata))})
	}
	return nil
}

// unescapeXML returns s with its XML escapes (entities and character
// references) taken off, or s when it is not escaped text.
func unescapeXML(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var v string
	if err := xml.Unmarshal([]byte("<v>"+s+"</v>"), &v); err != nil {
		return s
	}
	return v
}
