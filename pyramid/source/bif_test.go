package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/omexmltest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// bifISCan is the XMP of a BIF file's first page, as a VENTANA DP 200
// writes it (a Metadata root; older iScan files have iScan as the root).
const bifISCan = `<?xml version="1.0" encoding="utf-8"?><Metadata><iScan BuildDate="2012" BuildVersion="3.3.1.1" Magnification="40" ` +
	`ScanRes="0.2325" SlideAnnotation="demo" UnitNumber="BI10N0294" ShowLabel="1" LabelBoundary="0" /></Metadata>`

// bifEncodeInfo is the XMP of level 0: the areas of interest and the
// joints between tiles; overlap is the joints' OverlapX.
func bifEncodeInfo(overlap int) string {
	return `<?xml version="1.0" encoding="utf-8"?><EncodeInfo Ver="2"><SlideInfo><AoiInfo/></SlideInfo><SlideStitchInfo>` +
		`<ImageInfo AOIScanned="1" AOIIndex="0" NumRows="3" NumCols="4" Width="16" Height="16" Pos-X="0" Pos-Y="0">` +
		`<TileJointInfo FlagJoined="1" Confidence="99" Direction="RIGHT" Tile1="1" Tile2="2" OverlapX="` + strconv.Itoa(overlap) + `" OverlapY="0"/>` +
		`<TileJointInfo FlagJoined="0" Confidence="0" Direction="UP" Tile1="1" Tile2="8" OverlapX="9" OverlapY="9"/>` +
		`</ImageInfo></SlideStitchInfo><AoiOrigin><AOI0 OriginX="0" OriginY="0"/></AoiOrigin></EncodeInfo>`
}

// xmp sets the XMLPacket field (BYTE, as Ventana's scanners write it).
func xmp(packet string) func(*ifd.Builder) {
	return func(b *ifd.Builder) {
		b.Add(ifd.Entry{Tag: tagXMP, Type: ifd.Byte, Count: uint64(len(packet)), Value: []byte(packet)})
	}
}

// bifSoftware is the Software of the pages of a VENTANA DP 200's file.
var bifSoftware = ascii(tiff.TagSoftware, "ScanOutputManager 1.1.0.15854")

// bifSlide returns the pages of a BIF file as a VENTANA DP 200 writes
// them: the label (overview) with the iScan XMP, the thumbnail (of the
// size of level 3), then levels 0 to 3, level 0 with its EncodeInfo.
func bifSlide(head ...func(*ifd.Builder)) []testPage {
	if len(head) == 0 {
		head = []func(*ifd.Builder){description("Label_Image"), bifSoftware, xmp(bifISCan)}
	}
	return []testPage{
		svsPage(30, 30, true, head...),
		svsPage(16, 12, true, description("Thumbnail"), bifSoftware),
		svsPage(128, 96, true, description("level=0 mag=40 quality=90"), bifSoftware, xmp(bifEncodeInfo(0))),
		svsPage(64, 48, true, description("level=1 mag=20 quality=90"), bifSoftware),
		svsPage(32, 24, true, description("level=2 mag=10 quality=90"), bifSoftware),
		svsPage(16, 12, true, description("level=3 mag=5 quality=90"), bifSoftware),
	}
}

