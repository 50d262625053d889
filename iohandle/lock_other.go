//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris)

package iohandle

import "io"

// lockFile does nothing: this system has no flock, and temporary files go
// unlocked.
func lockFile(osFile) error { return nil }

// holdLock has no lock to hold on this system.
func holdLock(osFile) io.Closer { return nopCloser{} }

// removeIfUnlocked leaves the file: without locks, a live writer's
// temporary file cannot be told from a dead one's.
func removeIfUnlocked(string) {}
