package source

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// uicEntry is a UIC1 entry of a test STK: an id and its value, or the
// bytes its value is the offset of.
type uicEntry struct {
	id    uint32
	value uint32
	data  []byte // stored in the file, the value its offset, when set
}

// stkPlane is one plane of a test STK: its UIC2 values.
type stkPlane struct {
	zNum, zDen uint32
	day, ms    uint32 // creation date (Julian day) and time
}

// testSTK describes a MetaMorph STK to build: one page, the planes' pixels
// stored one after another after the first's.
type testSTK struct {
	width, height, bits int
	rgb                 bool // 3 samples, RGB; 1 otherwise
	rowsPerStrip        int  // 0: one strip a plane
	planes              []stkPlane
	wavelengths         []uint32 // UIC3, nm; none when empty
	uic1                []uicEntry
	uic4                []byte // the UIC4 table, ended by id 0; id 0 alone when nil
	uic4Count           int    // the UIC4tag's count; 0: the planes' (2 at least, so the table lies out of line)
	noUIC4              bool   // no UIC4tag; none either for one plane and no uic4
	description         string
	compression         uint16 // 0: none
	missing             int    // planes the UIC2 counts whose pixels the file lacks
	padding             uint32 // bytes the last strip's byte count says past the plane
	bigEndian           bool   // a big-endian file, its UIC tables too (uic1's data and uic4 as given)
}

// uicRat is a rational's 8 bytes, little-endian.
func uicRat(num, den uint32) []byte { return uicRatIn(binary.LittleEndian, num, den) }

// uicRatIn is a rational's 8 bytes in the order.
func uicRatIn(o binary.AppendByteOrder, num, den uint32) []byte {
	return o.AppendUint32(o.AppendUint32(nil, num), den)
}

// uicStr is a UIC string, little-endian: its LONG length, then its bytes
// and a NUL.
func uicStr(s string) []byte { return uicStrIn(binary.LittleEndian, s) }

// uicStrIn is a UIC string in the order.
func uicStrIn(o binary.AppendByteOrder, s string) []byte {
	return append(o.AppendUint32(nil, uint32(len(s)+1)), append([]byte(s), 0)...)
}

// uicDate is a Julian day and milliseconds, little-endian.
func uicDate(day, ms uint32) []byte { return uicRat(day, ms) }

// order returns the file's byte order.
func (s testSTK) order() interface {
	binary.ByteOrder
	binary.AppendByteOrder
} {
	if s.bigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// pixels returns the samples of plane k.
func (s testSTK) pixels(k int) []byte {
	return testPage{width: s.width, height: s.height, samples: s.samples(), bits: s.bits, seed: k}.pixels()
}

// samples returns the samples of a pixel.
func (s testSTK) samples() int {
	if s.rgb {
		return 3
	}
	return 1
}

// file builds the STK: header, pixel data, the UIC tables, and the
// directory, whose UIC1, UIC2 and UIC4 entries are patched to point at
// their tables (ifd.Builder writes a field's values, not such tables).
func (s testSTK) file(t testing.TB) []byte {
	t.Helper()
	n := len(s.planes)
	o := s.order()
	out, err := tiff.Header{Order: o, FirstIFD: 0}.Append(nil)
	require.NoError(t, err)
	start := len(out)
	for k := range n {
		out = append(out, s.pixels(k)...)
	}
	out = append(out, make([]byte, len(out)&1)...)
	rows := s.rowsPerStrip
	if rows == 0 {
		rows = s.height
	}
	var offsets, counts []uint32
	for y := 0; y < s.height; y += rows {
		offsets = append(offsets, uint32(start+y*s.width*s.samples()*s.bits/8))
		counts = append(counts, uint32(min(rows, s.height-y)*s.width*s.samples()*s.bits/8))
	}
	counts[len(counts)-1] += s.padding
	// UIC1 (which tells an STK): entries whose data lies elsewhere get
	// their offsets.
	// Two entries at least (AutoScale, MinScale), so that the table lies
	// out of line, where MetaMorph writes it.
	s.uic1 = append([]uicEntry{{id: 0, value: 1}, {id: 1, value: 0}}, s.uic1...)
	var uic1 []byte
	for _, e := range s.uic1 {
		v := e.value
		if e.data != nil {
			v = uint32(len(out))
			out = append(out, e.data...)
		}
		uic1 = o.AppendUint32(o.AppendUint32(uic1, e.id), v)
	}
	uic1At := len(out)
	out = append(out, uic1...)
	uic2At := len(out)
	for _, p := range append(s.planes, make([]stkPlane, s.missing)...) {
		for _, v := range []uint32{p.zNum, p.zDen, p.day, p.ms, p.day, p.ms} { // modified when created
			out = o.AppendUint32(out, v)
		}
	}
	uic4At := len(out)
	if s.uic4 == nil {
		s.uic4 = []byte{0, 0}
	}
	out = append(out, s.uic4...)
	out = append(out, make([]byte, len(out)&1)...)
	var b ifd.Builder
	b.AddLong(tiff.TagImageWidth, uint32(s.width))
	b.AddLong(tiff.TagImageLength, uint32(s.height))
	b.AddShort(tiff.TagCompression, max(s.compression, tiff.CompressionNone))
	if s.rgb {
		b.AddShort(tiff.TagBitsPerSample, uint16(s.bits), uint16(s.bits), uint16(s.bits))
		b.AddShort(tiff.TagSamplesPerPixel, 3)
		b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricRGB)
	} else {
		b.AddShort(tiff.TagBitsPerSample, uint16(s.bits))
		b.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricBlackIsZero)
	}
	if s.description != "" {
		// MetaMorph ends each plane's description with a NUL, which
		// AddASCII refuses inside the text.
		d := append([]byte(s.description), 0)
		b.Add(ifd.Entry{Tag: tiff.TagImageDescription, Type: ifd.ASCII, Count: uint64(len(d)), Value: d})
	}
	b.AddLong(tiff.TagStripOffsets, offsets...)
	b.AddLong(tiff.TagRowsPerStrip, uint32(rows))
	b.AddLong(tiff.TagStripByteCounts, counts...)
	b.AddASCII(tiff.TagSoftware, "MetaMorph 7.8")
	patch := map[uint16]int{}
	b.AddLong(tiff.TagUIC1, make([]uint32, len(s.uic1))...)
	patch[tiff.TagUIC1] = uic1At
	if n > 0 {
		b.AddRational(tiff.TagUIC2, make([]ifd.Fraction, n+s.missing)...)
		patch[tiff.TagUIC2] = uic2At
	}
	if len(s.wavelengths) > 0 {
		var w []ifd.Fraction
		for _, v := range s.wavelengths {
			w = append(w, ifd.Fraction{Num: v, Den: 1})
		}
		b.AddRational(tiff.TagUIC3, w...)
	}
	if !s.noUIC4 && (n > 1 || s.uic4Count > 0 || len(s.uic4) > 2) {
		count := s.uic4Count
		if count == 0 {
			count = n
		}
		b.AddLong(tiff.TagUIC4, make([]uint32, max(count, 2))...) // out of line
		patch[tiff.TagUIC4] = uic4At
	}
	dir := len(out)
	o.PutUint32(out[4:], uint32(dir))
	out, err = b.Encode(out, int64(dir), 0, ifd.Format{Order: o})
	require.NoError(t, err)
	entries := int(o.Uint16(out[dir:]))
	for i := range entries {
		e := out[dir+2+12*i:]
		if at, ok := patch[o.Uint16(e)]; ok {
			o.PutUint32(e[8:], uint32(at))
		}
	}
	return out
}

