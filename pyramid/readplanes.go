package pyramid

import (
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
// fastest dimension first). No plane of the image may be started yet.
//
// When a plane's only tile is the plane itself, byte for byte (no
// compression, one tile per plane, no reduced levels), r is read straight
// into the output's buffer, as a file copy would: the way to write a stack
// of small raw planes. Otherwise r is read in pieces of about 4 MiB.
//
// If r ends before the last plane, the planes read whole are written, the
// others stay missing (Close lists them), and the error wraps ErrData and
// io.ErrUnexpectedEOF; when the planes are copied straight, the bytes of
// the plane r ends in stay in the file, unused. Other errors of r are
// returned wrapped. Neither fails the writer.
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
	switch {
	case im.tileIsPlane():
		return im.copyPlanes(r)
	case im.PlaneBytes() > readChunk:
		return im.streamPlanes(r)
	}
	return im.bufferPlanes(r)
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
	src := &fingerprintReader{r: r, tile: n, hash: w.content != nil}
	perChunk := max(1, int(readChunk/n))
	for first := 0; first < len(im.planes); first += perChunk {
		if err := w.opts.Context.Err(); err != nil {
			return w.fail(wrapStreamError(err))
		}
		b, readErr := w.tw.ReadBlock(src, int64(min(perChunk, len(im.planes)-first))*n)
		if readErr != nil && !src.ended && !errors.Is(readErr, io.ErrNoProgress) {
			return w.fail(wrapStreamError(readErr)) // the output failed
		}
		for i := range int(b.Size / uint64(n)) {
			st := &im.planes[first+i]
			im.planeDirs(st)
			st.dirs[0].seqs = append(st.dirs[0].seqs, w.seq)
			w.seq++
			st.done = true
			var sum uint64
			if src.hash {
				sum = src.sums[i]
			}
			tile := tiff.Block{Offset: b.Offset + uint64(i)*uint64(n), Size: uint64(n)}
			if err := w.recordSum(tile, sum); err != nil {
				return w.fail(err)
			}
		}
		src.sums = src.sums[:0]
		if readErr != nil {
			return im.readError(first+int(b.Size/uint64(n)), readErr)
		}
	}
	return nil
}

// bufferPlanes writes planes of up to readChunk bytes through WritePlane,
// reading as many whole planes as fit in readChunk at a time.
func (im *Image) bufferPlanes(r io.Reader) error {
	n := int(im.PlaneBytes())
	perChunk := readChunk / n
	buf := im.w.readBuffer(min(perChunk, len(im.planes)) * n)
	for first := 0; first < len(im.planes); first += perChunk {
		want := min(perChunk, len(im.planes)-first) * n
		got, readErr := io.ReadFull(r, buf[:want])
		for i := range got / n {
			z, c, t := im.spec.PlaneCoords(first + i)
			if err := im.WritePlane(z, c, t, buf[i*n:(i+1)*n]); err != nil {
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
