package main

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/examples/internal/pngstream/pngtest"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/pyramid/source"
	"github.com/ometiff-go/ometiff/tiff"
)

// animatedGIF returns a GIF of n frames of 6 x 4.
func animatedGIF(t testing.TB, n int) []byte {
	g := &gif.GIF{}
	for i := range n {
		p := image.NewPaletted(image.Rect(0, 0, 6, 4), palette.Plan9)
		p.Pix[i] = byte(i + 1)
		g.Image, g.Delay = append(g.Image, p), append(g.Delay, 10)
	}
	var buf bytes.Buffer
	require.NoError(t, gif.EncodeAll(&buf, g))
	return buf.Bytes()
}

// withSegment returns a JPEG with a segment of marker m holding data
// inserted after its SOI.
func withSegment(jpg []byte, m byte, data []byte) []byte {
	seg := append([]byte{0xff, m, byte((len(data) + 2) >> 8), byte(len(data) + 2)}, data...)
	return append(append(bytes.Clone(jpg[:2]), seg...), jpg[2:]...)
}

// withFCTL returns an APNG whose default image is its first frame: an
// fcTL chunk before IDAT.
func withFCTL(p pngtest.Image) pngtest.Image {
	p.Before = append(bytes.Clone(p.Before), pngtest.Chunk("fcTL", make([]byte, 26))...)
	return p
}

// mpf returns an APP2 multi-picture index (big-endian) of pictures of the
// MP types given, the first the image itself.
func mpf(types ...uint32) []byte {
	t := []byte("MM\x00\x2a\x00\x00\x00\x08\x00\x01") // the header, then one entry
	t = binary.BigEndian.AppendUint16(t, 0xb002)
	t = binary.BigEndian.AppendUint16(t, 7)
	t = binary.BigEndian.AppendUint32(t, uint32(16*len(types)))
	t = binary.BigEndian.AppendUint32(t, 26) // after the next directory's offset
	t = binary.BigEndian.AppendUint32(t, 0)
	for _, typ := range types {
		t = binary.BigEndian.AppendUint32(t, typ)
		t = append(t, make([]byte, 12)...)
	}
	return append([]byte("MPF\x00"), t...)
}

// exif returns an APP1 EXIF payload whose first directory holds
// Orientation o, in the byte order of order ("II" or "MM").
func exif(order string, o uint16) []byte {
	le := order == "II"
	u16 := func(v uint16) []byte {
		if le {
			return []byte{byte(v), byte(v >> 8)}
		}
		return []byte{byte(v >> 8), byte(v)}
	}
	u32 := func(v uint32) []byte {
		if le {
			return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
		}
		return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
	}
	t := append([]byte(order), u16(42)...)
	t = append(t, u32(8)...)
	t = append(t, u16(1)...)                                         // one entry
	t = append(append(append(t, u16(274)...), u16(3)...), u32(1)...) // Orientation, SHORT, 1
	t = append(append(t, u16(o)...), 0, 0)
	t = append(t, u32(0)...)
	return append([]byte("Exif\x00\x00"), t...)
}

