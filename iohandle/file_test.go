package iohandle

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newFile creates a File handle for a destination in a fresh directory.
func newFile(t testing.TB, opts Options) (*File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.tif")
	h, err := Create(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	return h, path
}

// tempKinds are the two ways a File keeps its output until Commit: an
// unnamed file (O_TMPFILE) and a hidden named one.
var tempKinds = []struct {
	name    string
	unnamed bool
}{{"unnamed", true}, {"named", false}}

// newFileOf is newFile for a File of the given kind. Linux must give an
// unnamed file when asked (the temporary directory's file system has
// O_TMPFILE); other systems skip the unnamed kind.
func newFileOf(t testing.TB, unnamed bool, opts Options) (*File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.tif")
	h, err := create(path, opts, unnamed)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	requireKind(t, h, unnamed)
	return h, path
}

// requireKind fails the test unless h is of the kind asked for, or skips
// it where the system has no unnamed files.
func requireKind(t testing.TB, h *File, unnamed bool) {
	t.Helper()
	switch {
	case h.unnamed == unnamed:
	case runtime.GOOS != "linux":
		t.Skip("unnamed files (O_TMPFILE) are Linux's")
	default:
		t.Fatalf("asked for unnamed %v, got unnamed %v (tmp %q)", unnamed, h.unnamed, h.tmp)
	}
}

// onDisk returns a name under which the handle's file can be opened
// before Commit: its temporary name, or its /proc entry if it has none.
func onDisk(t testing.TB, h *File) string {
	t.Helper()
	if h.tmp != "" {
		return h.tmp
	}
	var name string
	require.NoError(t, control(h.f, func(fd uintptr) error {
		name = fmt.Sprintf("/proc/self/fd/%d", fd)
		return nil
	}))
	return name
}

// sizeOnDisk returns the size of the handle's file.
func sizeOnDisk(t testing.TB, h *File) int64 {
	t.Helper()
	fi, err := os.Stat(onDisk(t, h))
	require.NoError(t, err)
	return fi.Size()
}

// contentOnDisk returns what the handle's file holds.
func contentOnDisk(t testing.TB, h *File) []byte {
	t.Helper()
	got, err := os.ReadFile(onDisk(t, h))
	require.NoError(t, err)
	return got
}

// dirEntries lists the names in dir.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestFileBuffersAppends(t *testing.T) {
	h, _ := newFile(t, Options{BufferSize: 16, NoSync: true})
	for range 7 {
		_, err := h.Write([]byte("ab"))
		require.NoError(t, err)
	}
	assert.Equal(t, int64(14), h.Len())
	assert.Equal(t, Stats{}, h.Stats(), "no system call while the buffer has room")
	assert.Equal(t, int64(0), sizeOnDisk(t, h))

	_, err := h.Write([]byte("cdef")) // 18 bytes: fills the buffer, flushes 16
	require.NoError(t, err)
	assert.Equal(t, Stats{Appends: 1, Bytes: 16}, h.Stats())
	assert.Equal(t, int64(16), sizeOnDisk(t, h))

	require.NoError(t, h.Flush())
	assert.Equal(t, h.Len(), sizeOnDisk(t, h))
	assert.Equal(t, Stats{Appends: 2, Bytes: 18}, h.Stats())
}

func TestFileLargeWriteBypassesBuffer(t *testing.T) {
	tests := []struct {
		name        string
		buffered    int
		write       int
		wantAppends int64
	}{
		{"empty buffer, exactly buffer size", 0, 16, 1},
		{"empty buffer, larger", 0, 100, 1},
		{"something buffered", 3, 16, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newFile(t, Options{BufferSize: 16, NoSync: true})
			_, err := h.Write(make([]byte, tt.buffered))
			require.NoError(t, err)
			big := bytes.Repeat([]byte{7}, tt.write)
			_, err = h.Write(big)
			require.NoError(t, err)
			assert.Equal(t, tt.wantAppends, h.Stats().Appends)
			assert.Equal(t, h.Len(), sizeOnDisk(t, h), "nothing left in the buffer")
		})
	}
}

