package pyramid

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// readFile reads the structure of a file in memory.
func readFile(t testing.TB, data []byte) *tiff.File {
	t.Helper()
	f, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	return f
}

// levelsOf returns a page and its SubIFDs, largest first.
func levelsOf(p *tiff.Page) []*tiff.Page { return append([]*tiff.Page{p}, p.SubIFDs...) }

// copyPlane writes the plane of page src (and, with all, its reduced
// levels, the pages sub) through ep: a row of tiles of the full
// resolution, then the decoded rows of that row when the image computes
// its levels, as a converter does; then the tiles of the other levels.
func copyPlane(t testing.TB, ep *EncodedPlaneWriter, src *tiff.Page, sub []*tiff.Page, all bool) error {
	t.Helper()
	lay, err := src.Layout()
	require.NoError(t, err)
	decoded := decodePage(t, src, nil)
	rowBytes := len(decoded.pix) / decoded.h
	for ty := range lay.BlocksDown {
		for tx := range lay.BlocksAcross {
			tile, err := src.ReadBlock(nil, ty*lay.BlocksAcross+tx)
			require.NoError(t, err)
			if err := ep.WriteTile(0, tile); err != nil {
				return err
			}
		}
		if !all {
			y0 := ty * lay.BlockHeight
			rows := min(lay.BlockHeight, lay.Height-y0)
			if _, err := ep.Write(decoded.pix[y0*rowBytes : (y0+rows)*rowBytes]); err != nil {
				return err
			}
		}
	}
	if all {
		for l, p := range sub {
			for i := range p.NumBlocks() {
				tile, err := p.ReadBlock(nil, i)
				require.NoError(t, err)
				if err := ep.WriteTile(l+1, tile); err != nil {
					return err
				}
			}
		}
	}
	return ep.Close()
}

// copyFile copies every plane of a file written by goldenPyramid g into a
// new file: the full-resolution tiles as they are, and either every level
// (all) or the levels computed from the decoded full resolution, coded as
// coding says (nil: as the full resolution is).
func copyFile(t testing.TB, g goldenPyramid, src []byte, opts Options, coding *Coding, all bool) []byte {
	f := readFile(t, src)
	return writeMemory(t, opts, func(w *Writer) error {
		page := 0
		for _, gi := range g.images {
			var levels []EncodedLevel
			for l, p := range levelsOf(f.Pages[page]) {
				if l > 0 && !all {
					break
				}
				e, err := EncodedLevelOf(p)
				require.NoError(t, err)
				levels = append(levels, e)
			}
			spec := gi.spec
			spec.Coding = coding
			im, err := w.AddEncodedImage(spec, levels...)
			if err != nil {
				return err
			}
			for p := range gi.planes {
				z, c, tt := im.Spec().PlaneCoords(p)
				ep, err := im.EncodedPlane(z, c, tt)
				if err != nil {
					return err
				}
				if err := copyPlane(t, ep, f.Pages[page], f.Pages[page].SubIFDs, all); err != nil {
					return err
				}
				page++
			}
		}
		return nil
	})
}

// sameTiles checks that two pages hold the same tiles, byte for byte, and
// the same layout and coding: the fields Layout reads (with their
// defaults: the writer writes some a source may leave implicit, as
// SampleFormat and YCbCrSubSampling), JPEGTables, YCbCrPositioning and
// ReferenceBlackWhite.
func sameTiles(t *testing.T, want, got *tiff.Page, what string) {
	t.Helper()
	require.Equal(t, want.NumBlocks(), got.NumBlocks(), what)
	for i := range want.NumBlocks() {
		a, err := want.ReadBlock(nil, i)
		require.NoError(t, err)
		b, err := got.ReadBlock(nil, i)
		require.NoError(t, err)
		require.True(t, bytes.Equal(a, b), "%s: tile %d differs", what, i)
	}
	wl, err := want.Layout()
	require.NoError(t, err)
	gl, err := got.Layout()
	require.NoError(t, err)
	assert.Equal(t, wl, gl, "%s: layout", what)
	for _, tag := range []uint16{tiff.TagJPEGTables, tiff.TagYCbCrPositioning, tiff.TagReferenceBlackWhite} {
		a, okA := want.Field(tag)
		b, okB := got.Field(tag)
		require.Equal(t, okA, okB, "%s: %s", what, tiff.TagName(tag))
		assert.Equal(t, a.Value, b.Value, "%s: %s", what, tiff.TagName(tag))
	}
	wh, wv, err := want.YCbCrSubsampling()
	require.NoError(t, err)
	gh, gv, err := got.YCbCrSubsampling()
	require.NoError(t, err)
	assert.Equal(t, [2]int{wh, wv}, [2]int{gh, gv}, "%s: YCbCrSubSampling", what)
}

// TestEncodedFullResolution: with the full resolution given encoded, its
// tiles and coding fields are the source's, byte for byte, and the reduced
// levels are those the writer computes from the decoded rows: the same
// bytes as writing the decoded pixels as a plain image, coded as
// ImageSpec.Coding says, or without it as the source is (its codec and
// predictor, its JPEG quality and colour coding), whatever the Options'
// codec: one codec for the pyramid.
func TestEncodedFullResolution(t *testing.T) {
	sources := append(goldenPyramids()[:3], jpegPyramids()...)
	for _, g := range sources {
		seen := map[Compression]bool{}
		for _, comp := range []Compression{-1, g.opts.Compression, JPEG, LZW} {
			// The copy's Options name LZW (the zero value) and its spec
			// comp's coding; -1, no coding: the plain image is coded as the
			// source.
			opts := Options{TileSize: g.opts.TileSize, Compression: comp}
			var coding *Coding
			if comp == -1 {
				opts.Compression, opts.Quality, opts.JPEGColor = g.opts.Compression, g.opts.Quality, g.opts.JPEGColor
			} else {
				coding = &Coding{Compression: comp}
			}
			if comp == JPEG && !jpegImages(g) || seen[comp] {
				continue
			}
			seen[comp] = true
			name := fmt.Sprintf("%s to %v", g.name, comp)
			if comp == -1 {
				name = g.name + " in its codec"
			}
			t.Run(name, func(t *testing.T) {
				src := g.write(t)
				out := copyFile(t, g, src, Options{TileSize: g.opts.TileSize}, coding, false)
				in, got := readFile(t, src), readFile(t, out)
				require.Len(t, got.Pages, len(in.Pages))
				// The same planes, decoded, written as plain images: their
				// reduced levels are what the copy must hold.
				plain := writeMemory(t, opts, func(w *Writer) error {
					page := 0
					for _, gi := range g.images {
						im, err := w.AddImage(gi.spec)
						if err != nil {
							return err
						}
						for p := range gi.planes {
							decoded := decodePage(t, in.Pages[page], nil)
							z, c, tt := im.Spec().PlaneCoords(p)
							if err := im.WritePlane(z, c, tt, decoded.pix); err != nil {
								return err
							}
							page++
						}
					}
					return nil
				})
				want := readFile(t, plain)
				for i, p := range got.Pages {
					sameTiles(t, in.Pages[i], p, fmt.Sprintf("plane %d full resolution", i))
					require.Len(t, p.SubIFDs, len(want.Pages[i].SubIFDs))
					for l, s := range p.SubIFDs {
						sameTiles(t, want.Pages[i].SubIFDs[l], s, fmt.Sprintf("plane %d level %d", i, l+1))
					}
				}
			})
		}
	}
}

