package iohandle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

// Options configures a File handle. The zero value works: a 1 MiB buffer,
// fsync at Commit, and an error if the destination exists.
type Options struct {
	// BufferSize is the append buffer in bytes; 0 means 1 MiB, and more
	// than 1 GiB is fs.ErrInvalid at Create (the buffer is allocated
	// whole, and an allocation the system cannot give kills a Go
	// program). Appends at least this large bypass the buffer. On Linux a
	// multiple of 2 MiB (BigBuffer) is mapped outside the Go heap on transparent
	// huge pages (see mapBuffer), so that filling it first costs a few
	// page faults instead of one per 4 KiB.
	BufferSize int
	// Replace lets Commit replace an existing destination. Without it,
	// Create fails with ErrExist when the destination exists, and Commit
	// fails with ErrExist if one appeared meanwhile. A destination that is
	// a symbolic link is replaced by the file, as rename(2) replaces it:
	// the file it pointed to is left as it was.
	Replace bool
	// NoSync skips the fsync of the file and its directory at Commit.
	NoSync bool
	// Perm is the permission of the new file before the umask; 0 means 0666.
	Perm fs.FileMode
	// DirectIO writes full buffers around the page cache (O_DIRECT) where
	// the system and the file system allow it (Linux): the device reads
	// them from the buffer, and the CPU does not copy them into the page
	// cache, which is worth it when compression keeps every core busy.
	// Each such write waits for the device, though, so uncompressed output
	// that the page cache would absorb is usually slower with it. A write
	// whose memory, length or file offset is not a multiple of 4096 (the
	// last, partial buffer; a patch) goes through the page cache, and so
	// does every write after it. Stats.DirectWrites counts the writes that
	// went around.
	DirectIO bool
}

// BigBuffer is a BufferSize for outputs of many megabytes, such as
// pyramidal images: the system gets one write call per 2 MiB, and on Linux
// the buffer is one transparent huge page outside the Go heap.
const BigBuffer = 2 << 20

// osFile is the part of *os.File a File handle uses. Tests substitute it.
type osFile interface {
	Write(p []byte) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	Sync() error
	Close() error
	syscall.Conn // for the descriptor: direct I/O, locks and links
}

// handleState is where a handle is in its life.
type handleState uint8

const (
	stateOpen handleState = iota
	stateCommitted
	stateClosed
)

// File is a Handle on a file in the file system. Create makes one.
type File struct {
	f       osFile
	path    string // destination
	tmp     string // name of f beside it; "" while f has none
	unnamed bool   // f is unnamed (O_TMPFILE) until Commit links it
	opts    Options
	buf     []byte          // buffered appends; nil until the first small append
	mapping []byte          // buf's memory when mapBuffer made it; nil for Go memory
	unmap   runtime.Cleanup // unmaps mapping if the handle is dropped unclosed
	size    int             // capacity of buf
	flushed int64           // bytes already handed to the file
	err     error           // first failure; sticky
	state   handleState
	stats   Stats
	direct  bool // the file is open with O_DIRECT (Options.DirectIO)
	// unsynced counts the bytes appended through the page cache since
	// their writeback was last started (startWriteback).
	unsynced int64
	synced   bool // by Sync, with nothing written to the file since
	// dir is the directory of the named temporary file, open, so that
	// discard removes the file wherever the directory has moved meanwhile;
	// nil for an unnamed file, or where it cannot be opened.
	dir *os.Root
}

var _ Handle = (*File)(nil)

