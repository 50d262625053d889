package tiff_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/ndpitest"
	"github.com/ometiff-go/ometiff/tiff"
)

// ndpiPage reads the first page of an NDPI file of one page.
func ndpiPage(t *testing.T, p ndpitest.Page) (*tiff.Page, []byte) {
	t.Helper()
	file, err := ndpitest.File(p)
	require.NoError(t, err)
	f, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	return f.Pages[0], file
}

// TestNDPITiles: each restart interval of an NDPI strip is a tile whose
// stream decodes to the same samples as that part of the whole strip
// decoded at once (image/jpeg reads restart markers), the tiles of the
// last row and column reaching past the image as TIFF's edge tiles do:
// of a baseline frame (SOF0) and of an extended Huffman one (SOF1, whose
// 8-bit Huffman coding is baseline's), the tiles keeping the strip's.
func TestNDPITiles(t *testing.T) {
	for _, sof := range []byte{0xc0, 0xc1} {
		t.Run(fmt.Sprintf("SOF%d", sof-0xc0), func(t *testing.T) { testNDPITiles(t, sof) })
	}
}

func testNDPITiles(t *testing.T, sof byte) {
	const w, h = 224, 40 // 14 MCUs across in intervals of 7; 3 rows of MCUs, the last partly past the image
	more := func(_ *ifd.Builder, strip []byte, _ []uint64) {
		strip[bytes.Index(strip, []byte{0xff, 0xc0})+1] = sof
	}
	p, file := ndpiPage(t, ndpitest.Page{Width: w, Height: h, RGB: ndpitest.Pattern(w, h, 0), Interval: 7, Magnification: 20, More: more})
	_, err := p.Layout()
	require.NoError(t, err, "the strip")
	q, err := p.NDPITiles()
	require.NoError(t, err)
	l, err := q.Layout()
	require.NoError(t, err)
	assert.True(t, l.Tiled)
	assert.Equal(t, [4]int{112, 16, 2, 3}, [4]int{l.BlockWidth, l.BlockHeight, l.BlocksAcross, l.BlocksDown})
	hs, vs, err := q.YCbCrSubsampling()
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 2}, [2]int{hs, vs})
	_, hasStrips := q.Field(tiff.TagStripOffsets)
	assert.False(t, hasStrips)
	assert.Same(t, p, q.Original())
	assert.Same(t, p, p.Original())

	strip, err := p.ReadBlock(nil, 0)
	require.NoError(t, err)
	whole, err := jpeg.Decode(bytes.NewReader(strip))
	require.NoError(t, err)
	want := whole.(*image.YCbCr)
	for i := range l.Blocks() {
		b, err := q.Block(i)
		require.NoError(t, err)
		tile, err := q.ReadBlock(nil, i)
		require.NoError(t, err)
		assert.Equal(t, []byte{0xff, 0xd9}, tile[len(tile)-2:], "tile %d ends with EOI", i)
		assert.True(t, bytes.Contains(tile, []byte{0xff, sof, 0, 17, 8}), "tile %d: its frame of marker %#x", i, sof)
		assert.NotEqual(t, tile[len(tile)-4:len(tile)-2], file[b.Offset+b.Size-2:][:2], "tile %d: its restart marker dropped", i)
		m, err := jpeg.Decode(bytes.NewReader(tile))
		require.NoError(t, err, "tile %d", i)
		got := m.(*image.YCbCr)
		require.Equal(t, image.Rect(0, 0, 112, 16), got.Bounds())
		x0, y0 := i%2*112, i/2*16
		for y := range min(16, h-y0) {
			for x := range min(112, w-x0) {
				require.Equal(t, want.Y[want.YOffset(x0+x, y0+y)], got.Y[got.YOffset(x, y)], "tile %d at %d, %d", i, x, y)
				require.Equal(t, want.Cb[want.COffset(x0+x, y0+y)], got.Cb[got.COffset(x, y)], "tile %d at %d, %d", i, x, y)
				require.Equal(t, want.Cr[want.COffset(x0+x, y0+y)], got.Cr[got.COffset(x, y)], "tile %d at %d, %d", i, x, y)
			}
		}
	}
}