// TestEncodedCopyIsTheSameFile: a file whose full-resolution tiles are
// copied and whose levels are computed again, in its own codec, is the
// file copied, byte for byte: its UUID, a hash of its content, included,
// whichever way the tiles came. (A JPEG file's levels are computed from
// its decoded pixels, and so differ.)
func TestEncodedCopyIsTheSameFile(t *testing.T) {
	for _, g := range goldenPyramids()[:3] {
		t.Run(g.name, func(t *testing.T) {
			src := g.write(t)
			out := copyFile(t, g, src, g.opts, nil, false)
			assert.True(t, bytes.Equal(src, out), "%d and %d bytes", len(src), len(out))
			assert.Equal(t, uuidOf(t, src), uuidOf(t, out))
		})
	}
}

// uuidOf returns the UUID of a file's OME-XML root.
func uuidOf(t *testing.T, data []byte) string {
	t.Helper()
	d := readFile(t, data).Pages[0].Description()
	_, rest, ok := strings.Cut(d, ` UUID="`)
	require.True(t, ok, "no UUID")
	uuid, _, _ := strings.Cut(rest, `"`)
	return uuid
}

// jpegImages reports whether JPEG can encode every image of g.
func jpegImages(g goldenPyramid) bool {
	for _, im := range g.images {
		if im.spec.PixelType != Uint8 {
			return false
		}
	}
	return true
}

// TestEncodedEveryLevel: with every level given encoded, the file holds
// the source's tiles at every level, with the source's level sizes and
// coding fields.
func TestEncodedEveryLevel(t *testing.T) {
	for _, g := range append(goldenPyramids()[:3], jpegPyramids()...) {
		t.Run(g.name, func(t *testing.T) {
			src := g.write(t)
			out := copyFile(t, g, src, Options{Compression: Zstd, Levels: 1}, nil, true)
			in, got := readFile(t, src), readFile(t, out)
			require.Len(t, got.Pages, len(in.Pages))
			for i, p := range got.Pages {
				require.Len(t, p.SubIFDs, len(in.Pages[i].SubIFDs))
				for l, s := range levelsOf(p) {
					sameTiles(t, levelsOf(in.Pages[i])[l], s, fmt.Sprintf("plane %d level %d", i, l))
				}
			}
			if !isJPEG(g) {
				checkPyramid(t, out, g.expected(t))
			}
		})
	}
}

func isJPEG(g goldenPyramid) bool { return g.opts.Compression == JPEG }

// factor4Source returns a pyramid of factor 4, as Aperio lays out an SVS
// file: a 300 x 200 uint8 plane, 75 x 50 and 19 x 13 (rounded up), in
// LZW tiles of 32 x 32 with the horizontal predictor, and each level's
// tiles.
func factor4Source(t testing.TB) ([]EncodedLevel, [][][]byte) {
	sizes := [][2]int{{300, 200}, {75, 50}, {19, 13}}
	enc := &compress.TileEncoder{Codec: mustCodec(t, tiff.CompressionLZW), Predictor: tiff.PredictorHorizontal,
		Format: compress.Format{BitsPerSample: 8, SamplesPerPixel: 1}, Width: 32}
	var levels []EncodedLevel
	var tiles [][][]byte
	for l, s := range sizes {
		levels = append(levels, EncodedLevel{Width: s[0], Height: s[1],
			TileCoding: TileCoding{Compression: LZW, Predictor: PredictorHorizontal, TileWidth: 32, TileHeight: 32}})
		var lt [][]byte
		for i := range ceilDiv(s[0], 32) * ceilDiv(s[1], 32) {
			raw := smooth(32, 32, 1, Uint8, 100*l+i).pix // every tile its own bytes
			b, err := enc.Encode(nil, raw)
			require.NoError(t, err)
			lt = append(lt, b)
		}
		tiles = append(tiles, lt)
	}
	return levels, tiles
}

func mustCodec(t testing.TB, compression uint16) compress.Codec {
	c, err := compress.NewCodec(compression, 0)
	require.NoError(t, err)
	return c
}

// TestEncodedFactor4: levels of factor 4 are written as SubIFDs of their
// sizes, their tiles as given, their resolution 4 times coarser each.
func TestEncodedFactor4(t *testing.T) {
	levels, tiles := factor4Source(t)
	data := writeMemory(t, Options{}, func(w *Writer) error {
		im, err := w.AddEncodedImage(ImageSpec{SizeX: 300, SizeY: 200, PixelType: Uint8, PhysicalSizeX: 0.25, PhysicalSizeY: 0.25}, levels...)
		if err != nil {
			return err
		}
		ep, err := im.EncodedPlane(0, 0, 0)
		if err != nil {
			return err
		}
		for l, lt := range tiles {
			for _, tile := range lt {
				if err := ep.WriteTile(l, tile); err != nil {
					return err
				}
			}
		}
		return ep.Close()
	})
	f := readFile(t, data)
	require.Len(t, f.Pages, 1)
	pages := levelsOf(f.Pages[0])
	require.Len(t, pages, 3)
	for l, p := range pages {
		lay, err := p.Layout()
		require.NoError(t, err)
		assert.Equal(t, [2]int{levels[l].Width, levels[l].Height}, [2]int{lay.Width, lay.Height}, "level %d", l)
		assert.Equal(t, uint32(min(l, 1)), p.NewSubfileType(), "level %d", l)
		for i, tile := range tiles[l] {
			got, err := p.ReadBlock(nil, i)
			require.NoError(t, err)
			assert.Equal(t, tile, got, "level %d tile %d", l, i)
		}
		x, _ := p.Field(tiff.TagXResolution)
		res, err := x.Floats()
		require.NoError(t, err)
		assert.InDelta(t, 1e4/0.25/math.Pow(4, float64(l)), res[0], 1e-6, "level %d pixels per cm", l)
	}
	assert.Contains(t, inspectText(t, data), "SubIFD 0.2: 19 x 13")
}

