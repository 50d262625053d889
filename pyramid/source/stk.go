package source

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// isSTK reports whether the file is a MetaMorph STK: its first page has
// the UIC1tag (33628), as tifffile recognizes the format (Bio-Formats
// asks for UIC1, UIC3 and UIC4, or a Software starting "MetaMorph").
func isSTK(f *tiff.File) bool {
	if f == nil || len(f.Pages) == 0 {
		return false
	}
	_, ok := f.Pages[0].Field(tiff.TagUIC1)
	return ok
}

// Bounds of what the mapping reads of an STK's UIC tables: MetaMorph
// writes a few dozen UIC1 entries and a handful of UIC4 ones.
const (
	// maxUIC1 bounds the UIC1 entries read; past it they are noted.
	maxUIC1 = 1024
	// maxUIC4 bounds the UIC4 items read; past it they are noted.
	maxUIC4 = 64
	// maxUICString bounds a UIC string, as tifffile reads them (under
	// 1 KiB); a longer one is noted, not read.
	maxUICString = 1 << 10
	// maxSTKPlaneKeys bounds the planes whose own values (Z distance,
	// creation time, wavelength, stage label, description) go into the
	// map annotation; those of more planes are noted.
	maxSTKPlaneKeys = 64
	// maxSTKLabels bounds the planes whose stage labels, strings of their
	// own lengths, are walked to reach the UIC4 items after them: two
	// reads a plane, so a hostile count of tiny planes would cost seconds
	// a megabyte. Past it the UIC4 table is read no further, noted.
	maxSTKLabels = 1 << 16
)

// uicNames names the UIC1 and UIC4 ids as tifffile and Bio-Formats do,
// with how the value is stored: 'i' the entry's value, 'f' a rational at
// its offset, 's' a string at its offset (a LONG length, then the bytes),
// 'd' a Julian date and time at its offset. Per-plane tables (28, 29, 37,
// 40, 41) are read apart; other ids are noted, not read.
var uicNames = map[uint32]struct {
	name string
	kind byte
}{
	0: {"AutoScale", 'i'}, 1: {"MinScale", 'i'}, 2: {"MaxScale", 'i'}, 3: {"SpatialCalibration", 'i'},
	4: {"XCalibration", 'f'}, 5: {"YCalibration", 'f'}, 6: {"CalibrationUnits", 's'}, 7: {"Name", 's'},
	8: {"ThreshState", 'i'}, 9: {"ThreshStateRed", 'i'}, 11: {"ThreshStateGreen", 'i'}, 12: {"ThreshStateBlue", 'i'},
	13: {"ThreshStateLo", 'i'}, 14: {"ThreshStateHi", 'i'}, 15: {"Zoom", 'i'}, 16: {"CreateTime", 'd'},
	17: {"LastSavedTime", 'd'}, 18: {"currentBuffer", 'i'}, 21: {"grayX", 'f'}, 22: {"grayY", 'f'},
	23: {"grayMin", 'f'}, 24: {"grayMax", 'f'}, 25: {"grayUnitName", 's'}, 26: {"StandardLUT", 'i'},
	27: {"Wavelength", 'i'}, 38: {"AutoScaleLoInfo", 'f'}, 39: {"AutoScaleHiInfo", 'f'}, 47: {"NewLUT", 'i'},
}

// stkMeta is what the UIC tags of an STK say.
type stkMeta struct {
	planes      int               // the image's: the UIC2tag's count
	tablePlanes int               // the UIC4 items' and UIC1's per-plane tables': the UIC4tag's count, else the IFDs'
	values      map[string]string // UIC1 values by tifffile's name, as text
	xCal, yCal  float64
	units, name string
	created     time.Time
	zDistance   []float64   // UIC2, per plane; NaN for a denominator of 0
	createdAt   []time.Time // UIC2, per plane: date and time; zero for no date
	wavelength  []float64   // UIC3, per plane
	absZ        []float64   // UIC4 (or UIC1) 40, per plane
	absZValid0  bool        // UIC1 41 is present with value 0
	absZValid   bool        // the first plane's AbsoluteZValid (UIC4 or UIC1 41) is 1
	absZValidIn bool        // UIC4 has AbsoluteZValid, which UIC1's does not replace
	stageX      []float64   // UIC4 (or UIC1) 28, per plane
	stageY      []float64
	labels      []string // UIC4 37
	notes       []string
}

