package iohandle

import (
	"io"
	"slices"
)

// Memory is a Handle that keeps the output in memory, for tests and for
// callers that want the encoded bytes. Its Stats count the calls it
// received: every Write is an append, every WriteAt a patch.
type Memory struct {
	data      []byte
	state     handleState
	committed []byte
	stats     Stats
	err       error // a failed WriteAt's; sticky, as a File's
}

var _ Handle = (*Memory)(nil)

// NewMemory returns an empty in-memory handle.
func NewMemory() *Memory { return &Memory{} }

// Bytes returns the output: what is written so far while the handle is open,
// the committed output after Commit, and nil after Abort or a failed
// WriteAt.
func (m *Memory) Bytes() []byte {
	switch {
	case m.state == stateCommitted:
		return m.committed
	case m.err != nil:
		return nil
	}
	return m.data
}

// Len returns the number of bytes written so far, a failed handle's too,
// and the committed output's length after Commit.
func (m *Memory) Len() int64 {
	if m.state == stateCommitted {
		return int64(len(m.committed))
	}
	return int64(len(m.data))
}

// Stats returns the calls received so far.
func (m *Memory) Stats() Stats { return m.stats }

// usable returns the error of op on a handle committed or aborted, else
// the sticky error, as a File's does.
func (m *Memory) usable(op string) error {
	if m.state != stateOpen {
		return closedError(op) // as a File: closed first, then failed
	}
	return m.err
}

// Write appends p.
func (m *Memory) Write(p []byte) (int, error) {
	if err := m.usable("write"); err != nil {
		return 0, err
	}
	m.stats.Appends++
	m.stats.Bytes += int64(len(p))
	m.data = append(m.data, p...)
	return len(p), nil
}

// ReadFrom appends everything r yields until io.EOF, reading straight into
// the output; it counts as one append. An error of r is returned and the
// bytes read before it stay appended.
func (m *Memory) ReadFrom(r io.Reader) (int64, error) {
	if err := m.usable("read from"); err != nil {
		return 0, err
	}
	n, err := readUntilEOF(r, &m.data, func() error {
		m.data = slices.Grow(m.data, max(minGrowth, len(m.data)))
		return nil
	})
	m.stats.Appends++
	m.stats.Bytes += n
	return n, err
}

// minGrowth is the least room ReadFrom makes in a Memory handle.
const minGrowth = 4096

// WriteAt overwrites len(p) bytes at off, which must lie within Len. A
// range outside it is ErrRange, and sticky: the output is discarded, as a
// File's is, since it lacks what the caller meant to write.
func (m *Memory) WriteAt(p []byte, off int64) (int, error) {
	if err := m.usable("write at"); err != nil {
		return 0, err
	}
	if err := checkPatch(off, len(p), m.Len()); err != nil {
		m.err = err // Bytes is nil from now on: the output is discarded
		return 0, err
	}
	m.stats.Patches++
	m.stats.Bytes += int64(len(p))
	return copy(m.data[off:], p), nil
}

// Flush does nothing but report use after close, or a failed WriteAt.
func (m *Memory) Flush() error { return m.usable("flush") }

// Commit makes the output final; Bytes returns it from now on.
func (m *Memory) Commit() error {
	if err := m.usable("commit"); err != nil {
		return err
	}
	m.state = stateCommitted
	m.committed, m.data = m.data, nil
	return nil
}

// Abort discards the output. It is harmless after Commit or Abort.
func (m *Memory) Abort() error {
	if m.state == stateOpen {
		m.state = stateClosed
		m.data = nil
	}
	return nil
}

// Close discards the output unless it was committed.
func (m *Memory) Close() error { return m.Abort() }