// TestEncodedRefused: codings and sizes the writer cannot carry are
// refused when the image is added, naming what.
func TestEncodedRefused(t *testing.T) {
	rgb := ImageSpec{SizeX: 300, SizeY: 200, PixelType: Uint8, SamplesPerPixel: 3}
	gray16 := ImageSpec{SizeX: 300, SizeY: 200, PixelType: Uint16}
	lzw := TileCoding{Compression: LZW, TileWidth: 64, TileHeight: 64}
	jpeg := TileCoding{Compression: JPEG, TileWidth: 64, TileHeight: 64, Photometric: tiff.PhotometricYCbCr, JPEGTables: []byte{0xff, 0xd8, 0xff, 0xd9}}
	with := func(c TileCoding, change func(c *TileCoding)) TileCoding { change(&c); return c }
	level := func(w, h int, c TileCoding) EncodedLevel { return EncodedLevel{Width: w, Height: h, TileCoding: c} }
	cases := []struct {
		name   string
		spec   ImageSpec
		levels []EncodedLevel
		want   error
		text   string
	}{
		{"no levels", rgb, nil, ErrOption, "without levels"},
		{"size", rgb, []EncodedLevel{level(300, 201, lzw)}, ErrSize, "level 0 is 300 x 201"},
		{"tile 24", rgb, []EncodedLevel{{TileCoding: with(lzw, func(c *TileCoding) { c.TileWidth = 24 })}}, ErrOption, "tiles of 24 x 64"},
		{"compression", rgb, []EncodedLevel{{TileCoding: with(lzw, func(c *TileCoding) { c.Compression = 9 })}}, ErrOption, "compression 9"},
		{"JPEG of uint16", gray16, []EncodedLevel{{TileCoding: with(jpeg, func(c *TileCoding) { c.Photometric = 0 })}}, ErrOption, "JPEG tiles of uint16"},
		{"predictor on JPEG", rgb, []EncodedLevel{{TileCoding: with(jpeg, func(c *TileCoding) { c.Predictor = PredictorHorizontal })}}, ErrOption, "predictor"},
		{"float predictor on integers", gray16, []EncodedLevel{{TileCoding: with(lzw, func(c *TileCoding) { c.Predictor = PredictorFloatingPoint })}}, ErrOption, "predictor"},
		{"YCbCr LZW", rgb, []EncodedLevel{{TileCoding: with(lzw, func(c *TileCoding) { c.Photometric = tiff.PhotometricYCbCr })}}, ErrOption, "YCbCr tiles with compression LZW"},
		{"YCbCr gray", gray16, []EncodedLevel{{TileCoding: with(lzw, func(c *TileCoding) { c.Photometric = tiff.PhotometricYCbCr })}}, ErrOption, "photometric interpretation 6 for 1 samples"},
		{"palette", rgb, []EncodedLevel{{TileCoding: with(lzw, func(c *TileCoding) { c.Photometric = tiff.PhotometricPalette })}}, ErrOption, "photometric interpretation 3"},
		{"YCbCr fields on RGB", rgb, []EncodedLevel{{TileCoding: with(lzw, func(c *TileCoding) { c.ReferenceBlackWhite = []float64{0, 255, 128, 255, 128, 255} })}}, ErrOption, "YCbCr fields"},
		{"subsampling", rgb, []EncodedLevel{{TileCoding: with(jpeg, func(c *TileCoding) { c.YCbCrSubSampling = [2]int{1, 2} })}}, ErrOption, "YCbCrSubSampling 1 2"},
		{"reference black white", rgb, []EncodedLevel{{TileCoding: with(jpeg, func(c *TileCoding) { c.ReferenceBlackWhite = []float64{0, 255} })}}, ErrOption, "ReferenceBlackWhite of 2 values"},
		{"tables not JPEG", rgb, []EncodedLevel{{TileCoding: with(jpeg, func(c *TileCoding) { c.JPEGTables = []byte("tables") })}}, ErrOption, "not a JPEG stream"},
		{"tables on LZW", rgb, []EncodedLevel{{TileCoding: with(lzw, func(c *TileCoding) { c.JPEGTables = jpeg.JPEGTables })}}, ErrOption, "JPEGTables with compression LZW"},
		{"factor 1", rgb, []EncodedLevel{{TileCoding: lzw}, level(300, 200, lzw)}, ErrOption, "not one integer factor"},
		{"factors differ", rgb, []EncodedLevel{{TileCoding: lzw}, level(150, 100, lzw), level(25, 17, lzw)}, ErrOption, "level 2 is 25 x 17"},
		{"factor differs in Y", rgb, []EncodedLevel{{TileCoding: lzw}, level(150, 50, lzw)}, ErrOption, "level 1 is 150 x 50"},
		{"codecs differ", rgb, []EncodedLevel{{TileCoding: lzw}, level(150, 100, with(lzw, func(c *TileCoding) { c.Compression = Deflate }))}, ErrOption, "level 1 has Deflate tiles"},
		{"empty level", rgb, []EncodedLevel{{TileCoding: lzw}, level(0, 100, lzw)}, ErrSize, "level 1 is 0 x 100"},
		// 1 x 1 divided by 2, rounded up, is 1 x 1: such levels were taken,
		// a directory each per plane.
		{"a level repeated", ImageSpec{SizeX: 2, SizeY: 2}, []EncodedLevel{{TileCoding: lzw}, level(1, 1, lzw), level(1, 1, lzw)}, ErrOption,
			"encoded level 2 is 1 x 1, as level 1 is"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := New(iohandle.NewMemory(), Options{})
			require.NoError(t, err)
			defer w.Abort()
			_, err = w.AddEncodedImage(c.spec, c.levels...)
			assert.ErrorIs(t, err, c.want)
			assert.ErrorContains(t, err, c.text)
		})
	}
	for _, ok := range [][]EncodedLevel{
		{{TileCoding: lzw}},
		{{TileCoding: lzw}, level(150, 100, lzw), level(75, 50, lzw), level(38, 25, lzw)},
		{{TileCoding: lzw}, level(100, 67, lzw), level(33, 22, lzw)},
		{{TileCoding: lzw}, level(150, 100, with(lzw, func(c *TileCoding) { c.TileHeight = 32 }))},
		{{TileCoding: jpeg}, level(150, 100, jpeg)},
	} {
		w, err := New(iohandle.NewMemory(), Options{})
		require.NoError(t, err)
		_, err = w.AddEncodedImage(rgb, ok...)
		assert.NoError(t, err, "%+v", ok)
		require.NoError(t, w.Abort())
	}
}

