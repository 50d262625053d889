// Package ndpitest builds Hamamatsu NDPI files for tests: classic TIFFs
// with NDP.scan's 64-bit offsets, whose pages are each one JPEG strip, with
// the restart markers and the McuStarts field (65426) that NDP.scan writes
// so that readers decode the strip an interval at a time, and the NDPI tags
// readers classify the pages by.
package ndpitest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"os"
	"slices"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/tiff"
)

// Page is one page of an NDPI file.
type Page struct {
	// Width, Height and RGB are the image: interleaved 8-bit R, G, B,
	// or with Gray one 8-bit sample a pixel.
	Width, Height int
	RGB           []byte
	// Gray writes a grayscale JPEG (BlackIsZero), of MCUs of 8 x 8.
	Gray bool
	// Interval is the restart interval in MCUs (of 16 x 16 pixels: the
	// strip is YCbCr 4:2:0, the one subsampling image/jpeg writes; 8 x 8
	// when Gray); 0 writes a JPEG without restart markers, and no
	// McuStarts.
	Interval int
	// JPEG, if set, is the strip: a baseline JPEG of Width × Height that
	// another encoder wrote, with its restart markers (cjpeg -restart NB,
	// with the subsampling of -sample), in place of one encoded from RGB.
	// Its McuStarts are where its scan and each restart interval begin.
	JPEG []byte
	// Magnification is the NDPISourceLens field: positive for the scan
	// and its levels, -1 for the macro image, -2 for the map.
	Magnification float32
	// ZOffset is the focal plane's offset, in nm (NDPIZOffset).
	ZOffset int32
	// PixelsPerCm is the X and Y resolution, per centimetre; 0 for none.
	PixelsPerCm float64
	// Properties is the NDPIProperties text ("key=value" lines); "" for
	// none.
	Properties string
	// Quality is the JPEG quality; 0 means 90.
	Quality int
	// More, if set, changes the page's fields last, or the strip's bytes
	// (a test's damage).
	More func(b *ifd.Builder, strip []byte, mcuStarts []uint64)
}

// Pattern returns a width × height RGB image of smooth gradients and
// edges, which JPEG codes at high quality within a few levels; its R
// samples, every third byte, make a gray one.
func Pattern(width, height, seed int) []byte {
	out := make([]byte, 3*width*height)
	for y := range height {
		for x := range width {
			i := 3 * (y*width + x)
			out[i] = uint8(128 + 100*math.Sin(float64(x+seed)/37))
			out[i+1] = uint8(128 + 100*math.Cos(float64(y)/23))
			out[i+2] = uint8((x/64+y/64)%2*200 + 20)
		}
	}
	return out
}

// Strip encodes the page's image as one baseline JPEG, YCbCr 4:2:0, with
// a restart marker after every Interval MCUs, and returns it with the
// offset of each restart interval's data (McuStarts). Each interval is
// the scan of a JPEG of its own pixels (the DC predictions and the bit
// buffer start afresh at a restart marker, as at a scan's start), which
// image/jpeg encodes with the same tables for every interval. A page
// given its JPEG has that as its strip.
func Strip(p Page) (strip []byte, mcuStarts []uint64, err error) {
	if p.JPEG != nil {
		starts, err := restarts(p.JPEG)
		return p.JPEG, starts, err
	}
	q := p.Quality
	if q == 0 {
		q = 90
	}
	if p.Interval == 0 {
		var buf bytes.Buffer
		err := jpeg.Encode(&buf, p.block(0, 0, p.Width, p.Height), &jpeg.Options{Quality: q})
		return buf.Bytes(), nil, err
	}
	mcu := 16
	if p.Gray {
		mcu = 8
	}
	tileW := p.Interval * mcu
	mcusAcross := (p.Width + mcu - 1) / mcu
	if mcusAcross%p.Interval != 0 {
		return nil, nil, fmt.Errorf("ndpitest: %d MCUs across are not whole intervals of %d", mcusAcross, p.Interval)
	}
	var header []byte
	for y0 := 0; y0 < p.Height; y0 += mcu {
		for x0 := 0; x0 < p.Width; x0 += tileW {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, p.block(x0, y0, tileW, mcu), &jpeg.Options{Quality: q}); err != nil {
				return nil, nil, err
			}
			head, scan, err := split(buf.Bytes())
			if err != nil {
				return nil, nil, err
			}
			if header == nil {
				header = frameOf(head, p.Width, p.Height, p.Interval)
				strip = append(strip, header...)
			} else {
				strip = append(strip, 0xff, byte(0xd0+(len(mcuStarts)-1)%8))
			}
			mcuStarts = append(mcuStarts, uint64(len(strip)))
			strip = append(strip, scan...)
		}
	}
	return append(strip, 0xff, 0xd9), mcuStarts, nil
}

