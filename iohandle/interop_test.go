package iohandle

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
)

// syscallChild makes the test binary, re-run under strace by
// TestInteropSyscalls, write the file the path after it names.
const syscallChild = "IOHANDLE_SYSCALL_CHILD"

// syscallAppends and syscallPatches are what the child writes: 32 MiB in
// appends of 1,000 bytes, and patches of the first bytes now and then.
const (
	syscallAppends = 32 << 10 * 1024 / 1000
	syscallPatches = 8
)

// TestInteropSyscalls writes a file through Create in a child process
// under strace, on each path (an unnamed file, then a named one forced by
// OMETIFF_NO_TMPFILE), and checks from the system calls the kernel saw
// that it was written with one write call per MiB and a call per patch,
// never truncated, preallocated or seeked, and given its name by one
// linkat (unnamed) or one rename (named).
func TestInteropSyscalls(t *testing.T) {
	if path := os.Getenv(syscallChild); path != "" {
		writeForStrace(t, path)
		return
	}
	interop.Selected(t)
	interop.Need(t, "strace")
	for _, kind := range tempKinds {
		t.Run(kind.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.bin")
			log := filepath.Join(t.TempDir(), "strace.txt")
			cmd := exec.Command("strace", "-f", "-o", log,
				"-e", "trace=write,pwrite64,writev,pwritev,ftruncate,fallocate,lseek,linkat,rename,renameat,renameat2",
				os.Args[0], "-test.run=^TestInteropSyscalls$", "-test.count=1")
			forceNamed := "0"
			if !kind.unnamed {
				forceNamed = "1"
			}
			cmd.Env = append(os.Environ(), syscallChild+"="+path, noTmpfileEnv+"="+forceNamed)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			text, err := os.ReadFile(log)
			require.NoError(t, err)
			calls := countCalls(string(text))
			fi, err := os.Stat(path)
			require.NoError(t, err)
			mib := (fi.Size() + 1<<20 - 1) >> 20
			t.Logf("%d bytes; system calls: %v", fi.Size(), calls)
			for _, never := range []string{"ftruncate", "fallocate", "lseek"} {
				assert.Zero(t, calls[never], never)
			}
			assert.Equal(t, int64(syscallPatches), calls["pwrite64"], "one per patch")
			// The test binary itself writes a few lines of output.
			assert.LessOrEqual(t, calls["write"]+calls["writev"]+calls["pwritev"], mib+5)
			renames := calls["rename"] + calls["renameat"] + calls["renameat2"]
			if kind.unnamed {
				assert.Equal(t, int64(1), calls["linkat"], "linked into place")
				assert.Zero(t, renames)
			} else {
				assert.Zero(t, calls["linkat"])
				assert.Equal(t, int64(1), renames, "renamed into place")
			}
			assert.Equal(t, []string{"out.bin"}, dirEntries(t, dir))
		})
	}
}

// writeForStrace writes the child's file at path and commits it.
func writeForStrace(t *testing.T, path string) {
	h, err := Create(path, Options{NoSync: true})
	require.NoError(t, err)
	p := pattern(1000, 0)
	for i := range syscallAppends {
		_, err := h.Write(p)
		require.NoError(t, err)
		if i%(syscallAppends/syscallPatches) == syscallAppends/syscallPatches-1 {
			_, err := h.WriteAt([]byte{byte(i)}, int64(i%64))
			require.NoError(t, err)
		}
	}
	require.NoError(t, h.Commit())
}

// straceLine matches the start of a system call in strace -f's log: the
// process ID and the call's name, once per call (a call another one
// interrupts is resumed on a line of its own, which starts with "<...").
var straceLine = regexp.MustCompile(`(?m)^\d+\s+(\w+)\(`)

// countCalls counts the system calls in strace -f's log, by name.
func countCalls(log string) map[string]int64 {
	calls := map[string]int64{}
	for _, m := range straceLine.FindAllStringSubmatch(log, -1) {
		calls[m[1]]++
	}
	return calls
}
