package pyramid

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/zeebo/xxh3"

	"github.com/ometiff-go/ometiff/tiff"
)

// readChunk is how much ReadPlanes takes from its reader at once: whole
// planes up to this size, or pieces of this size of a larger plane.
const readChunk = 4 << 20

// ReadPlanes writes every plane of the image from r: PlaneBytes bytes per
// plane, as WritePlane takes them, planes in plane order (DimensionOrder,
// fastest dimension first). No plane of the image may be started yet, and
// none may be started by another goroutine while ReadPlanes runs, and the
// image may not be truncated (TruncateT): ErrPlane for any of these.
//
// When a plane's only tile is the plane itself, byte for byte (no
// compression, one tile per plane, no reduced levels), r is read straight
// into the output's buffer, as a file copy would: the way to write a stack
// of small raw planes. The writer's other goroutines wait while a piece is
// read then, and r must not call the Writer or its Images, which would
// wait for ever, but for Image.Spec. Otherwise r is read in pieces of
// about 4 MiB.
//
// If r ends before the last plane, the planes read whole are written, the
// others stay missing (Close lists them, and they may still be written),
// and the error wraps ErrData and io.ErrUnexpectedEOF. What was stored of
// the plane r ends in (its bytes when planes are copied straight, the
// tiles of its first rows when a plane is larger than a piece) stays in
// the file, unused. Other errors of r are returned wrapped, with the same
// outcome. Neither fails the writer. A reader that panics panics
// ReadPlanes; a caller that recovers may still Close or Abort the writer
// (its deferred Abort discards the file), the planes not read whole
// missing.
func (im *Image) ReadPlanes(r io.Reader) error {
	if im == nil || im.w == nil {
		return errZero
	}
	if r == nil {
		if err := im.w.usable(); err != nil {
			return err
		}
		return fmt.Errorf("%w: ReadPlanes from a nil reader", ErrData)
	}
	if err := im.reservePlanes(); err != nil {
		return err
	}
	defer im.releasePlanes()
	switch {
	case im.tileIsPlane():
		return im.copyPlanes(r)
	case im.PlaneBytes() > readChunk:
		return im.streamPlanes(r)
	}
	return im.bufferPlanes(r)
}

// reservePlanes marks every plane of the image as ReadPlanes's, unless one
// is started or reserved already.
func (im *Image) reservePlanes() error {
	w := im.w
	im.readMu.Lock()
	defer im.readMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return err
	}
	if im.encoded > 0 {
		return fmt.Errorf("%w: ReadPlanes on image %d, whose tiles are given encoded (EncodedPlane)", ErrPlane, im.index)
	}
	if kept := im.keptT(); kept < im.spec.SizeT {
		return fmt.Errorf("%w: ReadPlanes on image %d, truncated to %d of its %d time points (TruncateT)", ErrPlane, im.index, kept, im.spec.SizeT)
	}
	for p := range im.planes {
		if st := &im.planes[p]; st.dirs != nil || st.reserved {
			z, c, t := im.spec.PlaneCoords(p)
			return fmt.Errorf("%w: ReadPlanes on image %d, whose plane z=%d c=%d t=%d is already started", ErrPlane, im.index, z, c, t)
		}
	}
	for p := range im.planes {
		im.planes[p].reserved = true
	}
	im.reading.Store(true)
	return nil
}

// releasePlanes ends ReadPlanes's reservation: the planes it did not write
// may be written by anyone.
func (im *Image) releasePlanes() {
	im.readMu.Lock()
	defer im.readMu.Unlock()
	im.w.mu.Lock()
	defer im.w.mu.Unlock()
	for p := range im.planes {
		im.planes[p].reserved = false
	}
	im.reading.Store(false)
}

// writeReserved writes plane p, reserved by ReadPlanes, whole.
func (im *Image) writeReserved(p int, pix []byte) error {
	pw, err := im.openPlane(p, nil, openReserved)
	if err != nil {
		return err
	}
	return pw.writeAll(pix)
}

