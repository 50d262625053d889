//go:build !(cgo && ometiff_turbo)

package main

// thisBuildJPEG is what ometiff version says of this build's JPEG codec;
// the build constraint is that of package compress's Go codec.
const thisBuildJPEG = "JPEG: Go (image/jpeg decodes, package compress encodes)\n"
