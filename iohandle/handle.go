// Package iohandle provides the buffered output handles that ometiff's
// writers append tiles and whole IFDs to.
//
// A TIFF writer mostly appends: compressed tiles, then serialized
// directories. A Handle collects appends in one reusable buffer and hands the
// operating system large writes, so a file of many small directories costs a
// few write calls per MiB instead of a few per field. Earlier bytes (the
// header, a link between directories) are patched with WriteAt, which lands
// in the buffer while the range is still buffered and becomes one positioned
// write otherwise.
//
// A Handle never truncates, preallocates or seeks past the end: the file on
// disk is never longer than its content, and after Flush its size equals
// Len. On Linux, Options.DirectIO sends full buffers to the device around
// the page cache (O_DIRECT). Memory is a Handle in memory; the test doubles
// are in package iohandletest.
//
// # Crash safety
//
// The destination never holds a partial file: a File handle writes beside
// it and Commit gives the output its name in one step. On Linux the output
// is an unnamed file in the destination's directory (O_TMPFILE) until
// Commit links it there, so a crash, a kill -9 or a power loss before
// Commit leaves no file at all.
//
// Where that is not possible (other systems; file systems that refuse
// O_TMPFILE, such as NFS; no /proc to link through), or when the
// environment variable OMETIFF_NO_TMPFILE is true (1, t or true, as
// strconv.ParseBool reads it), the output is a hidden file named
// .NAME.<16 hex digits>.tmp beside the destination NAME, and Commit renames
// it. Replacing an existing destination (Options.Replace) passes through
// such a name too, for the moment between a link and a rename. Abort, Close
// and every failure remove it, but a process that dies first leaves it.
// Its writer holds an exclusive flock on it while it lives, and each Create
// for NAME removes the .NAME.<16 hex digits>.tmp files whose lock it can
// take: those of writers that died. Systems without flock (Windows) leave
// such files for the user to remove.
//
// Handles are not safe for concurrent use; the writers above serialize their
// output through one goroutine.
package iohandle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// defaultBufferSize is the append buffer of a File handle when
// Options.BufferSize is zero.
const defaultBufferSize = 1 << 20

// maxBufferSize bounds Options.BufferSize: past a few megabytes a larger
// buffer saves no system calls worth having.
const maxBufferSize = 1 << 30

var (
	// ErrClosed is wrapped by the error of any use of a handle after Close,
	// Abort or Commit.
	ErrClosed = errors.New("iohandle: handle is closed")
	// ErrExist is returned when the destination exists and Options.Replace is
	// false, or is a directory, which Replace does not replace.
	// errors.Is(ErrExist, fs.ErrExist) holds too.
	ErrExist error = existError{}
	// ErrRange is returned by WriteAt for a range that is not entirely inside
	// the bytes written so far. It fails the handle, as any failed write
	// does.
	ErrRange = errors.New("iohandle: write outside the written range")
)

// Handle is an append-mostly output file.
//
// Write appends. WriteAt overwrites bytes already written (off+len(p) must
// not exceed Len). Len is the logical length: every byte written so far,
// buffered or not. Flush hands buffered bytes to the destination. Commit
// flushes and makes the output permanent; Abort discards it. Close releases
// the handle, discarding the output unless it was committed; it may be
// called more than once. After Commit, Abort or Close every other method
// returns an error wrapping ErrClosed.
//
// Errors are sticky: after a failed write every later call returns the
// same error, and the output is discarded.
type Handle interface {
	io.Writer
	io.WriterAt
	Len() int64
	Flush() error
	Commit() error
	Abort() error
	Close() error
}

// Stats counts what a handle asked of its destination, as File.Stats and
// Memory.Stats report it. For a File handle these are system calls; for a
// Memory handle they are the calls it received.
type Stats struct {
	Appends int64 // sequential write calls
	Patches int64 // positioned write calls
	Bytes   int64 // bytes handed over by both
	Syncs   int64 // fsync calls
	// DirectWrites counts the Appends that went around the page cache
	// (Options.DirectIO).
	DirectWrites int64
	// Writebacks counts the requests to start writing appended bytes to
	// the device early, ahead of the fsync at Commit (Linux, without
	// Options.NoSync).
	Writebacks int64
}

// Writes is the number of write calls of both kinds.
func (s Stats) Writes() int64 { return s.Appends + s.Patches }

// String gives the counts by name, for logs: "12 appends (3 direct), 1
// patch, 25165824 bytes, 1 sync, 4 writebacks".
func (s Stats) String() string {
	count := func(n int64, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	appends := count(s.Appends, "append", "appends")
	if s.DirectWrites > 0 {
		appends += fmt.Sprintf(" (%d direct)", s.DirectWrites)
	}
	return fmt.Sprintf("%s, %s, %s, %s, %s", appends, count(s.Patches, "patch", "patches"),
		count(s.Bytes, "byte", "bytes"), count(s.Syncs, "sync", "syncs"), count(s.Writebacks, "writeback", "writebacks"))
}

// checkPatch validates a WriteAt of n bytes at off against the length.
func checkPatch(off int64, n int, length int64) error {
	if off < 0 || off > length || int64(n) > length-off {
		return fmt.Errorf("%w: %d bytes at %d, length %d", ErrRange, n, off, length)
	}
	return nil
}

// existError is ErrExist: its own sentinel that also matches fs.ErrExist.
type existError struct{}

func (existError) Error() string        { return "iohandle: destination exists" }
func (existError) Is(target error) bool { return target == fs.ErrExist }

// closedError is what any use after close returns.
func closedError(op string) error {
	return fmt.Errorf("%w (%s)", ErrClosed, op)
}

// readUntilEOF is ReadFrom for every handle: it reads r into the room after
// len(*buf) until io.EOF, calling full to make room whenever there is none.
// An error of r is returned as it is, 100 empty reads in a row are
// io.ErrNoProgress (as in bufio), and a reader that claims more bytes than
// it had room for, or fewer than none, is an error, not a panic.
func readUntilEOF(r io.Reader, buf *[]byte, full func() error) (int64, error) {
	var total int64
	for empty := 0; ; {
		if len(*buf) == cap(*buf) {
			if err := full(); err != nil {
				return total, err
			}
		}
		room := (*buf)[len(*buf):cap(*buf)]
		n, err := r.Read(room)
		if n < 0 || n > len(room) {
			return total, fmt.Errorf("iohandle: read from: reader returned %d bytes for %d", n, len(room))
		}
		*buf = (*buf)[:len(*buf)+n]
		total += int64(n)
		switch {
		case err == io.EOF:
			return total, nil
		case err != nil:
			return total, err
		case n > 0:
			empty = 0
		default:
			if empty++; empty == maxEmptyReads {
				return total, io.ErrNoProgress
			}
		}
	}
}

// maxEmptyReads is how many reads in a row may return nothing before
// ReadFrom gives up.
const maxEmptyReads = 100