// zStack is a Z stack of 3 planes of 16 bits, calibrated 0.25 µm, named,
// its Z distances all 2 µm, at one wavelength.
func zStack() testSTK {
	return testSTK{width: 12, height: 10, bits: 16, rowsPerStrip: 4,
		planes:      []stkPlane{{2, 1, 2451576, 54362783}, {2, 1, 2451576, 54362783}, {2, 1, 2451576, 54362783}},
		wavelengths: []uint32{520, 520, 520},
		uic1: []uicEntry{{id: 1, value: 3}, {id: 2, value: 4095}, {id: 4, data: uicRat(1, 4)}, {id: 5, data: uicRat(1, 4)},
			{id: 6, data: uicStr("um")}, {id: 7, data: uicStr("cells 1")}, {id: 16, data: uicDate(2451576, 54362783)}},
		description: "Exposure: 100 ms\x00plane 2\x00plane 3",
	}
}

// TestSTK: an STK's planes, all of them, lie along the axes Bio-Formats
// gives them, with its calibration, name and date.
func TestSTK(t *testing.T) {
	same := func(n int, z uint32) []stkPlane {
		out := make([]stkPlane, n)
		for i := range out {
			out[i] = stkPlane{z, 1, 2451576, 1000}
		}
		return out
	}
	timed := func(n int) []stkPlane {
		out := make([]stkPlane, n)
		for i := range out {
			out[i] = stkPlane{0, 1, 2451576, uint32(1000 * i)}
		}
		return out
	}
	absZ := []byte{40, 0}
	for _, z := range []uint32{10, 12, 14, 16} {
		absZ = append(absZ, uicRat(z, 1)...)
	}
	absZ = append(absZ, 0, 0)
	someZ := same(4, 0)
	someZ[1].zNum, someZ[2].zNum = 1, 1
	tests := []struct {
		name, file string
		stk        testSTK
		z, c, t    int
		physZ      float64
	}{
		{"Z stack (Z distances all set)", "a.stk", zStack(), 3, 1, 1, 2},
		{"Z stack (the first Z distance 0)", "a.stk", testSTK{width: 8, height: 6, bits: 8,
			planes: []stkPlane{{0, 1, 2451576, 0}, {1, 2, 2451576, 0}, {1, 2, 2451576, 0}, {1, 2, 2451576, 0}}}, 4, 1, 1, 0.5},
		{"time series", "a.stk", testSTK{width: 8, height: 6, bits: 8, planes: timed(4)}, 1, 1, 4, 0},
		{"time series named _t: Z", "a_t1.stk", testSTK{width: 8, height: 6, bits: 8, planes: timed(4)}, 4, 1, 1, 0},
		{"two wavelengths", "a.stk", testSTK{width: 8, height: 6, bits: 8, planes: same(4, 0), wavelengths: []uint32{500, 600, 500, 600}}, 1, 2, 2, 0},
		{"absolute Z all distinct (UIC4)", "a.stk", testSTK{width: 8, height: 6, bits: 8, planes: same(4, 0), uic4: absZ}, 4, 1, 1, 0},
		{"Z distances of some planes: Z", "a.stk", testSTK{width: 8, height: 6, bits: 8, planes: someZ}, 4, 1, 1, 0},
		{"... and absolute Z not valid (UIC1): T", "a.stk", testSTK{width: 8, height: 6, bits: 8, planes: someZ,
			uic1: []uicEntry{{id: 41, value: 0}}}, 1, 1, 4, 0},
		{"absolute Z all distinct, not valid: Z", "a.stk", testSTK{width: 8, height: 6, bits: 8, planes: same(4, 0), uic4: absZ,
			uic1: []uicEntry{{id: 41, value: 0}}}, 4, 1, 1, 0},
		{"RGB, two wavelengths: T", "a.stk", testSTK{width: 8, height: 6, bits: 8, rgb: true, planes: same(4, 0), wavelengths: []uint32{500, 600, 500, 600}}, 1, 1, 4, 0},
		{"one plane", "a.stk", testSTK{width: 8, height: 6, bits: 8, planes: same(1, 0)}, 1, 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := mapFile(t, tt.stk.file(t), tt.file, Options{})
			require.NoError(t, err)
			assert.Equal(t, STK, f.Kind)
			require.Len(t, f.Images, 1)
			im := f.Images[0]
			s := im.Spec
			assert.Equal(t, [3]int{tt.z, tt.c, tt.t}, [3]int{s.SizeZ, s.SizeC, s.SizeT}, "Z, C, T")
			assert.Equal(t, pyramid.XYCZT, s.DimensionOrder)
			require.Len(t, im.Planes, len(tt.stk.planes), "every plane")
			for k, pl := range im.Planes {
				assert.Equal(t, tt.stk.pixels(k), readPlane(t, pl.Page), "plane %d", k)
			}
			assert.Equal(t, tt.physZ, s.PhysicalSizeZ)
			if tt.physZ > 0 {
				assert.Equal(t, "µm", s.PhysicalSizeZUnit)
			}
			for _, note := range im.Notes { // the fixture's UIC tables are all read
				assert.NotContains(t, note, "not read")
			}
		})
	}
}

