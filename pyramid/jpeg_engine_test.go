//go:build !(cgo && ometiff_turbo)

package pyramid

// goJPEG says package compress encodes JPEG with its Go encoder, whose
// bytes the JPEG golden files hold (builds with the ometiff_turbo tag use
// libjpeg-turbo, which codes the same tables into other bytes).
const goJPEG = true
