package pyramid

import (
	"fmt"
	"sync/atomic"
)

// PlaneWriter streams the rows of one plane: SizeY rows of SizeX pixels of
// SamplesPerPixel little-endian samples, in order, in writes of any size
// (a write may end inside a row). The plane is complete when its last
// byte is written; every level of its pyramid is computed on the way, so
// memory does not grow with the plane's height.
//
// A PlaneWriter is used by one goroutine at a time; the PlaneWriters of
// different planes may be used from different goroutines at once. A call
// made while another goroutine's call on the same PlaneWriter is under way
// takes nothing and returns ErrPlane.
type PlaneWriter struct {
	im            *Image
	st            *planeState
	stream        *planeStream // nil once the plane is complete
	index         int          // of the plane, in DimensionOrder
	size, written int64
	busy          atomic.Bool // a call is under way
	abandoned     bool        // given back by Abort
}

// Write takes the next len(p) bytes of the plane. Bytes past the end of the
// plane are an error, and nothing of p is taken then. p is not kept after
// Write returns. A Write that panics (a Progress that panics) gives the
// plane back, as Abort does, before the panic goes on: a caller that
// recovers writes the plane again from a new PlaneWriter, and this one
// returns ErrPlane (writing on through it stored a tile twice).
func (pw *PlaneWriter) Write(p []byte) (int, error) {
	if pw == nil || pw.im == nil {
		return 0, errZero
	}
	if !pw.busy.CompareAndSwap(false, true) {
		return 0, pw.busyError()
	}
	defer pw.busy.Store(false)
	defer func() {
		if r := recover(); r != nil {
			pw.giveBackIfOpen()
			panic(r)
		}
	}()
	w := pw.im.w
	if err := w.usable(); err != nil {
		return 0, err
	}
	if pw.abandoned {
		return 0, pw.abandonedError()
	}
	if pw.written == pw.size {
		return 0, fmt.Errorf("%w: the plane is complete", ErrData)
	}
	if int64(len(p)) > pw.size-pw.written {
		return 0, fmt.Errorf("%w: %s past the end of the plane", ErrData, byteCount(int64(len(p))-(pw.size-pw.written)))
	}
	if err := pw.stream.write(p); err != nil {
		return 0, w.fail(err)
	}
	pw.written += int64(len(p))
	if pw.written == pw.size {
		pw.finish()
	}
	return len(p), nil
}

// writeAll writes a whole plane and closes it.
func (pw *PlaneWriter) writeAll(pix []byte) error {
	defer func() {
		if r := recover(); r != nil {
			pw.giveBackIfOpen()
			panic(r)
		}
	}()
	if _, err := pw.Write(pix); err != nil {
		return err
	}
	return pw.Close()
}

// giveBackIfOpen gives back the plane if it is not complete, for a call
// that panics (a Progress or a reader of the caller's that panicked) and
// panics again: the caller, who may have no PlaneWriter to Abort, may
// recover and write the plane again.
func (pw *PlaneWriter) giveBackIfOpen() {
	if !pw.abandoned && pw.stream != nil && pw.written < pw.size {
		pw.abandon()
		pw.abandoned = true
	}
}

// busyError is the error of a call made while another is under way.
func (pw *PlaneWriter) busyError() error { return pw.im.busyError(pw.index) }

// busyError is the error of a call on the writer of plane p made while
// another is under way.
func (im *Image) busyError(p int) error {
	image, z, c, t := im.planeAt(p)
	return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d is in use by a call under way", ErrPlane, z, c, t, image)
}

// finish marks the plane written and keeps its buffers for the image's
// next plane, if one is still to start: a file of thousands of one-plane
// images would otherwise keep every image's buffers until Close.
func (pw *PlaneWriter) finish() {
	w, s := pw.im.w, pw.stream
	pw.stream, s.state = nil, nil
	w.mu.Lock()
	defer w.mu.Unlock()
	pw.st.rowsDue = false
	pw.st.settle()
	if !w.closed && pw.im.started < pw.im.kept() {
		pw.im.free = append(pw.im.free, s)
	}
}

// Close reports whether the plane is complete: nil, or ErrData saying
// how many of its bytes were written. An incomplete plane stays open, to
// be completed by more writes or given back by Abort; the writer's Close
// reports it missing. After the writer's Close or Abort, or its failure,
// an incomplete plane's Close returns ErrClosed.
func (pw *PlaneWriter) Close() error {
	if pw == nil || pw.im == nil {
		return errZero
	}
	if !pw.busy.CompareAndSwap(false, true) {
		return pw.busyError()
	}
	defer pw.busy.Store(false)
	if pw.abandoned {
		return pw.abandonedError()
	}
	if pw.written < pw.size {
		// A plane cut short by the writer's end is no fault of its data.
		if err := pw.im.w.usable(); err != nil {
			return err
		}
		return fmt.Errorf("%w: plane has %d of %d bytes", ErrData, pw.written, pw.size)
	}
	return nil
}

// Abort gives back a plane not complete, so that it may be written again
// from its start (Image.Plane, WritePlane...): a camera frame dropped
// halfway, a source that failed. The tiles already stored of it stay in
// the file, where no directory names them, and count in Progress's
// TotalTiles. The PlaneWriter takes nothing more: Write and Close return
// ErrPlane. A complete plane cannot be given back (ErrPlane); Abort again
// does nothing. To discard the whole file, use Writer.Abort.
func (pw *PlaneWriter) Abort() error {
	if pw == nil || pw.im == nil {
		return errZero
	}
	if !pw.busy.CompareAndSwap(false, true) {
		return pw.busyError()
	}
	defer pw.busy.Store(false)
	switch {
	case pw.abandoned:
		return nil
	case pw.written == pw.size:
		image, z, c, t := pw.im.planeAt(pw.index)
		return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d is complete, and cannot be given back", ErrPlane, z, c, t, image)
	}
	if err := pw.im.w.usable(); err != nil {
		return err
	}
	pw.abandon()
	pw.abandoned = true
	return nil
}

