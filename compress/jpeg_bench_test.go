package compress

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkJPEG encodes 256x256 tiles of the slide workload (RGB, and its
// gray rendering) with each coding at quality 85, the workload, by
// the Go encoder and, in builds with the ometiff_turbo tag, by libjpeg-turbo.
func BenchmarkJPEG(b *testing.B) {
	for _, c := range jpegCodings(32, 256) {
		for _, engine := range jpegEngines(b) {
			b.Run(fmt.Sprintf("%s/Q85/%s", c.name, engine), func(b *testing.B) {
				j := newTestJPEG(b, engine, Format{SamplesPerPixel: c.samples}, 256, JPEGOptions{Quality: 85, Color: c.color})
				benchmarkEncoder(b, j, c.tiles)
			})
		}
	}
}

// jpegEngines names the encoders of this build: "go", and "turbo" with the
// ometiff_turbo tag.
func jpegEngines(t testing.TB) []string {
	j, err := NewJPEG(Format{}, 8, JPEGOptions{})
	require.NoError(t, err)
	if j.turbo != nil {
		return []string{"go", "turbo"}
	}
	return []string{"go"}
}

// newTestJPEG returns NewJPEG's encoder on the named engine.
func newTestJPEG(t testing.TB, engine string, f Format, width int, o JPEGOptions) *JPEG {
	t.Helper()
	j, err := NewJPEG(f, width, o)
	require.NoError(t, err)
	if engine == "go" {
		j.turbo = nil
	}
	require.Equal(t, engine == "turbo", j.turbo != nil, "engine %s", engine)
	return j
}

// stdlibJPEG is option (a) of the evaluation: the standard library's
// image/jpeg encoder, whose output (always YCbCr 4:2:0, with the Annex K
// Huffman tables) is split into a tables stream and an abbreviated tile.
type stdlibJPEG struct {
	quality int
	width   int
}

// Encode appends the abbreviated stream of an RGB tile.
func (s stdlibJPEG) Encode(dst, src []byte) ([]byte, error) {
	b, err := s.interchange(src)
	_, tile := splitJPEG(b)
	return append(dst, tile...), err
}

// interchange returns image/jpeg's stream of an RGB tile.
func (s stdlibJPEG) interchange(src []byte) ([]byte, error) {
	m := image.NewRGBA(image.Rect(0, 0, s.width, len(src)/(3*s.width)))
	for i, o := 0, 0; i < len(src); i, o = i+3, o+4 {
		m.Pix[o], m.Pix[o+1], m.Pix[o+2], m.Pix[o+3] = src[i], src[i+1], src[i+2], 0xff
	}
	var b bytes.Buffer
	err := jpeg.Encode(&b, m, &jpeg.Options{Quality: s.quality})
	return b.Bytes(), err
}

// splitJPEG splits an interchange JPEG stream into its tables (SOI, DQT,
// DHT, EOI) and the rest without them (SOI, SOF, SOS, data, EOI).
func splitJPEG(b []byte) (tables, tile []byte) {
	tables, tile = []byte{0xff, jpegSOI}, []byte{0xff, jpegSOI}
	for i := 2; i+4 <= len(b); {
		m, n := b[i+1], 2+(int(b[i+2])<<8|int(b[i+3]))
		switch m {
		case jpegDQT, jpegDHT:
			tables = append(tables, b[i:i+n]...)
		case jpegSOS:
			return append(tables, 0xff, jpegEOI), append(tile, b[i:]...)
		default:
			tile = append(tile, b[i:i+n]...)
		}
		i += n
	}
	return append(tables, 0xff, jpegEOI), tile
}

// BenchmarkJPEGStdlib is the reference of BenchmarkJPEG/YCbCr420: the
// standard library's encoder on the same tiles, the tile converted to an
// image.RGBA first (the form its fast path takes).
func BenchmarkJPEGStdlib(b *testing.B) {
	benchmarkEncoder(b, stdlibJPEG{quality: 85, width: 256}, rgbSlideTiles(32, 256))
}