// stk maps a MetaMorph STK file as Bio-Formats' MetamorphReader reads a
// lone STK (no .nd file): page 0 is one plane of N, N the count of the
// UIC2tag (Bio-Formats' image count and tifffile's NumberPlanes both),
// and the other planes' pixels follow page 0's, plane k at page 0's
// strips shifted by k times one plane's bytes (tiff.Page.Successor), as
// tifffile and Bio-Formats read them; tifffile reads them so only
// uncompressed, and a compressed STK of several planes is ErrUnsupported.
//
// The per-plane items of the UIC4 table hold M planes' values each, M the
// UIC4tag's count, as both readers walk it; Bio-Formats takes M, or the
// count of the file's IFDs when there is no UIC4tag, for the per-plane
// tables of UIC1 too, and reads the Z distances of the first M planes
// only. The UIC2 table is read for its own N planes (as tifffile reads
// it; Bio-Formats reads M rows, past the table when M > N). Counts of
// UIC2, UIC3 and UIC4 that disagree are noted. The tables are read in the
// file's byte order, as Bio-Formats reads them (tifffile reads none in a
// big-endian file; MetaMorph writes little-endian ones).
//
// The planes are laid along the axes as Bio-Formats lays them (in order
// XYCZT), not as tifffile (which puts them along Z when every Z distance
// is non-zero, along T when the creation times all differ, else along a
// generic axis): SizeZ is 1 plus the number of non-zero Z distances
// (UIC2) of the first M planes, or M when the M absolute Z positions
// (UIC4 40) all differ, or 1 when UIC1's AbsoluteZValid is 0 and that
// count is under M; SizeC is the number of distinct wavelengths (UIC3)
// of a one-sample page (N when more than half the planes' but not
// dividing N); SizeT the planes left over; sizes whose product is not N
// fall back to Z = N / C, and then to Z = N. A file name holding "_t"
// swaps Z and T, as Bio-Formats does.
//
// The pixel size is UIC1's XCalibration and YCalibration, in µm as
// Bio-Formats takes them whatever CalibrationUnits says, except that a
// unit OME knows (nm, mm, cm, m) is taken, and "pixel" leaves the image
// uncalibrated (a note says so). PhysicalSizeZ is the first plane's Z
// distance (UIC2), in µm, as Bio-Formats takes it, or when that is 0
// (Bio-Formats then says none), the others' when they are all the same.
// UIC1's Name names the image, as tifffile names the series, and its CreateTime is the acquisition date
// (Bio-Formats reads neither for a lone STK); the wavelengths (UIC3, in
// nm) are the channels' emission wavelengths, and the stage positions
// (UIC4 28) the positions of the first M planes, in reference frame
// units, as Bio-Formats sets them; each plane's creation time (UIC2) is
// its DeltaT, the seconds since the first plane's, as Bio-Formats sets it
// (for the first M planes; it gives the others 0, which is no time the
// file says: theirs are taken too); each of the first M planes' Z
// position is the Z distances summed (from the first plane's absolute Z
// when valid), and every plane's exposure the description's, as
// Bio-Formats sets them. The rest of UIC1, and the planes' own values
// (for up to maxSTKPlaneKeys planes) go into the map annotation; what is
// not read is noted.
//
// Newer MetaMorph versions write each plane's description (the planes'
// separated by NULs, as tifffile and Bio-Formats split them) as MetaData
// XML, a MetaSeries TIFF's (parseMetaSeries reads it, within its bounds).
// When the first plane's, trimmed, starts with "<MetaData>", Bio-Formats
// reads it with its MetamorphHandler, and so is it read here; the UIC
// tags win where Bio-Formats lets them (it takes the XML as a fallback):
// the pixel size is the XML's spatial-calibration-x and -y only when UIC1
// has neither XCalibration nor YCalibration (in the XML's
// spatial-calibration-units when OME knows them, none when its
// spatial-calibration-state is off, as a MetaSeries TIFF's), the
// wavelength the XML's only when there is no UIC3 table (the channels
// still counted from UIC3), the Z step the XML's only when UIC2 gives
// none: the distinct z-positions of all the planes, in the order they
// come, when as many as SizeZ (more than 1), the first to the last over
// SizeZ − 1, to 10 significant digits, as Bio-Formats computes it (it
// takes it only when it read no UIC2 table at all); and each plane's Z
// position is UIC2's as above, the plane's own z-position (in reference
// frame units, as Bio-Formats sets it) only for the planes UIC2 gives
// none; its stage position (stage-position-x and -y, in reference frame
// units) likewise is the UIC4 table's, else the plane's own XML's
// (Bio-Formats gives every plane the first plane's). The XML's
// acquisition-time-local, when the first plane's has
// one, gives each plane's DeltaT (its own less the first plane's) in
// place of the UIC2 creation times, as Bio-Formats prefers it (a plane
// without one has none); Bio-Formats takes the times of all the planes'
// prop lines in order and indexes them by the plane's T, which for a
// stack of one Z and one channel is the same. The exposures are the
// Exposure lines ("Exposure: 100 ms") of the first plane's Description
// prop, plane k's the one of its channel (modulo their count); one for
// several channels gives each channel the first Exposure of its own
// first plane's XML (plane c), Bio-Formats' rule for a channel's own
// description (for a lone STK it reads the whole description there,
// the first plane's; Bio-Formats also indexes them by T, for datasets of
// several files: not done). The first key ending "Gain" whose value reads
// as a number ("x" dropped) is every channel's detector gain, a detector
// of type Other, as Bio-Formats sets it. The Description's free text
// before its Exposure line is the description, and each other plane's
// its PlaneDescription. The first plane's other props and Description
// lines (Temperature, Binning, readout rate, _MagNA_..., which no field
// of the spec carries) go into the map annotation, up to maxAnnotations
// in all; the other planes' XML gives only the values above, noted. XML
// that does not parse is noted: the first plane's leaves the
// description read as text, as before; a later plane's gives its plane
// no XML values.
func (m *mapper) stk() error {
	pages := m.file.TIFF.Pages
	first := pages[0]
	meta := readSTK(first)
	if err := m.stkImage(first, meta); err != nil {
		return err
	}
	if len(pages) > 1 {
		// MetaMorph writes one directory; any other is a plain page.
		return m.genericPages(pages[1:])
	}
	return nil
}

