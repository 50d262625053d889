//go:build linux

package main

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"

	"github.com/ometiff-go/ometiff/internal/synth"
)

// seed selects the synthetic slide; every run writes the same pixels.
const seed = 1

// bandRows is the height of the bands slides are generated and streamed in.
const bandRows = 256

// writeInput writes the workload's raw pixels to path: planes one after
// another, rows top to bottom, little-endian samples. Stack planes are
// ordered series by series, then channel by channel, z fastest (XYZCT).
func writeInput(w workload, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if w.Kind == stackKind {
		err = writeStack(bw, w)
	} else {
		err = writeSlide(bw, w)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeSlide writes one plane band by band.
func writeSlide(out io.Writer, w workload) error {
	band := newBand(w)
	for y := 0; y < w.Size; y += bandRows {
		if _, err := out.Write(band.fill(y, min(bandRows, w.Size-y))); err != nil {
			return err
		}
	}
	return nil
}

// writeStack writes every plane of every series. Series are different
// fields (seeds); focal planes are the same field drifting 8 rows per z.
func writeStack(out io.Writer, w workload) error {
	gray := make([]uint16, w.Size*w.Size)
	buf := make([]byte, 2*len(gray))
	for s := range w.Series {
		for c := range w.C {
			p := synth.Pattern{Seed: uint64(seed + s), Channel: c}
			for z := range w.Z {
				p.Gray16(gray, 0, 8*z, w.Size, w.Size)
				if _, err := out.Write(littleEndian(buf, gray)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// littleEndian stores samples into dst as little-endian bytes.
func littleEndian(dst []byte, samples []uint16) []byte {
	for i, v := range samples {
		binary.LittleEndian.PutUint16(dst[2*i:], v)
	}
	return dst[:2*len(samples)]
}

// band generates row bands of a slide or huge plane.
type band struct {
	w    workload
	p    synth.Pattern
	buf  []byte
	gray []uint16 // uint16 samples, before they become bytes
}

func newBand(w workload) *band {
	b := &band{w: w, p: synth.Pattern{Seed: seed}, buf: make([]byte, bandRows*w.Size*w.samples()*w.pixelType().Size())}
	if !w.RGB && w.pixelType().Size() == 2 {
		b.gray = make([]uint16, bandRows*w.Size)
	}
	return b
}

// fill returns rows [y, y+rows) of the plane.
func (b *band) fill(y, rows int) []byte {
	n := rows * b.w.Size
	switch {
	case b.w.RGB:
		b.p.RGB8(b.buf, 0, y, b.w.Size, rows)
		return b.buf[:3*n]
	case b.gray != nil:
		b.p.Gray16(b.gray, 0, y, b.w.Size, rows)
		return littleEndian(b.buf, b.gray[:n])
	}
	b.p.Gray8(b.buf, 0, y, b.w.Size, rows)
	return b.buf[:n]
}