// Create starts a new output file for path, in path's directory, so that
// Commit gives it its name without a copy.
//
// On Linux the file has no name (it is opened with O_TMPFILE) until Commit
// links it to path: if the process dies first, nothing is left. Where the
// file system refuses O_TMPFILE, /proc is not mounted, the system is not
// Linux, or the environment variable OMETIFF_NO_TMPFILE is true, the file
// is created with O_CREAT|O_EXCL as .BASE.<16 hex digits>.tmp, where BASE
// is path's base name (its first bytes, when the whole would pass 255
// bytes), and holds an exclusive flock while the handle is
// open; Commit renames it onto path, and Abort, Close or a failure removes
// it. Create first removes the .BASE.<16 hex digits>.tmp files beside
// path whose lock it can take: those of earlier writers that died (also
// when it then refuses an existing path).
//
// OMETIFF_NO_TMPFILE is an environment variable rather than an option
// because whether O_TMPFILE works is a property of the file system a
// program is run on, not of the program: it lets whoever runs any program
// built on this package turn it off where a file system mishandles it.
func Create(path string, opts Options) (*File, error) {
	named, _ := strconv.ParseBool(os.Getenv(noTmpfileEnv))
	return create(path, opts, !named)
}

// noTmpfileEnv names the environment variable that makes Create use a
// named temporary file where it would use an unnamed one.
const noTmpfileEnv = "OMETIFF_NO_TMPFILE"

// create is Create, with unnamed false to use a named temporary file even
// where an unnamed one is possible.
func create(path string, opts Options, unnamed bool) (*File, error) {
	if path == "" {
		return nil, fmt.Errorf("iohandle: create: %w: no path", fs.ErrInvalid)
	}
	if opts.BufferSize > maxBufferSize {
		return nil, fmt.Errorf("iohandle: create: %w: BufferSize %d, more than %d", fs.ErrInvalid, opts.BufferSize, maxBufferSize)
	}
	// A dead writer's temporary file goes whatever this Create does.
	removeStale(path)
	// What would fail the commit, after the work, fails here: a path too
	// long, in a directory missing or not searchable.
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.IsDir(): // not replaced by a rename either
		return nil, fmt.Errorf("%w: %s is a directory", ErrExist, path)
	case err == nil && !opts.Replace:
		return nil, fmt.Errorf("%w: %s", ErrExist, path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, &OpError{Op: "create", Path: path, Err: unwrapPath(err)}
	}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o666
	}
	var f osFile
	tmp, err := "", errors.ErrUnsupported
	if unnamed {
		f, err = openUnnamed(dirOf(path), perm)
	}
	var dir *os.Root
	if err != nil { // the named file, whatever stopped the unnamed one
		unnamed = false
		var named *os.File
		if named, tmp, err = createTemp(path, perm); err != nil {
			return nil, err
		}
		f = named
		if runtime.GOOS != "windows" { // where an open directory cannot be renamed
			dir = openDirOf(named, tmp)
		}
	}
	size := opts.BufferSize
	if size <= 0 {
		size = defaultBufferSize
	}
	h := &File{f: f, path: path, tmp: tmp, unnamed: unnamed, opts: opts, size: size, dir: dir}
	if opts.DirectIO {
		h.direct = setDirect(f, true) == nil
	}
	return h, nil
}

// openDirOf opens the directory of f, named tmp, and checks that it holds
// f under that name: a directory replaced since f was created is not f's.
// It returns nil where it cannot.
func openDirOf(f *os.File, tmp string) *os.Root {
	dir, err := os.OpenRoot(dirOf(tmp))
	if err != nil {
		return nil
	}
	named, err1 := dir.Lstat(filepath.Base(tmp))
	held, err2 := f.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(named, held) {
		_ = dir.Close()
		return nil
	}
	return dir
}

// bufferPool recycles default-size append buffers across handles, so that
// a program writing many files reuses warm memory instead of faulting in
// (and zeroing) a fresh MiB for each. A handle takes its buffer at its
// first small append and gives it back at each Flush, from the goroutine
// that writes, so the pool's per-CPU caches hand a buffer back to the core
// whose cache holds it.
var bufferPool sync.Pool // of *[]byte with cap defaultBufferSize

