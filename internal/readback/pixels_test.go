package readback

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPSNR: the PSNR of equal samples is +Inf, of others 10 log10(255² /
// their mean squared difference); slices of different lengths (a longer
// decoded one cut to the source's, a shorter one) or empty ones are NaN,
// never a value a test's bound could accept.
func TestPSNR(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []byte
		want float64
	}{
		{"equal", []byte{0, 128, 255}, []byte{0, 128, 255}, math.Inf(1)},
		{"one off by 255", []byte{0, 0}, []byte{255, 0}, 10 * math.Log10(2)},
		{"all off by 1", []byte{10, 20, 30, 40}, []byte{11, 19, 31, 39}, 20 * math.Log10(255)},
		{"longer decoded", []byte{1, 2}, []byte{1, 2, 3}, math.NaN()},
		{"shorter decoded", []byte{1, 2, 3}, []byte{1, 2}, math.NaN()},
		{"empty source", nil, []byte{1}, math.NaN()},
		{"both empty", nil, nil, math.NaN()},
	} {
		got := PSNR(tc.a, tc.b)
		if math.IsNaN(tc.want) {
			assert.True(t, math.IsNaN(got), "%s: %v", tc.name, got)
			continue
		}
		assert.InDelta(t, tc.want, got, 1e-9, tc.name)
	}
}
