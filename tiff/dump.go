package tiff

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ometiff-go/ometiff/ifd"
)

var tagNames = map[uint16]string{
	TagNewSubfileType: "NewSubfileType", TagSubfileType: "SubfileType",
	TagNDPIFormatFlag: "NDPIFormatFlag", TagNDPISourceLens: "NDPISourceLens", TagNDPIXOffset: "NDPIXOffset",
	TagNDPIYOffset: "NDPIYOffset", TagNDPIZOffset: "NDPIZOffset", TagNDPIMcuStarts: "NDPIMcuStarts",
	TagNDPIReference: "NDPIReference", TagNDPIMcuStartsHigh: "NDPIMcuStartsHigh", TagNDPIProperties: "NDPIProperties",
	TagImageWidth: "ImageWidth", TagImageLength: "ImageLength",
	TagBitsPerSample: "BitsPerSample", TagCompression: "Compression",
	TagPhotometricInterpretation: "PhotometricInterpretation",
	TagImageDescription:          "ImageDescription", TagMake: "Make", TagModel: "Model",
	TagStripOffsets: "StripOffsets", TagOrientation: "Orientation",
	TagSamplesPerPixel: "SamplesPerPixel", TagRowsPerStrip: "RowsPerStrip",
	TagStripByteCounts: "StripByteCounts", TagXResolution: "XResolution",
	TagYResolution: "YResolution", TagPlanarConfiguration: "PlanarConfiguration",
	TagResolutionUnit: "ResolutionUnit", TagSoftware: "Software", TagDateTime: "DateTime",
	TagArtist: "Artist", TagHostComputer: "HostComputer", TagColorMap: "ColorMap",
	TagExtraSamples: "ExtraSamples", TagPredictor: "Predictor", TagTileWidth: "TileWidth",
	TagTileLength: "TileLength", TagTileOffsets: "TileOffsets",
	TagTileByteCounts: "TileByteCounts", TagSubIFDs: "SubIFDs",
	TagSampleFormat: "SampleFormat", TagSMinSampleValue: "SMinSampleValue",
	TagSMaxSampleValue: "SMaxSampleValue", TagDocumentName: "DocumentName", TagFillOrder: "FillOrder", TagIJMetadataByteCounts: "IJMetadataByteCounts", TagIJMetadata: "IJMetadata",
	TagGDALMetadata: "GDALMetadata", TagGDALNoData: "GDALNoData", TagImageDepth: "ImageDepth", TagTileDepth: "TileDepth",
	TagPageName: "PageName", TagXPosition: "XPosition", TagYPosition: "YPosition",
	TagPageNumber: "PageNumber", TagInkSet: "InkSet", TagJPEGTables: "JPEGTables",
	TagYCbCrCoefficients: "YCbCrCoefficients", TagYCbCrSubSampling: "YCbCrSubSampling",
	TagYCbCrPositioning: "YCbCrPositioning", TagReferenceBlackWhite: "ReferenceBlackWhite",
	TagCopyright: "Copyright", TagExifIFD: "ExifIFD", TagICCProfile: "ICCProfile",
	TagGPSIFD: "GPSIFD",
}

// TagName returns the specification's name of a tag, or "Tag<n>".
func TagName(tag uint16) string {
	if name, ok := tagNames[tag]; ok {
		return name
	}
	return "Tag" + strconv.Itoa(int(tag))
}

var valueNames = map[uint16]map[uint64]string{
	TagCompression: {
		uint64(CompressionNone): "none", uint64(CompressionCCITTRLE): "CCITT RLE",
		uint64(CompressionLZW): "LZW", uint64(CompressionOldJPEG): "old JPEG",
		uint64(CompressionJPEG): "JPEG", uint64(CompressionDeflate): "Deflate",
		uint64(CompressionPackBits): "PackBits", uint64(CompressionDeflateOld): "Deflate (old)",
		uint64(CompressionZstd): "Zstd", uint64(CompressionWebP): "WebP",
		uint64(CompressionJPEGXLDraft): "JPEG XL",
		3:                              "CCITT Group 3 fax", 4: "CCITT Group 4 fax",
		34661: "JBIG", 34712: "JPEG 2000", 34887: "LERC", 34925: "LZMA",
		uint64(CompressionJPEG2000Aperio):    "JPEG 2000 (Aperio YCbCr)",
		uint64(CompressionJPEG2000AperioRGB): "JPEG 2000 (Aperio RGB)",
	},
	TagPhotometricInterpretation: {
		uint64(PhotometricWhiteIsZero): "WhiteIsZero", uint64(PhotometricBlackIsZero): "BlackIsZero",
		uint64(PhotometricRGB): "RGB", uint64(PhotometricPalette): "Palette",
		uint64(PhotometricMask): "Mask", uint64(PhotometricSeparated): "Separated",
		uint64(PhotometricYCbCr): "YCbCr",
	},
	TagPlanarConfiguration: {uint64(PlanarContig): "contig", uint64(PlanarSeparate): "separate"},
	TagPredictor: {
		uint64(PredictorNone): "none", uint64(PredictorHorizontal): "horizontal",
		uint64(PredictorFloatingPoint): "floating point",
	},
	TagSampleFormat: {
		uint64(SampleFormatUint): "uint", uint64(SampleFormatInt): "int",
		uint64(SampleFormatFloat): "float", uint64(SampleFormatUndefined): "undefined",
		5: "complex int", 6: "complex float",
	},
	TagResolutionUnit: {
		uint64(ResolutionUnitNone): "none", uint64(ResolutionUnitInch): "inch",
		uint64(ResolutionUnitCentimeter): "cm",
	},
	TagNewSubfileType:   {0: "full resolution", uint64(SubfileReducedImage): "reduced"},
	TagYCbCrPositioning: {uint64(YCbCrCentered): "centered", uint64(YCbCrCosited): "cosited"},
}

