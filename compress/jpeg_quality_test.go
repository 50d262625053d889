package compress

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/tiff"
)

// TestJPEGQuality: the quality of every table this package makes reads
// back exactly, from its JPEGTables and from a whole stream; streams
// without a table 0 are ErrCorrupt.
func TestJPEGQuality(t *testing.T) {
	for _, samples := range []int{1, 3} {
		for q := 1; q <= 100; q++ {
			j, err := NewJPEG(Format{SamplesPerPixel: samples}, 16, JPEGOptions{Quality: q})
			require.NoError(t, err)
			got, exact, err := JPEGQuality(j.Tables())
			require.NoError(t, err)
			assert.True(t, exact, "quality %d", q)
			// Near 100 some qualities share a table: any of them is right.
			again, err := NewJPEG(Format{SamplesPerPixel: samples}, 16, JPEGOptions{Quality: got})
			require.NoError(t, err)
			assert.Equal(t, j.Tables(), again.Tables(), "quality %d read as %d", q, got)
		}
	}
	j, err := NewJPEG(Format{SamplesPerPixel: 3}, 16, JPEGOptions{Quality: 70})
	require.NoError(t, err)
	tile, err := j.Encode(nil, make([]byte, 16*16*3))
	require.NoError(t, err)
	whole := spliceJPEG(t, j.Tables(), tile)
	q, exact, err := JPEGQuality(whole)
	require.NoError(t, err)
	assert.Equal(t, [2]any{70, true}, [2]any{q, exact}, "a stream with its tables")

	tables := j.Tables()
	values := bytes.Repeat([]byte{9}, 64)
	dqt := func(n int, values []byte) []byte {
		return append([]byte{0xff, 0xdb, byte(n >> 8), byte(n), 0}, values...)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	soi, eoi := []byte{0xff, 0xd8}, []byte{0xff, 0xd9}
	_, _, err = JPEGQuality(cat(soi, dqt(67, values), eoi))
	require.NoError(t, err, "a DQT of its own")
	for name, bad := range map[string][]byte{
		"empty":                          nil,
		"no SOI":                         tables[2:],
		"abbreviated tile":               tile,
		"cut short":                      tables[:30],
		"tables without a DQT":           append([]byte{0xff, 0xd8}, tables[bytes.Index(tables, []byte{0xff, 0xc4}):]...),
		"16-bit table 0":                 append([]byte{0xff, 0xd8, 0xff, 0xdb, 0, 131, 0x10}, make([]byte, 128)...),
		"a DQT one value short":          cat(soi, dqt(66, values[:63]), eoi),
		"a DQT one byte past the stream": cat(soi, dqt(67, values[:63])),
		"a scan before the tables":       cat(soi, []byte{0xff, 0xda, 0, 8, 1, 1, 0, 0, 63, 0}, dqt(67, values), eoi),
	} {
		_, _, err := JPEGQuality(bad)
		assert.ErrorIs(t, err, ErrCorrupt, name)
		if name == "16-bit table 0" {
			assert.ErrorContains(t, err, "16-bit", "refused for its precision, not cut short")
		}
	}
	// A table of its own making: the nearest quality, not exact.
	custom := bytes.Clone(tables)
	custom[bytes.Index(custom, []byte{0xff, 0xdb})+5+10]++
	q, exact, err = JPEGQuality(custom)
	require.NoError(t, err)
	assert.Equal(t, [2]any{70, false}, [2]any{q, exact})
}

// TestJPEGQualityTie: a table as near the tables of two qualities, q and
// q+1, and nearer them than any other's, reads as the lower, not exact.
func TestJPEGQualityTie(t *testing.T) {
	diff := func(a, b [64]int32) (d int) {
		for k := range a {
			d += int(max(a[k]-b[k], b[k]-a[k]))
		}
		return d
	}
	for _, q := range []int{38, 64, 71, 92} {
		lower, upper := newJPEGQuant(&jpegLumaQuant, q).value, newJPEGQuant(&jpegLumaQuant, q+1).value
		table := lower // the lower quality's values, then the upper's until halfway
		for k := 0; k < 64 && diff(table, lower) < diff(table, upper); k++ {
			table[k] = upper[k]
		}
		require.Equal(t, diff(table, lower), diff(table, upper), "a tie between %d and %d", q, q+1)
		stream := []byte{0xff, 0xd8, 0xff, 0xdb, 0, 67, 0}
		for k := range 64 {
			stream = append(stream, byte(table[jpegZigzag[k]]))
		}
		got, exact, err := JPEGQuality(append(stream, 0xff, 0xd9))
		require.NoError(t, err)
		assert.Equal(t, [2]any{q, false}, [2]any{got, exact}, "a tie between %d and %d", q, q+1)
	}
}

// FuzzJPEGQuality reads any bytes as a stream's tables: a quality from 1
// to 100, or ErrCorrupt.
func FuzzJPEGQuality(f *testing.F) {
	j, err := NewJPEG(Format{SamplesPerPixel: 3}, 16, JPEGOptions{Quality: 42})
	require.NoError(f, err)
	f.Add(j.Tables())
	f.Add([]byte{0xff, 0xd8, 0xff, 0xdb, 0, 67, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		q, _, err := JPEGQuality(b)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("untyped error: %v", err)
		}
		if err == nil && (q < 1 || q > 100) {
			t.Fatalf("quality %d", q)
		}
	})
}

// TestInteropJPEGQuality: the JPEGTables libvips (libtiff, libjpeg-turbo)
// writes at a quality read back as that quality. It runs under make
// interop.
func TestInteropJPEGQuality(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "vips")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.v")
	interop.MustRun(t, "vips", "black", in, "64", "64", "--bands", "3")
	for _, q := range []int{30, 70, 85} {
		path := filepath.Join(dir, strconv.Itoa(q)+".tif")
		interop.MustRun(t, "vips", "tiffsave", in, path, "--compression", "jpeg", "--Q", strconv.Itoa(q), "--tile")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		got, exact, err := JPEGQuality(f.Pages[0].JPEGTables())
		require.NoError(t, err)
		assert.Equal(t, [2]any{q, true}, [2]any{got, exact}, "libvips's Q%d", q)
	}
}
