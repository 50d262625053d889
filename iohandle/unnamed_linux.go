package iohandle

import (
	"errors"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openTmpfile opens a new file without a name in dir (O_TMPFILE), which
// disappears when it is closed unless linkTmpfile gives it one first. It
// fails where the file system does not support O_TMPFILE (EOPNOTSUPP;
// EISDIR from kernels before 3.11), and where /proc, which linkTmpfile
// links through, is not mounted.
func openTmpfile(dir string, perm fs.FileMode) (osFile, error) {
	f, err := os.OpenFile(dir, unix.O_TMPFILE|os.O_WRONLY, perm)
	if err != nil {
		return nil, err
	}
	err = control(f, func(fd uintptr) error {
		_, err := os.Stat(procFD(fd))
		return err
	})
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// linkTmpfile gives f, from openTmpfile, the name path, and fails with an
// error matching fs.ErrExist if path exists: linkat never replaces. It
// links f's /proc/self/fd entry (AT_SYMLINK_FOLLOW), as open(2) advises,
// and if /proc has gone since, f's descriptor itself (AT_EMPTY_PATH),
// which linkat(2) allows a process with CAP_DAC_READ_SEARCH.
func linkTmpfile(f osFile, path string) error {
	return control(f, func(fd uintptr) error {
		err := unix.Linkat(unix.AT_FDCWD, procFD(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
		if errors.Is(err, unix.ENOENT) {
			if byFD := unix.Linkat(int(fd), "", unix.AT_FDCWD, path, unix.AT_EMPTY_PATH); !errors.Is(byFD, unix.ENOENT) {
				return byFD
			}
		}
		return err
	})
}

// procFD is the /proc entry of the process's file descriptor fd.
func procFD(fd uintptr) string { return "/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10) }