// DumpOptions tunes Dump. The zero value prints up to 16 values per field
// and up to 80 bytes of text.
type DumpOptions struct {
	MaxValues int // values printed per field before "..."
	MaxText   int // bytes of ASCII text printed before "..."
}

// Kind names the file's layout: "classic TIFF", "BigTIFF", or "classic
// TIFF with NDPI's 64-bit offsets" (File.NDPI).
func (f *File) Kind() string {
	switch {
	case f.BigTIFF:
		return "BigTIFF"
	case f.NDPI:
		return "classic TIFF with NDPI's 64-bit offsets"
	}
	return "classic TIFF"
}

// Dump writes a stable, human-readable description of the file's
// structure: the header, then every directory of the main chain with its
// fields and, indented below it, its SubIFDs. The text depends only on the
// file's bytes, so it serves golden-file tests.
func Dump(w io.Writer, f *File, opts DumpOptions) error {
	if opts.MaxValues <= 0 {
		opts.MaxValues = 16
	}
	if opts.MaxText <= 0 {
		opts.MaxText = 80
	}
	bw := bufio.NewWriter(w)
	order := "little-endian"
	if f.bigEndian() {
		order = "big-endian"
	}
	chain := fmt.Sprintf("%d IFDs", len(f.Pages))
	if len(f.Pages) == 1 {
		chain = "1 IFD"
	}
	fmt.Fprintf(bw, "%s, %s, %d bytes, first IFD at %d, %s in the main chain\n",
		f.Kind(), order, f.Size, f.FirstIFD, chain)
	for i, p := range f.Pages {
		dumpPage(bw, p, strconv.Itoa(i), "", opts)
	}
	return bw.Flush()
}

func dumpPage(w *bufio.Writer, p *Page, name, indent string, opts DumpOptions) {
	fmt.Fprintf(w, "%sIFD %s at %d: %d entries, next %d\n", indent, name, p.Offset, len(p.Fields), p.Next)
	for _, e := range p.Fields {
		fmt.Fprintf(w, "%s  %5d %-26s %-9s %6d  %s\n", indent, e.Tag, TagName(e.Tag), e.Type, e.Count, formatValue(e, opts))
	}
	for i, s := range p.SubIFDs {
		dumpPage(w, s, name+"."+strconv.Itoa(i+1), indent+"    ", opts)
	}
}

// formatValue renders an entry's value for the dump.
func formatValue(e ifd.Entry, opts DumpOptions) string {
	switch {
	case e.Value == nil:
		return "(unknown type)"
	case e.Type == ifd.ASCII:
		s, _ := e.Text()
		if len(s) > opts.MaxText {
			return strconv.Quote(s[:opts.MaxText]) + "..."
		}
		return strconv.Quote(s)
	case e.Type == ifd.Undefined:
		return fmt.Sprintf("(%d bytes)", len(e.Value))
	}
	if v, err := e.Uints(); err == nil {
		return joinValues(len(v), opts.MaxValues, func(i int) string { return namedValue(e.Tag, v[i]) })
	}
	v, _ := e.Floats()
	return joinValues(len(v), opts.MaxValues, func(i int) string { return strconv.FormatFloat(v[i], 'g', -1, 64) })
}

func namedValue(tag uint16, v uint64) string {
	if name, ok := ValueName(tag, v); ok {
		return fmt.Sprintf("%d (%s)", v, name)
	}
	return strconv.FormatUint(v, 10)
}

// ValueName returns the name of a value of an enumerated field
// (Compression, Predictor, SampleFormat, ...), if it has one.
func ValueName(tag uint16, v uint64) (string, bool) {
	name, ok := valueNames[tag][v]
	return name, ok
}

func joinValues(n, limit int, format func(i int) string) string {
	var parts []string
	for i := range min(n, limit) {
		parts = append(parts, format(i))
	}
	s := strings.Join(parts, " ")
	if n > limit {
		s += fmt.Sprintf(" ... (%d values)", n)
	}
	return s
}
