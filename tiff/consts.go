package tiff

// Header magic (TIFF 6.0 Section 2 "Image File Header"; BigTIFF design,
// "The BigTIFF header"). Header encodes and parses them.
const (
	orderLittle = "II" // the byte-order mark of a little-endian ("Intel") file
	orderBig    = "MM" // the byte-order mark of a big-endian ("Motorola") file

	magicClassic = 42 // identifies a classic TIFF file (32-bit offsets)
	magicBigTIFF = 43 // identifies a BigTIFF file (64-bit offsets)

	// classicHeaderSize is the length of a classic TIFF header: byte
	// order, magic number and the uint32 offset of the first IFD.
	classicHeaderSize = 8
	// bigTIFFHeaderSize is the length of a BigTIFF header: byte order,
	// magic number, offset byte size (8), a zero word and the uint64 offset
	// of the first IFD.
	bigTIFFHeaderSize = 16
	// bigTIFFOffsetSize is the byte size of offsets in BigTIFF, the third
	// field of its header.
	bigTIFFOffsetSize = 8

	// reservedHeaderSize is what a Writer reserves at the start of the
	// file so that the header can be either kind once the final offsets
	// are known (a classic header leaves the last 8 bytes unused).
	reservedHeaderSize = bigTIFFHeaderSize
)

// Baseline tags (TIFF 6.0 Part 1, Section 8 "Baseline Field Reference Guide").
const (
	TagNewSubfileType            uint16 = 254
	TagSubfileType               uint16 = 255
	TagImageWidth                uint16 = 256
	TagImageLength               uint16 = 257
	TagBitsPerSample             uint16 = 258
	TagCompression               uint16 = 259
	TagPhotometricInterpretation uint16 = 262
	TagImageDescription          uint16 = 270
	TagMake                      uint16 = 271
	TagModel                     uint16 = 272
	TagStripOffsets              uint16 = 273
	TagOrientation               uint16 = 274
	TagSamplesPerPixel           uint16 = 277
	TagRowsPerStrip              uint16 = 278
	TagStripByteCounts           uint16 = 279
	TagXResolution               uint16 = 282
	TagYResolution               uint16 = 283
	TagPlanarConfiguration       uint16 = 284
	TagResolutionUnit            uint16 = 296
	TagSoftware                  uint16 = 305
	TagDateTime                  uint16 = 306
	TagArtist                    uint16 = 315
	TagHostComputer              uint16 = 316
	TagColorMap                  uint16 = 320
	TagExtraSamples              uint16 = 338
)

// Extension tags (TIFF 6.0 Part 2: Section 14 "Differencing Predictor",
// Section 15 "Tiled Images", Section 19 "Data Sample Format"), and SubIFDs
// (Adobe PageMaker 6.0 TIFF Technical Notes, TIFF Tech Note 1).
const (
	TagPredictor       uint16 = 317
	TagTileWidth       uint16 = 322
	TagTileLength      uint16 = 323
	TagTileOffsets     uint16 = 324
	TagTileByteCounts  uint16 = 325
	TagSubIFDs         uint16 = 330
	TagSampleFormat    uint16 = 339
	TagSMinSampleValue uint16 = 340
	TagSMaxSampleValue uint16 = 341
)

// NewSubfileType bits (TIFF 6.0 Section 8, "NewSubfileType"). The OME-TIFF
// pyramid convention marks reduced-resolution SubIFDs with ReducedImage.
const (
	SubfileFullResolution uint32 = 0
	SubfileReducedImage   uint32 = 1 << 0
	SubfilePage           uint32 = 1 << 1
	SubfileMask           uint32 = 1 << 2
)

// Compression values (TIFF 6.0 Sections 3, 9, 13 and 22; Adobe Photoshop
// TIFF Technical Notes for Deflate; libtiff's registry for Zstd).
const (
	CompressionNone        uint16 = 1
	CompressionCCITTRLE    uint16 = 2
	CompressionLZW         uint16 = 5
	CompressionOldJPEG     uint16 = 6
	CompressionJPEG        uint16 = 7
	CompressionDeflate     uint16 = 8 // Adobe Deflate: a zlib stream.
	CompressionPackBits    uint16 = 32773
	CompressionDeflateOld  uint16 = 32946 // Obsolete alias of CompressionDeflate.
	CompressionZstd        uint16 = 50000
	CompressionWebP        uint16 = 50001
	CompressionJPEGXLDraft uint16 = 50002
)

// PhotometricInterpretation values (TIFF 6.0 Sections 3, 4, 5, 16 and 21).
const (
	PhotometricWhiteIsZero uint16 = 0
	PhotometricBlackIsZero uint16 = 1
	PhotometricRGB         uint16 = 2
	PhotometricPalette     uint16 = 3
	PhotometricMask        uint16 = 4
	PhotometricSeparated   uint16 = 5
	PhotometricYCbCr       uint16 = 6
)

// PlanarConfiguration values (TIFF 6.0 Section 8, "PlanarConfiguration").
const (
	PlanarContig   uint16 = 1 // Samples of a pixel stored together.
	PlanarSeparate uint16 = 2 // Each sample in its own plane.
)

// Predictor values (TIFF 6.0 Section 14; Adobe Photoshop TIFF Technical Note
// 3 for the floating-point predictor).
const (
	PredictorNone          uint16 = 1
	PredictorHorizontal    uint16 = 2
	PredictorFloatingPoint uint16 = 3
)

// SampleFormat values (TIFF 6.0 Section 19, "SampleFormat").
const (
	SampleFormatUint      uint16 = 1
	SampleFormatInt       uint16 = 2
	SampleFormatFloat     uint16 = 3
	SampleFormatUndefined uint16 = 4
)

// ResolutionUnit values (TIFF 6.0 Section 8, "ResolutionUnit").
const (
	ResolutionUnitNone       uint16 = 1
	ResolutionUnitInch       uint16 = 2
	ResolutionUnitCentimeter uint16 = 3
)
