package compress

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// TestInteropLibtiffDecodes has libtiff itself (tiffcp -c none) decompress
// tiled files made of our encoded tiles, for every codec, predictor, sample
// type and byte order, on random tiles (which fill and reset the LZW code
// table many times) and smooth ones; tifffile decodes those it can without
// imagecodecs (none and Deflate, without the floating-point predictor). It
// runs under make interop.
func TestInteropLibtiffDecodes(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tiffcp", "tifffile")
	tiffcp, err := exec.LookPath("tiffcp")
	require.NoError(t, err)
	const side, tilesAcross = 64, 2
	r := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	for _, codec := range []Codec{noneCodec{}, lzwCodec{}, mustCodec(tiff.CompressionDeflate, 0), mustCodec(tiff.CompressionZstd, 0)} {
		for _, st := range []struct {
			name   string
			format Format
			signed bool
		}{
			{"uint8-rgb", Format{SamplesPerPixel: 3}, false},
			{"uint16", Format{BitsPerSample: 16}, false},
			{"int32", Format{BitsPerSample: 32}, true},
			{"uint64", Format{BitsPerSample: 64}, false},
			{"float32", Format{BitsPerSample: 32, Float: true}, false},
			{"float64-2", Format{BitsPerSample: 64, Float: true, SamplesPerPixel: 2}, false},
		} {
			for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
				for _, predictor := range predictorsFor(codec, st.format) {
					name := fmt.Sprintf("%s/%s/%v/predictor=%d", codecName(codec), st.name, order, predictor)
					t.Run(name, func(t *testing.T) {
						f := st.format
						f.ByteOrder = order
						l, err := f.layout()
						require.NoError(t, err)
						e := &TileEncoder{Codec: codec, Predictor: predictor, Format: f, Width: side}
						raw := make([][]byte, tilesAcross*tilesAcross)
						encoded := make([][]byte, len(raw))
						for i := range raw {
							raw[i] = make([]byte, side*side*l.pixelBytes())
							fillers[i%2*2].fill(raw[i], r) // random, smooth
							encoded[i], err = e.Encode(nil, raw[i])
							require.NoError(t, err)
						}
						in := filepath.Join(dir, "in.tif")
						out := filepath.Join(dir, "out.tif")
						file := tiledTIFF(t, order, side*tilesAcross, side, f, st.signed, codec.Compression(), predictor, encoded)
						require.NoError(t, os.WriteFile(in, file, 0o644))
						msg, err := exec.Command(tiffcp, "-c", "none", in, out).CombinedOutput()
						require.NoError(t, err, "tiffcp: %s", msg)
						require.Empty(t, string(msg), "tiffcp warnings")
						decoded, err := os.ReadFile(out)
						require.NoError(t, err)
						decodedOrder, got := tileData(t, decoded)
						require.Equal(t, len(raw), len(got))
						for i := range raw {
							want := raw[i]
							if decodedOrder != order {
								want = swapSamples(want, l.sampleBytes)
							}
							require.True(t, bytes.Equal(want, got[i]), "tile %d differs", i)
						}
						if codec.Compression() == tiff.CompressionLZW || codec.Compression() == tiff.CompressionZstd || predictor == tiff.PredictorFloatingPoint {
							return // tifffile needs imagecodecs for these
						}
						pixels := interop.RunPython(t, interop.TifffilePages, in)
						want := assemble(raw, tilesAcross, side, l.pixelBytes(), l.sampleBytes, order)
						require.True(t, pixels == string(want), "tifffile's pixels differ")
					})
				}
			}
		}
	}
}

