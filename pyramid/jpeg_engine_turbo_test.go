//go:build cgo && ometiff_turbo

package pyramid

// goJPEG says package compress encodes JPEG with its Go encoder; in this
// build libjpeg-turbo encodes, and the JPEG golden files do not apply.
const goJPEG = false
