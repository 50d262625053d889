//go:build linux || darwin

package main

import "golang.org/x/sys/unix"

// writableDir reports why the process cannot create a file in dir, or
// nil: it needs to write the directory and search it. access(2) checks
// as the kernel will at creation, with the real user (the process's,
// unless it is set-user-ID); a read-only file system fails it too, even
// for root, whom permissions do not stop.
func writableDir(dir string) error {
	return unix.Access(dir, unix.W_OK|unix.X_OK)
}
