package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
)

// jpegFrame is what a JPEG's frame header (SOF) says about the memory
// image/jpeg needs: the sampling factors of the components and whether
// the image is progressive. image.DecodeConfig tells neither. The
// segments before it say whether the file holds more pictures (an MPO's
// multi-picture index, in APP2) and how the picture is to be turned for
// display (EXIF Orientation, in APP1).
type jpegFrame struct {
	progressive bool
	sampling    [][2]int // horizontal and vertical factor of each component
	pictures    int      // of a multi-picture file: its first and its frames; 0 when not said
	orientation int      // 0 when not said
	// icc and comment say the file has an ICC profile (APP2
	// ICC_PROFILE) and a comment (COM) before its frame header, which
	// the output does not keep. (A comment after it, rare, is not seen.)
	icc, comment bool
}

// maxAppSegment is the largest APP1 or APP2 segment read whole; a segment
// is at most 65533 bytes.
const maxAppSegment = 1 << 16

// readJPEGFrame reads a JPEG's markers up to its frame header.
func readJPEGFrame(r io.Reader) (jpegFrame, error) {
	var f jpegFrame
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
		if m == 0xe1 || m == 0xe2 { // APP1, APP2
			seg := make([]byte, min(length, maxAppSegment))
			if _, err := io.ReadFull(br, seg); err != nil {
				return jpegFrame{}, err
			}
			switch {
			case m == 0xe2 && bytes.HasPrefix(seg, []byte("MPF\x00")) && f.pictures == 0:
				f.pictures = mpfPictures(seg[4:])
			case m == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) && f.orientation == 0:
				f.orientation = exifOrientation(seg[6:])
			case m == 0xe2 && bytes.HasPrefix(seg, []byte("ICC_PROFILE\x00")):
				f.icc = true
			}
			continue
		}
		f.comment = f.comment || m == 0xfe
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
		f.progressive = m == 0xc2 || m == 0xc6 || m == 0xca || m == 0xce
		for c := range int(seg[5]) {
			hv := seg[6+3*c+1]
			f.sampling = append(f.sampling, [2]int{max(1, int(hv>>4)), max(1, int(hv&15))})
		}
		return f, nil
	}
}

// firstEntry returns the first entry of the first directory of a TIFF
// structure held in t (EXIF's, a multi-picture index) whose tag is tag,
// with the structure's byte order; ok is false when there is none or t
// cannot be read so far.
func firstEntry(t []byte, tag uint16) (e []byte, order binary.ByteOrder, ok bool) {
	if len(t) < 8 {
		return nil, nil, false
	}
	switch string(t[:2]) {
	case "II":
		order = binary.LittleEndian
	case "MM":
		order = binary.BigEndian
	default:
		return nil, nil, false
	}
	at := uint64(order.Uint32(t[4:]))
	if at+2 > uint64(len(t)) {
		return nil, nil, false
	}
	n, entries := int(order.Uint16(t[at:])), t[at+2:]
	for i := 0; i < n && 12*i+12 <= len(entries); i++ {
		if e := entries[12*i : 12*i+12]; order.Uint16(e) == tag {
			return e, order, true
		}
	}
	return nil, nil, false
}

// mpfPictures counts the pictures of a multi-picture JPEG (CIPA DC-007)
// from its index (APP2 "MPF", a TIFF structure): the first, and each
// other but a thumbnail (MP Type 0x01xxxx). Pillow writes its further
// pictures with no type, as HDR gain maps are written, so those count.
// It returns 0 when the index cannot be read.
func mpfPictures(t []byte) int {
	e, order, ok := firstEntry(t, 0xb002) // MPEntry: 16 bytes a picture
	if !ok {
		return 0
	}
	count, off := uint64(order.Uint32(e[4:])), uint64(order.Uint32(e[8:]))
	if count%16 != 0 || off > uint64(len(t)) || count > uint64(len(t))-off {
		return 0
	}
	pictures := 1
	for k := uint64(16); k < count; k += 16 { // the first is the image itself
		if order.Uint32(t[off+k:])&0xff0000 != 0x010000 {
			pictures++
		}
	}
	return pictures
}

// exifOrientation returns the Orientation (tag 274, a SHORT) of the first
// directory of EXIF's TIFF structure, 0 when it has none or cannot be
// read.
func exifOrientation(t []byte) int {
	if e, order, ok := firstEntry(t, 274); ok && order.Uint16(e[2:]) == 3 && order.Uint32(e[4:]) == 1 {
		return int(order.Uint16(e[8:]))
	}
	return 0
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