// stkImage adds the image of an STK's planes, or says why it cannot.
func (m *mapper) stkImage(first *tiff.Page, meta stkMeta) error {
	l, err := layoutOf(first)
	if err != nil {
		return m.skipImage(fmt.Errorf("the MetaMorph STK's page: %w", err))
	}
	pages := []*tiff.Page{first}
	if meta.planes > 1 {
		tl, err := first.Layout()
		if err != nil {
			return m.skipImage(fmt.Errorf("the MetaMorph STK's page: %w", err))
		}
		if tl.Compression != tiff.CompressionNone {
			name, _ := tiff.ValueName(tiff.TagCompression, uint64(tl.Compression))
			return m.skipImage(fmt.Errorf("%w: Compression %d (%s) of the MetaMorph STK of %d planes: its planes are read from where the first one's data ends, which only uncompressed data says (tifffile reads them so)",
				ErrUnsupported, tl.Compression, name, meta.planes))
		}
		if b := tl.BitsPerSample; b%8 != 0 {
			return m.skipImage(fmt.Errorf("%w: BitsPerSample %d of the MetaMorph STK of %d planes: tifffile reads the planes of whole bytes only", ErrUnsupported, b, meta.planes))
		}
		blocks, err := first.Blocks()
		if err != nil {
			return m.skipImage(fmt.Errorf("the MetaMorph STK's page: %w", err))
		}
		var span uint64
		for _, b := range blocks {
			span += b.Size
		}
		plane := uint64(tl.Width) * uint64(tl.Height) * uint64(tl.SamplesPerPixel) * uint64(tl.BitsPerSample/8)
		if span != plane {
			return m.skipImage(fmt.Errorf("%w: the MetaMorph STK's page stores %d bytes for a plane of %d: where its other %d planes lie is not said",
				ErrUnsupported, span, plane, meta.planes-1))
		}
		if pages, err = m.storedAfter(meta.planes, pages, l, true, "the MetaMorph STK's UIC2tag"); err != nil {
			return err
		}
	}
	im := genericImage(pages, l, nil)
	describeSTK(im, meta, l, m.name)
	m.add(im)
	return nil
}

// stkAxes returns SizeZ, SizeC (of wavelengths) and SizeT as Bio-Formats'
// MetamorphReader sets them for a lone STK of n planes (see stk).
func stkAxes(meta stkMeta, n int, samples bool, name string) (z, c, t int) {
	m := meta.tablePlanes
	z = 1
	for _, d := range meta.zDistance[:min(m, len(meta.zDistance))] {
		if d != 0 {
			z++
		}
	}
	if len(meta.absZ) == m && m > 0 && distinct(meta.absZ) == m {
		z = m
	}
	if meta.absZValid0 && z < m {
		z = 1
	}
	c = 1
	if !samples && len(meta.wavelength) > 0 {
		c = distinct(meta.wavelength)
		if c < n && c > n-c && n%c != 0 {
			c = n
		}
	}
	t = n / (z * c)
	if t*z*c != n {
		t, z = 1, n/c
	}
	if strings.Contains(name, "_t") && t > 1 {
		z, t = t, z
	}
	z, t = max(z, 1), max(t, 1)
	if z*t*c != n {
		z, t, c = n, 1, 1
	}
	return z, c, t
}

// distinct counts the distinct values.
func distinct(v []float64) int {
	s := slices.Clone(v)
	slices.Sort(s)
	return len(slices.Compact(s))
}

