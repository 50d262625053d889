package source

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"image/color"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// Zeiss LSM files, as the LSM 510, 710, 780 and 880 confocal microscopes
// (ZEN, AIM) write them: a classic TIFF whose first page has the
// CZ_LSMINFO field (34412), as Bio-Formats' ZeissLSMReader and tifffile's
// is_lsm recognize it. Its value (BYTE) is a binary structure in the
// file's byte order: MagicNumber (0x0300494C or 0x0400494C),
// StructureSize, DimensionX, DimensionY, DimensionZ, DimensionChannels,
// DimensionTime, DataType, ThumbnailX and ThumbnailY (int32 each),
// VoxelSizeX, VoxelSizeY, VoxelSizeZ (float64, metres), OriginX, OriginY,
// OriginZ, ScanType and SpectralScan (uint16), TypeOfData, then the
// absolute file offsets of records (ChannelColors at byte 108,
// TimeStamps at 132...) and, from later versions, more fields
// (DimensionP and DimensionM, the positions and mosaic tiles, at 264
// and 268). lsmFields lists those read.
const tagCZLSMInfo uint16 = 34412

// The magic numbers of CZ_LSMINFO: LSM 1.3 and LSM 2.0 and later.
const (
	lsmMagic13 = 0x0300494C
	lsmMagic20 = 0x0400494C
)

// lsmMinInfo is the shortest CZ_LSMINFO read: up to ScanType, which says
// the order of the planes.
const lsmMinInfo = 90

// Bounds of what the records of CZ_LSMINFO may make the mapping read: a
// ChannelColors record of more bytes, or more time stamps, are not read
// (a note says so). Zeiss's records hold a few hundred bytes and one
// stamp per time point.
const (
	lsmMaxRecord = 1 << 20
	lsmMaxStamps = 1 << 16
)

// lsmField is a field of CZ_LSMINFO: its name (tifffile's), its byte
// offset in the structure, and its kind: 'i' int32, 'u' uint32, 'h'
// uint16, 'd' float64, 'o' the uint32 offset of a record in the file.
type lsmField struct {
	name string
	at   int
	kind byte
}

// size returns the bytes of the field's value: 4 for an int32, uint32 or
// offset ('i', 'u', 'o'), 2 for a uint16 ('h'), 8 for a float64 ('d').
func (f lsmField) size() int {
	switch f.kind {
	case 'h':
		return 2
	case 'd':
		return 8
	}
	return 4
}

// lsmFields are the fields of CZ_LSMINFO read, as tifffile's CZ_LSMINFO
// structure places them (Bio-Formats reads the same bytes).
var lsmFields = []lsmField{
	{"MagicNumber", 0, 'u'}, {"StructureSize", 4, 'i'},
	{"DimensionX", 8, 'i'}, {"DimensionY", 12, 'i'}, {"DimensionZ", 16, 'i'},
	{"DimensionChannels", 20, 'i'}, {"DimensionTime", 24, 'i'}, {"DataType", 28, 'i'},
	{"ThumbnailX", 32, 'i'}, {"ThumbnailY", 36, 'i'},
	{"VoxelSizeX", 40, 'd'}, {"VoxelSizeY", 48, 'd'}, {"VoxelSizeZ", 56, 'd'},
	{"OriginX", 64, 'd'}, {"OriginY", 72, 'd'}, {"OriginZ", 80, 'd'},
	{"ScanType", 88, 'h'}, {"SpectralScan", 90, 'h'}, {"TypeOfData", 92, 'u'},
	{"OffsetVectorOverlay", 96, 'o'}, {"OffsetInputLut", 100, 'o'}, {"OffsetOutputLut", 104, 'o'},
	{"OffsetChannelColors", 108, 'o'}, {"TimeIntervall", 112, 'd'}, {"OffsetChannelDataTypes", 120, 'o'},
	{"OffsetScanInformation", 124, 'o'}, {"OffsetKsData", 128, 'o'}, {"OffsetTimeStamps", 132, 'o'},
	{"OffsetEventList", 136, 'o'}, {"OffsetRoi", 140, 'o'}, {"OffsetBleachRoi", 144, 'o'},
	{"OffsetNextRecording", 148, 'o'},
	// LSM 2.0 ends here.
	{"DisplayAspectX", 152, 'd'}, {"DisplayAspectY", 160, 'd'}, {"DisplayAspectZ", 168, 'd'},
	{"DisplayAspectTime", 176, 'd'}, {"OffsetMeanOfRoisOverlay", 184, 'o'},
	{"OffsetTopoIsolineOverlay", 188, 'o'}, {"OffsetTopoProfileOverlay", 192, 'o'},
	{"OffsetLinescanOverlay", 196, 'o'}, {"ToolbarFlags", 200, 'u'}, {"OffsetChannelWavelength", 204, 'o'},
	{"OffsetChannelFactors", 208, 'o'}, {"ObjectiveSphereCorrection", 212, 'd'},
	{"OffsetUnmixParameters", 220, 'o'},
	// LSM 3.2 and 4.0 end here.
	{"OffsetAcquisitionParameters", 224, 'o'}, {"OffsetCharacteristics", 228, 'o'},
	{"OffsetPalette", 232, 'o'}, {"TimeDifferenceX", 236, 'd'}, {"TimeDifferenceY", 244, 'd'},
	{"TimeDifferenceZ", 252, 'd'}, {"InternalUse1", 260, 'u'}, {"DimensionP", 264, 'i'},
	{"DimensionM", 268, 'i'}, {"OffsetTilePositions", 336, 'o'}, {"OffsetPositions", 376, 'o'},
}

