package source

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// pyramidFile writes an OME-TIFF of one image of spec's size with random
// smooth pixels through the pyramid writer (levels in SubIFDs), and maps
// it back.
func pyramidFile(t testing.TB, spec pyramid.ImageSpec, opts pyramid.Options) *File {
	t.Helper()
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, opts)
	require.NoError(t, err)
	im, err := w.AddImage(spec)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	pixel := max(spec.SamplesPerPixel, 1) * spec.PixelType.Size()
	for p := range spec.Planes() {
		plane := make([]byte, spec.SizeX*spec.SizeY*pixel)
		for i := range plane {
			plane[i] = byte(i/pixel%spec.SizeX + i/(pixel*spec.SizeX) + rng.IntN(8))
		}
		z, c, tt := spec.PlaneCoords(p)
		require.NoError(t, im.WritePlane(z, c, tt, plane))
	}
	require.NoError(t, w.Close())
	f, err := mapFile(t, h.Bytes(), "in.ome.tif", Options{})
	require.NoError(t, err)
	return f
}

// copyThrough converts the images of f with their tiles copied through
// (with the file's reduced levels too, when levels), and maps the output.
func copyThrough(t testing.TB, f *File, opts pyramid.Options, levels bool) *File {
	t.Helper()
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, opts)
	require.NoError(t, err)
	for _, im := range f.Images {
		enc, err := im.Encoded(levels)
		require.NoError(t, err)
		if levels {
			require.Len(t, enc, 1+len(im.Planes[0].Levels), "every level given encoded")
		} else {
			require.Len(t, enc, 1, "the full resolution alone given encoded")
		}
		dst, err := w.AddEncodedImage(im.Spec, enc...)
		require.NoError(t, err)
		require.NoError(t, im.WritePlanes(context.Background(), dst, Options{Rows: opts.TileSize, Workers: 2}))
	}
	require.NoError(t, w.Close())
	out, err := mapFile(t, h.Bytes(), "out.ome.tif", Options{})
	require.NoError(t, err)
	return out
}

// tiles returns a page's stored tiles.
func tiles(t testing.TB, p *tiff.Page) [][]byte {
	t.Helper()
	l, err := p.Layout()
	require.NoError(t, err)
	var out [][]byte
	for i := range l.BlocksAcross * l.BlocksDown * l.Planes {
		b, err := p.ReadBlock(nil, i)
		require.NoError(t, err)
		out = append(out, b)
	}
	return out
}

// TestCopyThrough copies the tiles of pyramids written by the pyramid
// writer: every level's tiles are the source's bytes when its levels are
// copied; with the levels computed, the full resolution's tiles are the
// source's and the levels, computed from the decoded rows, are the
// source's too for lossless codecs (the same pixels and options give the
// same bytes) and decode to the level's size for JPEG. JPEGTables and the
// YCbCr fields come through.
func TestCopyThrough(t *testing.T) {
	gray := pyramid.ImageSpec{SizeX: 100, SizeY: 70, SizeZ: 2, PixelType: pyramid.Uint16}
	rgb := pyramid.ImageSpec{SizeX: 90, SizeY: 75, SizeT: 2, PixelType: pyramid.Uint8, SamplesPerPixel: 3}
	tests := []struct {
		name     string
		spec     pyramid.ImageSpec
		opts     pyramid.Options
		lossless bool
	}{
		{"LZW with predictor", gray, pyramid.Options{TileSize: 32, Compression: pyramid.LZW, Predictor: pyramid.PredictorHorizontal}, true},
		{"Zstd", gray, pyramid.Options{TileSize: 16, Compression: pyramid.Zstd}, true},
		{"Deflate RGB", rgb, pyramid.Options{TileSize: 32, Compression: pyramid.Deflate}, true},
		{"JPEG YCbCr", rgb, pyramid.Options{TileSize: 32, Compression: pyramid.JPEG, Quality: 80}, false},
		{"JPEG RGB-coded", rgb, pyramid.Options{TileSize: 48, Compression: pyramid.JPEG, JPEGColor: pyramid.JPEGRGB}, false},
	}
	for _, tt := range tests {
		for _, levels := range []bool{false, true} {
			name := tt.name + ", levels computed"
			if levels {
				name = tt.name + ", levels copied"
			}
			t.Run(name, func(t *testing.T) {
				src := pyramidFile(t, tt.spec, tt.opts)
				out := copyThrough(t, src, tt.opts, levels)
				require.Len(t, out.Images, 1)
				sp, op := src.Images[0].Planes, out.Images[0].Planes
				require.Len(t, op, len(sp))
				for p := range sp {
					require.Len(t, op[p].Levels, len(sp[p].Levels), "plane %d", p)
					assert.Equal(t, tiles(t, sp[p].Page), tiles(t, op[p].Page), "plane %d: full-resolution tiles", p)
					assert.Equal(t, sp[p].Page.JPEGTables(), op[p].Page.JPEGTables())
					sl, err := sp[p].Page.Layout()
					require.NoError(t, err)
					ol, err := op[p].Page.Layout()
					require.NoError(t, err)
					assert.Equal(t, sl, ol, "plane %d: layout", p)
					for k := range sp[p].Levels {
						if levels || tt.lossless {
							assert.Equal(t, tiles(t, sp[p].Levels[k]), tiles(t, op[p].Levels[k]), "plane %d level %d", p, k+1)
							continue
						}
						want, err := sp[p].Levels[k].Layout()
						require.NoError(t, err)
						got := planePixels(t, Plane{Page: op[p].Levels[k], Sample: -1})
						assert.Len(t, got, want.Width*want.Height*3, "plane %d level %d", p, k+1)
					}
				}
			})
		}
	}
}