// TestJPEGScansBounded: a JPEG file whose frame is large and whose scans
// are many (image/jpeg would decode each over the whole frame: a 726 KB
// file of 5,000 scans of an 8000 x 8000 frame ran for minutes) is refused
// before it is decoded; the same scans of a small frame are decoded (a
// piped JPEG is read whole so too: TestPipedInputs).
func TestJPEGScansBounded(t *testing.T) {
	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 16, 16)), nil))
	scans := func(n int, side uint16) []byte {
		b := bytes.Clone(jpg.Bytes())
		sof := bytes.Index(b, []byte{0xff, 0xc0})
		binary.BigEndian.PutUint16(b[sof+5:], side)
		binary.BigEndian.PutUint16(b[sof+7:], side)
		at := bytes.Index(b, []byte{0xff, 0xda})
		sos := b[at : at+2+int(binary.BigEndian.Uint16(b[at+2:]))]
		return append(append(b[:len(b)-2:len(b)-2], bytes.Repeat(append(bytes.Clone(sos), 0), n)...), 0xff, 0xd9)
	}
	dir := t.TempDir()
	in, out := writeFile(t, dir, "scans.jpg", scans(100, 8000)), filepath.Join(dir, "scans.ome.tif")
	code, _, stderr := clitest.Run(runConvert, in, out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "JPEG: more than 67 scans of a 8000 x 8000 frame")
	assert.NoFileExists(t, out)

	// 100 scans are allowed a 16 x 16 frame: image/jpeg decodes it (and
	// finds these, repeated from a baseline frame, not to continue it).
	code, _, stderr = clitest.Run(runConvert, writeFile(t, dir, "small.jpg", scans(100, 16)), out)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "decoding the image with image/jpeg: invalid JPEG format")
	assert.NotContains(t, stderr, "scans")
}

// TestImagesOfSeveralFrames: an image file holding more than the one
// picture written (an animated GIF, PNG or WebP, a multi-picture JPEG),
// is refused, naming it; -skip-unsupported writes the first picture and
// says what it left out. (A CMYK JPEG's black is refused so too; Go has no
// CMYK JPEG encoder to make one here: TestJPEGFrameSegments gives
// headerLeftOut its four components.)
func TestImagesOfSeveralFrames(t *testing.T) {
	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 6, 4)), nil))
	apng := pngtest.Image{Width: 6, Height: 4, Depth: 8, ColorType: 0, Rows: make([][]byte, 4),
		Before: pngtest.Chunk("acTL", []byte{0, 0, 0, 3, 0, 0, 0, 0})}
	for y := range apng.Rows {
		apng.Rows[y] = make([]byte, 6)
	}
	dir := t.TempDir()
	tests := []struct {
		name, data string
		refused    string
	}{
		{"anim.gif", string(animatedGIF(t, 3)), "an animated GIF of 3 frames: only the first is written"},
		{"anim.png", string(apng.Encode()), "an animated PNG (APNG) of 3 frames besides its default image: only the default image is written"},
		{"first.png", string(withFCTL(apng).Encode()), "an animated PNG (APNG) of 3 frames: only the first is written"},
		{"pictures.mpo", string(withSegment(jpg.Bytes(), 0xe2, mpf(0x030000, 0x020002, 0x010001))),
			"a multi-picture JPEG (MPO) of 2 pictures (or a picture and its HDR gain map): only its first is written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, out := writeFile(t, dir, tt.name, []byte(tt.data)), filepath.Join(dir, tt.name+".ome.tif")
			code, _, stderr := clitest.Run(runConvert, in, out)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, tt.refused+" (-skip-unsupported converts it so)")
			assert.NoFileExists(t, out)
			code, stdout, stderr := clitest.Run(runConvert, "-skip-unsupported", in, out)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "6 x 4")
			assert.Contains(t, stderr, "left out (-skip-unsupported): "+tt.refused)
		})
	}
	one := withFCTL(apng)
	one.Before = append(pngtest.Chunk("acTL", []byte{0, 0, 0, 1, 0, 0, 0, 0}), one.Before[len(pngtest.Chunk("acTL", make([]byte, 8))):]...)
	code, _, stderr := clitest.Run(runConvert, writeFile(t, dir, "one.png", one.Encode()), filepath.Join(dir, "one.ome.tif"))
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr, "an APNG of one frame, its default image")

	still := writeFile(t, dir, "still.gif", animatedGIF(t, 1))
	code, _, stderr = clitest.Run(runConvert, still, filepath.Join(dir, "still.ome.tif"))
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr, "a GIF of one frame")

	webp := writeFile(t, dir, "anim.webp", []byte("RIFF\x30\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x02\x00\x00\x00\x05\x00\x00\x03\x00\x00ANIM"))
	code, _, stderr = clitest.Run(runConvert, webp, filepath.Join(dir, "webp.ome.tif"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "an animated WebP: golang.org/x/image/webp reads still images only")
}

