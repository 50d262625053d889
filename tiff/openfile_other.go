//go:build !unix

package tiff

import (
	"os"
)

// openNonBlocking opens name for reading, after a check of the path: the
// open of a named pipe may block here, and only the check stops it.
func openNonBlocking(name string) (*os.File, error) {
	if info, err := os.Stat(name); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, notRegularError(name)
	}
	return os.Open(name)
}