// TestNDPITilesRefused: strips NDPITiles cannot cut, and McuStarts that
// do not match the strip, are errors naming what is wrong.
func TestNDPITilesRefused(t *testing.T) {
	set := func(f func(b *ifd.Builder, strip []byte, starts []uint64)) func(b *ifd.Builder, strip []byte, starts []uint64) {
		return f
	}
	tests := []struct {
		name     string
		width    int
		interval int
		more     func(b *ifd.Builder, strip []byte, starts []uint64)
		is       error
		says     string
	}{
		{"no McuStarts", 64, 0, nil, tiff.ErrUnsupported, "has no McuStarts"},
		{"a start past 4 GiB, past the strip", 64, 2, set(func(b *ifd.Builder, _ []byte, starts []uint64) {
			b.AddLong(tiff.TagNDPIMcuStartsHigh, append(make([]uint32, len(starts)-1), 1)...)
		}), tiff.ErrMalformed, "is 4294968053, after 692, in a strip of 817 bytes"},
		{"high bytes of another count", 64, 2, set(func(b *ifd.Builder, _ []byte, starts []uint64) {
			b.AddLong(tiff.TagNDPIMcuStartsHigh, 0, 0)
		}), tiff.ErrMalformed, "has type LONG, 2 values, for 4 McuStarts"},
		{"a frame of another size", 64, 2, set(func(b *ifd.Builder, strip []byte, starts []uint64) {
			b.Remove(tiff.TagImageWidth)
			b.AddUint(tiff.TagImageWidth, 96)
		}), tiff.ErrMalformed, "a frame of 64 x 32 in a page of 96 x 32"},
		{"intervals straddling rows", 96, 3, set(func(b *ifd.Builder, strip []byte, starts []uint64) {
			i := bytes.Index(strip, []byte{0xff, 0xdd, 0, 4})
			strip[i+5] = 4 // 6 MCUs across in intervals of 4
		}), tiff.ErrUnsupported, "restart intervals of 4 MCUs in rows of 6: they straddle rows"},
		{"no restart interval", 96, 3, set(func(b *ifd.Builder, strip []byte, starts []uint64) {
			i := bytes.Index(strip, []byte{0xff, 0xdd, 0, 4})
			strip[i+1] = 0xfe // a comment
		}), tiff.ErrMalformed, "no restart interval"},
		{"progressive", 64, 2, set(func(b *ifd.Builder, strip []byte, starts []uint64) {
			strip[bytes.Index(strip, []byte{0xff, 0xc0})+1] = 0xc2
		}), tiff.ErrUnsupported, "a frame of marker 0xc2"},
		{"a start too few", 64, 2, set(func(b *ifd.Builder, _ []byte, starts []uint64) {
			b.Remove(tiff.TagNDPIMcuStarts)
			b.AddUint(tiff.TagNDPIMcuStarts, starts[:len(starts)-1]...)
		}), tiff.ErrMalformed, "3 McuStarts for 2 x 2 tiles of 32 x 16"},
		{"starts out of order", 64, 2, set(func(b *ifd.Builder, _ []byte, starts []uint64) {
			b.Remove(tiff.TagNDPIMcuStarts)
			b.AddUint(tiff.TagNDPIMcuStarts, starts[0], starts[2], starts[1], starts[3])
		}), tiff.ErrMalformed, "McuStarts[2]"},
		{"a start past the strip", 64, 2, set(func(b *ifd.Builder, strip []byte, starts []uint64) {
			b.Remove(tiff.TagNDPIMcuStarts)
			b.AddUint(tiff.TagNDPIMcuStarts, starts[0], starts[1], starts[2], uint64(len(strip)))
		}), tiff.ErrMalformed, "McuStarts[3]"},
		{"a header cut short", 64, 2, set(func(b *ifd.Builder, _ []byte, starts []uint64) {
			b.Remove(tiff.TagNDPIMcuStarts)
			b.AddUint(tiff.TagNDPIMcuStarts, starts[0]-1, starts[1], starts[2], starts[3])
		}), tiff.ErrMalformed, "the JPEG header"},
		{"LZW", 64, 2, set(func(b *ifd.Builder, _ []byte, _ []uint64) {
			b.Remove(tiff.TagCompression)
			b.AddShort(tiff.TagCompression, tiff.CompressionLZW)
		}),
			tiff.ErrUnsupported, "Compression 5, not JPEG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := ndpiPage(t, ndpitest.Page{Width: tt.width, Height: 32, RGB: ndpitest.Pattern(tt.width, 32, 1), Interval: tt.interval, More: tt.more})
			_, err := p.NDPITiles()
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.is), "%v", err)
			assert.ErrorContains(t, err, tt.says)
		})
	}
}