// describeSTK sets the image's axes and metadata from the UIC tags.
func describeSTK(im *Image, meta stkMeta, l pageLayout, name string) {
	s := &im.Spec
	n := len(im.Planes) / l.planesPerPage()
	// The samples of an RGB page are its channels, as Bio-Formats counts
	// them: the wavelengths then make no channels.
	z, c, t := stkAxes(meta, n, l.samples > 1, name)
	s.SizeZ, s.SizeC, s.SizeT = z, c*l.planesPerPage(), t
	s.DimensionOrder = pyramid.XYCZT
	if n < meta.planes {
		im.Notes = append(im.Notes, fmt.Sprintf("its UIC2tag says %d planes, and the file holds %d", meta.planes, n))
	}
	if meta.name != "" {
		s.Name = meta.name
	}
	if !meta.created.IsZero() {
		s.AcquisitionDate = meta.created
	}
	// The description: the first plane's; the others' are annotations.
	descriptions := strings.Split(im.Planes[0].Page.Description(), "\x00")
	s.Description = pyramid.XMLText(strings.TrimSpace(descriptions[0]))
	xmeta, err := readSTKXML(descriptions, n)
	if err != nil {
		im.Notes = append(im.Notes, fmt.Sprintf("its first plane's description, MetaMorph's MetaData XML, cannot be read (%v): it is read as text", err))
	}
	if xmeta != nil {
		s.Description = pyramid.XMLText(xmeta.first.description)
	}
	unit, calibrated := stkUnit(meta.units)
	switch {
	case !calibrated:
		im.Notes = append(im.Notes, fmt.Sprintf("its CalibrationUnits is %q: no physical pixel size", meta.units))
	case positive(meta.xCal) > 0 && positive(meta.yCal) > 0:
		s.PhysicalSizeX, s.PhysicalSizeY = meta.xCal, meta.yCal
		s.PhysicalSizeXUnit, s.PhysicalSizeYUnit = unit, unit
	}
	step := stkStep(meta.zDistance)
	if step == 0 && xmeta != nil {
		step = xmeta.zStep(n, z)
	}
	if step > 0 {
		s.PhysicalSizeZ, s.PhysicalSizeZUnit = step, "µm"
	}
	waves := meta.wavelength
	if len(waves) == 0 && xmeta != nil && xmeta.first.wavelength > 0 {
		waves = []float64{xmeta.first.wavelength} // the XML's, when UIC3 gives none
	}
	if l.samples == 1 && len(waves) >= c {
		// The channels' wavelengths: channel i's is plane i's, the planes
		// going along C first (XYCZT).
		s.Channels = make([]pyramid.Channel, c)
		for i := range s.Channels {
			if w := positive(waves[i]); w >= 1 {
				s.Channels[i].EmissionWavelength = pyramid.Quantity{Value: w, Unit: "nm"}
			}
		}
	}
	// The positions of the planes the UIC4 table has (Bio-Formats sets
	// those of the first M), and the DeltaT of those whose creation times
	// (UIC2) are dates: the time since the first plane's, in seconds, as
	// Bio-Formats sets it. (Bio-Formats takes the times of the first M
	// planes only, giving the others a DeltaT of 0; they are taken all.)
	var start time.Time
	if len(meta.createdAt) > 0 {
		start = meta.createdAt[0]
	}
	// The XML's acquisition-time-local, when the first plane's has one,
	// is each plane's time in place of its creation time, as Bio-Formats
	// prefers the XML's.
	var xmlStart time.Time
	if xmeta != nil {
		xmlStart = xmeta.planes[0].at
	}
	if !xmlStart.IsZero() {
		start = time.Time{}
	} else if start.IsZero() && slices.ContainsFunc(meta.createdAt, func(t time.Time) bool { return !t.IsZero() }) {
		im.Notes = append(im.Notes, "its first plane's creation time (UIC2tag) is no date: the planes' creation times are not their DeltaT")
	}
	// Each plane's Z position, as Bio-Formats sets it for the first M:
	// the first plane's absolute Z (UIC4 40) when its AbsoluteZValid is 1,
	// else 0, then each plane's Z distance (UIC2) added, or the first
	// plane's when its own is 0. The exposure, the descriptions' (a line
	// "Exposure: 100 ms", the last), is every plane's, as Bio-Formats sets it.
	zAt := 0.0
	if meta.absZValid && len(meta.absZ) > 0 {
		zAt = meta.absZ[0]
	}
	exposure, exposed := stkExposure(im.Planes[0].Page.Description())
	var exposures []stkExposureXML // the XML's, by channel (modulo their count)
	if xmeta != nil {
		exposures = xmeta.channelExposures(c)
	}
	zPlanes := min(len(meta.zDistance), meta.tablePlanes) // the planes given a Z position
	if slices.ContainsFunc(meta.zDistance, math.IsNaN) {
		zPlanes = 0
	}
	for k := range n {
		pl := pyramid.Plane{Z: k / c % z, C: k % c, T: k / c / z}
		if k < zPlanes {
			if k > 0 {
				if d := meta.zDistance[k]; d != 0 {
					zAt += d
				} else {
					zAt += meta.zDistance[0]
				}
			}
			pl.PositionZ = pyramid.Quantity{Value: zAt, Unit: "reference frame"}
		} else if p, ok := xmeta.plane(k); ok && p.hasZ {
			pl.PositionZ = pyramid.Quantity{Value: p.z, Unit: "reference frame"}
		}
		if len(exposures) > 0 {
			if e := exposures[k%c%len(exposures)]; e.ok {
				pl.ExposureTime = pyramid.Quantity{Value: e.seconds, Unit: "s"}
			}
		} else if exposed {
			pl.ExposureTime = pyramid.Quantity{Value: exposure, Unit: "s"}
		}
		if l.planesPerPage() > 1 {
			pl.C = 0
		}
		if k < len(meta.stageX) && k < len(meta.stageY) {
			pl.PositionX = pyramid.Quantity{Value: meta.stageX[k], Unit: "reference frame"}
			pl.PositionY = pyramid.Quantity{Value: meta.stageY[k], Unit: "reference frame"}
		} else if p, ok := xmeta.plane(k); ok && p.hasStage {
			pl.PositionX = pyramid.Quantity{Value: p.stageX, Unit: "reference frame"}
			pl.PositionY = pyramid.Quantity{Value: p.stageY, Unit: "reference frame"}
		}
		if k < len(meta.createdAt) && !start.IsZero() && !meta.createdAt[k].IsZero() {
			// In milliseconds, the unit of the UIC2 times, not a
			// time.Duration, which 292 years overflow.
			ms := meta.createdAt[k].UnixMilli() - start.UnixMilli()
			pl.DeltaT = pyramid.Quantity{Value: float64(ms) / 1000, Unit: "s"}
		}
		if p, ok := xmeta.plane(k); ok && !xmlStart.IsZero() && !p.at.IsZero() {
			pl.DeltaT = pyramid.Quantity{Value: float64(p.at.UnixMilli()-xmlStart.UnixMilli()) / 1000, Unit: "s"}
		}
		if pl != (pyramid.Plane{Z: pl.Z, C: pl.C, T: pl.T}) {
			s.PlaneInfo = append(s.PlaneInfo, pl)
		}
	}
	textTags(im)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range meta.values {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: k, Value: meta.values[k]})
	}
	if xmeta != nil {
		carried := xmeta.describeXML(im, meta)
		if len(meta.wavelength) == 0 && len(waves) > 0 {
			carried["wavelength"] = true
		}
		if len(exposures) > 0 {
			carried["Exposure"] = true
		}
		xmeta.annotate(im, carried)
	}
	perPlane := func(key string, k int, v string) {
		if v != "" {
			s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: fmt.Sprintf("%s[%d]", key, k), Value: v})
		}
	}
	for k := range min(n, maxSTKPlaneKeys) {
		if k < len(meta.zDistance) {
			perPlane("ZDistance", k, strconv.FormatFloat(meta.zDistance[k], 'g', -1, 64))
		}
		if k < len(meta.createdAt) && !meta.createdAt[k].IsZero() {
			perPlane("DatetimeCreated", k, meta.createdAt[k].Format(julianLayout))
		}
		if k < len(meta.wavelength) {
			perPlane("Wavelength", k, strconv.FormatFloat(meta.wavelength[k], 'g', -1, 64))
		}
		if k < len(meta.absZ) {
			perPlane("AbsoluteZ", k, strconv.FormatFloat(meta.absZ[k], 'g', -1, 64))
		}
		if k < len(meta.labels) {
			perPlane("StageLabel", k, pyramid.XMLText(meta.labels[k]))
		}
		if p, ok := xmeta.plane(k); ok && k > 0 {
			perPlane("PlaneDescription", k, pyramid.XMLText(p.description))
		} else if k > 0 && k < len(descriptions) {
			perPlane("PlaneDescription", k, pyramid.XMLText(strings.TrimSpace(descriptions[k])))
		}
	}
	if n > maxSTKPlaneKeys {
		but := ""
		if !start.IsZero() {
			but = " (but the creation times as the planes' DeltaT)"
		}
		im.Notes = append(im.Notes, fmt.Sprintf("the UIC values of its planes past the first %d (Z distances, creation times, wavelengths, stage labels, descriptions) are not carried%s", maxSTKPlaneKeys, but))
	}
	im.Notes = append(im.Notes, meta.notes...)
}