// TestSTKMetadata: the calibration, name, date, description, wavelengths
// and the rest of the UIC tags of a Z stack.
func TestSTKMetadata(t *testing.T) {
	f, err := mapFile(t, zStack().file(t), "a.stk", Options{})
	require.NoError(t, err)
	s := f.Images[0].Spec
	assert.Equal(t, "cells 1", s.Name)
	assert.Equal(t, [2]float64{0.25, 0.25}, [2]float64{s.PhysicalSizeX, s.PhysicalSizeY})
	assert.Equal(t, [2]string{"µm", "µm"}, [2]string{s.PhysicalSizeXUnit, s.PhysicalSizeYUnit})
	assert.Equal(t, time.Date(2000, 2, 2, 15, 6, 2, 783e6, pyramid.NoZone), s.AcquisitionDate)
	assert.Equal(t, "Exposure: 100 ms", s.Description)
	require.Len(t, s.Channels, 1)
	assert.Equal(t, pyramid.Quantity{Value: 520, Unit: "nm"}, s.Channels[0].EmissionWavelength)
	kv := map[string]string{}
	for _, a := range s.Annotations {
		kv[a.Key] = a.Value
	}
	for k, v := range map[string]string{"MinScale": "3", "MaxScale": "4095", "CalibrationUnits": "um", "XCalibration": "0.25",
		"CreateTime": "2000-02-02T15:06:02.783", "ZDistance[2]": "2", "PlaneDescription[1]": "plane 2", "Wavelength[0]": "520",
		"DatetimeCreated[1]": "2000-02-02T15:06:02.783", "Software": "MetaMorph 7.8"} {
		assert.Equal(t, v, kv[k], k)
	}
}

// TestSTKStage: the stage positions and labels of UIC4, and an image
// calibrated in pixels (no physical size, said).
func TestSTKStage(t *testing.T) {
	s := testSTK{width: 8, height: 6, bits: 8, planes: []stkPlane{{0, 1, 2451576, 0}, {0, 1, 2451576, 1000}},
		uic1: []uicEntry{{id: 4, data: uicRat(1, 1)}, {id: 5, data: uicRat(1, 1)}, {id: 6, data: uicStr("pixel")}}}
	s.uic4 = append([]byte{28, 0}, append(append(uicRat(3, 2), uicRat(5, 1)...), append(uicRat(7, 1), uicRat(1, 4)...)...)...)
	s.uic4 = append(append(s.uic4, 37, 0), append(uicStr("Pos A"), uicStr("Pos B")...)...)
	s.uic4 = append(append(s.uic4, 41, 0), make([]byte, 8)...) // AbsoluteZValid: 0
	s.uic4 = append(s.uic4, 0, 0)
	f, err := mapFile(t, s.file(t), "a.stk", Options{})
	require.NoError(t, err)
	im := f.Images[0]
	assert.Equal(t, [3]int{1, 1, 2}, [3]int{im.Spec.SizeZ, im.Spec.SizeC, im.Spec.SizeT})
	rf := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "reference frame"} }
	sec := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "s"} }
	assert.Equal(t, []pyramid.Plane{{T: 0, DeltaT: sec(0), PositionX: rf(1.5), PositionY: rf(5), PositionZ: rf(0)},
		{T: 1, DeltaT: sec(1), PositionX: rf(7), PositionY: rf(0.25), PositionZ: rf(0)}}, im.Spec.PlaneInfo)
	kv := map[string]string{}
	for _, a := range im.Spec.Annotations {
		kv[a.Key] = a.Value
	}
	assert.Equal(t, []string{"Pos A", "Pos B"}, []string{kv["StageLabel[0]"], kv["StageLabel[1]"]})
	assert.Zero(t, im.Spec.PhysicalSizeX)
	assert.Contains(t, im.Notes, `its CalibrationUnits is "pixel": no physical pixel size`)
	assert.Empty(t, slices.DeleteFunc(slices.Clone(im.Notes), func(n string) bool { return !strings.Contains(n, "UIC4") }))
}

