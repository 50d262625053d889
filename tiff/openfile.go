package tiff

import (
	"errors"
	"fmt"
	"os"
)

// ErrNotRegular reports a path OpenRegular refuses: a named pipe, a
// device, a socket or a directory.
var ErrNotRegular = errors.New("tiff: not a regular file")

// OpenRegular opens the regular file at name (or the one a symbolic link
// names) for reading. A named pipe, whose open blocks until a writer
// comes, or a device, whose reads may never end, is refused with
// ErrNotRegular, unopened when its path shows it, and otherwise told from
// the file opened itself: on Unix it is opened without blocking, so that a
// file swapped for a pipe between the check of the path and the open
// cannot block the caller.
func OpenRegular(name string) (*os.File, error) {
	// What the path shows to be no regular file is not opened at all: the
	// open of some devices acts (a watchdog arms, a tape rewinds).
	if info, err := os.Stat(name); err == nil && !info.Mode().IsRegular() {
		return nil, notRegularError(name)
	}
	f, err := openNonBlocking(name)
	if err != nil {
		// A socket cannot be opened at all (ENXIO): said as what it is.
		if info, serr := os.Stat(name); serr == nil && !info.Mode().IsRegular() {
			return nil, notRegularError(name)
		}
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = notRegularError(name)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// notRegularError is ErrNotRegular for the file it names.
type notRegularError string

func (e notRegularError) Error() string {
	return fmt.Sprintf("tiff: %s is not a regular file (but a pipe, device, socket or directory)", string(e))
}

func (e notRegularError) Is(target error) bool { return target == ErrNotRegular }