// takeBuffer gives the handle an empty append buffer of its size: a pooled
// one for the default size, a huge-page mapping for a multiple of 2 MiB
// where the system has them (see mapBuffer), else a new one.
func (h *File) takeBuffer() {
	if h.size == defaultBufferSize {
		if p, ok := bufferPool.Get().(*[]byte); ok {
			h.buf = (*p)[:0]
			return
		}
	} else if buf := mapBuffer(h.size); buf != nil {
		h.buf, h.mapping = buf, buf
		// A handle dropped without Close must not keep its mapping.
		h.unmap = runtime.AddCleanup(h, unmapBuffer, buf)
		return
	}
	h.buf = make([]byte, 0, h.size)
}

// releaseBuffer drops the handle's buffer: it unmaps a mapped one and
// recycles one of the default size.
func (h *File) releaseBuffer() {
	buf := h.buf
	h.buf = nil
	switch {
	case h.mapping != nil: // unmapped as mapped, whatever became of buf
		h.unmap.Stop()
		unmapBuffer(h.mapping)
		h.mapping = nil
	case cap(buf) == defaultBufferSize:
		bufferPool.Put(&buf)
	}
}

// Path is the destination the handle commits to.
func (h *File) Path() string { return h.path }

// Len returns the number of bytes written so far.
func (h *File) Len() int64 { return h.flushed + int64(len(h.buf)) }

// Stats returns the write calls issued to the operating system so far.
func (h *File) Stats() Stats { return h.stats }

// Write appends p. Small writes are buffered; a write at least as large as
// the buffer goes to the file directly, after what is buffered.
func (h *File) Write(p []byte) (int, error) {
	if len(p) < cap(h.buf)-len(h.buf) && h.err == nil && h.state == stateOpen {
		h.buf = append(h.buf, p...)
		return len(p), nil
	}
	return h.writeSlow(p)
}

