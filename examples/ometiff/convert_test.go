package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/examples/internal/pngstream/pngtest"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/pyramid/source"
)

// Fixtures: small images with a different value at every pixel.

func grayImage(w, h int) image.Image {
	m := image.NewGray(image.Rect(0, 0, w, h))
	for i := range m.Pix {
		m.Pix[i] = uint8(i * 7)
	}
	return m
}

func gray16Image(w, h int) image.Image {
	m := image.NewGray16(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.SetGray16(x, y, color.Gray16{Y: uint16(x*977 + y*131)})
		}
	}
	return m
}

// nrgbaImage has translucent pixels when translucent is set.
func nrgbaImage(w, h int, translucent bool) image.Image {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if translucent {
				a = uint8(64 + (x+y)%192)
			}
			m.SetNRGBA(x, y, color.NRGBA{uint8(x * 5), uint8(y * 3), uint8(x*y + 11), a})
		}
	}
	return m
}

// premultipliedImage is an image.RGBA with translucent pixels.
func premultipliedImage(w, h int) image.Image {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(m, m.Rect, nrgbaImage(w, h, true), image.Point{}, draw.Src)
	return m
}

func rgba64Image(w, h int) image.Image {
	m := image.NewRGBA64(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.SetRGBA64(x, y, color.RGBA64{uint16(x * 1000), uint16(y * 999), uint16(x*y*7 + 3), 0xffff})
		}
	}
	return m
}

func palettedImage(w, h int) image.Image {
	palette := color.Palette{color.Black, color.White, color.RGBA{200, 30, 60, 255}, color.RGBA{10, 220, 90, 255}}
	m := image.NewPaletted(image.Rect(0, 0, w, h), palette)
	for i := range m.Pix {
		m.Pix[i] = uint8(i % len(palette))
	}
	return m
}

// webpImage is a 6 x 4 lossless WebP whose pixel (x, y) is
// (40x, 60y, (17x+29y) mod 256), as written by libwebp.
var webpImage = []byte("\x52\x49\x46\x46\x34\x00\x00\x00\x57\x45\x42\x50\x56\x50\x38\x4c\x27\x00\x00\x00" +
	"\x2f\x05\xc0\x00\x00\x99\x8c\xe8\x7f\x6c\x08\x24\x6d\xf1\xb6\xbf\xfc\xd1\xff\x38\x14\xb2\x8d\x00" +
	"\x1d\xd8\xf9\x8b\xfd\x08\x83\x32\x16\x31\x01\x00\x2b\x3d\x00\x00")

// encoded returns img in a file format.
func encoded(t testing.TB, img image.Image, encode func(io.Writer, image.Image) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, encode(&buf, img))
	return buf.Bytes()
}

func encodePNG(w io.Writer, m image.Image) error { return png.Encode(w, m) }
func encodeJPEG(w io.Writer, m image.Image) error {
	return jpeg.Encode(w, m, &jpeg.Options{Quality: 90})
}
func encodeGIF(w io.Writer, m image.Image) error { return gif.Encode(w, m, nil) }
func encodeBMP(w io.Writer, m image.Image) error { return bmp.Encode(w, m) }
func encodeTIFF(w io.Writer, m image.Image) error {
	return tiff.Encode(w, m, &tiff.Options{Compression: tiff.Deflate})
}

// wantPixels converts a decoded image as the program documents it: gray
// keeps its depth, 16-bit colour becomes RGB uint16, the rest RGB uint8,
// alpha dropped and colours un-premultiplied. It goes pixel by pixel
// through the colour models, not through the writer's conversion.
func wantPixels(img image.Image) (bytesPerSample, samples int, pix []byte) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.At(x, y)
			switch img.ColorModel() {
			case color.GrayModel:
				bytesPerSample, samples = 1, 1
				pix = append(pix, color.GrayModel.Convert(c).(color.Gray).Y)
			case color.Gray16Model:
				bytesPerSample, samples = 2, 1
				pix = binary.LittleEndian.AppendUint16(pix, color.Gray16Model.Convert(c).(color.Gray16).Y)
			case color.RGBA64Model, color.NRGBA64Model:
				bytesPerSample, samples = 2, 3
				n := color.NRGBA64Model.Convert(c).(color.NRGBA64)
				for _, v := range []uint16{n.R, n.G, n.B} {
					pix = binary.LittleEndian.AppendUint16(pix, v)
				}
			default:
				bytesPerSample, samples = 1, 3
				n := color.NRGBAModel.Convert(c).(color.NRGBA)
				pix = append(pix, n.R, n.G, n.B)
			}
		}
	}
	return bytesPerSample, samples, pix
}