// TestSTKStageRepeated: a StagePosition item given twice is its second,
// as Bio-Formats and tifffile read it (the positions were dropped).
func TestSTKStageRepeated(t *testing.T) {
	s := testSTK{width: 8, height: 6, bits: 8, planes: []stkPlane{{0, 1, 2451576, 0}, {0, 1, 2451576, 1000}}}
	pos := func(a, b, c, d int) []byte {
		return append([]byte{28, 0}, append(append(uicRat(uint32(a), 1), uicRat(uint32(b), 1)...), append(uicRat(uint32(c), 1), uicRat(uint32(d), 1)...)...)...)
	}
	s.uic4 = append(append(pos(1, 2, 3, 4), pos(5, 6, 7, 8)...), 0, 0)
	f, err := mapFile(t, s.file(t), "a.stk", Options{})
	require.NoError(t, err)
	rf := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "reference frame"} }
	sec := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "s"} }
	assert.Equal(t, []pyramid.Plane{{T: 0, DeltaT: sec(0), PositionX: rf(5), PositionY: rf(6), PositionZ: rf(0)},
		{T: 1, DeltaT: sec(1), PositionX: rf(7), PositionY: rf(8), PositionZ: rf(0)}}, f.Images[0].Spec.PlaneInfo)
}

// TestSTKPlaneCounts: the UIC4 items hold the UIC4tag's count of planes'
// values, and Z is counted from as many Z distances (the IFDs' count
// without a UIC4tag), as Bio-Formats reads them; the image has the
// UIC2tag's planes; counts that disagree are noted.
func TestSTKPlaneCounts(t *testing.T) {
	planes := func(z ...uint32) []stkPlane {
		out := make([]stkPlane, len(z))
		for i := range out {
			out[i] = stkPlane{z[i], 2, 2451576, uint32(1000 * i)}
		}
		return out
	}
	// uic4 is a UIC4 table of m planes: stage positions (k, 10k) and
	// absolute Z positions (all distinct).
	uic4 := func(m int) []byte {
		out := []byte{28, 0}
		for k := range m {
			out = append(append(out, uicRat(uint32(k), 1)...), uicRat(uint32(10*k), 1)...)
		}
		out = append(out, 40, 0)
		for k := range m {
			out = append(out, uicRat(uint32(k+5), 1)...)
		}
		return append(out, 0, 0)
	}
	rf := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "reference frame"} }
	tests := []struct {
		name      string
		stk       testSTK
		z, c, t   int
		positions []pyramid.Plane
		note      string
	}{
		{"UIC4 of fewer planes: Z of its count", testSTK{planes: planes(0, 0, 0, 0), uic4: uic4(2), uic4Count: 2}, 2, 1, 2,
			[]pyramid.Plane{{PositionX: rf(0), PositionY: rf(0)}, {Z: 1, PositionX: rf(1), PositionY: rf(10)}},
			"its UIC4tag says 2 planes and its UIC2tag 4: the UIC4 items (and UIC1's per-plane ones) are read for 2 planes, and Z counted from the first 2 Z distances, as Bio-Formats reads them"},
		{"UIC4 of more planes: Z of the UIC2's", testSTK{planes: planes(0, 0, 0, 0), uic4: uic4(6), uic4Count: 6}, 4, 1, 1,
			[]pyramid.Plane{{PositionX: rf(0), PositionY: rf(0)}, {Z: 1, PositionX: rf(1), PositionY: rf(10)},
				{Z: 2, PositionX: rf(2), PositionY: rf(20)}, {Z: 3, PositionX: rf(3), PositionY: rf(30)}},
			"its UIC4tag says 6 planes and its UIC2tag 4: the UIC4 items (and UIC1's per-plane ones) are read for 6 planes, and Z counted from the first 4 Z distances, as Bio-Formats reads them"},
		{"no UIC4: Z of the first plane's Z distance", testSTK{planes: planes(0, 1, 1, 1), noUIC4: true}, 1, 1, 4, nil,
			"it has no UIC4tag: UIC1's per-plane items are read for its 1 IFDs, not its UIC2tag's 4 planes, and Z counted from the first 1 Z distances, as Bio-Formats reads them"},
		{"UIC3 of fewer planes", testSTK{planes: planes(0, 0, 0, 0), wavelengths: []uint32{500, 600}}, 1, 2, 2, nil,
			"its UIC3tag gives 2 wavelengths for its UIC2tag's 4 planes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.stk.width, tt.stk.height, tt.stk.bits = 8, 6, 8
			f, err := mapFile(t, tt.stk.file(t), "a.stk", Options{})
			require.NoError(t, err)
			im := f.Images[0]
			require.Len(t, im.Planes, len(tt.stk.planes), "the UIC2tag's planes")
			for k, pl := range im.Planes {
				assert.Equal(t, tt.stk.pixels(k), readPlane(t, pl.Page), "plane %d", k)
			}
			s := im.Spec
			assert.Equal(t, [3]int{tt.z, tt.c, tt.t}, [3]int{s.SizeZ, s.SizeC, s.SizeT}, "Z, C, T")
			var positions []pyramid.Plane // the planes' of a position
			for _, pl := range s.PlaneInfo {
				if pl.PositionX.Unit != "" {
					pl.DeltaT, pl.PositionZ = pyramid.Quantity{}, pyramid.Quantity{}
					positions = append(positions, pl)
				}
			}
			assert.Equal(t, tt.positions, positions)
			assert.Contains(t, im.Notes, tt.note)
			for _, note := range im.Notes {
				assert.NotContains(t, note, "not read")
			}
		})
	}
}

