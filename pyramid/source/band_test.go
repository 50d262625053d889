package source

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/ctxtest"
	"github.com/ometiff-go/ometiff/tiff"
)

// readAll reads every band of the first page of file, checking that the
// bands come top to bottom in block-height steps, and returns the rows.
func readAll(t testing.TB, file []byte, opts Options) ([]byte, error) {
	t.Helper()
	f, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		return nil, err
	}
	r, err := NewBandReader(context.Background(), f.Pages[0], opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []byte
	for {
		y, band, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r.Close()
		}
		if err != nil {
			return out, err
		}
		require.Equal(t, len(out)/r.RowBytes(), y, "bands in order")
		require.Zero(t, len(band)%r.RowBytes())
		out = append(out, band...)
	}
}

// bandCases are pages of every layout the band reader handles.
func bandCases() []testPage {
	lzw, deflate, zstd := mustCodec(tiff.CompressionLZW), mustCodec(tiff.CompressionDeflate), mustCodec(tiff.CompressionZstd)
	return []testPage{
		{width: 100, height: 70, samples: 1, bits: 16, tileW: 32, tileH: 16, codec: lzw, predictor: 2},
		{width: 64, height: 64, samples: 3, bits: 8, tileW: 16, tileH: 16, codec: deflate, predictor: 2},
		{width: 33, height: 17, samples: 3, bits: 8, rowsPerStrip: 5, codec: lzw},
		{width: 33, height: 17, samples: 3, bits: 16, rowsPerStrip: 4, planar: true, codec: deflate, predictor: 2},
		{width: 40, height: 30, samples: 2, bits: 32, float: true, tileW: 16, tileH: 16, codec: zstd, predictor: 3},
		{width: 21, height: 9, samples: 1, bits: 64, float: true, codec: lzw, predictor: 3},
		{width: 50, height: 40, samples: 4, bits: 8, tileW: 16, tileH: 32, planar: true, codec: zstd},
		{width: 48, height: 48, samples: 1, bits: 32, tileW: 16, tileH: 16, sparse: []int{1, 5}},
		// Sparse blocks that end a band, and a page of nothing else: the
		// pipeline hands a 0-byte block on at once.
		{width: 48, height: 48, samples: 3, bits: 8, tileW: 16, tileH: 16, sparse: []int{2, 3, 4, 5, 8}},
		{width: 16, height: 16, samples: 1, bits: 8, rowsPerStrip: 16, sparse: []int{0}},
		{width: 10, height: 9, samples: 1, bits: 16, rowsPerStrip: 2, codec: lzw, sparse: []int{1, 4}},
		{width: 20, height: 10, samples: 1, bits: 8, rowsPerStrip: 1, codec: mustCodec(tiff.CompressionNone)},
		// Last strips stored with more rows than the image has, as some
		// writers pad them: to fewer rows than the strips', and to all.
		{width: 33, height: 17, samples: 3, bits: 8, rowsPerStrip: 8, padLast: 3, codec: deflate},
		{width: 33, height: 19, samples: 3, bits: 16, rowsPerStrip: 8, padLast: 2, planar: true, codec: lzw, predictor: 2},
		{width: 33, height: 17, samples: 3, bits: 16, rowsPerStrip: 5, padLast: 4, planar: true, codec: zstd, predictor: 2},
	}
}

// TestBandReader reads pages of every layout, in both byte orders, classic
// and BigTIFF, at several worker counts: the rows must be the image's,
// the same at every count.
func TestBandReader(t *testing.T) {
	for i, p := range bandCases() {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			p.seed = i
			file, images := fileOf(t, order, order == binary.BigEndian, p)
			for _, workers := range []int{1, 2, 7} {
				t.Run(fmt.Sprintf("%d/%v/%d workers", i, order, workers), func(t *testing.T) {
					got, err := readAll(t, file, Options{Workers: workers})
					require.NoError(t, err)
					require.Equal(t, images[0], got)
				})
			}
		}
	}
}