func TestFileWriteAt(t *testing.T) {
	tests := []struct {
		name        string
		off         int64
		patch       string
		wantPatches int64
	}{
		{"in the buffer", 18, "XY", 0},
		{"in the file", 2, "XY", 1},
		{"straddling", 14, "XYZW", 1},
		{"whole content", 0, "ABCDEFGHIJKLMNOPQRST", 1},
		{"empty at end", 20, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, path := newFile(t, Options{BufferSize: 16, NoSync: true})
			_, err := h.Write([]byte("0123456789"))
			require.NoError(t, err)
			_, err = h.Write([]byte("abcdefghij")) // 16 flushed, 4 buffered
			require.NoError(t, err)
			want := []byte("0123456789abcdefghij")
			copy(want[tt.off:], tt.patch)

			n, err := h.WriteAt([]byte(tt.patch), tt.off)
			require.NoError(t, err)
			assert.Equal(t, len(tt.patch), n)
			assert.Equal(t, tt.wantPatches, h.Stats().Patches)
			assert.Equal(t, int64(20), h.Len())
			require.NoError(t, h.Commit())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

// TestWriteAtOutsideContent: a patch outside the bytes written is
// ErrRange, and fails the handle as any failed write does (Handle's doc):
// the output lacks what the caller meant to write, so it is discarded,
// and a caller that goes on past the error cannot commit it (it once
// could).
func TestWriteAtOutsideContent(t *testing.T) {
	for _, off := range []int64{-1, 3, 5} {
		dir := t.TempDir()
		dest := filepath.Join(dir, "f")
		for _, h := range []Handle{NewMemory(), must(Create(dest, Options{NoSync: true}))} {
			_, err := h.Write([]byte("abcd"))
			require.NoError(t, err)
			_, err = h.WriteAt([]byte("xy"), off)
			assert.ErrorIs(t, err, ErrRange, "offset %d", off)
			_, err = h.Write([]byte("e"))
			assert.ErrorIs(t, err, ErrRange, "sticky")
			_, err = h.WriteAt([]byte("x"), 0)
			assert.ErrorIs(t, err, ErrRange, "sticky")
			assert.ErrorIs(t, h.Flush(), ErrRange)
			assert.ErrorIs(t, h.Commit(), ErrRange, "not committed")
			if m, ok := h.(*Memory); ok {
				assert.Nil(t, m.Bytes(), "discarded")
				assert.Equal(t, int64(4), m.Len(), "the bytes written")
			}
			require.NoError(t, h.Close())
			_, err = h.Write([]byte("f"))
			assert.ErrorIs(t, err, ErrClosed, "closed first, then failed, for both handles")
			if m, ok := h.(*Memory); ok {
				assert.Nil(t, m.Bytes(), "discarded")
			}
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "offset %d: no file, temporary or final", off)
	}
}

// pattern returns n bytes that differ from their neighbours' offsets.
func pattern(n, seed int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + seed)
	}
	return p
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestCommitPublishesAndRemovesTemporary commits on both paths, with and
// without fsync: before Commit the directory shows no file (unnamed) or
// only the hidden temporary name (named); after it, only the destination.
func TestCommitPublishesAndRemovesTemporary(t *testing.T) {
	for _, kind := range tempKinds {
		for _, noSync := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nosync=%v", kind.name, noSync), func(t *testing.T) {
				h, path := newFileOf(t, kind.unnamed, Options{BufferSize: 4, NoSync: noSync})
				_, err := h.Write([]byte("content"))
				require.NoError(t, err)
				require.NoError(t, h.Flush())
				assert.NoFileExists(t, path, "nothing at the destination before Commit")
				before := dirEntries(t, filepath.Dir(path))
				if kind.unnamed {
					assert.Empty(t, before, "an unnamed file is in no listing")
				} else {
					require.Len(t, before, 1)
					assert.True(t, isTempName(before[0], "out.tif"), "%q is a temporary name", before[0])
				}
				require.NoError(t, h.Commit())
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, "content", string(got))
				assert.Equal(t, []string{"out.tif"}, dirEntries(t, filepath.Dir(path)))
				wantSyncs := int64(1)
				if noSync {
					wantSyncs = 0
				}
				assert.Equal(t, wantSyncs, h.Stats().Syncs)
			})
		}
	}
}

