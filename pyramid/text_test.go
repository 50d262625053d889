package pyramid

import (
	"encoding"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTextRoundTrip(t *testing.T) {
	values := []interface {
		encoding.TextMarshaler
	}{LZW, None, Deflate, Zstd, PredictorAuto, PredictorFloatingPoint, Mean, Mode, BigTIFFNever, Uint8, Float64}
	for _, v := range values {
		text, err := v.MarshalText()
		require.NoError(t, err)
		switch v := v.(type) {
		case Compression:
			var got Compression
			require.NoError(t, got.UnmarshalText(text))
			assert.Equal(t, v, got)
		case Predictor:
			var got Predictor
			require.NoError(t, got.UnmarshalText(text))
			assert.Equal(t, v, got)
		case Downsampling:
			var got Downsampling
			require.NoError(t, got.UnmarshalText(text))
			assert.Equal(t, v, got)
		case BigTIFF:
			var got BigTIFF
			require.NoError(t, got.UnmarshalText(text))
			assert.Equal(t, v, got)
		case PixelType:
			var got PixelType
			require.NoError(t, got.UnmarshalText(text))
			assert.Equal(t, v, got)
		}
	}
}

func TestTextAliasesAndErrors(t *testing.T) {
	var p PixelType
	require.NoError(t, p.UnmarshalText([]byte("Double")))
	assert.Equal(t, Float64, p)
	var c Compression
	require.NoError(t, c.UnmarshalText([]byte(" ZLIB ")))
	assert.Equal(t, Deflate, c)
	assert.ErrorIs(t, c.UnmarshalText([]byte("jpeg")), ErrOption)
	_, err := Compression(9).MarshalText()
	assert.ErrorIs(t, err, ErrOption)
	var pr Predictor
	require.NoError(t, pr.UnmarshalText([]byte("2")))
	assert.Equal(t, PredictorHorizontal, pr)
}
