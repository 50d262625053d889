package main

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// limits bound what an input may make the converter allocate. Both are
// checked against what the input's header claims, before the output is
// created.
type limits struct {
	// maxPixels bounds an image's width times height; 0 is no bound.
	maxPixels int64
	// pixelsGiven says -max-pixels was given: TIFF files are checked
	// against it only then.
	pixelsGiven bool
	// maxDecodeRatio bounds what a TIFF whose blocks share their data or
	// store none decodes to, in times its size; 0 is no bound.
	maxDecodeRatio int
	// maxMemory bounds the memory planned for the image: decoded whole,
	// or the writer's bands while its rows stream; 0 is no bound.
	maxMemory byteSize
	// tile is the writer's tile size, which sizes its bands.
	tile int
}

const (
	// defaultMaxPixels is 65536 x 65536: past the largest JPEG (65535 on a
	// side) and the largest image `make huge` writes, and a 40th of what
	// the 1,243-byte PNG bomb claims (100000 x 100000).
	defaultMaxPixels = 1 << 32
	// defaultMaxMemory lets a 16000 x 16000 baseline colour JPEG be decoded
	// whole on a laptop, and streams PNG and raw rows up to 400,000 pixels
	// wide at 256-pixel tiles.
	defaultMaxMemory = 1 << 30
)

// mul multiplies non-negative factors, saturating at math.MaxInt64.
func mul(factors ...int64) int64 {
	p := int64(1)
	for _, f := range factors {
		hi, lo := bits.Mul64(uint64(p), uint64(f))
		if hi != 0 || lo > math.MaxInt64 {
			return math.MaxInt64
		}
		p = int64(lo)
	}
	return p
}

// checkPixels refuses an image of more pixels than -max-pixels.
func (l limits) checkPixels(name string, width, height int) error {
	if n := mul(int64(width), int64(height)); l.maxPixels > 0 && n > l.maxPixels {
		return fmt.Errorf("%s: its header claims %d x %d pixels, more than -max-pixels %d (raise it, or set 0 for no limit, if the image is genuine)",
			name, width, height, l.maxPixels)
	}
	return nil
}

// bandBytes is the memory the writer holds while the rows of a plane
// width pixels wide and height high stream in, pixelBytes each: a band of
// one tile row at full resolution (of the image's height rounded up to 16
// when it is less, as the writer shrinks its tiles), half as much at each
// level below, and the rows being reduced; three full-resolution bands
// bound it.
func (l limits) bandBytes(width, height, pixelBytes int) int64 {
	rows := l.tileSize()
	if height < rows {
		rows = (max(height, 1) + 15) / 16 * 16 // below a tile: no overflow
	}
	return mul(3, int64(rows), int64(width), int64(pixelBytes))
}

// tileSize is the writer's tile size, 256 unless -tile says otherwise.
func (l limits) tileSize() int {
	if l.tile <= 0 {
		return 256
	}
	return l.tile
}

// overBudget reports whether need bytes exceed -max-memory.
func (l limits) overBudget(need int64) bool { return l.maxMemory > 0 && need > int64(l.maxMemory) }

// checkBands refuses a streamed image so wide that the writer's bands
// alone exceed -max-memory.
func (l limits) checkBands(name string, width, height, pixelBytes int) error {
	if need := l.bandBytes(width, height, pixelBytes); l.overBudget(need) {
		return fmt.Errorf("%s: rows of %d pixels need about %v for the pyramid's bands at tile %d, more than -max-memory %v (raise it, or use a smaller -tile)",
			name, width, byteSize(need), l.tileSize(), l.maxMemory)
	}
	return nil
}

// modelBytes is the memory per pixel of an image of a colour model as Go's
// decoders return it; 8, the widest, for a model not listed.
func modelBytes(m color.Model) float64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.NYCbCrAModel, color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 4
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8
}

// outputPixelBytes is the size of a pixel the writer gets from an image of
// a colour model, as AddImageData converts it: gray keeps its depth, 16-bit
// colour becomes RGB uint16 and the rest RGB uint8.
func outputPixelBytes(m color.Model) int {
	switch m {
	case color.GrayModel:
		return 1
	case color.Gray16Model:
		return 2
	case color.RGBA64Model, color.NRGBA64Model:
		return 6
	}
	return 3
}

// wholeBytes estimates the memory Go's decoder of format holds for the
// image of cfg, working buffers included; jpeg describes a JPEG's frame.
func wholeBytes(format string, cfg image.Config, jpeg jpegFrame) int64 {
	perPixel := modelBytes(cfg.ColorModel)
	switch format {
	case "jpeg":
		perPixel = jpeg.bytesPerPixel()
	case "webp":
		if cfg.ColorModel == color.YCbCrModel || cfg.ColorModel == color.NYCbCrAModel {
			perPixel -= 1.5 // lossy WebP is 4:2:0
		} else {
			perPixel *= 2 // lossless WebP decodes to ARGB words, then converts
		}
	}
	return int64(math.Ceil(float64(mul(int64(cfg.Width), int64(cfg.Height))) * perPixel))
}

// byteSize is a number of bytes, written with an optional unit: KiB, MiB,
// GiB or TiB, or KB, MB, GB or TB.
type byteSize int64

var byteUnits = []struct {
	name string
	size int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}

// UnmarshalText reads a size such as 512MiB, 2GB or 1000000.
func (b *byteSize) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	unit := int64(1)
	for _, u := range byteUnits {
		if len(s) > len(u.name) && strings.EqualFold(s[len(s)-len(u.name):], u.name) {
			s, unit = strings.TrimSpace(s[:len(s)-len(u.name)]), u.size
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) || v*float64(unit) >= math.MaxInt64 {
		return fmt.Errorf("%q is not a size (e.g. 512MiB, 4GiB or 1000000)", text)
	}
	if v > 0 && v*float64(unit) < 1 {
		// Truncated to 0, it would lift the bound it sets.
		return fmt.Errorf("%q is less than a byte: want 0 (no limit) or at least 1", text)
	}
	*b = byteSize(v * float64(unit))
	return nil
}

// MarshalText writes the size in the largest binary unit that holds it
// whole.
func (b byteSize) MarshalText() ([]byte, error) {
	for _, u := range byteUnits[:4] {
		if b != 0 && int64(b)%u.size == 0 {
			return fmt.Appendf(nil, "%d%s", int64(b)/u.size, u.name), nil
		}
	}
	return fmt.Appendf(nil, "%d", int64(b)), nil
}

// String gives the size to one decimal in a binary unit, for messages.
func (b byteSize) String() string {
	for _, u := range byteUnits[:4] {
		if int64(b) >= u.size {
			return strconv.FormatFloat(float64(b)/float64(u.size), 'f', 1, 64) + " " + u.name
		}
	}
	return fmt.Sprintf("%d bytes", int64(b))
}