// writeSlow handles appends that do not fit in the buffer, and errors.
func (h *File) writeSlow(p []byte) (int, error) {
	if err := h.usable("write"); err != nil {
		return 0, err
	}
	if len(p) >= h.size {
		if err := h.flushBuffer(); err != nil {
			return 0, err
		}
		if err := h.writeOS(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if h.buf == nil {
		h.takeBuffer()
	}
	n := copy(h.buf[len(h.buf):cap(h.buf)], p)
	h.buf = h.buf[:len(h.buf)+n]
	if len(h.buf) < cap(h.buf) {
		return len(p), nil
	}
	if err := h.flushBuffer(); err != nil {
		return 0, err
	}
	h.buf = append(h.buf, p[n:]...)
	return len(p), nil
}

// AvailableBuffer returns an empty slice whose capacity is the room left
// in the append buffer, to build bytes in place and pass them to an
// immediately following Write, as with bufio.Writer: a directory
// serialized there reaches the buffer without a copy of its own. It
// returns nil when the handle cannot be written.
func (h *File) AvailableBuffer() []byte {
	if h.usable("write") != nil {
		return nil
	}
	if h.buf == nil {
		h.takeBuffer()
	}
	return h.buf[len(h.buf):len(h.buf)]
}

// ReadFrom appends everything r yields until io.EOF, reading straight into
// the append buffer: each full buffer becomes one write call, and the bytes
// are copied once, by r. It implements io.ReaderFrom, so io.Copy and
// io.CopyN to a File use it.
//
// An error of r is returned as it is and does not fail the handle; the
// bytes read before it stay appended.
func (h *File) ReadFrom(r io.Reader) (int64, error) {
	if err := h.usable("read from"); err != nil {
		return 0, err
	}
	if h.buf == nil {
		h.takeBuffer()
	}
	return readUntilEOF(r, &h.buf, h.flushBuffer)
}

// WriteAt overwrites len(p) bytes at off, which must lie within Len (a
// range outside it is ErrRange, which fails the handle as any failed
// write does). Bytes still buffered are patched in the buffer; the rest
// takes one positioned write.
func (h *File) WriteAt(p []byte, off int64) (int, error) {
	if err := h.usable("write at"); err != nil {
		return 0, err
	}
	if err := checkPatch(off, len(p), h.Len()); err != nil {
		return 0, h.fail(err) // the output lacks what the caller meant to write
	}
	n := len(p)
	if off < h.flushed {
		head := p[:min(int64(len(p)), h.flushed-off)]
		if err := h.patchOS(head, off); err != nil {
			return 0, err
		}
		off += int64(len(head))
		p = p[len(head):]
	}
	if len(p) > 0 {
		copy(h.buf[off-h.flushed:], p)
	}
	return n, nil
}

// Flush writes the buffered bytes to the file in one write call. A
// default-size buffer, now empty, goes back to the pool until the next
// small append.
func (h *File) Flush() error {
	if err := h.flushBuffer(); err != nil {
		return err
	}
	if cap(h.buf) == defaultBufferSize {
		h.releaseBuffer()
	}
	return nil
}

// flushBuffer writes the buffered bytes, keeping the buffer.
func (h *File) flushBuffer() error {
	if err := h.usable("flush"); err != nil {
		return err
	}
	if len(h.buf) == 0 {
		return nil
	}
	if err := h.writeOS(h.buf); err != nil {
		return err
	}
	h.buf = h.buf[:0]
	return nil
}

// Sync flushes and syncs the file to storage (fsync), unless
// Options.NoSync, so that a Commit with nothing written since does not
// sync the file again: it gives it its name in one step (and syncs the
// directory). A caller that may still change its mind, such as a program
// a signal stops, decides between the two, as the sync can take seconds.
func (h *File) Sync() error {
	if err := h.Flush(); err != nil {
		return err
	}
	if h.opts.NoSync || h.synced {
		return nil
	}
	h.stats.Syncs++
	if err := h.f.Sync(); err != nil {
		return h.fail(h.opError("sync", err))
	}
	h.synced = true
	return nil
}

// Commit flushes, syncs the file unless Options.NoSync (or Sync did, with
// nothing written since), and gives it the destination's name: it links
// an unnamed file there, or renames the named one. Without
// Options.Replace it never overwrites a destination that appeared since
// Create, and fails with ErrExist. Any failure discards the output and
// leaves no file behind.
func (h *File) Commit() error {
	if err := h.Sync(); err != nil {
		return err
	}
	commit := h.commitNamed
	if h.unnamed {
		commit = h.commitUnnamed
	}
	if err := commit(); err != nil {
		return h.fail(err)
	}
	h.state = stateCommitted
	if h.dir != nil {
		_ = h.dir.Close()
		h.dir = nil
	}
	h.releaseBuffer()
	if !h.opts.NoSync {
		syncDir(dirOf(h.path))
	}
	return nil
}

// commitUnnamed links the unnamed file to the destination and closes it.
// Without Options.Replace one linkat does it, and fails if the destination
// exists. With Replace an existing destination is replaced by linking the
// file to a hidden name (see createTemp) and renaming that over it; the
// file is locked before it has that name, so that no Create takes it for a
// dead writer's.
func (h *File) commitUnnamed() error {
	err := linkUnnamed(h.f, h.path)
	if errors.Is(err, fs.ErrExist) && h.opts.Replace {
		err = h.replaceWithUnnamed()
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%w: %s", ErrExist, h.path)
	case err != nil:
		return h.opError("commit", err)
	}
	// The output has its name now, which an error of close could not take
	// back. Unless NoSync, fsync has reported every error of storing the
	// data; with NoSync, the caller chose not to wait for them.
	_ = h.f.Close()
	h.f = nil
	return nil
}

// replaceWithUnnamed links the unnamed file to a new hidden name beside
// the destination and renames it over the destination.
func (h *File) replaceWithUnnamed() error {
	// Where the file system has no locks, removeStale cannot lock the file
	// either, and leaves it.
	_ = lockFile(h.f)
	dir, base := filepath.Split(h.path)
	for range maxTempNames {
		tmp := tempName(dir, base)
		err := linkUnnamed(h.f, tmp)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		h.tmp = tmp // removed by discard if the rename fails
		if err := renameFile(tmp, h.path); err != nil {
			return err
		}
		h.tmp = ""
		return nil
	}
	return errNoTempName
}

// commitNamed closes the named temporary file and moves it onto the
// destination. Its lock is kept on a second descriptor until the file has
// the destination's name, so that no Create takes it for a dead writer's
// meanwhile; the file itself is closed first, because a network file
// system reports a failure to store it at close, and Windows cannot rename
// an open file.
func (h *File) commitNamed() error {
	hold := holdLock(h.f)
	defer hold.Close()
	if err := h.f.Close(); err != nil {
		h.f = nil
		return h.opError("close", err)
	}
	h.f = nil
	if err := h.publish(); err != nil {
		return err
	}
	h.tmp = ""
	return nil
}

// publish moves the temporary file onto the destination. Without
// Options.Replace it never overwrites an existing destination: it renames
// with RENAME_NOREPLACE where the system has it, else links and unlinks,
// and falls back to a checked rename where links are not supported.
func (h *File) publish() error {
	if h.opts.Replace {
		err := renameFile(h.tmp, h.path)
		switch {
		case errors.Is(err, fs.ErrExist): // a directory that appeared there, as commitUnnamed says it
			return fmt.Errorf("%w: %s", ErrExist, h.path)
		case err != nil:
			return h.opError("rename", err)
		}
		return nil
	}
	err := renameNoReplace(h.tmp, h.path)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%w: %s", ErrExist, h.path)
	case !errors.Is(err, errors.ErrUnsupported):
		return h.opError("rename", err)
	}
	err = linkFile(h.tmp, h.path)
	switch {
	case err == nil:
		_ = removeFile(h.tmp)
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%w: %s", ErrExist, h.path)
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EXDEV):
		if _, statErr := os.Lstat(h.path); statErr == nil {
			return fmt.Errorf("%w: %s", ErrExist, h.path)
		}
		if err := renameFile(h.tmp, h.path); err != nil {
			return h.opError("rename", err)
		}
		return nil
	default:
		return h.opError("link", err)
	}
}

