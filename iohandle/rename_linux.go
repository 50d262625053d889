package iohandle

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// renameExclusive renames oldpath to newpath unless newpath exists, in one
// system call (renameat2 with RENAME_NOREPLACE). It returns an error
// wrapping errors.ErrUnsupported where the file system lacks it.
func renameExclusive(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOTSUP) {
		return fmt.Errorf("renameat2: %w (%w)", errors.ErrUnsupported, err)
	}
	return err
}