// lsmScanTypes names the ScanType values, as Bio-Formats describes them.
var lsmScanTypes = map[uint64]string{
	0: "x-y-z scan", 1: "z scan (x-z plane)", 2: "line scan", 3: "time series x-y",
	4: "time series x-z", 5: "time series 'Mean of ROIs'", 6: "time series x-y-z",
	7: "spline scan", 8: "spline scan x-z", 9: "time series spline plane x-z", 10: "point mode",
}

// lsmInfo is CZ_LSMINFO as read: the value of each field the structure
// is long enough to hold.
type lsmInfo struct {
	values map[string]uint64 // the bits of each field (a float64's too)
	order  binary.ByteOrder
}

// isLSM reports whether the file is a Zeiss LSM file: its first page has
// CZ_LSMINFO, as Bio-Formats and tifffile test it.
func isLSM(f *tiff.File) bool {
	if f == nil || len(f.Pages) == 0 {
		return false
	}
	_, ok := f.Pages[0].Field(tagCZLSMInfo)
	return ok
}

// parseLSMInfo reads CZ_LSMINFO from page 0: a value of bytes of the
// structure's magic number, as long as the fields up to ScanType, and
// no longer than its StructureSize says (tifffile reads the fields that
// fit in it). Anything else is an error saying why.
func parseLSMInfo(p *tiff.Page) (lsmInfo, error) {
	e, _ := p.Field(tagCZLSMInfo)
	if e.Type.Size() != 1 || e.Value == nil {
		return lsmInfo{}, fmt.Errorf("its type is %v, not bytes", e.Type)
	}
	b, order := e.Value, p.Order()
	if len(b) < lsmMinInfo {
		return lsmInfo{}, fmt.Errorf("%d bytes, fewer than the %d up to ScanType", len(b), lsmMinInfo)
	}
	if m := order.Uint32(b); m != lsmMagic13 && m != lsmMagic20 {
		return lsmInfo{}, fmt.Errorf("its magic number is %#x, not %#x or %#x", m, lsmMagic13, lsmMagic20)
	}
	size := int64(int32(order.Uint32(b[4:])))
	if size < lsmMinInfo {
		return lsmInfo{}, fmt.Errorf("its StructureSize is %d, less than the %d bytes up to ScanType", size, lsmMinInfo)
	}
	b = b[:min(int64(len(b)), size)]
	info := lsmInfo{values: map[string]uint64{}, order: order}
	for _, f := range lsmFields {
		switch n := f.size(); {
		case f.at+n > len(b):
		case n == 2:
			info.values[f.name] = uint64(order.Uint16(b[f.at:]))
		case n == 4:
			info.values[f.name] = uint64(order.Uint32(b[f.at:]))
		default:
			info.values[f.name] = order.Uint64(b[f.at:])
		}
	}
	return info, nil
}

// int returns an int32 field, 0 when the structure lacks it.
func (in lsmInfo) int(name string) int64 { return int64(int32(uint32(in.values[name]))) }

