// Package source reads the images of existing TIFF files for the pyramid
// writer: plain TIFF and BigTIFF, OME-TIFF, Aperio SVS, Hamamatsu NDPI,
// Roche/Ventana BIF, Leica SCN, Philips TIFF, Akoya QPTIFF, MetaMorph STK
// and MetaSeries TIFF, and Zeiss LSM, in either byte order, mapped to
// pyramid.ImageSpec as Bio-Formats reports them, and streamed into a
// pyramid.Writer plane by plane in bounded memory.
//
// Open (or New) recognizes a file and maps its pages to images (OME
// series): each Image has a spec the writer takes and the page (or the
// sample of a page) holding each of its planes. What goes where:
//   - OME-TIFF: every Image of the OME-XML, its planes found through its
//     TiffData elements. Each image's spec carries its Image element of
//     the document (ImageSpec.OME), so that the writer keeps the whole
//     document (instruments and settings, planes' times and positions,
//     ROIs, structured annotations...) but what it writes itself; the
//     typed fields restate the names, descriptions, physical sizes and
//     channels. The OME-XML is kept whole in File.OMEXML too. A
//     multi-file dataset is read whole from any of its TIFFs, or from its
//     companion file: the TIFFs its TiffData elements name (by FileName,
//     their UUIDs checked: a file without OME-XML is no part) are read
//     from Options.DatasetDir or below (links followed, as Bio-Formats
//     follows them: a workflow's staged inputs), the companion a
//     BinaryOnly element names too (File.Parts), a
//     .companion.ome file or the master OME-TIFF whose first
//     ImageDescription holds the document. A file whose root has no UUID
//     and that names itself by a name now missing (it was renamed) is
//     the file opened, as Bio-Formats takes it;
//   - Aperio SVS: page 0 is the image (MPP its pixel size, AppMag its
//     objective's nominal magnification, wavelengths and Dye its
//     channel's, Left and Top its position, its fields a map
//     annotation), with the pages of its size at OffsetZ values its focal
//     planes along Z; the label and macro pages are images named "label"
//     and "macro";
//   - Hamamatsu NDPI: the pages of page 0's size are its focal planes,
//     along Z, each one JPEG strip read a restart interval at a time
//     (tiff.Page.NDPITiles); the macro and map pages are images named
//     "macro" and "map"; the magnification is the objective's, the
//     scanner's properties a map annotation;
//   - Roche/Ventana BIF: the page described "level=0" is the image, the
//     other "level=N" pages its levels (ScanRes its pixel size, level 0's
//     mag its objective's nominal magnification, the iScan attributes a
//     map annotation), the label (the slide's overview), thumbnail and
//     probability pages are images named "macro", "thumbnail" and
//     "probability"; level 0 is read as stored, not stitched;
//   - Leica SCN: each image of its XML is an image so named, its
//     resolution 0 pages its planes (channels along C, focal planes along
//     Z), its other resolutions their levels; its view's size gives the
//     pixel size, its objective and aperture its instrument's objective,
//     its creation date the acquisition date, and its other fields
//     (barcode, device, collection) a map annotation. Pages the XML does
//     not name are read as a plain TIFF's; an XML that does not parse or
//     fit the pages is ErrMetadata, or, with SkipUnsupported, the file is
//     read as a plain TIFF;
//   - Akoya/PerkinElmer QPTIFF (Vectra, PhenoImager, PhenoCycler; page
//     0's Software "PerkinElmer-QPI..."): page 0 and the pages of its size
//     after it are the image's channels, along C (a brightfield scan's one
//     RGB page), named by their XML's Biomarker or Name, coloured by its
//     Color, their ExposureTime the planes' exposures, the Objective the
//     instrument's objective; the groups of as many pages marked reduced
//     after the thumbnail are its levels; the thumbnail and the other
//     pages are images named "thumbnail", "macro" (Overview), "label", as
//     Bio-Formats' VectraReader reads them; the XML's other fields are map
//     annotations;
//   - MetaMorph STK (page 0 has a UIC1tag): the planes its UIC2tag counts,
//     page 0's data and the planes stored after it uncompressed (a
//     compressed STK of several planes is ErrUnsupported), one image along
//     Z, C and T as Bio-Formats' MetamorphReader lays them; its UIC1
//     calibration the pixel size, its first Z distance the Z step, its
//     Name and CreateTime the name and acquisition date, its wavelengths
//     the channels', its other UIC values a map annotation; descriptions
//     that are MetaData XML (newer MetaMorph) give the planes' times,
//     exposures and Z positions, and the pixel size, wavelength and Z step
//     where the UIC tags give none;
//   - MetaMorph/MetaXpress MetaSeries TIFF (page 0's description a
//     MetaData XML element): every page a plane, along C (distinct
//     wavelengths), Z (distinct z-positions) and T as Bio-Formats'
//     MetamorphTiffReader lays them, each field (stage position) an
//     image; the XML's pixel size, image name, acquisition time, channel
//     names and wavelengths the spec's, each page's time, exposure and
//     positions its plane's, page 0's other props a map annotation;
//   - Zeiss LSM (page 0's CZ_LSMINFO): every second page is a plane, its
//     samples the channels, along Z and T as CZ_LSMINFO says (one image a
//     position), the pages between (thumbnails) left out; VoxelSize is
//     the physical size, ChannelColors the channels' names and colours,
//     TimeStamps the planes' times; 32-bit pages of DataType 5 floats;
//     strip offsets past 4 GiB unwrapped;
//   - plain TIFF: pages of one shape are planes along T, as Bio-Formats
//     puts them (or along Z, C and T as an ImageJ description, or
//     tifffile's JSON description of a shaped series, says: its axes OME
//     lacks, a stage position's say, along T with T), and pages of other
//     shapes are further images. An ImageJ stack of one
//     directory, its other planes stored uncompressed after the first's
//     data (as ImageJ writes stacks past 4 GiB), is read whole
//     (tiff.Page.Successor); one that does not hold as many planes as its
//     description counts is refused (ErrMetadata). ImageJ's palette
//     pages (an 8-bit image shown through a lookup table) are read as
//     their indices, as Bio-Formats and tifffile read them, the table's
//     highest colour the channel's colour; so are a composite image's
//     tables (its IJMetadata), one a channel. GDAL's band descriptions
//     name the channels when each sample is one; its other metadata
//     items and its no-data value go to a map annotation. So do ImageJ's
//     Info, properties (the first 4096; more is ErrMetadata) and slice
//     labels ("Label 1"...), and the text
//     fields of any plain TIFF's first page (Software, Make, Model,
//     Artist, HostComputer, DocumentName, Copyright, and a DateTime not
//     read as the acquisition date); PageName names the image. A Philips
//     slide (its description a DPUfsImport XML) has the pixel size of its
//     first DICOM_PIXEL_SPACING, the objective's magnification of
//     DICOM_DERIVATION_DESCRIPTION's levels, and its base64
//     PIM_DP_UFS_BARCODE as a "Barcode" annotation, as OpenSlide maps
//     them; its pages described "Label..." and
//     "Macro...", or failing those the base64 JPEGs of its XML's
//     LABELIMAGE and MACROIMAGE (read from a TIFF made in memory, whose
//     page is none of the file's), are images named "label" and "macro",
//     as OpenSlide reads them. The slide's description is its XML, less
//     that base64 once the XML is read.
//
// Reduced-resolution levels (SubIFDs, pages marked reduced, COG
// overviews, an SVS's levels and thumbnail, an NDPI's levels, an SCN's
// resolutions, a QPTIFF's reduced resolutions) are never planes: the writer
// computes the levels again, or, with Image.Encoded(true), copies their
// tiles when they form an OME pyramid. Samples of a page become
// interleaved RGB
// (SamplesPerPixel 3) when they are 8- or 16-bit RGB or YCbCr, and
// separate channels otherwise (gray and alpha, RGBA, CMYK, multi-sample
// data), as Bio-Formats counts them. 1-bit samples (bilevel images,
// GDAL's internal masks) are read as uint8 0 and 1 (Bio-Formats' type bit,
// tifffile's bool), as stored whatever the photometric interpretation, as
// tifffile reads them (it writes bool masks as 1-bit WhiteIsZero, True 1;
// Bio-Formats inverts WhiteIsZero); a mask is an image of its own, its
// reduced pages its levels. Half floats are read as float32,
// exactly, as Bio-Formats reads them (OME has no 16-bit float type), so
// their tiles are not copied through; 2- and 4-bit samples are read as
// uint8, their values as stored. An OME-TIFF's palette pages are read as
// their indices, as its Pixels describe them and Bio-Formats reads them
// (the ColorMap is not kept: OME has no lookup table). The palette pages
// of plain TIFFs but ImageJ's (of 1, 2, 4, 8 or 16 bits) are read as
// their ColorMap's colours, as libvips reads them: RGB, or gray when every
// colour is a gray; uint8 from the map's high bytes (its low bytes when every high
// byte is 0), or uint16 for 16-bit indices. WritePlanes writes the
// colours; a BandReader gives the indices. What cannot be read (64-bit
// integer samples, FillOrder 2, JPEG 2000, volumetric blocks, a page mapped
// to two planes, a dataset's file missing, of another UUID or not a
// regular file, a dataset without Options.DatasetDir) is
// refused with an error naming it, matching ErrUnsupported, ErrMetadata or
// ErrMultiFile; Options.SkipUnsupported leaves such images out instead and
// lists them in File.Skipped. So is an OME-XML document the writer cannot
// carry (of another schema version than 2016-06, otherwise refused by
// pyramid.ParseOME, or with an Image element unlike its pixels): with
// SkipUnsupported, the images keep their typed metadata only. Images
// whose blocks share or overlap their data, or store none (sparse), and
// that decode to over Options.MaxDecodeRatio (1024) times the size of
// their files (and over 256 MiB) are refused (ErrBomb, which is ErrSize)
// as decompression bombs: a sound file stores each block once, apart.
// Names, descriptions and map annotations are carried while their text,
// escaped for XML, is within 16 MiB for the file; past it they are refused
// (ErrMetadata) or, with SkipUnsupported, left out and listed: the OME-XML
// written of more would be past pyramid.MaxOMEXMLSize, which this package
// reads.
//
// Image.WritePlanes streams every plane into an image of a pyramid
// writer. Underneath, a BandReader gives the rows of one page, top to
// bottom, in bands of its block height or a multiple of it, decoding its
// tiles or strips once each, in parallel through compress's ordered
// Pipeline, with memory bounded by the width of the page times the band
// height.
//
// Image.Encoded says whether an image's tiles can be copied through
// (pyramid.Writer.AddEncodedImage) instead of encoded again, with or
// without the file's reduced levels; WritePlanes then copies them as
// stored, and decodes the pages only for the levels the writer computes.
//
// It builds on package tiff, which reads a file's structure and its
// blocks as stored, and package compress, which decodes a block.
package source