// restarts returns the offsets in a JPEG of its scan's data and of the
// data after each restart marker, or nil if it has no restart markers.
func restarts(j []byte) ([]uint64, error) {
	head, scan, err := split(j)
	if err != nil {
		return nil, err
	}
	starts := []uint64{uint64(len(head))}
	for i := 0; i+1 < len(scan); i++ {
		// In entropy-coded data a 0xff is followed by a stuffed 0 or a marker.
		if scan[i] == 0xff && scan[i+1] >= 0xd0 && scan[i+1] <= 0xd7 {
			starts = append(starts, uint64(len(head)+i+2))
		}
	}
	if len(starts) == 1 {
		return nil, nil
	}
	return starts, nil
}

// block returns the w × h block at x0, y0 of the page's image, its
// pixels past the image's edge repeating the last column and row.
func (p Page) block(x0, y0, w, h int) image.Image {
	if p.Gray {
		m := image.NewGray(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				m.Pix[y*m.Stride+x] = p.RGB[min(y0+y, p.Height-1)*p.Width+min(x0+x, p.Width-1)]
			}
		}
		return m
	}
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := 3 * (min(y0+y, p.Height-1)*p.Width + min(x0+x, p.Width-1))
			copy(m.Pix[y*m.Stride+4*x:], []byte{p.RGB[i], p.RGB[i+1], p.RGB[i+2], 0xff})
		}
	}
	return m
}

// split cuts a JPEG into its header, up to the end of its start of scan,
// and its entropy-coded data, without the EOI.
func split(j []byte) (head, scan []byte, err error) {
	for i := 2; i+4 <= len(j); {
		n := int(binary.BigEndian.Uint16(j[i+2:]))
		if j[i+1] == 0xda {
			return j[:i+2+n], j[i+2+n : len(j)-2], nil
		}
		i += 2 + n
	}
	return nil, nil, fmt.Errorf("ndpitest: no start of scan")
}

// frameOf returns a tile's JPEG header made the strip's: the frame sized
// to the image, and a restart interval before the start of scan.
func frameOf(head []byte, width, height, interval int) []byte {
	out := append([]byte(nil), head[:2]...)
	for i := 2; i < len(head); {
		n := int(binary.BigEndian.Uint16(head[i+2:]))
		seg := append([]byte(nil), head[i:i+2+n]...)
		switch head[i+1] {
		case 0xc0:
			binary.BigEndian.PutUint16(seg[5:], uint16(height))
			binary.BigEndian.PutUint16(seg[7:], uint16(width))
		case 0xda:
			out = append(out, 0xff, 0xdd, 0, 4, byte(interval>>8), byte(interval))
		}
		out = append(out, seg...)
		i += 2 + n
	}
	return out
}

// File returns an NDPI file of the pages, in order, laid out as NDP.scan
// writes it: a classic little-endian TIFF with 64-bit offsets (an 8-byte
// first offset in the header; after each directory's entries, an 8-byte
// next offset and the high 4 bytes of each entry's value or offset;
// ASCII values never inline), each page one JPEG strip (Photometric
// YCbCr, or BlackIsZero for Gray).
func File(pages ...Page) ([]byte, error) {
	s, err := Layout{}.File(pages...)
	if err != nil {
		return nil, err
	}
	return s.Bytes(), nil
}

// Layout says where File puts the pages' strips and directories.
type Layout struct {
	// Classic writes a plain classic TIFF (32-bit offsets), as a tool
	// that rewrites an NDPI's fields might: no 64-bit layout.
	Classic bool
	// Hole is a span of bytes never written before the first strip, so
	// that a file of a few megabytes of data has its strips and
	// directories past 4 GiB (with a Hole of 4 GiB or more), as a
	// scanner's file of gigabytes does.
	Hole int64
}

