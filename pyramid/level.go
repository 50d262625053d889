package pyramid

import (
	"fmt"
	"math"
)

// levelGeom is the size and tiling of one resolution level.
type levelGeom struct {
	width, height int
	tileW, tileH  int
	across, down  int // tiles
}

func (g levelGeom) tiles() int { return g.across * g.down }

// newLevelGeom tiles a level of w x h pixels with tiles of at most tile
// pixels a side, shrunk to the level rounded up to 16.
func newLevelGeom(w, h, tile int) levelGeom {
	g := levelGeom{width: w, height: h, tileW: min(tile, roundUp16(w)), tileH: min(tile, roundUp16(h))}
	g.across, g.down = ceilDiv(w, g.tileW), ceilDiv(h, g.tileH)
	return g
}

func roundUp16(v int) int      { return (v + 15) &^ 15 }
func ceilDiv(a, b int) int     { return (a + b - 1) / b }
func halve(v int) int          { return (v + 1) / 2 }
func fits(w, h, tile int) bool { return w <= tile && h <= tile }

// pyramidLevels returns the levels of a w x h image: levels of them, or
// with levels 0, halving until a level fits in one tile.
func pyramidLevels(w, h, tile, levels int) ([]levelGeom, error) {
	most := 1
	for x, y := w, h; x > 1 || y > 1; x, y = halve(x), halve(y) {
		most++
	}
	if levels > most {
		return nil, fmt.Errorf("%w: %d levels asked of a %dx%d image, which has at most %d", ErrOption, levels, w, h, most)
	}
	var out []levelGeom
	for x, y := w, h; ; x, y = halve(x), halve(y) {
		g := newLevelGeom(x, y, tile)
		if g.tiles() > math.MaxUint32 {
			return nil, fmt.Errorf("%w: %dx%d in tiles of %d is %d tiles, more than a TIFF directory holds (2^32-1)", ErrSize, x, y, tile, g.tiles())
		}
		out = append(out, g)
		if levels > 0 && len(out) == levels || levels == 0 && fits(x, y, tile) {
			return out, nil
		}
	}
}

// tileRow names one row of tiles of one level.
type tileRow struct{ level, row int }

// levelStream turns the rows of one level of one plane into tiles, and
// feeds the reduced rows to the next level.
type levelStream struct {
	geom      levelGeom
	index     int  // level, 0 for full resolution
	encoded   bool // its tiles are given encoded: its rows are only reduced
	rowBytes  int
	band      []byte // rows waiting for a full tile row; made when first needed
	bandRows  int
	rows      int    // rows received
	tileRow   int    // next tile row to emit
	pending   []byte // a row waiting for its pair below
	paired    bool   // pending holds a row
	reduced   []byte // rows of the next level, built here
	next      *levelStream
	reduce    reduceFunc
	emitTiles func(l *levelStream, src []byte, rows int) error
}

// addRows takes n rows held contiguously in src.
func (l *levelStream) addRows(src []byte, n int) error {
	if l.rows+n > l.geom.height {
		return fmt.Errorf("%w: level %d gets row %d of %d", ErrData, l.index, l.rows+n, l.geom.height)
	}
	if !l.encoded {
		if err := l.tileRows(src, n); err != nil {
			return err
		}
	}
	l.rows += n
	if l.rows == l.geom.height && l.bandRows > 0 {
		if err := l.emit(l.band, l.bandRows); err != nil {
			return err
		}
	}
	if l.next == nil {
		return nil
	}
	return l.reduceRows(src, n)
}

// tileRows emits whole tile rows straight from src when the band is empty,
// and so the level's last, partial tile row when src ends the level, and
// collects the rest in the band. A level written in bands of a tile row
// then never needs a band of its own, not even for its last rows: at
// 100,000 pixels of RGB a band is 73 MiB.
func (l *levelStream) tileRows(src []byte, n int) error {
	th := l.geom.tileH
	for done := 0; done < n; {
		if l.bandRows == 0 && (n-done >= th || l.rows+n == l.geom.height) {
			rows := min(th, n-done)
			if err := l.emit(src[done*l.rowBytes:], rows); err != nil {
				return err
			}
			done += rows
			continue
		}
		if l.band == nil { // whole tile rows of aligned input never need it
			l.band = make([]byte, th*l.rowBytes)
		}
		take := min(th-l.bandRows, n-done)
		copy(l.band[l.bandRows*l.rowBytes:], src[done*l.rowBytes:(done+take)*l.rowBytes])
		l.bandRows += take
		done += take
		if l.bandRows == th {
			if err := l.emit(l.band, th); err != nil {
				return err
			}
		}
	}
	return nil
}

// emit hands one tile row (rows rows of src) to be cut into tiles.
func (l *levelStream) emit(src []byte, rows int) error {
	l.bandRows = 0
	err := l.emitTiles(l, src, rows)
	l.tileRow++
	return err
}

// reduceRows pairs the rows (with a pending one from before) into rows of
// the next level and passes them on, as many at once as l.reduced holds:
// a few rows, so that the reduced rows are still in cache when the next
// level takes them, and the buffer stays small however wide the level.
// The last row of an odd height is reduced alone.
func (l *levelStream) reduceRows(src []byte, n int) error {
	outRow := l.next.rowBytes
	most := len(l.reduced) / outRow
	out := 0
	put := func(a, b []byte) error {
		if out == most {
			if err := l.next.addRows(l.reduced[:out*outRow], out); err != nil {
				return err
			}
			out = 0
		}
		l.reduce(l.reduced[out*outRow:(out+1)*outRow], a, b, l.geom.width)
		out++
		return nil
	}
	row := func(i int) []byte { return src[i*l.rowBytes : (i+1)*l.rowBytes] }
	i := 0
	if l.paired && n > 0 {
		if err := put(l.pending, row(0)); err != nil {
			return err
		}
		i, l.paired = 1, false
	}
	for ; i+1 < n; i += 2 {
		if err := put(row(i), row(i+1)); err != nil {
			return err
		}
	}
	if i < n {
		copy(l.pending, row(i))
		l.paired = true
	}
	if l.rows == l.geom.height && l.paired {
		l.paired = false
		if err := put(l.pending, nil); err != nil {
			return err
		}
	}
	if out == 0 {
		return nil
	}
	return l.next.addRows(l.reduced[:out*outRow], out)
}

// reset prepares the stream for another plane of the same image.
func (l *levelStream) reset() {
	l.bandRows, l.rows, l.tileRow, l.paired = 0, 0, 0, false
}
