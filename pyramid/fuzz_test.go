package pyramid

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/readback"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

// fuzzInput reads small numbers from the fuzzer's bytes, zero when they
// run out.
type fuzzInput []byte

func (f *fuzzInput) next(n int) int {
	if len(*f) == 0 {
		return 0
	}
	v := int((*f)[0])
	*f = (*f)[1:]
	return v % n
}

// FuzzWriter drives the public API with random specs, options and write
// sequences, valid or not, from one goroutine or from several at once
// (planes, the same plane twice, ReadPlanes, two goroutines sharing one
// PlaneWriter), and maybe TruncateT, beside them or after. Errors are fine and must be typed; panics are not; and a
// file that closes without error must read back pixel-exact.
func FuzzWriter(f *testing.F) {
	f.Add([]byte{30, 20, 2, 0, 0, 1, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 200})
	f.Add([]byte{70, 3, 0, 1, 1, 2, 1, 2, 0, 1, 1, 0, 1, 0, 1, 0, 2, 0, 1, 3, 9, 9})
	f.Add([]byte{17, 33, 3, 2, 0, 0, 2, 1, 2, 1, 1, 2, 0, 0, 0, 1})
	// Images of their own Coding: JPEG, Zstd with the predictor, Deflate.
	f.Add([]byte{40, 30, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 10, 0xA4})
	f.Add([]byte{30, 20, 2, 0, 0, 1, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0xAB})
	f.Add([]byte{30, 20, 2, 0, 0, 1, 0, 2, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0xA1})
	// JPEG, RGB and gray.
	f.Add([]byte{40, 30, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 10, 0})
	f.Add([]byte{53, 19, 1, 1, 0, 0, 0, 0, 1, 4, 0, 2, 1, 0, 1, 1, 1, 0, 0, 1, 7, 1, 0, 1, 0, 1, 20, 0})
	// From several goroutines: two sharing a PlaneWriter, and one plane in
	// bands; ReadPlanes racing a plane and a shared PlaneWriter; six planes
	// in bands.
	f.Add([]byte{32, 22, 1, 0, 0, 2, 0, 0, 0, 2, 0, 0, 2, 1, 1, 0, 0, 0, 1, 5, 1, 1, 0, 0, 0, 1, 40, 0})
	f.Add([]byte{40, 30, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 2, 9, 1, 1, 1, 0, 0, 1, 30, 1, 0, 1, 0, 1, 7, 0})
	f.Add([]byte{25, 25, 2, 2, 0, 6, 0, 2, 1, 3, 0, 0, 2, 1,
		1, 0, 0, 0, 3, 1, 50, 1, 1, 0, 0, 4, 1, 70, 1, 2, 0, 0, 5, 1, 90,
		1, 0, 1, 0, 6, 1, 110, 1, 1, 1, 0, 7, 1, 130, 1, 2, 1, 0, 3, 1, 150, 0})
	// TruncateT to one time point of two: after the planes of XYTZC, and
	// beside them.
	f.Add([]byte{30, 20, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 200, 1, 0, 0, 1, 1, 200, 0, 1, 1})
	f.Add([]byte{30, 20, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 2, 1, 1, 0, 0, 0, 3, 1, 50, 1, 0, 0, 1, 3, 1, 50, 0, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzInput(data)
		spec := ImageSpec{
			SizeX: in.next(80) - 2, SizeY: in.next(80) - 2,
			SizeZ: in.next(3) + 1, SizeC: in.next(3), SizeT: in.next(2) + 1,
			PixelType: PixelType(in.next(9)), SamplesPerPixel: []int{1, 1, 3, 2}[in.next(4)],
			DimensionOrder: []DimensionOrder{XYZCT, XYTZC, XYCZT, "bad"}[in.next(4)],
		}
		opts := Options{
			TileSize: []int{16, 32, 24}[in.next(3)], Compression: Compression(in.next(5)),
			Downsampling: Downsampling(in.next(3)), Levels: in.next(4), Workers: in.next(3),
		}
		// A last byte of 0xA0 to 0xAF (which leaves the seeds above as
		// they were) gives the image its own Coding: a compression, and
		// the horizontal predictor or none.
		if n := len(data); n > 0 && data[n-1]&0xF0 == 0xA0 {
			spec.Coding = &Coding{Compression: Compression(data[n-1] & 7 % 6), Predictor: Predictor(data[n-1] >> 3 & 1 * 2)}
		}
		h := iohandle.NewMemory()
		w, err := New(h, opts)
		if err != nil {
			requireTyped(t, err)
			return
		}
		im, err := w.AddImage(spec)
		if err != nil {
			requireTyped(t, err)
			_ = w.Abort()
			return
		}
		spec = im.Spec()
		labels := opts.Downsampling == Mode
		written := map[int]refPlane{}
		concurrent := in.next(2) == 1
		if !concurrent && in.next(4) == 0 { // the first planes, maybe not all, from a reader
			var raw []byte
			read := in.next(spec.Planes() + 1)
			for p := range read {
				plane := randomPlane(spec.SizeX, spec.SizeY, spec.SamplesPerPixel, spec.PixelType, uint64(p), labels)
				raw = append(raw, plane.pix...)
				written[p] = plane
			}
			raw = append(raw, make([]byte, in.next(int(im.PlaneBytes())))...)
			if err := im.ReadPlanes(bytes.NewReader(raw)); err != nil {
				requireTyped(t, err)
			}
		}
		var jobs []fuzzJob
		for in.next(8) != 0 && len(in) > 0 {
			j := fuzzJob{z: in.next(spec.SizeZ + 1), c: in.next(spec.SizeC + 1), t: in.next(spec.SizeT + 1)}
			if concurrent {
				j.kind = in.next(8)
			}
			j.plane = randomPlane(spec.SizeX, spec.SizeY, spec.SamplesPerPixel, spec.PixelType, uint64(len(in)), labels)
			j.pix = j.plane.pix
			switch j.kind {
			case 1: // one row repeated, written by two goroutines at once
				j.plane.pix = bytes.Repeat(j.pix[:len(j.pix)/spec.SizeY], spec.SizeY)
				j.pix = j.plane.pix
			case 2: // every plane, from a reader
				j.all = make([]refPlane, spec.Planes())
				j.pix = nil
				for p := range j.all {
					j.all[p] = randomPlane(spec.SizeX, spec.SizeY, spec.SamplesPerPixel, spec.PixelType, uint64(len(in)+p), labels)
					j.pix = append(j.pix, j.all[p].pix...)
				}
			}
			if (j.kind == 0 || j.kind > 2) && in.next(6) == 0 {
				j.pix = j.pix[:len(j.pix)-in.next(len(j.pix)+1)]
			}
			j.band = 1 + in.next(300)
			jobs = append(jobs, j)
		}
		// Then, maybe, TruncateT: beside the jobs, or after them.
		truncate, sizeT := in.next(3) == 1, in.next(spec.SizeT+2)
		var truncErr error
		errs := make([]error, len(jobs))
		if concurrent {
			var wg sync.WaitGroup
			for i := range jobs {
				wg.Go(func() { errs[i] = jobs[i].run(im) })
			}
			if truncate {
				wg.Go(func() { truncErr = im.TruncateT(sizeT) })
			}
			wg.Wait()
		} else {
			for i := range jobs {
				errs[i] = jobs[i].run(im)
			}
			if truncate {
				truncErr = im.TruncateT(sizeT)
			}
		}
		for i, j := range jobs {
			switch {
			case errs[i] != nil:
				requireTyped(t, errs[i])
			case j.all != nil:
				for p, plane := range j.all {
					written[p] = plane
				}
			default:
				p, _ := spec.PlaneIndex(j.z, j.c, j.t)
				written[p] = j.plane
			}
		}
		if truncate && truncErr != nil {
			requireTyped(t, truncErr)
		} else if truncate { // the planes written of the time points kept, by index in the new order
			added := spec
			spec = im.Spec()
			kept := map[int]refPlane{}
			for p, plane := range written {
				if z, c, tt := added.PlaneCoords(p); tt < spec.SizeT {
					q, _ := spec.PlaneIndex(z, c, tt)
					kept[q] = plane
				}
			}
			written = kept
		}
		err = w.Close()
		if err != nil {
			requireTyped(t, err)
			if h.Bytes() != nil {
				t.Fatal("a failed writer left output")
			}
			return
		}
		checkFuzzedFile(t, h.Bytes(), spec, opts, written)
	})
}

