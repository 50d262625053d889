//go:build linux

package main

import (
	"fmt"

	"github.com/ometiff-go/ometiff/pyramid"
)

// Kinds of workload.
const (
	slideKind = "slide" // one plane, with its pyramid
	stackKind = "stack" // many series of many small planes
	hugeKind  = "huge"  // one plane streamed in row bands, generated on the fly
)

// tileSize is the tile side of every workload whose planes are larger;
// stackPlane is the width and height of the stack's planes.
const tileSize, stackPlane = 256, 128

// tileFor is the tile side for planes of size pixels: tileSize, or the
// plane rounded up to 16 when smaller, as the writer picks by default.
func tileFor(size int) int { return min(tileSize, (size+15)&^15) }

// A workload is one writing job of the comparison: a slide, a stack or
// huge, as the package doc describes them. It is passed to the worker and
// to the tifffile script as JSON.
type workload struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Size        int    `json:"size"` // width and height of every plane
	RGB         bool   `json:"rgb"`  // interleaved RGB uint8, not gray uint16
	Compression string `json:"compression"`
	Quality     int    `json:"quality"` // JPEG quality; 0 for other codecs
	Tile        int    `json:"tile"`    // tile width and height
	Series      int    `json:"series"`  // stack: images in the file
	Z           int    `json:"z"`       // stack: focal planes per image
	C           int    `json:"c"`       // stack: channels per image
}

// catalog lists every workload, in table order, at the given sizes.
func catalog(slideSize, stackSeries, hugeSize int) []workload {
	slide := func(name, compression string, rgb bool) workload {
		return workload{Name: name, Kind: slideKind, Size: slideSize, RGB: rgb, Compression: compression, Tile: tileFor(slideSize), Series: 1, Z: 1, C: 1}
	}
	// The RGB slide as JPEG at quality 85, which whole-slide scanners and
	// converters use for brightfield.
	slideJPEG := slide("slide-rgb-jpeg", "jpeg", true)
	slideJPEG.Quality = 85
	stack := func(name, compression string) workload {
		return workload{Name: name, Kind: stackKind, Size: stackPlane, Compression: compression, Tile: tileFor(stackPlane), Series: stackSeries, Z: 90, C: 2}
	}
	return []workload{
		slide("slide", "lzw", false),
		slide("slide-deflate", "deflate", false),
		slide("slide-zstd", "zstd", false),
		slide("slide-none", "none", false),
		slide("slide-rgb", "lzw", true),
		slide("slide-rgb-deflate", "deflate", true),
		slideJPEG,
		stack("stack", "none"),
		stack("stack-lzw", "lzw"),
		{Name: "huge", Kind: hugeKind, Size: hugeSize, Compression: "lzw", Tile: tileFor(hugeSize), Series: 1, Z: 1, C: 1},
	}
}

// compressions maps the workloads' codec names to the writer's.
var compressions = map[string]pyramid.Compression{
	"lzw": pyramid.LZW, "deflate": pyramid.Deflate, "zstd": pyramid.Zstd, "none": pyramid.None, "jpeg": pyramid.JPEG,
}

// pixelType is the type of one sample.
func (w workload) pixelType() pyramid.PixelType {
	if w.RGB || w.Kind == hugeKind {
		return pyramid.Uint8
	}
	return pyramid.Uint16
}

// samples is the number of samples per pixel.
func (w workload) samples() int {
	if w.RGB {
		return 3
	}
	return 1
}

// planeBytes is the size of one raw plane.
func (w workload) planeBytes() int {
	return w.Size * w.Size * w.samples() * w.pixelType().Size()
}

// planes is the number of full-resolution planes in the file.
func (w workload) planes() int { return w.Series * w.Z * w.C }

// rawBytes is the size of the raw input.
func (w workload) rawBytes() int64 { return int64(w.planes()) * int64(w.planeBytes()) }

// input names the raw input file; workloads with the same pixels share it.
func (w workload) input() string {
	switch {
	case w.Kind == stackKind:
		return fmt.Sprintf("stack-%dx%dx%d-%d.raw", w.Series, w.Z, w.C, w.Size)
	case w.RGB:
		return fmt.Sprintf("slide-%d-rgb8.raw", w.Size)
	}
	return fmt.Sprintf("%s-%d-%v.raw", w.Kind, w.Size, w.pixelType())
}

// levels is the number of resolutions the writer stores per plane: halving
// until a level fits in one tile.
func (w workload) levels() int {
	n := 1
	for s := w.Size; s > w.Tile; s = (s + 1) / 2 {
		n++
	}
	return n
}