// TestReplaceSymlink: Replace puts the file where a symbolic link was, as
// Options.Replace says, and leaves the file the link pointed to as it was.
func TestReplaceSymlink(t *testing.T) {
	for _, kind := range tempKinds {
		t.Run(kind.name, func(t *testing.T) {
			dir := t.TempDir()
			target, path := filepath.Join(dir, "target.tif"), filepath.Join(dir, "out.tif")
			require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
			require.NoError(t, os.Symlink(target, path))
			h, err := create(path, Options{Replace: true, NoSync: true}, kind.unnamed)
			require.NoError(t, err)
			defer h.Close()
			requireKind(t, h, kind.unnamed)
			_, err = h.Write([]byte("new"))
			require.NoError(t, err)
			require.NoError(t, h.Commit())
			fi, err := os.Lstat(path)
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular(), "the link is replaced by the file: %v", fi.Mode())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "new", string(got))
			got, err = os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, "old", string(got), "the link's target is not written")
		})
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	for _, kind := range tempKinds {
		for _, abort := range []func(*File) error{(*File).Abort, (*File).Close} {
			h, path := newFileOf(t, kind.unnamed, Options{BufferSize: 4})
			_, err := h.Write([]byte("0123456789"))
			require.NoError(t, err)
			require.NoError(t, abort(h))
			assert.Empty(t, dirEntries(t, filepath.Dir(path)), kind.name)
			require.NoError(t, h.Abort(), "second abort is harmless")
			require.NoError(t, h.Close(), "close after abort is harmless")
		}
	}
}

func TestUseAfterClose(t *testing.T) {
	handles := map[string]func(t *testing.T) Handle{
		"file committed": func(t *testing.T) Handle {
			h, _ := newFile(t, Options{NoSync: true})
			require.NoError(t, h.Commit())
			return h
		},
		"file closed": func(t *testing.T) Handle {
			h, _ := newFile(t, Options{NoSync: true})
			require.NoError(t, h.Close())
			return h
		},
		"memory committed": func(t *testing.T) Handle {
			h := NewMemory()
			require.NoError(t, h.Commit())
			return h
		},
		"memory closed": func(t *testing.T) Handle {
			h := NewMemory()
			require.NoError(t, h.Close())
			return h
		},
	}
	for name, open := range handles {
		t.Run(name, func(t *testing.T) {
			h := open(t)
			_, err := h.Write([]byte("x"))
			assert.ErrorIs(t, err, ErrClosed)
			_, err = h.Write(make([]byte, 1<<21))
			assert.ErrorIs(t, err, ErrClosed)
			_, err = h.WriteAt([]byte("x"), 0)
			assert.ErrorIs(t, err, ErrClosed)
			assert.ErrorIs(t, h.Flush(), ErrClosed)
			assert.ErrorIs(t, h.Commit(), ErrClosed)
			assert.NoError(t, h.Close())
			assert.NoError(t, h.Close())
			assert.NoError(t, h.Abort())
		})
	}
}

func TestCommittedFileSurvivesClose(t *testing.T) {
	h, path := newFile(t, Options{NoSync: true})
	_, err := h.Write([]byte("kept"))
	require.NoError(t, err)
	require.NoError(t, h.Commit())
	require.NoError(t, h.Close())
	require.NoError(t, h.Abort())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "kept", string(got))
}

func TestExistingDestination(t *testing.T) {
	for _, kind := range tempKinds {
		t.Run(kind.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.tif")
			require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))

			_, err := create(path, Options{}, kind.unnamed)
			assert.ErrorIs(t, err, ErrExist)
			assert.ErrorIs(t, err, fs.ErrExist)

			h, err := create(path, Options{Replace: true, NoSync: true}, kind.unnamed)
			require.NoError(t, err)
			requireKind(t, h, kind.unnamed)
			_, err = h.Write([]byte("new"))
			require.NoError(t, err)
			require.NoError(t, h.Commit())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "new", string(got))
			assert.Equal(t, []string{"out.tif"}, dirEntries(t, dir))
		})
	}
}