// Abort discards the output: it closes and removes the temporary file. It
// is harmless after Commit or a previous Abort, and returns nil then.
func (h *File) Abort() error {
	if h.state != stateOpen {
		return nil
	}
	h.state = stateClosed
	h.releaseBuffer()
	return h.discard()
}

// Close releases the handle. Without a Commit before it, it discards the
// output like Abort. A second Close is harmless.
func (h *File) Close() error { return h.Abort() }

// usable returns the error any operation must return now, if any.
func (h *File) usable(op string) error {
	if h.state != stateOpen {
		return closedError(op)
	}
	return h.err
}

// writeOS appends p to the file with one write call: around the page
// cache while the handle writes direct and p allows it, else through it.
func (h *File) writeOS(p []byte) error {
	if h.direct && !directAligned(p, h.flushed) {
		if err := h.endDirect(); err != nil {
			return err
		}
	}
	h.stats.Appends++
	h.synced = false
	n, err := h.f.Write(p)
	if n == 0 && h.direct && refusedDirect(err) {
		// The device needs more than directAlign.
		if err := h.endDirect(); err != nil {
			return err
		}
		h.stats.Appends++
		n, err = h.f.Write(p)
	}
	if h.direct && err == nil {
		h.stats.DirectWrites++
	}
	h.stats.Bytes += int64(n)
	h.flushed += int64(n)
	if err != nil {
		return h.fail(h.opError("write", err))
	}
	h.writeback(int64(n))
	return nil
}

// writebackChunk is how many appended bytes the page cache gathers before
// File asks the system to start writing them to the device.
const writebackChunk = 8 << 20

// writeback starts writing the last writebackChunk bytes appended to the
// device, once that many are in the page cache, when Commit is to fsync
// the file: the device then writes while the program computes, rather
// than all of the file during the fsync.
func (h *File) writeback(n int64) {
	if h.opts.NoSync || h.direct {
		return
	}
	h.unsynced += n
	if h.unsynced >= writebackChunk {
		if startWriteback(h.f, h.flushed-h.unsynced, h.unsynced) == nil {
			h.stats.Writebacks++
		}
		h.unsynced = 0
	}
}