// TestSTKBigEndian: the UIC tables of a big-endian STK are read in its
// byte order, as Bio-Formats reads them (they were only noted).
func TestSTKBigEndian(t *testing.T) {
	be := binary.BigEndian
	s := testSTK{width: 8, height: 6, bits: 8, bigEndian: true,
		planes:      []stkPlane{{2, 1, 2451576, 54362783}, {2, 1, 2451576, 54363783}, {2, 1, 2451576, 54364783}},
		wavelengths: []uint32{520, 520, 520},
		uic1: []uicEntry{{id: 4, data: uicRatIn(be, 1, 4)}, {id: 5, data: uicRatIn(be, 1, 4)}, {id: 6, data: uicStrIn(be, "um")},
			{id: 7, data: uicStrIn(be, "cells BE")}, {id: 16, data: uicRatIn(be, 2451576, 54362783)}},
	}
	s.uic4 = []byte{0, 28}
	for k := range 3 {
		s.uic4 = append(append(s.uic4, uicRatIn(be, uint32(k+1), 2)...), uicRatIn(be, 7, 1)...)
	}
	s.uic4 = append(s.uic4, 0, 37)
	for _, l := range []string{"Pos A", "Pos B", "Pos C"} {
		s.uic4 = append(s.uic4, uicStrIn(be, l)...)
	}
	s.uic4 = append(s.uic4, 0, 0)
	f, err := mapFile(t, s.file(t), "a.stk", Options{})
	require.NoError(t, err)
	im := f.Images[0]
	require.Len(t, im.Planes, 3)
	for k, pl := range im.Planes {
		assert.Equal(t, s.pixels(k), readPlane(t, pl.Page), "plane %d", k)
	}
	sp := im.Spec
	assert.Equal(t, "cells BE", sp.Name)
	assert.Equal(t, [3]int{3, 1, 1}, [3]int{sp.SizeZ, sp.SizeC, sp.SizeT}, "Z, C, T")
	assert.Equal(t, [3]float64{0.25, 0.25, 2}, [3]float64{sp.PhysicalSizeX, sp.PhysicalSizeY, sp.PhysicalSizeZ})
	assert.Equal(t, time.Date(2000, 2, 2, 15, 6, 2, 783e6, pyramid.NoZone), sp.AcquisitionDate)
	rf := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "reference frame"} }
	require.Len(t, sp.PlaneInfo, 3)
	for k, pl := range sp.PlaneInfo {
		assert.Equal(t, [3]int{k, 0, 0}, [3]int{pl.Z, pl.C, pl.T})
		assert.Equal(t, [2]pyramid.Quantity{rf(float64(k+1) / 2), rf(7)}, [2]pyramid.Quantity{pl.PositionX, pl.PositionY}, "plane %d", k)
	}
	kv := map[string]string{}
	for _, a := range sp.Annotations {
		kv[a.Key] = a.Value
	}
	assert.Equal(t, []string{"Pos A", "Pos C", "2000-02-02T15:06:04.783", "2"},
		[]string{kv["StageLabel[0]"], kv["StageLabel[2]"], kv["DatetimeCreated[2]"], kv["ZDistance[1]"]})
	assert.Empty(t, im.Notes)
}

// TestSTKDeltaT: each plane's creation time (UIC2) is its DeltaT, the
// seconds since the first plane's, as Bio-Formats sets it; a plane whose
// time is no date has none, and none has one when the first plane's is
// no date (said).
func TestSTKDeltaT(t *testing.T) {
	sec := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "s"} }
	tests := []struct {
		name   string
		planes []stkPlane
		deltaT []pyramid.Quantity // each plane's, in order
		note   string
	}{
		{"time series", []stkPlane{{0, 1, 2451576, 1000}, {0, 1, 2451576, 2500}, {0, 1, 2451577, 500}},
			[]pyramid.Quantity{sec(0), sec(1.5), sec(86399.5)}, ""},
		{"Z stack, one time", []stkPlane{{1, 1, 2451576, 1000}, {1, 1, 2451576, 1000}},
			[]pyramid.Quantity{sec(0), sec(0)}, ""},
		{"a plane's time no date", []stkPlane{{0, 1, 2451576, 1000}, {0, 1, 0, 0}, {0, 1, 2451576, 3000}},
			[]pyramid.Quantity{sec(0), {}, sec(2)}, ""},
		{"the first plane's time no date", []stkPlane{{0, 1, 0, 0}, {0, 1, 2451576, 1000}},
			nil, "its first plane's creation time (UIC2tag) is no date: the planes' creation times are not their DeltaT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSTK{width: 8, height: 6, bits: 8, planes: tt.planes}
			f, err := mapFile(t, s.file(t), "a.stk", Options{})
			require.NoError(t, err)
			im := f.Images[0]
			var got []pyramid.Quantity
			for _, pl := range im.Spec.PlaneInfo {
				if pl.DeltaT == (pyramid.Quantity{}) {
					continue
				}
				k, err := im.Spec.PlaneIndex(pl.Z, pl.C, pl.T)
				require.NoError(t, err)
				for len(got) < k {
					got = append(got, pyramid.Quantity{})
				}
				got = append(got, pl.DeltaT)
			}
			assert.Equal(t, tt.deltaT, got)
			if tt.note != "" {
				assert.Contains(t, im.Notes, tt.note)
			}
			mappedOK(t, f) // a spec the writer takes
		})
	}
}