// TestDestinationAppearsBeforeCommit: without Replace, a destination made
// by someone else after Create is kept, and Commit leaves nothing of its
// own; with Replace it is replaced.
func TestDestinationAppearsBeforeCommit(t *testing.T) {
	for _, kind := range tempKinds {
		for _, replace := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/replace=%v", kind.name, replace), func(t *testing.T) {
				h, path := newFileOf(t, kind.unnamed, Options{NoSync: true, Replace: replace})
				_, err := h.Write([]byte("ours"))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, []byte("theirs"), 0o644))
				want := "ours"
				if replace {
					require.NoError(t, h.Commit())
				} else {
					assert.ErrorIs(t, h.Commit(), ErrExist)
					want = "theirs"
				}
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, want, string(got))
				assert.Equal(t, []string{"out.tif"}, dirEntries(t, filepath.Dir(path)), "nothing else left")
			})
		}
	}
	// A directory that appears there is ErrExist, with Replace too, and
	// the same error whichever kind of temporary file (with a named one,
	// it was the rename's error).
	for _, kind := range tempKinds {
		t.Run(kind.name+"/a directory, replace=true", func(t *testing.T) {
			h, path := newFileOf(t, kind.unnamed, Options{NoSync: true, Replace: true})
			_, err := h.Write([]byte("ours"))
			require.NoError(t, err)
			require.NoError(t, os.Mkdir(path, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(path, "inside"), nil, 0o644))
			assert.ErrorIs(t, h.Commit(), ErrExist)
			assert.Equal(t, []string{"out.tif"}, dirEntries(t, filepath.Dir(path)), "nothing else left")
		})
	}
}

func TestCreateInMissingDirectory(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "no", "such", "dir", "f.tif"), Options{})
	assert.ErrorIs(t, err, fs.ErrNotExist)
	// A missing directory then "..": no directory, whatever cleaning the
	// path as text makes of it; refused by Create, not at Commit.
	for _, kind := range tempKinds {
		_, err = create(t.TempDir()+"/none/../f.tif", Options{NoSync: true}, kind.unnamed)
		assert.ErrorIs(t, err, fs.ErrNotExist, kind.name)
	}
}

// TestCreateBufferSize: a BufferSize past 1 GiB is refused at Create,
// leaving nothing: a terabyte's buffer killed the program at the first
// write (an allocation Go cannot give is fatal, not a panic).
func TestCreateBufferSize(t *testing.T) {
	dir := t.TempDir()
	_, err := Create(filepath.Join(dir, "f.tif"), Options{BufferSize: 1 << 40})
	assert.ErrorIs(t, err, fs.ErrInvalid)
	assert.ErrorContains(t, err, "BufferSize 1099511627776, more than 1073741824")
	assert.Empty(t, dirEntries(t, dir))
	h, err := Create(filepath.Join(dir, "f.tif"), Options{BufferSize: 1 << 30, NoSync: true})
	require.NoError(t, err, "1 GiB is taken")
	require.NoError(t, h.Close())
}