// float returns a float64 field, 0 when the structure lacks it or it is
// not finite.
func (in lsmInfo) float(name string) float64 {
	v := math.Float64frombits(in.values[name])
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// text returns a field as the annotations keep it.
func (in lsmInfo) text(f lsmField) string {
	v := in.values[f.name]
	switch f.kind {
	case 'i':
		return strconv.FormatInt(in.int(f.name), 10)
	case 'd':
		return strconv.FormatFloat(math.Float64frombits(v), 'g', -1, 64)
	case 'h':
		if s, ok := lsmScanTypes[v]; ok && f.name == "ScanType" {
			return fmt.Sprintf("%d (%s)", v, s)
		}
	}
	return strconv.FormatUint(v, 10)
}

// lsm maps a Zeiss LSM file as Bio-Formats' ZeissLSMReader reads it,
// which tifffile's LSM series agrees with:
//   - every second page, from page 0, is a plane of the image (the pages
//     between are thumbnails, marked reduced, which Bio-Formats does not
//     read and tifffile makes a series of its own: they are left out, as
//     the writer makes its own levels, and File.Notes says so);
//   - the samples of each page are the channels (Bio-Formats splits them,
//     whatever PhotometricInterpretation says: three 8-bit samples are
//     three channels, not RGB); the pages are ordered Z then T, or T then
//     Z for the ScanTypes of time series without Z (3, 5, 7 and 9), as
//     Bio-Formats orders them. DimensionZ and DimensionTime say how many
//     of each; when their product is not the number of pages, they are
//     corrected as Bio-Formats does (a note says so);
//   - when DimensionP × DimensionM (positions, mosaic tiles) is more than
//     1, the pages are that many images of as many pages each, in order,
//     as Bio-Formats' series, named as it names them: "name #1" to
//     "name #N", name the file's without its extension (and one image
//     "name");
//   - the physical sizes are VoxelSizeX, Y and Z (metres, in µm), the
//     channels' names and colours those of the ChannelColors record (a
//     black colour is white, as Bio-Formats shows it), the time increment
//     TimeIntervall (seconds) or else the spacing of evenly spaced
//     TimeStamps, and each plane's DeltaT its time stamp's from the first
//     (as Bio-Formats, when there are several time points), and each
//     plane's position its image's in the Positions and TilePositions
//     records (lsmRecords); the other fields of CZ_LSMINFO and the time
//     stamps are the map annotation.
//     The records not read (ScanInformation, the event list, the lookup
//     tables, overlays and ROIs...) are named in a note.
//
// LSM files past 4 GiB have 32-bit strip offsets that wrap: they are
// unwrapped as tifffile does (lsmRelocate); compressed LSM strips have
// the byte counts of the uncompressed data, corrected as tifffile does;
// and the BitsPerSample that old writers stored at an offset is read
// there (lsmBits), as tifffile reads it.
//
// A CZ_LSMINFO that cannot be read (short, of another magic number) is
// ErrMetadata; with SkipUnsupported the file is read as a plain TIFF,
// the error listed in File.Skipped.
func (m *mapper) lsm() error {
	tf := m.file.TIFF
	info, err := parseLSMInfo(tf.Pages[0])
	if err != nil {
		return m.plainTIFF(fmt.Errorf("%w: the CZ_LSMINFO field (34412) of the Zeiss LSM file cannot be read (%v)", ErrMetadata, err))
	}
	m.file.Kind = LSM
	var planes, thumbs []*tiff.Page
	for i, p := range tf.Pages {
		if i%2 == 0 {
			planes = append(planes, p)
		} else {
			thumbs = append(thumbs, p)
		}
	}
	positions := int64(1)
	if p := info.int("DimensionP") * info.int("DimensionM"); p > 1 && info.int("DimensionP") > 0 {
		positions = p
	}
	if planes, err = m.lsmRelocate(planes, positions); err != nil {
		return m.skipImage(fmt.Errorf("the image of the Zeiss LSM file: %w", err))
	}
	bitsNote := ""
	for i, p := range planes {
		if planes[i], err = lsmBits(tf, p); err != nil {
			return err
		}
		if planes[i] != p {
			e, _ := planes[i].Field(tiff.TagBitsPerSample)
			v, _ := e.Uints()
			bitsNote = fmt.Sprintf("the BitsPerSample of its pages (two values) lies at the offset their entry's bytes make, as old Zeiss writers stored it and tifffile reads it: %v", v)
		}
		// DataType 5 is 32-bit float (tifffile's and Zeiss's table; Bio-Formats
		// takes any 32-bit LSM for floats), which Zeiss's pages do not say.
		if _, ok := planes[i].Field(tiff.TagSampleFormat); !ok && info.int("DataType") == 5 {
			l, err := planes[i].Layout()
			if err == nil && l.BitsPerSample == 32 {
				samples := make([]byte, 0, 2*l.SamplesPerPixel)
				for range l.SamplesPerPixel {
					samples = binary.LittleEndian.AppendUint16(samples, tiff.SampleFormatFloat)
				}
				if planes[i], err = planes[i].WithField(ifd.Entry{Tag: tiff.TagSampleFormat, Type: ifd.Short, Count: uint64(l.SamplesPerPixel), Value: samples}); err != nil {
					return err
				}
			}
		}
	}
	if len(thumbs) > 0 {
		w, _ := thumbs[0].Uint(tiff.TagImageWidth)
		h, _ := thumbs[0].Uint(tiff.TagImageLength)
		m.file.Notes = append(m.file.Notes, fmt.Sprintf("its %d thumbnails (every second page, %d x %d) are left out, as Bio-Formats leaves them: the writer makes its own levels",
			len(thumbs), w, h))
	}
	var notes []string
	if positions > 1 && int64(len(planes))%positions != 0 {
		notes = append(notes, fmt.Sprintf("CZ_LSMINFO says %d positions (DimensionP x DimensionM) for %d planes: they are read as one image",
			positions, len(planes)))
		positions = 1
	}
	per := len(planes) / int(positions)
	recs, recordNotes := m.lsmRecords(info, int(positions))
	notes = append(notes, recordNotes...)
	if bitsNote != "" {
		notes = append(notes, bitsNote)
	}
	for k := range int(positions) {
		im, err := m.lsmImage(info, planes[k*per:(k+1)*per], k*per*2)
		if err != nil {
			return err
		}
		if im == nil {
			continue
		}
		im.Notes = append(im.Notes, notes...)
		if base := strings.TrimSuffix(m.name, path.Ext(m.name)); base != "" {
			// Bio-Formats names each series so: the file's name without
			// its extension, and the position's number from 1 when there
			// are several.
			im.Spec.Name = base
			if positions > 1 {
				im.Spec.Name += " #" + strconv.Itoa(k+1)
			}
		}
		var at *[3]float64
		if k < len(recs.positions) {
			if p := recs.positions[k]; slices.ContainsFunc(p[:], func(v float64) bool { return !(math.Abs(v) <= math.MaxFloat32) }) {
				// OME's positions are xsd:float: one past it cannot be written.
				im.Notes = append(im.Notes, fmt.Sprintf("its stage coordinates (%g, %g, %g µm) are not carried: past a float's range", p[0], p[1], p[2]))
			} else {
				at = &recs.positions[k]
			}
		}
		// Every position has as many time points: its stamps follow the
		// positions' before it, those of images left out too.
		lsmDescribe(im, info, recs, k*im.Spec.SizeT, at)
		m.add(im)
	}
	return nil
}

// lsmImage makes the image of the planes (pages), the first the file's
// page first; nil when it is left out (skipImage).
func (m *mapper) lsmImage(info lsmInfo, planes []*tiff.Page, first int) (*Image, error) {
	l, err := m.layout(planes[0])
	if err != nil {
		return nil, m.skipImage(fmt.Errorf("the image of the Zeiss LSM file (page %d): %w", first, err))
	}
	l.rgb = false // the samples are channels, as Bio-Formats splits them
	for i, p := range planes[1:] {
		lp, err := m.layout(p)
		lp.rgb = false
		if err == nil && !sameShape(l, lp) {
			err = fmt.Errorf("%w: it is %v, unlike page %d (%v)", ErrUnsupported, lp, first, l)
		}
		if err != nil {
			return nil, m.skipImage(fmt.Errorf("plane %d of the image of the Zeiss LSM file (page %d): %w", i+1, first+2*(i+1), err))
		}
	}
	im := genericImage(planes, l, nil)
	s := &im.Spec
	s.Name, s.Description = "", ""
	n := int64(len(planes))
	z, t := max(info.int("DimensionZ"), 1), max(info.int("DimensionTime"), 1)
	if z > n || t > n || z*t != n {
		// Bio-Formats' correction: the count of one axis from the other.
		oz, ot := z, t
		switch {
		case n%z == 0:
			t = n / z
		case n%t == 0:
			z = n / t
		case z > 1:
			z, t = n, 1
		default:
			z, t = 1, n
		}
		im.Notes = append(im.Notes, fmt.Sprintf("CZ_LSMINFO says Z %d and T %d for %d planes: read as Z %d and T %d, as Bio-Formats reads them",
			oz, ot, n, z, t))
	}
	s.SizeZ, s.SizeT, s.SizeC = int(z), int(t), l.samples
	s.DimensionOrder = pyramid.XYCZT
	switch info.values["ScanType"] {
	case 3, 5, 7, 9: // time series without Z: T before Z
		s.DimensionOrder = pyramid.XYCTZ
	}
	if c := info.int("DimensionChannels"); c != int64(l.samples) {
		im.Notes = append(im.Notes, fmt.Sprintf("CZ_LSMINFO says %d channels, and its pages have %d samples: the samples are the channels, as Bio-Formats reads them",
			c, l.samples))
	}
	if x, y := info.int("DimensionX"), info.int("DimensionY"); x != int64(l.width) || y != int64(l.height) {
		im.Notes = append(im.Notes, fmt.Sprintf("CZ_LSMINFO says %d x %d pixels, and its pages are %d x %d: the pages' size is read",
			x, y, l.width, l.height))
	}
	// The pages' planes in file order are the planes in the image's
	// order: the samples, then Z and T (or T and Z) as the pages go.
	return im, nil
}

// lsmBits returns the page with its BitsPerSample read as tifffile reads
// an LSM page's of two values: old Zeiss writers stored the two SHORTs
// at an offset, though they fit in the entry, which then holds the
// offset. tifffile takes every such field so; here only one whose
// values, read as TIFF has them, are not a bit depth LSM files have (8,
// 16 or 32 bits, alike for both samples), and whose values at the offset
// are: a page of two inline values of 8 or 16 bits is read as stored.
func lsmBits(tf *tiff.File, p *tiff.Page) (*tiff.Page, error) {
	e, ok := p.Field(tiff.TagBitsPerSample)
	if !ok || e.Count != 2 || e.Type != ifd.Short {
		return p, nil
	}
	v, err := e.Uints()
	sound := func(a, b uint64) bool { return a == b && (a == 8 || a == 16 || a == 32) }
	if err != nil || sound(v[0], v[1]) {
		return p, nil
	}
	// The entry's four bytes as the file stores them, read as an offset.
	off := int64(v[0] | v[1]<<16)
	if p.Order() == binary.BigEndian {
		off = int64(v[0]<<16 | v[1])
	}
	b, err := readLSMRecord(tf, off, 4)
	if err != nil {
		return p, nil
	}
	o := p.Order()
	a, c := uint64(o.Uint16(b)), uint64(o.Uint16(b[2:]))
	if !sound(a, c) {
		return p, nil
	}
	return p.WithField(ifd.Entry{Tag: tiff.TagBitsPerSample, Type: ifd.Short, Count: 2,
		Value: binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, uint16(a)), uint16(c))})
}

