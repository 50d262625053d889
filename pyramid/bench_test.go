package pyramid

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ometiff-go/ometiff/internal/synth"
	"github.com/ometiff-go/ometiff/iohandle"
)

// Benchmarks of the project's workloads: the slide (one 8192x8192 plane,
// uint16 or RGB) and the stack (15,120 small uint16 planes in 84 images).
// Inputs are generated once, outside the timing; each iteration writes a
// whole file to disk (without fsync). Reported: raw input MB/s, the OS
// write calls per MiB of output, and the compression ratio.

const slideSide = 8192

var slideU16 = sync.OnceValue(func() []byte {
	pix := make([]uint16, slideSide*slideSide)
	synth.Pattern{}.Gray16(pix, 0, 0, slideSide, slideSide)
	out := make([]byte, 2*len(pix))
	for i, v := range pix {
		binary.LittleEndian.PutUint16(out[2*i:], v)
	}
	return out
})

var slideRGB = sync.OnceValue(func() []byte {
	pix := make([]byte, 3*slideSide*slideSide)
	synth.Pattern{}.RGB8(pix, 0, 0, slideSide, slideSide)
	return pix
})

// benchWrite writes planes with opts to a file once per iteration.
func benchWrite(b *testing.B, opts Options, rawBytes int64, write func(w *Writer) error) {
	dir := b.TempDir()
	b.SetBytes(rawBytes)
	b.ReportAllocs()
	var stats iohandle.Stats
	var size int64
	for i := 0; b.Loop(); i++ {
		path := filepath.Join(dir, fmt.Sprintf("%d.ome.tif", i))
		h, err := iohandle.Create(path, iohandle.Options{BufferSize: iohandle.BigBuffer, NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		w, err := New(h, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := write(w); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		stats, size = h.Stats(), h.Len()
		b.StopTimer()
		_ = os.Remove(path)
		b.StartTimer()
	}
	b.ReportMetric(float64(stats.Writes())/(float64(size)/(1<<20)), "writes/MiB")
	b.ReportMetric(float64(rawBytes)/float64(size), "ratio")
}

// BenchmarkSlide writes the slide workload: 8192x8192 uint16, 256x256
// tiles, levels by 2x2 mean until one tile, with each codec.
func BenchmarkSlide(b *testing.B) {
	pix := slideU16()
	for _, comp := range []Compression{LZW, Deflate, Zstd, None} {
		b.Run(comp.String(), func(b *testing.B) {
			benchWrite(b, Options{Compression: comp}, int64(len(pix)), func(w *Writer) error {
				im, err := w.AddImage(ImageSpec{SizeX: slideSide, SizeY: slideSide, PixelType: Uint16})
				if err != nil {
					return err
				}
				return im.WritePlane(0, 0, 0, pix)
			})
		})
	}
}

// BenchmarkSlideRGB writes the 8192x8192 RGB uint8 slide with LZW, and
// with JPEG at quality 85 (YCbCr 4:2:0).
func BenchmarkSlideRGB(b *testing.B) {
	pix := slideRGB()
	for _, opts := range []Options{{}, {Compression: JPEG, Quality: 85}} {
		b.Run(opts.Compression.String(), func(b *testing.B) {
			benchWrite(b, opts, int64(len(pix)), func(w *Writer) error {
				im, err := w.AddImage(ImageSpec{SizeX: slideSide, SizeY: slideSide, SamplesPerPixel: 3})
				if err != nil {
					return err
				}
				return im.WritePlane(0, 0, 0, pix)
			})
		})
	}
}

// stackPlanes are 64 distinct 128x128 uint16 planes the stack workload
// cycles through.
var stackPlanes = sync.OnceValue(func() [][]byte {
	planes := make([][]byte, 64)
	buf := make([]uint16, 128*128)
	for i := range planes {
		synth.Pattern{Seed: uint64(i)}.Gray16(buf, 0, 0, 128, 128)
		planes[i] = make([]byte, 2*len(buf))
		for j, v := range buf {
			binary.LittleEndian.PutUint16(planes[i][2*j:], v)
		}
	}
	return planes
})

// BenchmarkStack writes the stack workload: 84 series x 90 z x 2 channels
// of 128x128 uint16 (15,120 planes) in one file.
func BenchmarkStack(b *testing.B) {
	planes := stackPlanes()
	const series, zs, cs = 84, 90, 2
	for _, comp := range []Compression{None, LZW} {
		b.Run(comp.String(), func(b *testing.B) {
			benchWrite(b, Options{Compression: comp}, series*zs*cs*128*128*2, func(w *Writer) error {
				n := 0
				for s := range series {
					im, err := w.AddImage(ImageSpec{Name: fmt.Sprint("series ", s), SizeX: 128, SizeY: 128, SizeZ: zs, SizeC: cs, PixelType: Uint16})
					if err != nil {
						return err
					}
					for c := range cs {
						for z := range zs {
							if err := im.WritePlane(z, c, 0, planes[n%len(planes)]); err != nil {
								return err
							}
							n++
						}
					}
				}
				return nil
			})
		})
	}
}

// BenchmarkStackFloor writes the stack workload's raw bytes with one
// sequential stream of 2 MiB writes, in the same conditions as
// BenchmarkStack: the floor it is measured against.
func BenchmarkStackFloor(b *testing.B) {
	planes := stackPlanes()
	const n = 84 * 90 * 2
	dir := b.TempDir()
	b.SetBytes(n * 128 * 128 * 2)
	b.ReportAllocs()
	buf := make([]byte, 0, iohandle.BigBuffer)
	for i := 0; b.Loop(); i++ {
		path := filepath.Join(dir, fmt.Sprintf("%d.raw", i))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		for p := range n {
			if len(buf)+len(planes[0]) > cap(buf) {
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
				buf = buf[:0]
			}
			buf = append(buf, planes[p%len(planes)]...)
		}
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		buf = buf[:0]
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = os.Remove(path)
		b.StartTimer()
	}
}