// TestEncodedPlaneMisuse: the planes of an encoded image are written
// through EncodedPlane only, tile counts and levels are checked, and an
// incomplete plane is reported missing.
func TestEncodedPlaneMisuse(t *testing.T) {
	levels, tiles := factor4Source(t)
	spec := ImageSpec{SizeX: 300, SizeY: 200, PixelType: Uint8}
	w, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w.Abort()
	all, err := w.AddEncodedImage(spec, levels...)
	require.NoError(t, err)
	first, err := w.AddEncodedImage(spec, levels[0])
	require.NoError(t, err)
	plain, err := w.AddImage(spec)
	require.NoError(t, err)

	_, err = all.Plane(0, 0, 0)
	assert.ErrorIs(t, err, ErrPlane)
	assert.ErrorIs(t, all.WritePlane(0, 0, 0, make([]byte, 300*200)), ErrPlane)
	assert.ErrorIs(t, all.ReadPlanes(bytes.NewReader(make([]byte, 300*200))), ErrPlane)
	_, err = plain.EncodedPlane(0, 0, 0)
	assert.ErrorIs(t, err, ErrPlane)
	_, err = all.EncodedPlane(0, 1, 0)
	assert.ErrorIs(t, err, ErrPlane)

	assert.Equal(t, [4]int{3, 3, 1, 0}, [4]int{all.Levels(), all.EncodedLevels(), first.EncodedLevels(), plain.EncodedLevels()})
	assert.Equal(t, plain.Levels(), first.Levels(), "levels computed as for AddImage")
	ep, err := all.EncodedPlane(0, 0, 0)
	require.NoError(t, err)
	_, err = all.EncodedPlane(0, 0, 0)
	assert.ErrorIs(t, err, ErrPlane, "twice")
	// Started or not, the plane takes encoded tiles: that is the reason.
	assert.ErrorContains(t, all.WritePlane(0, 0, 0, make([]byte, 300*200)), "plane z=0 c=0 t=0 of image 0: its tiles are given encoded (EncodedPlane)")
	assert.ErrorIs(t, ep.WriteTile(3, tiles[0][0]), ErrData, "no level 3")
	assert.ErrorIs(t, ep.WriteTile(-1, tiles[0][0]), ErrData)
	assert.ErrorIs(t, ep.WriteTile(0, nil), ErrData, "empty tile")
	err = ep.WriteTile(0, []byte{0x80, 0})
	assert.ErrorIs(t, err, ErrData, "an LZW tile cut short")
	assert.ErrorIs(t, err, compress.ErrCorrupt)
	assert.ErrorContains(t, err, "tile 0 of level 0: compress: corrupt block: 2 bytes starting 80 00: too short for an LZW stream")
	_, err = ep.Write(make([]byte, 300))
	assert.ErrorIs(t, err, ErrData, "rows of an image that takes none")
	for _, tile := range tiles[2] {
		require.NoError(t, ep.WriteTile(2, tile))
	}
	assert.ErrorIs(t, ep.WriteTile(2, tiles[2][0]), ErrData, "a tile past the last")
	assert.ErrorIs(t, ep.Close(), ErrData, "incomplete")

	fp, err := first.EncodedPlane(0, 0, 0)
	require.NoError(t, err)
	assert.ErrorIs(t, fp.WriteTile(1, tiles[1][0]), ErrData, "level 1 is computed")
	require.NoError(t, fp.WriteTile(0, tiles[0][0]))
	assert.ErrorIs(t, fp.Close(), ErrData)

	err = w.Close()
	assert.ErrorIs(t, err, ErrMissingPlanes)
	assert.ErrorContains(t, err, "image 0 z=0 c=0 t=0 (started, not complete), image 1 z=0 c=0 t=0 (started, not complete), image 2 z=0 c=0 t=0")
}

// TestEncodedJPEGTileChecked: a JPEG tile given encoded is checked from
// its headers (compress.CheckJPEGTile): a frame of another size than the
// tile, or more scans than a decoder takes, is ErrData, where copying it
// would make a file readers refuse or take minutes over; the tile as
// written goes in.
func TestEncodedJPEGTileChecked(t *testing.T) {
	g := jpegPyramids()[0]
	page := readFile(t, g.write(t)).Pages[0]
	level, err := EncodedLevelOf(page)
	require.NoError(t, err)
	tile, err := page.ReadBlock(nil, 0)
	require.NoError(t, err)
	larger := bytes.Clone(tile)
	sof := bytes.Index(larger, []byte{0xff, 0xc0})
	require.Positive(t, sof)
	binary.BigEndian.PutUint16(larger[sof+5:], 65500) // its height
	sos := tile[bytes.Index(tile, []byte{0xff, 0xda}):]
	sos = sos[:2+int(binary.BigEndian.Uint16(sos[2:]))]
	scans := append(bytes.Clone(tile[:len(tile)-2]), append(bytes.Repeat(append(bytes.Clone(sos), 0), 600), 0xff, 0xd9)...)

	w, err := New(iohandle.NewMemory(), Options{TileSize: g.opts.TileSize})
	require.NoError(t, err)
	defer w.Abort()
	im, err := w.AddEncodedImage(g.images[0].spec, level)
	require.NoError(t, err)
	ep, err := im.EncodedPlane(0, 0, 0)
	require.NoError(t, err)
	err = ep.WriteTile(0, larger)
	assert.ErrorIs(t, err, ErrData)
	assert.ErrorContains(t, err, "tile 0 of level 0: compress: corrupt block: JPEG frame of 32 x 65500 in a tile of 32 x 32")
	err = ep.WriteTile(0, scans)
	assert.ErrorIs(t, err, ErrData)
	assert.ErrorContains(t, err, "JPEG: more than 500 scans of a 32 x 32 frame")
	assert.NoError(t, ep.WriteTile(0, tile))
}