// TestSTKPositionZ: each plane's Z position is, as Bio-Formats sets it,
// the first plane's absolute Z when its AbsoluteZValid is 1 (else 0), plus
// each plane's Z distance, or the first plane's when its own is 0.
func TestSTKPositionZ(t *testing.T) {
	rf := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "reference frame"} }
	planes := []stkPlane{{1, 2, 2451576, 0}, {0, 1, 2451576, 0}, {3, 2, 2451576, 0}} // 0.5, 0 and 1.5
	absZ := append([]byte{40, 0}, append(append(uicRat(10, 1), uicRat(20, 1)...), uicRat(30, 1)...)...)
	valid := func(v byte) []byte { return append([]byte{41, 0}, v, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) }
	for _, tt := range []struct {
		name string
		uic4 []byte
		uic1 []uicEntry
		want []pyramid.Quantity
	}{
		{"absolute Z valid", append(append(slices.Clone(absZ), valid(1)...), 0, 0), nil, []pyramid.Quantity{rf(10), rf(10.5), rf(12)}},
		{"absolute Z not valid", append(append(slices.Clone(absZ), valid(0)...), 0, 0), nil, []pyramid.Quantity{rf(0), rf(0.5), rf(2)}},
		{"absolute Z without validity", append(slices.Clone(absZ), 0, 0), nil, []pyramid.Quantity{rf(0), rf(0.5), rf(2)}},
		{"validity in UIC1", append(slices.Clone(absZ), 0, 0), []uicEntry{{id: 41, data: []byte{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}}},
			[]pyramid.Quantity{rf(10), rf(10.5), rf(12)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := testSTK{width: 8, height: 6, bits: 8, planes: planes, uic4: tt.uic4, uic1: tt.uic1}
			f, err := mapFile(t, s.file(t), "a.stk", Options{})
			require.NoError(t, err)
			var got []pyramid.Quantity
			for _, pl := range f.Images[0].Spec.PlaneInfo {
				got = append(got, pl.PositionZ)
			}
			assert.Equal(t, tt.want, got)
			mappedOK(t, f)
		})
	}
}

// TestSTKNegative: the UIC rationals are signed, as Bio-Formats reads
// them: positions below the stage's or the focus's origin are negative.
func TestSTKNegative(t *testing.T) {
	neg := func(v int32) uint32 { return uint32(v) }
	rf := func(v float64) pyramid.Quantity { return pyramid.Quantity{Value: v, Unit: "reference frame"} }
	uic4 := append([]byte{28, 0}, append(append(uicRat(neg(-100), 1), uicRat(neg(-200), 1)...), append(uicRat(5, 1), uicRat(6, 1)...)...)...)
	uic4 = append(append(uic4, 40, 0), append(uicRat(neg(-10), 1), uicRat(neg(-12), 1)...)...)
	uic4 = append(append(uic4, 41, 0), 1, 0, 0, 0, 1, 0, 0, 0)
	s := testSTK{width: 4, height: 4, bits: 8, planes: []stkPlane{{0, 1, 2451576, 0}, {neg(-2), 1, 2451576, 0}}, uic4: append(uic4, 0, 0)}
	f, err := mapFile(t, s.file(t), "a.stk", Options{})
	require.NoError(t, err)
	var got [][3]pyramid.Quantity
	for _, pl := range f.Images[0].Spec.PlaneInfo {
		got = append(got, [3]pyramid.Quantity{pl.PositionX, pl.PositionY, pl.PositionZ})
	}
	assert.Equal(t, [][3]pyramid.Quantity{{rf(-100), rf(-200), rf(-10)}, {rf(5), rf(6), rf(-12)}}, got)
}

// TestSTKExposure: the descriptions' last "Exposure" line that reads is
// every plane's exposure, as Bio-Formats reads them.
func TestSTKExposure(t *testing.T) {
	for _, tt := range []struct {
		description string
		want        pyramid.Quantity
	}{
		{"Acquired from MetaMorph\nExposure: 100 ms\nGain: 2", pyramid.Quantity{Value: 0.1, Unit: "s"}},
		{"Acquired.Exposure: 5,5 ms", pyramid.Quantity{Value: 0.0055, Unit: "s"}},
		{"Camera: x\r\nExposure: Exp = 20 ms", pyramid.Quantity{Value: 0.02, Unit: "s"}},
		{"Exposure: long", pyramid.Quantity{}},
		{"Exposure: -5 ms", pyramid.Quantity{Value: -0.005, Unit: "s"}},
		{"Exposure: 100 ms\x00Exposure: 200 ms", pyramid.Quantity{Value: 0.2, Unit: "s"}}, // the planes' descriptions, the last
		{"Exposure: n/a\nExposure: 50 ms", pyramid.Quantity{Value: 0.05, Unit: "s"}},
		{"Exposure: 50 ms\nExposure: n/a", pyramid.Quantity{Value: 0.05, Unit: "s"}},
		{"Exposure: 1e300 ms", pyramid.Quantity{}},
		{"<MetaData>\nExposure: 100 ms", pyramid.Quantity{}},
		{"exposure: 100 ms", pyramid.Quantity{}},
	} {
		s := testSTK{width: 8, height: 6, bits: 8, planes: []stkPlane{{0, 1, 2451576, 0}, {0, 1, 2451576, 0}}, description: tt.description}
		f, err := mapFile(t, s.file(t), "a.stk", Options{})
		require.NoError(t, err)
		sp := f.Images[0].Spec
		require.Len(t, sp.PlaneInfo, 2, tt.description)
		for _, pl := range sp.PlaneInfo {
			assert.Equal(t, tt.want, pl.ExposureTime, tt.description)
		}
		mappedOK(t, f)
	}
}