// writeFile writes data to name in dir and returns its path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// TestTransparentImages: an image with a pixel that is not opaque is
// refused, naming the pixel, since the output holds no transparency; with
// -skip-unsupported its colours are converted, and the transparency said
// left out. An image whose alpha is opaque throughout converts as it is.
func TestTransparentImages(t *testing.T) {
	opaqueRGBA := pngtest.Image{Width: 9, Height: 4, Depth: 8, ColorType: 6}
	for y := range 4 {
		row := make([]byte, 9*4)
		for i := range row {
			row[i] = byte(i*7 + y)
			if i%4 == 3 {
				row[i] = 0xff
			}
		}
		opaqueRGBA.Rows = append(opaqueRGBA.Rows, row)
	}
	grayAlpha := pngtest.Image{Width: 6, Height: 3, Depth: 8, ColorType: 4}
	keyed := pngtest.Image{Width: 6, Height: 3, Depth: 8, ColorType: 0, TRNS: []byte{0, 200}}
	for y := range 3 {
		ga, g := make([]byte, 12), make([]byte, 6)
		for x := range 6 {
			ga[2*x], ga[2*x+1], g[x] = byte(40*x+y+1), 0xff, byte(40*x+y+1)
		}
		if y == 1 {
			ga[2*4+1] = 128
		}
		if y == 2 {
			g[2] = 200
		}
		grayAlpha.Rows, keyed.Rows = append(grayAlpha.Rows, ga), append(keyed.Rows, g)
	}
	rgbKeyed := pngtest.Image{Width: 3, Height: 2, Depth: 8, ColorType: 2, TRNS: []byte{0, 10, 0, 20, 0, 30},
		Rows: [][]byte{{10, 20, 31, 10, 21, 30, 11, 20, 30}, {1, 2, 3, 10, 20, 30, 10, 20, 30}}}
	gray16Keyed := pngtest.Image{Width: 4, Height: 2, Depth: 16, ColorType: 0, TRNS: []byte{0x12, 0x34},
		Rows: [][]byte{{0x12, 0x35, 0x13, 0x34, 0, 0, 0x12, 0x34}, {0, 0, 0, 0, 0, 0, 0, 0}}}
	highKey := pngtest.Image{Width: 3, Height: 2, Depth: 8, ColorType: 0, TRNS: []byte{0x01, 0x15},
		Rows: [][]byte{{0x14, 0x16, 0x01}, {0, 0, 0x15}}}
	holed := image.NewNRGBA(image.Rect(0, 0, 40, 30))
	draw.Draw(holed, holed.Rect, nrgbaImage(40, 30, false), image.Point{}, draw.Src)
	holed.SetNRGBA(7, 5, color.NRGBA{1, 2, 3, 0})
	gif := image.NewPaletted(image.Rect(0, 0, 31, 29), color.Palette{color.Black, color.White, color.Transparent})
	gif.SetColorIndex(3, 2, 1)
	gif.SetColorIndex(30, 2, 2)
	tests := []struct {
		name, file string
		data       []byte
		at         string // the first pixel not opaque; "" for none
	}{
		{"opaque RGBA PNG", "opaque.png", opaqueRGBA.Encode(), ""},
		{"RGBA PNG, streamed", "rgba.png", encoded(t, holed, encodePNG), "(7, 5)"},
		{"16-bit RGBA PNG", "rgba16.png", encoded(t, image.NewNRGBA64(image.Rect(0, 0, 5, 3)), encodePNG), "(0, 0)"},
		{"gray and alpha PNG", "ga.png", grayAlpha.Encode(), "(4, 1)"},
		{"gray PNG with a transparent level", "key.png", keyed.Encode(), "(2, 2)"},
		{"RGB PNG with a transparent colour", "rgbkey.png", rgbKeyed.Encode(), "(1, 1)"},
		{"16-bit gray PNG with a transparent level", "key16.png", gray16Keyed.Encode(), "(3, 0)"},
		{"a key past 8 bits, of which the low byte counts (image/png)", "hikey.png", highKey.Encode(), "(2, 1)"},
		{"GIF with a transparent index", "t.gif", encoded(t, gif, encodeGIF), "(30, 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			input := writeFile(t, dir, tt.file, tt.data)
			output := filepath.Join(dir, "out.ome.tif")
			code, _, stderr := clitest.Run(runConvert, "-compression", "none", input, output)
			if tt.at != "" {
				require.Equal(t, 1, code)
				assert.Contains(t, stderr, "the image is transparent (its alpha, or its transparent colour) at pixel "+tt.at)
				assert.NoFileExists(t, output)
				code, _, stderr = clitest.Run(runConvert, "-compression", "none", "-skip-unsupported", input, output)
				assert.Equal(t, convertName+": "+input+": left out (-skip-unsupported): its transparency\n", stderr)
			} else {
				assert.Empty(t, stderr)
			}
			require.Equal(t, 0, code, stderr)
			decoded, _, err := image.Decode(bytes.NewReader(tt.data))
			require.NoError(t, err)
			if tt.file == "ga.png" { // gray and alpha: its gray
				decoded = grayOf(decoded)
			}
			_, _, want := wantPixels(decoded)
			assert.True(t, bytes.Equal(want, clitest.Planes(t, output)[0].Pix), "the colours")
		})
	}
}