// TestBandReaderRows reads pages in bands of several heights: each band
// but the last has the height asked for rounded down to whole blocks (at
// least one, at most the page's), and the rows are the image's.
func TestBandReaderRows(t *testing.T) {
	for i, p := range bandCases() {
		p.seed = i
		file, images := fileOf(t, binary.BigEndian, false, p)
		page := pageOf(t, file)
		l, err := page.Layout()
		require.NoError(t, err)
		for _, rows := range []int{0, 1, l.BlockHeight + 1, 2 * l.BlockHeight, 3*l.BlockHeight - 1, 10000} {
			for _, workers := range []int{1, 3} {
				t.Run(fmt.Sprintf("%d/%d rows/%d workers", i, rows, workers), func(t *testing.T) {
					want := max(1, rows/l.BlockHeight) * l.BlockHeight
					want = min(want, l.Height)
					r, err := NewBandReader(context.Background(), page, Options{Workers: workers, Rows: rows})
					require.NoError(t, err)
					defer r.Close()
					var got []byte
					for {
						y, band, err := r.Next()
						if errors.Is(err, io.EOF) {
							break
						}
						require.NoError(t, err)
						require.Equal(t, len(got)/r.RowBytes(), y)
						height := len(band) / r.RowBytes()
						if y+height < l.Height {
							require.Equal(t, want, height, "band at %d", y)
						} else {
							require.LessOrEqual(t, height, want, "the last band")
						}
						got = append(got, band...)
					}
					require.Equal(t, images[0], got)
				})
			}
		}
	}
}

// TestBandReaderIsReader copies the rows with io.Copy (which uses WriteTo)
// and with reads of odd sizes.
func TestBandReaderIsReader(t *testing.T) {
	p := bandCases()[2]
	file, images := fileOf(t, binary.LittleEndian, false, p)
	f, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	for _, copyWith := range []func(w io.Writer, r *BandReader) (int64, error){
		func(w io.Writer, r *BandReader) (int64, error) { return io.Copy(w, r) },
		func(w io.Writer, r *BandReader) (int64, error) {
			return io.CopyBuffer(w, struct{ io.Reader }{r}, make([]byte, 7)) // Read only
		},
	} {
		r, err := NewBandReader(context.Background(), f.Pages[0], Options{Workers: 2})
		require.NoError(t, err)
		var b bytes.Buffer
		n, err := copyWith(&b, r)
		require.NoError(t, err)
		assert.Equal(t, int64(len(images[0])), n)
		assert.Equal(t, images[0], b.Bytes())
		require.NoError(t, r.Close())
		_, _, err = r.Next()
		assert.ErrorIs(t, err, ErrClosed)
	}
}

// pageOf reads a file and returns its first page.
func pageOf(t testing.TB, file []byte) *tiff.Page {
	t.Helper()
	f, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	return f.Pages[0]
}

// rawPage is a page of a file whose fields are given; its blocks lie in
// the 4 KB after the directory.
func rawPage(t testing.TB, build func(b *ifd.Builder)) []byte {
	var b ifd.Builder
	build(&b)
	h := tiff.Header{FirstIFD: 8}
	file, err := h.Append(nil)
	require.NoError(t, err)
	file, err = b.Encode(file, 8, 0, ifd.Format{})
	require.NoError(t, err)
	return append(file, make([]byte, 4096)...)
}

// strip is a file of one 8 x 1 strip of samples of the bits (none: the
// default, 1) and compression (none: 1).
func strip(t testing.TB, bits, compression uint16) []byte {
	return rawPage(t, func(b *ifd.Builder) {
		b.AddShort(tiff.TagImageWidth, 8)
		b.AddShort(tiff.TagImageLength, 1)
		if bits > 0 {
			b.AddShort(tiff.TagBitsPerSample, bits)
		}
		if compression > 0 {
			b.AddShort(tiff.TagCompression, compression)
		}
		b.AddShort(tiff.TagStripOffsets, 200)
		b.AddShort(tiff.TagStripByteCounts, 1)
	})
}

