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

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/tiff"
)

// TestInteropLibtiffDecodes has libtiff itself (tiffcp -c none) decompress
// tiled files made of our encoded tiles, for every codec, predictor, sample
// type and byte order, on random tiles (which fill and reset the LZW code
// table many times) and smooth ones. It runs under make interop.
func TestInteropLibtiffDecodes(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tiffcp")
	tiffcp, err := exec.LookPath("tiffcp")
	require.NoError(t, err)
	const side, tilesAcross = 64, 2
	r := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	for _, codec := range []Codec{LZW{}, &Deflate{}, &Zstd{}} {
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
				for _, predictor := range predictorsFor(st.format) {
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
						file := tiledTIFF(order.(binary.AppendByteOrder), side*tilesAcross, side, f, st.signed, codec.Compression(), predictor, encoded)
						require.NoError(t, os.WriteFile(in, file, 0o644))
						msg, err := exec.Command(tiffcp, "-c", "none", in, out).CombinedOutput()
						require.NoError(t, err, "tiffcp: %s", msg)
						require.Empty(t, string(msg), "tiffcp warnings")
						decoded, err := os.ReadFile(out)
						require.NoError(t, err)
						got := tileData(t, decoded)
						require.Equal(t, len(raw), len(got))
						for i := range raw {
							want := raw[i]
							if fileOrder(decoded) != order {
								want = swapSamples(want, l.sampleBytes)
							}
							require.True(t, bytes.Equal(want, got[i]), "tile %d differs", i)
						}
					})
				}
			}
		}
	}
}

// tiledTIFF returns a classic TIFF file in byte order o holding one square
// image of side pixels in tiles of tile pixels, already encoded.
func tiledTIFF(o binary.AppendByteOrder, side, tile int, f Format, signed bool, compression, predictor uint16, tiles [][]byte) []byte {
	spp := max(f.SamplesPerPixel, 1)
	file := []byte("II")
	if o == binary.BigEndian {
		file = []byte("MM")
	}
	file = o.AppendUint16(file, tiff.VersionClassic)
	file = o.AppendUint32(file, 0) // IFD offset, patched below
	var offsets, counts []uint32
	for _, t := range tiles {
		offsets = append(offsets, uint32(len(file)))
		counts = append(counts, uint32(len(t)))
		file = append(file, t...)
		file = append(file, make([]byte, len(file)%2)...)
	}
	sampleFormat := tiff.SampleFormatUint
	switch {
	case f.Float:
		sampleFormat = tiff.SampleFormatFloat
	case signed:
		sampleFormat = tiff.SampleFormatInt
	}
	photometric := tiff.PhotometricBlackIsZero
	if spp == 3 {
		photometric = tiff.PhotometricRGB
	}
	type entry struct {
		tag, typ uint16
		values   []uint32
	}
	const short, long = 3, 4
	repeat := func(v uint32) []uint32 { return bytes32(v, spp) }
	entries := []entry{
		{tiff.TagImageWidth, long, []uint32{uint32(side)}},
		{tiff.TagImageLength, long, []uint32{uint32(side)}},
		{tiff.TagBitsPerSample, short, repeat(uint32(max(f.BitsPerSample, 8)))},
		{tiff.TagCompression, short, []uint32{uint32(compression)}},
		{tiff.TagPhotometricInterpretation, short, []uint32{uint32(photometric)}},
		{tiff.TagSamplesPerPixel, short, []uint32{uint32(spp)}},
		{tiff.TagPlanarConfiguration, short, []uint32{uint32(tiff.PlanarContig)}},
		{tiff.TagPredictor, short, []uint32{uint32(max(predictor, 1))}},
		{tiff.TagTileWidth, long, []uint32{uint32(tile)}},
		{tiff.TagTileLength, long, []uint32{uint32(tile)}},
		{tiff.TagTileOffsets, long, offsets},
		{tiff.TagTileByteCounts, long, counts},
	}
	if spp == 2 { // gray and one unspecified extra sample
		entries = append(entries, entry{tiff.TagExtraSamples, short, []uint32{0}})
	}
	entries = append(entries, entry{tiff.TagSampleFormat, short, repeat(uint32(sampleFormat))})
	// Out-of-line values first, then the IFD.
	where := make([]uint32, len(entries))
	for i, e := range entries {
		size := 2
		if e.typ == long {
			size = 4
		}
		if len(e.values)*size <= 4 {
			continue
		}
		where[i] = uint32(len(file))
		for _, v := range e.values {
			if e.typ == long {
				file = o.AppendUint32(file, v)
			} else {
				file = o.AppendUint16(file, uint16(v))
			}
		}
	}
	o.(binary.ByteOrder).PutUint32(file[4:], uint32(len(file)))
	file = o.AppendUint16(file, uint16(len(entries)))
	for i, e := range entries {
		file = o.AppendUint16(file, e.tag)
		file = o.AppendUint16(file, e.typ)
		file = o.AppendUint32(file, uint32(len(e.values)))
		var inline [4]byte
		switch {
		case where[i] != 0:
			o.(binary.ByteOrder).PutUint32(inline[:], where[i])
		case e.typ == long:
			o.(binary.ByteOrder).PutUint32(inline[:], e.values[0])
		default:
			for k, v := range e.values {
				o.(binary.ByteOrder).PutUint16(inline[2*k:], uint16(v))
			}
		}
		file = append(file, inline[:]...)
	}
	return o.AppendUint32(file, 0)
}

func bytes32(v uint32, n int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// fileOrder returns the byte order of a TIFF file.
func fileOrder(file []byte) binary.ByteOrder {
	if string(file[:2]) == "MM" {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// tileData returns the tiles (or strips) of the first IFD of an
// uncompressed classic TIFF file.
func tileData(t *testing.T, file []byte) [][]byte {
	t.Helper()
	o := fileOrder(file)
	ifd := int(o.Uint32(file[4:]))
	values := map[uint16][]uint32{}
	n := int(o.Uint16(file[ifd:]))
	for i := range n {
		e := file[ifd+2+12*i:]
		tag, typ, count := o.Uint16(e), o.Uint16(e[2:]), int(o.Uint32(e[4:]))
		size := map[uint16]int{3: 2, 4: 4}[typ]
		if size == 0 {
			continue
		}
		data := e[8:12]
		if count*size > 4 {
			data = file[o.Uint32(e[8:]):]
		}
		for k := range count {
			if size == 2 {
				values[tag] = append(values[tag], uint32(o.Uint16(data[2*k:])))
			} else {
				values[tag] = append(values[tag], o.Uint32(data[4*k:]))
			}
		}
	}
	require.Equal(t, []uint32{uint32(tiff.CompressionNone)}, values[tiff.TagCompression])
	offsets, counts := values[tiff.TagTileOffsets], values[tiff.TagTileByteCounts]
	require.NotEmpty(t, offsets, "tiffcp wrote strips")
	var tiles [][]byte
	for i, off := range offsets {
		tiles = append(tiles, file[off:off+counts[i]])
	}
	return tiles
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
