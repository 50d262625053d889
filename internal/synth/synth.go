// Package synth generates deterministic, realistic microscopy-like test
// images of conceptually unbounded size.
//
// The benchmark workloads of this module (the slide, stack and huge images)
// need pixels that compress like real data: a dark background with mild
// noise, blobby nuclei of different brightness with texture inside, and
// smooth tissue structures, neither pure noise nor constant. A [Pattern]
// produces any rectangular region of its image independently of every other
// region, as a pure function of (x, y, Seed, Channel), so a 65536x65536 plane
// can be streamed in row bands or tiles in any order and every run, worker
// count and region split produces the same bytes.
//
// Generation uses only integer hashing, lookup tables and value noise with
// smoothstep interpolation evaluated cell by cell along rows; it is meant to
// be fast enough (hundreds of megapixels per second per core) that producing
// the input never dominates a benchmark of the writer.
package synth

import "math"

// Pattern is one channel of a synthetic fluorescence image. The zero value is
// a valid pattern (seed 0, channel 0).
//
// Channels of the same Seed share the nuclei layout, so they are correlated
// like the channels of one acquisition, but differ in brightness, texture and
// background structure. Methods write row-major regions whose top-left pixel
// is (x0, y0); coordinates may be any int, negative ones included.
type Pattern struct {
	// Seed selects the image; different seeds give unrelated images.
	Seed uint64
	// Channel selects the channel of the image.
	Channel int
}

// Gray16 writes the w x h region at (x0, y0) of the 16-bit intensity image
// into dst[:w*h], row-major. It panics if dst is shorter than w*h, like a
// slice index would; an empty region writes nothing.
func (p Pattern) Gray16(dst []uint16, x0, y0, w, h int) {
	if w <= 0 || h <= 0 {
		return
	}
	g := newGenerator(p, x0, y0, w, h)
	for r := range h {
		g.fields(y0 + r)
		g.gray16(dst[r*w : (r+1)*w : (r+1)*w])
	}
}

// Gray8 writes the w x h region at (x0, y0) of the 8-bit image into
// dst[:w*h], row-major: the Gray16 image through a display curve (a square
// root), so background noise and dim structures stay visible.
func (p Pattern) Gray8(dst []uint8, x0, y0, w, h int) {
	if w <= 0 || h <= 0 {
		return
	}
	g := newGenerator(p, x0, y0, w, h)
	row := make([]uint16, w)
	for r := range h {
		g.fields(y0 + r)
		g.gray16(row)
		out := dst[r*w : (r+1)*w : (r+1)*w]
		for i, v := range row {
			out[i] = gray8Curve[v>>4]
		}
	}
}

// RGB8 writes the w x h region at (x0, y0) of an 8-bit RGB rendering into
// dst[:3*w*h], interleaved R, G, B, row-major. It renders the same structures
// as a brightfield stained slide: a bright background, nuclei absorbing
// mostly red and green (purple) and tissue absorbing mostly green (pink).
func (p Pattern) RGB8(dst []uint8, x0, y0, w, h int) {
	if w <= 0 || h <= 0 {
		return
	}
	g := newGenerator(p, x0, y0, w, h)
	for r := range h {
		g.fields(y0 + r)
		g.rgb8(dst[3*r*w : 3*(r+1)*w : 3*(r+1)*w])
	}
}

// Image structure. Sizes are in pixels, intensities in 16-bit counts.
const (
	tissueShift  = 4 // the finest tissue lattice cells are 16x16 pixels
	textureShift = 2 // texture lattice cells are 4x4 pixels
	noiseBlock   = 4 // pixels whose noise comes from one hash

	cellShift = 6 // at most one nucleus centre per grid cell of 64x64 pixels
	cellSize  = 1 << cellShift
	minRadius = 6
	maxRadius = 22
	maxReach  = maxRadius*4/3 + 2 // bounds an elongated, roughened nucleus

	background   = 100   // camera offset, counts
	nucleusMin   = 2500  // dimmest nucleus, counts
	nucleusRange = 9000  // nuclei are nucleusMin plus up to this, counts
	fieldMax     = 32000 // range of the tissue and texture fields; fieldMax>>7 < 256
	tissueMax    = 1400  // brightness of dense tissue, counts

)