// stkUnit maps CalibrationUnits to an OME length unit: µm when absent or
// not a unit OME knows, as Bio-Formats takes every STK's calibration;
// false for an uncalibrated image ("pixel").
func stkUnit(u string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(u)) {
	case "pixel", "pixels":
		return "", false
	case "nm":
		return "nm", true
	case "mm":
		return "mm", true
	case "cm":
		return "cm", true
	case "m":
		return "m", true
	}
	return "µm", true
}

// stkStep returns the Z step of an STK's planes, in µm: the first plane's
// Z distance, as Bio-Formats takes it, or when that is 0, the others'
// when they are all the same; 0 for none.
func stkStep(d []float64) float64 {
	if len(d) == 0 {
		return 0
	}
	if step := positive(d[0]); step > 0 {
		return step
	}
	if len(d) < 2 {
		return 0
	}
	for _, v := range d[2:] {
		if v != d[1] {
			return 0
		}
	}
	return positive(d[1])
}

// uicReader reads the UIC tables of an STK's page in the file's byte
// order, as Bio-Formats reads them (its stream takes the order of the
// TIFF header); tifffile reads them only in a little-endian file, which
// is what MetaMorph writes.
type uicReader struct {
	f     *tiff.File
	order binary.ByteOrder
	notes *[]string
}

// bytes returns n bytes at off; nil (and a note) past the end.
func (r uicReader) bytes(off uint64, n int, what string) []byte {
	b, err := r.f.ReadBytes(off, n)
	if err != nil {
		*r.notes = append(*r.notes, fmt.Sprintf("its %s is not read: %v", what, err))
		return nil
	}
	return b
}

// rational reads a rational, two SLONGs; NaN when it cannot be.
func (r uicReader) rational(b []byte) float64 {
	// Signed, as Bio-Formats reads them (tifffile reads them unsigned):
	// stage and focus positions below their origin are negative.
	num, den := int32(r.order.Uint32(b)), int32(r.order.Uint32(b[4:]))
	if den == 0 {
		return math.NaN()
	}
	return float64(num) / float64(den)
}

