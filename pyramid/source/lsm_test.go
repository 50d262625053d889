package source

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// lsmStack describes a Zeiss LSM file to build, as ZEN writes one: a
// plane page for each Z and T (and position), its samples the channels
// (stored planar, PhotometricInterpretation RGB when there are several,
// as Zeiss writes them), each followed by its RGB thumbnail (NewSubfileType
// 1); page 0 holds CZ_LSMINFO, whose ChannelColors and TimeStamps records
// lie after the directories.
type lsmStack struct {
	width, height, z, c, t int
	bits                   int // 8 unless set
	scanType               uint16
	voxel                  [3]float64 // metres
	interval               float64
	names                  []string
	colors                 []uint32
	stamps                 []float64
	positions              [2]int32     // DimensionP, DimensionM
	origin                 [3]float64   // metres
	places, tiles          [][3]float64 // the Positions and TilePositions records (metres)
	codec                  compress.Codec
	// info changes the structure's bytes once written (offsets set).
	info func(b []byte)
	// page changes the fields of each page (its index in the file).
	page func(i int, b *ifd.Builder)
}

// lsmStruct returns CZ_LSMINFO's bytes (512, little-endian) with the
// records at the offsets given, by their field's place in the structure
// (none when not given).
func (s lsmStack) lsmStruct(offs map[int]uint32) []byte {
	b := make([]byte, 512)
	o := binary.LittleEndian
	put32 := func(at int, v int32) { o.PutUint32(b[at:], uint32(v)) }
	putF := func(at int, v float64) { o.PutUint64(b[at:], math.Float64bits(v)) }
	o.PutUint32(b, lsmMagic20)
	put32(4, 512)
	put32(8, int32(s.width))
	put32(12, int32(s.height))
	put32(16, int32(s.z))
	put32(20, int32(s.c))
	put32(24, int32(s.t))
	put32(28, 1)
	put32(32, int32(max(1, s.width/2)))
	put32(36, int32(max(1, s.height/2)))
	putF(40, s.voxel[0])
	putF(48, s.voxel[1])
	putF(56, s.voxel[2])
	for i, v := range s.origin {
		putF(64+8*i, v)
	}
	o.PutUint16(b[88:], s.scanType)
	putF(112, s.interval)
	for at, off := range offs {
		o.PutUint32(b[at:], off)
	}
	put32(264, s.positions[0])
	put32(268, s.positions[1])
	if s.info != nil {
		s.info(b)
	}
	return b
}

// records returns the ChannelColors, TimeStamps, Positions and
// TilePositions records placed at at, and their offsets by their field's
// place in CZ_LSMINFO.
func (s lsmStack) records(at int) (out []byte, offs map[int]uint32) {
	o := binary.LittleEndian
	offs = map[int]uint32{}
	if len(s.names) > 0 || len(s.colors) > 0 {
		offs[108] = uint32(at)
		rec := make([]byte, 24)
		o.PutUint32(rec[4:], uint32(len(s.colors)))
		o.PutUint32(rec[8:], uint32(len(s.names)))
		o.PutUint32(rec[12:], 24)
		o.PutUint32(rec[16:], uint32(24+4*len(s.colors)))
		for _, c := range s.colors {
			rec = o.AppendUint32(rec, c)
		}
		for _, n := range s.names {
			rec = o.AppendUint32(rec, uint32(len(n)+1))
			rec = append(append(rec, n...), 0)
		}
		o.PutUint32(rec, uint32(len(rec)))
		out = append(out, rec...)
	}
	if len(s.stamps) > 0 {
		offs[132] = uint32(at + len(out))
		out = o.AppendUint32(out, uint32(8+8*len(s.stamps)))
		out = o.AppendUint32(out, uint32(len(s.stamps)))
		for _, v := range s.stamps {
			out = o.AppendUint64(out, math.Float64bits(v))
		}
	}
	for _, r := range []struct {
		field int
		rec   [][3]float64
	}{{376, s.places}, {336, s.tiles}} {
		if r.rec != nil {
			offs[r.field] = uint32(at + len(out))
			out = o.AppendUint32(out, uint32(len(r.rec)))
			for _, p := range r.rec {
				for _, v := range p {
					out = o.AppendUint64(out, math.Float64bits(v))
				}
			}
		}
	}
	return out, offs
}