// TestEncodedUncompressedTileSize: an uncompressed tile given encoded
// holds exactly its tile's samples; a short one (a source's block cut
// short, which copy-through once carried into the file) or a long one is
// ErrData, and the right one goes in.
func TestEncodedUncompressedTileSize(t *testing.T) {
	spec := ImageSpec{SizeX: 20, SizeY: 10, SamplesPerPixel: 3, PixelType: Uint16}
	level := EncodedLevel{TileCoding: TileCoding{Compression: None, TileWidth: 32, TileHeight: 16}}
	w, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w.Abort()
	im, err := w.AddEncodedImage(spec, level)
	require.NoError(t, err)
	ep, err := im.EncodedPlane(0, 0, 0)
	require.NoError(t, err)
	const want = 32 * 16 * 3 * 2
	for _, n := range []int{16, want - 1, want + 1} {
		err := ep.WriteTile(0, make([]byte, n))
		assert.ErrorIs(t, err, ErrData, "%d bytes", n)
		assert.ErrorContains(t, err, fmt.Sprintf("holds %d bytes, not %d", n, want))
	}
	require.NoError(t, ep.WriteTile(0, make([]byte, want)))
	require.NoError(t, ep.Close())
	require.NoError(t, w.Close())
}

// TestEncodedPlaneComplete: a plane is complete once its tiles and its
// rows are all written, in either order.
func TestEncodedPlaneComplete(t *testing.T) {
	g := goldenPyramids()[0]
	src := readFile(t, g.write(t))
	for _, rowsFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("rows first %v", rowsFirst), func(t *testing.T) {
			data := writeMemory(t, g.opts, func(w *Writer) error {
				e, err := EncodedLevelOf(src.Pages[0])
				require.NoError(t, err)
				im, err := w.AddEncodedImage(g.images[0].spec, e)
				require.NoError(t, err)
				ep, err := im.EncodedPlane(0, 0, 0)
				require.NoError(t, err)
				decoded := decodePage(t, src.Pages[0], nil)
				write := func() error { _, err := ep.Write(decoded.pix); return err }
				tiles := func() error {
					for i := range src.Pages[0].NumBlocks() {
						tile, err := src.Pages[0].ReadBlock(nil, i)
						require.NoError(t, err)
						if err := ep.WriteTile(0, tile); err != nil {
							return err
						}
					}
					return nil
				}
				steps := []func() error{tiles, write}
				if rowsFirst {
					steps = []func() error{write, tiles}
				}
				require.NoError(t, steps[0]())
				assert.ErrorIs(t, ep.Close(), ErrData, "half written")
				require.NoError(t, steps[1]())
				return ep.Close()
			})
			checkPyramid(t, data, g.expected(t))
		})
	}
}

// TestEncodedPlaneAbort: a plane given back (EncodedPlaneWriter.Abort)
// after some of its tiles, some of its rows, or all its rows and some
// tiles takes nothing more, and the plane written again from its start
// gives the file a plain copy gives; a complete plane is not given back.
func TestEncodedPlaneAbort(t *testing.T) {
	g := goldenPyramids()[0]
	src := readFile(t, g.write(t))
	page := src.Pages[0]
	clean := copyFile(t, g, g.write(t), g.opts, nil, false)
	decoded := decodePage(t, page, nil)
	for _, tc := range []struct {
		name        string
		tiles, rows int // given before Abort
	}{{"some tiles", 2, 0}, {"some rows", 0, 3}, {"every row and some tiles", 1, decoded.h}} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, workers %d", tc.name, workers), func(t *testing.T) {
				opts := g.opts
				opts.Workers = workers
				data := writeMemory(t, opts, func(w *Writer) error {
					e, err := EncodedLevelOf(page)
					require.NoError(t, err)
					im, err := w.AddEncodedImage(g.images[0].spec, e)
					require.NoError(t, err)
					ep, err := im.EncodedPlane(0, 0, 0)
					require.NoError(t, err)
					for i := range tc.tiles {
						tile, err := page.ReadBlock(nil, i)
						require.NoError(t, err)
						require.NoError(t, ep.WriteTile(0, tile))
					}
					rowBytes := len(decoded.pix) / decoded.h
					_, err = ep.Write(decoded.pix[:tc.rows*rowBytes])
					require.NoError(t, err)
					require.NoError(t, ep.Abort())
					tile, err := page.ReadBlock(nil, 0)
					require.NoError(t, err)
					assert.ErrorIs(t, ep.WriteTile(0, tile), ErrPlane)
					_, err = ep.Write(decoded.pix[:rowBytes])
					assert.ErrorIs(t, err, ErrPlane)
					err = ep.Close()
					assert.ErrorIs(t, err, ErrPlane)
					assert.ErrorContains(t, err, "given back (by EncodedPlaneWriter.Abort")
					assert.NoError(t, ep.Abort(), "again: nothing to do")

					again, err := im.EncodedPlane(0, 0, 0)
					require.NoError(t, err)
					require.NoError(t, copyPlane(t, again, page, nil, false))
					assert.ErrorIs(t, again.Abort(), ErrPlane, "a complete plane is not given back")
					return nil
				})
				compareFiles(t, clean, data, true)
				checkPyramid(t, data, g.expected(t))
			})
		}
	}
}