// The noise-free signal is at most background, tissue and the brightest
// nucleus with the strongest texture. As a uint16 constant this fails to
// compile if that could overflow the noise table index.
const _ uint16 = background + tissueMax + (nucleusMin+nucleusRange)*(160+fieldMax>>8)>>8

// Hash layers: distinct inputs for each use of the hash.
const (
	layerTissueCoarse = iota + 1
	layerTissueMid
	layerTissueFine
	layerTexture
	layerNucleus
	layerNucleusChannel
	layerPixel
)

// generator holds the keys, nuclei and per-row scratch of the generation of
// one region.
type generator struct {
	imageKey   uint64 // seed only: what all channels share
	channelKey uint64 // seed and channel
	x0, w      int    // first column and width of the region

	shapes    []nucleusShape // nuclei of the grid cells around the region
	shapeCol0 int            // grid column of shapes[0]
	shapeRow0 int            // grid row of shapes[0]
	shapeCols int            // grid columns per row of shapes

	tissueFine  *octaveRows // the finest tissue octave
	texture     *octaveRows // the texture inside nuclei
	tissueCols  []int32     // samples of the tissue density every 16 pixels
	textureCols []int32     // samples of the texture every 4 pixels, 0..fieldMax
	nucleus     []int32     // nucleus intensity of the row, counts
	blockBits   []uint16    // random bits from the noise block at or left of x0
	bits        []uint16    // random bits of the row's pixels
}

func newGenerator(p Pattern, x0, y0, w, h int) *generator {
	imageKey := mix(p.Seed ^ 0x5eed)
	g := &generator{
		imageKey:    imageKey,
		channelKey:  mix(imageKey ^ uint64(p.Channel)*0x9e3779b97f4a7c15),
		x0:          x0,
		w:           w,
		tissueCols:  make([]int32, latticeColumns(x0, w, tissueShift)),
		textureCols: make([]int32, latticeColumns(x0, w, textureShift)),
		nucleus:     make([]int32, w),
		blockBits:   make([]uint16, w+2*noiseBlock),
	}
	g.tissueFine = newOctaveRows(g.channelKey, layerTissueFine, tissueShift, fieldMax*2/16, x0, w)
	g.texture = newOctaveRows(g.channelKey, layerTexture, textureShift, fieldMax, x0, w)
	g.layOutNuclei(x0, y0, w, h, p.Channel&1 == 1)
	return g
}

// fields computes the noise-free fields of row y.
func (g *generator) fields(y int) {
	cols := g.tissueCols
	g.tissueFine.sample(cols, y)
	g.sampleOctave(cols, layerTissueCoarse, 8, fieldMax*9/16, tissueShift, y)
	g.sampleOctave(cols, layerTissueMid, 6, fieldMax*5/16, tissueShift, y)
	g.texture.sample(g.textureCols, y)
	clear(g.nucleus)
	g.nuclei(y)
	g.noise(y)
}

// latticeColumns returns the number of lattice columns of cells of
// 1<<shift pixels from the one at or left of x0 to the one right of the
// last of w pixels.
func latticeColumns(x0, w int, shift uint) int {
	return (x0+w-1)>>shift - x0>>shift + 2
}

// octaveRows evaluates one value-noise octave on its own lattice columns
// across a region, row after row. It keeps the two lattice rows around the
// current row, since consecutive rows share them.
type octaveRows struct {
	key         uint64
	shift       uint
	amplitude   int32
	first       int // lattice column of top[0] and bottom[0]
	cy          int // lattice row of top; bottom is row cy+1
	top, bottom []int32
}

func newOctaveRows(key, layer uint64, shift uint, amplitude int32, x0, w int) *octaveRows {
	n := latticeColumns(x0, w, shift)
	return &octaveRows{
		key:       key + layer*0xa0761d6478bd642f,
		shift:     shift,
		amplitude: amplitude,
		first:     x0 >> shift,
		cy:        math.MinInt,
		top:       make([]int32, n),
		bottom:    make([]int32, n),
	}
}

