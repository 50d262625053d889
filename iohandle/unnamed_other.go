//go:build !linux

package iohandle

import (
	"errors"
	"io/fs"
)

// openTmpfile fails: only Linux has O_TMPFILE, so files start with a
// temporary name.
func openTmpfile(string, fs.FileMode) (osFile, error) { return nil, errors.ErrUnsupported }

// linkTmpfile is never called on this system.
func linkTmpfile(osFile, string) error { return errors.ErrUnsupported }