// readSTK reads what the UIC tags of an STK's page say. Tables that
// cannot be read are noted; the planes' count is the UIC2tag's, 1 without
// one (tifffile's NumberPlanes); that of the per-plane tables the
// UIC4tag's, else the file's IFDs' (Bio-Formats' mmPlanes).
func readSTK(p *tiff.Page) stkMeta {
	meta := stkMeta{planes: 1, values: map[string]string{}}
	f := p.File()
	meta.tablePlanes = len(f.Pages)
	if e, ok := p.Field(tiff.TagUIC4); ok && e.Count > 0 {
		meta.tablePlanes = int(min(e.Count, math.MaxInt32))
	}
	stkCounts(p, &meta)
	r := uicReader{f: f, order: f.Order, notes: &meta.notes}
	at := func(tag uint16) (uint64, uint64, bool) {
		e, ok := p.Field(tag)
		if !ok {
			return 0, 0, false
		}
		off, found := p.ValueOffset(tag)
		if !found { // in the NDPI layout, say
			meta.notes = append(meta.notes, fmt.Sprintf("its %s is not read: where its table lies is not known", tiff.TagName(tag)))
			return 0, 0, false
		}
		return off, e.Count, true
	}
	if off, n, ok := at(tiff.TagUIC2); ok {
		meta.planes = int(min(n, math.MaxInt32))
		// Six LONGs a plane, 24 bytes: ReadBytes checks the file holds
		// them before allocating.
		if b := r.bytes(off, int(min(n, math.MaxInt32/24))*24, "UIC2tag"); b != nil {
			for k := range len(b) / 24 {
				v := b[24*k:]
				meta.zDistance = append(meta.zDistance, r.rational(v))
				at, _ := julianDate(r.order.Uint32(v[8:]), r.order.Uint32(v[12:]))
				meta.createdAt = append(meta.createdAt, at)
			}
			if slices.ContainsFunc(meta.zDistance, math.IsNaN) {
				// Bio-Formats reads such a rational as the largest double:
				// a distance, not 0, that counts along Z. Nothing else is
				// taken from them.
				meta.notes = append(meta.notes, "its UIC2tag's Z distances have a denominator of 0: counted along Z as Bio-Formats counts them, but no Z step or position is taken from them")
			}
		}
	}
	if e, ok := p.Field(tiff.TagUIC3); ok {
		if v, err := e.Floats(); err == nil && !slices.ContainsFunc(v, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }) {
			meta.wavelength = v
		}
	}
	if off, n, ok := at(tiff.TagUIC4); ok && n > 0 {
		readUIC4(r, off, &meta)
	}
	if off, n, ok := at(tiff.TagUIC1); ok {
		readUIC1(r, p, off, n, &meta)
	}
	// A rational of denominator 0 is no number: no position is written
	// as one (OME's are xsd:float), nor counted among the distinct Z.
	if slices.ContainsFunc(meta.stageX, math.IsNaN) || slices.ContainsFunc(meta.stageY, math.IsNaN) {
		meta.stageX, meta.stageY = nil, nil
		meta.notes = append(meta.notes, "its stage positions have a denominator of 0: not read")
	}
	if slices.ContainsFunc(meta.absZ, math.IsNaN) {
		meta.absZ = nil
		meta.notes = append(meta.notes, "its absolute Z positions have a denominator of 0: not read")
	}
	return meta
}

// stkCounts notes the UIC tags whose counts of planes are not the
// UIC2tag's, and what is read for how many planes then.
func stkCounts(p *tiff.Page, meta *stkMeta) {
	e2, ok := p.Field(tiff.TagUIC2)
	if !ok {
		return
	}
	n, m := e2.Count, uint64(meta.tablePlanes)
	e4, has4 := p.Field(tiff.TagUIC4)
	if has4 && e4.Count == 0 {
		meta.notes = append(meta.notes, fmt.Sprintf("its UIC4tag has a count of 0: its table is not read, and UIC1's per-plane items are read for its %d IFDs, and Z counted from the first %d Z distances, as Bio-Formats reads them", m, min(m, n)))
	} else if has4 && m != n {
		meta.notes = append(meta.notes, fmt.Sprintf("its UIC4tag says %d planes and its UIC2tag %d: the UIC4 items (and UIC1's per-plane ones) are read for %d planes, and Z counted from the first %d Z distances, as Bio-Formats reads them", m, n, m, min(m, n)))
	} else if !has4 && m != n {
		meta.notes = append(meta.notes, fmt.Sprintf("it has no UIC4tag: UIC1's per-plane items are read for its %d IFDs, not its UIC2tag's %d planes, and Z counted from the first %d Z distances, as Bio-Formats reads them", m, n, min(m, n)))
	}
	if e3, ok := p.Field(tiff.TagUIC3); ok && e3.Count != n {
		meta.notes = append(meta.notes, fmt.Sprintf("its UIC3tag gives %d wavelengths for its UIC2tag's %d planes", e3.Count, n))
	}
}

// perPlaneRationals reads n rationals (pairs of LONGs) at off, two per
// plane when pairs.
func perPlaneRationals(r uicReader, off uint64, planes, each int, what string) []float64 {
	b := r.bytes(off, planes*each*8, what)
	if b == nil {
		return nil
	}
	out := make([]float64, planes*each)
	for i := range out {
		out[i] = r.rational(b[8*i:])
	}
	return out
}