// tiledTIFF returns a classic TIFF file in byte order o holding one square
// image of side pixels in tiles of tile pixels, already encoded, laid out
// by package tiff.
func tiledTIFF(t *testing.T, o binary.ByteOrder, side, tile int, f Format, signed bool, compression, predictor uint16, tiles [][]byte) []byte {
	t.Helper()
	spp := max(f.SamplesPerPixel, 1)
	h := iohandle.NewMemory()
	w, err := tiff.NewWriter(h, tiff.Options{ByteOrder: o, BigTIFF: tiff.BigTIFFNever})
	require.NoError(t, err)
	d := &tiff.Directory{Fields: &ifd.Builder{}, OffsetsTag: tiff.TagTileOffsets, CountsTag: tiff.TagTileByteCounts}
	for _, encoded := range tiles {
		b, err := w.WriteBlock(encoded)
		require.NoError(t, err)
		d.Blocks = append(d.Blocks, b)
	}
	sampleFormat, photometric := tiff.SampleFormatUint, tiff.PhotometricBlackIsZero
	switch {
	case f.Float:
		sampleFormat = tiff.SampleFormatFloat
	case signed:
		sampleFormat = tiff.SampleFormatInt
	}
	if spp == 3 {
		photometric = tiff.PhotometricRGB
	}
	fields := d.Fields
	fields.AddLong(tiff.TagImageWidth, uint32(side))
	fields.AddLong(tiff.TagImageLength, uint32(side))
	fields.AddShort(tiff.TagBitsPerSample, repeat(uint16(max(f.BitsPerSample, 8)), spp)...)
	fields.AddShort(tiff.TagCompression, compression)
	fields.AddShort(tiff.TagPhotometricInterpretation, photometric)
	fields.AddShort(tiff.TagSamplesPerPixel, uint16(spp))
	fields.AddShort(tiff.TagPlanarConfiguration, tiff.PlanarContig)
	if compression != tiff.CompressionNone {
		fields.AddShort(tiff.TagPredictor, max(predictor, tiff.PredictorNone))
	}
	fields.AddLong(tiff.TagTileWidth, uint32(tile))
	fields.AddLong(tiff.TagTileLength, uint32(tile))
	if spp == 2 { // gray and one unspecified extra sample
		fields.AddShort(tiff.TagExtraSamples, 0)
	}
	fields.AddShort(tiff.TagSampleFormat, repeat(sampleFormat, spp)...)
	require.NoError(t, w.AddDirectory(d))
	require.NoError(t, w.Close())
	require.NoError(t, h.Commit())
	return h.Bytes()
}

func repeat(v uint16, n int) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// tileData returns the byte order and the tiles of the first directory of
// an uncompressed TIFF file, as package tiff reads them.
func tileData(t *testing.T, file []byte) (binary.ByteOrder, [][]byte) {
	t.Helper()
	f, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	d := f.Pages[0]
	compression, _ := d.Uint(tiff.TagCompression)
	require.Equal(t, uint64(tiff.CompressionNone), compression)
	_, tiled := d.Field(tiff.TagTileOffsets)
	require.True(t, tiled, "tiffcp wrote strips")
	blocks, err := d.Blocks()
	require.NoError(t, err)
	var tiles [][]byte
	for _, b := range blocks {
		tiles = append(tiles, file[b.Offset:b.Offset+b.Size])
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if f.Order == binary.BigEndian {
		order = binary.BigEndian
	}
	return order, tiles
}

// assemble lays square tiles, across x across of side pixels, out as the
// image's rows of little-endian samples.
func assemble(tiles [][]byte, across, side, pixelBytes, sampleBytes int, order binary.ByteOrder) []byte {
	var out []byte
	rowBytes := side * pixelBytes
	for y := range across * side {
		for tx := range across {
			tile := tiles[y/side*across+tx]
			out = append(out, tile[y%side*rowBytes:][:rowBytes]...)
		}
	}
	if order == binary.BigEndian {
		out = swapSamples(out, sampleBytes)
	}
	return out
}

// swapSamples reverses the bytes of each sample of size n.
func swapSamples(b []byte, n int) []byte {
	s := bytes.Clone(b)
	for i := 0; i+n <= len(s); i += n {
		for a, z := i, i+n-1; a < z; a, z = a+1, z-1 {
			s[a], s[z] = s[z], s[a]
		}
	}
	return s
}
