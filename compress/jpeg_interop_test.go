package compress

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
)

// TestInteropJPEGLibjpeg has libjpeg-turbo, inside libvips (vips rawsave
// of a .jpg), decode our tiles spliced with the tables: the slide's tiles
// at quality 90 with a PSNR of at least 40 dB in every coding, and tiles
// of partial MCUs at their size. libjpeg upsamples 4:2:0 chroma smoothly,
// so this is the fidelity libvips, GDAL and libtiff readers see. It runs
// under make interop.
func TestInteropJPEGLibjpeg(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips")
	dir := t.TempDir()
	decode := func(t *testing.T, j *JPEG, enc []byte, name string) []byte {
		t.Helper()
		in := filepath.Join(dir, name+".jpg")
		out := filepath.Join(dir, name+".raw")
		require.NoError(t, os.WriteFile(in, spliceJPEG(t, j.Tables(), enc), 0o644))
		msg, err := exec.Command("vips", "rawsave", in, out).CombinedOutput()
		require.NoError(t, err, "vips: %s", msg)
		require.Empty(t, string(msg), "vips warnings")
		raw, err := os.ReadFile(out)
		require.NoError(t, err)
		return raw
	}
	for _, c := range jpegCodings(4, 256) {
		t.Run(c.name, func(t *testing.T) {
			j, err := NewJPEG(Format{SamplesPerPixel: c.samples}, 256, JPEGOptions{Quality: 90, Color: c.color})
			require.NoError(t, err)
			var all, decoded []byte
			for i, tile := range c.tiles {
				enc, err := j.Encode(nil, tile)
				require.NoError(t, err)
				raw := decode(t, j, enc, fmt.Sprintf("%s-%d", c.name, i))
				require.Len(t, raw, len(tile))
				all, decoded = append(all, tile...), append(decoded, raw...)
			}
			p := psnr(all, decoded)
			t.Logf("PSNR %.2f dB", p)
			assert.GreaterOrEqual(t, p, 40.0)

			const w, h = 37, 21
			small, err := NewJPEG(Format{SamplesPerPixel: c.samples}, w, JPEGOptions{Quality: 90, Color: c.color})
			require.NoError(t, err)
			tile := rgbSlideTiles(1, 64)[0][:w*h*c.samples]
			enc, err := small.Encode(nil, tile)
			require.NoError(t, err)
			raw := decode(t, small, enc, c.name+"-partial")
			require.Len(t, raw, len(tile))
			assert.GreaterOrEqual(t, psnr(tile, raw), 35.0)
		})
	}
}

// jpegTIFF returns a little-endian classic TIFF of one width x height image
// in tiles of tile x tile pixels, encoded by j, with the fields TIFF
// Technical Note 2 asks of new-style JPEG: JPEGTables, and YCbCrSubSampling
// and ReferenceBlackWhite for YCbCr. It is laid out by hand here, so the
// check does not depend on the writers under test elsewhere.
func jpegTIFF(t testing.TB, j *JPEG, samples, width, height, tile int, tiles [][]byte) []byte {
	t.Helper()
	type entry struct {
		tag, typ uint16
		count    int
		value    []byte // little endian
	}
	le16 := func(v ...uint16) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint16(b, x)
		}
		return b
	}
	le32 := func(v ...uint32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
		return b
	}
	const short, long, undefined, rational = 3, 4, 7, 5
	bits := make([]uint16, samples)
	for i := range bits {
		bits[i] = 8
	}
	// Tiles go right after the header, then the out-of-line values, then
	// the directory.
	var offsets, counts []uint32
	data := []byte{}
	for _, enc := range tiles {
		offsets, counts = append(offsets, uint32(8+len(data))), append(counts, uint32(len(enc)))
		data = append(data, enc...)
	}
	entries := []entry{
		{256, long, 1, le32(uint32(width))},
		{257, long, 1, le32(uint32(height))},
		{258, short, samples, le16(bits...)},
		{259, short, 1, le16(j.Compression())},
		{262, short, 1, le16(j.Photometric())},
		{277, short, 1, le16(uint16(samples))},
		{284, short, 1, le16(1)},
		{322, long, 1, le32(uint32(tile))},
		{323, long, 1, le32(uint32(tile))},
		{324, long, len(offsets), le32(offsets...)},
		{325, long, len(counts), le32(counts...)},
		{347, undefined, len(j.Tables()), j.Tables()},
	}
	if s := j.YCbCrSubSampling(); s != nil {
		entries = append(entries,
			entry{530, short, 2, le16(s...)},
			entry{532, rational, 6, le32(0, 1, 255, 1, 128, 1, 255, 1, 128, 1, 255, 1)})
	}
	file := append([]byte("II*\x00\x00\x00\x00\x00"), data...)
	var dir []byte
	dir = binary.LittleEndian.AppendUint16(dir, uint16(len(entries)))
	ifdAt := len(file)
	for _, e := range entries {
		if len(e.value) > 4 { // out of line: placed before the directory
			ifdAt += len(e.value) + len(e.value)%2
		}
	}
	extra := []byte{}
	for _, e := range entries {
		dir = binary.LittleEndian.AppendUint16(dir, e.tag)
		dir = binary.LittleEndian.AppendUint16(dir, e.typ)
		dir = binary.LittleEndian.AppendUint32(dir, uint32(e.count))
		if len(e.value) <= 4 {
			dir = append(dir, append(e.value, make([]byte, 4-len(e.value))...)...)
			continue
		}
		dir = binary.LittleEndian.AppendUint32(dir, uint32(len(file)+len(extra)))
		extra = append(extra, e.value...)
		if len(e.value)%2 == 1 {
			extra = append(extra, 0)
		}
	}
	dir = binary.LittleEndian.AppendUint32(dir, 0)
	require.Equal(t, ifdAt, len(file)+len(extra))
	binary.LittleEndian.PutUint32(file[4:], uint32(ifdAt))
	return append(append(file, extra...), dir...)
}

