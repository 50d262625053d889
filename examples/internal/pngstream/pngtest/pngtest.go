// Package pngtest writes PNG files field by field for tests: every colour
// type, bit depth, filter and chunk layout, which image/png's encoder does
// not reach, and images too large for memory, streamed.
package pngtest

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image/color"
	"io"
)

// Signature starts every PNG file.
const Signature = "\x89PNG\r\n\x1a\n"

// Image is a PNG to write.
type Image struct {
	Width, Height, Depth int
	ColorType            byte // 0 gray, 2 RGB, 3 paletted, 4 gray and alpha, 6 RGBA
	Interlace            byte // written in IHDR; the rows (of the passes) are written as given
	Palette              []color.NRGBA
	TRNS                 []byte   // tRNS of a gray or RGB image
	Rows                 [][]byte // the samples of each row, unfiltered
	Filter               func(y int) byte
	IDATSize             int    // bytes of zlib stream per IDAT chunk; 0 is one chunk
	Before, After        []byte // chunks before IDAT and between IDAT and IEND
}

// Chunk returns a chunk of type typ holding data.
func Chunk(typ string, data []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
}

// Channels is the number of samples per pixel of a colour type.
func Channels(colorType byte) int {
	return map[byte]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colorType]
}

// RowBytes is the length of a row of samples.
func RowBytes(width, depth int, colorType byte) int {
	return (width*Channels(colorType)*depth + 7) / 8
}

// ihdr returns the IHDR chunk.
func ihdr(width, height, depth int, colorType, interlace byte) []byte {
	p := binary.BigEndian.AppendUint32(nil, uint32(width))
	p = binary.BigEndian.AppendUint32(p, uint32(height))
	return Chunk("IHDR", append(p, byte(depth), colorType, 0, 0, interlace))
}

// Encode returns the PNG file.
func (m Image) Encode() []byte {
	out := append([]byte(Signature), ihdr(m.Width, m.Height, m.Depth, m.ColorType, m.Interlace)...)
	out = append(out, m.Before...)
	if m.Palette != nil {
		var plte, trns []byte
		for _, c := range m.Palette {
			plte = append(plte, c.R, c.G, c.B)
			trns = append(trns, c.A)
		}
		out = append(out, Chunk("PLTE", plte)...)
		if bytes.ContainsFunc(trns, func(a rune) bool { return a != 0xff }) {
			out = append(out, Chunk("tRNS", trns)...)
		}
	}
	if m.TRNS != nil {
		out = append(out, Chunk("tRNS", m.TRNS)...)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	bpp := max(1, Channels(m.ColorType)*m.Depth/8)
	prev := make([]byte, RowBytes(m.Width, m.Depth, m.ColorType))
	for y, row := range m.Rows {
		f := byte(0)
		if m.Filter != nil {
			f = m.Filter(y)
		}
		zw.Write(Filtered(f, row, prev, bpp))
		prev = row
	}
	zw.Close()
	size := m.IDATSize
	if size == 0 {
		size = z.Len()
	}
	for data := z.Bytes(); len(data) > 0; {
		n := min(size, len(data))
		out = append(out, Chunk("IDAT", data[:n])...)
		data = data[n:]
	}
	out = append(out, m.After...)
	return append(out, Chunk("IEND", nil)...)
}

// Filtered returns a scanline: the filter type f, then raw filtered with
// it, given the previous row's samples and the bytes per pixel.
func Filtered(f byte, raw, prev []byte, bpp int) []byte {
	out := []byte{f}
	if f == 0 {
		return append(out, raw...) // prev may be of another length: an interlaced pass's
	}
	for i, v := range raw {
		var left, upLeft byte
		if i >= bpp {
			left, upLeft = raw[i-bpp], prev[i-bpp]
		}
		switch f {
		case 1:
			v -= left
		case 2:
			v -= prev[i]
		case 3:
			v -= byte((int(left) + int(prev[i])) / 2)
		case 4:
			v -= paeth(left, prev[i], upLeft)
		}
		out = append(out, v)
	}
	return out
}

// paeth is the PNG specification's predictor, written from it.
func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := p-int(a), p-int(b), p-int(c)
	pa, pb, pc = max(pa, -pa), max(pb, -pb), max(pc, -pc)
	if pa <= pb && pa <= pc {
		return a
	}
	if pb <= pc {
		return b
	}
	return c
}

// Stream writes a non-interlaced 8-bit PNG of colorType to w, filling each
// row with row(y, samples) and filtering it with Up, in memory of two
// rows: an image larger than memory, for tests of streaming.
func Stream(w io.Writer, width, height int, colorType byte, row func(y int, samples []byte)) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(Signature)
	bw.Write(ihdr(width, height, 8, colorType, 0))
	bz := bufio.NewWriterSize(&idatWriter{w: bw}, 1<<20) // IDAT chunks of 1 MiB
	zw, err := zlib.NewWriterLevel(bz, zlib.BestSpeed)
	if err != nil {
		return err
	}
	n := RowBytes(width, 8, colorType)
	cur, prev, line := make([]byte, n), make([]byte, n), make([]byte, 1+n)
	line[0] = 2 // Up: rows that differ little compress well
	for y := range height {
		row(y, cur)
		for i := range cur {
			line[1+i] = cur[i] - prev[i]
		}
		if _, err := zw.Write(line); err != nil {
			return err
		}
		cur, prev = prev, cur
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := bz.Flush(); err != nil {
		return err
	}
	bw.Write(Chunk("IEND", nil))
	return bw.Flush() // reports any error of the writes before
}

// idatWriter cuts what it is given into IDAT chunks.
type idatWriter struct{ w io.Writer }

func (iw *idatWriter) Write(p []byte) (int, error) {
	if _, err := iw.w.Write(Chunk("IDAT", p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
