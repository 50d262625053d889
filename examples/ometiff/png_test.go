package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/examples/internal/pngstream/pngtest"
)

// randomPNG returns a PNG of a colour type and depth with random samples,
// every filter, several IDAT chunks, and a tRNS chunk (or translucent
// palette entries) when trns is set.
func randomPNG(rng *rand.Rand, colorType byte, depth, width, height int, trns bool) []byte {
	m := pngtest.Image{Width: width, Height: height, Depth: depth, ColorType: colorType, IDATSize: 100,
		Filter: func(y int) byte { return byte(y % 5) }}
	for range height {
		row := make([]byte, pngtest.RowBytes(width, depth, colorType))
		for i := range row {
			row[i] = byte(rng.Uint32())
		}
		m.Rows = append(m.Rows, row)
	}
	switch {
	case colorType == 3: // fewer entries than indices: some are out of range
		m.Palette = make([]color.NRGBA, 1+rng.IntN(1<<depth))
		for i := range m.Palette {
			m.Palette[i] = color.NRGBA{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), 0xff}
			if trns {
				m.Palette[i].A = byte(i)
			}
		}
	case trns && colorType == 0:
		m.TRNS = []byte{0, 1}
	case trns && colorType == 2:
		m.TRNS = []byte{0, 1, 0, 2, 0, 3}
	}
	return m.Encode()
}

// TestStreamedPNGsConvertAsDecoded converts PNGs of every colour type and
// bit depth, streamed, and checks that the pixels and layout are those of
// the image image/png decodes, converted as the program documents, so a
// PNG converts alike whether it is streamed or decoded whole; and that
// the PNGs with a pixel image/png decodes as not opaque are refused,
// naming it, or with -skip-unsupported converted without transparency.
func TestStreamedPNGsConvertAsDecoded(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	depths := map[byte][]int{0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}
	for colorType, ds := range depths {
		for _, depth := range ds {
			for _, trns := range []bool{false, true} {
				if trns && colorType >= 4 {
					continue
				}
				t.Run(fmtPNG(colorType, depth, trns), func(t *testing.T) {
					data := randomPNG(rng, colorType, depth, 37, 300, trns)
					dir := t.TempDir()
					input := writeFile(t, dir, "in.png", data)
					output := filepath.Join(dir, "out.ome.tif")
					decoded, err := png.Decode(bytes.NewReader(data))
					require.NoError(t, err)
					seen := firstTranslucent(decoded) // image/png's word on the transparency
					// -tile 16 streams the rows in many bands.
					code, _, stderr := clitest.Run(runConvert, "-compression", "none", "-tile", "16", input, output)
					if seen.found {
						require.Equal(t, 1, code, "a transparent image is refused")
						assert.Contains(t, stderr, fmt.Sprintf("the image is transparent (its alpha, or its transparent colour) at pixel (%d, %d)", seen.x, seen.y))
						assert.NoFileExists(t, output)
						code, _, stderr = clitest.Run(runConvert, "-compression", "none", "-tile", "16", "-skip-unsupported", input, output)
						assert.Contains(t, stderr, "left out (-skip-unsupported): its transparency")
					} else {
						assert.Empty(t, stderr)
					}
					require.Equal(t, 0, code, stderr)
					if colorType == 4 { // gray and alpha: its gray
						decoded = grayOf(decoded)
					}
					bytesPerSample, samples, want := wantPixels(decoded)
					got := clitest.Planes(t, output)[0]
					assert.Equal(t, [2]int{bytesPerSample, samples}, [2]int{got.BytesPerSample, got.Samples}, "layout")
					assert.True(t, bytes.Equal(want, got.Pix), "the pixels differ from image/png's")
				})
			}
		}
	}
}

func fmtPNG(colorType byte, depth int, trns bool) string {
	name := map[byte]string{0: "gray", 2: "RGB", 3: "palette", 4: "gray+alpha", 6: "RGBA"}[colorType]
	name += "/" + map[int]string{1: "1", 2: "2", 4: "4", 8: "8", 16: "16"}[depth]
	if trns {
		name += "/tRNS"
	}
	return name
}

// interlaced returns a 16-bit RGB PNG, Adam7-interlaced, with image/png's
// own filtering of each pass undone: the passes are written unfiltered.
func interlaced(t *testing.T, width, height int) []byte {
	img := rgba64Image(width, height).(*image.RGBA64)
	passes := []struct{ x0, y0, dx, dy int }{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	m := pngtest.Image{Width: width, Height: height, Depth: 16, ColorType: 2, Interlace: 1}
	var z [][]byte
	for _, p := range passes {
		for y := p.y0; y < height; y += p.dy {
			var row []byte
			for x := p.x0; x < width; x += p.dx {
				c := img.RGBA64At(x, y)
				row = append(row, byte(c.R>>8), byte(c.R), byte(c.G>>8), byte(c.G), byte(c.B>>8), byte(c.B))
			}
			if len(row) > 0 {
				z = append(z, row)
			}
		}
	}
	m.Rows = z
	data := m.Encode()
	decoded, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err, "image/png reads the interlaced fixture")
	require.Equal(t, img.Bounds(), decoded.Bounds())
	return data
}

