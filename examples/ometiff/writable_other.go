//go:build !linux && !darwin

package main

// writableDir reports nil: elsewhere a directory's permissions are not
// the mode bits access(2) checks (Windows' ACLs), and creating the output
// says whether it can be.
func writableDir(string) error { return nil }
