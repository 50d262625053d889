//go:build !linux

package iohandle

// mapBuffer returns nil: buffers come from the Go heap on this system.
func mapBuffer(int) []byte { return nil }

// unmapBuffer is never called on this system.
func unmapBuffer([]byte) {}
