package iohandle

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Temporary names beside a destination NAME are .NAME.<hex>.tmp, with
// tempHexDigits random lowercase hexadecimal digits: hidden from a plain
// ls, and told apart from any other file by their exact shape.
const (
	tempHexDigits = 16
	tempSuffix    = ".tmp"
)

// maxTempNames is how many random names createTemp tries before it gives
// up; with 64 random bits, a second one is needed only when another writer
// took the same name, or cleaned it away before this one could lock it.
const maxTempNames = 100

var errNoTempName = errors.New("no unused temporary name")

// maxNameBytes is the longest file name most file systems take (NAME_MAX
// of ext4, XFS, Btrfs, NTFS and APFS, in bytes).
const maxNameBytes = 255

// tempBase returns the part of base a temporary name holds: all of it,
// or, where the name would pass maxNameBytes, as many of its first bytes
// as fit, cut before a UTF-8 character, so that a destination of the
// longest name a file system takes has a temporary name too. (Two such
// destinations alike in those bytes share their dead writers' cleaning.)
func tempBase(base string) string {
	room := maxNameBytes - len(".."+tempSuffix) - tempHexDigits
	if len(base) <= room {
		return base
	}
	for room > 0 && !utf8.RuneStart(base[room]) {
		room--
	}
	return base[:room]
}

// dirOf returns the directory of path as the system resolves the path:
// the text before its last separator, not cleaned, since "link/.." is
// the parent of the link's target and "missing/.." no directory at all,
// while cleaning makes both "."; "." when there is none.
func dirOf(path string) string {
	dir, _ := filepath.Split(path)
	if dir == "" {
		return "."
	}
	return dir
}

// tempName returns a new random temporary name beside dir+base, as
// filepath.Split splits a path (dir empty or ending in a separator).
func tempName(dir, base string) string {
	var suffix [tempHexDigits / 2]byte
	_, _ = rand.Read(suffix[:])
	return dir + "." + tempBase(base) + "." + hex.EncodeToString(suffix[:]) + tempSuffix
}

// isTempName reports whether name is a temporary name tempName gives
// beside base.
func isTempName(name, base string) bool {
	rest, ok := strings.CutPrefix(name, "."+tempBase(base)+".")
	if !ok {
		return false
	}
	digits, ok := strings.CutSuffix(rest, tempSuffix)
	if !ok || len(digits) != tempHexDigits {
		return false
	}
	for _, c := range []byte(digits) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// createTemp creates a new file beside path with an unused random name
// and takes its lock. A name cleaned away by another Create between the
// two (removeStale took the lock first) is given up for a new one.
func createTemp(path string, perm fs.FileMode) (*os.File, string, error) {
	dir, base := filepath.Split(path)
	for range maxTempNames {
		tmp := tempName(dir, base)
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			var pathErr *fs.PathError
			if errors.As(err, &pathErr) {
				err = pathErr.Err // name the destination, not the temporary file
			}
			return nil, "", &OpError{Op: "create", Path: path, Err: err}
		}
		if err := lockTemp(f, tmp); err != nil {
			_ = f.Close()
			continue
		}
		return f, tmp, nil
	}
	return nil, "", &OpError{Op: "create", Path: path, Err: errNoTempName}
}

// errCleaned is lockTemp's report that another Create took the new file
// for a dead writer's.
var errCleaned = errors.New("temporary file taken by a cleaner")

// lockTemp takes the lock of f, just created as tmp, and checks that tmp
// is still f: a removeStale that locked it first has removed it, or will.
// Where the file system has no locks, the file goes unlocked, and
// removeStale cannot lock it either.
func lockTemp(f *os.File, tmp string) error {
	if err := lockFile(f); errors.Is(err, errLocked) {
		return errCleaned
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	named, err := os.Lstat(tmp)
	if err != nil || !os.SameFile(fi, named) {
		return errCleaned
	}
	return nil
}

// RemoveStale removes the temporary files that writers of path which died
// left beside it, as Create does first: for a program that refuses to
// write path (it exists, say) before it would call Create. It is best
// effort, and never removes a live writer's file (see Create): where the
// file system has no locks (flock), or on Windows, it removes nothing.
func RemoveStale(path string) { removeStale(path) }

// removeStale removes the temporary files that earlier writers of path
// left beside it when they died: the names of tempName's shape whose lock
// it can take. It is best effort: a file it cannot open, lock or remove
// stays.
func removeStale(path string) {
	dir, base := filepath.Split(path)
	d, err := os.Open(dirOf(path))
	if err != nil {
		return
	}
	entries, _ := d.ReadDir(-1)
	_ = d.Close()
	for _, e := range entries {
		if e.Type().IsRegular() && isTempName(e.Name(), base) {
			removeIfUnlocked(dir + e.Name()) // not joined: a join cleans "link/.." to "."
		}
	}
}

// errLocked is lockFile's report that another open file holds the lock.
var errLocked = errors.New("locked by another open file")

// nopCloser is a lock that holds nothing.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// Temporaries returns the hidden temporary files beside path
// (.NAME.<16 hex digits>.tmp) that writers of path made where the output
// could not be an unnamed file (see Create), and have not yet renamed or
// removed: a writer still running, or one that died or was killed at once.
// The next Create of path removes those of dead writers. A directory that
// cannot be read is an error; none is a nil slice.
func Temporaries(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dirOf(path))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		// Regular files only, as removeStale takes, and named as it
		// names them: a join would clean "link/.." to ".", not the
		// directory the link's parent is.
		if e.Type().IsRegular() && isTempName(e.Name(), base) {
			out = append(out, dir+e.Name())
		}
	}
	return out, nil
}