// lsmChannels are the channels' names and colours of the ChannelColors
// record.
type lsmChannels struct {
	names  []string
	colors []color.Color
}

// lsmRecordsRead are the records of CZ_LSMINFO the mapping carries.
type lsmRecordsRead struct {
	channels lsmChannels
	stamps   []float64
	// positions are each position's stage coordinates (X, Y, Z, in µm).
	positions [][3]float64
}

// lsmRecords reads the records of CZ_LSMINFO that the mapping carries
// (ChannelColors, TimeStamps, Positions and TilePositions), the latter
// for the first images positions, and returns notes on those it cannot
// read and those it does not.
//
// The stage coordinates of position i are, as Bio-Formats computes them,
// OriginX, Y and Z plus the Positions record's i-th (both metres, made
// µm), plus, when the TilePositions record has an i-th, the origin and
// that once more: Bio-Formats adds the two records' coordinates so.
func (m *mapper) lsmRecords(info lsmInfo, images int) (recs lsmRecordsRead, notes []string) {
	tf := m.file.TIFF
	var unread []string
	origin := [3]float64{info.float("OriginX") * 1e6, info.float("OriginY") * 1e6, info.float("OriginZ") * 1e6}
	unreadPositions := false
	for _, f := range lsmFields {
		off := info.values[f.name]
		if f.kind != 'o' || off == 0 {
			continue
		}
		name := strings.TrimPrefix(f.name, "Offset")
		var err error
		switch name {
		case "ChannelColors":
			recs.channels, err = readLSMChannelColors(tf, info.order, int64(off))
		case "TimeStamps":
			recs.stamps, err = readLSMTimeStamps(tf, info.order, int64(off))
		case "Positions", "TilePositions":
			var v [][3]float64
			if v, err = readLSMPositions(tf, info.order, int64(off), images); err != nil {
				// The other record alone would give positions that neither
				// the file nor Bio-Formats gives.
				unreadPositions = true
				break
			}
			for i, p := range v {
				if i == len(recs.positions) {
					recs.positions = append(recs.positions, [3]float64{})
				}
				for a := range p {
					recs.positions[i][a] += origin[a] + p[a]*1e6
				}
			}
		default:
			unread = append(unread, name)
			continue
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("its %s record (at %d) is not read: %v", name, off, err))
		}
	}
	if unreadPositions && recs.positions != nil {
		recs.positions = nil
		notes = append(notes, "its positions' stage coordinates are not carried, one of their two records not read")
	}
	if len(unread) > 0 {
		notes = append(notes, fmt.Sprintf("CZ_LSMINFO's records %s are not read", strings.Join(unread, ", ")))
	}
	return recs, notes
}