// tileIsPlane reports whether a plane is stored as its own bytes: one
// uncompressed tile of exactly the plane's size, and no reduced levels.
func (im *Image) tileIsPlane() bool {
	g := im.levels[0]
	return im.w.pipe == nil && len(im.levels) == 1 && g.tileW == im.spec.SizeX && g.tileH == im.spec.SizeY
}

// copyPlanes writes planes that are their own tile from r to the output
// with no copy in between, readChunk bytes or one plane at a time.
func (im *Image) copyPlanes(r io.Reader) error {
	w := im.w
	n := im.PlaneBytes()
	src := &fingerprintReader{r: r, tile: n, hash: w.hashed}
	perChunk := max(1, int(readChunk/n))
	for first := 0; first < len(im.planes); first += perChunk {
		if w.ctx.Err() != nil {
			return w.fail(context.Cause(w.ctx))
		}
		read, readErr, err := im.copyChunk(src, first, min(perChunk, len(im.planes)-first))
		if err != nil {
			return err
		}
		w.report()
		if readErr != nil {
			return im.readError(first+read, readErr)
		}
	}
	return nil
}

// copyChunk copies planes first to first+count-1 from src to the output,
// holding the writer's lock, and returns how many it read whole, with the
// error of src, or the writer's failure.
func (im *Image) copyChunk(src *fingerprintReader, first, count int) (read int, readErr, err error) {
	w := im.w
	n := im.PlaneBytes()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usableLocked(); err != nil {
		return 0, nil, err
	}
	// The caller's reader runs under the lock: released by a defer, so
	// that a reader that panics (a caller that recovers) leaves the writer
	// one its deferred Abort can take.
	b, readErr := func() (tiff.Block, error) {
		w.out.Lock()
		defer w.out.Unlock()
		return w.tw.ReadBlock(src, int64(count)*n)
	}()
	if readErr != nil && !src.ended && !errors.Is(readErr, io.ErrNoProgress) {
		return 0, nil, w.failLocked(readErr) // the output failed
	}
	read = int(b.Size / uint64(n))
	for i := range read {
		st := &im.planes[first+i]
		im.planeDirs(st)
		st.dirs[0].seqs = append(st.dirs[0].seqs, w.seq)
		w.seq++
		st.done = true
		var sum uint64
		if src.hash {
			sum = src.sums[i]
		}
		w.out.Lock()
		err := w.record(tiff.Block{Offset: b.Offset + uint64(i)*uint64(n), Size: uint64(n)}, sum)
		w.out.Unlock()
		if err != nil {
			return 0, nil, w.failLocked(err)
		}
	}
	src.sums = src.sums[:0]
	return read, readErr, nil
}

// bufferPlanes writes planes of up to readChunk bytes whole, reading as
// many as fit in readChunk at a time.
func (im *Image) bufferPlanes(r io.Reader) error {
	n := int(im.PlaneBytes())
	perChunk := readChunk / n
	buf := im.w.takeReadBuffer(min(perChunk, len(im.planes)) * n)
	defer im.w.putReadBuffer(buf)
	for first := 0; first < len(im.planes); first += perChunk {
		want := min(perChunk, len(im.planes)-first) * n
		got, readErr := io.ReadFull(r, buf[:want])
		for i := range got / n {
			if err := im.writeReserved(first+i, buf[i*n:(i+1)*n]); err != nil {
				return err
			}
		}
		if readErr != nil {
			return im.readError(first+got/n, readErr)
		}
	}
	return nil
}