// pages returns the file's pages, CZ_LSMINFO on page 0.
func (s lsmStack) pages(info []byte) []testPage {
	bits := s.bits
	if bits == 0 {
		bits = 8
	}
	n := s.z * s.t * int(max(1, s.positions[0])*max(1, s.positions[1]))
	var out []testPage
	for k := range n {
		i := len(out)
		p := testPage{width: s.width, height: s.height, samples: s.c, bits: bits, planar: s.c > 1, seed: k, codec: s.codec,
			more: func(b *ifd.Builder) {
				if s.c > 1 {
					b.Remove(tiff.TagPhotometricInterpretation)
					b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricRGB)
				}
				b.AddUint(tiff.TagNewSubfileType, 0)
				if i == 0 {
					b.Add(ifd.Entry{Tag: tagCZLSMInfo, Type: ifd.Byte, Count: uint64(len(info)), Value: info})
				}
				if s.page != nil {
					s.page(i, b)
				}
			}}
		thumb := testPage{width: max(1, s.width/2), height: max(1, s.height/2), samples: 3, bits: 8, seed: 100 + k,
			more: func(b *ifd.Builder) {
				b.AddUint(tiff.TagNewSubfileType, 1)
				if s.page != nil {
					s.page(i+1, b)
				}
			}}
		out = append(out, p, thumb)
	}
	return out
}

// build writes the file: the pages, then the records, their offsets in
// CZ_LSMINFO (the file is built twice, its layout the same). It returns
// the file and each page's image.
func (s lsmStack) build(t testing.TB) ([]byte, [][]byte) {
	t.Helper()
	file, _ := fileOf(t, binary.LittleEndian, false, s.pages(s.lsmStruct(nil))...)
	recs, offs := s.records(len(file))
	again, images := fileOf(t, binary.LittleEndian, false, s.pages(s.lsmStruct(offs))...)
	require.Equal(t, len(file), len(again))
	return append(again, recs...), images
}

// mapLSM builds the file and maps it.
func mapLSM(t testing.TB, s lsmStack, opts Options) (*File, [][]byte, error) {
	t.Helper()
	file, images := s.build(t)
	f, err := mapFile(t, file, "stack.lsm", opts)
	return f, images, err
}

func TestLSMMapping(t *testing.T) {
	tests := []struct {
		name  string
		stack lsmStack
		want  []string
	}{
		{"two channels along Z", lsmStack{width: 16, height: 12, z: 3, c: 2, t: 1},
			[]string{`"stack" 16x12 Z3 C2 T1 XYCZT uint8 x1: 0:0 0:1 2:0 2:1 4:0 4:1`}},
		{"three 8-bit channels are channels, not RGB", lsmStack{width: 16, height: 12, z: 1, c: 3, t: 2, scanType: 3},
			[]string{`"stack" 16x12 Z1 C3 T2 XYCTZ uint8 x1: 0:0 0:1 0:2 2:0 2:1 2:2`}},
		{"a time series of stacks", lsmStack{width: 8, height: 8, z: 2, c: 2, t: 2, scanType: 6, bits: 16},
			[]string{`"stack" 8x8 Z2 C2 T2 XYCZT uint16 x1: 0:0 0:1 2:0 2:1 4:0 4:1 6:0 6:1`}},
		{"one channel", lsmStack{width: 8, height: 8, z: 2, c: 1, t: 1, bits: 16},
			[]string{`"stack" 8x8 Z2 C1 T1 XYCZT uint16 x1: 0:* 2:*`}},
		{"two positions", lsmStack{width: 8, height: 8, z: 2, c: 1, t: 1, positions: [2]int32{2, 1}},
			[]string{`"stack #1" 8x8 Z2 C1 T1 XYCZT uint8 x1: 0:* 2:*`, `"stack #2" 8x8 Z2 C1 T1 XYCZT uint8 x1: 4:* 6:*`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, images, err := mapLSM(t, tt.stack, Options{})
			require.NoError(t, err)
			assert.Equal(t, LSM, f.Kind)
			assert.Equal(t, tt.want, summary(f))
			require.NotEmpty(t, f.Notes, "the thumbnails are said to be left out")
			assert.Contains(t, f.Notes[0], "thumbnails")
			// Each plane's samples are its page's.
			for _, im := range f.Images {
				for _, pl := range im.Planes {
					assert.Equal(t, images[pageIndex(f, pl.Page)], readPlane(t, pl.Page))
				}
			}
		})
	}
}

// pageIndex returns the index of the page (or the page it was made from)
// in the file's main chain.
func pageIndex(f *File, p *tiff.Page) int {
	for i, q := range f.TIFF.Pages {
		if q == p.Original() {
			return i
		}
	}
	return -1
}