// readUIC4 reads the UIC4 table at off: ids and per-plane data, ended by
// id 0, as Bio-Formats reads it (an id it does not know takes 4 bytes).
func readUIC4(r uicReader, off uint64, meta *stkMeta) {
	n := meta.tablePlanes
	var skipped []string // the ids read past, noted
	defer func() {
		if len(skipped) > 0 {
			meta.notes = append(meta.notes, fmt.Sprintf("its UIC4tag's items of ids %s are not read", strings.Join(skipped, ", ")))
		}
	}()
	for range maxUIC4 {
		b := r.bytes(off, 2, "UIC4tag")
		if b == nil {
			return
		}
		id := r.order.Uint16(b)
		off += 2
		switch id {
		case 0:
			return
		case 28: // StagePosition: x and y rationals a plane
			v := perPlaneRationals(r, off, n, 2, "UIC4tag's StagePosition")
			if v == nil {
				return
			}
			// A second item replaces the first, as Bio-Formats and
			// tifffile read it.
			meta.stageX, meta.stageY = make([]float64, n), make([]float64, n)
			for k := range n {
				meta.stageX[k], meta.stageY[k] = v[2*k], v[2*k+1]
			}
			off += uint64(16 * n)
		case 29: // CameraChipOffset: read past
			off += uint64(16 * n)
			skipped = append(skipped, "29")
		case 37: // StageLabel: a string a plane
			if n > maxSTKLabels {
				meta.notes = append(meta.notes, fmt.Sprintf("its UIC4tag's stage labels and the items after them are not read: %d planes, more than %d", n, maxSTKLabels))
				return
			}
			meta.labels = meta.labels[:0] // a second item replaces the first
			for range n {
				s, next, ok := uicString(r, off, "UIC4tag's StageLabel")
				if !ok {
					return
				}
				meta.labels, off = append(meta.labels, s), next
			}
		case 40: // AbsoluteZ: a rational a plane
			if meta.absZ = perPlaneRationals(r, off, n, 1, "UIC4tag's AbsoluteZ"); meta.absZ == nil {
				return
			}
			off += uint64(8 * n)
		case 41: // AbsoluteZValid: a LONG a plane, the first one's read
			b := r.bytes(off, 4, "UIC4tag's AbsoluteZValid")
			if b == nil {
				return
			}
			meta.absZValid, meta.absZValidIn = r.order.Uint32(b) == 1, true
			off += uint64(4 * n)
		case 46: // CameraBin: two LONGs a plane, skipped
			off += uint64(8 * n)
			skipped = append(skipped, strconv.Itoa(int(id)))
		default:
			off += 4
			skipped = append(skipped, strconv.Itoa(int(id)))
		}
	}
	meta.notes = append(meta.notes, fmt.Sprintf("its UIC4tag's items past the first %d are not read", maxUIC4))
}