// readLSMPositions reads the first (at most) n entries of a Positions or
// TilePositions record, as tifffile reads one: the number of entries
// (uint32), then each entry's X, Y and Z (float64, metres). A record
// whose entries would run past the end of the file is refused.
func readLSMPositions(tf *tiff.File, o binary.ByteOrder, off int64, n int) ([][3]float64, error) {
	head, err := readLSMRecord(tf, off, 4)
	if err != nil {
		return nil, err
	}
	count := int64(o.Uint32(head))
	if count > (tf.Size-off-4)/24 {
		return nil, fmt.Errorf("%d entries of 24 bytes, past the end of the %d-byte file", count, tf.Size)
	}
	count = min(count, int64(n))
	b, err := readLSMRecord(tf, off+4, 24*count)
	if err != nil {
		return nil, err
	}
	out := make([][3]float64, count)
	for i := range out {
		for a := range 3 {
			out[i][a] = math.Float64frombits(o.Uint64(b[24*i+8*a:]))
		}
	}
	return out, nil
}

// readLSMRecord reads n bytes of the file at off, or says why it cannot.
func readLSMRecord(tf *tiff.File, off, n int64) ([]byte, error) {
	if off < 8 || n < 0 || n > lsmMaxRecord || off > tf.Size || n > tf.Size-off {
		return nil, fmt.Errorf("%d bytes at %d, past the end of the %d-byte file (or more than %d)", n, off, tf.Size, lsmMaxRecord)
	}
	return tf.ReadBytes(uint64(off), int(n))
}