// FuzzNDPITiles reads arbitrary bytes as a TIFF and cuts each page into
// NDPI tiles: errors must be typed; the tiles of a page cut must lie
// within the file, and each tile read must be a stream of the header,
// the interval's bytes and EOI, which decodes or fails without a panic.
// A tile whose bytes do not end with its restart marker is refused as
// ErrMalformed when read, so a read may fail, but only so.
func FuzzNDPITiles(f *testing.F) {
	shifted := func(b *ifd.Builder, _ []byte, starts []uint64) {
		b.Remove(tiff.TagNDPIMcuStarts)
		b.AddUint(tiff.TagNDPIMcuStarts, starts[0], starts[1]+1, starts[2], starts[3])
	}
	for _, p := range []ndpitest.Page{
		{Width: 64, Height: 32, Interval: 2, Magnification: 20},
		{Width: 48, Height: 16, Interval: 3, Magnification: -1},
		{Width: 64, Height: 32, Interval: 2, More: shifted}, // tile 0 reads into tile 1's marker
	} {
		p.RGB = ndpitest.Pattern(p.Width, p.Height, 0)
		file, err := ndpitest.File(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(file)
	}
	classic, err := ndpitest.Layout{Classic: true}.File(ndpitest.Page{Width: 32, Height: 16, RGB: ndpitest.Pattern(32, 16, 0), Interval: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(classic.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, p := range file.Pages {
			q, err := p.NDPITiles()
			if err != nil {
				if !errors.Is(err, tiff.ErrMalformed) && !errors.Is(err, tiff.ErrUnsupported) {
					t.Fatalf("untyped error: %v", err)
				}
				continue
			}
			l, err := q.Layout() // the page's other fields may be wrong
			if err != nil {
				if !errors.Is(err, tiff.ErrMalformed) && !errors.Is(err, tiff.ErrUnsupported) {
					t.Fatalf("untyped error: %v", err)
				}
				continue
			}
			for i := range min(l.Blocks(), 16) {
				b, err := q.Block(i)
				if err != nil || b.Offset+b.Size > uint64(len(data)) {
					t.Fatalf("tile %d: %+v, %v, in %d bytes", i, b, err, len(data))
				}
				tile, err := q.ReadBlock(nil, i)
				if errors.Is(err, tiff.ErrMalformed) {
					continue
				}
				if err != nil {
					t.Fatalf("tile %d: untyped error: %v", i, err)
				}
				if len(tile) > len(data)+2 || tile[0] != 0xff || tile[1] != 0xd8 || tile[len(tile)-1] != 0xd9 {
					t.Fatalf("tile %d: %d bytes, % x ... % x", i, len(tile), tile[:2], tile[len(tile)-2:])
				}
				if cfg, err := jpeg.DecodeConfig(bytes.NewReader(tile)); err == nil && (cfg.Width != l.BlockWidth || cfg.Height != l.BlockHeight) {
					t.Fatalf("tile %d: a frame of %d x %d in tiles of %d x %d", i, cfg.Width, cfg.Height, l.BlockWidth, l.BlockHeight)
				}
			}
		}
	})
}

// TestNDPIPast4GiBChain: a classic TIFF past 4 GiB whose chain cannot be
// read says that NDPI's 64-bit offsets are not read.
func TestNDPIPast4GiBChain(t *testing.T) {
	head, err := tiff.Header{Order: binary.LittleEndian, FirstIFD: 64}.Append(nil)
	require.NoError(t, err)
	file := append(head, make([]byte, 128)...) // a directory of 0 entries, past which nothing is read
	_, err = tiff.Read(bytes.NewReader(file), 5<<30)
	require.Error(t, err)
	assert.ErrorContains(t, err, "a classic TIFF of 5368709120 bytes, past 4 GiB, and not in the 64-bit layout of a Hamamatsu NDPI")
	_, err = tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "NDPI")
}

// TestNDPIShiftedStarts: a tile whose McuStarts put it anywhere but
// between two restart markers does not end with its own, and is
// ErrMalformed, never another interval's samples.
func TestNDPIShiftedStarts(t *testing.T) {
	for _, shift := range []uint64{1, 2, 5} {
		p, _ := ndpiPage(t, ndpitest.Page{Width: 64, Height: 32, RGB: ndpitest.Pattern(64, 32, 2), Interval: 2,
			More: func(b *ifd.Builder, _ []byte, starts []uint64) {
				b.Remove(tiff.TagNDPIMcuStarts)
				b.AddUint(tiff.TagNDPIMcuStarts, starts[0], starts[1], starts[2]+shift, starts[3])
			}})
		q, err := p.NDPITiles()
		require.NoError(t, err)
		_, err = q.ReadBlock(nil, 0)
		require.NoError(t, err, "tile 0 is right")
		_, err = q.ReadBlock(nil, 1)
		require.ErrorIs(t, err, tiff.ErrMalformed, "shift %d", shift)
		assert.ErrorContains(t, err, "tile 1 of the NDPI strip does not end with restart marker 1: its McuStarts are wrong")
	}
}

// TestNDPILayout: a file in NDP.scan's layout (64-bit offsets, the high
// bytes after each directory, ASCII never inline) is read as such, below
// 4 GiB and past it, with the fields and tiles of the same pages written
// as a plain classic TIFF.
func TestNDPILayout(t *testing.T) {
	pages := []ndpitest.Page{
		{Width: 64, Height: 32, RGB: ndpitest.Pattern(64, 32, 0), Interval: 2, Magnification: 20,
			More: func(b *ifd.Builder, _ []byte, _ []uint64) { b.AddASCII(tiff.TagArtist, "abc") }}, // 4 bytes: out of line all the same
		{Width: 48, Height: 16, RGB: ndpitest.Pattern(48, 16, 1), Interval: 3, Magnification: -1},
	}
	tests := []struct {
		name   string
		layout ndpitest.Layout
		ndpi   bool
	}{
		{"classic", ndpitest.Layout{Classic: true}, false},
		{"NDPI", ndpitest.Layout{}, true},
		{"NDPI past 4 GiB", ndpitest.Layout{Hole: 5 << 30}, true},
	}
	var want [][]byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.layout.File(pages...)
			require.NoError(t, err)
			f, err := tiff.Read(s, s.Size)
			require.NoError(t, err)
			assert.Equal(t, tt.ndpi, f.NDPI)
			var dump strings.Builder
			require.NoError(t, tiff.Dump(&dump, f, tiff.DumpOptions{}))
			assert.Equal(t, tt.ndpi, strings.HasPrefix(dump.String(), "classic TIFF with NDPI's 64-bit offsets, little-endian"), dump.String())
			require.Len(t, f.Pages, 2)
			artist, _ := f.Pages[0].Text(tiff.TagArtist)
			assert.Equal(t, "abc", artist)
			software, _ := f.Pages[1].Text(tiff.TagSoftware)
			assert.Equal(t, "NDP.scan 3.2.4", software)
			strip, ok := f.Pages[1].Field(tiff.TagStripOffsets)
			require.True(t, ok)
			if tt.layout.Hole >= 1<<32 {
				assert.Equal(t, ifd.Long8, strip.Type, "a LONG with high bytes")
			}
			var got [][]byte
			for _, p := range f.Pages {
				q, err := p.NDPITiles()
				require.NoError(t, err)
				for i := range q.NumBlocks() {
					b, err := q.Block(i)
					require.NoError(t, err)
					assert.Greater(t, b.Offset, uint64(tt.layout.Hole))
					tile, err := q.ReadBlock(nil, i)
					require.NoError(t, err)
					got = append(got, tile)
				}
			}
			if want == nil {
				want = got
			}
			assert.Equal(t, want, got, "the tiles")
		})
	}
}