// TestCreateThroughLinkParent: a path of a link to a directory then ".."
// names the parent of the link's target, as the system resolves it: the
// file, its temporary file and the stale ones removed are there, not
// beside the link.
func TestCreateThroughLinkParent(t *testing.T) {
	skipWithoutLocks(t)
	for _, kind := range tempKinds {
		t.Run(kind.name, func(t *testing.T) {
			root := t.TempDir()
			target := filepath.Join(root, "far", "sub")
			require.NoError(t, os.MkdirAll(target, 0o755))
			near := filepath.Join(root, "near")
			require.NoError(t, os.Mkdir(near, 0o755))
			require.NoError(t, os.Symlink(target, filepath.Join(near, "link")))
			stale := ".f.tif.0123456789abcdef.tmp"
			for _, d := range []string{near, filepath.Join(root, "far")} {
				require.NoError(t, os.WriteFile(filepath.Join(d, stale), []byte("left"), 0o644))
			}
			path := near + "/link/../f.tif"
			h, err := create(path, Options{NoSync: true}, kind.unnamed)
			require.NoError(t, err)
			requireKind(t, h, kind.unnamed)
			_, err = h.Write([]byte("data"))
			require.NoError(t, err)
			require.NoError(t, h.Commit())
			require.NoError(t, h.Close())
			got, err := os.ReadFile(filepath.Join(root, "far", "f.tif"))
			require.NoError(t, err)
			assert.Equal(t, "data", string(got))
			assert.Equal(t, []string{stale, "link"}, dirEntries(t, near), "beside the link: nothing written, nothing removed")
			assert.Equal(t, []string{"f.tif", "sub"}, dirEntries(t, filepath.Join(root, "far")), "the stale file removed where the file goes")
		})
	}
}

// failingFile is an osFile that fails one kind of call.
type failingFile struct {
	osFile
	failWrite, failWriteAt, failSync bool
}

var errDisk = errors.New("disk on fire")

// errDiskAt is errDisk as an *os.File reports it: on the name it was
// opened by, the directory for an unnamed file.
func errDiskAt(op string) error { return &fs.PathError{Op: op, Path: "dir", Err: errDisk} }

func (f *failingFile) Write(p []byte) (int, error) {
	if f.failWrite {
		return len(p) / 2, errDiskAt("write")
	}
	return f.osFile.Write(p)
}

func (f *failingFile) WriteAt(p []byte, off int64) (int, error) {
	if f.failWriteAt {
		return 0, errDiskAt("write")
	}
	return f.osFile.WriteAt(p, off)
}

func (f *failingFile) Sync() error {
	if f.failSync {
		return errDiskAt("sync")
	}
	return f.osFile.Sync()
}

func TestOSFailuresDiscardOutput(t *testing.T) {
	tests := []struct {
		name string
		file failingFile
		run  func(h *File) error
		says string // the operation the error names, with the destination
	}{
		{"write", failingFile{failWrite: true}, func(h *File) error {
			_, err := h.Write(make([]byte, 64))
			return err
		}, "write"},
		{"flush", failingFile{failWrite: true}, func(h *File) error { return h.Flush() }, "write"},
		{"positioned write", failingFile{failWriteAt: true}, func(h *File) error {
			if err := h.Flush(); err != nil {
				return err
			}
			_, err := h.WriteAt([]byte("x"), 0)
			return err
		}, "write at 0"},
		{"sync", failingFile{failSync: true}, func(h *File) error { return h.Commit() }, "sync"},
	}
	for _, kind := range tempKinds {
		for _, tt := range tests {
			t.Run(kind.name+"/"+tt.name, func(t *testing.T) {
				h, path := newFileOf(t, kind.unnamed, Options{BufferSize: 16})
				_, err := h.Write([]byte("abc"))
				require.NoError(t, err)
				file := tt.file
				file.osFile = h.f
				h.f = &file

				err = tt.run(h)
				require.ErrorIs(t, err, errDisk)
				assert.Equal(t, "iohandle: "+tt.says+" "+path+": disk on fire", err.Error())
				assert.Empty(t, dirEntries(t, filepath.Dir(path)), "failure removes the temporary file")
				_, err = h.Write([]byte("x"))
				assert.ErrorIs(t, err, errDisk, "sticky")
				assert.ErrorIs(t, h.Commit(), errDisk, "sticky")
				assert.NoFileExists(t, path)
				assert.NoError(t, h.Close())
			})
		}
	}
}

// stub replaces a file-system operation for the rest of the test.
func stub[F any](t *testing.T, op *F, fn F) {
	orig := *op
	*op = fn
	t.Cleanup(func() { *op = orig })
}

func failWith(err error) func(string, string) error {
	return func(string, string) error { return &os.LinkError{Op: "stub", Err: err} }
}

var unsupported = func(string, string) error { return errors.ErrUnsupported }