// abandonedError is the error of a call on a plane given back by Abort.
func (pw *PlaneWriter) abandonedError() error {
	image, z, c, t := pw.im.planeAt(pw.index)
	return fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d was given back (by PlaneWriter.Abort, or a call on it that panicked); Image.Plane starts it again",
		ErrPlane, z, c, t, image)
}

// planeStream holds the per-level state of one open plane.
type planeStream struct {
	im        *Image
	state     *planeState
	levels    []*levelStream
	rowBytes  int
	chunkRows int    // level 0's tile height: the stage's rows, the most handed down at once
	stage     []byte // rows assembled from partial or misaligned writes
	staged    int    // bytes in stage
	scratch   []byte // one tile when tiles are stored unchanged
}

// takeStream returns a finished plane's buffers, reset for a new plane, or
// nil. The caller holds w.mu.
func (im *Image) takeStream() *planeStream {
	n := len(im.free)
	if n == 0 {
		return nil
	}
	s := im.free[n-1]
	im.free[n-1] = nil
	im.free = im.free[:n-1]
	s.staged = 0
	for _, l := range s.levels {
		l.reset()
	}
	return s
}

// newStream returns new buffers for a plane.
func (im *Image) newStream() *planeStream {
	pb := im.spec.pixelBytes()
	s := &planeStream{im: im, rowBytes: im.spec.SizeX * pb, chunkRows: im.levels[0].tileH}
	for i, g := range im.levels {
		l := &levelStream{geom: g, index: i, encoded: i < im.encoded, rowBytes: g.width * pb, reduce: im.reduce, emitTiles: s.emitTiles}
		s.levels = append(s.levels, l)
	}
	for i := 0; i+1 < len(s.levels); i++ {
		l := s.levels[i]
		l.next = s.levels[i+1]
		l.pending = make([]byte, l.rowBytes)
		l.reduced = make([]byte, min(reducedRows, l.next.geom.height)*l.next.rowBytes)
	}
	return s
}

// reducedRows is how many rows a level reduces before it hands them to the
// next: a few, since they are copied into the next level's band anyway.
const reducedRows = 16

// write takes the next bytes of the plane. Whole, aligned rows go down
// without a copy; the rest is assembled in the stage. Level 0 gets no
// piece that crosses the end of one of its tile rows: every level then
// cuts its tile rows in the order writing the plane whole does, whatever
// the bands written, and the file is the same.
func (s *planeStream) write(p []byte) error {
	sample := s.im.spec.PixelType.Size()
	l0 := s.levels[0]
	for len(p) > 0 {
		room := l0.geom.tileH - l0.rows%l0.geom.tileH // rows to the end of the tile row
		if s.staged == 0 && len(p) >= s.rowBytes && aligned(p, sample) {
			n := min(len(p)/s.rowBytes, room)
			if err := l0.addRows(p[:n*s.rowBytes], n); err != nil {
				return err
			}
			p = p[n*s.rowBytes:]
			continue
		}
		if s.stage == nil {
			s.stage = make([]byte, s.chunkRows*s.rowBytes)
		}
		k := copy(s.stage[s.staged:room*s.rowBytes], p)
		s.staged += k
		p = p[k:]
		if rows := s.staged / s.rowBytes; rows == room || len(p) == 0 && rows > 0 {
			if err := l0.addRows(s.stage[:rows*s.rowBytes], rows); err != nil {
				return err
			}
			s.staged = copy(s.stage, s.stage[rows*s.rowBytes:s.staged])
		}
	}
	return nil
}

// emitTiles cuts one tile row of a level, rows rows of src, into tiles and
// submits them left to right. Tiles past the image's edges are padded with
// zeros, or, when the image pads its edges (JPEG), with copies of the last
// column and row: a lossy codec then spends nothing on an edge that is not
// there, and leaves no dark fringe on the pixels that are.
func (s *planeStream) emitTiles(l *levelStream, src []byte, rows int) error {
	g, w := l.geom, s.im.w
	pb := s.im.spec.pixelBytes()
	tileRow := g.tileW * pb
	dir, enc := &s.state.dirs[l.index], s.im.encoders[l.index]
	for tx := range g.across {
		x0 := tx * tileRow
		n := min(tileRow, l.rowBytes-x0)
		if w.pipe == nil && n == l.rowBytes && n == tileRow && rows == g.tileH {
			if err := w.submit(dir, enc, src[:rows*tileRow]); err != nil { // contiguous already
				return err
			}
			continue
		}
		tile := w.tileBuffer(g.tileH*tileRow, &s.scratch)
		for y := range rows {
			row := tile[y*tileRow : (y+1)*tileRow]
			copy(row, src[y*l.rowBytes+x0:y*l.rowBytes+x0+n])
			if s.im.padEdges {
				repeatLast(row[n-pb:], pb)
			} else {
				clear(row[n:])
			}
		}
		if s.im.padEdges {
			last := tile[(rows-1)*tileRow : rows*tileRow]
			for y := rows; y < g.tileH; y++ {
				copy(tile[y*tileRow:], last)
			}
		} else {
			clear(tile[rows*tileRow:])
		}
		if err := w.submit(dir, enc, tile); err != nil {
			return err
		}
	}
	return nil
}

// repeatLast fills p with copies of its first pixel, of pb bytes, doubling
// the copied part each time.
func repeatLast(p []byte, pb int) {
	for n := pb; n < len(p); n *= 2 {
		copy(p[n:], p[:n])
	}
}

// byteCount says n bytes, in the singular for one.
func byteCount(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