// TestBandReaderBilevel reads 1-bit samples, in rows that each start a
// byte, as bytes of 0 and 1, and a 1-bit mask of GDAL's layout (Deflate
// tiles) the same.
func TestBandReaderBilevel(t *testing.T) {
	stored := []byte{0b10110000, 0b01000000, 0xff, 0xc0, 0b00000001, 0b10111111}
	want := []byte{
		1, 0, 1, 1, 0, 0, 0, 0, 0, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		0, 0, 0, 0, 0, 0, 0, 1, 1, 0,
	}
	for _, rows := range []uint16{1, 2, 3} {
		file := rawPage(t, func(b *ifd.Builder) {
			b.AddShort(tiff.TagImageWidth, 10)
			b.AddShort(tiff.TagImageLength, 3)
			b.AddShort(tiff.TagBitsPerSample, 1)
			b.AddShort(tiff.TagRowsPerStrip, rows)
			var offsets, counts []uint16
			for y := uint16(0); y < 3; y += rows {
				offsets, counts = append(offsets, 200+2*y), append(counts, 2*min(rows, 3-y))
			}
			b.AddShort(tiff.TagStripOffsets, offsets...)
			b.AddShort(tiff.TagStripByteCounts, counts...)
		})
		copy(file[200:], stored)
		got, err := readAll(t, file, Options{Workers: 2})
		require.NoError(t, err)
		assert.Equal(t, want, got, "%d rows a strip", rows)
	}
	// WhiteIsZero: as stored, as tifffile reads it (it writes bool masks
	// so, True 1); a sparse strip is stored zeros.
	file := rawPage(t, func(b *ifd.Builder) {
		b.AddShort(tiff.TagImageWidth, 10)
		b.AddShort(tiff.TagImageLength, 3)
		b.AddShort(tiff.TagBitsPerSample, 1)
		b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricWhiteIsZero)
		b.AddShort(tiff.TagRowsPerStrip, 2)
		b.AddShort(tiff.TagStripOffsets, 200, 0)
		b.AddShort(tiff.TagStripByteCounts, 4, 0)
	})
	copy(file[200:], stored)
	got, err := readAll(t, file, Options{Workers: 2})
	require.NoError(t, err)
	assert.Equal(t, append(want[:20:20], make([]byte, 10)...), got, "WhiteIsZero")

	mask := testPage{width: 20, height: 18, samples: 1, bits: 8, tileW: 16, tileH: 16}
	im := mask.pixels()
	for i := range im {
		im[i] &= 1
	}
	var tiles [][]byte
	for _, tile := range mask.blocks(im, binary.LittleEndian) { // 16 x 16 bytes of 0 and 1
		packed := make([]byte, 2*16)
		for i, v := range tile {
			packed[i/8] |= v << (7 - i%8)
		}
		enc := &compress.TileEncoder{Codec: mustCodec(tiff.CompressionDeflate), Width: 2, Format: compress.Format{BitsPerSample: 8, SamplesPerPixel: 1}}
		stored, err := enc.Encode(nil, packed)
		require.NoError(t, err)
		tiles = append(tiles, stored)
	}
	file = rawPage(t, func(b *ifd.Builder) {
		b.AddLong(tiff.TagNewSubfileType, tiff.SubfileMask)
		b.AddShort(tiff.TagImageWidth, 20)
		b.AddShort(tiff.TagImageLength, 18)
		b.AddShort(tiff.TagBitsPerSample, 1)
		b.AddShort(tiff.TagCompression, tiff.CompressionDeflate)
		b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricMask)
		b.AddShort(tiff.TagTileWidth, 16)
		b.AddShort(tiff.TagTileLength, 16)
		var offsets, counts []uint16
		at := uint16(400)
		for _, tile := range tiles {
			offsets, counts = append(offsets, at), append(counts, uint16(len(tile)))
			at += uint16(len(tile))
		}
		b.AddShort(tiff.TagTileOffsets, offsets...)
		b.AddShort(tiff.TagTileByteCounts, counts...)
	})
	at := 400
	for _, tile := range tiles {
		at += copy(file[at:], tile)
	}
	got, err = readAll(t, file, Options{Workers: 1})
	require.NoError(t, err)
	assert.Equal(t, im, got)
}