// TestInteropJPEGTIFF has libtiff (tiffinfo, tiffcp -c none), libvips
// and GDAL (gdalinfo -checksum) read tiled TIFFs of our JPEG tiles, the
// tables in JPEGTables, in every coding, with partial edge tiles (padded by
// repeating the edge, as a TIFF writer must): they must decode every tile
// without a warning, and libtiff's and libvips's pixels must match the
// image. It runs under make interop.
func TestInteropJPEGTIFF(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tiffinfo", "tiffcp", "vips", "gdalinfo")
	const width, height, tile = 300, 200, 128
	dir := t.TempDir()
	for _, c := range jpegCodings(1, 512) {
		t.Run(c.name, func(t *testing.T) {
			img := make([]byte, 0, width*height*c.samples) // the top left of the 512x512 tile
			for y := range height {
				img = append(img, c.tiles[0][y*512*c.samples:][:width*c.samples]...)
			}
			j, err := NewJPEG(Format{SamplesPerPixel: c.samples}, tile, JPEGOptions{Quality: 90, Color: c.color})
			require.NoError(t, err)
			var tiles [][]byte
			for ty := 0; ty < height; ty += tile {
				for tx := 0; tx < width; tx += tile {
					raw := make([]byte, 0, tile*tile*c.samples)
					for y := range tile {
						sy := min(ty+y, height-1)
						for x := range tile {
							sx := min(tx+x, width-1)
							raw = append(raw, img[(sy*width+sx)*c.samples:][:c.samples]...)
						}
					}
					enc, err := j.Encode(nil, raw)
					require.NoError(t, err)
					tiles = append(tiles, enc)
				}
			}
			path := filepath.Join(dir, c.name+".tif")
			require.NoError(t, os.WriteFile(path, jpegTIFF(t, j, c.samples, width, height, tile, tiles), 0o644))

			out := interop.MustRun(t, "tiffinfo", path)
			assert.Contains(t, out, "Compression Scheme: JPEG")
			assert.Contains(t, out, fmt.Sprintf("JPEG Tables: (%d bytes)", len(j.Tables())))
			interop.MustRun(t, "gdalinfo", "-checksum", path)
			// libtiff decodes (and converts YCbCr to RGB); libvips reads
			// its uncompressed copy, then our file itself.
			copied := filepath.Join(dir, c.name+"-none.tif")
			interop.MustRun(t, "tiffcp", "-c", "none", path, copied)
			for _, in := range []string{copied, path} {
				raw := in + ".raw"
				interop.MustRun(t, "vips", "rawsave", in, raw)
				got, err := os.ReadFile(raw)
				require.NoError(t, err)
				require.Len(t, got, len(img))
				p := psnr(img, got)
				t.Logf("%s: PSNR %.2f dB", filepath.Base(in), p)
				assert.GreaterOrEqual(t, p, 40.0)
			}
		})
	}
}

// TestInteropJPEGLibjpegRandom has libjpeg-turbo (vips) and image/jpeg
// decode tiles of random sizes, codings, qualities and contents (noise,
// flat, edges of 0 and 255): both must accept every tile at its size and
// agree on its pixels up to their rounding (for 4:2:0, image/jpeg's planes
// upsampled as libjpeg does). It runs under make interop.
func TestInteropJPEGLibjpegRandom(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips")
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(11, 12))
	for n := range 24 {
		samples, color := []int{1, 3}[n%2], JPEGColor(n/2%2)
		w, h := 1+r.IntN(70), 1+r.IntN(70)
		quality := 1 + r.IntN(100)
		tile := make([]byte, w*h*samples)
		for i := range tile {
			switch n / 4 % 3 {
			case 0:
				tile[i] = byte(r.Uint32())
			case 1:
				tile[i] = 200
			default:
				tile[i] = byte(255 * (i / samples / 3 % 2))
			}
		}
		name := fmt.Sprintf("%d-%dx%d-%d-%v-q%d", n, w, h, samples, color, quality)
		t.Run(name, func(t *testing.T) {
			j, err := NewJPEG(Format{SamplesPerPixel: samples}, w, JPEGOptions{Quality: quality, Color: color})
			require.NoError(t, err)
			enc, err := j.Encode(nil, tile)
			require.NoError(t, err)
			in, out := filepath.Join(dir, name+".jpg"), filepath.Join(dir, name+".raw")
			stream := spliceJPEG(t, j.Tables(), enc)
			require.NoError(t, os.WriteFile(in, stream, 0o644))
			interop.MustRun(t, "vips", "rawsave", in, out)
			theirs, err := os.ReadFile(out)
			require.NoError(t, err)
			require.Len(t, theirs, len(tile))

			ours, _, _ := decodeGo(t, j.Tables(), enc, samples)
			if samples == 3 && color == JPEGYCbCr420 {
				m, err := jpeg.Decode(bytes.NewReader(stream))
				require.NoError(t, err)
				ours = upsampleSmooth(t, m)
			}
			assert.GreaterOrEqual(t, psnr(ours, theirs), 40.0, "libjpeg and image/jpeg disagree")
		})
	}
}
