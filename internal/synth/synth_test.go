package synth

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// region is a rectangle of an image: top-left (x, y), size w x h.
type region struct{ x, y, w, h int }

func gray16Bytes(p Pattern, r region) []byte {
	px := make([]uint16, r.w*r.h)
	p.Gray16(px, r.x, r.y, r.w, r.h)
	b := make([]byte, 0, 2*len(px))
	for _, v := range px {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

func gray8Bytes(p Pattern, r region) []byte {
	px := make([]uint8, r.w*r.h)
	p.Gray8(px, r.x, r.y, r.w, r.h)
	return px
}

func rgb8Bytes(p Pattern, r region) []byte {
	px := make([]uint8, 3*r.w*r.h)
	p.RGB8(px, r.x, r.y, r.w, r.h)
	return px
}

// outputs run each output type of a pattern over a region and return the
// pixels as bytes (16-bit samples little endian).
var outputs = []struct {
	name        string
	generate    func(p Pattern, r region) []byte
	bytesPerPix int
}{
	{"Gray16", gray16Bytes, 2},
	{"Gray8", gray8Bytes, 1},
	{"RGB8", rgb8Bytes, 3},
}

var patterns = []Pattern{{}, {Seed: 1}, {Seed: 1, Channel: 1}, {Seed: 0xdeadbeef, Channel: 7}}

func TestDeterministic(t *testing.T) {
	r := region{x: 1000, y: 2000, w: 300, h: 200}
	for _, out := range outputs {
		for _, p := range patterns {
			t.Run(fmt.Sprintf("%s/%+v", out.name, p), func(t *testing.T) {
				assert.Equal(t, out.generate(p, r), out.generate(p, r))
			})
		}
	}
}

func TestRegionIndependence(t *testing.T) {
	whole := region{x: -130, y: -70, w: 700, h: 260}
	parts := []region{
		{x: -130, y: -70, w: 700, h: 1},   // first row
		{x: -130, y: -70, w: 1, h: 260},   // first column
		{x: 0, y: 0, w: 256, h: 128},      // aligned to the lattice
		{x: 1, y: 3, w: 17, h: 5},         // unaligned, tiny
		{x: 63, y: 63, w: 2, h: 2},        // across a nuclei cell corner
		{x: 500, y: 150, w: 70, h: 40},    // bottom-right corner
		{x: -100, y: -50, w: 511, h: 237}, // odd sizes, negative origin
	}
	for _, out := range outputs {
		p := Pattern{Seed: 42, Channel: 2}
		big := out.generate(p, whole)
		for _, part := range parts {
			t.Run(fmt.Sprintf("%s/%+v", out.name, part), func(t *testing.T) {
				got := out.generate(p, part)
				rowBytes := part.w * out.bytesPerPix
				for y := range part.h {
					start := ((part.y-whole.y+y)*whole.w + part.x - whole.x) * out.bytesPerPix
					require.Equal(t, big[start:start+rowBytes], got[y*rowBytes:(y+1)*rowBytes], "row %d", y)
				}
			})
		}
	}
}

// FuzzRegionIndependence checks that any region equals the same pixels
// cut from a larger region around it.
func FuzzRegionIndependence(f *testing.F) {
	f.Add(uint64(0), 0, 0, uint8(5), uint8(7), uint8(3), uint8(2))
	f.Add(uint64(7), -1000, 123456, uint8(64), uint8(1), uint8(0), uint8(63))
	f.Fuzz(func(t *testing.T, seed uint64, x, y int, w, h, dx, dy uint8) {
		x, y = x%(1<<30), y%(1<<30) // far from overflow
		inner := region{x: x + int(dx), y: y + int(dy), w: int(w) + 1, h: int(h)%32 + 1}
		outer := region{x: x, y: y, w: int(dx) + inner.w + 3, h: int(dy) + inner.h + 2}
		p := Pattern{Seed: seed, Channel: int(seed % 3)}
		big := gray16Bytes(p, outer)
		got := gray16Bytes(p, inner)
		for r := range inner.h {
			start := ((inner.y-outer.y+r)*outer.w + inner.x - outer.x) * 2
			if !bytes.Equal(big[start:start+2*inner.w], got[2*r*inner.w:2*(r+1)*inner.w]) {
				t.Fatalf("row %d of %+v differs from %+v", r, inner, outer)
			}
		}
	})
}

// TestRealistic checks that the images are neither constant nor noise: they
// vary, compress moderately, and differ between seeds and channels.
func TestRealistic(t *testing.T) {
	r := region{x: 4096, y: 4096, w: 512, h: 512}
	for _, out := range outputs {
		t.Run(out.name, func(t *testing.T) {
			a := out.generate(Pattern{Seed: 5}, r)
			ratio := float64(len(a)) / float64(len(deflate(t, a)))
			assert.Greater(t, ratio, 1.1, "compresses like noise")
			assert.Less(t, ratio, 8.0, "compresses like a constant image")
			assert.NotEqual(t, a, out.generate(Pattern{Seed: 6}, r), "seed ignored")
			assert.NotEqual(t, a, out.generate(Pattern{Seed: 5, Channel: 1}, r), "channel ignored")
		})
	}
}

// TestChannelsCorrelated checks that channels of one seed share structure:
// bright pixels of channel 0 are brighter in channel 1 on average.
func TestChannelsCorrelated(t *testing.T) {
	r := region{x: 0, y: 0, w: 512, h: 512}
	c0 := make([]uint16, r.w*r.h)
	c1 := make([]uint16, r.w*r.h)
	Pattern{Seed: 9}.Gray16(c0, r.x, r.y, r.w, r.h)
	Pattern{Seed: 9, Channel: 1}.Gray16(c1, r.x, r.y, r.w, r.h)
	var brightSum, darkSum, bright, dark float64
	for i := range c0 {
		if c0[i] > 2000 {
			brightSum += float64(c1[i])
			bright++
		} else {
			darkSum += float64(c1[i])
			dark++
		}
	}
	require.NotZero(t, bright)
	assert.Greater(t, brightSum/bright, 1.5*darkSum/dark)
}

func deflate(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w, err := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// benchShapes are a 256x256 tile and a full-width row band of the slide.
var benchShapes = []region{{x: 8192, y: 8192, w: 256, h: 256}, {x: 0, y: 4096, w: 8192, h: 16}}

const benchPixels = 8192 * 16 // the largest benchmark shape

func benchmarkShapes(b *testing.B, bytesPerPixel int, run func(r region)) {
	for _, r := range benchShapes {
		b.Run(fmt.Sprintf("%dx%d", r.w, r.h), func(b *testing.B) {
			b.SetBytes(int64(r.w * r.h * bytesPerPixel))
			b.ReportAllocs()
			for b.Loop() {
				run(r)
			}
			b.ReportMetric(float64(b.N)*float64(r.w*r.h)/b.Elapsed().Seconds()/1e6, "Mpixel/s")
		})
	}
}

func BenchmarkGray16(b *testing.B) {
	dst := make([]uint16, benchPixels)
	benchmarkShapes(b, 2, func(r region) { Pattern{Seed: 3}.Gray16(dst, r.x, r.y, r.w, r.h) })
}

func BenchmarkGray8(b *testing.B) {
	dst := make([]uint8, benchPixels)
	benchmarkShapes(b, 1, func(r region) { Pattern{Seed: 3}.Gray8(dst, r.x, r.y, r.w, r.h) })
}

func BenchmarkRGB8(b *testing.B) {
	dst := make([]uint8, 3*benchPixels)
	benchmarkShapes(b, 3, func(r region) { Pattern{Seed: 3}.RGB8(dst, r.x, r.y, r.w, r.h) })
}