// TestBandReaderRefuses: pages whose layout is wrong or whose band would
// pass the limit are refused by NewBandReader, before it allocates
// anything like the band: a 1 KB file that claims 10^10 pixels costs
// nothing.
func TestBandReaderRefuses(t *testing.T) {
	_, err := NewBandReader(context.Background(), nil, Options{})
	assert.ErrorIs(t, err, ErrUnsupported, "no page")
	huge := func(w, h uint32, tiles bool) []byte {
		return rawPage(t, func(b *ifd.Builder) {
			b.AddLong(tiff.TagImageWidth, w)
			b.AddLong(tiff.TagImageLength, h)
			b.AddShort(tiff.TagBitsPerSample, 8)
			if tiles {
				b.AddLong(tiff.TagTileWidth, w)
				b.AddLong(tiff.TagTileLength, h)
				b.AddLong(tiff.TagTileOffsets, 200)
				b.AddLong(tiff.TagTileByteCounts, 10)
				return
			}
			b.AddLong(tiff.TagStripOffsets, 200)
			b.AddLong(tiff.TagStripByteCounts, 10)
		})
	}
	tests := []struct {
		name string
		file []byte
		want error
	}{
		{"10^10 pixels in one strip", huge(100000, 100000, false), ErrSize},
		{"a strip of 4 G pixels", huge(1<<32-1, 1, false), ErrSize},
		{"one tile of 10^10 pixels", huge(100000, 100000, true), ErrSize},
		{"tile count off", rawPage(t, func(b *ifd.Builder) {
			b.AddLong(tiff.TagImageWidth, 100000)
			b.AddLong(tiff.TagImageLength, 100000)
			b.AddShort(tiff.TagTileWidth, 256)
			b.AddShort(tiff.TagTileLength, 256)
			b.AddLong(tiff.TagTileOffsets, 200)
			b.AddLong(tiff.TagTileByteCounts, 10)
		}), tiff.ErrMalformed},
		{"3-bit samples", strip(t, 3, 0), compress.ErrFormat},
		{"JPEG 2000", strip(t, 8, tiff.CompressionJPEG2000Aperio), compress.ErrCompression},
		{"YCbCr planes", rawPage(t, func(b *ifd.Builder) {
			b.AddShort(tiff.TagImageWidth, 8)
			b.AddShort(tiff.TagImageLength, 1)
			b.AddShort(tiff.TagBitsPerSample, 8, 8, 8)
			b.AddShort(tiff.TagSamplesPerPixel, 3)
			b.AddShort(tiff.TagCompression, tiff.CompressionJPEG)
			b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricYCbCr)
			b.AddShort(tiff.TagPlanarConfiguration, tiff.PlanarSeparate)
			b.AddShort(tiff.TagStripOffsets, 200, 201, 202)
			b.AddShort(tiff.TagStripByteCounts, 1, 1, 1)
		}), ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := pageOf(t, tt.file)
			var err error
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			_, err = NewBandReader(context.Background(), page, Options{})
			runtime.ReadMemStats(&ms1)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), "source: ")
			assert.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(1<<20), "bytes allocated")
		})
	}
	// A caller's limit below the default refuses a page the default takes.
	file, _ := fileOf(t, binary.LittleEndian, false, testPage{width: 100, height: 70, samples: 1, bits: 16, tileW: 32, tileH: 16})
	_, err = NewBandReader(context.Background(), pageOf(t, file), Options{MaxBandBytes: 100 * 16 * 2})
	require.NoError(t, err)
	_, err = NewBandReader(context.Background(), pageOf(t, file), Options{MaxBandBytes: 100*16*2 - 1})
	require.ErrorIs(t, err, ErrSize)
}

