package pyramid

import (
	"fmt"
	"unsafe"
)

// Sample is the Go type of the samples of a PixelType: uint8 (or byte) for
// Uint8, int8 for Int8, uint16 for Uint16, and so on to float64 for
// Float64.
type Sample interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | float64
}

// PixelTypeOf returns the PixelType whose samples are of type T.
func PixelTypeOf[T Sample]() PixelType {
	switch any(*new(T)).(type) {
	case uint8:
		return Uint8
	case int8:
		return Int8
	case uint16:
		return Uint16
	case int16:
		return Int16
	case uint32:
		return Uint32
	case int32:
		return Int32
	case float32:
		return Float32
	}
	return Float64
}

// WriteSamples writes plane (z, c, t) of im whole from typed samples:
// SizeY rows of SizeX pixels of SamplesPerPixel samples, interleaved, as
// WritePlane takes their bytes. T must be the Go type of the image's
// PixelType (PixelTypeOf); another type is ErrData. The samples are written
// as they are in memory, without a copy or a conversion (the writer runs on
// little-endian hosts only), and are not kept after WriteSamples returns.
func WriteSamples[T Sample](im *Image, z, c, t int, samples []T) error {
	if err := checkSamples[T](im); err != nil {
		return err
	}
	return im.WritePlane(z, c, t, sampleBytes(samples))
}

// SampleWriter streams typed samples into a plane, as PlaneWriter streams
// their bytes: rows in order, in writes of any number of samples. It is
// used by one goroutine at a time, as its PlaneWriter.
type SampleWriter[T Sample] struct {
	pw *PlaneWriter
}

// NewSampleWriter returns a SampleWriter writing samples of type T to pw.
// T must be the Go type of the image's PixelType (PixelTypeOf); another
// type is ErrData.
func NewSampleWriter[T Sample](pw *PlaneWriter) (*SampleWriter[T], error) {
	if pw == nil {
		return nil, fmt.Errorf("%w: nil PlaneWriter", ErrPlane)
	}
	if err := checkSamples[T](pw.im); err != nil {
		return nil, err
	}
	return &SampleWriter[T]{pw: pw}, nil
}

// Write takes the next len(samples) samples of the plane, without a copy,
// and returns how many it took: all of them, or none with the error
// PlaneWriter.Write gives for their bytes.
func (s *SampleWriter[T]) Write(samples []T) (int, error) {
	if s == nil || s.pw == nil {
		return 0, errZero
	}
	n, err := s.pw.Write(sampleBytes(samples))
	return n / int(unsafe.Sizeof(*new(T))), err
}

// Close reports whether the plane is complete, as PlaneWriter.Close.
func (s *SampleWriter[T]) Close() error {
	if s == nil || s.pw == nil {
		return errZero
	}
	return s.pw.Close()
}

// checkSamples refuses samples of type T for im unless T is the Go type of
// its pixel type.
func checkSamples[T Sample](im *Image) error {
	if im == nil || im.w == nil {
		return errZero
	}
	if got, want := PixelTypeOf[T](), im.spec.PixelType; got != want {
		if err := im.w.usable(); err != nil {
			return err
		}
		return fmt.Errorf("%w: []%s samples for an image of %s samples", ErrData, pixelTypeNames[got], pixelTypeNames[want])
	}
	return nil
}

// sampleBytes returns the bytes of samples in memory: little-endian samples
// on the hosts the writer runs on.
func sampleBytes[T Sample](samples []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(samples))), len(samples)*int(unsafe.Sizeof(*new(T))))
}
