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
}

var _ Handle = (*Memory)(nil)

// NewMemory returns an empty in-memory handle.
func NewMemory() *Memory { return &Memory{} }

// Bytes returns the output: what is written so far while the handle is open,
// the committed output after Commit, and nil after Abort.
func (m *Memory) Bytes() []byte {
	if m.state == stateCommitted {
		return m.committed
	}
	return m.data
}

// Len returns the number of bytes written so far (the committed output's
// length after Commit).
func (m *Memory) Len() int64 { return int64(len(m.Bytes())) }

// Stats returns the calls received so far.
func (m *Memory) Stats() Stats { return m.stats }

// Write appends p.
func (m *Memory) Write(p []byte) (int, error) {
	if m.state != stateOpen {
		return 0, closedError("write")
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
	if m.state != stateOpen {
		return 0, closedError("read from")
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

// WriteAt overwrites len(p) bytes at off, which must lie within Len.
func (m *Memory) WriteAt(p []byte, off int64) (int, error) {
	if m.state != stateOpen {
		return 0, closedError("write at")
	}
	if err := checkPatch(off, len(p), m.Len()); err != nil {
		return 0, err
	}
	m.stats.Patches++
	m.stats.Bytes += int64(len(p))
	return copy(m.data[off:], p), nil
}

// Flush does nothing but report use after close.
func (m *Memory) Flush() error {
	if m.state != stateOpen {
		return closedError("flush")
	}
	return nil
}

// Commit makes the output final; Bytes returns it from now on.
func (m *Memory) Commit() error {
	if m.state != stateOpen {
		return closedError("commit")
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