func TestRunConvertsImages(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		data  func(t *testing.T) []byte
		args  []string
		wants []string // in the description of the output
	}{
		{"gray PNG", "gray.png", func(t *testing.T) []byte { return encoded(t, grayImage(300, 200), encodePNG) },
			[]string{"-compression", "none"}, []string{`"gray": 300 x 200, Z 1, C 1, T 1, uint8`, "SubIFD 0.1: 150 x 100"}},
		{"16-bit gray PNG", "gray16.png", func(t *testing.T) []byte { return encoded(t, gray16Image(70, 50), encodePNG) },
			[]string{"-compression", "none"}, []string{"uint16", "IFD 0: 70 x 50, 1 x uint16"}},
		{"opaque RGB PNG", "rgb.png", func(t *testing.T) []byte { return encoded(t, nrgbaImage(40, 30, false), encodePNG) },
			[]string{"-compression", "none"}, []string{"IFD 0: 40 x 30, 3 x uint8"}},
		{"16-bit RGB PNG", "rgb16.png", func(t *testing.T) []byte { return encoded(t, rgba64Image(33, 17), encodePNG) },
			[]string{"-compression", "none"}, []string{"IFD 0: 33 x 17, 3 x uint16"}},
		{"paletted PNG, LZW", "palette.png", func(t *testing.T) []byte { return encoded(t, palettedImage(64, 64), encodePNG) },
			nil, []string{"3 x uint8", "LZW"}},
		{"JPEG", "photo.jpg", func(t *testing.T) []byte { return encoded(t, nrgbaImage(50, 40, false), encodeJPEG) },
			[]string{"-compression", "none"}, []string{"3 x uint8"}},
		{"gray JPEG", "gray.jpeg", func(t *testing.T) []byte { return encoded(t, grayImage(20, 20), encodeJPEG) },
			[]string{"-compression", "none"}, []string{"1 x uint8"}},
		{"GIF", "anim.gif", func(t *testing.T) []byte { return encoded(t, palettedImage(31, 29), encodeGIF) },
			[]string{"-compression", "none"}, []string{"3 x uint8"}},
		{"BMP", "image.bmp", func(t *testing.T) []byte { return encoded(t, nrgbaImage(25, 9, false), encodeBMP) },
			[]string{"-compression", "none"}, []string{"3 x uint8"}},
		{"16-bit TIFF, zstd", "scan.tif", func(t *testing.T) []byte { return encoded(t, gray16Image(300, 300), encodeTIFF) },
			[]string{"-compression", "zstd", "-tile", "128", "-downsampling", "nearest"}, []string{"1 x uint16, tiles 128 x 128 (3 x 3), Zstd"}},
		{"lossless WebP", "w.webp", func(*testing.T) []byte { return webpImage },
			[]string{"-compression", "none"}, []string{"IFD 0: 6 x 4, 3 x uint8"}},
		{"metadata", "meta.png", func(t *testing.T) []byte { return encoded(t, gray16Image(64, 64), encodePNG) },
			[]string{"-name", "Nuclei", "-channels", "DAPI", "-physical-size", "0.25", "-physical-unit", "um", "-levels", "2", "-bigtiff", "always"},
			[]string{"BigTIFF", `"Nuclei": 64 x 64`, "pixel 0.25 µm x 0.25 µm", `channel 0 "DAPI"`, "SubIFD 0.1: 32 x 32"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := tt.data(t)
			input := writeFile(t, dir, tt.file, data)
			output := filepath.Join(dir, "out.ome.tif")
			code, stdout, stderr := clitest.Run(runConvert, append(tt.args, input, output)...)
			require.Equal(t, 0, code, stderr)
			assert.Empty(t, stderr, "stderr is not a terminal: no progress bar")
			assert.True(t, strings.HasPrefix(stdout, "wrote "+output), stdout)

			description := clitest.Describe(t, output, pyramid.InspectOptions{})
			for _, want := range tt.wants {
				assert.Contains(t, description, want)
			}
			decoded, _, err := image.Decode(bytes.NewReader(data))
			require.NoError(t, err)
			bytesPerSample, samples, want := wantPixels(decoded)
			planes := clitest.Planes(t, output)
			require.Len(t, planes, 1)
			assert.Equal(t, samples, planes[0].Samples)
			assert.Equal(t, bytesPerSample, planes[0].BytesPerSample)
			assert.True(t, bytes.Equal(want, planes[0].Pix), "the pixels differ from the input's")
			layouts := map[[2]int]string{{1, 1}: "uint8", {2, 1}: "uint16", {1, 3}: "RGB uint8", {2, 3}: "RGB uint16"}
			b := decoded.Bounds()
			assert.Contains(t, stdout, fmt.Sprintf(": %d x %d %s, Z 1 x C 1 x T 1,", b.Dx(), b.Dy(), layouts[[2]int{bytesPerSample, samples}]),
				"the summary misreports the layout")
		})
	}
}

func TestWebPFixture(t *testing.T) {
	decoded, format, err := image.Decode(bytes.NewReader(webpImage))
	require.NoError(t, err)
	require.Equal(t, "webp", format)
	for y := range 4 {
		for x := range 6 {
			want := color.NRGBA{uint8(40 * x), uint8(60 * y), uint8((17*x + 29*y) % 256), 255}
			require.Equal(t, want, color.NRGBAModel.Convert(decoded.At(x, y)), "pixel (%d, %d)", x, y)
		}
	}
}

// rawPlanes returns n planes of size bytes each, every byte different from
// its neighbours, and the file holding them one after another.
func rawPlanes(t testing.TB, dir string, n, size int) ([][]byte, string) {
	planes := make([][]byte, n)
	var all []byte
	for p := range planes {
		planes[p] = make([]byte, size)
		for i := range planes[p] {
			planes[p][i] = byte(i*13 + p*101 + i/251)
		}
		all = append(all, planes[p]...)
	}
	return planes, writeFile(t, dir, "planes.raw", all)
}

func TestRunConvertsRaw(t *testing.T) {
	float32s := func(n int) []byte {
		var b []byte
		for i := range n {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(i)/7))
		}
		return b
	}
	tests := []struct {
		name       string
		args       []string
		planes     int
		planeBytes int
		wants      []string
	}{
		{"uint16 Z and C", []string{"-raw-width", "70", "-raw-height", "40", "-raw-type", "uint16", "-raw-z", "3", "-raw-channels", "2",
			"-raw-order", "xyczt", "-channels", "DAPI,FITC", "-physical-size", "0.5", "-physical-size-z", "2", "-compression", "none"},
			6, 70 * 40 * 2, []string{"Z 3, C 2, T 1, uint16, XYCZT, 6 planes", "Z step 2 µm", `channel 1 "FITC"`}},
		{"RGB uint8 over time", []string{"-raw-width", "33", "-raw-height", "20", "-raw-samples", "3", "-raw-t", "2", "-compression", "deflate"},
			2, 33 * 20 * 3, []string{"Z 1, C 3, T 2, uint8", "IFD 1: 33 x 20, 3 x uint8"}},
		{"int16 mode", []string{"-raw-width", "300", "-raw-height", "257", "-raw-type", "int16", "-downsampling", "mode", "-workers", "1"},
			1, 300 * 257 * 2, []string{"int16", "SubIFD 0.1: 150 x 129"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			planes, input := rawPlanes(t, dir, tt.planes, tt.planeBytes)
			output := filepath.Join(dir, "out.ome.tif")
			code, stdout, stderr := clitest.Run(runConvert, append(tt.args, input, output)...)
			require.Equal(t, 0, code, stderr)
			assert.Empty(t, stderr)
			assert.Contains(t, stdout, "wrote "+output)
			description := clitest.Describe(t, output, pyramid.InspectOptions{})
			for _, want := range tt.wants {
				assert.Contains(t, description, want)
			}
			got := clitest.Planes(t, output)
			require.Len(t, got, len(planes))
			for p := range planes {
				assert.True(t, bytes.Equal(planes[p], got[p].Pix), "plane %d differs", p)
			}
		})
	}
	t.Run("float32, floating-point predictor", func(t *testing.T) {
		dir := t.TempDir()
		pix := float32s(50 * 30)
		input := writeFile(t, dir, "f.raw", pix)
		output := filepath.Join(dir, "out.ome.tif")
		code, _, stderr := clitest.Run(runConvert, "-raw-width", "50", "-raw-height", "30", "-raw-type", "float32", "-compression", "zstd", input, output)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, clitest.Describe(t, output, pyramid.InspectOptions{}), "1 x float32, tiles 64 x 32 (1 x 1), Zstd, predictor floating point")
		got := clitest.Planes(t, output)
		assert.True(t, bytes.Equal(pix, got[0].Pix))
	})
}

