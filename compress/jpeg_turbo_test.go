//go:build cgo && ometiff_turbo

package compress

import (
	"testing"

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
