package source

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/ndpitest"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// ndpiSlide is an NDPI file as NDP.scan writes one: two focal planes of
// 256 x 64 (restart intervals of 4 MCUs: tiles of 64 x 16), each followed
// by a reduced level, then the macro image and the map.
func ndpiSlide(t testing.TB) []byte {
	t.Helper()
	file, err := ndpitest.File(ndpiPages()...)
	require.NoError(t, err)
	return file
}

// ndpiPages are ndpiSlide's pages.
func ndpiPages() []ndpitest.Page {
	const props = "Objective.Lens.Magnificant=20\r\nNDP.S/N=123456\r\nProduct=NanoZoomer S60\r\n"
	page := func(w, h, interval int, mag float32, z int32, seed int) ndpitest.Page {
		return ndpitest.Page{Width: w, Height: h, RGB: ndpitest.Pattern(w, h, seed), Interval: interval, Magnification: mag, ZOffset: z,
			PixelsPerCm: 10000 / 0.5 * float64(w) / 256, Properties: props}
	}
	return []ndpitest.Page{page(256, 64, 4, 20, -500, 0), page(128, 32, 0, 10, -500, 0),
		page(256, 64, 4, 20, 1000, 7), page(128, 32, 0, 10, 1000, 7),
		page(96, 32, 0, -1, 0, 3), page(64, 16, 0, -2, 0, 5)}
}

// TestNDPIMapping: the pages of page 0's size are focal planes along Z,
// read as tiles of their restart intervals; the reduced levels are left
// out; the macro and the map are images so named; the objective, the
// pixel size, the focal planes' spacing and the scanner's properties are
// kept.
func TestNDPIMapping(t *testing.T) {
	f, err := mapFile(t, ndpiSlide(t), "slide.ndpi", Options{})
	require.NoError(t, err)
	assert.Equal(t, NDPI, f.Kind)
	assert.Equal(t, []string{`"" 256x64 Z2 C1 T1 XYCZT uint8 x3: 0:* 2:*`, `"macro" 96x32 Z1 C1 T1 XYCZT uint8 x3: 4:*`, `"map" 64x16 Z1 C1 T1 XYCZT uint8 x3: 5:*`},
		summary(f))
	s := f.Images[0].Spec
	assert.InDelta(t, 0.5, s.PhysicalSizeX, 1e-6)
	assert.InDelta(t, 1.5, s.PhysicalSizeZ, 1e-9, "1500 nm between the planes")
	assert.Equal(t, "µm", s.PhysicalSizeZUnit)
	require.NotNil(t, s.Instrument)
	assert.Equal(t, 20.0, s.Instrument.Objectives[0].NominalMagnification)
	assert.Subset(t, s.Annotations, []pyramid.KeyValue{{Key: "Make", Value: "Hamamatsu"}, {Key: "NDP.S/N", Value: "123456"},
		{Key: "Product", Value: "NanoZoomer S60"}, {Key: "Objective.Lens.Magnificant", Value: "20"}})
	assert.Empty(t, f.Images[0].Notes)
	for _, pl := range f.Images[0].Planes {
		l, err := pl.Page.Layout()
		require.NoError(t, err)
		assert.True(t, l.Tiled)
		assert.Equal(t, [2]int{64, 16}, [2]int{l.BlockWidth, l.BlockHeight})
		assert.Empty(t, pl.Levels)
	}
	assert.Nil(t, f.Images[1].Spec.Instrument, "the macro's magnification is -1")
}

// TestNDPIPixels: a focal plane read tile by tile gives the pixels the
// whole strip decodes to, but in a tile's first and last rows and
// columns, whose chroma upsampling lacks the next tile's chroma, as in
// every reader that reads NDPI so (tifffile, OpenSlide).
func TestNDPIPixels(t *testing.T) {
	file := ndpiSlide(t)
	f, err := mapFile(t, file, "slide.ndpi", Options{})
	require.NoError(t, err)
	tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	read := func(p *tiff.Page) []byte {
		r, err := NewBandReader(context.Background(), p, Options{})
		require.NoError(t, err)
		defer r.Close()
		out, err := io.ReadAll(r)
		require.NoError(t, err)
		return out
	}
	for z, strip := range []*tiff.Page{tf.Pages[0], tf.Pages[2]} {
		got, want := read(f.Images[0].Planes[z].Page), read(strip)
		require.Len(t, got, len(want))
		for i := range got {
			x, y := i/3%256, i/3/256
			if x%64 == 0 || x%64 == 63 || y%16 == 0 || y%16 == 15 {
				continue // a tile's edge
			}
			require.Equal(t, want[i], got[i], "plane %d, sample %d at %d, %d", z, i%3, x, y)
		}
	}
}

