//go:build cgo && ometiff_turbo

package main

// thisBuildJPEG is what ometiff version says of this build's JPEG codec;
// the build constraint is that of package compress's libjpeg-turbo files.
const thisBuildJPEG = "JPEG: libjpeg-turbo (cgo)\n"
