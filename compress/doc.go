// Package compress turns raw TIFF tiles (or strips) into the bytes stored in
// the file: a horizontal or floating-point predictor, then a codec (none,
// LZW, Deflate, Zstd or JPEG), for many tiles at once on several cores.
//
// It sits below the pyramid writer: the pyramid writer produces raw tiles
// in file order and submits them to a [Pipeline], which compresses them in
// parallel and hands the encoded tiles back, still in submission order, to
// a single consumer that writes them to the file. The output is
// byte-identical whatever the number of workers.
//
// The layers, bottom up:
//
//   - A [Codec] compresses one tile: [NewCodec] returns one for a TIFF
//     Compression value (none, LZW, Deflate or Zstd) and a level, and
//     [NewJPEG] one for 8-bit gray and RGB, lossy, made for one tile width
//     and with the tables the directory carries. The Compression tag value
//     it writes is Codec.Compression.
//   - A [TileEncoder] combines a codec with a predictor (TIFF tag 317) and
//     the tile's sample [Format] and width; it predicts on a pooled copy of
//     the tile, never on the caller's buffer.
//   - A [Pipeline] runs any [Encoder] (a *TileEncoder or a Codec) over a
//     stream of tiles with a bounded number of bytes in flight.
//
// The other way, a [Decoder] turns a stored block back into samples:
// None, LZW, Deflate, Zstd, PackBits and JPEG, predictors undone, JPEG's
// YCbCr converted to RGB, samples in little-endian order, each block
// checked to decode to exactly its size (a last strip stored with more
// rows than its own gives its first rows, as libtiff reads it). It is
// described by a [BlockFormat] of plain TIFF field values, so that it
// serves any reader.
//
// Codecs, tile encoders and decoders are safe for concurrent use and start no
// goroutines; only a Pipeline does, and none outlives its Close, its first
// error or the cancellation of its context. Invalid settings and input give
// errors matching the sentinel errors of this package under [errors.Is];
// nothing panics on bad input.
package compress