// fuzzJob is one write of FuzzWriter.
type fuzzJob struct {
	z, c, t int
	kind    int        // 1: two goroutines share the PlaneWriter; 2: ReadPlanes; else in bands
	plane   refPlane   // the plane when the write succeeds
	all     []refPlane // ReadPlanes's planes
	pix     []byte     // what is written: the plane, maybe cut short
	band    int
}

func (j fuzzJob) run(im *Image) error {
	switch j.kind {
	case 1:
		return writeShared(im, j.z, j.c, j.t, j.pix[:len(j.pix)/im.Spec().SizeY])
	case 2:
		return im.ReadPlanes(bytes.NewReader(j.pix))
	}
	return writeBands(im, j.z, j.c, j.t, j.pix, j.band, false)
}

// writeShared writes row again and again into plane (z, c, t) from two
// goroutines sharing its PlaneWriter, until the plane is complete: whatever
// calls the PlaneWriter refuses because the other goroutine's is under way,
// the plane is row repeated.
func writeShared(im *Image, z, c, t int, row []byte) error {
	pw, err := im.Plane(z, c, t)
	if err != nil {
		return err
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for g := range errs {
		wg.Go(func() {
			for {
				_, err := pw.Write(row)
				switch {
				case err == nil || errors.Is(err, ErrPlane):
					runtime.Gosched()
				case errors.Is(err, ErrData): // complete, or a row that does not fit
					return
				default:
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return pw.Close()
}

// writeBands writes a plane through its PlaneWriter in bands of the given
// size, with runtime.Gosched between them when yield is set.
func writeBands(im *Image, z, c, t int, pix []byte, band int, yield bool) error {
	pw, err := im.Plane(z, c, t)
	if err != nil {
		return err
	}
	for len(pix) > 0 {
		n := min(band, len(pix))
		if _, err := pw.Write(pix[:n]); err != nil {
			return err
		}
		pix = pix[n:]
		if yield {
			runtime.Gosched()
		}
	}
	return pw.Close()
}

// checkFuzzedFile reads a fuzzed file back and compares every plane.
func checkFuzzedFile(t *testing.T, data []byte, spec ImageSpec, opts Options, written map[int]refPlane) {
	levels, err := pyramidLevels(spec.SizeX, spec.SizeY, opts.TileSize, opts.Levels)
	if err != nil {
		t.Fatal(err)
	}
	f, err := readback.Parse(data)
	if err != nil {
		t.Fatalf("written file does not parse: %v", err)
	}
	if len(f.IFDs) != spec.Planes() {
		t.Fatalf("%d planes in the file, want %d", len(f.IFDs), spec.Planes())
	}
	if coding := cmp.Or(spec.Coding, &Coding{Compression: opts.Compression}); coding.Compression == JPEG { // lossy: every level decodes at its size
		for p, page := range readFile(t, data).Pages {
			for l, lv := range levelsOf(page) {
				if got := decodePage(t, lv, nil); got.w != levels[l].width || got.h != levels[l].height {
					t.Fatalf("plane %d level %d is %d x %d, want %d x %d", p, l, got.w, got.h, levels[l].width, levels[l].height)
				}
			}
		}
		return
	}
	for p, d := range f.IFDs {
		want := referencePyramid(written[p], spec.PixelType, opts.Downsampling, len(levels))
		for l := range want {
			dir := d
			if l > 0 {
				dir = d.SubIFDs[l-1]
			}
			got, err := f.Image(dir)
			if err != nil {
				t.Fatalf("plane %d level %d: %v", p, l, err)
			}
			if !bytes.Equal(got.Pix, want[l].pix) {
				t.Fatalf("plane %d level %d differs", p, l)
			}
		}
	}
}

// requireTyped fails unless err matches one of the package's errors and
// carries its prefix once.
func requireTyped(t *testing.T, err error) {
	t.Helper()
	for _, e := range kinds {
		if errors.Is(err, e) {
			if strings.Count(err.Error(), prefix) != 1 {
				t.Fatalf("the prefix piles up: %v", err)
			}
			return
		}
	}
	t.Fatalf("untyped error: %v", err)
}

// FuzzImageSpec gives AddImage sizes of any magnitude, tile sizes and
// level counts: it must refuse them with a typed error or accept them, and
// then start, and abort, a plane without a panic.
func FuzzImageSpec(f *testing.F) {
	f.Add(int64(300), int64(200), int64(1), int64(1), int64(1), int64(64), int64(0))
	f.Add(int64(1)<<32-1, int64(1)<<32-1, int64(1), int64(1), int64(1), int64(16), int64(0))
	f.Add(int64(1)<<40, int64(3), int64(1)<<20, int64(1)<<20, int64(2), int64(256), int64(3))
	f.Fuzz(func(t *testing.T, x, y, z, c, tt, tile, levels int64) {
		w, err := New(iohandle.NewMemory(), Options{TileSize: int(tile), Levels: int(levels)})
		if err != nil {
			requireTyped(t, err)
			return
		}
		defer w.Abort()
		im, err := w.AddImage(ImageSpec{SizeX: int(x), SizeY: int(y), SizeZ: int(z), SizeC: int(c), SizeT: int(tt)})
		if err != nil {
			requireTyped(t, err)
			return
		}
		if _, err := im.Plane(0, 0, 0); err != nil {
			requireTyped(t, err)
		}
	})
}

// FuzzInspect runs Inspect, fields and all, on arbitrary bytes, seeded with
// a tiny OME-TIFF built field by field (the fuzzer minimizes every new
// input, which starves the search on a file as large as the writer's
// smallest): errors are fine if typed (the file is no TIFF, or a
// malformed one), panics and other errors are not.
func FuzzInspect(f *testing.F) {
	f.Add(tinyOMETIFF(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Inspect(io.Discard, bytes.NewReader(data), int64(len(data)), InspectOptions{Fields: true})
		if err != nil && !errors.Is(err, tiff.ErrNotTIFF) && !errors.Is(err, tiff.ErrMalformed) {
			t.Fatalf("untyped error: %v", err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "pyramid: tiff: ") {
			t.Fatalf("error without the package prefixes: %v", err)
		}
	})
}

// tinyOMETIFF is a 1x1 tiled OME-TIFF with a SubIFD, in a few hundred bytes.
func tinyOMETIFF(t testing.TB) []byte {
	h := iohandle.NewMemory()
	w, err := tiff.NewWriter(h, tiff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	directory := func(xml string) *tiff.Directory {
		b, err := w.WriteBlock([]byte{7})
		if err != nil {
			t.Fatal(err)
		}
		fields := new(ifd.Builder)
		fields.AddLong(tiff.TagImageWidth, 1)
		fields.AddLong(tiff.TagImageLength, 1)
		fields.AddShort(tiff.TagTileWidth, 16)
		fields.AddShort(tiff.TagTileLength, 16)
		if xml != "" {
			fields.AddASCII(tiff.TagImageDescription, xml)
		}
		return &tiff.Directory{Fields: fields, OffsetsTag: tiff.TagTileOffsets, CountsTag: tiff.TagTileByteCounts, Blocks: []tiff.Block{b}}
	}
	d := directory(`<OME UUID="u" Creator="c"><Image ID="Image:0" Name="a"><Pixels DimensionOrder="XYZCT" Type="uint8" SizeX="1" SizeY="1" SizeZ="1" SizeC="1" SizeT="1" PhysicalSizeX="1"/></Image></OME>`)
	d.SubIFDs = []*tiff.Directory{directory("")}
	if err := w.AddDirectory(d); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return h.Bytes()
}

// FuzzEncodedImage adds images whose tiles are given encoded, with random
// sizes, codings and levels, valid or not, and writes random tiles (and
// rows, when the levels are computed) into them, maybe giving the plane
// back partway and writing it again. Refusals must be typed;
// a file that closes must hold every tile given, byte for byte, under the
// coding given: EncodedLevelOf reads back each level's coding, defaults
// filled in.
func FuzzEncodedImage(f *testing.F) {
	// Gray LZW, full resolution only; YCbCr JPEG of 3 levels; 16-bit
	// Deflate with the predictor, levels computed; float Zstd of factor
	// 4; JPEG of uint16, refused.
	f.Add([]byte{100, 60, 0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 0, 0, 1, 3, 9})
	f.Add([]byte{90, 70, 1, 0, 4, 0, 2, 2, 0, 3, 1, 0, 2, 2, 1, 1, 0, 2, 1, 0, 0, 1, 0, 0, 2, 5})
	f.Add([]byte{50, 50, 0, 1, 2, 2, 1, 1, 0, 1, 0, 1, 0, 0, 0, 7})
	f.Add([]byte{120, 40, 0, 2, 3, 3, 2, 2, 0, 0, 0, 1, 2, 1, 1, 0, 0, 1, 3})
	f.Add([]byte{120, 40, 0, 1, 4, 0, 2, 2, 0, 0, 0, 1, 0, 0, 1})
	f.Add([]byte("000012000201")) // uncompressed tiles
	// Given back after 3 tiles and half its rows, then written again.
	f.Add([]byte{90, 70, 1, 0, 4, 0, 2, 2, 0, 3, 1, 0, 2, 2, 1, 1, 0, 2, 1, 0, 0, 1, 0, 0, 2, 0xB3})
	f.Add([]byte{50, 50, 0, 1, 2, 2, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0xB2})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzInput(data)
		spec := ImageSpec{SizeX: in.next(200) + 1, SizeY: in.next(200) + 1,
			SamplesPerPixel: []int{1, 3}[in.next(2)], PixelType: []PixelType{Uint8, Uint16, Float32}[in.next(3)]}
		tables := [][]byte{nil, {0xff, 0xd8, 0xff, 0xd9}, []byte("tables")}
		coding := func() TileCoding {
			c := TileCoding{
				Compression: Compression(in.next(6)), Predictor: Predictor(in.next(5)),
				TileWidth: 16 * in.next(5), TileHeight: 16*in.next(5) + in.next(2)*8,
				Photometric: []uint16{0, tiff.PhotometricBlackIsZero, tiff.PhotometricRGB, tiff.PhotometricYCbCr, tiff.PhotometricPalette}[in.next(5)],
				JPEGTables:  tables[in.next(3)],
			}
			if in.next(3) == 0 {
				c.YCbCrSubSampling = [2]int{in.next(5), in.next(5)}
				c.YCbCrPositioning = uint16(in.next(4))
				c.ReferenceBlackWhite = []float64{0, 255, 128, 255, 128, 255}[:in.next(2)*6]
			}
			return c
		}
		levels := []EncodedLevel{{TileCoding: coding()}}
		factor := 2 + in.next(3)
		for range in.next(4) {
			up := levels[len(levels)-1]
			if up.Width == 0 {
				up.Width, up.Height = spec.SizeX, spec.SizeY
			}
			c := levels[0].TileCoding
			if in.next(4) == 0 {
				c = coding()
			}
			levels = append(levels, EncodedLevel{Width: ceilDiv(up.Width, factor) + in.next(2) - in.next(2), Height: up.Height / factor, TileCoding: c})
		}
		h := iohandle.NewMemory()
		w, err := New(h, Options{TileSize: 32, Workers: in.next(3)})
		if err != nil {
			t.Fatal(err)
		}
		im, err := w.AddEncodedImage(spec, levels...)
		if err != nil {
			requireTyped(t, err)
			_ = w.Abort()
			return
		}
		spec = im.Spec()
		ep, err := im.EncodedPlane(0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		// A last byte of 0xB0 to 0xBF gives the plane back after its low
		// bits' tiles of level 0 (and half its rows), to write it again.
		if n := len(data); n > 0 && data[n-1]&0xF0 == 0xB0 {
			frame := framed(im, 0)
			junk := append(slices.Clone(frame), bytes.Repeat([]byte{0xee}, 30)...)
			if raw := im.rawTile[0]; raw > 0 {
				junk = make([]byte, raw)
			}
			for range min(int(data[n-1]&0xF), im.levels[0].tiles()-1) {
				if err := ep.WriteTile(0, junk); err != nil {
					t.Fatal(err)
				}
			}
			if im.computes() {
				if _, err := ep.Write(make([]byte, im.PlaneBytes()/2)); err != nil {
					t.Fatal(err)
				}
			}
			if err := ep.Abort(); err != nil {
				t.Fatal(err)
			}
			if ep, err = im.EncodedPlane(0, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		given := make([][][]byte, len(levels))
		for l := range levels {
			for i := range im.levels[l].tiles() {
				frame := framed(im, l)
				tile := append(slices.Clone(frame), bytes.Repeat([]byte{byte(l), byte(i)}, 4+in.next(40))...)
				if raw := im.rawTile[l]; raw > 0 { // uncompressed: exactly the tile's samples
					tile = bytes.Repeat([]byte{byte(l), byte(i)}, raw/2+1)[:raw]
				}
				if err := ep.WriteTile(l, tile); err != nil {
					t.Fatal(err)
				}
				given[l] = append(given[l], tile)
			}
		}
		if im.computes() {
			if _, err := ep.Write(make([]byte, im.PlaneBytes())); err != nil {
				t.Fatal(err)
			}
		}
		if err := ep.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		pages := levelsOf(readFile(t, h.Bytes()).Pages[0])
		if len(pages) != len(im.levels) {
			t.Fatalf("%d levels in the file, want %d", len(pages), len(im.levels))
		}
		for l, e := range levels {
			got, err := EncodedLevelOf(pages[l])
			if err != nil {
				t.Fatalf("level %d: %v", l, err)
			}
			want := e
			want.Width, want.Height = im.levels[l].width, im.levels[l].height
			want.stored = storedSamples{bits: 8 * spec.PixelType.Size(), samples: spec.SamplesPerPixel, format: pixelTypes[spec.PixelType].sampleFormat}
			want.Photometric = e.photometric(spec.SamplesPerPixel)
			if want.Predictor == PredictorAuto || want.Compression == JPEG || want.Compression == None {
				want.Predictor = PredictorNone
			}
			if want.Photometric == tiff.PhotometricYCbCr {
				h, v := e.subsampling()
				want.YCbCrSubSampling = [2]int{h, v}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("level %d reads back as\n%+v, want\n%+v", l, got, want)
			}
			for i, tile := range given[l] {
				stored, err := pages[l].ReadBlock(nil, i)
				if err != nil || !bytes.Equal(stored, tile) {
					t.Fatalf("level %d tile %d: %v", l, i, err)
				}
			}
		}
	})
}

// framed returns the start of a tile of level l of im framed as its
// codec's streams are (compress.CheckFraming): a JPEG tile's with a frame
// header of the tile's size and the image's samples too
// (compress.CheckJPEGTile).
func framed(im *Image, l int) []byte {
	if im.given[l] == tiff.CompressionJPEG {
		g, n := im.levels[l], im.spec.SamplesPerPixel
		sof := []byte{0xff, 0xd8, 0xff, 0xc0, 0, byte(8 + 3*n), 8, byte(g.tileH >> 8), byte(g.tileH), byte(g.tileW >> 8), byte(g.tileW), byte(n)}
		for c := range n {
			sof = append(sof, byte(c+1), 0x11, 0)
		}
		return sof
	}
	return map[uint16][]byte{tiff.CompressionDeflate: {0x78, 0x9c}, tiff.CompressionZstd: {0x28, 0xb5, 0x2f, 0xfd}, tiff.CompressionLZW: {0x80, 0x00}}[im.given[l]]
}