func TestRunOutputChecksWithTiffinfo(t *testing.T) {
	dir := t.TempDir()
	input := writeFile(t, dir, "in.png", encoded(t, nrgbaImage(300, 260, true), encodePNG))
	output := filepath.Join(dir, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-skip-unsupported", input, output) // its alpha dropped
	require.Equal(t, 0, code, stderr)
	clitest.CheckTiffinfo(t, output)
}

func TestRunForceReplacesOutput(t *testing.T) {
	dir := t.TempDir()
	input := writeFile(t, dir, "in.png", encoded(t, grayImage(32, 32), encodePNG))
	output := writeFile(t, dir, "out.ome.tif", []byte("old"))
	code, _, stderr := clitest.Run(runConvert, input, output)
	require.Equal(t, 1, code)
	assert.Equal(t, "ometiff convert: "+output+" exists (use -force to replace it)\n", stderr)
	old, err := os.ReadFile(output)
	require.NoError(t, err)
	assert.Equal(t, "old", string(old), "the existing output was touched")

	code, _, stderr = clitest.Run(runConvert, "-force", input, output)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, clitest.Describe(t, output, pyramid.InspectOptions{}), "32 x 32")
}

func TestRunRejectsBadInput(t *testing.T) {
	png := encoded(t, grayImage(32, 32), encodePNG)
	tests := []struct {
		name  string
		args  []string // "IN" is replaced by the input, "OUT" by the output
		input []byte   // nil: no input file
		code  int
		msg   string // in the error, if set
	}{
		{"no arguments", nil, nil, 2, ""},
		{"one argument", []string{"IN"}, png, 2, ""},
		{"three arguments", []string{"IN", "OUT", "OUT"}, png, 2, ""},
		{"unknown flag", []string{"-quality", "9", "IN", "OUT"}, png, 2, ""},
		{"unknown compression", []string{"-compression", "jpeg2000", "IN", "OUT"}, png, 2, ""},
		{"unknown predictor", []string{"-predictor", "vertical", "IN", "OUT"}, png, 2, ""},
		{"unknown downsampling", []string{"-downsampling", "max", "IN", "OUT"}, png, 2, ""},
		{"unknown bigtiff", []string{"-bigtiff", "maybe", "IN", "OUT"}, png, 2, ""},
		{"not a number", []string{"-tile", "big", "IN", "OUT"}, png, 2, ""},
		{"tile not a multiple of 16", []string{"-tile", "17", "IN", "OUT"}, png, 2, "-tile 17: want a multiple of 16 from 16 to 32768"},
		{"tile 0", []string{"-tile", "0", "IN", "OUT"}, png, 2, "-tile 0: want a multiple of 16"},
		{"too many levels", []string{"-levels", "12", "IN", "OUT"}, png, 2, ""},
		{"predictor without compression", []string{"-compression", "none", "-predictor", "horizontal", "IN", "OUT"}, png, 2, ""},
		{"float predictor on integers", []string{"-predictor", "float", "IN", "OUT"}, png, 2, ""},
		{"unknown unit", []string{"-physical-size", "1", "-physical-unit", "furlong", "IN", "OUT"}, png, 2, ""},
		{"negative physical size", []string{"-physical-size", "-1", "IN", "OUT"}, png, 2, "-physical-size -1: want a size above 0, or 0 (unknown)"},
		// Ranges said in the flags' words, not the writer's options'.
		{"NaN z step", []string{"-physical-size-z", "NaN", "IN", "OUT"}, png, 2, "-physical-size-z NaN: want a size above 0, or 0 (unknown)"},
		{"quality past 100", []string{"-compression", "jpeg", "-quality", "101", "IN", "OUT"}, png, 2, "-quality 101: want 1 to 100, or 0 for the default (75)"},
		{"zstd level past 22", []string{"-compression", "zstd", "-level", "99", "IN", "OUT"}, png, 2, "-level 99: zstd takes 1 to 22, or 0 for the default"},
		{"deflate level past 9", []string{"-compression", "deflate", "-level", "10", "IN", "OUT"}, png, 2, "-level 10: deflate takes 1 to 9, or 0 for the default"},
		{"negative levels", []string{"-levels", "-1", "IN", "OUT"}, png, 2, "-levels -1: want 0 (down to one tile) or more"},
		{"too many channel names", []string{"-channels", "DAPI,FITC", "IN", "OUT"}, png, 2, "-channels: 2 names for 1 channel: give one name per channel"},
		{"too few channel names", []string{"-raw-width", "4", "-raw-height", "4", "-raw-channels", "3", "-channels", "DAPI,FITC", "IN", "OUT"},
			make([]byte, 48), 2, "-channels: 2 names for 3 channels: give one name per channel; an empty name keeps the input's"},
		{"channel names for RGB", []string{"-channels", "R,G,B", "IN", "OUT"}, encoded(t, nrgbaImage(8, 8, false), encodePNG), 2, "-channels: 3 names for 1 channel (RGB): give one name"},
		{"a unit without a size", []string{"-physical-unit", "nm", "IN", "OUT"}, png, 2, "-physical-unit is the unit of -physical-size and -physical-size-z: give one of them too"},
		{"a level without its codec", []string{"-level", "9", "IN", "OUT"}, png, 2, "-level 9 is Deflate's or Zstd's: give -compression deflate or zstd (the output is LZW)"},
		{"extra arguments", []string{"IN", "OUT", "-tile", "64", "more"}, png, 2, `got 3: ["`},
		{"invalid UTF-8 name", []string{"-name", "\xff", "IN", "OUT"}, png, 2, ""},
		{"missing input", []string{"IN", "OUT"}, nil, 1, ""},
		{"unknown format", []string{"IN", "OUT"}, []byte("plain text, not an image"), 1, ""},
		{"empty input", []string{"IN", "OUT"}, []byte{}, 1, ""},
		{"truncated PNG", []string{"IN", "OUT"}, png[:len(png)/2], 1, ""},
		{"missing output directory", []string{"IN", "missing/out.ome.tif"}, png, 1, ""},
		{"raw without width", []string{"-raw-type", "uint16", "IN", "OUT"}, make([]byte, 8), 2, ""},
		{"raw of the wrong size", []string{"-raw-width", "4", "-raw-height", "4", "IN", "OUT"}, make([]byte, 15), 2, "has 15 bytes, but 1 plane of 4 x 4 x 1 uint8 samples takes 16"},
		{"raw with no planes", []string{"-raw-width", "4", "-raw-height", "4", "-raw-z", "0", "IN", "OUT"}, make([]byte, 16), 2, ""},
		{"raw with 2 samples", []string{"-raw-width", "4", "-raw-height", "4", "-raw-samples", "2", "IN", "OUT"}, make([]byte, 32), 2, ""},
		{"raw RGB float", []string{"-raw-width", "4", "-raw-height", "4", "-raw-samples", "3", "-raw-type", "float32", "IN", "OUT"}, make([]byte, 192), 2, ""},
		{"unknown raw type", []string{"-raw-width", "4", "-raw-height", "4", "-raw-type", "uint4", "IN", "OUT"}, make([]byte, 16), 2, ""},
		{"unknown raw order", []string{"-raw-width", "4", "-raw-height", "4", "-raw-order", "XYZ", "IN", "OUT"}, make([]byte, 16), 2, ""},
		{"raw size overflowing", []string{"-raw-width", "3000000000", "-raw-height", "3000000000", "-raw-type", "float64", "-raw-z", "1000", "IN", "OUT"},
			make([]byte, 16), 2, "has 16 bytes, but 1000 planes of 3000000000 x 3000000000 x 1 double samples take more than a file can hold"},
		{"raw plane overflowing", []string{"-raw-width", "4294967296", "-raw-height", "4294967296", "IN", "OUT"},
			make([]byte, 16), 2, "1 plane of 4294967296 x 4294967296 x 1 uint8 samples takes more than a file can hold"},
		{"raw too wide for the memory", []string{"-raw-width", "1000000", "-raw-height", "2", "-max-memory", "40MiB", "IN", "OUT"},
			make([]byte, 2000000), 1, "rows of 1000000 pixels need about 45.8 MiB for the pyramid's bands at tile 256, more than -max-memory 40.0 MiB"},
		{"negative max-pixels", []string{"-max-pixels", "-1", "IN", "OUT"}, png, 2, "-max-pixels -1"},
		{"too many workers", []string{"-workers", "100000", "IN", "OUT"}, png, 2, "-workers 100000: want 0 (one per CPU) to 256"},
		{"negative workers", []string{"-workers", "-1", "IN", "OUT"}, png, 2, "-workers -1: want 0 (one per CPU) to 256"},
		{"bad max-memory", []string{"-max-memory", "lots", "IN", "OUT"}, png, 2, `"lots" is not a size`},
		{"max-memory below a byte", []string{"-max-memory", "0.5", "IN", "OUT"}, png, 2, `"0.5" is less than a byte: want 0 (no limit) or at least 1`}, // it was no limit
		{"more pixels than -max-pixels", []string{"-max-pixels", "1000", "IN", "OUT"}, png, 1,
			"its header claims 32 x 32 pixels, more than -max-pixels 1000"},
		{"JPEG beyond -max-memory", []string{"-max-memory", "100KiB", "IN", "OUT"}, encoded(t, nrgbaImage(300, 200, false), encodeJPEG), 1,
			"this 300 x 200 JPEG is decoded whole, which takes about 664.5 KiB, more than -max-memory 100.0 KiB; " +
				"rewrite it as a non-interlaced PNG, which streams (e.g. vips copy IN input-noninterlaced.png), or raise -max-memory"},
		{"GIF beyond -max-pixels", []string{"-max-pixels", "100", "IN", "OUT"}, encoded(t, palettedImage(31, 29), encodeGIF), 1, "more than -max-pixels 100"},
		{"GIF cut short", []string{"IN", "OUT"}, func() []byte { g := encoded(t, palettedImage(31, 29), encodeGIF); return g[:len(g)-40] }(), 1,
			"decoding the image with image/gif: gif:"},
		{"PNG rows cut short", []string{"IN", "OUT"}, truncatedRows(t), 1, "not enough image data: 20 of 64 rows"},
		{"PNG too short for its size", []string{"-max-pixels", "0", "IN", "OUT"}, pngBomb(t), 1, "a 1243-byte file cannot hold this 100000 x 100000 PNG"},
		{"TIFF cut short", []string{"IN", "OUT"}, tiffFile(t)[:150], 1, "tiff: malformed"},
		{"TIFF cut in its directories", []string{"IN", "OUT"}, tiffFile(t)[:len(tiffFile(t))-200], 1, "past the end"},
		{"TIFF whose strip does not decode", []string{"IN", "OUT"}, corruptTIFF(t), 1, "compress: corrupt block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inDir := t.TempDir()
			input := filepath.Join(inDir, "input")
			if tt.input != nil {
				writeFile(t, inDir, "input", tt.input)
			}
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = strings.NewReplacer("IN", input, "OUT", "out.ome.tif").Replace(a)
			}
			msg := strings.ReplaceAll(tt.msg, "IN", input)
			clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), tt.code, msg, args...)
		})
	}
}