// TestBandReaderBadBlocks: blocks past the end of the file, truncated, or
// whose streams do not decode give typed errors from Next, at every
// worker count, and the reader stops.
func TestBandReaderBadBlocks(t *testing.T) {
	p := testPage{width: 64, height: 64, samples: 1, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionLZW)}
	good, _ := fileOf(t, binary.LittleEndian, false, p)
	f, err := tiff.Read(bytes.NewReader(good), int64(len(good)))
	require.NoError(t, err)
	b9, err := f.Pages[0].Block(9)
	require.NoError(t, err)

	corrupt := bytes.Clone(good)
	copy(corrupt[b9.Offset:], bytes.Repeat([]byte{0xff}, int(b9.Size)))
	truncated := bytes.Clone(good)
	// Tile 9's byte count reaches past the end of the file.
	counts, _ := f.Pages[0].Field(tiff.TagTileByteCounts)
	at := bytes.Index(good, counts.Value) + 9*counts.Type.Size()
	binary.LittleEndian.PutUint16(truncated[at:], uint16(len(good)))
	short := bytes.Clone(good)
	binary.LittleEndian.PutUint16(short[at:], uint16(b9.Size/2))

	for name, tc := range map[string]struct {
		file []byte
		want error
	}{
		"stream does not decode": {corrupt, compress.ErrCorrupt},
		"block past the end":     {truncated, tiff.ErrMalformed},
		"truncated stream":       {short, compress.ErrCorrupt},
	} {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", name, workers), func(t *testing.T) {
				_, err := readAll(t, tc.file, Options{Workers: workers})
				require.ErrorIs(t, err, tc.want)
				assert.Contains(t, err.Error(), "source: ")
			})
		}
	}
}

// TestBandReaderContextUnannounced: a context done stops the reader at
// the next band, whether or not its callback has run, at every Workers.
func TestBandReaderContextUnannounced(t *testing.T) {
	p := testPage{width: 64, height: 256, samples: 1, bits: 8, rowsPerStrip: 8, codec: mustCodec(tiff.CompressionDeflate)}
	file, _ := fileOf(t, binary.LittleEndian, false, p)
	page := pageOf(t, file)
	for _, workers := range []int{1, 4} {
		ctx := ctxtest.New()
		r, err := NewBandReader(ctx, page, Options{Workers: workers, Rows: 8})
		require.NoError(t, err)
		_, _, err = r.Next()
		require.NoError(t, err)
		ctx.Cancel()
		_, _, err = r.Next()
		assert.ErrorIs(t, err, context.Canceled, "Workers %d", workers)
		assert.ErrorIs(t, r.Close(), context.Canceled, "Workers %d", workers)
	}
}

// TestBandReaderContext: a cancelled context stops the reader with its
// cause, and no goroutine outlives Close, read to the end or not.
func TestBandReaderContext(t *testing.T) {
	p := testPage{width: 64, height: 256, samples: 1, bits: 8, rowsPerStrip: 8, codec: mustCodec(tiff.CompressionDeflate)}
	file, _ := fileOf(t, binary.LittleEndian, false, p)
	synctest.Test(t, func(t *testing.T) {
		page := pageOf(t, file)
		cause := errors.New("user gave up")
		ctx, cancel := context.WithCancelCause(context.Background())
		r, err := NewBandReader(ctx, page, Options{Workers: 4})
		require.NoError(t, err)
		_, _, err = r.Next()
		require.NoError(t, err)
		cancel(cause)
		synctest.Wait()
		var last error
		for range 40 {
			if _, _, last = r.Next(); last != nil {
				break
			}
		}
		assert.ErrorIs(t, last, cause)
		assert.ErrorIs(t, r.Close(), cause)

		for _, workers := range []int{1, 4} {
			r, err := NewBandReader(context.Background(), page, Options{Workers: workers})
			require.NoError(t, err)
			_, _, err = r.Next() // then stop early
			require.NoError(t, err)
			require.NoError(t, r.Close())
		}
		// Read to its end, a reader ends its goroutines before Close.
		r, err = NewBandReader(context.Background(), page, Options{Workers: 4})
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, r)
		require.NoError(t, err)
		synctest.Wait()
		_, _, err = r.Next()
		assert.ErrorIs(t, err, io.EOF, "still at its end")
		assert.NoError(t, r.Err())
		// Not closed: synctest.Test fails if a goroutine of the bubble is
		// left.
	})
}

