package compress

import (
	"bytes"
	stdlzw "compress/lzw"
	"errors"
	"fmt"
	"io"

	"github.com/hhrutter/lzw"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// The lossless decompressors. Each decodes into out, the block's bytes,
// and returns how many its stream held: a stream that goes on past out is
// ErrCorrupt, one that ends early is returned short for decodeStream to
// judge, and none writes past out or allocates more than its codec's
// state.

// decodeLZW decodes TIFF's LZW with github.com/hhrutter/lzw (MSB-first
// codes, code widths growing one code early). A stream starting with a
// zero byte and an odd second byte, which no such stream can (its first
// code is Clear, 256), is the old-style LZW of libtiff before 1991 (its
// "compat" mode): LSB-first codes that grow without the early change, as
// GIF's, which the standard library's compress/lzw decodes.
func decodeLZW(_ *Decoder, out, src []byte) (int, error) {
	var r io.ReadCloser
	if len(src) >= 2 && src[0] == 0 && src[1]&1 != 0 {
		r = stdlzw.NewReader(bytes.NewReader(src), stdlzw.LSB, 8)
	} else {
		r = lzw.NewReader(bytes.NewReader(src), true)
	}
	defer r.Close()
	return readAtMost(r, out, "LZW")
}

// inflater is a zlib reader with its source, reused across blocks.
type inflater struct {
	src bytes.Reader
	zr  io.ReadCloser
}

// decodeDeflate decodes a zlib stream (Compression 8 and 32946) with
// github.com/klauspost/compress/zlib, checksum included.
func (d *Decoder) decodeDeflate(out, src []byte) (int, error) {
	in, _ := d.inflate.Get().(*inflater)
	if in == nil {
		in = new(inflater)
	}
	in.src.Reset(src)
	var err error
	if in.zr == nil {
		in.zr, err = zlib.NewReader(&in.src)
	} else {
		err = in.zr.(zlib.Resetter).Reset(&in.src, nil)
	}
	if err != nil {
		in.zr = nil // a reader whose Reset failed is not reused
		d.inflate.Put(in)
		return 0, fmt.Errorf("%w: Deflate: %w", ErrCorrupt, err)
	}
	n, err := readAtMost(in.zr, out, "Deflate")
	d.inflate.Put(in)
	return n, err
}

// readAtMost reads r into out, and requires r to end there at the latest:
// at io.EOF, which a decompressor returns at its stream's end code (a
// stream cut short gives io.ErrUnexpectedEOF, an error).
func readAtMost(r io.Reader, out []byte, codec string) (int, error) {
	n := 0
	for n < len(out) {
		k, err := r.Read(out[n:])
		n += k
		switch {
		case err == io.EOF:
			return n, nil
		case err != nil:
			return n, fmt.Errorf("%w: %s: %w", ErrCorrupt, codec, err)
		}
	}
	var one [1]byte
	switch _, err := io.ReadFull(r, one[:]); {
	case err == nil:
		return n, fmt.Errorf("%w: %s stream decodes to more than %d bytes", ErrCorrupt, codec, len(out))
	case !errors.Is(err, io.EOF):
		return n, fmt.Errorf("%w: %s: %w", ErrCorrupt, codec, err)
	}
	return n, nil
}

// decodeZstd decodes Zstandard frames (Compression 50000) with
// github.com/klauspost/compress/zstd. Its decoder, made once per Decoder,
// is used only through DecodeAll, which starts no goroutines, decodes
// into out (which serves as its window, so a frame's window size
// allocates nothing), and refuses to write past out's end.
func (d *Decoder) decodeZstd(out, src []byte) (int, error) {
	d.zstdOnce.Do(func() {
		d.zstd, d.zstdErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0), // GOMAXPROCS states for DecodeAll
			zstd.WithDecodeAllCapLimit(true),
		)
	})
	if d.zstdErr != nil {
		return 0, fmt.Errorf("%w: Zstd: %w", ErrCorrupt, d.zstdErr)
	}
	got, err := d.zstd.DecodeAll(src, out[:0:len(out)])
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: Zstd: %w", ErrCorrupt, err)
	case len(got) > 0 && &got[0] != &out[0]:
		return 0, fmt.Errorf("%w: Zstd decoded outside its buffer", ErrCorrupt) // DecodeAllCapLimit rules it out
	}
	return len(got), nil
}

// decodePackBits decodes PackBits (Compression 32773, TIFF 6.0 Section
// 9): a header byte n, then n+1 literal bytes for n in 0..127, one byte
// repeated 1-n times for n in -127..-1, and nothing for -128.
func decodePackBits(_ *Decoder, out, src []byte) (int, error) {
	o := 0
	for i := 0; i < len(src); {
		n := int(int8(src[i]))
		i++
		switch {
		case n >= 0:
			k := n + 1
			if k > len(src)-i {
				return o, fmt.Errorf("%w: PackBits literal of %d bytes past the end of the stream", ErrCorrupt, k)
			}
			if k > len(out)-o {
				return o, fmt.Errorf("%w: PackBits stream decodes to more than %d bytes", ErrCorrupt, len(out))
			}
			o += copy(out[o:], src[i:i+k])
			i += k
		case n != -128:
			k := 1 - n
			if i >= len(src) {
				return o, fmt.Errorf("%w: PackBits run without its byte", ErrCorrupt)
			}
			if k > len(out)-o {
				return o, fmt.Errorf("%w: PackBits stream decodes to more than %d bytes", ErrCorrupt, len(out))
			}
			b := src[i]
			i++
			for j := range out[o : o+k] {
				out[o+j] = b
			}
			o += k
		}
	}
	return o, nil
}