// TestOrientationNoted: an EXIF or TIFF Orientation is not applied, and
// stderr says so.
func TestOrientationNoted(t *testing.T) {
	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 6, 4)), nil))
	dir := t.TempDir()
	for _, order := range []string{"II", "MM"} {
		in := writeFile(t, dir, order+".jpg", withSegment(jpg.Bytes(), 0xe1, exif(order, 6)))
		code, stdout, stderr := clitest.Run(runConvert, in, filepath.Join(dir, order+".ome.tif"))
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "6 x 4", "as stored")
		assert.Contains(t, stderr, "EXIF Orientation 6 is not applied: the pixels are written as stored", order)
	}
	upright := writeFile(t, dir, "upright.jpg", withSegment(jpg.Bytes(), 0xe1, exif("II", 1)))
	_, _, stderr := clitest.Run(runConvert, upright, filepath.Join(dir, "upright.ome.tif"))
	assert.Empty(t, stderr)

	profiled := filepath.Join(dir, "profiled.tif")
	writeTIFF(t, profiled, page{width: 6, height: 4, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, icc: []byte("profile")})
	code, _, stderr := clitest.Run(runConvert, profiled, filepath.Join(dir, "profiled.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: its ICC colour profile is not kept")

	turned := filepath.Join(dir, "turned.tif")
	writeTIFF(t, turned, page{width: 6, height: 4, samples: 1, bits: 8, photometric: tiff.PhotometricBlackIsZero, orientation: 8})
	code, _, stderr = clitest.Run(runConvert, turned, filepath.Join(dir, "turned.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "image 0: Orientation 8 is not applied: the pixels are written as stored")
}

// TestChainLoopNoted: a TIFF whose chain of directories loops back is
// converted up to the loop, both its pages, as libtiff reads it; convert
// and info say where it loops.
func TestChainLoopNoted(t *testing.T) {
	dir := t.TempDir()
	data := loopingTIFF(t)
	in := writeFile(t, dir, "loop.tif", data)
	says := fmt.Sprintf("the chain of directories loops back to the one at %d after 2 pages: read up to there", binary.LittleEndian.Uint32(data[4:]))
	code, stdout, stderr := clitest.Run(runConvert, in, filepath.Join(dir, "loop.ome.tif"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Z 1 x C 1 x T 2")
	assert.Contains(t, stderr, says)
	code, stdout, stderr = clitest.Run(runInfo, in)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "TIFF, 1 image, 2 planes\n"+says)
}

// TestJPEGFrameSegments: what the segments before a JPEG's frame header say.
func TestJPEGFrameSegments(t *testing.T) {
	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewRGBA(image.Rect(0, 0, 6, 4)), nil))
	f, err := readJPEGFrame(bytes.NewReader(jpg.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, jpegFrame{sampling: [][2]int{{2, 2}, {1, 1}, {1, 1}}}, f)
	f, err = readJPEGFrame(bytes.NewReader(withSegment(withSegment(jpg.Bytes(), 0xe2, mpf(0x030000, 0)), 0xe1, exif("MM", 3))))
	require.NoError(t, err)
	assert.Equal(t, 2, f.pictures, "Pillow's second picture, of no type")
	assert.Equal(t, 3, f.orientation)
	f, err = readJPEGFrame(bytes.NewReader(withSegment(jpg.Bytes(), 0xe2, mpf(0x030000, 0x010001, 0x010002))))
	require.NoError(t, err)
	assert.Equal(t, 1, f.pictures, "thumbnails are no pictures of the image")
	left := headerLeftOut(nil, "jpeg", jpegFrame{sampling: [][2]int{{1, 1}, {1, 1}, {1, 1}, {1, 1}}})
	require.Len(t, left, 1)
	assert.ErrorContains(t, left[0], "a CMYK JPEG: its colours are converted to RGB, and its black (K) is not kept")
	assert.Zero(t, mpfPictures([]byte("MM\x00\x2a\x00\x00\x00\x08\x00\x01\xb0\x02\x00\x07\x00\x00\x10\x00\x00\x00\x00\x1a")), "entries past the end")
	assert.Zero(t, exifOrientation([]byte("II*\x00\xff\xff\xff\xff")), "a directory past the end")
	assert.Zero(t, exifOrientation([]byte("MM\x00\x2a\x00\x00\x00\x08\x00\x05")), "entries past the end")
}

// FuzzImageHeaders reads arbitrary bytes as a GIF's blocks, a JPEG's
// segments, a PNG's chunks before its image data and a BMP's header: none
// panics, a PNG's text is text the OME-XML holds, a GIF's count is at most one frame for each
// 10 bytes after its header (an image's descriptor, code size and
// terminator), and a JPEG's pictures at most one for each 16 bytes of
// its multi-picture index.
func FuzzImageHeaders(f *testing.F) {
	f.Add(animatedGIF(f, 3))
	var jpg bytes.Buffer
	_ = jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 6, 4)), nil)
	f.Add(withSegment(withSegment(jpg.Bytes(), 0xe2, mpf(0x030000, 0x020001)), 0xe1, exif("II", 6)))
	f.Add(webpImage)
	f.Add([]byte("RIFF\x30\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x02\x00\x00\x00\x05\x00\x00\x03\x00\x00ANIM"))
	png := encoded(f, grayImage(4, 3), encodePNG)
	f.Add(withChunks(png, pngtest.Chunk("tEXt", []byte("Title\x00caf\xe9")), pngtest.Chunk("iTXt", []byte("Author\x00\x01\x00en\x00A\x00x\x9c")),
		pngtest.Chunk("iCCP", []byte("sRGB\x00\x00"))))
	f.Add(encoded(f, grayImage(5, 2), encodeBMP))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A PNG's text is what the OME-XML holds, a non-empty key each,
		// and no more than its chunks' bytes.
		meta := readPNGMeta(bytes.NewReader(data))
		for _, kv := range meta.text {
			if kv.Key == "" || pyramid.XMLText(kv.Key) != kv.Key || pyramid.XMLText(kv.Value) != kv.Value || len(kv.Value) > 4*maxPNGText {
				t.Fatalf("annotation %q = %d bytes", kv.Key, len(kv.Value))
			}
		}
		for _, format := range []string{"bmp", "gif", "png"} {
			if need, _ := minImageSize(bytes.NewReader(data), format); need < 0 {
				t.Fatalf("%s: %d bytes at least", format, need)
			}
		}
		if n, _ := gifFrames(bytes.NewReader(data)); n < 0 || n > max(0, len(data)-13)/10 {
			t.Fatalf("%d frames in %d bytes", n, len(data))
		}
		if f, err := readJPEGFrame(bytes.NewReader(data)); err == nil && f.pictures > len(data)/16 {
			t.Fatalf("%d pictures in %d bytes", f.pictures, len(data))
		}
		// Animated only as the extended header says it (VP8X, flag 2):
		// a still image, whatever follows its header, is never taken
		// for an animation.
		_ = losslessWebP(bytes.NewReader(data)) // ends, whatever its chunks' sizes say
		_, _, _ = gifFirstFrame(bytes.NewReader(data))
		if animatedWebP(bytes.NewReader(data)) && (len(data) < 21 || !bytes.HasPrefix(data, []byte("RIFF")) || string(data[8:16]) != "WEBPVP8X" || data[20]&2 == 0) {
			t.Fatalf("animated: %q", data[:min(len(data), 21)])
		}
	})
}

