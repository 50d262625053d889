//go:build !linux

package iohandle

import "errors"

// startWriteback fails where the system cannot be asked to start writing
// a file's range early: the fsync at Commit writes it all.
func startWriteback(osFile, int64, int64) error {
	return errors.ErrUnsupported
}