// sample sets cols[i], in [0, amplitude), to the octave's value at lattice
// column first+i of row y.
func (o *octaveRows) sample(cols []int32, y int) {
	cy := y >> o.shift
	switch cy {
	case o.cy:
	case o.cy + 1:
		o.top, o.bottom = o.bottom, o.top
		o.fill(o.bottom, cy+1)
	default:
		o.fill(o.top, cy)
		o.fill(o.bottom, cy+1)
	}
	o.cy = cy
	fy := fade[o.shift][y&(1<<o.shift-1)]
	top, bottom := o.top[:len(cols)], o.bottom[:len(cols)]
	for i := range cols {
		cols[i] = (top[i]<<8 + (bottom[i]-top[i])*fy) * o.amplitude >> 16
	}
}

func (o *octaveRows) fill(row []int32, cy int) {
	for i := range row {
		row[i] = latticeValue(o.key, o.first+i, cy)
	}
}

// sampleOctave adds to cols[i] the value, in [0, amplitude), of a coarse
// value-noise octave with lattice cells of 1<<shift pixels at pixel
// ((x0>>step)+i)<<step of row y: it is sampled on the lattice of a finer
// octave. Each sample depends only on its coordinates.
func (g *generator) sampleOctave(cols []int32, layer uint64, shift uint, amplitude int32, step uint, y int) {
	key := g.channelKey + layer*0xa0761d6478bd642f
	fy := fade[shift][y&(1<<shift-1)]
	cy := y >> shift
	column := func(cx int) int32 { // vertically interpolated, 0..65280
		top := latticeValue(key, cx, cy)
		return top<<8 + (latticeValue(key, cx, cy+1)-top)*fy
	}
	cx := g.x0 >> step << step >> shift
	left, right := column(cx), column(cx+1)
	for i := range cols {
		x := (g.x0>>step + i) << step
		if x>>shift != cx {
			cx = x >> shift
			left, right = right, column(cx+1)
		}
		v := left + (right-left)*fade[shift][x&(1<<shift-1)]>>8
		cols[i] += v * amplitude >> 16
	}
}

// tissueSpan returns the span of the row from pixel i to the end of its
// tissue lattice cell (or of the row): the tissue density of pixel i+j is
// a + d*ramp[j]>>8. Interpolation restarts at every cell, so each value
// depends only on its coordinates.
func (g *generator) tissueSpan(i int) (a, d int32, ramp []int32) {
	const mask = 1<<tissueShift - 1
	x := g.x0 + i
	c := x>>tissueShift - g.x0>>tissueShift
	a = g.tissueCols[c]
	d = g.tissueCols[c+1] - a
	n := min(1<<tissueShift-x&mask, g.w-i)
	return a, d, fade[tissueShift][x&mask : x&mask+n]
}

// nucleusShape is one nucleus: an ellipse around its centre.
type nucleusShape struct {
	cx, cy     int   // centre
	reach      int   // no pixel farther than this in x or y is inside
	xx, yy, xy int64 // ellipse quadratic form, 8-bit fixed point
	inv        int64 // (profileSize<<16) / radius²: scales d² to a profile index
	brightness int32 // counts at the centre; 0 if the cell has no nucleus
}

// layOutNuclei computes the nuclei of every grid cell whose nucleus can
// reach the region.
func (g *generator) layOutNuclei(x0, y0, w, h int, dim bool) {
	g.shapeCol0 = (x0 - maxReach) >> cellShift
	g.shapeRow0 = (y0 - maxReach) >> cellShift
	g.shapeCols = (x0+w-1+maxReach)>>cellShift - g.shapeCol0 + 1
	rows := (y0+h-1+maxReach)>>cellShift - g.shapeRow0 + 1
	g.shapes = make([]nucleusShape, rows*g.shapeCols)
	for r := range rows {
		for c := range g.shapeCols {
			g.shapes[r*g.shapeCols+c] = g.shape(g.shapeCol0+c, g.shapeRow0+r, dim)
		}
	}
}