// TestBandReaderDropped: a reader dropped without Close, its bands only
// begun, has its decoding goroutines stopped once the garbage collector
// finds it unreachable (they waited for a Next until the context ended,
// which context.Background never does).
func TestBandReaderDropped(t *testing.T) {
	p := testPage{width: 64, height: 256, samples: 1, bits: 8, rowsPerStrip: 8, codec: mustCodec(tiff.CompressionDeflate)}
	file, _ := fileOf(t, binary.LittleEndian, false, p)
	page := pageOf(t, file)
	before := runtime.NumGoroutine()
	func() {
		r, err := NewBandReader(context.Background(), page, Options{Workers: 4, Rows: 8})
		require.NoError(t, err)
		_, _, err = r.Next()
		require.NoError(t, err)
		require.Greater(t, runtime.NumGoroutine(), before, "the decoding goroutines run")
	}()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left by the dropped reader")
}

// TestBandReaderMemory reads a short and a tall page and samples the live
// heap after every band: its peak must not grow with the page's height.
func TestBandReaderMemory(t *testing.T) {
	peak := func(height int) uint64 {
		p := testPage{width: 512, height: height, samples: 1, bits: 16, tileW: 64, tileH: 16, codec: mustCodec(tiff.CompressionLZW)}
		file, _ := fileOf(t, binary.LittleEndian, false, p)
		page := pageOf(t, file)
		live := func() uint64 {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		base, top := live(), uint64(0)
		r, err := NewBandReader(context.Background(), page, Options{Workers: 2})
		require.NoError(t, err)
		for {
			_, _, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			top = max(top, live()-min(live(), base))
		}
		require.NoError(t, r.Close())
		runtime.KeepAlive(file)
		return top
	}
	short, tall := peak(512), peak(4096)
	band := uint64(512 * 16 * 2)
	t.Logf("peak live heap: %d bytes for 512 rows, %d for 4096 (a band is %d)", short, tall, band)
	// The bands of the ring, stored and decoded blocks in flight (each
	// bounded by the ring's bytes), and the state of the LZW decoders
	// running (tens of KiB each, whatever the band).
	assert.Less(t, tall, 8*band+256<<10, "a few bands, blocks in flight, codec state")
	// Which LZW decoders are live when the heap is sampled varies by up
	// to ten decoders' state (about 22 KiB each) on a loaded machine; a
	// leak of one band per band read would add megabytes here (the stored
	// blocks the pipeline kept for reuse grew to its default bound of 4 MiB
	// before that bound followed the ring).
	assert.Less(t, tall, short+4*band+256<<10, "no growth with the height")
}

// TestHalfBits converts every half float's value back to its bits, and
// values between halves as GDAL stores them in a 16-bit float band:
// rounded toward zero, infinite past the largest (read back from files
// gdal_create -ot Float32 -co NBITS=16 -burn V wrote, GDAL 3.6).
func TestHalfBits(t *testing.T) {
	for h := range 1 << 16 {
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaNs: one bit pattern stands for them all
		}
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(widenHalves(nil, binary.LittleEndian.AppendUint16(nil, uint16(h))))))
		require.Equal(t, uint16(h), halfBits(v), "%#04x (%g)", h, v)
	}
	tests := []struct {
		v    float64
		want uint16
	}{
		{-9999, 0xf0e1},    // -9992
		{2049.9, 0x6800},   // 2048
		{0.000123, 0x0807}, // 0.00012290...
		{1.00097, 0x3c00},  // 1
		{65535, 0x7bff},    // 65504, the largest
		{70000, 0x7c00},    // infinite
		{1e-6, 0x0010},     // a subnormal: 16 x 2^-24
		{3e-8, 0x0000},     // below the smallest subnormal
		{math.NaN(), 0x7e00},
		{math.Inf(-1), 0xfc00},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, halfBits(tt.v), "%g", tt.v)
	}
}

