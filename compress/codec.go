package compress

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hhrutter/lzw"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/ometiff-go/ometiff/tiff"
)

// Codec compresses one tile (or strip) for a TIFF file. NewCodec returns
// one.
type Codec interface {
	// Compression returns the TIFF Compression tag value (tiff.Compression*)
	// of the codec's output.
	Compression() uint16
	// Encode appends the compressed src to dst and returns the extended
	// slice. It is safe for concurrent use; per-call state is pooled.
	Encode(dst, src []byte) ([]byte, error)
}

// Errors of the codecs.
var (
	// ErrLevel reports a compression level a codec does not have.
	ErrLevel = errors.New("compress: invalid compression level")
)

// Levels of the codecs that have them, as zlib and the zstd command line
// count them. Deflate's default is level 3, not zlib's 6: on predicted
// 16-bit slide tiles (BenchmarkDeflateLevels) it compresses within a few
// percent of level 6 at about twice its speed, while levels 1 and 2, faster
// again, give output about a tenth larger.
const (
	deflateDefault, deflateMax = 3, 9
	zstdDefault, zstdMax       = 3, 22
)

// NewCodec returns the codec for a TIFF Compression value (tag 259):
//
//   - tiff.CompressionNone stores tiles unchanged;
//   - tiff.CompressionLZW is TIFF's LZW: MSB-first codes, a leading Clear
//     code, a final EOI code, and code widths that grow one code early
//     ("early change"), as libtiff writes and reads them;
//   - tiff.CompressionDeflate is Adobe Deflate, one zlib stream per tile, at
//     level 1 (fastest) to 9 (smallest);
//   - tiff.CompressionZstd is Zstandard, one frame per tile without
//     checksum, at level 1 (fastest) to 22 (smallest).
//
// Level 0 means the codec's default (3 for Deflate and Zstd), and is the
// only level of None and LZW. Another compression gives ErrCompression,
// another level ErrLevel. Codecs are safe for concurrent use and start no
// goroutines.
func NewCodec(compression uint16, level int) (Codec, error) {
	var name string
	var most, def int
	switch compression {
	case tiff.CompressionNone:
		name = "none"
	case tiff.CompressionLZW:
		name = "LZW"
	case tiff.CompressionDeflate:
		name, most, def = "Deflate", deflateMax, deflateDefault
	case tiff.CompressionZstd:
		name, most, def = "Zstd", zstdMax, zstdDefault
	default:
		return nil, fmt.Errorf("%w %d", ErrCompression, compression)
	}
	switch {
	case most == 0 && level != 0:
		return nil, fmt.Errorf("%w %d: %s has no levels (want 0)", ErrLevel, level, name)
	case level < 0 || level > most:
		return nil, fmt.Errorf("%w %d: %s takes 1 to %d (0 for the default, %d)", ErrLevel, level, name, most, def)
	case level == 0:
		level = def
	}
	switch compression {
	case tiff.CompressionNone:
		return noneCodec{}, nil
	case tiff.CompressionLZW:
		return lzwCodec{}, nil
	case tiff.CompressionDeflate:
		return &deflateCodec{level: level}, nil
	}
	return newZstd(level)
}

// noneCodec stores tiles uncompressed.
type noneCodec struct{}

func (noneCodec) Compression() uint16 { return tiff.CompressionNone }

func (noneCodec) Encode(dst, src []byte) ([]byte, error) { return append(dst, src...), nil }

// lzwCodec runs github.com/hhrutter/lzw over a sink that appends straight
// to dst, so no bufio layer sits between the encoder and the output; each
// call allocates only that library's encoder table (about 64 KiB).
type lzwCodec struct{}

func (lzwCodec) Compression() uint16 { return tiff.CompressionLZW }

func (lzwCodec) Encode(dst, src []byte) ([]byte, error) {
	s := getSink(slices.Grow(dst, len(src)))
	w := lzw.NewWriter(s, true)
	_, err := w.Write(src)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return s.release(), err
}