// truncatedRows is a 64 x 64 gray PNG whose image data ends after 20 rows,
// though its file is whole: the output, begun, must be discarded.
func truncatedRows(t *testing.T) []byte {
	m := pngtest.Image{Width: 64, Height: 64, Depth: 8, Rows: make([][]byte, 20)}
	for y := range m.Rows {
		m.Rows[y] = bytes.Repeat([]byte{byte(y)}, 64)
	}
	return m.Encode()
}

// TestRunRejectsItsInputOrADirectoryAsOutput: an output that is the input
// (which -force would replace with its conversion) or a directory is a
// usage error, and nothing changes.
func TestRunRejectsItsInputOrADirectoryAsOutput(t *testing.T) {
	dir := t.TempDir()
	input := writeOMETIFF(t, dir)
	source, err := os.ReadFile(input)
	require.NoError(t, err)
	outDir := filepath.Join(dir, "out.ome.tif")
	require.NoError(t, os.Mkdir(outDir, 0o755))
	for _, args := range [][]string{{input, input}, {"-force", input, input}, {input, filepath.Join(dir, ".", filepath.Base(input))}} {
		code, _, stderr := clitest.Run(runConvert, args...)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, stderr, "is the input: name another output (the conversion would replace its source)")
	}
	for _, args := range [][]string{{input, outDir}, {"-force", input, outDir}} {
		code, _, stderr := clitest.Run(runConvert, args...)
		assert.Equal(t, 2, code, args)
		assert.Equal(t, convertName+": "+outDir+" is a directory: name the output file\n", stderr)
	}
	data, err := os.ReadFile(input)
	require.NoError(t, err)
	assert.Equal(t, source, data, "the input is unchanged")
	entries, err := os.ReadDir(outDir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestRunRejectsAnOutputNamedOtherwise: the output is OME-TIFF, so a name
// of another format's extension, or of none, is a usage error before
// anything is read or written; every TIFF extension is taken.
func TestRunRejectsAnOutputNamedOtherwise(t *testing.T) {
	dir := t.TempDir()
	input := writeFile(t, dir, "in.png", encoded(t, grayImage(32, 32), encodePNG))
	for _, c := range []struct{ output, msg string }{
		{"out.png", `output "out.png": ometiff writes OME-TIFF, not .png; name it .ome.tif`},
		{"out.ome.zarr", `output "out.ome.zarr": ometiff writes OME-TIFF, not .zarr; name it .ome.tif`},
		{"out", `output "out" has no extension: ometiff writes OME-TIFF; name it .ome.tif`},
	} {
		clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 2, c.msg, input, c.output)
	}
	// BigTIFF's names give BigTIFF, as Bio-Formats writes them, unless
	// -bigtiff says otherwise.
	for _, output := range []string{"a.ome.tif", "b.ome.tiff", "c.tif", "d.TIFF", "e.ome.btf", "f.tf8", "g.TF2"} {
		code, _, stderr := clitest.Run(runConvert, input, filepath.Join(dir, output))
		assert.Equal(t, 0, code, stderr)
		big := strings.HasPrefix(clitest.Describe(t, filepath.Join(dir, output), pyramid.InspectOptions{}), "BigTIFF")
		assert.Equal(t, !strings.Contains(strings.ToLower(output), ".tif"), big, output)
	}
	code, _, stderr := clitest.Run(runConvert, "-bigtiff", "never", input, filepath.Join(dir, "h.btf"))
	assert.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(clitest.Describe(t, filepath.Join(dir, "h.btf"), pyramid.InspectOptions{}), "classic TIFF"))
	code, _, stderr = clitest.Run(runConvert, "-bigtiff", "auto", input, filepath.Join(dir, "i.btf"))
	assert.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(clitest.Describe(t, filepath.Join(dir, "i.btf"), pyramid.InspectOptions{}), "BigTIFF"), "auto given")
}