func TestLSMMetadata(t *testing.T) {
	s := lsmStack{width: 16, height: 12, z: 2, c: 2, t: 3, scanType: 6, voxel: [3]float64{0.2e-6, 0.25e-6, 1.5e-6},
		names: []string{"Ch1-T1", "Ch2-T2"}, colors: []uint32{0x0000ff00, 0}, stamps: []float64{10, 10.5, 11}}
	f, _, err := mapLSM(t, s, Options{})
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	sp := f.Images[0].Spec
	assert.InDelta(t, 0.2, sp.PhysicalSizeX, 1e-12)
	assert.InDelta(t, 0.25, sp.PhysicalSizeY, 1e-12)
	assert.InDelta(t, 1.5, sp.PhysicalSizeZ, 1e-12)
	assert.Equal(t, [3]string{"µm", "µm", "µm"}, [3]string{sp.PhysicalSizeXUnit, sp.PhysicalSizeYUnit, sp.PhysicalSizeZUnit})
	require.Len(t, sp.Channels, 2)
	assert.Equal(t, "Ch1-T1", sp.Channels[0].Name)
	assert.Equal(t, color.NRGBA{0, 255, 0, 255}, sp.Channels[0].Color)
	assert.Equal(t, color.NRGBA{255, 255, 255, 255}, sp.Channels[1].Color, "black is shown white, as Bio-Formats shows it")
	assert.Equal(t, pyramid.Quantity{Value: 0.5, Unit: "s"}, sp.TimeIncrement, "evenly spaced time stamps")
	require.Len(t, sp.PlaneInfo, sp.Planes())
	for _, pl := range sp.PlaneInfo {
		assert.Equal(t, pyramid.Quantity{Value: 0.5 * float64(pl.T), Unit: "s"}, pl.DeltaT)
	}
	keys := map[string]string{}
	for _, kv := range sp.Annotations {
		keys[kv.Key] = kv.Value
	}
	assert.Equal(t, "6 (time series x-y-z)", keys["ScanType"])
	assert.Equal(t, "3", keys["DimensionTime"])
	assert.Equal(t, "10 10.5 11", keys["TimeStamps"])
	assert.NotContains(t, keys, "OffsetChannelColors", "file offsets are no metadata of the image")
	assert.Empty(t, f.Images[0].Notes)

	// TimeIntervall is the increment when set; stamps unevenly spaced give
	// none.
	s.interval, s.stamps = 2, []float64{0, 1, 5}
	f, _, err = mapLSM(t, s, Options{})
	require.NoError(t, err)
	assert.Equal(t, pyramid.Quantity{Value: 2, Unit: "s"}, f.Images[0].Spec.TimeIncrement)
	s.interval = 0
	f, _, err = mapLSM(t, s, Options{})
	require.NoError(t, err)
	assert.Equal(t, pyramid.Quantity{}, f.Images[0].Spec.TimeIncrement)
	assert.Equal(t, pyramid.Quantity{Value: 5, Unit: "s"}, f.Images[0].Spec.PlaneInfo[len(f.Images[0].Spec.PlaneInfo)-1].DeltaT)

	// Each position's image has its own stamps, not the file's.
	s = lsmStack{width: 8, height: 8, z: 1, c: 1, t: 2, scanType: 5, positions: [2]int32{3, 1}, stamps: []float64{0, 1, 2, 3, 4, 5}}
	f, _, err = mapLSM(t, s, Options{})
	require.NoError(t, err)
	require.Len(t, f.Images, 3)
	for i, want := range []string{"0 1", "2 3", "4 5"} {
		var got []string
		for _, kv := range f.Images[i].Spec.Annotations {
			if kv.Key == "TimeStamps" {
				got = append(got, kv.Value)
			}
		}
		assert.Equal(t, []string{want}, got, "position %d", i)
	}

	// Those of an image after one left out are still its own.
	s.page = func(i int, b *ifd.Builder) {
		if i == 6 { // position 1's second plane, another pixel type
			b.Remove(tiff.TagSampleFormat)
			b.AddShort(tiff.TagSampleFormat, tiff.SampleFormatInt)
		}
	}
	f, _, err = mapLSM(t, s, Options{SkipUnsupported: true})
	require.NoError(t, err)
	require.Len(t, f.Images, 2)
	assert.Equal(t, "stack #3", f.Images[1].Spec.Name)
	assert.Contains(t, f.Images[1].Spec.Annotations, pyramid.KeyValue{Key: "TimeStamps", Value: "4 5"})
}

