package tiff

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/goldenfile"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
)

// goldenDir holds this package's golden files.
const goldenDir = "../testdata/tiff"

// image is an uncompressed source image for a golden file.
type image struct {
	width, height, samples, bytesPerSample int
	order                                  binary.ByteOrder
	pix                                    []byte // rows, samples interleaved, in order
}

// newImage fills an image with a deterministic pattern.
func newImage(width, height, samples, bytesPerSample int, order binary.ByteOrder, seed int) *image {
	im := &image{width: width, height: height, samples: samples, bytesPerSample: bytesPerSample, order: order}
	if im.order == nil {
		im.order = binary.LittleEndian
	}
	for y := range height {
		for x := range width {
			for s := range samples {
				v := uint64((x*7 + y*13 + s*101 + seed*37 + x*y) % 65521)
				im.pix = appendSample(im.pix, im.order, bytesPerSample, v)
			}
		}
	}
	return im
}

func appendSample(p []byte, order binary.ByteOrder, size int, v uint64) []byte {
	switch size {
	case 1:
		return append(p, byte(v))
	case 2:
		return order.(binary.AppendByteOrder).AppendUint16(p, uint16(v))
	default:
		return order.(binary.AppendByteOrder).AppendUint32(p, uint32(v))
	}
}

func (im *image) rowBytes() int { return im.width * im.samples * im.bytesPerSample }

// strip returns rows [y0, y1) of the image.
func (im *image) strip(y0, y1 int) []byte { return im.pix[y0*im.rowBytes() : y1*im.rowBytes()] }

// tile returns the tile at (tx, ty), padded with zeros past the edges.
func (im *image) tile(tx, ty, tw, th int) []byte {
	pixel := im.samples * im.bytesPerSample
	out := make([]byte, tw*th*pixel)
	for y := range th {
		sy := ty*th + y
		if sy >= im.height {
			break
		}
		x0 := tx * tw
		n := min(tw, im.width-x0)
		copy(out[y*tw*pixel:], im.pix[(sy*im.width+x0)*pixel:][:n*pixel])
	}
	return out
}

// baseFields adds the fields every uncompressed golden image carries.
func baseFields(d *Directory, im *image, subfile uint32) {
	d.Fields = &ifd.Builder{}
	f := d.Fields
	f.AddLong(TagNewSubfileType, subfile)
	f.AddUint(TagImageWidth, uint64(im.width))
	f.AddUint(TagImageLength, uint64(im.height))
	bits := make([]uint16, im.samples)
	formats := make([]uint16, im.samples)
	for i := range bits {
		bits[i], formats[i] = uint16(8*im.bytesPerSample), SampleFormatUint
	}
	f.AddShort(TagBitsPerSample, bits...)
	f.AddShort(TagCompression, CompressionNone)
	photometric := PhotometricBlackIsZero
	if im.samples == 3 {
		photometric = PhotometricRGB
	}
	f.AddShort(TagPhotometricInterpretation, photometric)
	f.AddShort(TagSamplesPerPixel, uint16(im.samples))
	f.AddShort(TagPlanarConfiguration, PlanarContig)
	f.AddASCII(TagSoftware, "ometiff golden")
	f.AddShort(TagSampleFormat, formats...)
}

// blockWriter appends blocks through a Writer and keeps the first error,
// so that golden builders read straight and fault tests see the failure.
type blockWriter struct {
	w   *Writer
	err error
}

func (bw *blockWriter) block(p []byte) Block {
	if bw.err != nil {
		return Block{}
	}
	b, err := bw.w.WriteBlock(p)
	bw.err = err
	return b
}

// stripped appends im in strips of rowsPerStrip and returns its directory.
func (bw *blockWriter) stripped(im *image, rowsPerStrip int) *Directory {
	d := &Directory{OffsetsTag: TagStripOffsets, CountsTag: TagStripByteCounts}
	baseFields(d, im, SubfileFullResolution)
	d.Fields.AddUint(TagRowsPerStrip, uint64(rowsPerStrip))
	for y := 0; y < im.height; y += rowsPerStrip {
		d.Blocks = append(d.Blocks, bw.block(im.strip(y, min(y+rowsPerStrip, im.height))))
	}
	return d
}

// tiled appends im in tiles and returns its directory.
func (bw *blockWriter) tiled(im *image, tw, th int, subfile uint32) *Directory {
	d := &Directory{OffsetsTag: TagTileOffsets, CountsTag: TagTileByteCounts}
	baseFields(d, im, subfile)
	d.Fields.AddUint(TagTileWidth, uint64(tw))
	d.Fields.AddUint(TagTileLength, uint64(th))
	for ty := 0; ty*th < im.height; ty++ {
		for tx := 0; tx*tw < im.width; tx++ {
			d.Blocks = append(d.Blocks, bw.block(im.tile(tx, ty, tw, th)))
		}
	}
	return d
}

// golden describes one golden file: how to write it and what it holds.
type golden struct {
	name   string
	opts   Options
	build  func(bw *blockWriter) []*Directory
	images []*image // the main chain's images, then SubIFD images, in file order
	tiled  bool
}