func TestRunRejectsADirectory(t *testing.T) {
	input := t.TempDir()
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, input+" is a directory, not an image or raw file", input, "out.ome.tif")
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "is a directory", "-raw-width", "4", "-raw-height", "4", input, "out.ome.tif")
}

func TestRunPrintsUsage(t *testing.T) {
	clitest.AssertUsage(t, runConvert, "usage: ometiff convert [flags] input output.ome.tif", "-raw-order order",
		"Non-interlaced PNG and raw files are streamed", "-max-pixels pixels", "(default 4294967296)", "-max-memory size", "(default 1GiB)")
}

func TestProgressDrawsOnlyOnTerminals(t *testing.T) {
	var buf bytes.Buffer
	assert.False(t, newProgress(&buf).visible)

	p := &progress{out: &buf, visible: true}
	for tiles := int64(1); tiles <= 10; tiles++ {
		p.update(pyramid.Progress{Tiles: tiles, TotalTiles: 10})
	}
	p.done()
	assert.Contains(t, buf.String(), "writing tiles")
}

// TestPlaneCoordsFollowTheDimensionOrder checks the order a raw input's
// planes are read in.
func TestPlaneCoordsFollowTheDimensionOrder(t *testing.T) {
	spec := pyramid.ImageSpec{SizeZ: 2, SizeC: 3, SizeT: 4}
	tests := []struct {
		order   pyramid.DimensionOrder
		p       int
		z, c, t int
	}{
		{pyramid.XYZCT, 0, 0, 0, 0},
		{pyramid.XYZCT, 1, 1, 0, 0},
		{pyramid.XYZCT, 2, 0, 1, 0},
		{pyramid.XYZCT, 23, 1, 2, 3},
		{pyramid.XYCZT, 1, 0, 1, 0},
		{pyramid.XYCZT, 3, 1, 0, 0},
		{pyramid.XYTCZ, 5, 0, 1, 1},
		{pyramid.XYTZC, 8, 0, 1, 0},
	}
	for _, tt := range tests {
		spec.DimensionOrder = tt.order
		z, c, tm := spec.PlaneCoords(tt.p)
		assert.Equal(t, [3]int{tt.z, tt.c, tt.t}, [3]int{z, c, tm}, "%s plane %d", tt.order, tt.p)
	}
}