// TestSTKNotNumbers: stage positions and absolute Z positions of a
// denominator 0 are not read, noted: no plane is given a position that is
// no number, which the writer refuses (the image was lost then).
func TestSTKNotNumbers(t *testing.T) {
	planes := []stkPlane{{1, 1, 2451576, 0}, {1, 1, 2451576, 1000}}
	for _, tt := range []struct {
		name, note string
		uic4       []byte
	}{
		{"stage position", "its stage positions have a denominator of 0: not read",
			append([]byte{28, 0}, append(append(uicRat(1, 0), uicRat(5, 1)...), append(uicRat(2, 1), uicRat(6, 1)...)...)...)},
		{"absolute Z", "its absolute Z positions have a denominator of 0: not read",
			append([]byte{40, 0}, append(uicRat(1, 0), uicRat(1, 0)...)...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := testSTK{width: 4, height: 4, bits: 8, planes: planes, uic4: append(tt.uic4, 0, 0)}
			f, err := mapFile(t, s.file(t), "a.stk", Options{})
			require.NoError(t, err)
			assert.Contains(t, f.Images[0].Notes, tt.note)
			for _, pl := range f.Images[0].Spec.PlaneInfo {
				assert.Empty(t, pl.PositionX.Unit)
			}
			mappedOK(t, f)
		})
	}
}

// TestSTKZDistanceNotNumber: Z distances of a denominator 0 count along
// Z, as Bio-Formats counts them (it reads them as the largest double),
// but give no Z step or position; a note says so.
func TestSTKZDistanceNotNumber(t *testing.T) {
	s := testSTK{width: 4, height: 4, bits: 8, planes: []stkPlane{{1, 0, 2451576, 0}, {1, 0, 2451576, 0}, {0, 1, 2451576, 0}}}
	f, err := mapFile(t, s.file(t), "a.stk", Options{})
	require.NoError(t, err)
	sp := f.Images[0].Spec
	assert.Equal(t, [3]int{3, 1, 1}, [3]int{sp.SizeZ, sp.SizeC, sp.SizeT}, "1 and the 2 distances that are not 0")
	assert.Zero(t, sp.PhysicalSizeZ)
	for _, pl := range sp.PlaneInfo {
		assert.Empty(t, pl.PositionZ.Unit)
	}
	assert.Contains(t, joined(f.Images[0].Notes), "its UIC2tag's Z distances have a denominator of 0: counted along Z as Bio-Formats counts them")
	mappedOK(t, f)
}

// patchCount sets the count of the tag's entry in a little-endian classic
// TIFF's first directory.
func patchCount(t *testing.T, file []byte, tag uint16, count uint32) {
	t.Helper()
	o := binary.LittleEndian
	dir := o.Uint32(file[4:])
	for i := range int(o.Uint16(file[dir:])) {
		if e := file[int(dir)+2+12*i:]; o.Uint16(e) == tag {
			o.PutUint32(e[4:], count)
			return
		}
	}
	t.Fatalf("no tag %d", tag)
}

// TestSTKUIC4CountZero: a UIC4tag of count 0 has no table to read, and
// the per-plane items are read for the IFDs, as Bio-Formats reads them;
// the note says so.
func TestSTKUIC4CountZero(t *testing.T) {
	s := testSTK{width: 4, height: 4, bits: 8, planes: []stkPlane{{1, 1, 2451576, 0}, {1, 1, 2451576, 1000}}}
	file := s.file(t)
	patchCount(t, file, tiff.TagUIC4, 0)
	f, err := mapFile(t, file, "a.stk", Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"its UIC4tag has a count of 0: its table is not read, and UIC1's per-plane items are read for its 1 IFDs, and Z counted from the first 1 Z distances, as Bio-Formats reads them"},
		f.Images[0].Notes)
}