func goldens() []golden {
	gray8 := newImage(40, 30, 1, 1, nil, 1)
	gray16 := newImage(20, 10, 1, 2, nil, 2)
	rgbBE := newImage(33, 17, 3, 1, binary.BigEndian, 3)
	gray16BE := newImage(21, 9, 1, 2, binary.BigEndian, 4)
	gray16BEhalf := newImage(11, 5, 1, 2, binary.BigEndian, 12)
	tiled16 := newImage(100, 70, 1, 2, nil, 5)
	big8 := newImage(50, 40, 1, 1, nil, 6)
	page0, page0half, page0quarter := newImage(64, 48, 1, 1, nil, 7), newImage(32, 24, 1, 1, nil, 8), newImage(16, 12, 1, 1, nil, 9)
	page1, page1half := newImage(64, 48, 1, 1, nil, 10), newImage(32, 24, 1, 1, nil, 11)
	return []golden{
		{name: "stripped-gray8", images: []*image{gray8}, build: func(bw *blockWriter) []*Directory {
			return []*Directory{bw.stripped(gray8, 8)}
		}},
		{name: "stripped-gray16-two-pages", images: []*image{gray16, gray8}, build: func(bw *blockWriter) []*Directory {
			return []*Directory{bw.stripped(gray16, 3), bw.stripped(gray8, 30)}
		}},
		{name: "stripped-rgb8-bigendian", opts: Options{ByteOrder: binary.BigEndian}, images: []*image{rgbBE}, build: func(bw *blockWriter) []*Directory {
			return []*Directory{bw.stripped(rgbBE, 5)}
		}},
		{name: "stripped-gray16-bigendian", opts: Options{ByteOrder: binary.BigEndian}, images: []*image{gray16BE}, build: func(bw *blockWriter) []*Directory {
			return []*Directory{bw.stripped(gray16BE, 4)}
		}},
		{name: "tiled-gray16", tiled: true, images: []*image{tiled16}, build: func(bw *blockWriter) []*Directory {
			return []*Directory{bw.tiled(tiled16, 32, 16, SubfileFullResolution)}
		}},
		{name: "tiled-gray8-bigtiff", tiled: true, opts: Options{BigTIFF: BigTIFFAlways}, images: []*image{big8}, build: func(bw *blockWriter) []*Directory {
			return []*Directory{bw.tiled(big8, 16, 16, SubfileFullResolution)}
		}},
		{name: "tiled-subifds", tiled: true, images: []*image{page0, page1, page0half, page0quarter, page1half}, build: func(bw *blockWriter) []*Directory {
			d0 := bw.tiled(page0, 32, 16, SubfileFullResolution)
			d0.SubIFDs = []*Directory{bw.tiled(page0half, 16, 16, SubfileReducedImage), bw.tiled(page0quarter, 16, 16, SubfileReducedImage)}
			d1 := bw.tiled(page1, 32, 16, SubfileFullResolution)
			d1.SubIFDs = []*Directory{bw.tiled(page1half, 16, 16, SubfileReducedImage)}
			return []*Directory{d0, d1}
		}},
		{name: "tiled-subifds-bigtiff-bigendian", tiled: true, opts: Options{BigTIFF: BigTIFFAlways, ByteOrder: binary.BigEndian}, images: []*image{gray16BE, gray16BEhalf}, build: func(bw *blockWriter) []*Directory {
			d := bw.tiled(gray16BE, 16, 16, SubfileFullResolution)
			d.SubIFDs = []*Directory{bw.tiled(gray16BEhalf, 16, 16, SubfileReducedImage)}
			return []*Directory{d}
		}},
	}
}

// writeTo writes the golden file through h and commits.
func (g golden) writeTo(h iohandle.Handle) error {
	w, err := NewWriter(h, g.opts)
	if err != nil {
		return err
	}
	bw := &blockWriter{w: w}
	for _, d := range g.build(bw) {
		if err := w.AddDirectory(d); err != nil {
			return err
		}
	}
	if bw.err != nil {
		return bw.err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return h.Commit()
}

// encode writes a golden file into memory.
func (g golden) encode(t testing.TB) []byte {
	h := iohandle.NewMemory()
	require.NoError(t, g.writeTo(h))
	return h.Bytes()
}

// dump renders a file's structure as text.
func dump(t testing.TB, data []byte) string {
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, Dump(&b, f, DumpOptions{}))
	return b.String()
}

// TestGoldenFiles writes every golden file, compares it byte for byte and
// its text dump line for line with testdata/tiff, and checks that writing
// twice gives the same bytes. Run with -update to regenerate.
func TestGoldenFiles(t *testing.T) {
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			data := g.encode(t)
			assert.Equal(t, data, g.encode(t), "byte-identical run to run")
			text := dump(t, data)
			goldenfile.Check(t, goldenPath(g.name), data, text)
		})
	}
}

// goldenPath returns the committed file of a golden.
func goldenPath(name string) string { return filepath.Join(goldenDir, name+".tif") }

// rawPixels returns an image's pixels in little-endian order, the form the
// independent readers give back.
func (im *image) rawPixels() []byte {
	if im.order == binary.LittleEndian || im.bytesPerSample == 1 {
		return im.pix
	}
	out := make([]byte, len(im.pix))
	for i := 0; i < len(out); i += im.bytesPerSample {
		for j := range im.bytesPerSample {
			out[i+j] = im.pix[i+im.bytesPerSample-1-j]
		}
	}
	return out
}

func (im *image) String() string {
	return fmt.Sprintf("%dx%d, %d samples of %d bytes", im.width, im.height, im.samples, im.bytesPerSample)
}