// TestNDPILayoutMalformed: in a file past 4 GiB, high bytes that do not
// fit their entry, a value they put past the end of the file, and a tag
// there twice (whose high bytes would be ambiguous) are ErrMalformed, in
// the first directory as in a later one: the format flag settled the
// layout, and no classic reading could address the file.
func TestNDPILayoutMalformed(t *testing.T) {
	page := ndpitest.Page{Width: 64, Height: 32, RGB: ndpitest.Pattern(64, 32, 0), Interval: 2, Magnification: 20}
	file, err := ndpitest.Layout{Hole: 5 << 30}.File(page, page)
	require.NoError(t, err)
	body := file.Parts[1]
	at := func(off uint64) []byte { return body.Data[off-uint64(body.At):] }
	first := binary.LittleEndian.Uint64(file.Parts[0].Data[4:])
	n := uint64(binary.LittleEndian.Uint16(at(first)))
	second := binary.LittleEndian.Uint64(at(first + 2 + 12*n))
	for _, dir := range []uint64{first, second} {
		entry := func(i int) []byte { return at(dir + 2 + 12*uint64(i)) }
		high := func(i int) []byte { return at(dir + 2 + 12*n + 8 + 4*uint64(i)) }
		require.Equal(t, tiff.TagImageWidth, binary.LittleEndian.Uint16(entry(0)), "entry 0, a SHORT inline")
		require.Equal(t, tiff.TagBitsPerSample, binary.LittleEndian.Uint16(entry(2)), "entry 2, 3 SHORTs out of line")
		value := uint64(binary.LittleEndian.Uint32(entry(2)[8:])) | uint64(binary.LittleEndian.Uint32(high(2)))<<32
		tests := []struct {
			name   string
			damage func()
			says   string
		}{
			{"high bytes of a SHORT", func() { high(0)[0] = 1 }, "has high bytes 0x1 for 1 inline values of type 3"},
			{"a value past the end", func() { high(2)[1] = 1 }, fmt.Sprintf("tag 258 of the NDPI directory at %d: 6 bytes at %d, past the end", dir, value+1<<40)},
			{"a tag twice", func() { binary.LittleEndian.PutUint16(entry(1), tiff.TagImageWidth) }, fmt.Sprintf("tag 256 of the NDPI directory at %d is there twice", dir)},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s at %d", tt.name, dir), func(t *testing.T) {
				saved := slices.Clone(body.Data)
				defer copy(body.Data, saved)
				tt.damage()
				_, err := tiff.Read(file, file.Size)
				require.ErrorIs(t, err, tiff.ErrMalformed)
				assert.ErrorContains(t, err, tt.says)
			})
		}
	}
}

