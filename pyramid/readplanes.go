package pyramid

import (
	"errors"
	"fmt"
	"io"
)

// readChunk is how much ReadPlanes reads from its reader at once: whole
// planes up to this size, or pieces of this size of a larger plane.
const readChunk = 4 << 20

// ReadPlanes writes every plane of the image from r: PlaneBytes bytes per
// plane, as WritePlane takes them, planes in plane order (DimensionOrder,
// fastest dimension first). No plane of the image may be started yet.
//
// It reads r in pieces of about 4 MiB. When a plane's only tile is the
// plane itself, byte for byte (no compression, one tile per plane, no
// reduced levels), those pieces go to the output as they were read, with no
// copy in between: the way to write a stack of small raw planes.
//
// If r ends before the last plane, the planes read whole are written, the
// others stay missing (Close lists them), and the error wraps ErrData and
// io.ErrUnexpectedEOF. Other errors of r are returned wrapped. Neither
// fails the writer.
func (im *Image) ReadPlanes(r io.Reader) error {
	if err := im.w.usable(); err != nil {
		return err
	}
	for p := range im.planes {
		if im.planes[p].dirs != nil {
			z, c, t := im.spec.PlaneCoords(p)
			return fmt.Errorf("%w: ReadPlanes on image %d, whose plane z=%d c=%d t=%d is already started", ErrPlane, im.index, z, c, t)
		}
	}
	n := im.PlaneBytes()
	if n > readChunk {
		return im.streamPlanes(r)
	}
	perChunk := int(readChunk / n)
	buf := im.w.readBuffer(min(perChunk, len(im.planes)) * int(n))
	for first := 0; first < len(im.planes); first += perChunk {
		want := min(perChunk, len(im.planes)-first) * int(n)
		got, readErr := io.ReadFull(r, buf[:want])
		if err := im.storePlanes(first, buf[:got-got%int(n)]); err != nil {
			return err
		}
		if readErr != nil {
			return im.readError(first+got/int(n), readErr)
		}
	}
	return nil
}

// storePlanes writes consecutive whole planes, the first being plane
// first, held in data.
func (im *Image) storePlanes(first int, data []byte) error {
	n := int(im.PlaneBytes())
	if !im.tileIsPlane() {
		for i := 0; i < len(data)/n; i++ {
			z, c, t := im.spec.PlaneCoords(first + i)
			if err := im.WritePlane(z, c, t, data[i*n:(i+1)*n]); err != nil {
				return err
			}
		}
		return nil
	}
	w := im.w
	for i := 0; i < len(data)/n; i++ {
		st := &im.planes[first+i]
		im.planeDirs(st)
		st.dirs[0].seqs = append(st.dirs[0].seqs, w.seq)
		w.seq++
		st.done = true
	}
	if len(data) == 0 {
		return nil
	}
	if err := w.storeTiles(data, n); err != nil {
		return w.fail(wrapStreamError(err))
	}
	return nil
}

// tileIsPlane reports whether a plane is stored as its own bytes: one
// uncompressed tile of exactly the plane's size, and no reduced levels.
func (im *Image) tileIsPlane() bool {
	g := im.levels[0]
	return im.w.pipe == nil && len(im.levels) == 1 && g.tileW == im.spec.SizeX && g.tileH == im.spec.SizeY
}

// streamPlanes writes planes larger than readChunk, each streamed from r
// in pieces of readChunk bytes.
func (im *Image) streamPlanes(r io.Reader) error {
	buf := im.w.readBuffer(readChunk)
	for p := range im.planes {
		z, c, t := im.spec.PlaneCoords(p)
		pw, err := im.Plane(z, c, t)
		if err != nil {
			return err
		}
		for left := im.PlaneBytes(); left > 0; {
			got, readErr := io.ReadFull(r, buf[:min(left, readChunk)])
			if readErr != nil {
				return im.readError(p, readErr)
			}
			if _, err := pw.Write(buf[:got]); err != nil {
				return err
			}
			left -= int64(got)
		}
	}
	return nil
}

// readError reports r's failure while plane p was being read: an early
// end is ErrData (and io.ErrUnexpectedEOF), any other error is r's.
func (im *Image) readError(p int, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: image %d: the input ends in plane %d of %d: %w", ErrData, im.index, p, len(im.planes), io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("pyramid: image %d: reading plane %d of %d: %w", im.index, p, len(im.planes), err)
}

// readBuffer returns the writer's buffer for ReadPlanes, of at least n
// bytes, shared by its images.
func (w *Writer) readBuffer(n int) []byte {
	if cap(w.readBuf) < n {
		w.readBuf = make([]byte, n)
	}
	return w.readBuf[:n]
}