// shape returns the nucleus of grid cell (cx, cy), zero if it has none.
// Position and shape depend on the seed only; brightness on the channel too.
func (g *generator) shape(cx, cy int, dim bool) nucleusShape {
	h := hash3(g.imageKey, layerNucleus, cx, cy)
	if h&7 < 3 { // 3/8 of the cells are empty
		return nucleusShape{}
	}
	radius := minRadius + int(h>>3&0xff)*(maxRadius-minRadius)/255
	s := nucleusShape{
		cx:    cx<<cellShift + int(h>>11&(cellSize-1)),
		cy:    cy<<cellShift + int(h>>17&(cellSize-1)),
		reach: radius*4/3 + 2,
		inv:   (profileSize << 16) / int64(radius*radius),
	}
	// Elongation up to 1.6x along a hashed direction; the area is kept.
	stretch := 256 + int64(h>>23&0x9f)
	squeeze := 65536 / stretch
	c, sn := direction[h>>31&63][0], direction[h>>31&63][1]
	s.xx = (c*c*stretch + sn*sn*squeeze) >> 16
	s.yy = (sn*sn*stretch + c*c*squeeze) >> 16
	s.xy = 2 * c * sn * (stretch - squeeze) >> 16
	b := hash3(g.channelKey, layerNucleusChannel, cx, cy)
	s.brightness = nucleusMin + int32(b&0xffff)*nucleusRange>>16
	if dim {
		s.brightness /= 3
	}
	return s
}

// nuclei writes the nuclei crossing row y into g.nucleus.
func (g *generator) nuclei(y int) {
	for r := (y-maxReach)>>cellShift - g.shapeRow0; r <= (y+maxReach)>>cellShift-g.shapeRow0; r++ {
		for _, s := range g.shapes[r*g.shapeCols : (r+1)*g.shapeCols] {
			if s.brightness != 0 && y > s.cy-s.reach && y < s.cy+s.reach {
				g.drawSpan(s, y)
			}
		}
	}
}

// drawSpan writes the part of nucleus s on row y into g.nucleus, keeping
// the brighter value where nuclei overlap. The profile is a dome with a soft
// rim, modulated by the texture (chromatin), which also roughens the outline.
func (g *generator) drawSpan(s nucleusShape, y int) {
	dy := int64(y - s.cy)
	left, right, ok := s.extent(dy)
	lo := max(s.cx+left, g.x0)
	hi := min(s.cx+right, g.x0+g.w-1)
	if !ok || lo > hi {
		return
	}
	// q is the quadratic form at dx, updated by its exact differences.
	dx := int64(lo - s.cx)
	q := s.xx*dx*dx + s.yy*dy*dy + s.xy*dx*dy
	dq := s.xx*(2*dx+1) + s.xy*dy
	nucleus := g.nucleus[lo-g.x0 : hi-g.x0+1]
	for i := range nucleus {
		tex := g.textureAt(lo + i)
		idx := (q>>8*s.inv)>>16 + int64(tex>>8) - fieldMax>>9
		q += dq
		dq += 2 * s.xx
		if idx < profileSize {
			v := profile[max(idx, 0)] * s.brightness >> 8 * (160 + tex>>8) >> 8
			nucleus[i] = max(nucleus[i], v)
		}
	}
}

// extent returns the range of dx on row dy outside which no pixel can
// belong to the nucleus, however the texture roughens its outline; ok is
// false if the row misses it. The bounds are rounded outwards: they only
// save work and do not change any pixel.
func (s nucleusShape) extent(dy int64) (left, right int, ok bool) {
	// The roughening lowers the profile index by at most fieldMax>>9.
	limit := float64(int64(profileSize+fieldMax>>9+1)<<24/s.inv + 1)
	b := float64(s.xy * dy)
	c := float64(s.yy*dy*dy) - limit
	disc := b*b - 4*float64(s.xx)*c
	if disc < 0 {
		return 0, 0, false
	}
	root := math.Sqrt(disc)
	a2 := 2 * float64(s.xx)
	return int(math.Floor((-b-root)/a2)) - 1, int(math.Ceil((-b+root)/a2)) + 1, true
}