// TestPalettePages: palette pages are streamed, their colours written
// as RGB (as libvips reads them), whatever their bits, codec or file
// (BigTIFF, Zstd and a directory whose tags are out of order were
// refused when golang.org/x/image/tiff decoded them whole), with their
// name, description and pixel size.
func TestPalettePages(t *testing.T) {
	dir := t.TempDir()
	for _, bits := range []int{1, 2, 4, 8, 16} {
		in := filepath.Join(dir, fmt.Sprintf("palette%d.tif", bits))
		writeTIFF(t, in, page{width: 16, height: 4, samples: 1, bits: bits, photometric: tiff.PhotometricPalette})
		code, stdout, stderr := clitest.Run(runConvert, in, filepath.Join(dir, fmt.Sprintf("palette%d.ome.tif", bits)))
		require.Equal(t, 0, code, stderr)
		want := map[bool]string{false: "RGB uint8", true: "RGB uint16"}[bits == 16]
		assert.Contains(t, stdout, "16 x 4 "+want, "%d bits", bits)
		assert.Equal(t, convertName+": "+in+": image 0: a palette image: the colours of its ColorMap are written, as libvips reads it, "+
			"not its indices, which tifffile and Bio-Formats give\n", stderr, "%d bits", bits)
		code, stdout, _ = clitest.Run(runInfo, in)
		assert.Equal(t, 0, code)
		assert.Contains(t, stdout, "16 x 4, Z 1 x C 1 x T 1, XYCZT, "+want, "%d bits", bits)
		assert.Contains(t, stdout, "note: a palette image", "%d bits", bits)
	}

	in := filepath.Join(dir, "described.tif")
	writeTIFF(t, in, page{width: 16, height: 4, samples: 1, bits: 8, photometric: tiff.PhotometricPalette, description: "a label",
		more: func(b *ifd.Builder) {
			b.AddASCII(tiff.TagPageName, "slide 7")
			b.AddRational(tiff.TagXResolution, ifd.Fraction{Num: 2, Den: 1})
			b.AddRational(tiff.TagYResolution, ifd.Fraction{Num: 4, Den: 1})
			b.AddShort(tiff.TagResolutionUnit, uint16(tiff.ResolutionUnitCentimeter))
		}})
	out := filepath.Join(dir, "described.ome.tif")
	code, _, stderr := clitest.Run(runConvert, in, out)
	require.Equal(t, 0, code, stderr)
	d := clitest.Describe(t, out, pyramid.InspectOptions{})
	assert.Contains(t, d, `"slide 7": 16 x 4`)
	assert.Contains(t, d, "pixel 5000 µm x 2500 µm")
	back, err := source.Open(out, source.Options{})
	require.NoError(t, err)
	defer back.Close()
	assert.Equal(t, "a label", back.Images[0].Spec.Description)

	for name, opts := range map[string]tiff.Options{"bigtiff.tif": {BigTIFF: tiff.BigTIFFAlways}, "unsorted.tif": {}} {
		in := filepath.Join(dir, name)
		writeTIFFWith(t, in, opts, page{width: 16, height: 4, samples: 1, bits: 8, photometric: tiff.PhotometricPalette})
		if name == "unsorted.tif" {
			// Swap the first two entries of the directory (ImageWidth,
			// ImageLength), as tifffile's two descriptions are out of order.
			data, err := os.ReadFile(in)
			require.NoError(t, err)
			e := data[int(binary.LittleEndian.Uint32(data[4:]))+2:]
			tmp := append([]byte(nil), e[:12]...)
			copy(e[:12], e[12:24])
			copy(e[12:24], tmp)
			require.NoError(t, os.WriteFile(in, data, 0o644))
		}
		code, stdout, stderr := clitest.Run(runConvert, in, filepath.Join(dir, "out-"+name))
		require.Equal(t, 0, code, name, stderr)
		assert.Contains(t, stdout, "16 x 4 RGB uint8", name)
	}
}

