package iohandle

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skipWithoutLocks skips where the system has no flock, so that temporary
// files are never cleaned.
func skipWithoutLocks(t *testing.T) {
	t.Helper()
	switch runtime.GOOS {
	case "darwin", "dragonfly", "freebsd", "linux", "netbsd", "openbsd", "solaris", "illumos", "ios", "android":
	default:
		t.Skipf("%s has no flock: temporary files are left", runtime.GOOS)
	}
}

func TestIsTempName(t *testing.T) {
	for name, want := range map[string]bool{
		".out.tif.0123456789abcdef.tmp":   true,
		".out.tif.0123456789ABCDEF.tmp":   false, // tempName writes lowercase
		".out.tif.0123456789abcde.tmp":    false,
		".out.tif.0123456789abcdef0.tmp":  false,
		".out.tif.0123456789abcdeg.tmp":   false,
		".out.tif.0123456789abcdef.tmp.x": false,
		"out.tif.0123456789abcdef.tmp":    false,
		".other.tif.0123456789abcdef.tmp": false,
		".out.tif.2.0123456789abcdef.tmp": false, // out.tif.2's
		"out.tif":                         false,
	} {
		assert.Equal(t, want, isTempName(name, "out.tif"), name)
	}
	assert.True(t, isTempName(filepath.Base(tempName("dir"+string(filepath.Separator), "out.tif")), "out.tif"))
}

// TestTemporaries: the temporary files of a destination are listed, and
// no other file; a directory that cannot be read is an error.
func TestTemporaries(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".out.tif.0123456789abcdef.tmp", ".out.tif.fedcba9876543210.tmp", ".out.tif.0123.tmp",
		".other.tif.0123456789abcdef.tmp", "out.tif"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), nil, 0o644))
	}
	temps, err := Temporaries(filepath.Join(dir, "out.tif"))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, ".out.tif.0123456789abcdef.tmp"), filepath.Join(dir, ".out.tif.fedcba9876543210.tmp")}, temps)
	temps, err = Temporaries(filepath.Join(dir, "none.tif"))
	assert.NoError(t, err)
	assert.Nil(t, temps)
	_, err = Temporaries(filepath.Join(dir, "missing", "out.tif"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	// Only regular files, as Create removes them; and through a path of
	// a symbolic link and "..", names in the directory the system
	// resolves it to, not the one the path's text names.
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".out.tif.aaaaaaaaaaaaaaaa.tmp"), 0o755))
	real := filepath.Join(dir, "real")
	require.NoError(t, os.MkdirAll(filepath.Join(real, "sub"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(real, "sub"), filepath.Join(dir, "link")))
	require.NoError(t, os.WriteFile(filepath.Join(real, ".out.tif.0123456789abcdef.tmp"), nil, 0o644))
	temps, err = Temporaries(dir + "/link/../out.tif")
	require.NoError(t, err)
	require.Len(t, temps, 1)
	_, err = os.Stat(temps[0])
	assert.NoError(t, err, "the path returned names the file")
	assert.True(t, os.SameFile(mustStat(t, temps[0]), mustStat(t, filepath.Join(real, ".out.tif.0123456789abcdef.tmp"))))
	temps, err = Temporaries(filepath.Join(dir, "out.tif"))
	require.NoError(t, err)
	assert.Len(t, temps, 2, "not the directory")
}

// mustStat returns a file's information.
func mustStat(t *testing.T, path string) fs.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi
}