// File returns an NDPI file of the pages, in order, laid out as l says.
// Each page's strip is followed by its directory, whose values come
// before it as NDP.scan writes them (OpenSlide 3.4 takes a value's
// offset past 4 GiB to lie within 4 GiB below its directory).
func (l Layout) File(pages ...Page) (*Sparse, error) {
	base := int64(16) + l.Hole // the header, 8 bytes of offset in the NDPI layout
	var body []byte
	var builders []*ifd.Builder
	var dirs []int64 // where each page's directory block starts: its values, then the directory
	pos := base
	for _, p := range pages {
		strip, starts, err := Strip(p)
		if err != nil {
			return nil, err
		}
		b := new(ifd.Builder)
		b.AddUint(tiff.TagImageWidth, uint64(p.Width))
		b.AddUint(tiff.TagImageLength, uint64(p.Height))
		samples, photometric := uint16(3), tiff.PhotometricYCbCr
		if p.Gray {
			samples, photometric = 1, tiff.PhotometricBlackIsZero
		}
		b.AddShort(tiff.TagBitsPerSample, []uint16{8, 8, 8}[:samples]...)
		b.AddShort(tiff.TagCompression, tiff.CompressionJPEG)
		b.AddShort(tiff.TagPhotometricInterpretation, photometric)
		b.AddASCII(tiff.TagMake, "Hamamatsu")
		b.AddASCII(tiff.TagModel, "C13210")
		b.AddUint(tiff.TagStripOffsets, uint64(pos))
		b.AddShort(tiff.TagSamplesPerPixel, samples)
		b.AddUint(tiff.TagRowsPerStrip, uint64(p.Height))
		b.AddUint(tiff.TagStripByteCounts, uint64(len(strip)))
		if p.PixelsPerCm > 0 {
			r := ifd.Fraction{Num: uint32(math.Round(p.PixelsPerCm * 1000)), Den: 1000}
			b.AddRational(tiff.TagXResolution, r)
			b.AddRational(tiff.TagYResolution, r)
			b.AddShort(tiff.TagResolutionUnit, tiff.ResolutionUnitCentimeter)
		}
		b.AddASCII(tiff.TagSoftware, "NDP.scan 3.2.4")
		b.AddLong(tiff.TagNDPIFormatFlag, 1)
		b.AddFloat(tiff.TagNDPISourceLens, p.Magnification)
		b.Add(ifd.Entry{Tag: tiff.TagNDPIZOffset, Type: ifd.SLong, Count: 1, Value: binary.LittleEndian.AppendUint32(nil, uint32(p.ZOffset))})
		if starts != nil {
			// NDP.scan writes LONGs, which OpenSlide 3.4 needs.
			b.Add(ifd.Entry{Tag: tiff.TagNDPIMcuStarts, Type: ifd.Long, Count: uint64(len(starts)), Value: longs(starts)})
		}
		if p.Properties != "" {
			b.AddASCII(tiff.TagNDPIProperties, p.Properties)
		}
		if p.More != nil {
			p.More(b, strip, starts)
		}
		body = append(body, strip...)
		body = append(body, make([]byte, len(body)&1)...)
		builders = append(builders, b)
		dirs = append(dirs, base+int64(len(body)))
		pos = base + int64(len(body)) + l.size(b)
		body = append(body, make([]byte, l.size(b))...)
	}
	for i, b := range builders {
		var next uint64
		if i+1 < len(builders) {
			next = uint64(l.dirAt(dirs[i+1], builders[i+1]))
		}
		at := dirs[i]
		var block []byte
		var err error
		if l.Classic {
			block, err = b.Encode(nil, at, next, ifd.Format{Order: binary.LittleEndian})
		} else {
			block, err = encode(at, next, b.Entries())
		}
		if err != nil {
			return nil, err
		}
		copy(body[at-base:], block)
	}
	head := binary.LittleEndian.AppendUint16([]byte("II"), 42)
	first := int64(0)
	if len(builders) > 0 {
		first = l.dirAt(dirs[0], builders[0])
	}
	if l.Classic {
		if first >= 1<<32 {
			return nil, fmt.Errorf("ndpitest: a classic TIFF cannot put a directory at %d", first)
		}
		head = binary.LittleEndian.AppendUint32(head, uint32(first))
	} else {
		head = binary.LittleEndian.AppendUint64(head, uint64(first))
	}
	head = append(head, make([]byte, 16-len(head))...)
	if l.Hole == 0 {
		return &Sparse{Size: base + int64(len(body)), Parts: []Part{{At: 0, Data: append(head, body...)}}}, nil
	}
	return &Sparse{Size: base + int64(len(body)), Parts: []Part{{At: 0, Data: head}, {At: base, Data: body}}}, nil
}

// longs returns the values as LONGs.
func longs(v []uint64) []byte {
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = binary.LittleEndian.AppendUint32(out, uint32(x))
	}
	return out
}