// TestEncodedByteIdenticalAtAnyWorkers: a copy is the same file at every
// Workers value.
func TestEncodedByteIdenticalAtAnyWorkers(t *testing.T) {
	g := jpegPyramids()[0]
	src := g.write(t)
	var files [][]byte
	for _, workers := range []int{1, 2, 8} {
		files = append(files, copyFile(t, g, src, Options{TileSize: 32, Compression: JPEG, Workers: workers}, nil, false))
	}
	assert.True(t, bytes.Equal(files[0], files[1]), "workers 1 and 2")
	assert.True(t, bytes.Equal(files[0], files[2]), "workers 1 and 8")
}

// TestEncodedLevelOf: the coding of a page is read as the page has it,
// and pages the writer cannot copy are refused naming why.
func TestEncodedLevelOf(t *testing.T) {
	g := jpegPyramids()[0]
	f := readFile(t, g.write(t))
	e, err := EncodedLevelOf(f.Pages[0])
	require.NoError(t, err)
	j, err := compress.NewJPEG(compress.Format{BitsPerSample: 8, SamplesPerPixel: 3}, 32, compress.JPEGOptions{})
	require.NoError(t, err)
	assert.Equal(t, EncodedLevel{Width: 150, Height: 100, TileCoding: TileCoding{Compression: JPEG, Predictor: PredictorNone, TileWidth: 32, TileHeight: 32,
		JPEGTables: j.Tables(), Photometric: tiff.PhotometricYCbCr, YCbCrSubSampling: [2]int{2, 2}, ReferenceBlackWhite: []float64{0, 255, 128, 255, 128, 255}},
		stored: storedSamples{bits: 8, samples: 3, format: tiff.SampleFormatUint}}, e)

	page := func(build func(b *ifd.Builder), order binary.ByteOrder) *tiff.Page {
		b := &ifd.Builder{}
		b.AddUint(tiff.TagImageWidth, 64)
		b.AddUint(tiff.TagImageLength, 64)
		b.AddShort(tiff.TagBitsPerSample, 8)
		build(b)
		h := iohandle.NewMemory()
		tw, err := tiff.NewWriter(h, tiff.Options{ByteOrder: order})
		require.NoError(t, err)
		blk, err := tw.WriteBlock(make([]byte, 64*64))
		require.NoError(t, err)
		if _, ok := b.Get(tiff.TagTileWidth); ok {
			require.NoError(t, tw.AddDirectory(&tiff.Directory{Fields: b, Blocks: []tiff.Block{blk}, OffsetsTag: tiff.TagTileOffsets, CountsTag: tiff.TagTileByteCounts}))
		} else {
			require.NoError(t, tw.AddDirectory(&tiff.Directory{Fields: b, Blocks: []tiff.Block{blk}, OffsetsTag: tiff.TagStripOffsets, CountsTag: tiff.TagStripByteCounts}))
		}
		require.NoError(t, tw.Close())
		require.NoError(t, h.Commit())
		return readFile(t, h.Bytes()).Pages[0]
	}
	tiles := func(w, h uint64) func(b *ifd.Builder) {
		return func(b *ifd.Builder) { b.AddUint(tiff.TagTileWidth, w); b.AddUint(tiff.TagTileLength, h) }
	}
	bits16 := func(b *ifd.Builder) {
		tiles(64, 64)(b)
		b.Remove(tiff.TagBitsPerSample)
		b.AddShort(tiff.TagBitsPerSample, 16)
	}
	cases := []struct {
		name  string
		build func(b *ifd.Builder)
		text  string
		order binary.ByteOrder
	}{
		{"strips", func(b *ifd.Builder) {}, "strips", nil},
		{"tiles", tiles(64, 64), "", nil},
		{"tiles of 72", tiles(72, 72), "tiles of 72 x 72", nil},
		{"packbits", func(b *ifd.Builder) { tiles(64, 64)(b); b.AddShort(tiff.TagCompression, tiff.CompressionPackBits) }, "compression 32773 (PackBits)", nil},
		{"white is zero", func(b *ifd.Builder) { tiles(64, 64)(b); b.AddShort(tiff.TagPhotometricInterpretation, 0) }, "photometric interpretation 0", nil},
		{"predictor 9", func(b *ifd.Builder) { tiles(64, 64)(b); b.AddShort(tiff.TagPredictor, 9) }, "predictor 9", nil},
		{"big-endian bytes", tiles(64, 64), "", binary.BigEndian},
		{"big-endian 16-bit samples", bits16, "big-endian samples of 16 bits", binary.BigEndian},
		{"little-endian 16-bit samples", bits16, "", binary.LittleEndian},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			order := c.order
			if order == nil {
				order = binary.LittleEndian
			}
			_, err := EncodedLevelOf(page(c.build, order))
			if c.text == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrOption)
			assert.ErrorContains(t, err, c.text)
		})
	}

	// The level remembers the page's samples, which the image's spec must
	// have: a spec that leaves PixelType out (Uint8) for 16-bit tiles
	// would make a file every reader decodes wrong. A page without
	// SampleFormat (libvips's levels of signed pyramids) goes with any
	// type of its size.
	unsigned16 := func(b *ifd.Builder) { bits16(b); b.AddShort(tiff.TagSampleFormat, tiff.SampleFormatUint) }
	for _, c := range []struct {
		name  string
		build func(b *ifd.Builder)
		spec  ImageSpec
		text  string
	}{
		{"16 bits, the spec's 8", unsigned16, ImageSpec{}, "encoded level 0: its page has 1 sample of 16 bits, SampleFormat 1; the image's spec 1 of uint8"},
		{"16 bits, the spec's 16", unsigned16, ImageSpec{PixelType: Uint16}, ""},
		{"16 bits unsigned, the spec's signed", unsigned16, ImageSpec{PixelType: Int16}, "SampleFormat 1; the image's spec 1 of int16"},
		{"16 bits of no format, the spec's signed", bits16, ImageSpec{PixelType: Int16}, ""},
		{"16 bits of no format, the spec's 8", bits16, ImageSpec{}, "its page has 1 sample of 16 bits; the image's spec 1 of uint8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := EncodedLevelOf(page(c.build, binary.LittleEndian))
			require.NoError(t, err)
			c.spec.SizeX, c.spec.SizeY = 64, 64
			err = CheckEncodedLevels(c.spec, e)
			w, werr := New(iohandle.NewMemory(), Options{})
			require.NoError(t, werr)
			defer w.Abort()
			_, addErr := w.AddEncodedImage(c.spec, e)
			if c.text == "" {
				assert.NoError(t, err)
				assert.NoError(t, addErr)
				return
			}
			assert.ErrorIs(t, err, ErrOption)
			assert.ErrorContains(t, err, c.text)
			assert.ErrorIs(t, addErr, ErrOption)
			assert.ErrorContains(t, addErr, c.text)
		})
	}
}