// TestBIFMapping: the level pages make one image, the slide, with its
// levels; the label, thumbnail and probability pages are images of their
// own, named, never planes of another (the thumbnail has level 3's size).
func TestBIFMapping(t *testing.T) {
	slide := bifSlide()
	probability := svsPage(30, 30, true, description("Probability_Image"), bifSoftware)
	tests := []struct {
		name   string
		pages  []testPage
		want   []string
		levels []int // the pages of the slide's levels
	}{
		{"a DP 200's", slide, []string{`"" 128x96 Z1 C1 T1 XYCZT uint8 x3: 2:*`, `"macro" 30x30 Z1 C1 T1 XYCZT uint8 x3: 0:*`,
			`"thumbnail" 16x12 Z1 C1 T1 XYCZT uint8 x3: 1:*`}, []int{3, 4, 5}},
		{"an iScan Coreo's: a probability image for a thumbnail, iScan the root",
			append([]testPage{svsPage(30, 30, true, description("Label Image"), xmp(`<iScan Magnification="20" ScanRes="0.465"/>`)), probability}, slide[2:]...),
			[]string{`"" 128x96 Z1 C1 T1 XYCZT uint8 x3: 2:*`, `"macro" 30x30 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"probability" 30x30 Z1 C1 T1 XYCZT uint8 x3: 1:*`},
			[]int{3, 4, 5}},
		{"levels out of order, another page", []testPage{slide[0], slide[4], slide[2], svsPage(5, 60, true, description("barcode")), slide[3], slide[0]},
			[]string{`"" 128x96 Z1 C1 T1 XYCZT uint8 x3: 2:*`, `"macro" 30x30 Z1 C1 T1 XYCZT uint8 x3: 0:*`,
				`"page 3" 5x60 Z1 C1 T1 XYCZT uint8 x3: 3:*`, `"page 5" 30x30 Z1 C1 T1 XYCZT uint8 x3: 5:*`}, []int{4, 1}},
		{"the only level", []testPage{slide[0], slide[2]}, []string{`"" 128x96 Z1 C1 T1 XYCZT uint8 x3: 1:*`, `"macro" 30x30 Z1 C1 T1 XYCZT uint8 x3: 0:*`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, tt.pages...)
			require.NoError(t, err)
			assert.Equal(t, BIF, f.Kind)
			assert.Equal(t, "BIF", f.Kind.String())
			assert.Equal(t, tt.want, summary(f))
			var levels []int
			for _, p := range f.Images[0].Planes[0].Levels {
				levels = append(levels, slices.Index(f.TIFF.Pages, p))
			}
			assert.Equal(t, tt.levels, levels)
			assert.Empty(t, f.Skipped)
		})
	}
}

// TestBIFDetection: a BIF is recognized as OpenSlide recognizes it (an
// iScan element in the first page's XMP) or as tifffile does (XMP, and
// Ventana's Software or label description), and only with level pages;
// a plain TIFF with XMP, or with level descriptions but no Ventana XMP,
// stays a plain TIFF.
func TestBIFDetection(t *testing.T) {
	levels := bifSlide()[2:]
	tests := []struct {
		name string
		head []func(*ifd.Builder)
		more []testPage
		want Kind
	}{
		{"iScan in Metadata", []func(*ifd.Builder){description("Label_Image"), bifSoftware, xmp(bifISCan)}, levels, BIF},
		{"iScan the root, no Software", []func(*ifd.Builder){description("overview"), xmp(`<iScan ScanRes="0.5"/>`)}, levels, BIF},
		{"tifffile's: Ventana's Software, other XMP", []func(*ifd.Builder){ascii(tiff.TagSoftware, "Ventana DP"), xmp(`<x:xmpmeta xmlns:x="adobe:ns:meta/"/>`)}, levels, BIF},
		{"tifffile's: the label's description", []func(*ifd.Builder){description("Label Image"), xmp(`<x/>`)}, levels, BIF},
		{"Adobe's XMP", []func(*ifd.Builder){xmp(`<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="r"/></x:xmpmeta>`)}, levels, TIFF},
		{"iScan named in text only", []func(*ifd.Builder){xmp(`<Metadata><Note>iScan</Note></Metadata>`)}, levels, TIFF},
		{"iScan too deep", []func(*ifd.Builder){xmp(`<Metadata><a><iScan ScanRes="0.5"/></a></Metadata>`)}, levels, TIFF},
		{"iScan under another root", []func(*ifd.Builder){xmp(`<Other><iScan ScanRes="0.5"/></Other>`)}, levels, TIFF},
		{"Ventana's label, no XMP", []func(*ifd.Builder){description("Label_Image"), bifSoftware}, levels, TIFF},
		{"iScan, no level page", []func(*ifd.Builder){description("Label_Image"), bifSoftware, xmp(bifISCan)},
			[]testPage{svsPage(16, 12, true, description("Thumbnail")), svsPage(64, 48, true, description("level one"))}, TIFF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, append([]testPage{svsPage(30, 30, true, tt.head...)}, tt.more...)...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, f.Kind)
		})
	}
}