// TestLosslessWebP: the image chunk of a WebP says whether it is lossless,
// after the extended header (VP8X) and the chunks before the image, odd
// sizes padded; golang.org/x/image/webp's DecodeConfig says YCbCr for
// every extended file, and a lossless one so took a fifth of its memory
// in -max-memory's estimate.
func TestLosslessWebP(t *testing.T) {
	chunk := func(name string, size int) []byte {
		c := binary.LittleEndian.AppendUint32([]byte(name), uint32(size))
		return append(c, make([]byte, size+size&1)...)
	}
	file := func(chunks ...[]byte) []byte {
		body := []byte("WEBP")
		for _, c := range chunks {
			body = append(body, c...)
		}
		return append(binary.LittleEndian.AppendUint32([]byte("RIFF"), uint32(len(body))), body...)
	}
	for name, tt := range map[string]struct {
		data []byte
		want bool
	}{
		"plain lossless":                 {file(chunk("VP8L", 20)), true},
		"plain lossy":                    {file(chunk("VP8 ", 20)), false},
		"extended lossless, ICC profile": {file(chunk("VP8X", 10), chunk("ICCP", 333), chunk("VP8L", 20)), true},
		"extended lossy with alpha":      {file(chunk("VP8X", 10), chunk("ALPH", 7), chunk("VP8 ", 20)), false},
		"image chunk cut off":            {file(chunk("VP8X", 10), chunk("ICCP", 333))[:100], true},
		"not a WebP":                     {[]byte("RIFF\x00\x00\x00\x00WAVEfmt "), false},
	} {
		assert.Equal(t, tt.want, losslessWebP(bytes.NewReader(tt.data)), name)
	}
}