// TestNDPIRestartIntervalsNotRead: McuStarts that do not match the strip
// leave it to be decoded whole, which a note says.
func TestNDPIRestartIntervalsNotRead(t *testing.T) {
	file, err := ndpitest.File(ndpitest.Page{Width: 64, Height: 32, RGB: ndpitest.Pattern(64, 32, 0), Interval: 2, Magnification: 40,
		More: func(b *ifd.Builder, _ []byte, starts []uint64) {
			b.Remove(tiff.TagNDPIMcuStarts)
			b.AddUint(tiff.TagNDPIMcuStarts, starts[:3]...)
		}})
	require.NoError(t, err)
	f, err := mapFile(t, file, "short.ndpi", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 64x32 Z1 C1 T1 XYCZT uint8 x3: 0:*`}, summary(f))
	require.Len(t, f.Images[0].Notes, 1)
	assert.Contains(t, f.Images[0].Notes[0], "focal plane 0: its restart intervals are not read as tiles (tiff: malformed file: the NDPI page at ")
	assert.Contains(t, f.Images[0].Notes[0], "has 3 McuStarts for 2 x 2 tiles of 32 x 16): its JPEG strip is decoded whole")
}

// TestNDPIPast4GiB: a slide past 4 GiB, its strips and directories
// addressed by NDP.scan's 64-bit offsets, maps as the same slide does
// below 4 GiB, and its planes read the same samples.
func TestNDPIPast4GiB(t *testing.T) {
	big, err := ndpitest.Layout{Hole: 5 << 30}.File(ndpiPages()...)
	require.NoError(t, err)
	tf, err := tiff.Read(big, big.Size)
	require.NoError(t, err)
	require.True(t, tf.NDPI)
	f, err := New(tf, "big.ndpi", Options{})
	require.NoError(t, err)
	small, err := mapFile(t, ndpiSlide(t), "slide.ndpi", Options{})
	require.NoError(t, err)
	assert.Equal(t, summary(small), summary(f))
	assert.Equal(t, small.Images[0].Spec, f.Images[0].Spec)
	for i, im := range f.Images {
		for p, pl := range im.Planes {
			b, err := pl.Page.Block(0)
			require.NoError(t, err)
			assert.Greater(t, b.Offset, uint64(5<<30), "image %d plane %d", i, p)
			assert.Equal(t, readPlane(t, small.Images[i].Planes[p].Page), readPlane(t, pl.Page), "image %d plane %d", i, p)
		}
	}
}

// readPlane returns the samples of a page, as a band reader reads them.
func readPlane(t *testing.T, p *tiff.Page) []byte {
	t.Helper()
	r, err := NewBandReader(context.Background(), p, Options{})
	require.NoError(t, err)
	defer r.Close()
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return out
}

// TestNDPIOtherOrders: a file starting with its macro has its slide at
// the first page of a positive magnification; a file of a map alone is
// that image; a focal plane stored otherwise than the first is refused,
// or with SkipUnsupported left out with the slide, the macro and the map
// still read.
func TestNDPIOtherOrders(t *testing.T) {
	page := func(w, h int, mag float32) ndpitest.Page {
		return ndpitest.Page{Width: w, Height: h, RGB: ndpitest.Pattern(w, h, 0), Interval: 1, Magnification: mag}
	}
	macroFirst, err := ndpitest.File(page(48, 16, -1), page(64, 32, 20), page(32, 16, 10), page(32, 16, -2))
	require.NoError(t, err)
	f, err := mapFile(t, macroFirst, "m.ndpi", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{`"" 64x32 Z1 C1 T1 XYCZT uint8 x3: 1:*`, `"macro" 48x16 Z1 C1 T1 XYCZT uint8 x3: 0:*`, `"map" 32x16 Z1 C1 T1 XYCZT uint8 x3: 3:*`}, summary(f))

	mapAlone, err := ndpitest.File(page(32, 16, -2))
	require.NoError(t, err)
	f, err = mapFile(t, mapAlone, "map.ndpi", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{`"map" 32x16 Z1 C1 T1 XYCZT uint8 x3: 0:*`}, summary(f))

	// The second focal plane said to be of 16-bit samples.
	odd := page(64, 32, 20)
	odd.More = func(b *ifd.Builder, _ []byte, _ []uint64) {
		b.Remove(tiff.TagBitsPerSample)
		b.AddShort(tiff.TagBitsPerSample, 16, 16, 16)
	}
	planes, err := ndpitest.File(page(64, 32, 20), odd, page(48, 16, -1), page(32, 16, -2))
	require.NoError(t, err)
	_, err = mapFile(t, planes, "z.ndpi", Options{})
	require.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "focal plane 1 of the NDPI file")
	f, err = mapFile(t, planes, "z.ndpi", Options{SkipUnsupported: true})
	require.NoError(t, err)
	assert.Equal(t, []string{`"macro" 48x16 Z1 C1 T1 XYCZT uint8 x3: 2:*`, `"map" 32x16 Z1 C1 T1 XYCZT uint8 x3: 3:*`}, summary(f))
	require.Len(t, f.Skipped, 1)
	assert.ErrorIs(t, f.Skipped[0], ErrLeftOut)
}

// TestNDPIFallbackNoted: an NDPI below 4 GiB whose chain leaves NDP.scan's
// layout after its first directory is read as a classic TIFF, as
// Bio-Formats reads it, and its slide says so and why.
func TestNDPIFallbackNoted(t *testing.T) {
	page := ndpitest.Page{Width: 64, Height: 32, RGB: ndpitest.Pattern(64, 32, 0), Interval: 2, Magnification: 40}
	file, err := ndpitest.File(page, page)
	require.NoError(t, err)
	tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	require.True(t, tf.NDPI)
	off := tf.Pages[1].Offset
	n := int64(binary.LittleEndian.Uint16(file[off:]))
	file[off+2+12*n+8] = 1 // high bytes for the second directory's ImageWidth, a SHORT in its entry
	f, err := mapFile(t, file, "damaged.ndpi", Options{})
	require.NoError(t, err)
	assert.False(t, f.TIFF.NDPI)
	assert.Equal(t, []string{`"" 64x32 Z2 C1 T1 XYCZT uint8 x3: 0:* 1:*`}, summary(f))
	note := strings.Join(f.Images[0].Notes, "\n")
	assert.Contains(t, note, "its directories are read as a classic TIFF's, as Bio-Formats reads an NDPI below 4 GiB")
	assert.Contains(t, note, "has high bytes 0x1 for 1 inline values")
}
