//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package iohandle

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock on f's open file without waiting. It
// returns errLocked when another open file holds one: a live writer's.
func lockFile(f osFile) error {
	return control(f, func(fd uintptr) error {
		err := unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return errLocked
		}
		return err
	})
}

// holdLock returns a second descriptor of f's open file, which keeps f's
// flock after f is closed, until it is closed itself. Should the system
// refuse one, the lock goes with f: it guards only the moment of a rename
// against a Create of the same destination.
func holdLock(f osFile) io.Closer {
	dup := -1
	err := control(f, func(fd uintptr) error {
		var err error
		dup, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nopCloser{}
	}
	return os.NewFile(uintptr(dup), "")
}

// removeIfUnlocked removes the regular file name if it can take its lock,
// that is if the writer that created it is gone, and name is still the
// file it locked.
func removeIfUnlocked(name string) {
	f, err := os.OpenFile(name, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if lockFile(f) != nil {
		return
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	if named, err := os.Lstat(name); err == nil && os.SameFile(fi, named) {
		_ = removeFile(name)
	}
}