// TestBIFMetadata: ScanRes is the slide's pixel size in µm, level 0's
// mag its objective's nominal magnification, iScan's attributes and the
// Software map annotations; the other images have none of these.
func TestBIFMetadata(t *testing.T) {
	f, _, err := mapPages(t, Options{}, bifSlide()...)
	require.NoError(t, err)
	s := f.Images[0].Spec
	assert.Equal(t, [4]any{0.2325, "µm", 0.2325, "µm"}, [4]any{s.PhysicalSizeX, s.PhysicalSizeXUnit, s.PhysicalSizeY, s.PhysicalSizeYUnit})
	assert.Equal(t, &pyramid.Instrument{Objectives: []pyramid.Objective{{NominalMagnification: 40}}}, s.Instrument)
	assert.Equal(t, "level=0 mag=40 quality=90", s.Description)
	assert.Equal(t, []pyramid.KeyValue{{Key: "BuildDate", Value: "2012"}, {Key: "BuildVersion", Value: "3.3.1.1"}, {Key: "Magnification", Value: "40"},
		{Key: "ScanRes", Value: "0.2325"}, {Key: "SlideAnnotation", Value: "demo"}, {Key: "UnitNumber", Value: "BI10N0294"}, {Key: "ShowLabel", Value: "1"},
		{Key: "LabelBoundary", Value: "0"}, {Key: "Software", Value: "ScanOutputManager 1.1.0.15854"}}, s.Annotations)
	assert.Empty(t, f.Images[0].Notes, "no overlaps")
	for _, im := range f.Images[1:] {
		assert.Zero(t, im.Spec.PhysicalSizeX, "%s: not scanned at the slide's resolution", im.Spec.Name)
		assert.Nil(t, im.Spec.Instrument, im.Spec.Name)
		assert.Empty(t, im.Spec.Annotations, im.Spec.Name)
	}
	assert.Equal(t, "Label_Image", f.Images[1].Spec.Description)

	// The output's OME-XML has the pixel size, the objective linked to
	// the slide, and the names.
	doc := omexmltest.Parse(t, []byte(mapOME(t, convert(t, f, pyramid.Options{TileSize: 16}, Options{})).OMEXML))
	objective := doc.Element("Instrument", "Objective")
	require.NotNil(t, objective)
	assert.Equal(t, "40", objective.Attr("NominalMagnification"))
	assert.Equal(t, "0.2325", doc.Element("Image", "Pixels").Attr("PhysicalSizeX"))
}

// TestBIFAttributesBound: iScan attributes past maxAnnotations are
// refused (ErrMetadata), or with SkipUnsupported reported, the slide kept
// with the first maxAnnotations.
func TestBIFAttributesBound(t *testing.T) {
	var attrs strings.Builder
	for i := range maxAnnotations + 2 {
		fmt.Fprintf(&attrs, ` a%d="v"`, i)
	}
	packet := `<?xml version="1.0" encoding="utf-8"?><Metadata><iScan Magnification="40"` + attrs.String() + `/></Metadata>`
	_, _, err := mapPages(t, Options{}, bifSlide(xmp(packet))...)
	require.ErrorIs(t, err, ErrMetadata)
	// 1,026 attributes and Magnification; the page's Software, a text
	// tag, is no field of the iScan element's.
	assert.ErrorContains(t, err, "the iScan element has 3 more fields than the 1024 kept as annotations")
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, bifSlide(xmp(packet))...)
	require.NoError(t, err)
	assert.Len(t, f.Images[0].Spec.Annotations, maxAnnotations+1, "and the text tag")
	require.Len(t, f.Skipped, 1)
}

