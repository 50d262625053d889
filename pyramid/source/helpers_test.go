package source

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/tiff"
)

// testPage describes an image to store in a test file: its pixels and how
// they are cut and coded.
type testPage struct {
	width, height, samples, bits int
	float, planar                bool
	tileW, tileH                 int // tiles if tileW > 0
	rowsPerStrip                 int // strips otherwise (0: one strip)
	padLast                      int // rows of zeros stored past the last strip's (up to rowsPerStrip in all)
	codec                        compress.Codec
	predictor                    uint16
	sparse                       []int // blocks stored as 0 bytes at offset 0 (zeros)
	seed                         int
	signed                       bool               // SampleFormat int
	more                         func(*ifd.Builder) // adds (or replaces) fields
}

// pixels returns the page's image: rows of interleaved little-endian
// samples, a pattern of the seed with sparse blocks left zero.
func (p testPage) pixels() []byte {
	n := p.bits / 8
	out := make([]byte, p.width*p.height*p.samples*n)
	for i := 0; i < len(out); i += n {
		s := i / n
		x, y, c := s/p.samples%p.width, s/p.samples/p.width, s%p.samples
		v := uint64(x*7+y*13+c*101+p.seed*37+x*y/3) % 65521
		if p.float {
			if n == 2 { // a finite half float, negative for odd samples
				binary.LittleEndian.PutUint16(out[i:], uint16(v%0x7c00)|uint16(c&1)<<15)
				continue
			}
			if n == 4 {
				binary.LittleEndian.PutUint32(out[i:], math.Float32bits(float32(v)/7))
			} else {
				binary.LittleEndian.PutUint64(out[i:], math.Float64bits(float64(v)/7))
			}
			continue
		}
		for k := range n {
			out[i+k] = byte(v >> (8 * k))
		}
	}
	for _, b := range p.sparse {
		p.clearBlock(out, b)
	}
	return out
}

// geometry returns the block size and counts.
func (p testPage) geometry() (bw, bh, across, down, planes int) {
	bw, bh = p.tileW, p.tileH
	if bw == 0 {
		bw, bh = p.width, p.rowsPerStrip
		if bh == 0 || bh > p.height {
			bh = p.height
		}
	}
	planes = 1
	if p.planar {
		planes = p.samples
	}
	return bw, bh, (p.width + bw - 1) / bw, (p.height + bh - 1) / bh, planes
}

// clearBlock zeros the pixels of block b in im.
func (p testPage) clearBlock(im []byte, b int) {
	bw, bh, across, down, _ := p.geometry()
	n := p.bits / 8
	plane, within := b/(across*down), b%(across*down)
	x0, y0 := within%across*bw, within/across*bh
	for y := y0; y < min(y0+bh, p.height); y++ {
		for x := x0; x < min(x0+bw, p.width); x++ {
			for c := range p.samples {
				if p.planar && c != plane {
					continue
				}
				clear(im[((y*p.width+x)*p.samples+c)*n:][:n])
			}
		}
	}
}

// blocks cuts the image into its blocks, in file order and byte order o:
// tiles padded with zeros, the last strip short (or padded by padLast).
func (p testPage) blocks(im []byte, o binary.ByteOrder) [][]byte {
	bw, bh, across, down, planes := p.geometry()
	n := p.bits / 8
	spb := p.samples / planes // samples per pixel of a block
	var out [][]byte
	for plane := range planes {
		for by := range down {
			rows := bh
			if p.tileW == 0 {
				rows = min(bh, p.height-by*bh)
				if by == down-1 {
					rows = min(bh, rows+p.padLast)
				}
			}
			for bx := range across {
				b := make([]byte, bw*rows*spb*n)
				for y := range rows {
					for x := range bw {
						sx, sy := bx*bw+x, by*bh+y
						if sx >= p.width || sy >= p.height {
							continue
						}
						for c := range spb {
							src := im[((sy*p.width+sx)*p.samples+c+plane)*n:][:n] // plane is 0 unless planar
							dst := b[((y*bw+x)*spb+c)*n:][:n]
							copy(dst, src)
							if o == binary.BigEndian {
								for k := range n {
									dst[k] = src[n-1-k]
								}
							}
						}
					}
				}
				out = append(out, b)
			}
		}
	}
	return out
}

