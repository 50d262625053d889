//go:build !linux

package iohandle

import "errors"

// renameExclusive is not available here: publish links instead.
func renameExclusive(oldpath, newpath string) error { return errors.ErrUnsupported }
