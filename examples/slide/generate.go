package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/ometiff-go/ometiff/internal/synth"
	"github.com/ometiff-go/ometiff/pyramid"
)

// seed selects the synthetic slide; every run writes the same pixels.
const seed = 1

// pixelKind is a way of storing the slide's samples, with the generator
// that produces them. As the value of the -type flag it reads and writes
// the name of its pixel type, or rgb8 for interleaved RGB of uint8.
type pixelKind struct {
	pixelType pyramid.PixelType
	samples   int
	fill      func(g *generator, dst []byte, y0, rows int)
}

// pixelKinds are the kinds slide generates, the default first.
var pixelKinds = []pixelKind{
	{pyramid.Uint16, 1, fillUint16},
	{pyramid.Uint8, 1, fillUint8},
	{pyramid.Float32, 1, fillFloat32},
	{pyramid.Float64, 1, fillFloat64},
	{pyramid.Uint8, 3, fillRGB8},
}

// rgb8 names the kind of 3 uint8 samples per pixel.
const rgb8 = "rgb8"

// MarshalText returns the name of the kind.
func (k pixelKind) MarshalText() ([]byte, error) {
	if k.samples == 3 {
		return []byte(rgb8), nil
	}
	return k.pixelType.MarshalText()
}

// UnmarshalText reads the name of a kind slide generates.
func (k *pixelKind) UnmarshalText(text []byte) error {
	for _, c := range pixelKinds {
		if c.named(text) {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("want one of %s", kindNames())
}

// named reports whether text names the kind: rgb8, or its pixel type as
// package pyramid reads it ("uint16", "float32" or "float", ...).
func (k pixelKind) named(text []byte) bool {
	if k.samples == 3 {
		return strings.EqualFold(string(text), rgb8)
	}
	var t pyramid.PixelType
	return t.UnmarshalText(text) == nil && t == k.pixelType
}

// kindNames lists the names of the kinds slide generates.
func kindNames() string {
	names := make([]string, len(pixelKinds))
	for i, k := range pixelKinds {
		name, _ := k.MarshalText()
		names[i] = string(name)
	}
	return strings.Join(names, ", ")
}

// pixelBytes is the size of one pixel.
func (k pixelKind) pixelBytes() int { return k.samples * k.pixelType.Size() }

// generator produces the rows of one channel of the slide as
// little-endian samples.
type generator struct {
	kind    pixelKind
	pattern synth.Pattern
	width   int
	gray    []uint16 // 16-bit intensities of a band, for the types made from them
}

// newGenerator returns the generator of channel c of a slide width pixels
// wide, for bands of at most bandRows rows.
func (k pixelKind) newGenerator(c, width, bandRows int) *generator {
	g := &generator{kind: k, pattern: synth.Pattern{Seed: seed, Channel: c}, width: width}
	if k.pixelType != pyramid.Uint8 {
		g.gray = make([]uint16, width*bandRows)
	}
	return g
}

// fill writes rows [y0, y0+rows) of the channel into dst.
func (g *generator) fill(dst []byte, y0, rows int) { g.kind.fill(g, dst, y0, rows) }

// intensities returns the 16-bit intensities of rows [y0, y0+rows).
func (g *generator) intensities(y0, rows int) []uint16 {
	gray := g.gray[:g.width*rows]
	g.pattern.Gray16(gray, 0, y0, g.width, rows)
	return gray
}

func fillUint8(g *generator, dst []byte, y0, rows int) {
	g.pattern.Gray8(dst, 0, y0, g.width, rows)
}

func fillRGB8(g *generator, dst []byte, y0, rows int) {
	g.pattern.RGB8(dst, 0, y0, g.width, rows)
}

func fillUint16(g *generator, dst []byte, y0, rows int) {
	for i, v := range g.intensities(y0, rows) {
		binary.LittleEndian.PutUint16(dst[2*i:], v)
	}
}

// fillFloat32 and fillFloat64 scale the intensities to [0, 1].
func fillFloat32(g *generator, dst []byte, y0, rows int) {
	for i, v := range g.intensities(y0, rows) {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(float32(v)/math.MaxUint16))
	}
}

func fillFloat64(g *generator, dst []byte, y0, rows int) {
	for i, v := range g.intensities(y0, rows) {
		binary.LittleEndian.PutUint64(dst[8*i:], math.Float64bits(float64(v)/math.MaxUint16))
	}
}