// FuzzSTK maps STKs of a few 2x2 planes whose UIC4 table, UIC4tag count,
// UIC2 rows, byte order and description (MetaData XML, say) are
// arbitrary: errors must be typed, and what is mapped a spec the writer
// takes.
func FuzzSTK(f *testing.F) {
	stage := append([]byte{28, 0}, append(append(uicRat(3, 2), uicRat(5, 1)...), append(uicRat(7, 1), uicRat(1, 4)...)...)...)
	stage = append(append(stage, 40, 0), append(uicRat(10, 1), uicRat(20, 1)...)...)
	stage = append(append(stage, 41, 0), 1, 0, 0, 0, 1, 0, 0, 0)
	stage = append(append(stage, 37, 0), append(uicStr("Pos A"), uicStr("Pos B")...)...)
	f.Add(stage, uint16(2), uint8(2), false, []byte{1, 0, 0, 0, 2, 0, 0, 0, 0x18, 0x68, 0x25, 0, 0x10, 0, 0, 0}, "")
	f.Add(stage, uint16(5), uint8(3), true, []byte{}, "")
	f.Add([]byte{}, uint16(0), uint8(1), false, []byte{}, "")
	// Planes described by MetaData XML: times, Z positions, exposures.
	xml := xmlSTK(stkXMLPlane{0, "1", []string{"100"}, []string{"spatial-calibration-x", "0.5", "spatial-calibration-y", "0.5", "wavelength", "488"}},
		stkXMLPlane{1.5, "2", []string{"200"}, nil})
	f.Add(stage, uint16(2), uint8(2), false, []byte{}, xml.description)
	f.Fuzz(func(t *testing.T, uic4 []byte, count uint16, planes uint8, big bool, rows []byte, description string) {
		if len(uic4) > 1<<14 || planes == 0 || planes > 64 || len(description) > 1<<16 {
			return
		}
		s := testSTK{width: 2, height: 2, bits: 8, uic4: append(uic4, 0, 0), uic4Count: int(count), bigEndian: big, description: description}
		for k := range int(planes) {
			p := stkPlane{1, 1, 2451576, uint32(k)}
			if r := rows[min(16*k, len(rows)):]; len(r) >= 16 {
				p = stkPlane{binary.LittleEndian.Uint32(r), binary.LittleEndian.Uint32(r[4:]), binary.LittleEndian.Uint32(r[8:]), binary.LittleEndian.Uint32(r[12:])}
			}
			s.planes = append(s.planes, p)
		}
		mapFuzzed(t, s.file(t), big)
	})
}

// TestSTKRefused: a compressed STK of several planes, and one whose
// planes the file does not hold, are refused with typed errors; with
// SkipUnsupported the first is left out and the second keeps what the
// file holds, said.
func TestSTKRefused(t *testing.T) {
	lzw := zStack()
	lzw.compression = tiff.CompressionLZW
	_, err := mapFile(t, lzw.file(t), "a.stk", Options{})
	require.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "Compression 5 (LZW)")
	_, err = mapFile(t, lzw.file(t), "a.stk", Options{SkipUnsupported: true})
	require.ErrorIs(t, err, ErrUnsupported)

	padded := zStack()
	padded.padding = 2
	_, err = mapFile(t, padded.file(t), "a.stk", Options{})
	require.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "stores 242 bytes for a plane of 240")

	cut := zStack()
	cut.missing = 297
	_, err = mapFile(t, cut.file(t), "a.stk", Options{})
	require.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, "says 300 planes")
	f, err := mapFile(t, cut.file(t), "a.stk", Options{SkipUnsupported: true})
	require.NoError(t, err)
	require.Len(t, f.Skipped, 1)
	assert.Len(t, f.Images[0].Planes, 1)
	assert.Contains(t, f.Images[0].Notes, "its UIC2tag says 300 planes, and the file holds 1")

	bad := zStack()
	bad.uic1 = []uicEntry{{id: 7, value: 1 << 30}, {id: 99, value: 1}}
	f, err = mapFile(t, bad.file(t), "a.stk", Options{})
	require.NoError(t, err, "UIC values past the end are noted, not fatal")
	assert.Contains(t, f.Images[0].Notes, "its UIC1tag's entries of ids 99 are not read")
	assert.Contains(t, f.Images[0].Notes, "its UIC1tag's Name is not read: tiff: malformed file: 4 bytes at 1073741824, past the end of the 1156-byte file")
	assert.Len(t, f.Images[0].Planes, 3)
	assert.Empty(t, f.Images[0].Spec.Name, "a name past the end of the file is not read")
}

// tifffileSTK prints what tifffile reads of an STK: its series' kind,
// shape, axes and name, then the MD5 of each plane's little-endian
// samples, a line each.
const tifffileSTK = `
import sys, hashlib, tifffile
with tifffile.TiffFile(sys.argv[1]) as t:
    s = t.series[0]
    print(s.kind, 'x'.join(map(str, s.shape)), s.axes, s.name)
    data = s.asarray()
    for plane in data.reshape((-1,) + data.shape[-2:]):
        print(hashlib.md5(plane.astype(plane.dtype.newbyteorder('<')).tobytes()).hexdigest())
`

// TestInteropSTK: tifffile reads the test STKs as series of kind stk of
// as many planes, the first plane's UIC Name their name, and each plane's
// pixels the mapping's.
func TestInteropSTK(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	dir := t.TempDir()
	timed := testSTK{width: 8, height: 6, bits: 8, rowsPerStrip: 2}
	for i := range 5 {
		timed.planes = append(timed.planes, stkPlane{0, 1, 2451576, uint32(1000 * i)})
	}
	tests := []struct {
		name, want string
		stk        testSTK
	}{
		{"z.stk", "stk 3x10x12 ZYX cells 1", zStack()},
		{"t.stk", "stk 5x6x8 TYX ", timed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			require.NoError(t, os.WriteFile(path, tt.stk.file(t), 0o644))
			f, err := Open(path, Options{})
			require.NoError(t, err)
			defer f.Close()
			lines := strings.Split(strings.TrimRight(interop.RunPython(t, tifffileSTK, path), "\n"), "\n")
			assert.Equal(t, tt.want, strings.ToLower(lines[0][:3])+lines[0][3:], "tifffile's series")
			im := f.Images[0]
			require.Len(t, lines[1:], len(im.Planes))
			for k, pl := range im.Planes {
				assert.Equal(t, lines[1+k], fmt.Sprintf("%x", md5.Sum(readPlane(t, pl.Page))), "plane %d", k)
			}
		})
	}
}
