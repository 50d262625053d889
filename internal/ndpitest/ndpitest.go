// Package ndpitest builds Hamamatsu NDPI files for tests: classic TIFFs
// whose pages are each one JPEG strip, with the restart markers and the
// McuStarts field (65426) that NDP.scan writes so that readers decode
// the strip an interval at a time, and the NDPI tags readers classify
// the pages by.
package ndpitest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/jpeg"
	"math"

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
	// strip is YCbCr 4:2:0, as NDP.scan writes it; 8 x 8 when Gray); 0
	// writes a JPEG without restart markers, and no McuStarts.
	Interval int
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
// image/jpeg encodes with the same tables for every interval.
func Strip(p Page) (strip []byte, mcuStarts []uint64, err error) {
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

// File returns an NDPI file of the pages, in order: a classic
// little-endian TIFF, each page one JPEG strip (Photometric YCbCr, or
// BlackIsZero for Gray).
func File(pages ...Page) ([]byte, error) {
	format := ifd.Format{Order: binary.LittleEndian}
	file := make([]byte, 8)
	var builders []*ifd.Builder
	for _, p := range pages {
		strip, starts, err := Strip(p)
		if err != nil {
			return nil, err
		}
		offset := uint64(len(file))
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
		b.AddUint(tiff.TagStripOffsets, offset)
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
			b.AddUint(tiff.TagNDPIMcuStarts, starts...)
		}
		if p.Properties != "" {
			b.AddASCII(tiff.TagNDPIProperties, p.Properties)
		}
		if p.More != nil {
			p.More(b, strip, starts)
		}
		file = append(file, strip...)
		file = append(file, make([]byte, len(file)&1)...)
		builders = append(builders, b)
	}
	pos := int64(len(file))
	first := pos
	for i, b := range builders {
		next := uint64(0)
		if i+1 < len(builders) {
			next = uint64(pos + b.Size(false))
		}
		var err error
		if file, err = b.Encode(file, pos, next, format); err != nil {
			return nil, err
		}
		pos = int64(len(file))
	}
	head, err := tiff.Header{Order: binary.LittleEndian, FirstIFD: uint64(first)}.Append(nil)
	if err != nil {
		return nil, err
	}
	copy(file, head)
	return file, nil
}