func TestLSMBadInfo(t *testing.T) {
	base := lsmStack{width: 8, height: 8, z: 2, c: 2, t: 1, names: []string{"a", "b"}, stamps: []float64{0}}
	with := func(info func([]byte)) lsmStack { s := base; s.info = info; return s }
	o := binary.LittleEndian
	t.Run("refused", func(t *testing.T) {
		for name, s := range map[string]lsmStack{
			"short":         with(func(b []byte) { o.PutUint32(b[4:], 40) }),
			"another magic": with(func(b []byte) { o.PutUint32(b, 0x12345678) }),
			"not bytes": {width: 8, height: 8, z: 1, c: 1, t: 1, page: func(i int, b *ifd.Builder) {
				if i == 0 {
					b.Remove(tagCZLSMInfo)
					b.AddShort(tagCZLSMInfo, 1, 2, 3)
				}
			}},
			"a value of 8 bytes": {width: 8, height: 8, z: 1, c: 1, t: 1, page: func(i int, b *ifd.Builder) {
				if i == 0 {
					b.Remove(tagCZLSMInfo)
					b.AddByte(tagCZLSMInfo, 0x4c, 0x49, 0x30, 0x00, 8, 0, 0, 0)
				}
			}},
		} {
			t.Run(name, func(t *testing.T) {
				_, _, err := mapLSM(t, s, Options{})
				require.ErrorIs(t, err, ErrMetadata)
				assert.Contains(t, err.Error(), "CZ_LSMINFO")
				f, _, err := mapLSM(t, s, Options{SkipUnsupported: true})
				require.NoError(t, err)
				assert.Equal(t, TIFF, f.Kind, "read as a plain TIFF")
				require.Len(t, f.Skipped, 1)
				assert.ErrorIs(t, f.Skipped[0], ErrNotCarried)
			})
		}
	})
	t.Run("noted", func(t *testing.T) {
		for name, tt := range map[string]struct {
			s    lsmStack
			note string
			want string
		}{
			"records past the file": {with(func(b []byte) { o.PutUint32(b[108:], 1<<31); o.PutUint32(b[132:], 1<<30) }),
				"ChannelColors record (at 2147483648) is not read", `"stack" 8x8 Z2 C2 T1 XYCZT uint8 x1: 0:0 0:1 2:0 2:1`},
			"absurd dimensions": {with(func(b []byte) { o.PutUint32(b[16:], math.MaxInt32); o.PutUint32(b[24:], math.MaxUint32) }),
				"says Z 2147483647 and T 1 for 2 planes: read as Z 2 and T 1", `"stack" 8x8 Z2 C2 T1 XYCZT uint8 x1: 0:0 0:1 2:0 2:1`},
			"Z x T unlike the pages": {with(func(b []byte) { o.PutUint32(b[16:], 1); o.PutUint32(b[24:], 3) }),
				"says Z 1 and T 3 for 2 planes: read as Z 1 and T 2", `"stack" 8x8 Z1 C2 T2 XYCZT uint8 x1: 0:0 0:1 2:0 2:1`},
			"channels unlike the samples": {with(func(b []byte) { o.PutUint32(b[20:], 5) }),
				"says 5 channels, and its pages have 2 samples", `"stack" 8x8 Z2 C2 T1 XYCZT uint8 x1: 0:0 0:1 2:0 2:1`},
			"time stamps of a wrong size": {with(func(b []byte) { o.PutUint32(b[132:], o.Uint32(b[132:])+4) }),
				"TimeStamps record", `"stack" 8x8 Z2 C2 T1 XYCZT uint8 x1: 0:0 0:1 2:0 2:1`},
			"positions unlike the pages": {with(func(b []byte) { o.PutUint32(b[264:], 3); o.PutUint32(b[268:], 1) }),
				"3 positions", `"stack" 8x8 Z2 C2 T1 XYCZT uint8 x1: 0:0 0:1 2:0 2:1`},
			"records not read": {with(func(b []byte) { o.PutUint32(b[124:], 16); o.PutUint32(b[136:], 16) }),
				"records ScanInformation, EventList are not read", `"stack" 8x8 Z2 C2 T1 XYCZT uint8 x1: 0:0 0:1 2:0 2:1`},
		} {
			t.Run(name, func(t *testing.T) {
				f, _, err := mapLSM(t, tt.s, Options{})
				require.NoError(t, err)
				assert.Equal(t, LSM, f.Kind)
				assert.Equal(t, []string{tt.want}, summary(f))
				assert.Contains(t, joined(f.Images[0].Notes), tt.note)
			})
		}
	})
	t.Run("a channel name past its record", func(t *testing.T) {
		s := base
		s.names = []string{"a", "b"}
		// The second name's length runs past the record: the first is kept.
		file, _ := s.build(t)
		at := bytes.LastIndex(file, []byte{2, 0, 0, 0, 'b', 0})
		require.Positive(t, at)
		o.PutUint32(file[at:], 1000)
		f, err := mapFile(t, file, "stack.lsm", Options{})
		require.NoError(t, err)
		assert.Contains(t, joined(f.Images[0].Notes), "a channel name of 1000 bytes")
		require.Len(t, f.Images[0].Spec.Channels, 2)
		assert.Equal(t, "a", f.Images[0].Spec.Channels[0].Name)
	})
}