// TestEncodedRefuses: what cannot be copied through is ErrUnsupported,
// naming it.
func TestEncodedRefuses(t *testing.T) {
	stripped, _, err := mapPages(t, Options{}, gray(40, 30))
	require.NoError(t, err)
	_, err = stripped.Images[0].Encoded(false)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "strips")

	flat := pyramidFile(t, pyramid.ImageSpec{SizeX: 40, SizeY: 30, PixelType: pyramid.Uint8}, pyramid.Options{TileSize: 16, Levels: 1})
	_, err = flat.Images[0].Encoded(false)
	assert.NoError(t, err)
	_, err = flat.Images[0].Encoded(true)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "no reduced levels")

	channels, _, err := mapPages(t, Options{}, testPage{width: 32, height: 32, samples: 2, bits: 8, tileW: 16, tileH: 16})
	require.NoError(t, err)
	_, err = channels.Images[0].Encoded(false)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "one sample of its page")

	sparse, _, err := mapPages(t, Options{}, testPage{width: 48, height: 32, samples: 1, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionLZW), sparse: []int{4}})
	require.NoError(t, err)
	_, err = sparse.Images[0].Encoded(false)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "tile 4 of level 0 of plane 0 is sparse (0 bytes)")

	// A reduced level that says its samples are signed, under unsigned
	// ones, is refused; one that says nothing is taken as the image's (as
	// libvips writes the levels of signed pyramids).
	lzw := mustCodec(tiff.CompressionLZW)
	reduced := long(tiff.TagNewSubfileType, tiff.SubfileReducedImage)
	for _, tt := range []struct {
		name        string
		full, level testPage
		says        string
	}{
		{"signed under unsigned", testPage{width: 32, height: 32, samples: 1, bits: 16, tileW: 16, tileH: 16, codec: lzw},
			testPage{width: 16, height: 16, samples: 1, bits: 16, tileW: 16, tileH: 16, codec: lzw, signed: true, more: reduced},
			"level 1 of plane 0: SampleFormat 2, the full resolution's 1"},
		{"unsaid under signed", testPage{width: 32, height: 32, samples: 1, bits: 16, tileW: 16, tileH: 16, codec: lzw, signed: true},
			testPage{width: 16, height: 16, samples: 1, bits: 16, tileW: 16, tileH: 16, codec: lzw, more: func(b *ifd.Builder) {
				reduced(b)
				b.Remove(tiff.TagSampleFormat)
			}}, ""},
	} {
		f, _, err := mapPages(t, Options{}, tt.full, tt.level)
		require.NoError(t, err, tt.name)
		require.Len(t, f.Images, 1, tt.name)
		_, err = f.Images[0].Encoded(true)
		if tt.says == "" {
			assert.NoError(t, err, tt.name)
			continue
		}
		assert.ErrorIs(t, err, ErrUnsupported, tt.name)
		assert.ErrorContains(t, err, tt.says, tt.name)
	}

	// A tile whose first bytes the writer would refuse (LZW without its
	// Clear code, which libtiff cannot read) is found before anything is
	// copied: the image is encoded again.
	lzwPage := testPage{width: 32, height: 32, samples: 1, bits: 8, tileW: 16, tileH: 16, codec: lzw}
	data, _ := fileOf(t, binary.LittleEndian, false, lzwPage)
	tf, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	b0, err := tf.Pages[0].Block(0)
	require.NoError(t, err)
	data[b0.Offset] = 0x20 // a literal first
	noClear, err := mapFile(t, data, "no-clear.tif", Options{})
	require.NoError(t, err)
	_, err = noClear.Images[0].Encoded(false)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "tile 0 of level 0 of plane 0: compress: corrupt block")

	// A reduced level cut short (which New does not check, mapping only
	// the full resolution) is not copied: its levels are computed.
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, pyramid.Options{TileSize: 16, Compression: pyramid.LZW})
	require.NoError(t, err)
	pim, err := w.AddImage(pyramid.ImageSpec{SizeX: 64, SizeY: 64})
	require.NoError(t, err)
	noise, rng := make([]byte, 64*64), rand.New(rand.NewPCG(3, 4))
	for i := range noise {
		noise[i] = byte(rng.IntN(256)) // tiles of distinct sizes: the level's byte counts are its own
	}
	require.NoError(t, pim.WritePlane(0, 0, 0, noise))
	require.NoError(t, w.Close())
	data = bytes.Clone(h.Bytes())
	tf, err = tiff.Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	counts, ok := tf.Pages[0].SubIFDs[0].Field(tiff.TagTileByteCounts)
	require.True(t, ok)
	at := bytes.Index(data, counts.Value)
	require.Positive(t, at)
	require.Equal(t, at, bytes.LastIndex(data, counts.Value), "the level's byte counts found once")
	binary.LittleEndian.PutUint32(data[at:], uint32(len(data)))
	cutLevel, err := mapFile(t, data, "cut-level.ome.tif", Options{})
	require.NoError(t, err)
	_, err = cutLevel.Images[0].Encoded(true)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "level 1 of plane 0: tiff: malformed")
	_, err = cutLevel.Images[0].Encoded(false)
	assert.NoError(t, err)

	// Planes whose pages say SampleFormat 1 and nothing, of the same
	// samples, are coded alike (tiffcp joins such files).
	said := testPage{width: 32, height: 32, samples: 1, bits: 8, tileW: 16, tileH: 16, codec: lzw}
	unsaid := said
	unsaid.more = func(b *ifd.Builder) { b.Remove(tiff.TagSampleFormat) }
	f, _, err := mapPages(t, Options{}, said, unsaid)
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	require.Len(t, f.Images[0].Planes, 2)
	_, err = f.Images[0].Encoded(false)
	assert.NoError(t, err)
}