// patchOS overwrites bytes already in the file with one positioned write.
func (h *File) patchOS(p []byte, off int64) error {
	if err := h.endDirect(); err != nil {
		return err
	}
	h.synced = false
	h.stats.Patches++
	n, err := h.f.WriteAt(p, off)
	h.stats.Bytes += int64(n)
	if err != nil {
		return h.fail(h.opError("write at "+strconv.FormatInt(off, 10), err))
	}
	return nil
}

// endDirect makes the handle write through the page cache from now on,
// if it wrote around it.
func (h *File) endDirect() error {
	if !h.direct {
		return nil
	}
	h.direct = false
	if err := setDirect(h.f, false); err != nil {
		return h.fail(h.opError("leave direct I/O", err))
	}
	return nil
}

// opError describes err, of an operation on the output, naming the
// destination: the name the system's error gives is that of the directory
// (an unnamed file is opened on it) or of the temporary file.
func (h *File) opError(op string, err error) error {
	return &OpError{Op: op, Path: h.path, Err: unwrapPath(err)}
}

// OpError is a failure of the system to create, write, sync or name the
// output, as a full disk, a quota or a directory removed meanwhile cause:
// the output is discarded. A program tells it apart from an error of its
// input with errors.As.
type OpError struct {
	// Op is what failed: "create", "write", "write at OFFSET", "leave
	// direct I/O", "sync", "close", "commit", "link", "rename", or "remove
	// the temporary file of".
	Op   string
	Path string // the destination
	Err  error  // the system's error, such as syscall.ENOSPC
}

// Error reads "iohandle: write PATH: no space left on device".
func (e *OpError) Error() string { return "iohandle: " + e.Op + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the system's error.
func (e *OpError) Unwrap() error { return e.Err }

// unwrapPath returns the system's error inside a *fs.PathError or an
// *os.LinkError, whose names are not the destination's.
func unwrapPath(err error) error {
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	switch {
	case errors.As(err, &pathErr):
		return pathErr.Err
	case errors.As(err, &linkErr):
		return linkErr.Err
	}
	return err
}

// fail records err as the sticky error and discards the output, so a failed
// handle never leaves a file behind.
func (h *File) fail(err error) error {
	if h.err == nil {
		h.err = err
	}
	h.releaseBuffer()
	_ = h.discard()
	return h.err
}

// discard closes the file and removes its temporary name, if it has one.
func (h *File) discard() error {
	var closeErr error
	if h.f != nil {
		closeErr = h.f.Close()
		h.f = nil
	}
	dir := h.dir
	h.dir = nil
	if dir != nil {
		defer dir.Close()
	}
	if h.tmp == "" {
		return closeErr
	}
	var err error
	if dir != nil && dirOf(h.tmp) == dir.Name() {
		err = removeIn(dir, filepath.Base(h.tmp))
	} else {
		err = removeFile(h.tmp)
	}
	h.tmp = ""
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &OpError{Op: "remove the temporary file of", Path: h.path, Err: unwrapPath(err)}
	}
	return nil
}

// File-system operations, variables so that tests can make them fail.
var (
	renameFile      = os.Rename
	renameNoReplace = renameExclusive
	linkFile        = os.Link
	removeFile      = os.Remove
	removeIn        = (*os.Root).Remove // (dir, name)
	openUnnamed     = openTmpfile       // (dir, perm): a file without a name in dir
	linkUnnamed     = linkTmpfile       // (f, path): gives f the name path
)

// control calls fn with f's file descriptor.
func control(f osFile, fn func(fd uintptr) error) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var fnErr error
	if err := raw.Control(func(fd uintptr) { fnErr = fn(fd) }); err != nil {
		return err
	}
	return fnErr
}

// syncDir makes a rename in dir durable; failures only cost durability, and
// some file systems refuse to sync directories, so they are ignored.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
