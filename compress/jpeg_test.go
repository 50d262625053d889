package compress

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/synth"
)

// rgbSlideTiles returns n tiles of size x size pixels of the slide
// workload's RGB rendering, interleaved 8-bit R, G, B, spread over its
// 8192 x 8192 plane like slideTiles.
func rgbSlideTiles(n, size int) [][]byte {
	tiles := make([][]byte, n)
	perRow := 8192 / size
	for i := range tiles {
		k := (i * 7919) % (perRow * perRow)
		tiles[i] = make([]byte, 3*size*size)
		synth.Pattern{Seed: 1}.RGB8(tiles[i], k%perRow*size, k/perRow*size, size, size)
	}
	return tiles
}

// graySlideTiles is rgbSlideTiles for the 8-bit gray rendering.
func graySlideTiles(n, size int) [][]byte {
	tiles := make([][]byte, n)
	perRow := 8192 / size
	for i := range tiles {
		k := (i * 7919) % (perRow * perRow)
		tiles[i] = make([]byte, size*size)
		synth.Pattern{Seed: 1}.Gray8(tiles[i], k%perRow*size, k/perRow*size, size, size)
	}
	return tiles
}

// spliceJPEG makes the interchange stream a JPEG decoder reads from the
// JPEGTables stream and an abbreviated tile stream (TIFF Technical Note 2):
// the tables without their EOI, then the tile without its SOI.
func spliceJPEG(t testing.TB, tables, tile []byte) []byte {
	t.Helper()
	require.True(t, bytes.HasPrefix(tables, []byte{0xff, 0xd8}) && bytes.HasSuffix(tables, []byte{0xff, 0xd9}), "tables are SOI ... EOI")
	require.True(t, bytes.HasPrefix(tile, []byte{0xff, 0xd8}) && bytes.HasSuffix(tile, []byte{0xff, 0xd9}), "tile is SOI ... EOI")
	return append(bytes.Clone(tables[:len(tables)-2]), tile[2:]...)
}

// decodeGo decodes a tile with the standard library's image/jpeg and
// returns its samples interleaved as the encoder took them. The decoder
// converts YCbCr to RGB, and keeps RGB-coded tiles (Adobe transform 0) as
// they are.
func decodeGo(t testing.TB, tables, tile []byte, samples int) (pix []byte, width, height int) {
	t.Helper()
	m, err := jpeg.Decode(bytes.NewReader(spliceJPEG(t, tables, tile)))
	require.NoError(t, err)
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			switch m := m.(type) {
			case *image.Gray:
				require.Equal(t, 1, samples)
				pix = append(pix, m.GrayAt(x, y).Y)
			default:
				require.Equal(t, 3, samples, "decoded as %T", m)
				r, g, b, _ := m.At(x, y).RGBA()
				pix = append(pix, byte(r>>8), byte(g>>8), byte(b>>8))
			}
		}
	}
	return pix, b.Dx(), b.Dy()
}

// psnr returns the peak signal-to-noise ratio of b against a, in dB
// (+Inf for equal slices).
func psnr(a, b []byte) float64 {
	var sum float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		sum += d * d
	}
	if sum == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255*float64(len(a))/sum)
}

// jpegMarkers returns the markers of a JPEG stream up to SOS, and whether
// the entropy-coded data holds any marker other than RSTn (none should).
func jpegMarkers(t testing.TB, b []byte) []byte {
	t.Helper()
	var markers []byte
	for i := 0; i < len(b); {
		require.Equal(t, byte(0xff), b[i], "marker at %d", i)
		m := b[i+1]
		markers = append(markers, m)
		switch {
		case m == jpegSOI || m == jpegEOI:
			i += 2
			continue
		case m == jpegSOS:
			n := int(b[i+2])<<8 | int(b[i+3])
			data := b[i+2+n:]
			for k := 0; k+1 < len(data); k++ {
				if data[k] == 0xff && data[k+1] != 0 {
					require.Equal(t, len(data)-2, k, "marker %#x inside the entropy-coded data", data[k+1])
					markers = append(markers, data[k+1])
				}
			}
			return markers
		}
		i += 2 + (int(b[i+2])<<8 | int(b[i+3]))
	}
	return markers
}