func TestCopyPlaneNeedsTheWholePlane(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		n       int64
		wantErr bool
	}{
		{"exact", "abcdef", 6, false},
		{"more follows", "abcdefgh", 6, false},
		{"short", "abc", 6, true},
		{"empty", "", 6, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := copyPlane(&out, strings.NewReader(tt.input), tt.n, make([]byte, 4))
			if tt.wantErr {
				assert.ErrorContains(t, err, "the input ends after")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.input[:tt.n], out.String())
		})
	}
}

// tiffFile is a small TIFF of two uncompressed gray pages: their strips
// first, then the directories.
func tiffFile(t *testing.T) []byte {
	path := filepath.Join(t.TempDir(), "in.tif")
	gray := page{width: 40, height: 30, samples: 1, bits: 8, photometric: 1}
	writeTIFF(t, path, gray, gray)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// loopingTIFF is tiffFile with its second directory's next-directory
// offset pointing back at the first.
func loopingTIFF(t *testing.T) []byte {
	data := bytes.Clone(tiffFile(t))
	first := binary.LittleEndian.Uint32(data[4:])
	second := binary.LittleEndian.Uint32(data[first+2+12*uint32(binary.LittleEndian.Uint16(data[first:])):])
	next := second + 2 + 12*uint32(binary.LittleEndian.Uint16(data[second:]))
	binary.LittleEndian.PutUint32(data[next:], first)
	return data
}

// corruptTIFF is a TIFF of one Deflate strip whose stream is not zlib.
func corruptTIFF(t *testing.T) []byte {
	data := bytes.Clone(tiffFile(t))
	// The first strip starts at 16 (the writer reserves the header's 16
	// bytes); Compression of both directories becomes Deflate.
	for i := range data {
		if i+8 <= len(data) && binary.LittleEndian.Uint16(data[i:]) == 259 && binary.LittleEndian.Uint16(data[i+2:]) == 3 &&
			binary.LittleEndian.Uint32(data[i+4:]) == 1 {
			binary.LittleEndian.PutUint16(data[i+8:], 8)
		}
	}
	return data
}

// TestSummaryPixelSize: the summary gives a pixel's width, and its height
// when it differs.
func TestSummaryPixelSize(t *testing.T) {
	path := writeFile(t, t.TempDir(), "out.ome.tif", []byte("x"))
	for _, tt := range []struct {
		y    float64
		unit string
		want string
	}{{0.5, "", ", pixel 0.5 µm, "}, {1, "", ", pixel 0.5 µm x 1 µm, "}, {0.5, "nm", ", pixel 0.5 µm x 0.5 nm, "}, {0, "", ", pixel 0.5 µm, "}} {
		var b strings.Builder
		spec := pyramid.ImageSpec{SizeX: 4, SizeY: 4, SizeZ: 1, SizeC: 1, SizeT: 1, PhysicalSizeX: 0.5, PhysicalSizeY: tt.y, PhysicalSizeYUnit: tt.unit}
		require.NoError(t, printSummary(&b, path, []pyramid.ImageSpec{spec}, 0))
		assert.Contains(t, b.String(), tt.want)
	}
}

// TestSummaryNotPrinted: a summary that cannot be printed fails the run,
// saying that the output is written all the same.
func TestSummaryNotPrinted(t *testing.T) {
	path := writeFile(t, t.TempDir(), "out.ome.tif", []byte("x"))
	spec := pyramid.ImageSpec{SizeX: 4, SizeY: 4, SizeZ: 1, SizeC: 1, SizeT: 1}
	for _, specs := range [][]pyramid.ImageSpec{{spec}, {spec, spec}} {
		err := printSummary(fullWriter{}, path, specs, 0)
		require.ErrorIs(t, err, syscall.ENOSPC)
		assert.ErrorContains(t, err, path+" is written, but what it holds cannot be printed")
	}
}

// TestOutputError: the output's failures as the command reports them.
func TestOutputError(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.ome.tif")
	cfg := config{output: out}
	op := &iohandle.OpError{Op: "write", Path: out, Err: syscall.ENOSPC}
	assert.Equal(t, op, outputError(fmt.Errorf("source: plane z=0 c=0 t=0: %w", op), cfg))
	assert.EqualError(t, outputError(fmt.Errorf("%w: %s", iohandle.ErrExist, out), cfg), out+" exists (use -force to replace it)")
	cfg.force = true
	other := errors.New("pyramid: something else")
	assert.Equal(t, other, outputError(other, cfg))
	assert.NoError(t, outputError(nil, cfg))
}

// TestRawMaxPixels: -max-pixels, when given, bounds a raw input as it
// does a TIFF (it was not checked).
func TestRawMaxPixels(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "r.raw")
	require.NoError(t, os.WriteFile(in, make([]byte, 300*200), 0o600))
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "r.raw: -raw-width and -raw-height give 300 x 200 pixels, more than -max-pixels 10",
		"-max-pixels", "10", "-raw-width", "300", "-raw-height", "200", in, "out.ome.tif")
	code, _, stderr := clitest.Run(runConvert, "-raw-width", "300", "-raw-height", "200", in, filepath.Join(dir, "out.ome.tif"))
	assert.Equal(t, 0, code, stderr)
}

