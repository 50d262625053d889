package tiff

// Tags a reader meets beside the baseline and the extensions above: the
// JPEG and YCbCr fields (TIFF 6.0 Section 21 "YCbCr Images" and TIFF
// Technical Note 2 for JPEGTables), descriptive fields, and the private
// directories a reader does not follow.
const (
	TagFillOrder           uint16 = 266 // 2: bits least significant first
	TagDocumentName        uint16 = 269
	TagPageName            uint16 = 285
	TagXPosition           uint16 = 286
	TagYPosition           uint16 = 287
	TagPageNumber          uint16 = 297
	TagInkSet              uint16 = 332 // of separated pages: 1 (CMYK, the default) or 2 (other inks)
	TagJPEGTables          uint16 = 347
	TagYCbCrCoefficients   uint16 = 529
	TagYCbCrSubSampling    uint16 = 530
	TagYCbCrPositioning    uint16 = 531
	TagReferenceBlackWhite uint16 = 532
	TagCopyright           uint16 = 33432
	TagExifIFD             uint16 = 34665
	TagICCProfile          uint16 = 34675
	TagGPSIFD              uint16 = 34853
	// ImageJ's metadata beside its description: the byte counts of its
	// blocks, and the blocks (a header, then slice labels, display ranges,
	// lookup tables, ...).
	TagIJMetadataByteCounts uint16 = 50838
	TagIJMetadata           uint16 = 50839
	// GDAL's metadata: an XML document of named items, the dataset's and
	// each band's (its description, scale, offset...), and the value of
	// pixels that hold no data, as text.
	TagGDALMetadata uint16 = 42112
	TagGDALNoData   uint16 = 42113
	// SGI's volumetric fields: the depth of the image and of its tiles,
	// in planes (tifffile writes them with volumetric=True).
	TagImageDepth uint16 = 32997
	TagTileDepth  uint16 = 32998
)

// Compression values a reader meets and this library does not decode:
// Aperio writes JPEG 2000 into SVS files under these two codes (YCbCr and
// RGB components).
const (
	CompressionJPEG2000Aperio    uint16 = 33003
	CompressionJPEG2000AperioRGB uint16 = 33005
)

// YCbCrPositioning values (TIFF 6.0 Section 21, "YCbCrPositioning").
const (
	YCbCrCentered uint16 = 1
	YCbCrCosited  uint16 = 2
)

// ExtraSamples values (TIFF 6.0 Section 8, "ExtraSamples").
const (
	ExtraSampleUnspecified       uint16 = 0
	ExtraSampleAssociatedAlpha   uint16 = 1
	ExtraSampleUnassociatedAlpha uint16 = 2
)