// deflateCodec writes one zlib stream per tile through
// github.com/klauspost/compress/zlib, which is faster than the standard
// library's compress/zlib at every ratio (BenchmarkDeflateLevels).
type deflateCodec struct {
	level int
	pool  sync.Pool // of *deflateState
}

// deflateState is a zlib writer bound to its own sink, reused across calls.
type deflateState struct {
	out sink
	zw  *zlib.Writer
}

func (d *deflateCodec) Compression() uint16 { return tiff.CompressionDeflate }

func (d *deflateCodec) Encode(dst, src []byte) ([]byte, error) {
	st, err := d.state()
	if err != nil {
		return dst, err
	}
	st.out.buf = slices.Grow(dst, len(src)/2)
	st.zw.Reset(&st.out)
	_, err = st.zw.Write(src)
	if cerr := st.zw.Close(); err == nil {
		err = cerr
	}
	dst = st.out.take()
	d.pool.Put(st)
	return dst, err
}

func (d *deflateCodec) state() (*deflateState, error) {
	if st, ok := d.pool.Get().(*deflateState); ok {
		return st, nil
	}
	st := new(deflateState)
	zw, err := zlib.NewWriterLevel(&st.out, d.level)
	if err != nil { // not for the levels NewCodec lets through
		return nil, fmt.Errorf("compress: deflate: %w", err)
	}
	st.zw = zw
	return st, nil
}

// zstdCodec shares one github.com/klauspost/compress/zstd encoder among all
// callers. That encoder is used only through EncodeAll, which starts no
// goroutines and borrows one of GOMAXPROCS encoder states per call, so
// concurrent calls run in parallel; it holds no resources beyond memory and
// needs no Close.
type zstdCodec struct {
	level int
	enc   *zstd.Encoder
}

// newZstd returns a zstd codec at a level of the zstd command line, which
// the encoder maps onto its four speeds: 1-2 fastest, 3-5 default, 6-9
// better, 10-22 best.
func newZstd(level int) (*zstdCodec, error) {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithEncoderConcurrency(0), // GOMAXPROCS states for EncodeAll
		zstd.WithEncoderCRC(false),
		zstd.WithZeroFrames(true), // an empty tile is still a valid frame
	)
	if err != nil { // not for the levels NewCodec lets through
		return nil, fmt.Errorf("compress: zstd: %w", err)
	}
	return &zstdCodec{level: level, enc: enc}, nil
}

func (z *zstdCodec) Compression() uint16 { return tiff.CompressionZstd }

func (z *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	return z.enc.EncodeAll(src, dst), nil
}

// sink is the output of the streaming codecs: it appends to buf. It
// implements io.ByteWriter and Flush, so hhrutter/lzw writes to it directly
// instead of through a bufio.Writer.
//
// Every output byte updates buf's length, so two workers' sinks must not
// share a cache line (or the pair of lines CPUs fetch together): the
// padding keeps each sink alone in 128 bytes. Without it, sinks allocated
// side by side cost a quarter of the LZW time in cache-line transfers.
type sink struct {
	buf []byte
	_   [128 - 24]byte
}

var sinks = sync.Pool{New: func() any { return new(sink) }}

// getSink returns a pooled sink appending to dst.
func getSink(dst []byte) *sink {
	s := sinks.Get().(*sink)
	s.buf = dst
	return s
}

// take returns the sink's buffer and forgets it.
func (s *sink) take() []byte {
	b := s.buf
	s.buf = nil
	return b
}

// release takes the sink's buffer and puts the sink, which came from
// getSink, back in the pool.
func (s *sink) release() []byte {
	b := s.take()
	sinks.Put(s)
	return b
}

// Write appends p.
func (s *sink) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	return len(p), nil
}

// WriteByte appends c.
func (s *sink) WriteByte(c byte) error {
	s.buf = append(s.buf, c)
	return nil
}

// Flush does nothing: the bytes are already in buf.
func (s *sink) Flush() error { return nil }