// TestImageNameIsXMLText: an image named after its input's file name, which
// need not be UTF-8 nor free of control characters, is named as the
// library cleans a TIFF's text (the writer refused it, exit 2, naming its
// field); a -name or -channels the OME-XML cannot hold is a usage error
// naming the flag.
func TestImageNameIsXMLText(t *testing.T) {
	png := encoded(t, grayImage(8, 8), encodePNG)
	tif := encoded(t, grayImage(8, 8), encodeTIFF)
	for _, tt := range []struct {
		name string
		file string
		data []byte
		args []string
		code int
		want string // the image's name, or what the error says
	}{
		{"invalid UTF-8", "a\xff.png", png, nil, 0, "a\uFFFD"},
		{"escape", "a\x1bb.png", png, nil, 0, "ab"},
		{"TIFF of a control character", "\x01c.tif", tif, nil, 0, "c"},
		{"-name invalid UTF-8", "in.png", png, []string{"-name", "b\xff"}, 2, `-name "b\xff": invalid UTF-8`},
		{"-name escape", "in.png", png, []string{"-name", "b\x1b"}, 2, `-name "b\x1b": character U+001B`},
		{"-channels escape", "in.png", png, []string{"-channels", "\x02"}, 2, `-channels "\x02": character U+0002`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, tt.file, tt.data)
			out := filepath.Join(dir, "out.ome.tif")
			code, _, stderr := clitest.Run(runConvert, append(tt.args, in, out)...)
			require.Equal(t, tt.code, code, stderr)
			if tt.code != 0 {
				clitest.AssertErrorLine(t, convertName, stderr)
				assert.Contains(t, stderr, tt.want)
				assert.NoFileExists(t, out)
				return
			}
			back, err := source.Open(out, source.Options{})
			require.NoError(t, err)
			defer back.Close()
			assert.Equal(t, tt.want, back.Images[0].Spec.Name)
		})
	}
}

// TestImageTooShortForItsHeader: a BMP or GIF file too short for the image
// its header claims is refused before it is decoded, naming the sizes (a
// 70-byte BMP claiming 15000 x 15000 pixels allocated 900 MB first).
func TestImageTooShortForItsHeader(t *testing.T) {
	le := binary.LittleEndian
	bmpHeader := func(width, height int32, bpp uint16) []byte {
		h := make([]byte, 54, 70)
		copy(h, "BM")
		le.PutUint32(h[10:], 54)
		le.PutUint32(h[14:], 40)
		le.PutUint32(h[18:], uint32(width))
		le.PutUint32(h[22:], uint32(height))
		le.PutUint16(h[26:], 1)
		le.PutUint16(h[28:], bpp)
		return append(h, make([]byte, 16)...) // 70 bytes
	}
	gifHeader := func(width, height uint16) []byte {
		h := []byte("GIF89a")
		h = le.AppendUint16(h, width)
		h = le.AppendUint16(h, height)
		h = append(h, 0, 0, 0, 0x2c, 0, 0, 0, 0)
		h = le.AppendUint16(h, width)
		h = le.AppendUint16(h, height)
		return append(h, 0, 2, 1, 0, 0, 0x3b)
	}
	bmp := encoded(t, nrgbaImage(30, 20, false), encodeBMP)
	for _, tt := range []struct {
		name string
		file string
		data []byte
		msg  string // "" converts
	}{
		{"BMP whole", "in.bmp", bmp, ""},
		{"BMP a byte short", "in.bmp", bmp[:len(bmp)-1], "a 1893-byte file cannot hold this 30 x 20 BMP: its header and 20 rows of 92 bytes (24 bits a pixel, padded to 4 bytes) take at least 1894 bytes"},
		{"BMP forged", "in.bmp", bmpHeader(15000, 15000, 24), "a 70-byte file cannot hold this 15000 x 15000 BMP"},
		{"BMP forged top down", "in.bmp", bmpHeader(15000, -15000, 32), "a 70-byte file cannot hold this 15000 x 15000 BMP: its header and 15000 rows of 60000 bytes (32 bits a pixel"},
		{"GIF whole", "in.gif", encoded(t, palettedImage(30, 20), encodeGIF), ""},
		{"GIF forged", "in.gif", gifHeader(15000, 15000), "a 28-byte file cannot hold this 15000 x 15000 GIF: the LZW codes of its first image's 225000000 pixels"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, tt.file, tt.data)
			out := filepath.Join(dir, "out.ome.tif")
			code, _, stderr := clitest.Run(runConvert, in, out)
			if tt.msg == "" {
				require.Equal(t, 0, code, stderr)
				return
			}
			assert.Equal(t, 1, code)
			clitest.AssertErrorLine(t, convertName, stderr)
			assert.Contains(t, stderr, in+": "+tt.msg)
			assert.NoFileExists(t, out)
		})
	}
}