// TestBandReaderNoData: the sparse blocks of a page with GDAL's no-data
// value hold it, as GDAL and tifffile read them; the other blocks are as
// stored.
func TestBandReaderNoData(t *testing.T) {
	nodata := func(v string) func(*ifd.Builder) { return ascii(tiff.TagGDALNoData, v) }
	// A float32 page of two 16 x 16 tiles, the second sparse.
	p := testPage{width: 32, height: 16, samples: 1, bits: 32, float: true, tileW: 16, tileH: 16, sparse: []int{1}, more: nodata(" -9999.5 ")}
	file, images := fileOf(t, binary.LittleEndian, false, p)
	want := images[0]
	for y := range 16 {
		for x := 16; x < 32; x++ {
			binary.LittleEndian.PutUint32(want[4*(32*y+x):], math.Float32bits(-9999.5))
		}
	}
	for _, workers := range []int{1, 3} {
		got, err := readAll(t, file, Options{Workers: workers})
		require.NoError(t, err)
		assert.Equal(t, want, got, "%d workers", workers)
	}
	// A half-float strip of nothing else holds the value's half.
	file, _ = fileOf(t, binary.LittleEndian, false, testPage{width: 3, height: 2, samples: 1, bits: 16, float: true, sparse: []int{0}, more: nodata("-9999")})
	got, err := readAll(t, file, Options{})
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{0xe1, 0xf0}, 6), got, "-9999 is the half -9992, 0xf0e1, as GDAL stores it")
	// An int16 strip of nothing else.
	file, _ = fileOf(t, binary.BigEndian, false, testPage{width: 5, height: 3, samples: 1, bits: 16, signed: true, sparse: []int{0}, more: nodata("-5")})
	got, err = readAll(t, file, Options{})
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{0xfb, 0xff}, 15), got)

	tests := []struct {
		text   string
		layout tiff.Layout
		want   []byte
	}{
		{"-5", tiff.Layout{BitsPerSample: 16, SampleFormat: tiff.SampleFormatInt}, []byte{0xfb, 0xff}},
		{"255", tiff.Layout{BitsPerSample: 8, SampleFormat: tiff.SampleFormatUint}, []byte{0xff}},
		{"1", tiff.Layout{BitsPerSample: 1, SampleFormat: tiff.SampleFormatUint}, []byte{1}},
		{"nan", tiff.Layout{BitsPerSample: 64, SampleFormat: tiff.SampleFormatFloat}, binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))},
		{"0", tiff.Layout{BitsPerSample: 32, SampleFormat: tiff.SampleFormatFloat}, nil},
		{"256", tiff.Layout{BitsPerSample: 8, SampleFormat: tiff.SampleFormatUint}, nil}, // not held: zeros
		{"-1", tiff.Layout{BitsPerSample: 16, SampleFormat: tiff.SampleFormatUint}, nil},
		{"2.5", tiff.Layout{BitsPerSample: 16, SampleFormat: tiff.SampleFormatInt}, nil},
		{"-32769", tiff.Layout{BitsPerSample: 16, SampleFormat: tiff.SampleFormatInt}, nil},
		{"none", tiff.Layout{BitsPerSample: 8, SampleFormat: tiff.SampleFormatUint}, nil},
		{"1.5", tiff.Layout{BitsPerSample: 16, SampleFormat: tiff.SampleFormatFloat}, []byte{0x00, 0x3e}},
		{"-inf", tiff.Layout{BitsPerSample: 16, SampleFormat: tiff.SampleFormatFloat}, []byte{0x00, 0xfc}},
		{"nan", tiff.Layout{BitsPerSample: 16, SampleFormat: tiff.SampleFormatFloat}, []byte{0x00, 0x7e}},
		{"1e6", tiff.Layout{BitsPerSample: 16, SampleFormat: tiff.SampleFormatFloat}, []byte{0x00, 0x7c}}, // beyond the halves: infinite
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, noDataSample(tt.text, tt.layout), "%q as %d bits", tt.text, tt.layout.BitsPerSample)
	}
}