// joined joins notes for searching them.
func joined(notes []string) string {
	var b bytes.Buffer
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	return b.String()
}

// farFile is a file of size bytes that holds low at offset 0 and high at
// offset 4 GiB, zeros elsewhere: an LSM file past 4 GiB without the disk.
type farFile struct {
	low, high []byte
	size      int64
}

func (f farFile) ReadAt(b []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && off+int64(n) < f.size {
		at := off + int64(n)
		switch {
		case at < int64(len(f.low)):
			n += copy(b[n:], f.low[at:])
		case at >= 1<<32 && at < 1<<32+int64(len(f.high)):
			n += copy(b[n:], f.high[at-1<<32:])
		default:
			b[n] = 0
			n++
		}
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// patchStripOffset sets the (one, inline) StripOffsets value of the
// directory at dir in a little-endian classic TIFF.
func patchStripOffset(t *testing.T, file []byte, dir int64, v uint32) {
	t.Helper()
	o := binary.LittleEndian
	n := int64(o.Uint16(file[dir:]))
	for i := range n {
		e := file[dir+2+12*i:]
		if o.Uint16(e) == tiff.TagStripOffsets {
			require.Equal(t, uint32(1), o.Uint32(e[4:]), "one strip")
			switch o.Uint16(e[2:]) {
			case uint16(ifd.Short):
				require.Less(t, v, uint32(1<<16))
				o.PutUint16(e[8:], uint16(v))
			default:
				o.PutUint32(e[8:], v)
			}
			return
		}
	}
	t.Fatalf("no StripOffsets in the directory at %d", dir)
}

// TestLSMPast4GiB: the wrapped strip offsets of an LSM file past 4 GiB
// are unwrapped as tifffile does: a thumbnail whose (stored) data lies
// near 4 GiB is followed by planes whose offsets are smaller, which lie
// 4 GiB further on. An offset unwrapped past the end of the file is
// ErrMalformed.
func TestLSMPast4GiB(t *testing.T) {
	s := lsmStack{width: 8, height: 8, z: 3, c: 1, t: 1, bits: 16}
	s.page = func(_ int, b *ifd.Builder) { // offsets as LONG, as Zeiss writes them
		e, _ := b.Get(tiff.TagStripOffsets)
		v, err := e.Uints()
		require.NoError(t, err)
		b.Remove(tiff.TagStripOffsets)
		b.AddLong(tiff.TagStripOffsets, uint32(v[0]))
	}
	file, images := s.build(t)
	tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	// The high copy is the file as written; in the low one, the data of
	// pages 2 on is garbage, which a reader not unwrapping would read.
	low := bytes.Clone(file)
	for _, p := range tf.Pages[2:] {
		b, err := p.Block(0)
		require.NoError(t, err)
		for i := range b.Size {
			low[b.Offset+i] = 0xee
		}
	}
	patchStripOffset(t, low, tf.Pages[1].Offset, 1<<32-1000) // the first thumbnail's data just below 4 GiB
	far := farFile{low: low, high: file, size: 1<<32 + int64(len(file))}
	big, err := tiff.Read(far, far.size)
	require.NoError(t, err)
	f, err := New(big, "big.lsm", Options{})
	require.NoError(t, err)
	require.Len(t, f.Images, 1)
	require.Len(t, f.Images[0].Planes, 3)
	for i, pl := range f.Images[0].Planes {
		assert.Equal(t, images[2*i], readPlane(t, pl.Page), "plane %d", i)
	}
	b, err := f.Images[0].Planes[1].Page.Block(0)
	require.NoError(t, err)
	assert.Greater(t, b.Offset, uint64(1<<32))

	// Cut short: the unwrapped offsets lie past its end.
	far.size = 1<<32 + 16
	short, err := tiff.Read(far, far.size)
	require.NoError(t, err)
	_, err = New(short, "short.lsm", Options{})
	require.ErrorIs(t, err, tiff.ErrMalformed)

	// Several positions past 4 GiB are refused.
	var p2 lsmStack = s
	p2.positions = [2]int32{3, 1}
	p2.z = 1
	file2, _ := p2.build(t)
	far2 := farFile{low: file2, size: 1<<32 + 8}
	big2, err := tiff.Read(far2, far2.size)
	require.NoError(t, err)
	_, err = New(big2, "positions.lsm", Options{})
	require.ErrorIs(t, err, ErrUnsupported)
}

// TestLSMCompressedCounts: the StripByteCounts of compressed LSM planes
// are those of the uncompressed data; each strip is read to the next one,
// or to the next page's data, as tifffile reads it.
func TestLSMCompressedCounts(t *testing.T) {
	s := lsmStack{width: 16, height: 16, z: 2, c: 1, t: 1, codec: mustCodec(tiff.CompressionLZW)}
	s.page = func(i int, b *ifd.Builder) {
		if i%2 == 0 {
			b.Remove(tiff.TagStripByteCounts)
			b.AddUint(tiff.TagStripByteCounts, 16*16)
		}
	}
	f, images, err := mapLSM(t, s, Options{})
	require.NoError(t, err)
	pages := f.TIFF.Pages
	for i, pl := range f.Images[0].Planes {
		b, err := pl.Page.Block(0)
		require.NoError(t, err)
		next, err := pages[2*i+1].Block(0) // the thumbnail's data follows
		require.NoError(t, err)
		assert.Equal(t, next.Offset, b.Offset+b.Size, "plane %d's strip runs to its thumbnail's", i)
		assert.Equal(t, images[2*i], readPlane(t, pl.Page))
	}
}

// TestLSMCompressedLastAtEnd: a compressed plane whose data ends the file
// (its thumbnail stored before it), its stated count the uncompressed size
// past the file's end, runs to the end of the file, as tifffile reads it,
// and the file is read (it was refused whole).
func TestLSMCompressedLastAtEnd(t *testing.T) {
	const w = 64
	s := lsmStack{width: w, height: w, z: 2, c: 1, t: 1, bits: 16, codec: mustCodec(tiff.CompressionLZW)}
	s.page = func(i int, b *ifd.Builder) {
		if i%2 == 0 {
			b.Remove(tiff.TagStripByteCounts)
			b.AddUint(tiff.TagStripByteCounts, w*w*2)
		}
		e, _ := b.Get(tiff.TagStripOffsets) // a LONG, to point past what a SHORT holds
		v, _ := e.Uints()
		b.Remove(tiff.TagStripOffsets)
		b.AddLong(tiff.TagStripOffsets, uint32(v[0]))
	}
	file, images := s.build(t)
	tf, err := tiff.Read(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	last := tf.Pages[len(tf.Pages)-2]
	strip, err := last.Block(0)
	require.NoError(t, err, "the stated count fits where the plane lies")
	thumb, err := tf.Pages[len(tf.Pages)-1].Block(0)
	require.NoError(t, err)
	// The plane's compressed data moved to the end of the file, its
	// StripOffsets (a LONG in the entry) pointed there.
	data := slices.Clone(file[strip.Offset:thumb.Offset])
	at := len(file)
	file = append(file, data...)
	e, ok := last.Field(tiff.TagStripOffsets)
	require.True(t, ok)
	require.Equal(t, ifd.Long, e.Type)
	n := int64(binary.LittleEndian.Uint16(file[last.Offset:]))
	for i := range n {
		entry := file[last.Offset+2+12*i:]
		if binary.LittleEndian.Uint16(entry) == tiff.TagStripOffsets {
			binary.LittleEndian.PutUint32(entry[8:], uint32(at))
		}
	}
	f, err := mapFile(t, file, "end.lsm", Options{})
	require.NoError(t, err)
	pl := f.Images[0].Planes[1].Page
	b, err := pl.Block(0)
	require.NoError(t, err)
	assert.Equal(t, [2]uint64{uint64(at), uint64(len(data))}, [2]uint64{b.Offset, b.Size}, "to the end of the file")
	assert.True(t, bytes.Equal(images[2], readPlane(t, pl)), "the plane's samples") // images holds the thumbnails too
}

// TestLSMPositions: each position's image has its stage coordinates on
// every plane, as Bio-Formats gives them: the origin plus the Positions
// record's entry (metres, made µm), plus the origin and the TilePositions
// record's entry when there is one, in its unit "reference frame".
func TestLSMPositions(t *testing.T) {
	const um = "reference frame"
	pos := func(x, y, z float64) [3]pyramid.Quantity {
		return [3]pyramid.Quantity{{Value: x, Unit: um}, {Value: y, Unit: um}, {Value: z, Unit: um}}
	}
	tests := []struct {
		name string
		s    lsmStack
		want [][3]pyramid.Quantity // by image
		note string
	}{
		{"three positions", lsmStack{positions: [2]int32{3, 1}, origin: [3]float64{1e-3, 2e-3, 5e-6},
			places: [][3]float64{{0, 0, 0}, {1e-4, 0, 0}, {2e-4, 3e-4, 1e-6}}},
			[][3]pyramid.Quantity{pos(1000, 2000, 5), pos(1100, 2000, 5), pos(1200, 2300, 6)}, ""},
		{"tiles added to positions", lsmStack{positions: [2]int32{1, 2}, origin: [3]float64{1e-3, 0, 0},
			places: [][3]float64{{1e-4, 0, 0}}, tiles: [][3]float64{{0, 0, 0}, {2e-4, 1e-4, 0}}},
			[][3]pyramid.Quantity{pos(2100, 0, 0), pos(1200, 100, 0)}, ""},
		{"one image", lsmStack{places: [][3]float64{{1e-4, 2e-4, 3e-6}, {1, 1, 1}}},
			[][3]pyramid.Quantity{pos(100, 200, 3)}, ""},
		{"past a float", lsmStack{positions: [2]int32{3, 1}, places: [][3]float64{{1e-4, 0, 0}, {1e300, 0, 0}, {3e-4, 0, 0}}},
			[][3]pyramid.Quantity{pos(100, 0, 0), {}, pos(300, 0, 0)}, "its stage coordinates (1e+306, 0, 0 µm) are not carried: past a float's range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			s.width, s.height, s.z, s.c, s.t = 8, 8, 2, 2, 1
			f, _, err := mapLSM(t, s, Options{})
			require.NoError(t, err)
			require.Len(t, f.Images, len(tt.want))
			for i, im := range f.Images {
				sp := im.Spec
				if tt.want[i] == ([3]pyramid.Quantity{}) {
					assert.Empty(t, sp.PlaneInfo, "image %d", i)
					continue
				}
				require.Len(t, sp.PlaneInfo, sp.Planes(), "image %d", i)
				for _, pl := range sp.PlaneInfo {
					assert.Equal(t, tt.want[i], [3]pyramid.Quantity{pl.PositionX, pl.PositionY, pl.PositionZ}, "image %d", i)
				}
				if tt.note == "" {
					assert.NotContains(t, joined(im.Notes), "Positions")
				}
			}
			for i, im := range f.Images { // the note on the image concerned only
				if tt.note != "" {
					assert.Equal(t, tt.want[i] == [3]pyramid.Quantity{}, strings.Contains(joined(im.Notes), tt.note), "image %d", i)
				}
			}
		})
	}

	// With several time points, a plane has its DeltaT and its position.
	s := lsmStack{width: 8, height: 8, z: 1, c: 1, t: 2, scanType: 5, stamps: []float64{3, 4.5}, places: [][3]float64{{1e-6, 2e-6, 0}}}
	f, _, err := mapLSM(t, s, Options{})
	require.NoError(t, err)
	assert.Equal(t, []pyramid.Plane{
		{T: 0, DeltaT: pyramid.Quantity{Value: 0, Unit: "s"}, PositionX: pyramid.Quantity{Value: 1, Unit: um},
			PositionY: pyramid.Quantity{Value: 2, Unit: um}, PositionZ: pyramid.Quantity{Value: 0, Unit: um}},
		{T: 1, DeltaT: pyramid.Quantity{Value: 1.5, Unit: "s"}, PositionX: pyramid.Quantity{Value: 1, Unit: um},
			PositionY: pyramid.Quantity{Value: 2, Unit: um}, PositionZ: pyramid.Quantity{Value: 0, Unit: um}},
	}, f.Images[0].Spec.PlaneInfo)

	// Positions read from one record only, the other not read, are none.
	s2 := lsmStack{width: 8, height: 8, z: 1, c: 1, t: 1, places: [][3]float64{{1e-4, 0, 0}}, tiles: [][3]float64{{2e-4, 0, 0}}}
	s2.info = func(b []byte) { binary.LittleEndian.PutUint32(b[376:], 1<<30) }
	f, _, err = mapLSM(t, s2, Options{})
	require.NoError(t, err)
	assert.Empty(t, f.Images[0].Spec.PlaneInfo)
	assert.Contains(t, joined(f.Images[0].Notes), "its positions' stage coordinates are not carried, one of their two records not read")

	// A record whose entries would run past the end of the file is noted.
	s.info = func(b []byte) { binary.LittleEndian.PutUint32(b[376:], binary.LittleEndian.Uint32(b[376:])-4) }
	f, _, err = mapLSM(t, s, Options{})
	require.NoError(t, err)
	assert.Contains(t, joined(f.Images[0].Notes), "its Positions record")
	assert.Zero(t, f.Images[0].Spec.PlaneInfo[1].PositionX)
}

// TestLSMFloat: 32-bit pages of DataType 5, which Zeiss writes without a
// SampleFormat, are floats, as CZ_LSMINFO's table says (tifffile's, and
// Bio-Formats reads any 32-bit LSM so); of another DataType, integers.
func TestLSMFloat(t *testing.T) {
	for _, tt := range []struct {
		dataType uint32
		want     pyramid.PixelType
	}{{5, pyramid.Float32}, {1, pyramid.Uint32}} {
		s := lsmStack{width: 8, height: 8, z: 2, c: 1, t: 1, bits: 32}
		s.info = func(b []byte) { binary.LittleEndian.PutUint32(b[28:], tt.dataType) }
		s.page = func(_ int, b *ifd.Builder) { b.Remove(tiff.TagSampleFormat) } // as Zeiss writes them
		f, images, err := mapLSM(t, s, Options{})
		require.NoError(t, err)
		assert.Equal(t, tt.want, f.Images[0].Spec.PixelType, "DataType %d", tt.dataType)
		assert.Equal(t, images[2], readPlane(t, f.Images[0].Planes[1].Page), "the samples as stored")
	}
}

// TestLSMBigEndian: CZ_LSMINFO is read in the file's byte order, as
// Bio-Formats reads it (tifffile reads little-endian files only).
func TestLSMBigEndian(t *testing.T) {
	s := lsmStack{width: 8, height: 8, z: 2, c: 1, t: 1, voxel: [3]float64{1e-6, 1e-6, 2e-6}}
	info := s.lsmStruct(nil)
	for _, f := range lsmFields { // the structure in big-endian order
		n := f.size()
		for i := range n / 2 {
			info[f.at+i], info[f.at+n-1-i] = info[f.at+n-1-i], info[f.at+i]
		}
	}
	file, _ := fileOf(t, binary.BigEndian, false, s.pages(info)...)
	f, err := mapFile(t, file, "be.lsm", Options{})
	require.NoError(t, err)
	assert.Equal(t, LSM, f.Kind)
	assert.Equal(t, []string{`"be" 8x8 Z2 C1 T1 XYCZT uint8 x1: 0:* 2:*`}, summary(f))
	assert.InDelta(t, 2, f.Images[0].Spec.PhysicalSizeZ, 1e-12)
}

// FuzzLSMInfo maps LSM stacks whose CZ_LSMINFO is arbitrary bytes, and
// whose file ends with arbitrary records: errors must be typed, and what
// is mapped sound.
func FuzzLSMInfo(f *testing.F) {
	s := lsmStack{width: 8, height: 8, z: 2, c: 2, t: 1, names: []string{"Ch1", "Ch2"}, stamps: []float64{0, 1},
		places: [][3]float64{{1e-3, 2e-3, 0}}, tiles: [][3]float64{{1e-4, 0, 0}}}
	file, _ := fileOf(f, binary.LittleEndian, false, s.pages(s.lsmStruct(nil))...)
	recs, offs := s.records(len(file))
	f.Add(s.lsmStruct(offs), recs, false)
	f.Add(s.lsmStruct(offs)[:100], recs, true)
	f.Fuzz(func(t *testing.T, info, records []byte, skip bool) {
		if len(info) == 0 || len(info) > 1<<16 {
			return
		}
		file, _ := fileOf(t, binary.LittleEndian, false, s.pages(info)...)
		mapFuzzed(t, append(file, records...), skip)
	})
}

// TestLSMOldBitsPerSample: the two BitsPerSample values that old Zeiss
// writers stored at an offset (the entry holding the offset) are read
// there, as tifffile reads them; two inline values are read as stored.
func TestLSMOldBitsPerSample(t *testing.T) {
	s := oldBits(t, lsmStack{width: 8, height: 8, z: 2, c: 2, t: 1, bits: 16})
	f, images, err := mapLSM(t, s, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{`"stack" 8x8 Z2 C2 T1 XYCZT uint16 x1: 0:0 0:1 2:0 2:1`}, summary(f))
	assert.Contains(t, joined(f.Images[0].Notes), "BitsPerSample of its pages")
	for _, pl := range f.Images[0].Planes {
		assert.Equal(t, images[pageIndex(f, pl.Page)], readPlane(t, pl.Page))
	}
}

// oldBits returns the stack of two channels with its planes'
// BitsPerSample stored as old Zeiss writers stored it: at an offset (in
// CZ_LSMINFO's reserved bytes), which the entry holds.
func oldBits(t testing.TB, s lsmStack) lsmStack {
	const at = 500
	file, _ := s.build(t)
	info := bytes.Index(file, binary.LittleEndian.AppendUint32(nil, lsmMagic20))
	require.Positive(t, info)
	off := uint32(info + at)
	bits := uint32(s.bits)
	s.info = func(b []byte) { binary.LittleEndian.PutUint32(b[at:], bits|bits<<16) }
	s.page = func(i int, b *ifd.Builder) {
		if i%2 == 0 {
			b.Remove(tiff.TagBitsPerSample)
			b.AddShort(tiff.TagBitsPerSample, uint16(off), uint16(off>>16))
		}
	}
	return s
}
