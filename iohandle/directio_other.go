//go:build !linux

package iohandle

import "errors"

// setDirect fails: this system has no O_DIRECT, so Options.DirectIO
// changes nothing.
func setDirect(osFile, bool) error { return errors.ErrUnsupported }

// directAligned is never asked on this system.
func directAligned([]byte, int64) bool { return false }

// refusedDirect is never asked on this system.
func refusedDirect(error) bool { return false }
