package iohandle

import (
	"errors"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// directAlign is the alignment of memory, length and file offset that a
// write needs to go around the page cache: 4096 bytes covers the logical
// block size of the devices ometiff writes to (512 or 4096). A device that
// needs more refuses the write with EINVAL, and File then writes through
// the page cache.
const directAlign = 4096

// setDirect turns O_DIRECT on or off for f's open file. It fails where the
// file system does not support direct I/O.
func setDirect(f osFile, on bool) error {
	return control(f, func(fd uintptr) error {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			return err
		}
		if on {
			flags |= unix.O_DIRECT
		} else {
			flags &^= unix.O_DIRECT
		}
		_, err = unix.FcntlInt(fd, unix.F_SETFL, flags)
		return err
	})
}

// directAligned reports whether p, written at file offset off, meets
// directAlign.
func directAligned(p []byte, off int64) bool {
	return len(p)%directAlign == 0 && off%directAlign == 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(p)))%directAlign == 0
}

// refusedDirect reports whether err is the kernel refusing a direct write
// for its alignment.
func refusedDirect(err error) bool { return errors.Is(err, syscall.EINVAL) }