// dirAt returns where the directory of the block at starts: after its
// values in the NDPI layout; at its start in a classic one, which puts
// the values after it.
func (l Layout) dirAt(at int64, b *ifd.Builder) int64 {
	if l.Classic {
		return at
	}
	return at + valuesSize(b.Entries())
}

// size is the encoded size of the directory b builds, values included.
func (l Layout) size(b *ifd.Builder) int64 {
	if l.Classic {
		return b.Size(false)
	}
	n := int64(b.Len())
	return valuesSize(b.Entries()) + 2 + 12*n + 8 + 4*n
}

// outOfLine reports whether an entry's value goes out of line in the NDPI
// layout: more than 4 bytes and not a single 64-bit integer, or ASCII.
func outOfLine(e ifd.Entry) bool {
	return len(e.Value) > 4 && !narrow(e) || e.Type == ifd.ASCII
}

// valuesSize is the size of the entries' values out of line, each on a
// word boundary.
func valuesSize(entries []ifd.Entry) int64 {
	var size int64
	for _, e := range entries {
		if outOfLine(e) {
			size += int64(len(e.Value) + len(e.Value)&1)
		}
	}
	return size
}

// narrow reports whether a single 64-bit integer goes in the entry and
// its high bytes, as a LONG, SLONG or IFD.
func narrow(e ifd.Entry) bool {
	return e.Count == 1 && (e.Type == ifd.Long8 || e.Type == ifd.SLong8 || e.Type == ifd.IFD8)
}

// encode returns the values of the entries, then their directory in the
// NDPI layout, for a block at pos.
func encode(pos int64, next uint64, entries []ifd.Entry) ([]byte, error) {
	entries = slices.SortedFunc(slices.Values(entries), func(a, b ifd.Entry) int { return int(a.Tag) - int(b.Tag) })
	n := len(entries)
	var values []byte
	dir := binary.LittleEndian.AppendUint16(nil, uint16(n))
	high := make([]byte, 0, 4*n)
	for _, e := range entries {
		typ := e.Type
		if narrow(e) {
			typ = map[ifd.Type]ifd.Type{ifd.Long8: ifd.Long, ifd.SLong8: ifd.SLong, ifd.IFD8: ifd.IFD}[e.Type]
		} else if e.Type == ifd.Long8 || e.Type == ifd.SLong8 || e.Type == ifd.IFD8 {
			return nil, fmt.Errorf("ndpitest: tag %d: an NDPI holds no arrays of 64-bit integers", e.Tag)
		}
		dir = binary.LittleEndian.AppendUint16(dir, e.Tag)
		dir = binary.LittleEndian.AppendUint16(dir, uint16(typ))
		dir = binary.LittleEndian.AppendUint32(dir, uint32(e.Count))
		var word uint64
		if outOfLine(e) {
			word = uint64(pos + int64(len(values)))
			values = append(values, e.Value...)
			values = append(values, make([]byte, len(values)&1)...)
		} else {
			var slot [8]byte
			copy(slot[:], e.Value)
			word = binary.LittleEndian.Uint64(slot[:])
		}
		dir = binary.LittleEndian.AppendUint32(dir, uint32(word))
		high = binary.LittleEndian.AppendUint32(high, uint32(word>>32))
	}
	dir = binary.LittleEndian.AppendUint64(dir, next)
	return append(append(values, dir...), high...), nil
}

// Part is bytes of a Sparse file at an offset.
type Part struct {
	At   int64
	Data []byte
}

// Sparse is a file of Size bytes, all 0 but its parts: a file past
// 4 GiB held in a few megabytes.
type Sparse struct {
	Size  int64
	Parts []Part
}

// ReadAt reads the file's bytes at off, as io.ReaderAt.
func (s *Sparse) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("ndpitest: offset %d", off)
	}
	if off >= s.Size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), s.Size-off))
	clear(p[:n])
	for _, part := range s.Parts {
		lo, hi := max(off, part.At), min(off+int64(n), part.At+int64(len(part.Data)))
		if lo < hi {
			copy(p[lo-off:hi-off], part.Data[lo-part.At:hi-part.At])
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Bytes returns the whole file; only for one of a reasonable size.
func (s *Sparse) Bytes() []byte {
	out := make([]byte, s.Size)
	s.ReadAt(out, 0)
	return out
}

// WriteFile writes the file at name, its gaps as holes where the file
// system has them.
func (s *Sparse) WriteFile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	for _, part := range s.Parts {
		if _, err := f.WriteAt(part.Data, part.At); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Truncate(s.Size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