// TestGIFFrameSmallerThanScreen: a GIF whose first image covers part of
// its logical screen is written at the screen's size, as libvips reads it
// and ometiff info says, the rest of its background colour (GIF89a), or
// refused as transparent when the image has a transparent colour (it was
// written cropped to the image).
func TestGIFFrameSmallerThanScreen(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, pal color.Palette, background byte) string {
		frame := image.NewPaletted(image.Rect(10, 20, 60, 60), pal)
		for i := range frame.Pix {
			frame.Pix[i] = 2
		}
		var buf bytes.Buffer
		require.NoError(t, gif.EncodeAll(&buf, &gif.GIF{Image: []*image.Paletted{frame}, Delay: []int{0}, BackgroundIndex: background,
			Config: image.Config{ColorModel: pal, Width: 200, Height: 100}}))
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
		return path
	}
	opaque := color.Palette{color.RGBA{0, 0, 0, 255}, color.RGBA{10, 200, 30, 255}, color.RGBA{255, 255, 255, 255}}
	in := write("crop.gif", opaque, 1)
	code, stdout, stderr := clitest.Run(runInfo, in)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "200 x 100")
	out := filepath.Join(dir, "crop.ome.tif")
	code, _, stderr = clitest.Run(runConvert, "-compression", "none", in, out)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "the GIF's first image covers 50 x 40 at (10, 20) of its 200 x 100 screen; the rest is its background colour (index 1)")
	pix := clitest.Planes(t, out)[0].Pix
	require.Len(t, pix, 200*100*3)
	assert.Equal(t, []byte{10, 200, 30}, pix[:3], "the background")
	assert.Equal(t, []byte{255, 255, 255}, pix[(25*200+15)*3:][:3], "the image")

	transparent := color.Palette{color.RGBA{0, 0, 0, 255}, color.RGBA{}, color.RGBA{255, 255, 255, 255}}
	clitest.AssertFailsSaying(t, runConvert, convertName, t.TempDir(), 1, "the image is transparent (its alpha, or its transparent colour) at pixel (0, 0)",
		write("transparent.gif", transparent, 0), "out.ome.tif")
}

