package pyramid

import (
	"fmt"
	"strings"
)

// The option types read and write their names as text, so that they work
// with flag.TextVar and encoding/json: "lzw", "mean", "uint16", ...

var (
	compressionNames  = []string{LZW: "lzw", None: "none", Deflate: "deflate", Zstd: "zstd", JPEG: "jpeg"}
	predictorNames    = []string{PredictorAuto: "auto", PredictorNone: "none", PredictorHorizontal: "horizontal", PredictorFloatingPoint: "floating-point"}
	downsamplingNames = []string{Mean: "mean", Nearest: "nearest", Mode: "mode"}
	bigTIFFNames      = []string{BigTIFFAuto: "auto", BigTIFFAlways: "always", BigTIFFNever: "never"}
	pixelTypeNames    = []string{Uint8: "uint8", Int8: "int8", Uint16: "uint16", Int16: "int16", Uint32: "uint32", Int32: "int32", Float32: "float32", Float64: "float64"}
)

// nameOf returns the name of v, or an error if v has none.
func nameOf[T ~int](kind string, names []string, v T) ([]byte, error) {
	if v < 0 || int(v) >= len(names) {
		return nil, fmt.Errorf("%w: %s %d", ErrOption, kind, int(v))
	}
	return []byte(names[v]), nil
}

// parseName sets *v to the value named text, ignoring case; aliases map
// other accepted spellings.
func parseName[T ~int](kind string, names []string, aliases map[string]T, text []byte, v *T) error {
	s := strings.ToLower(strings.TrimSpace(string(text)))
	for i, n := range names {
		if s == n {
			*v = T(i)
			return nil
		}
	}
	if a, ok := aliases[s]; ok {
		*v = a
		return nil
	}
	return fmt.Errorf("%w: unknown %s %q (want %s)", ErrOption, kind, text, strings.Join(names, ", "))
}

// MarshalText returns "lzw", "none", "deflate", "zstd" or "jpeg".
func (c Compression) MarshalText() ([]byte, error) { return nameOf("compression", compressionNames, c) }

// UnmarshalText reads a compression name.
func (c *Compression) UnmarshalText(b []byte) error {
	return parseName("compression", compressionNames, map[string]Compression{"zlib": Deflate, "zstandard": Zstd, "jpg": JPEG}, b, c)
}

// MarshalText returns "auto", "none", "horizontal" or "floating-point".
func (p Predictor) MarshalText() ([]byte, error) { return nameOf("predictor", predictorNames, p) }

// UnmarshalText reads a predictor name; "2", "3", "float" and "fp" are
// accepted too.
func (p *Predictor) UnmarshalText(b []byte) error {
	return parseName("predictor", predictorNames, map[string]Predictor{"1": PredictorNone, "2": PredictorHorizontal, "3": PredictorFloatingPoint, "float": PredictorFloatingPoint, "fp": PredictorFloatingPoint}, b, p)
}

// MarshalText returns "mean", "nearest" or "mode".
func (d Downsampling) MarshalText() ([]byte, error) {
	return nameOf("downsampling", downsamplingNames, d)
}

// UnmarshalText reads a downsampling name.
func (d *Downsampling) UnmarshalText(b []byte) error {
	return parseName("downsampling", downsamplingNames, nil, b, d)
}

// MarshalText returns "auto", "always" or "never".
func (t BigTIFF) MarshalText() ([]byte, error) { return nameOf("BigTIFF choice", bigTIFFNames, t) }

// UnmarshalText reads "auto", "always" or "never".
func (t *BigTIFF) UnmarshalText(b []byte) error {
	return parseName("BigTIFF choice", bigTIFFNames, nil, b, t)
}

// MarshalText returns the Go name of the type: "uint8" ... "float64".
// (String returns the OME name, which says "float" and "double".)
func (p PixelType) MarshalText() ([]byte, error) { return nameOf("pixel type", pixelTypeNames, p) }

// UnmarshalText reads a Go or OME pixel type name ("float32" or "float").
func (p *PixelType) UnmarshalText(b []byte) error {
	return parseName("pixel type", pixelTypeNames, map[string]PixelType{"float": Float32, "double": Float64}, b, p)
}

// UnmarshalText reads a dimension order, ignoring case ("xyczt").
func (d *DimensionOrder) UnmarshalText(b []byte) error {
	order := DimensionOrder(strings.ToUpper(strings.TrimSpace(string(b))))
	if _, ok := planeStrides(order); !ok || order == "" {
		return fmt.Errorf("%w: unknown dimension order %q (want XYZCT, XYZTC, XYCTZ, XYCZT, XYTCZ or XYTZC)", ErrMetadata, b)
	}
	*d = order
	return nil
}

// MarshalText returns the order, XYZCT when empty.
func (d DimensionOrder) MarshalText() ([]byte, error) {
	if d == "" {
		return []byte(XYZCT), nil
	}
	return []byte(d), nil
}

// stringOf returns the name of v, or the type's name with v's number if
// v has none, as a String method does.
func stringOf[T ~int](typ string, names []string, v T) string {
	if v < 0 || int(v) >= len(names) {
		return fmt.Sprintf("%s(%d)", typ, int(v))
	}
	return names[v]
}

// String returns the name MarshalText gives, or "Predictor(N)".
func (p Predictor) String() string { return stringOf("Predictor", predictorNames, p) }

// String returns the name MarshalText gives, or "Downsampling(N)".
func (d Downsampling) String() string { return stringOf("Downsampling", downsamplingNames, d) }

// String returns the name MarshalText gives, or "BigTIFF(N)".
func (t BigTIFF) String() string { return stringOf("BigTIFF", bigTIFFNames, t) }