// TestBIFMagnification: level 0's mag first (Bio-Formats), else iScan's
// Magnification (OpenSlide's objective power), which then leaves the
// annotations; a decimal comma is read, as both readers read numbers.
func TestBIFMagnification(t *testing.T) {
	tests := []struct {
		name, iscan, level string
		mag, mpp           float64
		magnificationKept  bool
	}{
		{"mag", `<iScan Magnification="20" ScanRes="0.5"/>`, "level=0 mag=40", 40, 0.5, true},
		{"iScan's", `<iScan Magnification="20" ScanRes="0.5"/>`, "level=0 quality=90", 20, 0.5, false},
		{"a decimal comma", `<iScan Magnification="2,5" ScanRes="0,2325"/>`, "level=0", 2.5, 0.2325, false},
		{"none a number", `<iScan Magnification="x" ScanRes="0"/>`, "level=0 mag=+Inf", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, svsPage(30, 30, true, description("Label_Image"), xmp(tt.iscan)), svsPage(64, 48, true, description(tt.level)))
			require.NoError(t, err)
			require.Equal(t, BIF, f.Kind)
			s := f.Images[0].Spec
			if tt.mag == 0 {
				assert.Nil(t, s.Instrument)
			} else {
				assert.Equal(t, &pyramid.Instrument{Objectives: []pyramid.Objective{{NominalMagnification: tt.mag}}}, s.Instrument)
			}
			assert.Equal(t, tt.mpp, s.PhysicalSizeX)
			var keys []string
			for _, kv := range s.Annotations {
				keys = append(keys, kv.Key)
			}
			assert.Equal(t, tt.magnificationKept, strings.Contains(strings.Join(keys, " "), "Magnification"), keys)
		})
	}
}

// TestBIFNotes: what the mapping does not carry or reads otherwise than
// OpenSlide and Bio-Formats is said: tiles overlapping (not stitched, as
// tifffile reads them), iScan's child elements.
func TestBIFNotes(t *testing.T) {
	pages := bifSlide(description("Label_Image"), xmp(`<iScan ScanRes="0.5"><AOI0 Left="1"/><AOI1 Left="2"/></iScan>`))
	pages[2] = svsPage(128, 96, true, description("level=0 mag=40"), xmp(bifEncodeInfo(-12)))
	f, _, err := mapPages(t, Options{}, pages...)
	require.NoError(t, err)
	notes := f.Images[0].Notes
	require.Len(t, notes, 2)
	assert.Contains(t, notes[0], "child elements (AOI0, AOI1) are not carried")
	assert.Contains(t, notes[1], "not stitched")
	assert.Contains(t, notes[1], "1 joint between them overlapping by up to 12 x 0 pixels", "the joint not joined is not counted")
}

// TestBIFRefused: a page repeating a level's number (another focal plane)
// is refused, or left out with SkipUnsupported; a label that cannot be
// read leaves out that image only.
func TestBIFRefused(t *testing.T) {
	slide := bifSlide()
	tests := []struct {
		name  string
		pages []testPage
		says  string
		kept  []string
		whole bool
	}{
		{"focal planes", []testPage{slide[0], slide[2], svsPage(128, 96, true, description("level=0 mag=40")), slide[3]},
			"page 2 of the BIF file repeats level=0 of page 1", []string{`"" 128x96 Z1 C1 T1 XYCZT uint8 x3: 1:*`, `"macro" 30x30 Z1 C1 T1 XYCZT uint8 x3: 0:*`}, false},
		{"JPEG 2000", []testPage{svsPage(30, 30, true, description("Label_Image"), xmp(bifISCan), short(tiff.TagCompression, tiff.CompressionJPEG2000AperioRGB)), slide[2]},
			"the macro of the BIF file (page 0)", []string{`"" 128x96 Z1 C1 T1 XYCZT uint8 x3: 1:*`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := mapPages(t, Options{}, tt.pages...)
			require.ErrorIs(t, err, ErrUnsupported)
			assert.ErrorContains(t, err, tt.says)
			f, _, err := mapPages(t, Options{SkipUnsupported: true}, tt.pages...)
			require.NoError(t, err)
			assert.Equal(t, BIF, f.Kind)
			assert.Equal(t, tt.kept, summary(f))
			require.Len(t, f.Skipped, 1)
			assert.Equal(t, tt.whole, errors.Is(f.Skipped[0], ErrLeftOut))
		})
	}
}