// TestCreateRemovesStaleTemporaries: Create removes the temporary files
// of its destination that no writer holds, and nothing else: not a live
// writer's, not another destination's, not a name of another shape, not a
// directory or a symbolic link.
func TestCreateRemovesStaleTemporaries(t *testing.T) {
	skipWithoutLocks(t)
	for _, kind := range tempKinds {
		t.Run(kind.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.tif")
			live, err := create(path, Options{NoSync: true}, false)
			require.NoError(t, err)
			defer live.Close()
			_, err = live.Write([]byte("live"))
			require.NoError(t, err)
			stale := []string{".out.tif.0123456789abcdef.tmp", ".out.tif.fedcba9876543210.tmp"}
			kept := []string{".out.tif.0123456789ABCDEF.tmp", ".out.tif.0123.tmp", ".other.tif.0123456789abcdef.tmp",
				"out.tif.0123456789abcdef.tmp", ".out.tif.2.0123456789abcdef.tmp"}
			for _, name := range append(stale, kept...) {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("left"), 0o644))
			}
			require.NoError(t, os.Mkdir(filepath.Join(dir, ".out.tif.aaaaaaaaaaaaaaaa.tmp"), 0o755))
			target := filepath.Join(t.TempDir(), "target")
			require.NoError(t, os.WriteFile(target, []byte("elsewhere"), 0o644))
			require.NoError(t, os.Symlink(target, filepath.Join(dir, ".out.tif.bbbbbbbbbbbbbbbb.tmp")))
			kept = append(kept, ".out.tif.aaaaaaaaaaaaaaaa.tmp", ".out.tif.bbbbbbbbbbbbbbbb.tmp", filepath.Base(live.tmp))

			h, err := create(path, Options{NoSync: true}, kind.unnamed)
			require.NoError(t, err)
			defer h.Close()
			requireKind(t, h, kind.unnamed)
			if !kind.unnamed {
				kept = append(kept, filepath.Base(h.tmp))
			}
			slices.Sort(kept)
			assert.Equal(t, kept, dirEntries(t, dir))
			assert.FileExists(t, target)

			require.NoError(t, live.Commit(), "the live writer is untouched")
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "live", string(got))
		})
	}
}

// TestStaleRemovedBesideExisting: a dead writer's temporary file goes
// even when Create refuses the existing destination.
func TestStaleRemovedBesideExisting(t *testing.T) {
	skipWithoutLocks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.tif")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".out.tif.0123456789abcdef.tmp"), []byte("left"), 0o644))
	_, err := Create(path, Options{})
	require.ErrorIs(t, err, ErrExist)
	assert.Equal(t, []string{"out.tif"}, dirEntries(t, dir))
}

// TestLongNames: a destination of 251 bytes (of the 255 file systems
// take) gets a temporary name (cut to fit, before a UTF-8 character) in
// both kinds of file, is committed, replaced, and its dead writers' files
// are cleaned. A name too long is refused at Create, not after the work.
func TestLongNames(t *testing.T) {
	skipWithoutLocks(t)
	long := strings.Repeat("é", 120) + strings.Repeat("a", 7) + ".tif" // 251 bytes
	require.Len(t, long, 251)
	cut := tempBase(long)
	assert.Len(t, cut, 232, "233 bytes fit; the 233rd starts inside an é")
	assert.True(t, utf8.ValidString(cut))
	assert.Equal(t, "short.tif", tempBase("short.tif"))
	for _, kind := range tempKinds {
		t.Run(kind.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, long)
			for i, replace := range []bool{false, true} {
				h, err := create(path, Options{NoSync: true, Replace: replace}, kind.unnamed)
				require.NoError(t, err)
				_, err = h.Write([]byte{byte('0' + i)})
				require.NoError(t, err)
				require.NoError(t, h.Commit())
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "1", string(got))
			stale := "." + cut + ".0123456789abcdef.tmp"
			require.Len(t, stale, maxNameBytes-1)
			require.NoError(t, os.WriteFile(filepath.Join(dir, stale), []byte("left"), 0o644))
			_, err = create(path, Options{NoSync: true}, kind.unnamed)
			require.ErrorIs(t, err, ErrExist)
			assert.Equal(t, []string{long}, dirEntries(t, dir))
			_, err = create(filepath.Join(dir, strings.Repeat("a", maxNameBytes+1)), Options{NoSync: true}, kind.unnamed)
			require.ErrorIs(t, err, syscall.ENAMETOOLONG)
			assert.Equal(t, []string{long}, dirEntries(t, dir))
		})
	}
	_, err := Create("", Options{})
	require.ErrorIs(t, err, fs.ErrInvalid)
	assert.EqualError(t, err, "iohandle: create: invalid argument: no path")
}