// fileOf stores the pages in a TIFF file of the byte order, classic or
// BigTIFF: a header, the blocks, then the directories, each built by
// package ifd. It returns the file and each page's image.
func fileOf(t testing.TB, order binary.ByteOrder, bigTIFF bool, pages ...testPage) (file []byte, images [][]byte) {
	t.Helper()
	format := ifd.Format{Order: order, BigTIFF: bigTIFF}
	file = make([]byte, 16)
	var builders []*ifd.Builder
	for _, p := range pages {
		im := p.pixels()
		images = append(images, im)
		var offsets, counts []uint64
		for i, raw := range p.blocks(im, order) {
			if slices.Contains(p.sparse, i) {
				offsets, counts = append(offsets, 0), append(counts, 0)
				continue
			}
			codec := p.codec
			if codec == nil {
				codec = mustCodec(tiff.CompressionNone)
			}
			bw, _, _, _, planes := p.geometry()
			enc := &compress.TileEncoder{Codec: codec, Predictor: p.predictor, Width: bw,
				Format: compress.Format{BitsPerSample: p.bits, SamplesPerPixel: p.samples / planes, Float: p.float, ByteOrder: order}}
			stored, err := enc.Encode(nil, raw)
			if err != nil {
				t.Fatal(err)
			}
			offsets, counts = append(offsets, uint64(len(file))), append(counts, uint64(len(stored)))
			file = append(file, stored...)
			file = append(file, make([]byte, len(file)&1)...)
		}
		builders = append(builders, p.fields(offsets, counts, codec(p)))
	}
	pos := int64(len(file))
	first := pos
	for i, b := range builders {
		next := uint64(0)
		if i+1 < len(builders) {
			next = uint64(pos + b.Size(bigTIFF))
		}
		var err error
		if file, err = b.Encode(file, pos, next, format); err != nil {
			t.Fatal(err)
		}
		pos = int64(len(file))
	}
	h := tiff.Header{Order: order, BigTIFF: bigTIFF, FirstIFD: uint64(first)}
	head, err := h.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	copy(file, head)
	return file, images
}

// codec returns the page's codec, None if unset.
func codec(p testPage) compress.Codec {
	if p.codec == nil {
		return mustCodec(tiff.CompressionNone)
	}
	return p.codec
}

// fields builds the page's directory.
func (p testPage) fields(offsets, counts []uint64, c compress.Codec) *ifd.Builder {
	b := new(ifd.Builder)
	b.AddUint(tiff.TagImageWidth, uint64(p.width))
	b.AddUint(tiff.TagImageLength, uint64(p.height))
	bits, formats := make([]uint16, p.samples), make([]uint16, p.samples)
	for i := range bits {
		bits[i], formats[i] = uint16(p.bits), tiff.SampleFormatUint
		if p.float {
			formats[i] = tiff.SampleFormatFloat
		}
		if p.signed {
			formats[i] = tiff.SampleFormatInt
		}
	}
	b.AddShort(tiff.TagBitsPerSample, bits...)
	b.AddShort(tiff.TagSampleFormat, formats...)
	b.AddShort(tiff.TagCompression, c.Compression())
	photometric := tiff.PhotometricBlackIsZero
	if p.samples == 3 {
		photometric = tiff.PhotometricRGB
	}
	b.AddShort(tiff.TagPhotometricInterpretation, photometric)
	b.AddShort(tiff.TagSamplesPerPixel, uint16(p.samples))
	if p.planar {
		b.AddShort(tiff.TagPlanarConfiguration, tiff.PlanarSeparate)
	}
	if p.predictor > 1 {
		b.AddShort(tiff.TagPredictor, p.predictor)
	}
	if p.tileW > 0 {
		b.AddUint(tiff.TagTileWidth, uint64(p.tileW))
		b.AddUint(tiff.TagTileLength, uint64(p.tileH))
		b.AddUint(tiff.TagTileOffsets, offsets...)
		b.AddUint(tiff.TagTileByteCounts, counts...)
	} else {
		if p.rowsPerStrip > 0 {
			b.AddUint(tiff.TagRowsPerStrip, uint64(p.rowsPerStrip))
		}
		b.AddUint(tiff.TagStripOffsets, offsets...)
		b.AddUint(tiff.TagStripByteCounts, counts...)
	}
	if p.more != nil {
		p.more(b)
	}
	return b
}

// mustCodec returns compress.NewCodec(compression, 0), which must succeed.
func mustCodec(compression uint16) compress.Codec {
	c, err := compress.NewCodec(compression, 0)
	if err != nil {
		panic(err)
	}
	return c
}