// upsampleSmooth converts a decoded 4:2:0 image to interleaved RGB with
// libjpeg's "fancy" chroma upsampling (each full-resolution chroma sample
// weighs its four nearest subsampled ones 9:3:3:1, the edges repeated),
// where image/jpeg's At repeats each chroma sample over 2x2 pixels.
func upsampleSmooth(t testing.TB, m image.Image) []byte {
	t.Helper()
	ycc, ok := m.(*image.YCbCr)
	require.True(t, ok && ycc.SubsampleRatio == image.YCbCrSubsampleRatio420, "decoded as %T", m)
	b := ycc.Bounds()
	cw, ch := (b.Dx()+1)/2, (b.Dy()+1)/2
	chroma := func(plane []byte, x, y int) int {
		x, y = min(max(x, 0), cw-1), min(max(y, 0), ch-1)
		return int(plane[y*ycc.CStride+x])
	}
	smooth := func(plane []byte, x, y int) uint8 {
		cx, cy := x/2, y/2
		nx, ny := cx+2*(x%2)-1, cy+2*(y%2)-1 // the nearer neighbours
		v := 9*chroma(plane, cx, cy) + 3*chroma(plane, nx, cy) + 3*chroma(plane, cx, ny) + chroma(plane, nx, ny)
		return uint8((v + 8) / 16)
	}
	var out []byte
	for y := range b.Dy() {
		for x := range b.Dx() {
			r, g, bl := color.YCbCrToRGB(ycc.Y[y*ycc.YStride+x], smooth(ycc.Cb, x, y), smooth(ycc.Cr, x, y))
			out = append(out, r, g, bl)
		}
	}
	return out
}

// TestJPEGRoundTripGo decodes the slide's tiles at quality 90 with the
// standard library's decoder. Its At repeats each chroma sample of a 4:2:0
// image over 2x2 pixels, which holds the PSNR of any 4:2:0 encoder under 40
// dB on this content (image/jpeg's own encoder gives 39.7 dB): there, the
// tiles must do at least as well as image/jpeg's own, and 40 dB when the
// chroma is upsampled like libjpeg does.
func TestJPEGRoundTripGo(t *testing.T) {
	rgb, gray := rgbSlideTiles(8, 256), graySlideTiles(8, 256)
	cases := []struct {
		name    string
		samples int
		color   JPEGColor
		tiles   [][]byte
	}{
		{"ycbcr420", 3, JPEGYCbCr420, rgb},
		{"rgb", 3, JPEGRGB, rgb},
		{"gray", 1, JPEGYCbCr420, gray},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := NewJPEG(Format{SamplesPerPixel: c.samples}, 256, JPEGOptions{Quality: 90, Color: c.color})
			require.NoError(t, err)
			var all, decoded, smooth, stdlib []byte
			for _, tile := range c.tiles {
				enc, err := j.Encode(nil, tile)
				require.NoError(t, err)
				pix, w, h := decodeGo(t, j.Tables(), enc, c.samples)
				require.Equal(t, [2]int{256, 256}, [2]int{w, h})
				all, decoded = append(all, tile...), append(decoded, pix...)
				if c.color == JPEGYCbCr420 && c.samples == 3 {
					m, err := jpeg.Decode(bytes.NewReader(spliceJPEG(t, j.Tables(), enc)))
					require.NoError(t, err)
					smooth = append(smooth, upsampleSmooth(t, m)...)
					theirs, err := stdlibJPEG{quality: 90, width: 256}.interchange(tile)
					require.NoError(t, err)
					tables, tile := splitJPEG(theirs)
					pix, _, _ := decodeGo(t, tables, tile, 3)
					stdlib = append(stdlib, pix...)
				}
			}
			p := psnr(all, decoded)
			if smooth == nil {
				t.Logf("PSNR %.2f dB", p)
				assert.GreaterOrEqual(t, p, 40.0)
				return
			}
			ps, pStd := psnr(all, smooth), psnr(all, stdlib)
			t.Logf("PSNR %.2f dB (image/jpeg's own tiles %.2f dB); %.2f dB with smooth chroma", p, pStd, ps)
			assert.GreaterOrEqual(t, p, pStd)
			assert.GreaterOrEqual(t, ps, 40.0)
		})
	}
}