// textureAt interpolates the texture of the current row at pixel x.
func (g *generator) textureAt(x int) int32 {
	i := x>>textureShift - g.x0>>textureShift
	a := g.textureCols[i]
	return a + (g.textureCols[i+1]-a)*fade[textureShift][x&(1<<textureShift-1)]>>8
}

// noise fills g.bits with the random bits of row y: each aligned block of
// noiseBlock pixels takes 16 bits per pixel from one hash.
func (g *generator) noise(y int) {
	key := g.channelKey + uint64(y)*0xe7037ed1a0b428db + layerPixel
	first := floorDiv(g.x0, noiseBlock)
	skip := g.x0 - first*noiseBlock
	blocks := g.blockBits[:(skip+g.w+noiseBlock-1)/noiseBlock*noiseBlock]
	for b := 0; b+noiseBlock <= len(blocks); b += noiseBlock {
		h := mix(key + uint64(first+b/noiseBlock)*0x9e3779b97f4a7c15)
		block := blocks[b : b+noiseBlock]
		block[0], block[1], block[2], block[3] = uint16(h), uint16(h>>16), uint16(h>>32), uint16(h>>48)
	}
	g.bits = blocks[skip : skip+g.w]
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// gray16 composes the fields of the row with shot and read noise into dst.
func (g *generator) gray16(dst []uint16) {
	for i, n := 0, 0; i < len(dst); i += n {
		a, d, ramp := g.tissueSpan(i)
		n = len(ramp)
		gray16Span(dst[i:i+n], g.nucleus[i:i+n], g.bits[i:i+n], a, d, ramp)
	}
}

// gray16Span composes one span of tissueSpan into out. The noise never
// exceeds 3.5 standard deviations (the range of normal), so it can neither
// push the darkest signal, background, below zero (the read noise alone is
// 3 counts) nor the brightest past 65535: no clamping is needed.
func gray16Span(out []uint16, nucleus []int32, bits []uint16, a, d int32, ramp []int32) {
	nucleus, bits, ramp = nucleus[:len(out)], bits[:len(out)], ramp[:len(out)]
	for j := range out {
		signal := background + tissueCurve[uint8((a+d*ramp[j]>>8)>>7)] + nucleus[j]
		out[j] = uint16(signal + normal[bits[j]>>4]*noiseScale[uint16(signal)>>6]>>16)
	}
}

// rgb8 renders the fields of the row as a stained brightfield slide into
// dst (interleaved RGB) with mild per-channel noise.
func (g *generator) rgb8(dst []uint8) {
	for i, n := 0, 0; i < len(dst)/3; i += n {
		a, d, ramp := g.tissueSpan(i)
		n = len(ramp)
		rgb8Span(dst[3*i:3*(i+n)], g.nucleus[i:i+n], g.bits[i:i+n], a, d, ramp)
	}
}

// rgb8Span renders one span of tissueSpan into out. Each channel gets
// triangular noise in -3..3 from four random bits; transmission stays in
// 3..238, so no clamping is needed.
func rgb8Span(out []uint8, nucleus []int32, bits []uint16, a, d int32, ramp []int32) {
	nucleus, bits, ramp = nucleus[:len(out)/3], bits[:len(out)/3], ramp[:len(out)/3]
	for j, r := range ramp {
		eosin := tissueCurve[uint8((a+d*r>>8)>>7)]
		h, b := nucleus[j], int32(bits[j])
		px := out[3*j : 3*j+3 : 3*j+3]
		px[0] = uint8(transmission[min((h*stainH[0]+eosin*stainE[0])>>16, odLevels-1)] + b&3 + b>>2&3 - 3)
		px[1] = uint8(transmission[min((h*stainH[1]+eosin*stainE[1])>>16, odLevels-1)] + b>>4&3 + b>>6&3 - 3)
		px[2] = uint8(transmission[min((h*stainH[2]+eosin*stainE[2])>>16, odLevels-1)] + b>>8&3 + b>>10&3 - 3)
	}
}