// readLSMChannelColors reads a ChannelColors record, as tifffile and
// Bio-Formats do: its size, the number of colours and of names, the
// offsets of the colours and of the names from the record's start, and
// the Mono flag (uint32 each); each colour a uint32 whose low byte is
// red, then green and blue; each name a uint32 length and as many bytes,
// NUL-ended.
func readLSMChannelColors(tf *tiff.File, o binary.ByteOrder, off int64) (lsmChannels, error) {
	var out lsmChannels
	head, err := readLSMRecord(tf, off, 24)
	if err != nil {
		return out, err
	}
	size := int64(o.Uint32(head))
	b, err := readLSMRecord(tf, off, size)
	if err != nil {
		return out, err
	}
	if size < 24 {
		return out, fmt.Errorf("its size is %d bytes, less than its 24-byte header", size)
	}
	ncolors, nnames := int64(o.Uint32(b[4:])), int64(o.Uint32(b[8:]))
	coffset, noffset := int64(o.Uint32(b[12:])), int64(o.Uint32(b[16:]))
	if coffset > 0 {
		if coffset > size || ncolors > (size-coffset)/4 {
			return out, fmt.Errorf("%d colours at %d, past the record's %d bytes", ncolors, coffset, size)
		}
		for i := range ncolors {
			v := o.Uint32(b[coffset+4*i:])
			r, g, bl := uint8(v), uint8(v>>8), uint8(v>>16)
			if r == 0 && g == 0 && bl == 0 {
				r, g, bl = 255, 255, 255
			}
			out.colors = append(out.colors, color.NRGBA{r, g, bl, 255})
		}
	}
	if noffset > 0 && noffset <= size {
		rest := b[noffset:]
		for int64(len(out.names)) < nnames && len(rest) >= 4 {
			n := int64(o.Uint32(rest))
			if n > int64(len(rest)-4) {
				return out, fmt.Errorf("a channel name of %d bytes, past the record's %d", n, size)
			}
			out.names = append(out.names, pyramid.XMLText(strings.TrimRight(string(rest[4:4+n]), "\x00")))
			rest = rest[4+n:]
		}
	}
	return out, nil
}

