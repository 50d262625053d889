package pyramid

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// largeBands are distinct bands of rows the large test cycles through, so
// that generating 4 GiB costs nothing.
func largeBands(width, rows int) [][]byte {
	bands := make([][]byte, 3)
	for b := range bands {
		bands[b] = make([]byte, width*rows)
		for i := range bands[b] {
			bands[b][i] = byte(i/width*3 + i%width/256 + b*85)
		}
	}
	return bands
}

// TestLargerThan4GiB writes an uncompressed plane a little over 4 GiB, so
// the file must be BigTIFF, and reads it back: the structure through
// google/tiff and this module's reader, and tiles past 4 GiB against the
// source. Skipped under -short; CI runs it.
func TestLargerThan4GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 4.3 GB; skipped under -short")
	}
	const width, height, band = 65536, 65600, 256 // 4.30e9 bytes, 4 GiB = 4.295e9
	bands := largeBands(width, band)
	path := filepath.Join(t.TempDir(), "large.ome.tif")
	w := createNoSync(t, path, iohandle.Options{}, Options{Compression: None, Levels: 1})
	im, err := w.AddImage(ImageSpec{Name: "large", SizeX: width, SizeY: height})
	require.NoError(t, err)
	pw, err := im.Plane(0, 0, 0)
	require.NoError(t, err)
	for y := 0; y < height; y += band {
		_, err := pw.Write(bands[y/band%len(bands)][:min(band, height-y)*width])
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())

	file, err := os.Open(path)
	require.NoError(t, err)
	defer file.Close()
	fi, err := file.Stat()
	require.NoError(t, err)
	assert.Greater(t, fi.Size(), int64(math.MaxUint32))

	own, err := tiff.Read(file, fi.Size())
	require.NoError(t, err)
	assert.True(t, own.BigTIFF)
	f, err := readback.ParseFile(file, fi.Size())
	require.NoError(t, err)
	require.True(t, f.BigTIFF)
	require.Len(t, f.IFDs, 1)
	d := f.IFDs[0]
	assert.Equal(t, uint64(width), d.Uint(tiff.TagImageWidth, 0))
	assert.Equal(t, uint64(height), d.Uint(tiff.TagImageLength, 0))
	offsets, counts := d.Uints(tiff.TagTileOffsets), d.Uints(tiff.TagTileByteCounts)
	require.Len(t, offsets, 256*257)
	assert.Greater(t, offsets[len(offsets)-1], uint64(math.MaxUint32), "tiles past 4 GiB, offsets not truncated")
	for _, i := range []int{0, len(offsets) - 300, len(offsets) - 1} {
		tile, err := f.Block(offsets[i], counts[i])
		require.NoError(t, err)
		tx, ty := i%256, i/256
		for y := range 256 {
			row := tile[y*256 : (y+1)*256]
			if sy := ty*256 + y; sy < height {
				src := bands[sy/band%len(bands)][(sy%band)*width+tx*256:][:256]
				require.True(t, bytes.Equal(src, row), "tile %d row %d", i, y)
			} else {
				require.Equal(t, make([]byte, 256), row, "padding of tile %d row %d", i, y)
			}
		}
	}
	if _, err := os.Stat("/usr/bin/tiffinfo"); err == nil || interop.Required() {
		interop.MustRun(t, "tiffinfo", path)
	}
}

// pastHandle is a handle whose output starts far into a file: it keeps
// nothing and only counts, so tests can reach 4 GiB without writing it.
type pastHandle struct {
	iohandle.Memory
	skip int64
}

func (p *pastHandle) Len() int64 { return p.Memory.Len() + p.skip }

func (p *pastHandle) Write(b []byte) (int, error) {
	if p.skip == 0 {
		return p.Memory.Write(b)
	}
	p.skip += int64(len(b))
	return len(b), nil
}

func TestBigTIFFNeverPast4GiB(t *testing.T) {
	h := &pastHandle{}
	w, err := New(h, Options{BigTIFF: BigTIFFNever, Compression: None})
	require.NoError(t, err)
	h.skip = math.MaxUint32 - 10_000
	im, err := w.AddImage(ImageSpec{SizeX: 256, SizeY: 256})
	require.NoError(t, err)
	err = im.WritePlane(0, 0, 0, make([]byte, 256*256))
	require.ErrorIs(t, err, ErrTooLarge)
	assert.ErrorIs(t, err, tiff.ErrTooLarge, "the tiff layer's sentinel too, as at Close")
	err = w.Close()
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.ErrorIs(t, err, tiff.ErrTooLarge)
}
