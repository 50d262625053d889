// Package pyramid writes pyramidal OME-TIFF files: the format QuPath,
// napari, OMERO, Bio-Formats, tifffile and libvips read for whole-slide and
// multi-dimensional images.
//
// A Writer holds one file. Each image added to it is an OME Image (a
// series) of SizeZ x SizeC x SizeT planes; each plane is stored as a tiled
// full-resolution IFD in the main chain, in DimensionOrder, with every
// reduced level (halved in X and Y each time) as a tiled SubIFD, largest
// first, as the OME-TIFF pyramid convention and Bio-Formats 6 expect. The
// OME-XML describing every image goes into the first IFD.
//
// Planes arrive whole (Image.WritePlane, or typed samples with
// WriteSamples), as a stream of rows in bands of any height (Image.Plane,
// NewSampleWriter), all of an image's at once from a reader
// (Image.ReadPlanes), or as an image.Image (Writer.AddImageData,
// WriteImage). The levels are computed while the rows stream in: each band
// of full-resolution rows feeds the next level, so memory stays at a few
// rows of tiles per level whatever the height of the plane or the number of
// planes. Tiles are compressed in parallel by package compress, in an
// ordered pipeline, and appended to the file as they are done; the
// directories, the OME-XML and the header are written at Close, when
// package tiff decides between classic TIFF and BigTIFF from the final
// offsets. A file written from one goroutine is byte-identical at every
// Workers value.
//
// Tiles are compressed with LZW (the default), Deflate, Zstd or JPEG, or
// stored uncompressed. Tiles a caller holds encoded already, such as a
// converter's source tiles, are copied into the file byte for byte
// (Writer.AddEncodedImage, Image.EncodedPlane), with the fields that say
// how to decode them; the reduced levels are then computed from rows the
// caller decodes, or copied too.
//
// Planes, of one image or of several, may be written from several
// goroutines at once, each plane from one goroutine at a time; the Writer's
// doc says exactly what is safe. The examples show the main paths.
//
// An acquisition does not always go as planned: a plane started may be
// given back and written again (PlaneWriter.Abort, EncodedPlaneWriter.Abort),
// and an image whose time-lapse stopped early is closed with the time
// points it has (Image.TruncateT).
//
// A dataset too large for one process is written as a multi-file OME-TIFF
// by independent processes (a Slurm array, a Kubernetes indexed Job): a
// Dataset, made from a DatasetSpec or read from the plan's JSON, gives
// every process the same file names, UUIDs and OME-XML, and each writes
// the files its index names (Dataset.WritePart). CheckDataset checks the
// written set from any of its files.
//
// Pixel bytes are little-endian samples, SamplesPerPixel of them per pixel
// (interleaved RGB when 3), rows top to bottom. Bad input returns an error
// that errors.Is matches against this package's sentinel errors, and leaves
// no file at the destination.
package pyramid
