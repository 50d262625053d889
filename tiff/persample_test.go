package tiff

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
)

// TestLayoutOneValueForEverySample: BitsPerSample and SampleFormat hold a
// value per sample, but one value stands for every sample, as libtiff
// reads it (and writers such as old ImageJ store it so).
func TestLayoutOneValueForEverySample(t *testing.T) {
	tests := []struct {
		name    string
		samples uint16
		planar  uint16
		bits    []uint16
		format  []uint16
		want    Layout
	}{
		{"RGB, one BitsPerSample", 3, PlanarContig, []uint16{8}, nil,
			Layout{SamplesPerPixel: 3, BitsPerSample: 8, SampleFormat: SampleFormatUint, PlanarConfiguration: PlanarContig, Photometric: PhotometricRGB, Planes: 1}},
		{"RGB, one of each", 3, PlanarContig, []uint16{16}, []uint16{SampleFormatInt},
			Layout{SamplesPerPixel: 3, BitsPerSample: 16, SampleFormat: SampleFormatInt, PlanarConfiguration: PlanarContig, Photometric: PhotometricRGB, Planes: 1}},
		{"planar, one of each", 3, PlanarSeparate, []uint16{32}, []uint16{SampleFormatFloat},
			Layout{SamplesPerPixel: 3, BitsPerSample: 32, SampleFormat: SampleFormatFloat, PlanarConfiguration: PlanarSeparate, Photometric: PhotometricRGB, Planes: 3}},
		{"RGB, three BitsPerSample", 3, PlanarContig, []uint16{8, 8, 8}, nil,
			Layout{SamplesPerPixel: 3, BitsPerSample: 8, SampleFormat: SampleFormatUint, PlanarConfiguration: PlanarContig, Photometric: PhotometricRGB, Planes: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			planes := 1
			if tt.planar == PlanarSeparate {
				planes = int(tt.samples)
			}
			l, err := pageWith(t, func(b *ifd.Builder) {
				b.AddShort(TagImageWidth, 10)
				b.AddShort(TagImageLength, 4)
				b.AddShort(TagSamplesPerPixel, tt.samples)
				b.AddShort(TagBitsPerSample, tt.bits...)
				if tt.format != nil {
					b.AddShort(TagSampleFormat, tt.format...)
				}
				b.AddShort(TagPlanarConfiguration, tt.planar)
				b.AddLong(TagStripOffsets, make([]uint32, planes)...)
				b.AddLong(TagStripByteCounts, make([]uint32, planes)...)
			}).Layout()
			require.NoError(t, err)
			want := tt.want
			want.Width, want.Height, want.Compression, want.Predictor = 10, 4, CompressionNone, PredictorNone
			want.BlockWidth, want.BlockHeight, want.BlocksAcross, want.BlocksDown = 10, 4, 1, 1
			assert.Equal(t, want, l)
		})
	}
}