// TestBIFLevel reads levels' descriptions as OpenSlide splits them.
func TestBIFLevel(t *testing.T) {
	tests := []struct {
		d     string
		level int
		mag   string
		ok    bool
	}{
		{"level=0 mag=40 quality=90", 0, "40", true},
		{"level=12 quality=90", 12, "", true},
		{"mag=20 level=1", 1, "20", true},
		{"level=-1 mag=40", 0, "40", false},
		{"level=x", 0, "", false},
		{"Thumbnail", 0, "", false},
		{"sublevel=1", 0, "", false},
	}
	for _, tt := range tests {
		level, mag, ok := bifLevel(tt.d)
		assert.Equal(t, [3]any{tt.level, tt.mag, tt.ok}, [3]any{level, mag, ok}, tt.d)
	}
}

// FuzzBIFXMP maps BIF files whose first page's XMP is arbitrary, seeded
// with iScan elements: errors must be typed, and what is mapped sound.
func FuzzBIFXMP(f *testing.F) {
	f.Add(bifISCan, false)
	f.Add(`<iScan ScanRes="0,5" Magnification="1e39"><AOI0/></iScan>`, true)
	f.Add(`<Metadata><x/><iScan Z-layers="3"/></Metadata>`, false)
	f.Fuzz(func(t *testing.T, packet string, skip bool) {
		if packet == "" {
			return // a field has a value
		}
		pages := bifSlide(description("Label_Image"), xmp(packet))
		file, _ := fileOf(t, binary.LittleEndian, false, pages...)
		mapFuzzed(t, file, skip)
	})
}

// TestBIFXMPBounded: an XMP packet nested past maxXMPDepth is read no
// further (encoding/xml would hold every level), and gives no iScan.
func TestBIFXMPBounded(t *testing.T) {
	deep := `<Metadata>` + strings.Repeat("<a>", 100000) + strings.Repeat("</a>", 100000) + `<iScan Magnification="40"/></Metadata>`
	_, ok := parseIScan([]byte(deep))
	assert.False(t, ok, "nested past maxXMPDepth")
	shallow := `<Metadata>` + strings.Repeat("<a>", 8) + strings.Repeat("</a>", 8) + `<iScan Magnification="40"/></Metadata>`
	s, ok := parseIScan([]byte(shallow))
	require.True(t, ok)
	assert.Equal(t, []pyramid.KeyValue{{Key: "Magnification", Value: "40"}}, s.attrs)
	joints, _, _ := bifOverlaps([]byte(`<EncodeInfo>` + strings.Repeat("<x>", 100000) + `<TileJointInfo FlagJoined="1" OverlapX="3"/></EncodeInfo>`))
	assert.Zero(t, joints, "read no further than maxXMPDepth")
}

// TestBoundedXML: a packet is read up to maxXMPTokens tokens and
// maxXMPDepth levels of elements, exactly, and the error past either
// names the bound passed.
func TestBoundedXML(t *testing.T) {
	read := func(packet string) error {
		b := xmpDecoder([]byte(packet))
		for {
			if _, err := b.Token(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
	nested := func(depth int) string { return strings.Repeat("<a>", depth) + strings.Repeat("</a>", depth) }
	assert.NoError(t, read(nested(maxXMPDepth)))
	err := read(nested(maxXMPDepth + 1))
	assert.ErrorIs(t, err, errXMPBounds)
	assert.EqualError(t, err, "XML past its bounds: elements nested more than 32 deep")
	// Each empty element is two tokens.
	assert.NoError(t, read(strings.Repeat("<a/>", maxXMPTokens/2)))
	err = read(strings.Repeat("<a/>", maxXMPTokens/2) + "<a/>")
	assert.ErrorIs(t, err, errXMPBounds)
	assert.EqualError(t, err, "XML past its bounds: more than 1048576 tokens")
}