// TestNDPIRewritten: an NDPI below 4 GiB whose second directory a tool
// rewrote (libtiff appends it, in the classic layout, and points the
// chain at it) is read as a classic TIFF, as Bio-Formats reads every NDPI
// below 4 GiB: no directory is lost.
func TestNDPIRewritten(t *testing.T) {
	page := ndpitest.Page{Width: 64, Height: 32, RGB: ndpitest.Pattern(64, 32, 0), Interval: 2, Magnification: 20}
	file, err := ndpitest.File(page, page)
	require.NoError(t, err)
	f, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	require.True(t, f.NDPI)
	b := new(ifd.Builder)
	for _, e := range f.Pages[1].Fields {
		if e.Tag == tiff.TagSoftware {
			e = ifd.Entry{Tag: e.Tag, Type: ifd.ASCII, Count: 7, Value: []byte("edited\x00")}
		}
		b.Add(e)
	}
	first := binary.LittleEndian.Uint64(file[4:])
	n := uint64(binary.LittleEndian.Uint16(file[first:]))
	binary.LittleEndian.PutUint32(file[first+2+12*n:], uint32(len(file)))
	file, err = b.Encode(file, int64(len(file)), 0, ifd.Format{})
	require.NoError(t, err)

	f, err = tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	assert.False(t, f.NDPI)
	assert.ErrorIs(t, f.NDPIFallback, tiff.ErrMalformed, "why the 64-bit layout failed")
	require.Len(t, f.Pages, 2)
	software, _ := f.Pages[1].Text(tiff.TagSoftware)
	assert.Equal(t, "edited", software)
	q, err := f.Pages[1].NDPITiles()
	require.NoError(t, err)
	_, err = q.ReadBlock(nil, 3)
	require.NoError(t, err)
}

