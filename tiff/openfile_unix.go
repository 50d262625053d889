//go:build unix

package tiff

import (
	"os"
	"syscall"
)

// openNonBlocking opens name for reading without waiting for a named
// pipe's writer. O_NONBLOCK changes nothing of a regular file's reads.
func openNonBlocking(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
