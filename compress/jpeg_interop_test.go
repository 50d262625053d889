package compress

import (
	"fmt"
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