// TestCopyUncompressedBlockSize copies an uncompressed tile stored shorter
// than its samples, which gives pyramid.ErrData and no file (it was once
// copied into one that no reader could decode), and one stored longer,
// whose samples alone are copied.
func TestCopyUncompressedBlockSize(t *testing.T) {
	for _, c := range []struct {
		name  string
		count uint64
		err   error
	}{{"short", 16, pyramid.ErrData}, {"long", 300, nil}, {"exact", 256, nil}} {
		t.Run(c.name, func(t *testing.T) {
			p := testPage{width: 16, height: 16, samples: 1, bits: 8, tileW: 16, tileH: 16,
				more: long(tiff.TagTileByteCounts, uint32(c.count))}
			file, images := fileOf(t, binary.LittleEndian, false, p)
			f, err := mapFile(t, file, "in.tif", Options{})
			require.NoError(t, err)
			im := f.Images[0]
			enc, err := im.Encoded(false)
			require.NoError(t, err)
			h := iohandle.NewMemory()
			w, err := pyramid.New(h, pyramid.Options{TileSize: 16, Compression: pyramid.None})
			require.NoError(t, err)
			defer w.Abort()
			dst, err := w.AddEncodedImage(im.Spec, enc...)
			require.NoError(t, err)
			err = im.WritePlanes(context.Background(), dst, Options{})
			if c.err != nil {
				assert.ErrorIs(t, err, c.err)
				assert.ErrorContains(t, err, "holds 16 bytes, not 256")
				return
			}
			require.NoError(t, err)
			require.NoError(t, w.Close())
			out, err := mapFile(t, h.Bytes(), "out.ome.tif", Options{})
			require.NoError(t, err)
			assert.Equal(t, [][]byte{images[0]}, tiles(t, out.Images[0].Planes[0].Page))
		})
	}
}
