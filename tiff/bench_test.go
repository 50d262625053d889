package tiff

import (
	"testing"

	"github.com/ometiff-go/ometiff/ifd"
)

// BenchmarkManyDirectories lays out and writes the directories of the
// stack workload (84 series x 90 z x 2 channels of 128 x 128 uint16, as
// examples/stack writes it): 15,120 tiled directories of one tile each,
// sharing their fields as the planes of a stack do. It measures Close:
// planning, encoding and appending them.
func BenchmarkManyDirectories(b *testing.B) {
	const dirs, tile = 15120, 128 * 128 * 2
	fields := &ifd.Builder{}
	fields.AddLong(TagNewSubfileType, SubfileFullResolution)
	fields.AddUint(TagImageWidth, 128)
	fields.AddUint(TagImageLength, 128)
	fields.AddShort(TagBitsPerSample, 16)
	fields.AddShort(TagCompression, CompressionNone)
	fields.AddShort(TagPhotometricInterpretation, PhotometricBlackIsZero)
	fields.AddShort(TagSamplesPerPixel, 1)
	fields.AddShort(TagPlanarConfiguration, PlanarContig)
	fields.AddASCII(TagSoftware, "ometiff")
	fields.AddUint(TagTileWidth, 128)
	fields.AddUint(TagTileLength, 128)
	fields.AddShort(TagSampleFormat, SampleFormatUint)
	ds := make([]Directory, dirs)
	for i := range ds {
		ds[i] = Directory{Fields: fields, OffsetsTag: TagTileOffsets, CountsTag: TagTileByteCounts,
			Blocks: []Block{{Offset: reservedHeaderSize + uint64(i)*tile, Size: tile}}}
	}
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		b.StopTimer()
		h := &discardHandle{} // the tiles are skipped, the directories counted
		w, err := NewWriter(h, Options{})
		if err != nil {
			b.Fatal(err)
		}
		h.skip = dirs * tile
		for i := range ds {
			if err := w.AddDirectory(&ds[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		size = h.Len() - dirs*tile
	}
	b.SetBytes(size)
}

// discardHandle keeps the header and counts the bytes appended after it.
type discardHandle struct {
	sparseHandle
	appended int64
}

func (d *discardHandle) Len() int64 { return d.Memory.Len() + d.skip + d.appended }

func (d *discardHandle) Write(p []byte) (int, error) {
	if d.skip == 0 {
		return d.Memory.Write(p)
	}
	d.appended += int64(len(p))
	return len(p), nil
}