// readLSMTimeStamps reads a TimeStamps record, as tifffile does: its
// size and the number of stamps (int32), then the stamps (float64,
// seconds); a size other than 8 + 8 × the number is refused.
func readLSMTimeStamps(tf *tiff.File, o binary.ByteOrder, off int64) ([]float64, error) {
	head, err := readLSMRecord(tf, off, 8)
	if err != nil {
		return nil, err
	}
	size, count := int64(int32(o.Uint32(head))), int64(int32(o.Uint32(head[4:])))
	if count < 0 || size != 8+8*count {
		return nil, fmt.Errorf("its size is %d bytes for %d stamps", size, count)
	}
	if count > lsmMaxStamps {
		return nil, fmt.Errorf("%d stamps, more than the %d read", count, lsmMaxStamps)
	}
	b, err := readLSMRecord(tf, off+8, 8*count)
	if err != nil {
		return nil, err
	}
	out := make([]float64, count)
	for i := range out {
		out[i] = math.Float64frombits(o.Uint64(b[8*i:]))
	}
	return out, nil
}

// lsmDescribe sets the image's metadata from CZ_LSMINFO and its records:
// the file's time stamps are the image's from stampIndex, and at, when
// not nil, is its position's stage coordinates (µm), every plane's as
// Bio-Formats gives them, in its unit "reference frame".
func lsmDescribe(im *Image, info lsmInfo, recs lsmRecordsRead, stampIndex int, at *[3]float64) {
	s := &im.Spec
	ch, stamps := recs.channels, recs.stamps
	for _, a := range []struct {
		name string
		dst  *float64
		unit *string
	}{{"VoxelSizeX", &s.PhysicalSizeX, &s.PhysicalSizeXUnit}, {"VoxelSizeY", &s.PhysicalSizeY, &s.PhysicalSizeYUnit}, {"VoxelSizeZ", &s.PhysicalSizeZ, &s.PhysicalSizeZUnit}} {
		if um := positive(info.float(a.name) * 1e6); um > 0 {
			*a.dst, *a.unit = um, "µm"
		}
	}
	if len(ch.names) > 0 || len(ch.colors) > 0 {
		s.Channels = make([]pyramid.Channel, s.SizeC)
		for c := range s.Channels {
			if c < len(ch.names) {
				s.Channels[c].Name = ch.names[c]
			}
			if c < len(ch.colors) {
				s.Channels[c].Color = ch.colors[c]
			}
		}
	}
	var own []float64 // the image's stamps
	if stampIndex < len(stamps) {
		own = stamps[stampIndex:min(len(stamps), stampIndex+s.SizeT)]
	}
	if v := positive(info.float("TimeIntervall")); v > 0 {
		s.TimeIncrement = pyramid.Quantity{Value: v, Unit: "s"}
	} else if step, ok := evenStep(own); ok && s.SizeT > 1 && len(own) == s.SizeT {
		s.TimeIncrement = pyramid.Quantity{Value: step, Unit: "s"}
	}
	deltas := s.SizeT > 1 && len(own) > 0 && !slices.ContainsFunc(own, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
	for i := range s.Planes() {
		z, c, t := s.PlaneCoords(i)
		pl := pyramid.Plane{Z: z, C: c, T: t}
		if deltas && t < len(own) {
			if d := own[t] - own[0]; math.Abs(d) <= math.MaxFloat32 {
				pl.DeltaT = pyramid.Quantity{Value: d, Unit: "s"}
			}
		}
		if at != nil {
			pl.PositionX = pyramid.Quantity{Value: at[0], Unit: "reference frame"}
			pl.PositionY = pyramid.Quantity{Value: at[1], Unit: "reference frame"}
			pl.PositionZ = pyramid.Quantity{Value: at[2], Unit: "reference frame"}
		}
		if pl.DeltaT.Unit != "" || at != nil {
			s.PlaneInfo = append(s.PlaneInfo, pl)
		}
	}
	for _, f := range lsmFields {
		if _, ok := info.values[f.name]; ok && f.kind != 'o' {
			s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: f.name, Value: info.text(f)})
		}
	}
	if len(own) > 0 {
		// The image's own stamps only, as each of Bio-Formats' series has
		// its own: every image given all of a mosaic's would make the
		// output grow with positions times stamps.
		texts := make([]string, len(own))
		for i, v := range own {
			texts[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: "TimeStamps", Value: strings.Join(texts, " ")})
	}
	textTags(im)
}

// evenStep returns the spacing of values evenly spaced (within a
// millionth of their span), and whether they are.
func evenStep(v []float64) (float64, bool) {
	if len(v) < 2 {
		return 0, false
	}
	step := (v[len(v)-1] - v[0]) / float64(len(v)-1)
	if positive(step) == 0 {
		return 0, false
	}
	for i := 1; i < len(v); i++ {
		if math.Abs(v[i]-v[i-1]-step) > 1e-6*step*float64(len(v)) {
			return 0, false
		}
	}
	return step, true
}

