//go:build cgo && ometiff_turbo

package compress

import (
	"bytes"
	"image/jpeg"
	"testing"

	"github.com/ometiff-go/ometiff/tiff"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJPEGTurboMatchesGo compares libjpeg-turbo's tiles with the Go
// encoder's: both decode with the same tables, to nearly the same pixels,
// in nearly the same size (the DCTs and the colour conversions round
// differently).
func TestJPEGTurboMatchesGo(t *testing.T) {
	for _, c := range jpegCodings(4, 256) {
		t.Run(c.name, func(t *testing.T) {
			f, o := Format{SamplesPerPixel: c.samples}, JPEGOptions{Quality: 85, Color: c.color}
			turbo, pure := newTestJPEG(t, "turbo", f, 256, o), newTestJPEG(t, "go", f, 256, o)
			require.Equal(t, pure.Tables(), turbo.Tables())
			var fromTurbo, fromGo []byte
			var sizeTurbo, sizeGo int
			for _, tile := range c.tiles {
				a, err := turbo.Encode(nil, tile)
				require.NoError(t, err)
				b, err := pure.Encode(nil, tile)
				require.NoError(t, err)
				assert.Equal(t, jpegMarkers(t, b), jpegMarkers(t, a))
				sizeTurbo, sizeGo = sizeTurbo+len(a), sizeGo+len(b)
				pa, _, _ := decodeGo(t, turbo.Tables(), a, c.samples)
				pb, _, _ := decodeGo(t, pure.Tables(), b, c.samples)
				fromTurbo, fromGo = append(fromTurbo, pa...), append(fromGo, pb...)
			}
			p := psnr(fromTurbo, fromGo)
			t.Logf("PSNR between them %.2f dB; sizes %d (libjpeg-turbo) and %d (Go)", p, sizeTurbo, sizeGo)
			assert.GreaterOrEqual(t, p, 45.0)
			assert.InEpsilon(t, sizeTurbo, sizeGo, 0.05)
		})
	}
}

// TestJPEGTurboDecodeMatchesGo decodes the same tiles with libjpeg-turbo
// and with image/jpeg and this package's colour conversion: only their
// inverse DCTs round differently, by as much as pyramid/source's interop
// test allows between image/jpeg and libvips.
func TestJPEGTurboDecodeMatchesGo(t *testing.T) {
	photometric := map[JPEGColor]uint16{JPEGYCbCr420: tiff.PhotometricYCbCr, JPEGRGB: tiff.PhotometricRGB}
	for _, c := range jpegCodings(4, 256) {
		t.Run(c.name, func(t *testing.T) {
			j := newTestJPEG(t, "go", Format{SamplesPerPixel: c.samples}, 256, JPEGOptions{Quality: 85, Color: c.color})
			f := BlockFormat{Compression: tiff.CompressionJPEG, Format: Format{SamplesPerPixel: c.samples},
				JPEGTables: j.Tables(), Width: 256, Height: 256, Photometric: tiff.PhotometricBlackIsZero}
			if c.samples == 3 {
				f.Photometric = photometric[c.color]
			}
			d, err := NewDecoder(f)
			require.NoError(t, err)
			var maxDiff int
			var sum float64
			var n int
			for _, tile := range c.tiles {
				stored, err := j.Encode(nil, tile)
				require.NoError(t, err)
				turbo, err := d.Decode(nil, stored)
				require.NoError(t, err)
				pure := make([]byte, len(turbo))
				got, err := d.decodeJPEG(pure, stored)
				require.NoError(t, err)
				require.Equal(t, len(pure), got)
				for i := range turbo {
					diff := int(turbo[i]) - int(pure[i])
					maxDiff, sum = max(maxDiff, diff, -diff), sum+float64(max(diff, -diff))
				}
				n += len(turbo)
			}
			t.Logf("libjpeg-turbo against image/jpeg: max |difference| %d, mean %.4f", maxDiff, sum/float64(n))
			assert.LessOrEqual(t, maxDiff, 4)
			assert.Less(t, sum/float64(n), 0.1)
		})
	}
}

// TestJPEGTurboDecodeBlocksAlone decodes each block as it decodes alone,
// whatever blocks the pooled decompressors decoded before: a block that
// carries tables of its own changes none of the page's, and a block with
// no tables where the page has none fails.
func TestJPEGTurboDecodeBlocksAlone(t *testing.T) {
	var full, other bytes.Buffer
	require.NoError(t, jpeg.Encode(&full, testImage(32, 16), &jpeg.Options{Quality: 90}))
	require.NoError(t, jpeg.Encode(&other, testImage(32, 16), &jpeg.Options{Quality: 20}))
	tables, abbreviated := splitJPEG(full.Bytes())
	f := BlockFormat{Compression: tiff.CompressionJPEG, Format: Format{SamplesPerPixel: 3},
		Photometric: tiff.PhotometricYCbCr, JPEGTables: tables, Width: 32, Height: 16}
	d, err := NewDecoder(f)
	require.NoError(t, err)
	first, err := d.Decode(nil, abbreviated)
	require.NoError(t, err)
	withOwn, err := d.Decode(nil, other.Bytes())
	require.NoError(t, err)
	again, err := d.Decode(nil, abbreviated)
	require.NoError(t, err)
	assert.Equal(t, first, again, "the page's tables after a block with its own")
	assert.NotEqual(t, first, withOwn, "a block decoded with its own tables")

	f.JPEGTables = nil
	none, err := NewDecoder(f)
	require.NoError(t, err)
	alone, err := none.Decode(nil, other.Bytes())
	require.NoError(t, err)
	assert.Equal(t, alone, withOwn)
	_, err = none.Decode(nil, abbreviated)
	assert.ErrorIs(t, err, ErrCorrupt, "an abbreviated block after a whole one, with no tables")

	_, err = d.Decode(nil, abbreviated[:len(abbreviated)/2])
	assert.ErrorIs(t, err, ErrCorrupt, "truncated: libjpeg's warning is an error")
	assert.Contains(t, err.Error(), "libjpeg")
}

// TestJPEGTurboDecodeOddStreams decodes streams that libtiff and libvips
// read, as image/jpeg does: a plain YCbCr-coded stream in a page that says
// Photometric RGB (its components taken as R, G and B), and streams that
// make libjpeg warn without losing data. A lossless frame (SOF3) is
// refused as unsupported by both.
func TestJPEGTurboDecodeOddStreams(t *testing.T) {
	var full bytes.Buffer
	require.NoError(t, jpeg.Encode(&full, testImage(32, 16), &jpeg.Options{Quality: 90}))
	plain := full.Bytes()
	at := func(marker byte) int { // the offset of a segment's marker
		i := bytes.Index(plain, []byte{0xff, marker})
		require.Positive(t, i, "marker 0x%02x", marker)
		return i
	}
	insert := func(i int, b ...byte) []byte {
		return append(append(append([]byte(nil), plain[:i]...), b...), plain[i:]...)
	}
	jfif := []byte{0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 3, 1, 0, 0, 1, 0, 1, 0, 0}
	adobe := []byte{0xff, 0xee, 0, 14, 'A', 'd', 'o', 'b', 'e', 0, 100, 0, 0, 0, 0, 2}
	rgb := BlockFormat{Compression: tiff.CompressionJPEG, Format: Format{SamplesPerPixel: 3},
		Photometric: tiff.PhotometricRGB, Width: 32, Height: 16}
	ycc := rgb
	ycc.Photometric = tiff.PhotometricYCbCr
	for _, c := range []struct {
		name   string
		f      BlockFormat
		stream []byte
	}{
		{"YCbCr-coded in Photometric RGB", rgb, plain},
		{"bytes before EOI", ycc, insert(len(plain)-2, make([]byte, 64)...)},
		{"JFIF 3.01", ycc, insert(2, jfif...)},
		{"Adobe transform 2", ycc, insert(2, adobe...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := NewDecoder(c.f)
			require.NoError(t, err)
			want := make([]byte, d.BlockBytes(16))
			n, err := d.decodeJPEG(want, c.stream)
			require.NoError(t, err, "image/jpeg")
			require.Equal(t, len(want), n, "image/jpeg")
			got, err := d.Decode(nil, c.stream)
			require.NoError(t, err, "libjpeg-turbo")
			for i := range got {
				require.InDelta(t, int(want[i]), int(got[i]), 4, "sample %d", i)
			}
		})
	}

	lossless := append([]byte(nil), plain...)
	lossless[at(0xc0)+1] = 0xc3
	d, err := NewDecoder(ycc)
	require.NoError(t, err)
	_, err = d.Decode(nil, lossless)
	assert.ErrorIs(t, err, ErrCompression, "libjpeg-turbo")
	_, err = d.decodeJPEG(make([]byte, d.BlockBytes(16)), lossless)
	assert.ErrorIs(t, err, ErrCompression, "image/jpeg")
}
