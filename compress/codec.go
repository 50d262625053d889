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

// Codec compresses one tile (or strip) for a TIFF file.
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

// None stores tiles uncompressed (Compression 1).
type None struct{}

// Compression returns tiff.CompressionNone.
func (None) Compression() uint16 { return tiff.CompressionNone }

// Encode appends src unchanged to dst.
func (None) Encode(dst, src []byte) ([]byte, error) { return append(dst, src...), nil }

// LZW compresses with TIFF's LZW (Compression 5): MSB-first codes, a
// leading Clear code, a final EOI code, and code widths that grow one code
// early ("early change"), as libtiff writes and reads them. Its zero value is
// ready to use.
//
// It runs github.com/hhrutter/lzw over a sink that appends straight to dst,
// so no bufio layer sits between the encoder and the output; each call
// allocates only that library's encoder table (about 64 KiB).
type LZW struct{}

// Compression returns tiff.CompressionLZW.
func (LZW) Compression() uint16 { return tiff.CompressionLZW }

// Encode appends the LZW stream of src to dst.
func (LZW) Encode(dst, src []byte) ([]byte, error) {
	s := getSink(slices.Grow(dst, len(src)))
	w := lzw.NewWriter(s, true)
	_, err := w.Write(src)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return s.release(), err
}

// Deflate levels. The default is level 3, not zlib's 6: on the slide
// workload's 256x256 uint16 tiles behind the horizontal predictor
// (BenchmarkDeflateLevels), level 3 compresses within 4% of level 6 (ratio
// 1.63 against 1.69) at about twice its speed (119 against 59-63 MB/s per
// core); levels 1 and 2 are faster again (160-195 MB/s) but their output is
// 9% larger than level 3's (ratio 1.50). The standard library's
// compress/zlib is slower at every ratio (level 1: 98 MB/s for 1.63).
const (
	DeflateBestSpeed       = 1
	DeflateDefault         = 3
	DeflateBestCompression = 9
)

// Deflate compresses with Adobe Deflate (Compression 8): one zlib stream per
// tile, through github.com/klauspost/compress/zlib. Its zero value uses
// DeflateDefault; NewDeflate picks another level. A Deflate must not be
// copied after first use.
type Deflate struct {
	level int
	pool  sync.Pool // of *deflateState
}

// deflateState is a zlib writer bound to its own sink, reused across calls.
type deflateState struct {
	out sink
	zw  *zlib.Writer
}

// NewDeflate returns a Deflate codec compressing at level 1 (fastest) to 9
// (smallest); 0 means DeflateDefault. Other levels give ErrLevel.
func NewDeflate(level int) (*Deflate, error) {
	if level < 0 || level > DeflateBestCompression {
		return nil, fmt.Errorf("%w: deflate level %d is not in 1..9 (0 = default)", ErrLevel, level)
	}
	return &Deflate{level: level}, nil
}

// Compression returns tiff.CompressionDeflate.
func (d *Deflate) Compression() uint16 { return tiff.CompressionDeflate }

// Level returns the zlib level the codec compresses at.
func (d *Deflate) Level() int {
	if d.level == 0 {
		return DeflateDefault
	}
	return d.level
}

// Encode appends the zlib stream of src to dst.
func (d *Deflate) Encode(dst, src []byte) ([]byte, error) {
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

func (d *Deflate) state() (*deflateState, error) {
	if st, ok := d.pool.Get().(*deflateState); ok {
		return st, nil
	}
	st := new(deflateState)
	zw, err := zlib.NewWriterLevel(&st.out, d.Level())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLevel, err)
	}
	st.zw = zw
	return st, nil
}

// Zstd levels, as the zstd command line counts them. The encoder maps them
// onto its four speeds: 1-2 fastest, 3-5 default, 6-9 better, 10-22 best.
const (
	ZstdBestSpeed       = 1
	ZstdDefault         = 3
	ZstdBestCompression = 22
)

// Zstd compresses with Zstandard (Compression 50000) through
// github.com/klauspost/compress/zstd, one frame per tile, without checksum.
// Its zero value uses ZstdDefault; NewZstd picks another level.
//
// One Zstd shares one encoder among all callers. That encoder is used only
// through EncodeAll, which starts no goroutines and borrows one of
// GOMAXPROCS encoder states per call, so concurrent calls run in parallel;
// it holds no resources beyond memory and needs no Close. A Zstd must not be
// copied after first use.
type Zstd struct {
	level int
	once  sync.Once
	enc   *zstd.Encoder
	err   error
}

// NewZstd returns a Zstd codec compressing at level 1 (fastest) to 22
// (smallest); 0 means ZstdDefault. Other levels give ErrLevel.
func NewZstd(level int) (*Zstd, error) {
	if level < 0 || level > ZstdBestCompression {
		return nil, fmt.Errorf("%w: zstd level %d is not in 1..22 (0 = default)", ErrLevel, level)
	}
	return &Zstd{level: level}, nil
}

// Compression returns tiff.CompressionZstd.
func (z *Zstd) Compression() uint16 { return tiff.CompressionZstd }

// Level returns the zstd level the codec compresses at.
func (z *Zstd) Level() int {
	if z.level == 0 {
		return ZstdDefault
	}
	return z.level
}

// Encode appends the zstd frame of src to dst.
func (z *Zstd) Encode(dst, src []byte) ([]byte, error) {
	z.once.Do(z.init)
	if z.err != nil {
		return dst, z.err
	}
	return z.enc.EncodeAll(src, dst), nil
}

func (z *Zstd) init() {
	z.enc, z.err = zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(z.Level())),
		zstd.WithEncoderConcurrency(0), // GOMAXPROCS states for EncodeAll
		zstd.WithEncoderCRC(false),
		zstd.WithZeroFrames(true), // an empty tile is still a valid frame
	)
	if z.err != nil {
		z.err = fmt.Errorf("%w: %v", ErrLevel, z.err)
	}
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