// lsmRelocate returns the planes (pages 0, 2, 4...) of an LSM file with
// their strips where they lie:
//   - in a file past 4 GiB, the 32-bit strip offsets wrap: as tifffile
//     unwraps them, the pages are taken in file order (a plane then its
//     thumbnail, or the thumbnail first when page 1's data comes before
//     page 0's), and each strip offset smaller than the one before adds
//     4 GiB to it and to all after. An offset so unwrapped past the end
//     of the file is ErrMalformed; a file of several positions past 4 GiB
//     is ErrUnsupported (tifffile unwraps each time point of each
//     position apart, in an order its source calls undocumented);
//   - compressed strips have the byte counts of the uncompressed data:
//     as tifffile corrects them, each strip of a plane runs to the next
//     strip, or to the next page's data in the file, or, for the file's
//     last, twice its stated count or the end of the file, whichever is
//     first.
func (m *mapper) lsmRelocate(planes []*tiff.Page, positions int64) ([]*tiff.Page, error) {
	tf := m.file.TIFF
	pages := tf.Pages
	compressed := false
	if c, ok := pages[0].Uint(tiff.TagCompression); ok && c != uint64(tiff.CompressionNone) {
		compressed = true
	}
	big := uint64(tf.Size) >= 1<<32
	if !big && !compressed {
		return planes, nil
	}
	if big && positions > 1 {
		return nil, fmt.Errorf("%w: a Zeiss LSM file of %d bytes (past 4 GiB, its strip offsets wrapped) holding %d positions: their offsets are not unwrapped",
			ErrUnsupported, tf.Size, positions)
	}
	offsets := make([][]uint64, len(pages))
	counts := make([][]uint64, len(pages))
	for i, p := range pages {
		// Every block as stored, those past the end of the file too: the
		// wrapped offsets and the uncompressed counts corrected below put
		// them where they lie.
		for k := range p.NumBlocks() {
			b, _ := p.Block(k)
			offsets[i], counts[i] = append(offsets[i], b.Offset), append(counts[i], b.Size)
		}
	}
	if big {
		order := make([]int, len(pages))
		for i := range order {
			order[i] = i
		}
		if len(pages) > 1 && len(offsets[0]) > 0 && len(offsets[1]) > 0 && offsets[0][0] > offsets[1][0] {
			for i := 0; i+1 < len(order); i += 2 { // the thumbnail's data first
				order[i], order[i+1] = order[i+1], order[i]
			}
		}
		var wrap, previous uint64
		for _, i := range order {
			for k, v := range offsets[i] {
				if v < previous {
					wrap += 1 << 32
				}
				previous = v
				if wrap > uint64(tf.Size) {
					return nil, fmt.Errorf("%w: the strip offsets of the Zeiss LSM file wrap past its %d bytes (page %d)", tiff.ErrMalformed, tf.Size, i)
				}
				offsets[i][k] = v + wrap
			}
		}
	}
	if compressed {
		type start struct {
			page int
			at   uint64
		}
		var starts []start
		for i, o := range offsets {
			if len(o) > 0 {
				starts = append(starts, start{i, o[0]})
			}
		}
		slices.SortStableFunc(starts, func(a, b start) int { return cmp.Compare(a.at, b.at) })
		for j, st := range starts {
			i := st.page
			if i%2 == 1 {
				continue // a thumbnail: not compressed
			}
			o, c := offsets[i], counts[i]
			ok := true
			for k := 0; k+1 < len(o); k++ {
				if o[k+1] < o[k] {
					ok = false
					break
				}
				c[k] = o[k+1] - o[k]
			}
			last := len(o) - 1
			if !ok {
				continue
			}
			if j+1 < len(starts) {
				if starts[j+1].at >= o[last] {
					c[last] = starts[j+1].at - o[last]
				}
			} else if o[last] <= uint64(tf.Size) {
				c[last] = min(o[last]+2*c[last], uint64(tf.Size)) - o[last]
			}
		}
	}
	out := make([]*tiff.Page, len(planes))
	for k, p := range planes {
		q, err := p.Relocated(offsets[2*k], counts[2*k])
		switch {
		case err != nil && !big:
			q = p // refused where it is mapped, its blocks as stored
		case err != nil:
			return nil, fmt.Errorf("page %d, its strips relocated as tifffile reads them: %w", 2*k, err)
		}
		out[k] = q
	}
	return out, nil
}
