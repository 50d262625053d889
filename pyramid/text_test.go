package pyramid

import (
	"encoding"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// textRoundTrip marshals every value to text and reads it back.
func textRoundTrip[T comparable, PT interface {
	*T
	encoding.TextUnmarshaler
}](t *testing.T, values ...T) {
	t.Helper()
	for _, v := range values {
		text, err := any(v).(encoding.TextMarshaler).MarshalText()
		require.NoError(t, err)
		var got T
		require.NoError(t, PT(&got).UnmarshalText(text))
		assert.Equal(t, v, got, "%s", text)
	}
}

func TestTextRoundTrip(t *testing.T) {
	textRoundTrip(t, LZW, None, Deflate, Zstd, JPEG)
	textRoundTrip(t, PredictorAuto, PredictorNone, PredictorHorizontal, PredictorFloatingPoint)
	textRoundTrip(t, Mean, Nearest, Mode)
	textRoundTrip(t, BigTIFFAuto, BigTIFFAlways, BigTIFFNever)
	textRoundTrip(t, Uint8, Int8, Uint16, Int16, Uint32, Int32, Float32, Float64)
	textRoundTrip(t, XYZCT, XYZTC, XYCTZ, XYCZT, XYTCZ, XYTZC)
}

func TestTextAliasesAndErrors(t *testing.T) {
	var p PixelType
	require.NoError(t, p.UnmarshalText([]byte("Double")))
	assert.Equal(t, Float64, p)
	var c Compression
	require.NoError(t, c.UnmarshalText([]byte(" ZLIB ")))
	assert.Equal(t, Deflate, c)
	require.NoError(t, c.UnmarshalText([]byte("JPG")))
	assert.Equal(t, JPEG, c)
	assert.ErrorIs(t, c.UnmarshalText([]byte("webp")), ErrOption)
	_, err := Compression(9).MarshalText()
	assert.ErrorIs(t, err, ErrOption)
	var pr Predictor
	require.NoError(t, pr.UnmarshalText([]byte("2")))
	assert.Equal(t, PredictorHorizontal, pr)
}

// TestOptionStrings: fmt prints the options by name, and an unnamed value
// with its type and number.
func TestOptionStrings(t *testing.T) {
	for want, v := range map[string]any{
		"horizontal": PredictorHorizontal, "floating-point": PredictorFloatingPoint, "Predictor(7)": Predictor(7),
		"mode": Mode, "Downsampling(-1)": Downsampling(-1),
		"never": BigTIFFNever, "BigTIFF(3)": BigTIFF(3),
		"LZW": LZW, "uint16": Uint16,
	} {
		assert.Equal(t, want, fmt.Sprint(v))
	}
}