// streamPlanes writes planes larger than readChunk, each streamed from r
// in pieces of readChunk bytes.
func (im *Image) streamPlanes(r io.Reader) error {
	buf := im.w.takeReadBuffer(readChunk)
	defer im.w.putReadBuffer(buf)
	var pw *PlaneWriter
	defer func() {
		if r := recover(); r != nil {
			if pw != nil {
				pw.giveBackIfOpen()
			}
			panic(r)
		}
	}()
	for p := range im.planes {
		var err error
		if pw, err = im.openPlane(p, nil, openReserved); err != nil {
			return err
		}
		for left := im.PlaneBytes(); left > 0; {
			got, readErr := io.ReadFull(r, buf[:min(left, readChunk)])
			if readErr != nil {
				pw.abandon()
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

// abandon gives back a plane not complete, to be written again from its
// start: one ReadPlanes started and its input cut off (ReadPlanes's doc
// says the planes not read whole may still be written), or one Abort
// gives back.
func (pw *PlaneWriter) abandon() {
	pw.im.giveBack(pw.st, pw.stream)
	pw.stream = nil
}

// giveBack returns plane st, started and not complete, to the planes not
// started, and its buffers, s (nil for none), to the image. The tiles
// stored of it stay in the file, which no directory names; they count in
// Progress's TotalTiles, as they do in its Tiles.
func (im *Image) giveBack(st *planeState, s *planeStream) {
	w := im.w
	w.mu.Lock()
	defer w.mu.Unlock()
	stored := 0
	for _, d := range st.dirs {
		stored += len(d.seqs)
	}
	w.totalTiles.Add(int64(stored))
	st.dirs, st.rowsDue, st.tilesDue = nil, false, false
	im.started--
	if s != nil {
		if !w.closed {
			im.free = append(im.free, s)
		}
		s.state = nil
	}
}

// readError reports r's failure while plane p was being read: an early
// end is ErrData (and io.ErrUnexpectedEOF), any other error is r's.
func (im *Image) readError(p int, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: image %d: the input ends in plane index %d (of planes 0 to %d): %w", ErrData, im.index, p, len(im.planes)-1, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("pyramid: image %d: reading plane index %d (of planes 0 to %d): %w", im.index, p, len(im.planes)-1, err)
}

// takeReadBuffer returns a buffer of n bytes for ReadPlanes: the one the
// writer keeps for its images, when no other ReadPlanes holds it.
func (w *Writer) takeReadBuffer(n int) []byte {
	w.mu.Lock()
	buf := w.readBuf
	w.readBuf = nil
	w.mu.Unlock()
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	return buf[:n]
}

// putReadBuffer gives a buffer of takeReadBuffer back to the writer, which
// keeps the largest.
func (w *Writer) putReadBuffer(buf []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed && cap(buf) > cap(w.readBuf) {
		w.readBuf = buf
	}
}

// fingerprintReader passes its reader's bytes on and hashes them in
// tile-sized pieces as they go by, while they are still in the cache: the
// XXH3 of each tile, in order, as record would compute it. It also notes
// when its reader ended or failed, to tell the input's errors from the
// output's.
type fingerprintReader struct {
	r     io.Reader
	tile  int64 // bytes per tile
	hash  bool  // false: pass the bytes on only
	ended bool  // r returned an error, io.EOF included

	partial xxh3.Hasher // the tile under way, when it spans reads
	inTile  int64       // bytes of it so far
	sums    []uint64    // the whole tiles read since the caller last took them
}

func (f *fingerprintReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.hash && n > 0 {
		f.add(p[:n])
	}
	if err != nil {
		f.ended = true
	}
	return n, err
}

// add hashes p, the next bytes of the stream.
func (f *fingerprintReader) add(p []byte) {
	for len(p) > 0 {
		k := min(int64(len(p)), f.tile-f.inTile)
		if f.inTile == 0 && k == f.tile {
			f.sums = append(f.sums, xxh3.Hash(p[:k]))
		} else {
			f.partial.Write(p[:k])
			if f.inTile += k; f.inTile == f.tile {
				f.sums = append(f.sums, f.partial.Sum64())
				f.partial.Reset()
				f.inTile = 0
			}
		}
		p = p[k:]
	}
}
