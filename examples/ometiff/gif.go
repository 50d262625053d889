package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"image"
	"io"
)

// gifFrames counts the images of a GIF file, walking its blocks without
// decoding them: image/gif's Decode returns the first only.
func gifFrames(r io.Reader) (int, error) {
	br := bufio.NewReader(r)
	var head [13]byte // signature, version, logical screen descriptor
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return 0, err
	}
	if string(head[:3]) != "GIF" {
		return 0, errors.New("not a GIF")
	}
	if err := skipColorTable(br, head[10]); err != nil {
		return 0, err
	}
	frames := 0
	for {
		b, err := br.ReadByte()
		if err != nil {
			return frames, err
		}
		switch b {
		case 0x21: // an extension: its label, then its sub-blocks
			if _, err := br.ReadByte(); err != nil {
				return frames, err
			}
		case 0x2c: // an image: its descriptor, colours and LZW code size
			var desc [9]byte
			if _, err := io.ReadFull(br, desc[:]); err != nil {
				return frames, err
			}
			if err := skipColorTable(br, desc[8]); err != nil {
				return frames, err
			}
			if _, err := br.ReadByte(); err != nil {
				return frames, err
			}
			frames++
		case 0x3b: // the trailer
			return frames, nil
		default:
			return frames, errors.New("bad GIF block")
		}
		if err := skipSubBlocks(br); err != nil {
			return frames, err
		}
	}
}

// skipColorTable reads past the colour table that flags (a screen's or
// an image's packed field) announce.
func skipColorTable(br *bufio.Reader, flags byte) error {
	if flags&0x80 == 0 {
		return nil
	}
	_, err := br.Discard(3 << (flags&7 + 1))
	return err
}

// skipSubBlocks reads past data sub-blocks, up to their terminator.
func skipSubBlocks(br *bufio.Reader) error {
	for {
		n, err := br.ReadByte()
		if err != nil || n == 0 {
			return err
		}
		if _, err := br.Discard(int(n)); err != nil {
			return err
		}
	}
}

// gifFirstFrame returns the rectangle of a GIF's first image within its
// logical screen: image/gif's Decode returns that image alone, of those
// bounds, while DecodeConfig (and libvips, and ometiff info) gives the
// screen. background is the screen's Background Color Index, the colour
// of the pixels no image covers (GIF89a), when it has a global colour
// table; -1 otherwise. ok is false when it cannot be read.
func gifFirstFrame(r io.Reader) (frame image.Rectangle, background int, ok bool) {
	br := bufio.NewReader(r)
	var head [13]byte
	if _, err := io.ReadFull(br, head[:]); err != nil || string(head[:3]) != "GIF" {
		return image.Rectangle{}, -1, false
	}
	background = -1
	if head[10]&0x80 != 0 {
		background = int(head[11])
	}
	if skipColorTable(br, head[10]) != nil {
		return image.Rectangle{}, -1, false
	}
	for {
		b, err := br.ReadByte()
		if err != nil {
			return image.Rectangle{}, -1, false
		}
		switch b {
		case 0x21:
			if _, err := br.ReadByte(); err != nil || skipSubBlocks(br) != nil {
				return image.Rectangle{}, -1, false
			}
		case 0x2c:
			var desc [9]byte
			if _, err := io.ReadFull(br, desc[:]); err != nil {
				return image.Rectangle{}, -1, false
			}
			le := binary.LittleEndian
			x, y := int(le.Uint16(desc[0:])), int(le.Uint16(desc[2:]))
			return image.Rect(x, y, x+int(le.Uint16(desc[4:])), y+int(le.Uint16(desc[6:]))), background, true
		default:
			return image.Rectangle{}, -1, false
		}
	}
}