// TestCheckEncodedLevels: levels given encoded must form an OME pyramid,
// checked before anything is added, as AddEncodedImage checks them.
func TestCheckEncodedLevels(t *testing.T) {
	level := func(w, h int, c Compression) EncodedLevel {
		return EncodedLevel{Width: w, Height: h, TileCoding: TileCoding{Compression: c, TileWidth: 16, TileHeight: 16}}
	}
	tests := []struct {
		name   string
		levels []EncodedLevel
		err    string
	}{
		{"one level", []EncodedLevel{level(100, 70, LZW)}, ""},
		{"halves rounded up", []EncodedLevel{level(101, 71, LZW), level(51, 36, LZW), level(26, 18, LZW)}, ""},
		{"quarters rounded down (Aperio)", []EncodedLevel{level(24576, 16384, JPEG), level(6144, 4096, JPEG), level(1536, 1024, JPEG)}, ""},
		{"factors differ", []EncodedLevel{level(1024, 1024, LZW), level(512, 512, LZW), level(128, 128, LZW)}, "factor"},
		{"not the same in Y", []EncodedLevel{level(1024, 1024, LZW), level(512, 256, LZW)}, "factor"},
		{"no reduction", []EncodedLevel{level(64, 64, LZW), level(64, 64, LZW)}, "factor"},
		{"another compression", []EncodedLevel{level(64, 64, JPEG), level(32, 32, LZW)}, "level 1 has"},
		{"a predictor on JPEG", []EncodedLevel{{Width: 64, Height: 64, TileCoding: TileCoding{Compression: JPEG, Predictor: PredictorHorizontal, TileWidth: 16, TileHeight: 16}}}, "level 0"},
		// The one level's tile size is the computed levels': checked first.
		{"a tile size forgotten", []EncodedLevel{{Width: 100, Height: 50, TileCoding: TileCoding{Compression: None}}},
			"pyramid: bad option: encoded level 0: tile coding: tiles of 0 x 0 pixels"},
		{"a negative tile width", []EncodedLevel{{Width: 100, Height: 50, TileCoding: TileCoding{Compression: None, TileWidth: -16, TileHeight: 16}}},
			"pyramid: bad option: encoded level 0: tile coding: tiles of -16 x 16 pixels"},
		{"a tile size of another level", []EncodedLevel{level(64, 64, LZW), {Width: 32, Height: 32, TileCoding: TileCoding{Compression: LZW, TileWidth: 40, TileHeight: 40}}},
			"pyramid: bad option: encoded level 1: tile coding: tiles of 40 x 40 pixels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := ImageSpec{SizeX: tt.levels[0].Width, SizeY: tt.levels[0].Height, SamplesPerPixel: 3}
			err := CheckEncodedLevels(spec, tt.levels...)
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrOption)
			assert.ErrorContains(t, err, tt.err)
			requireOnePrefix(t, err)
		})
	}
}

// TestEncodedInUncompressedWriter: a writer of uncompressed tiles, which
// encodes none, refuses a compressed full resolution whose levels it
// would compute (stored uncompressed, a pyramid of two codecs); one with
// no levels to compute, or uncompressed, it takes.
func TestEncodedInUncompressedWriter(t *testing.T) {
	spec := ImageSpec{SizeX: 100, SizeY: 70, SamplesPerPixel: 3}
	level := func(c Compression) EncodedLevel {
		return EncodedLevel{Width: 100, Height: 70, TileCoding: TileCoding{Compression: c, TileWidth: 32, TileHeight: 32}}
	}
	for _, tt := range []struct {
		name   string
		levels int
		c      Compression
		err    bool
	}{
		{"JPEG, levels computed", 0, JPEG, true},
		{"LZW, levels computed", 0, LZW, true},
		{"JPEG, no levels", 1, JPEG, false},
		{"uncompressed, levels computed", 0, None, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := New(iohandle.NewMemory(), Options{Compression: None, TileSize: 32, Levels: tt.levels})
			require.NoError(t, err)
			defer w.Abort()
			_, err = w.AddEncodedImage(spec, level(tt.c))
			if !tt.err {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrOption)
			assert.ErrorContains(t, err, "a writer of uncompressed tiles (Options.Compression None)")
			requireOnePrefix(t, err)
		})
	}
}

// copyWithCoding copies a one-plane file's full resolution through
// AddEncodedImage with the TileCoding edit makes of EncodedLevelOf's, and
// returns the copy's pages (full resolution and computed levels).
func copyWithCoding(t *testing.T, spec ImageSpec, src []byte, edit func(*EncodedLevel)) []*tiff.Page {
	f := readFile(t, src)
	out := writeMemory(t, Options{TileSize: 32}, func(w *Writer) error {
		e, err := EncodedLevelOf(f.Pages[0])
		require.NoError(t, err)
		edit(&e)
		im, err := w.AddEncodedImage(spec, e)
		require.NoError(t, err)
		ep, err := im.EncodedPlane(0, 0, 0)
		require.NoError(t, err)
		return copyPlane(t, ep, f.Pages[0], nil, false)
	})
	return levelsOf(readFile(t, out).Pages[0])
}