// TestPublishFailures fails each step of committing a named temporary
// file: Commit returns the error and leaves no file.
func TestPublishFailures(t *testing.T) {
	tests := []struct {
		name    string
		replace bool
		stubs   func(t *testing.T)
		want    error
	}{
		{"rename", true, func(t *testing.T) { stub(t, &renameFile, failWith(syscall.EIO)) }, syscall.EIO},
		{"rename across devices", true, func(t *testing.T) { stub(t, &renameFile, failWith(syscall.EXDEV)) }, syscall.EXDEV},
		{"exclusive rename", false, func(t *testing.T) { stub(t, &renameNoReplace, failWith(syscall.EIO)) }, syscall.EIO},
		{"exclusive rename across devices", false, func(t *testing.T) { stub(t, &renameNoReplace, failWith(syscall.EXDEV)) }, syscall.EXDEV},
		{"exclusive rename finds the destination", false, func(t *testing.T) { stub(t, &renameNoReplace, failWith(syscall.EEXIST)) }, ErrExist},
		{"no exclusive rename, link fails", false, func(t *testing.T) {
			stub(t, &renameNoReplace, unsupported)
			stub(t, &linkFile, failWith(syscall.EIO))
		}, syscall.EIO},
		{"no exclusive rename, link finds the destination", false, func(t *testing.T) {
			stub(t, &renameNoReplace, unsupported)
			stub(t, &linkFile, failWith(syscall.EEXIST))
		}, ErrExist},
		{"no exclusive rename, link unsupported, rename fails", false, func(t *testing.T) {
			stub(t, &renameNoReplace, unsupported)
			stub(t, &linkFile, failWith(syscall.EPERM))
			stub(t, &renameFile, failWith(syscall.EIO))
		}, syscall.EIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.stubs(t)
			h, path := newFileOf(t, false, Options{Replace: tt.replace, NoSync: true})
			_, err := h.Write([]byte("abc"))
			require.NoError(t, err)
			err = h.Commit()
			assert.ErrorIs(t, err, tt.want)
			var op *OpError
			if assert.Equal(t, tt.want != ErrExist, errors.As(err, &op), "%v", err) && op != nil {
				assert.Equal(t, path, op.Path, "an OpError names the destination")
			}
			assert.Empty(t, dirEntries(t, filepath.Dir(path)))
		})
	}
}

// TestPublishFallbacks commits where the exclusive rename, and then links,
// are missing: the file still lands, and an existing one is still kept.
func TestPublishFallbacks(t *testing.T) {
	for _, linkWorks := range []bool{true, false} {
		t.Run(fmt.Sprintf("link %v", linkWorks), func(t *testing.T) {
			stub(t, &renameNoReplace, unsupported)
			if !linkWorks {
				stub(t, &linkFile, failWith(syscall.EPERM))
			}
			h, path := newFileOf(t, false, Options{NoSync: true})
			_, err := h.Write([]byte("abc"))
			require.NoError(t, err)
			require.NoError(t, h.Commit())
			assert.Equal(t, []string{"out.tif"}, dirEntries(t, filepath.Dir(path)))

			h2, err := create(path+".2", Options{NoSync: true}, false)
			require.NoError(t, err)
			h2.path = path // as if path appeared after Create
			assert.ErrorIs(t, h2.Commit(), ErrExist)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "abc", string(got))
		})
	}
}

// TestFileNeverLongerThanContent applies a fixed mix of appends and patches
// and checks after every operation that the file on disk is never longer
// than the logical length, and equals it after Flush.
func TestFileNeverLongerThanContent(t *testing.T) {
	h, _ := newFile(t, Options{BufferSize: 64, NoSync: true})
	model := NewMemory()
	sizes := []int{1, 2, 63, 64, 65, 200, 3, 0, 17}
	for i := range 200 {
		p := bytes.Repeat([]byte{byte(i)}, sizes[i%len(sizes)])
		_, err := h.Write(p)
		require.NoError(t, err)
		_, _ = model.Write(p)
		if i%3 == 0 && h.Len() > 10 {
			off := h.Len() * int64(i%7) / 7
			q := []byte{byte(i), 0xEE, byte(i)}
			if off+3 <= h.Len() {
				_, err := h.WriteAt(q, off)
				require.NoError(t, err)
				_, _ = model.WriteAt(q, off)
			}
		}
		assert.LessOrEqual(t, sizeOnDisk(t, h), h.Len())
		if i%10 == 0 {
			require.NoError(t, h.Flush())
			assert.Equal(t, h.Len(), sizeOnDisk(t, h))
		}
	}
	require.NoError(t, h.Flush())
	assert.Equal(t, model.Bytes(), contentOnDisk(t, h))
}