// TestLockTemp: a new named file that a cleaner locked first, or removed
// before it could be locked, is given up.
func TestLockTemp(t *testing.T) {
	skipWithoutLocks(t)
	dir := t.TempDir()
	newTemp := func() (*os.File, string) {
		tmp := tempName(dir+string(filepath.Separator), "out.tif")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		require.NoError(t, err)
		t.Cleanup(func() { _ = f.Close() })
		return f, tmp
	}

	f, tmp := newTemp()
	cleaner, err := os.Open(tmp)
	require.NoError(t, err)
	require.NoError(t, lockFile(cleaner))
	assert.ErrorIs(t, lockTemp(f, tmp), errCleaned, "locked by the cleaner")
	require.NoError(t, cleaner.Close())

	f, tmp = newTemp()
	require.NoError(t, os.Remove(tmp))
	assert.ErrorIs(t, lockTemp(f, tmp), errCleaned, "removed by the cleaner")

	f, tmp = newTemp()
	require.NoError(t, lockTemp(f, tmp))
	removeIfUnlocked(tmp)
	assert.FileExists(t, tmp, "locked by its writer")
}

// TestLockHeldUntilNamed runs a Create of the same destination (which
// cleans) at the moment a Commit renames or links its file: the file is
// still locked then, and the Commit succeeds.
func TestLockHeldUntilNamed(t *testing.T) {
	skipWithoutLocks(t)
	for _, tt := range []struct {
		name    string
		unnamed bool
		op      *func(string, string) error
	}{
		{"named", false, &renameNoReplace},
		{"unnamed, replacing", true, &renameFile},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, path := newFileOf(t, tt.unnamed, Options{NoSync: true, Replace: tt.unnamed})
			if tt.unnamed {
				require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
			}
			_, err := h.Write([]byte("new"))
			require.NoError(t, err)
			rename := *tt.op
			stub(t, tt.op, func(oldpath, newpath string) error {
				removeStale(path) // as a concurrent Create of path does
				return rename(oldpath, newpath)
			})
			require.NoError(t, h.Commit())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "new", string(got))
		})
	}
}

// killedChild makes the test binary, re-run by TestKilledWriter, start a
// file of the kind it names ("unnamed" or "named") at the path after it,
// write to it, say "ready" and wait to be killed.
const killedChild = "IOHANDLE_KILLED_CHILD"

// TestKilledWriter kills (SIGKILL) a process in the middle of writing a
// file: an unnamed file leaves nothing; a named one leaves its temporary
// file, which a Create in another process does not touch while its writer
// lives and removes once it is dead.
func TestKilledWriter(t *testing.T) {
	if spec := os.Getenv(killedChild); spec != "" {
		kind, path, _ := strings.Cut(spec, " ")
		h, err := create(path, Options{}, kind == "unnamed")
		require.NoError(t, err)
		_, err = h.Write(pattern(3<<20, 1))
		require.NoError(t, err)
		require.NoError(t, h.Flush())
		os.Stdout.WriteString("ready\n")
		_, _ = os.Stdin.Read(make([]byte, 1)) // until killed
		t.Fatal("not killed")
	}
	skipWithoutLocks(t)
	for _, kind := range tempKinds {
		t.Run(kind.name, func(t *testing.T) {
			if kind.unnamed && runtime.GOOS != "linux" {
				t.Skip("unnamed files (O_TMPFILE) are Linux's")
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "out.tif")
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$", "-test.count=1")
			cmd.Env = append(os.Environ(), killedChild+"="+kind.name+" "+path)
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "ready\n", line)

			during := dirEntries(t, dir)
			removeStale(path)
			assert.Equal(t, during, dirEntries(t, dir), "a live writer's file is kept")
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()

			left := dirEntries(t, dir)
			temps, err := Temporaries(path)
			require.NoError(t, err)
			if kind.unnamed {
				assert.Empty(t, left, "an unnamed file dies with its writer")
				assert.Empty(t, temps)
				return
			}
			require.Len(t, left, 1)
			assert.True(t, isTempName(left[0], "out.tif"), "left %q", left[0])
			assert.Equal(t, []string{filepath.Join(dir, left[0])}, temps, "Temporaries finds it")
			fi, err := os.Stat(filepath.Join(dir, left[0]))
			require.NoError(t, err)
			assert.Equal(t, int64(3<<20), fi.Size())

			h, err := create(path, Options{NoSync: true}, false)
			require.NoError(t, err)
			assert.Equal(t, []string{filepath.Base(h.tmp)}, dirEntries(t, dir), "the dead writer's file is removed")
			require.NoError(t, h.Commit())
			assert.Equal(t, []string{"out.tif"}, dirEntries(t, dir))
		})
	}
}