// TestEncodedCodingZeroValues: the levels computed below a full
// resolution whose TileCoding leaves a field zero read it as TileCoding
// means it: Predictor zero is none (not Coding's zero value, horizontal
// for integers), Photometric zero with three samples is RGB (RGB-coded
// JPEG tiles give RGB-coded levels, not YCbCr).
func TestEncodedCodingZeroValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  ImageSpec
		opts  Options
		edit  func(*EncodedLevel)
		field func(tiff.Layout) uint16
		want  uint16
	}{
		{"predictor", ImageSpec{SizeX: 128, SizeY: 128, PixelType: Uint16}, Options{Compression: Deflate, Predictor: PredictorNone},
			func(e *EncodedLevel) { e.Predictor = PredictorAuto }, func(l tiff.Layout) uint16 { return l.Predictor }, tiff.PredictorNone},
		{"photometric", ImageSpec{SizeX: 128, SizeY: 128, PixelType: Uint8, SamplesPerPixel: 3}, Options{Compression: JPEG, JPEGColor: JPEGRGB},
			func(e *EncodedLevel) { e.Photometric = 0 }, func(l tiff.Layout) uint16 { return l.Photometric }, tiff.PhotometricRGB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pix := make([]byte, tc.spec.SizeX*tc.spec.SizeY*tc.spec.pixelBytes())
			for i := range pix {
				pix[i] = byte(i * 7)
			}
			tc.opts.TileSize, tc.opts.Levels = 32, 1
			src := writeMemory(t, tc.opts, func(w *Writer) error {
				im, err := w.AddImage(tc.spec)
				require.NoError(t, err)
				return im.WritePlane(0, 0, 0, pix)
			})
			pages := copyWithCoding(t, tc.spec, src, tc.edit)
			require.Greater(t, len(pages), 1)
			for i, p := range pages {
				l, err := p.Layout()
				require.NoError(t, err)
				assert.Equal(t, tc.want, tc.field(l), "level %d", i)
			}
		})
	}
}

// TestEncodedLevelGetter: EncodedLevel returns each level given encoded as
// it was given, a copy the caller may change; another level is ErrOption,
// a zero Image's ErrClosed.
func TestEncodedLevelGetter(t *testing.T) {
	w, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w.Abort()
	coding := TileCoding{Compression: Deflate, Predictor: PredictorHorizontal, TileWidth: 32, TileHeight: 16}
	given := []EncodedLevel{{TileCoding: coding}, {Width: 32, Height: 20, TileCoding: coding}}
	im, err := w.AddEncodedImage(ImageSpec{SizeX: 64, SizeY: 40}, given...)
	require.NoError(t, err)
	for l, want := range given {
		got, err := im.EncodedLevel(l)
		require.NoError(t, err)
		assert.Equal(t, want.TileCoding, got.TileCoding, "level %d", l)
		assert.Equal(t, [2]int{want.Width, want.Height}, [2]int{got.Width, got.Height}, "level %d", l)
	}
	_, err = im.EncodedLevel(2)
	assert.ErrorIs(t, err, ErrOption)
	plain, err := w.AddImage(ImageSpec{SizeX: 8, SizeY: 8})
	require.NoError(t, err)
	_, err = plain.EncodedLevel(0)
	assert.ErrorIs(t, err, ErrOption, "an image added otherwise")
	_, err = (&Image{}).EncodedLevel(0)
	assert.ErrorIs(t, err, ErrClosed)

	jpegTables := []byte{0xff, 0xd8, 0xff, 0xd9}
	w2, err := New(iohandle.NewMemory(), Options{})
	require.NoError(t, err)
	defer w2.Abort()
	rgb, err := w2.AddEncodedImage(ImageSpec{SizeX: 64, SizeY: 64, SamplesPerPixel: 3},
		EncodedLevel{TileCoding: TileCoding{Compression: JPEG, TileWidth: 64, TileHeight: 64, Photometric: tiff.PhotometricYCbCr, JPEGTables: jpegTables}})
	require.NoError(t, err)
	jpegTables[2] = 0 // the caller's slice, changed after: the image kept its own
	got, err := rgb.EncodedLevel(0)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xff, 0xd8, 0xff, 0xd9}, got.JPEGTables)
	got.JPEGTables[0] = 0
	again, err := rgb.EncodedLevel(0)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xff, 0xd8, 0xff, 0xd9}, again.JPEGTables, "a copy")
}

// TestEncodedQualityOfOwnTables: JPEG tiles that hold their own tables
// (no JPEGTables field, as some writers store them) give the levels the
// writer computes their quality, read from the first tile by
// EncodedLevelOf, not Options.Quality (75 by default).
func TestEncodedQualityOfOwnTables(t *testing.T) {
	const size, side = 64, 32
	h := iohandle.NewMemory()
	tw, err := tiff.NewWriter(h, tiff.Options{})
	require.NoError(t, err)
	var blocks []tiff.Block
	for ty := 0; ty < size; ty += side {
		for tx := 0; tx < size; tx += side {
			m := image.NewGray(image.Rect(0, 0, side, side))
			for i := range m.Pix {
				m.Pix[i] = byte((tx+i%side)*3 + ty + i/side)
			}
			var stream bytes.Buffer
			require.NoError(t, jpeg.Encode(&stream, m, &jpeg.Options{Quality: 50}))
			blk, err := tw.WriteBlock(stream.Bytes())
			require.NoError(t, err)
			blocks = append(blocks, blk)
		}
	}
	b := &ifd.Builder{}
	b.AddUint(tiff.TagImageWidth, size)
	b.AddUint(tiff.TagImageLength, size)
	b.AddShort(tiff.TagBitsPerSample, 8)
	b.AddShort(tiff.TagCompression, tiff.CompressionJPEG)
	b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricBlackIsZero)
	b.AddUint(tiff.TagTileWidth, side)
	b.AddUint(tiff.TagTileLength, side)
	require.NoError(t, tw.AddDirectory(&tiff.Directory{Fields: b, Blocks: blocks, OffsetsTag: tiff.TagTileOffsets, CountsTag: tiff.TagTileByteCounts}))
	require.NoError(t, tw.Close())
	require.NoError(t, h.Commit())
	src := readFile(t, h.Bytes()).Pages[0]

	e, err := EncodedLevelOf(src)
	require.NoError(t, err)
	require.Empty(t, e.JPEGTables)
	out := writeMemory(t, Options{TileSize: side}, func(w *Writer) error {
		im, err := w.AddEncodedImage(ImageSpec{SizeX: size, SizeY: size, PixelType: Uint8}, e)
		if err != nil {
			return err
		}
		ep, err := im.EncodedPlane(0, 0, 0)
		if err != nil {
			return err
		}
		return copyPlane(t, ep, src, nil, false)
	})
	got := readFile(t, out).Pages[0]
	require.NotEmpty(t, got.SubIFDs)
	q, _, err := compress.JPEGQuality(got.SubIFDs[0].JPEGTables())
	require.NoError(t, err)
	assert.Equal(t, 50, q, "the computed level's quality")
}