// TestSyncThenCommit: Commit syncs only what Sync has not, whatever wrote
// since (an append, a patch of bytes written or still buffered).
func TestSyncThenCommit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		after func(h *File) error
		syncs int64
		want  string
	}{
		{"nothing written since", func(*File) error { return nil }, 1, "data"},
		{"an append", func(h *File) error { _, err := h.Write([]byte("more")); return err }, 2, "datamore"},
		{"a patch", func(h *File) error { _, err := h.WriteAt([]byte("X"), 1); return err }, 2, "dXta"},
		{"a second Sync", func(h *File) error { return h.Sync() }, 1, "data"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.tif")
			h, err := Create(path, Options{})
			require.NoError(t, err)
			_, err = h.Write([]byte("data"))
			require.NoError(t, err)
			require.NoError(t, h.Sync())
			require.NoError(t, tt.after(h))
			require.NoError(t, h.Commit())
			assert.Equal(t, tt.syncs, h.Stats().Syncs)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
	h, err := Create(filepath.Join(t.TempDir(), "out.tif"), Options{NoSync: true})
	require.NoError(t, err)
	require.NoError(t, h.Sync())
	require.NoError(t, h.Commit())
	assert.Zero(t, h.Stats().Syncs, "NoSync")
}

// TestNamedTempFollowsItsDirectory: the named temporary file is removed
// even after its directory was renamed, by the failed Commit and by
// Abort, which reports no error then; a committed handle keeps no
// directory open.
func TestNamedTempFollowsItsDirectory(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open directory cannot be renamed on Windows, and File holds none there")
	}
	for _, end := range []string{"commit", "abort"} {
		t.Run(end, func(t *testing.T) {
			base := t.TempDir()
			path := filepath.Join(base, "a", "out.tif")
			require.NoError(t, os.Mkdir(filepath.Dir(path), 0o755))
			h, err := create(path, Options{NoSync: true}, false)
			require.NoError(t, err)
			_, err = h.Write([]byte("abc"))
			require.NoError(t, err)
			require.NoError(t, h.Flush())
			require.NoError(t, os.Rename(filepath.Join(base, "a"), filepath.Join(base, "b")))
			require.Len(t, dirEntries(t, filepath.Join(base, "b")), 1, "the temporary file, moved with its directory")
			if end == "commit" {
				var op *OpError
				require.ErrorAs(t, h.Commit(), &op)
				assert.ErrorIs(t, op, fs.ErrNotExist)
			} else {
				require.NoError(t, h.Abort())
			}
			assert.Empty(t, dirEntries(t, filepath.Join(base, "b")))
			assert.Nil(t, h.dir, "closed")
		})
	}
	h, _ := newFileOf(t, false, Options{NoSync: true})
	require.NoError(t, h.Commit())
	assert.Nil(t, h.dir, "closed at Commit")
}

// TestOpenDirOf: the directory is held only if it holds the file under
// its name, not once another has taken its place.
func TestOpenDirOf(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	f, err := os.Create(filepath.Join(a, ".x.tmp"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, os.WriteFile(filepath.Join(b, ".x.tmp"), nil, 0o644))
	dir := openDirOf(f, filepath.Join(a, ".x.tmp"))
	require.NotNil(t, dir)
	require.NoError(t, dir.Close())
	assert.Nil(t, openDirOf(f, filepath.Join(b, ".x.tmp")), "another file of that name")
	assert.Nil(t, openDirOf(f, filepath.Join(a, "missing", ".x.tmp")))
}
