package tiff

import (
	"bytes"
	"encoding/binary"
	goimage "image"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	xtiff "golang.org/x/image/tiff"

	"github.com/ometiff-go/ometiff/internal/readback"
)

// TestGoldensReadByGoogleTIFF parses every committed golden file with
// google/tiff, walks the main chain and the SubIFDs, and decodes every
// image pixel-exact against its source.
func TestGoldensReadByGoogleTIFF(t *testing.T) {
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			data, err := os.ReadFile(goldenPath(g.name))
			require.NoError(t, err)
			f, err := readback.Parse(data)
			require.NoError(t, err)
			assert.Equal(t, g.opts.BigTIFF == BigTIFFAlways, f.BigTIFF)
			wantOrder := binary.ByteOrder(binary.LittleEndian)
			if g.opts.ByteOrder == binary.BigEndian {
				wantOrder = binary.BigEndian
			}
			assert.Equal(t, wantOrder, f.Order)

			i := 0
			f.Each(func(d *readback.IFD, main, sub int) {
				im := g.imageAt(i)
				i++
				assert.Equal(t, uint64(im.width), d.Uint(TagImageWidth, 0))
				assert.Equal(t, uint64(im.height), d.Uint(TagImageLength, 0))
				wantSubfile := uint64(SubfileFullResolution)
				if sub > 0 {
					wantSubfile = uint64(SubfileReducedImage)
				}
				assert.Equal(t, wantSubfile, d.Uint(TagNewSubfileType, 99))
				got, err := f.Image(d)
				require.NoError(t, err)
				assert.Equal(t, im.rawPixels(), got.Pix, "IFD %d.%d pixels", main, sub)
			})
			assert.Equal(t, len(g.images), i, "directories")
		})
	}
}

// imageAt returns the source of the i-th directory in readback.Each order:
// main chain first, each followed by its SubIFDs. The golden lists its
// images main chain first, then SubIFDs in file order; map between them.
func (g golden) imageAt(i int) *image {
	switch g.name {
	case "tiled-subifds": // d0, d0.1, d0.2, d1, d1.1
		return g.images[[]int{0, 2, 3, 1, 4}[i]]
	}
	return g.images[i]
}

// TestGoldensDecodedByXImage decodes the first directory of every classic
// golden with golang.org/x/image/tiff.
func TestGoldensDecodedByXImage(t *testing.T) {
	for _, g := range goldens() {
		if g.opts.BigTIFF == BigTIFFAlways {
			continue // x/image/tiff reads classic TIFF only
		}
		t.Run(g.name, func(t *testing.T) {
			data, err := os.ReadFile(goldenPath(g.name))
			require.NoError(t, err)
			m, err := xtiff.Decode(bytes.NewReader(data))
			require.NoError(t, err)
			im := g.images[0]
			assert.Equal(t, goimage.Rect(0, 0, im.width, im.height), m.Bounds())
			assert.Equal(t, im.rawPixels(), pixelsOf(t, m))
		})
	}
}

// pixelsOf returns a decoded image's samples, little-endian, without alpha.
func pixelsOf(t *testing.T, m goimage.Image) []byte {
	switch m := m.(type) {
	case *goimage.Gray:
		return m.Pix
	case *goimage.Gray16: // Pix is big-endian
		out := make([]byte, len(m.Pix))
		for i := 0; i < len(out); i += 2 {
			out[i], out[i+1] = m.Pix[i+1], m.Pix[i]
		}
		return out
	case *goimage.RGBA:
		var out []byte
		for i := 0; i < len(m.Pix); i += 4 {
			out = append(out, m.Pix[i:i+3]...)
		}
		return out
	}
	t.Fatalf("unexpected image type %T", m)
	return nil
}