// withChunks returns a PNG with chunks inserted after its IHDR chunk.
func withChunks(p []byte, chunks ...[]byte) []byte {
	const afterIHDR = 8 + 8 + 13 + 4
	out := bytes.Clone(p[:afterIHDR])
	for _, c := range chunks {
		out = append(out, c...)
	}
	return append(out, p[afterIHDR:]...)
}

// TestImageMetadataKeptOrNoted: a PNG's text (tEXt, zTXt, iTXt) is kept
// as the image's map annotations, streamed or interlaced, and an ICC
// profile of a PNG (iCCP) or JPEG (APP2) and a JPEG's comment (COM) are
// said not to be kept, as a TIFF's profile is: all were dropped unsaid.
func TestImageMetadataKeptOrNoted(t *testing.T) {
	var zipped bytes.Buffer
	zw := zlib.NewWriter(&zipped)
	_, err := zw.Write([]byte("inflated text"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	png := encoded(t, grayImage(20, 9), encodePNG)
	jpg := encoded(t, grayImage(20, 9), encodeJPEG)
	iccp := pngtest.Chunk("iCCP", append([]byte("sRGB\x00\x00"), zipped.Bytes()...))
	for _, tt := range []struct {
		name  string
		file  string
		data  []byte
		xml   []string // in the output's OME-XML
		notes []string // on stderr
	}{
		{"PNG tEXt", "in.png", withChunks(png, pngtest.Chunk("tEXt", []byte("Title\x00caf\xe9 \x1b"))), []string{`<M K="Title">café </M>`}, nil},
		{"PNG zTXt", "in.png", withChunks(png, pngtest.Chunk("zTXt", append([]byte("Comment\x00\x00"), zipped.Bytes()...))), []string{`<M K="Comment">inflated text</M>`}, nil},
		{"PNG iTXt", "in.png", withChunks(png, pngtest.Chunk("iTXt", []byte("Author\x00\x00\x00en\x00Autor\x00Zoë"))), []string{`<M K="Author">Zoë</M>`}, nil},
		{"PNG iTXt compressed", "in.png", withChunks(png, pngtest.Chunk("iTXt", append([]byte("Software\x00\x01\x00\x00\x00"), zipped.Bytes()...))),
			[]string{`<M K="Software">inflated text</M>`}, nil},
		{"interlaced PNG tEXt", "in.png", withChunks(interlaced(t, 20, 9), pngtest.Chunk("tEXt", []byte("Title\x00interlaced"))), []string{`<M K="Title">interlaced</M>`}, nil},
		{"PNG iCCP", "in.png", withChunks(png, iccp), nil, []string{"in.png: its ICC colour profile is not kept (OME has no field for it)\n"}},
		{"interlaced PNG iCCP", "in.png", withChunks(interlaced(t, 20, 9), iccp), nil, []string{"in.png: its ICC colour profile is not kept (OME has no field for it)\n"}},
		{"JPEG ICC", "in.jpg", withSegment(jpg, 0xe2, []byte("ICC_PROFILE\x00\x01\x01profile")), nil, []string{"in.jpg: its ICC colour profile is not kept (OME has no field for it)\n"}},
		{"JPEG COM", "in.jpg", withSegment(jpg, 0xfe, []byte("a comment")), nil, []string{"in.jpg: its comment (COM) is not kept\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, tt.file, tt.data)
			out := filepath.Join(dir, "out.ome.tif")
			code, _, stderr := clitest.Run(runConvert, in, out)
			require.Equal(t, 0, code, stderr)
			for _, note := range tt.notes {
				assert.Contains(t, stderr, note)
			}
			if tt.notes == nil {
				assert.Empty(t, stderr)
			}
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			file, err := readback.Parse(data)
			require.NoError(t, err)
			for _, want := range tt.xml {
				assert.Contains(t, file.IFDs[0].Text(270), want)
			}
		})
	}
}