func TestInterlacedPNG(t *testing.T) {
	data := interlaced(t, 45, 30)
	dir := t.TempDir()
	input := writeFile(t, dir, "adam7.png", data)
	output := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-compression", "none", input, output)
	require.Equal(t, 0, code, stderr)
	_, _, want := wantPixels(rgba64Image(45, 30))
	assert.True(t, bytes.Equal(want, clitest.Planes(t, output)[0].Pix), "decoded whole, the pixels differ")

	// Beyond the budget it is refused, with a way to convert it.
	os.Remove(output)
	code, _, stderr = clitest.Run(runConvert, "-max-memory", "20KiB", input, output)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "this 45 x 30 PNG is interlaced, so it is decoded whole, which takes about")
	assert.Contains(t, stderr, "more than -max-memory 20.0 KiB; rewrite it as a non-interlaced PNG, which streams (e.g. vips copy "+input+" adam7-noninterlaced.png)")
	assert.NoFileExists(t, output)

	// A name the shell would split is quoted in the command suggested.
	spaced := writeFile(t, dir, "slide 1's scan.png", data)
	_, _, stderr = clitest.Run(runConvert, "-max-memory", "20KiB", spaced, output)
	assert.Contains(t, stderr, "(e.g. vips copy '"+dir+`/slide 1'\''s scan.png' 'slide 1'\''s scan-noninterlaced.png')`)
}

// TestPNGPixelDensity: a pHYs chunk in pixels per metre gives the pixel
// size, whether the PNG is streamed or, interlaced, decoded whole.
func TestPNGPixelDensity(t *testing.T) {
	phys := pngtest.Chunk("pHYs", []byte{0, 0x1e, 0x84, 0x80, 0, 0x3d, 0x09, 0, 1}) // 2e6 and 4e6 per metre
	streamed := pngtest.Image{Width: 4, Height: 3, Depth: 8, ColorType: 0, Rows: make([][]byte, 3), Before: phys}
	for y := range streamed.Rows {
		streamed.Rows[y] = make([]byte, 4)
	}
	adam7 := interlaced(t, 9, 7)
	at := bytes.Index(adam7, []byte("IDAT")) - 4
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"streamed.png":   streamed.Encode(),
		"interlaced.png": append(append(bytes.Clone(adam7[:at]), phys...), adam7[at:]...),
	} {
		input := writeFile(t, dir, name, data)
		output := filepath.Join(dir, name+".ome.tif")
		code, stdout, stderr := clitest.Run(runConvert, input, output)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, ", pixel 0.5 µm x 0.25 µm, ", name)
		_, stdout, stderr = clitest.Run(runInfo, output)
		assert.Contains(t, stdout, "\n  pixel 0.5 µm x 0.25 µm\n", name, stderr)
	}
}

// TestInterlacedGrayAlpha: an interlaced PNG of gray and opaque alpha,
// decoded whole, is written as gray, as a streamed one is.
func TestInterlacedGrayAlpha(t *testing.T) {
	const width, height = 11, 9
	m := pngtest.Image{Width: width, Height: height, Depth: 8, ColorType: 4, Interlace: 1}
	passes := []struct{ x0, y0, dx, dy int }{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	want := make([]byte, width*height)
	for i := range want {
		want[i] = byte(7 * i)
	}
	for _, p := range passes {
		for y := p.y0; y < height; y += p.dy {
			var row []byte
			for x := p.x0; x < width; x += p.dx {
				row = append(row, want[y*width+x], 0xff)
			}
			if len(row) > 0 {
				m.Rows = append(m.Rows, row)
			}
		}
	}
	dir := t.TempDir()
	output := filepath.Join(dir, "out.ome.tif")
	code, stdout, stderr := clitest.Run(runConvert, "-compression", "none", writeFile(t, dir, "ga.png", m.Encode()), output)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "11 x 9 uint8")
	got := clitest.Planes(t, output)[0]
	assert.Equal(t, 1, got.Samples)
	assert.Equal(t, want, got.Pix)
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"in.png": "in.png", "/data/a_b-c.d@2x:1%+=,.png": "/data/a_b-c.d@2x:1%+=,.png", "": "''",
		"a b": "'a b'", "it's": `'it'\''s'`, "$HOME": "'$HOME'", "ü.png": "'ü.png'", "a\nb": "'a\nb'",
	} {
		assert.Equal(t, want, shellQuote(in), "%q", in)
	}
}
