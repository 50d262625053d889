// Package iohandletest implements output handles that fail on purpose, for
// testing the writers above package iohandle, as testing/iotest does for
// readers and writers.
package iohandletest

import (
	"errors"
	"fmt"

	"github.com/ometiff-go/ometiff/iohandle"
)

// ErrInjected is wrapped by every failure a Faulty handle injects.
var ErrInjected = errors.New("iohandletest: injected fault")

// Faults says where a Faulty handle fails. The zero value injects nothing.
type Faults struct {
	// Write, when > 0, fails the Write-th write call (Write or WriteAt,
	// counting from 1) without writing anything.
	Write int
	// MaxBytes, when > 0, is the room on the device: the write that would
	// take the output past it fails, as on a full disk.
	MaxBytes int64
	// Flush fails every Flush.
	Flush bool
	// Sync fails Sync, and Commit, as a failed fsync would.
	Sync bool
	// Rename fails Commit as a failed rename onto the destination would.
	Rename bool
}

// Faulty wraps an iohandle.Handle and injects failures, for fault tests of
// the layers above. Like an iohandle.File, it discards the output after any
// failure: the destination never holds a partial file.
type Faulty struct {
	h      iohandle.Handle
	faults Faults
	writes int
	err    error
}

var _ iohandle.Handle = (*Faulty)(nil)

// NewFaulty returns h with faults injected.
func NewFaulty(h iohandle.Handle, faults Faults) *Faulty { return &Faulty{h: h, faults: faults} }

// Len returns the wrapped handle's length.
func (f *Faulty) Len() int64 { return f.h.Len() }

// Stats returns the wrapped handle's counters, if it has a Stats method as
// iohandle.File and iohandle.Memory do, and zero counters otherwise.
func (f *Faulty) Stats() iohandle.Stats {
	if s, ok := f.h.(interface{ Stats() iohandle.Stats }); ok {
		return s.Stats()
	}
	return iohandle.Stats{}
}

// Write appends p unless a fault strikes.
func (f *Faulty) Write(p []byte) (int, error) {
	if err := f.allow("write", len(p)); err != nil {
		return 0, f.fail(err)
	}
	return f.h.Write(p)
}

// WriteAt overwrites bytes at off unless a fault strikes.
func (f *Faulty) WriteAt(p []byte, off int64) (int, error) {
	if err := f.allow("write at", 0); err != nil {
		return 0, f.fail(err)
	}
	return f.h.WriteAt(p, off)
}

// Flush flushes the wrapped handle unless a fault strikes.
func (f *Faulty) Flush() error {
	if f.err != nil {
		return f.err
	}
	if f.faults.Flush {
		return f.fail(fmt.Errorf("%w: flush", ErrInjected))
	}
	return f.h.Flush()
}

// Sync syncs the wrapped handle, if it has a Sync method as iohandle.File
// does, unless the sync fault strikes.
func (f *Faulty) Sync() error {
	if f.err != nil {
		return f.err
	}
	if f.faults.Sync {
		return f.fail(fmt.Errorf("%w: sync", ErrInjected))
	}
	if s, ok := f.h.(interface{ Sync() error }); ok {
		return s.Sync()
	}
	return nil
}

// Commit commits the wrapped handle unless a sync or rename fault strikes.
func (f *Faulty) Commit() error {
	if f.err != nil {
		return f.err
	}
	switch {
	case f.faults.Sync:
		return f.fail(fmt.Errorf("%w: sync", ErrInjected))
	case f.faults.Rename:
		return f.fail(fmt.Errorf("%w: rename", ErrInjected))
	}
	return f.h.Commit()
}

// Abort discards the output.
func (f *Faulty) Abort() error { return f.h.Abort() }

// Close releases the wrapped handle.
func (f *Faulty) Close() error { return f.h.Close() }

// allow counts a write call that grows the output by n bytes and says
// whether it fails.
func (f *Faulty) allow(op string, n int) error {
	if f.err != nil {
		return f.err
	}
	f.writes++
	if f.faults.Write > 0 && f.writes == f.faults.Write {
		return fmt.Errorf("%w: %s call %d", ErrInjected, op, f.writes)
	}
	if f.faults.MaxBytes > 0 && f.h.Len()+int64(n) > f.faults.MaxBytes {
		return fmt.Errorf("%w: no space left after %d bytes", ErrInjected, f.faults.MaxBytes)
	}
	return nil
}

// fail records err, discards the output and returns err.
func (f *Faulty) fail(err error) error {
	if f.err == nil {
		f.err = err
	}
	_ = f.h.Abort()
	return f.err
}
