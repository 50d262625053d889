//go:build cgo && ometiff_turbo

package source

// This build decodes JPEG with libjpeg-turbo, as libvips does, with the
// same IDCT, upsampling and colour conversion: the samples must be equal.
func init() { jpegMaxDifference, jpegMeanDifference = 0, 0 }