// stkExposure returns the exposure an STK's description gives, in
// seconds, as Bio-Formats reads it: the planes' descriptions (separated
// by NULs) read as lines, up to one that is XML, and of the lines
// "Exposure: 100 ms" (the key before the first colon; on the first line,
// after the last full stop before it, which MetaMorph may join to the
// text) the last whose value is a number of milliseconds (after an "="
// if any, up to a space, a decimal comma read as a point), within a
// float's range. False when there is none.
func stkExposure(description string) (float64, bool) {
	exposure, found := 0.0, false
	for i, line := range strings.Split(strings.ReplaceAll(description, "\x00", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "<") && strings.HasSuffix(line, ">") {
			break
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if i == 0 {
			if dot := strings.LastIndexByte(key, '.'); dot >= 0 {
				key = key[dot+1:]
			}
		}
		if key != "Exposure" {
			continue
		}
		value = strings.TrimSpace(value)
		if _, after, ok := strings.Cut(value, "="); ok {
			value = strings.TrimSpace(after)
		}
		value, _, _ = strings.Cut(value, " ")
		if ms, err := strconv.ParseFloat(strings.ReplaceAll(value, ",", "."), 64); err == nil && math.Abs(ms/1000) <= math.MaxFloat32 {
			exposure, found = ms/1000, true
		}
	}
	return exposure, found
}

// uicString reads a UIC string at off (a LONG length, then the bytes, NULs
// trimmed) and returns where it ends.
func uicString(r uicReader, off uint64, what string) (string, uint64, bool) {
	b := r.bytes(off, 4, what)
	if b == nil {
		return "", 0, false
	}
	size := r.order.Uint32(b)
	if size > maxUICString {
		*r.notes = append(*r.notes, fmt.Sprintf("its %s (%d bytes, more than %d) is not read", what, size, maxUICString))
		return "", 0, false
	}
	s := r.bytes(off+4, int(size), what)
	if s == nil {
		return "", 0, false
	}
	return strings.Trim(string(s), "\x00 "), off + 4 + uint64(size), true
}

// readUIC1 reads the n (id, value) entries of the UIC1 table at off.
func readUIC1(r uicReader, p *tiff.Page, off, n uint64, meta *stkMeta) {
	if e, _ := p.Field(tiff.TagUIC1); e.Type != 4 { // LONG; RATIONAL in files before MetaMorph 2.5
		meta.notes = append(meta.notes, fmt.Sprintf("its UIC1tag of type %v (MetaMorph before 2.5?) is not read", e.Type))
		return
	}
	if n > maxUIC1 {
		meta.notes = append(meta.notes, fmt.Sprintf("its UIC1tag's entries past the first %d (of %d) are not read", maxUIC1, n))
		n = maxUIC1
	}
	b := r.bytes(off, int(8*n), "UIC1tag")
	if b == nil {
		return
	}
	var unread []string
	for i := range int(n) {
		id, v := r.order.Uint32(b[8*i:]), r.order.Uint32(b[8*i+4:])
		switch id {
		case 28:
			if meta.stageX == nil && v != 0 {
				if xy := perPlaneRationals(r, uint64(v), meta.tablePlanes, 2, "UIC1tag's StagePosition"); xy != nil {
					for k := range meta.tablePlanes {
						meta.stageX, meta.stageY = append(meta.stageX, xy[2*k]), append(meta.stageY, xy[2*k+1])
					}
				}
			}
			continue
		case 40:
			if meta.absZ == nil && v != 0 {
				meta.absZ = perPlaneRationals(r, uint64(v), meta.tablePlanes, 1, "UIC1tag's AbsoluteZ")
			}
			continue
		case 41:
			// An offset to a LONG a plane, as in UIC4, which Bio-Formats
			// reads first (the first plane's read here); 0 for none.
			meta.absZValid0 = v == 0
			if v != 0 && !meta.absZValidIn {
				if b := r.bytes(uint64(v), 4, "UIC1tag's AbsoluteZValid"); b != nil {
					meta.absZValid = r.order.Uint32(b) == 1
				}
			}
			continue
		}
		def, known := uicNames[id]
		if !known {
			unread = append(unread, strconv.FormatUint(uint64(id), 10))
			continue
		}
		switch def.kind {
		case 'i':
			meta.values[def.name] = strconv.FormatUint(uint64(v), 10)
		case 'f':
			if x := r.bytes(uint64(v), 8, "UIC1tag's "+def.name); x != nil {
				if q := r.rational(x); !math.IsNaN(q) {
					meta.values[def.name] = strconv.FormatFloat(q, 'g', -1, 64)
					switch id {
					case 4:
						meta.xCal = q
					case 5:
						meta.yCal = q
					}
				}
			}
		case 's':
			if v < 8 {
				continue // tifffile reads such an offset as an empty string
			}
			if s, _, ok := uicString(r, uint64(v), "UIC1tag's "+def.name); ok {
				s = pyramid.XMLText(s)
				meta.values[def.name] = s
				switch id {
				case 6:
					meta.units = s
				case 7:
					meta.name = strings.TrimSpace(s)
				}
			}
		case 'd':
			if x := r.bytes(uint64(v), 8, "UIC1tag's "+def.name); x != nil {
				day, ms := r.order.Uint32(x), r.order.Uint32(x[4:])
				if text := julianTime(day, ms); text != "" {
					meta.values[def.name] = text
					if id == 16 {
						meta.created, _ = julianDate(day, ms)
					}
				}
			}
		}
	}
	if len(unread) > 0 {
		meta.notes = append(meta.notes, fmt.Sprintf("its UIC1tag's entries of ids %s are not read", strings.Join(unread, ", ")))
	}
}

// julianDate converts MetaMorph's Julian day and milliseconds since
// midnight to a time without a zone, by the conversion MetaMorph's
// specification gives (as tifffile and Bio-Formats port it). Days before
// year 1, or a time past a day, are false.
func julianDate(day, ms uint32) (time.Time, bool) {
	if day <= 1721423 || ms >= 24*3600*1000 {
		return time.Time{}, false
	}
	a := int64(day) + 1
	if a > 2299160 {
		alpha := int64((float64(a) - 1867216.25) / 36524.25)
		a += 1 + alpha - alpha/4
	}
	b := a + 1524
	c := int64((float64(b) - 122.1) / 365.25)
	d := int64(365.25 * float64(c))
	e := int64(float64(b-d) / 30.6001)
	dd := b - d - int64(30.6001*float64(e))
	month := e - 1
	if e >= 14 {
		month = e - 13
	}
	year := c - 4715
	if month > 2 {
		year = c - 4716
	}
	if year > 9999 {
		return time.Time{}, false
	}
	return time.Date(int(year), time.Month(month), int(dd), 0, 0, 0, 0, pyramid.NoZone).Add(time.Duration(ms) * time.Millisecond), true
}

// julianLayout is the time.Time layout of julianTime: an xsd:dateTime
// to the millisecond without a zone.
const julianLayout = "2006-01-02T15:04:05.000"

// julianTime is julianDate as text (julianLayout); "" when it is no date.
func julianTime(day, ms uint32) string {
	t, ok := julianDate(day, ms)
	if !ok {
		return ""
	}
	return t.Format(julianLayout)
}
