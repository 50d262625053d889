package main

import (
	"bufio"
	"errors"
	"io"
)

// jpegFrame is what a JPEG's frame header (SOF) says about the memory
// image/jpeg needs: the sampling factors of the components and whether
// the image is progressive. image.DecodeConfig tells neither.
type jpegFrame struct {
	progressive bool
	sampling    [][2]int // horizontal and vertical factor of each component
}

// readJPEGFrame reads a JPEG's markers up to its frame header.
func readJPEGFrame(r io.Reader) (jpegFrame, error) {
	br := bufio.NewReader(r)
	var soi [2]byte
	if _, err := io.ReadFull(br, soi[:]); err != nil || soi != [2]byte{0xff, 0xd8} {
		return jpegFrame{}, errors.New("not a JPEG")
	}
	for {
		b, err := br.ReadByte()
		if err != nil {
			return jpegFrame{}, err
		}
		if b != 0xff {
			continue // stray byte between segments
		}
		m, err := br.ReadByte()
		if err != nil {
			return jpegFrame{}, err
		}
		switch {
		case m == 0xff || m == 0x00 || m == 0x01 || m >= 0xd0 && m <= 0xd8:
			continue // fill byte, or a marker without a segment
		case m == 0xda || m == 0xd9:
			return jpegFrame{}, errors.New("no frame header before the scan")
		}
		var n [2]byte
		if _, err := io.ReadFull(br, n[:]); err != nil {
			return jpegFrame{}, err
		}
		length := int(n[0])<<8 | int(n[1]) - 2
		if length < 0 {
			return jpegFrame{}, errors.New("bad segment length")
		}
		if m < 0xc0 || m > 0xcf || m == 0xc4 || m == 0xc8 || m == 0xcc { // not a SOF
			if _, err := br.Discard(length); err != nil {
				return jpegFrame{}, err
			}
			continue
		}
		seg := make([]byte, length)
		if _, err := io.ReadFull(br, seg); err != nil {
			return jpegFrame{}, err
		}
		if len(seg) < 6 || len(seg) < 6+3*int(seg[5]) || seg[5] == 0 {
			return jpegFrame{}, errors.New("bad frame header")
		}
		f := jpegFrame{progressive: m == 0xc2 || m == 0xc6 || m == 0xca || m == 0xce}
		for c := range int(seg[5]) {
			hv := seg[6+3*c+1]
			f.sampling = append(f.sampling, [2]int{max(1, int(hv>>4)), max(1, int(hv&15))})
		}
		return f, nil
	}
}

// bytesPerPixel is what image/jpeg holds per pixel: each component's
// samples at its resolution, 4 more bytes per sample of coefficients when
// progressive, and for CMYK the 4-byte image it converts to.
func (f jpegFrame) bytesPerPixel() float64 {
	if len(f.sampling) == 0 {
		return 4*5 + 4 // unknown: the worst, progressive CMYK
	}
	hmax, vmax := 1, 1
	for _, s := range f.sampling {
		hmax, vmax = max(hmax, s[0]), max(vmax, s[1])
	}
	var samples float64
	for _, s := range f.sampling {
		samples += float64(s[0]*s[1]) / float64(hmax*vmax)
	}
	per := samples
	if f.progressive {
		per += 4 * samples
	}
	if len(f.sampling) == 4 {
		per += 4
	}
	return per
}
