package iohandle

import "golang.org/x/sys/unix"

// startWriteback asks the system to start writing n bytes of f from off
// to the device, without waiting for them (sync_file_range with
// SYNC_FILE_RANGE_WRITE). It is only a hint: the fsync at Commit still
// makes the file durable and reports the errors of storing it.
func startWriteback(f osFile, off, n int64) error {
	return control(f, func(fd uintptr) error {
		return unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