// TestNDPIMcuStartsHigh: a strip past 4 GiB long has its starts' high 32
// bits in McuStartsHigh. The same page is written with 4 GiB of holes in
// the middle of its strip: the tiles past the hole, found through their
// high bits, read as the plain file's; the interval before the hole, 4 GiB
// long, is ErrMalformed, never a 4 GiB allocation.
func TestNDPIMcuStartsHigh(t *testing.T) {
	const gap = 1 << 32
	page := ndpitest.Page{Width: 128, Height: 64, RGB: ndpitest.Pattern(128, 64, 0), Interval: 2, Magnification: 20}
	strip, starts, err := ndpitest.Strip(page)
	require.NoError(t, err)
	k := len(starts) / 2
	plain, err := ndpitest.File(page)
	require.NoError(t, err)
	page.More = func(b *ifd.Builder, _ []byte, starts []uint64) {
		high := make([]uint32, len(starts))
		for i := k; i < len(high); i++ {
			high[i] = 1
		}
		b.AddLong(tiff.TagNDPIMcuStartsHigh, high...)
		b.Remove(tiff.TagStripByteCounts)
		b.AddUint(tiff.TagStripByteCounts, uint64(len(strip))+gap)
	}
	s, err := ndpitest.Layout{}.File(page)
	require.NoError(t, err)
	// Move all from the k-th interval on 4 GiB further: the offsets past
	// it keep their low 32 bits and gain 1 in their high ones.
	file := s.Parts[0].Data
	at := binary.LittleEndian.Uint32(file[4:]) // the first directory, after the strip
	split := bytes.Index(file, strip) + int(starts[k])
	binary.LittleEndian.PutUint32(file[8:], 1)
	n := int(binary.LittleEndian.Uint16(file[at:]))
	for i := range n {
		e := file[int(at)+2+12*i:]
		typ, count := ifd.Type(binary.LittleEndian.Uint16(e[2:])), int(binary.LittleEndian.Uint32(e[4:]))
		if typ == ifd.ASCII || count*typ.Size() > 4 {
			binary.LittleEndian.PutUint32(file[int(at)+2+12*n+8+4*i:], 1)
		}
	}
	big := &ndpitest.Sparse{Size: s.Size + gap, Parts: []ndpitest.Part{{At: 0, Data: file[:split]}, {At: int64(split) + gap, Data: file[split:]}}}

	want, err := tiff.Read(bytes.NewReader(plain), int64(len(plain)))
	require.NoError(t, err)
	pq, err := want.Pages[0].NDPITiles()
	require.NoError(t, err)
	f, err := tiff.Read(big, big.Size)
	require.NoError(t, err)
	q, err := f.Pages[0].NDPITiles()
	require.NoError(t, err)
	require.Equal(t, pq.NumBlocks(), q.NumBlocks())
	_, err = q.Block(k - 1)
	require.ErrorIs(t, err, tiff.ErrMalformed)
	assert.ErrorContains(t, err, fmt.Sprintf("restart interval %d of the NDPI page at %d takes %d bytes", k-1, f.Pages[0].Offset, gap+starts[k]-starts[k-1]))
	_, err = q.ReadBlock(nil, k-1)
	require.ErrorIs(t, err, tiff.ErrMalformed)
	for i := k; i < q.NumBlocks(); i++ {
		b, err := q.Block(i)
		require.NoError(t, err)
		assert.Greater(t, b.Offset, uint64(gap))
		wantTile, err := pq.ReadBlock(nil, i)
		require.NoError(t, err)
		tile, err := q.ReadBlock(nil, i)
		require.NoError(t, err)
		assert.Equal(t, wantTile, tile, "tile %d", i)
	}
}
