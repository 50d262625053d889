package tiff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
)

// TestInteropLibtiff has libtiff's tiffinfo decode every golden (-D reads
// every strip and tile) with nothing on stderr, and tiffdump list the
// SubIFDs.
func TestInteropLibtiff(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tiffinfo", "tiffdump")
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			out := interop.MustRun(t, "tiffinfo", "-D", goldenPath(g.name))
			assert.Equal(t, len(g.images), strings.Count(out, "TIFF Directory at offset"), "directories seen by tiffinfo")
			dump := interop.MustRun(t, "tiffdump", goldenPath(g.name))
			if strings.Contains(g.name, "subifds") {
				assert.Contains(t, dump, "SubIFD (330)")
			}
		})
	}
}

// TestInteropTifffile has tifffile read every directory of every golden
// and compares the pixels with the source.
func TestInteropTifffile(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			got := interop.RunPython(t, interop.TifffilePages, goldenPath(g.name))
			var want []byte
			for i := range g.images {
				want = append(want, g.imageAt(i).rawPixels()...)
			}
			assert.Equal(t, string(want), got)
		})
	}
}

// syscallChild makes the test binary, re-run under strace, write the 1,000
// directory file and exit.
const syscallChild = "OMETIFF_SYSCALL_CHILD"

// TestInteropSyscalls writes 1,000 tiled directories in a child process
// under strace and checks, from the system calls the kernel saw, that the
// file was written with about one write per MiB and never truncated,
// extended, preallocated or seeked.
func TestInteropSyscalls(t *testing.T) {
	if dir := os.Getenv(syscallChild); dir != "" {
		writeThousandDirectories(t, filepath.Join(dir, "many.tif"))
		return
	}
	interop.Selected(t)
	interop.Need(t, "strace")
	dir := t.TempDir()
	summary := filepath.Join(dir, "strace.txt")
	cmd := exec.Command("strace", "-f", "-c", "-U", "name,calls", "-o", summary,
		"-e", "trace=write,pwrite64,writev,pwritev,ftruncate,fallocate,lseek",
		os.Args[0], "-test.run=^TestInteropSyscalls$", "-test.count=1")
	cmd.Env = append(os.Environ(), syscallChild+"="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	text, err := os.ReadFile(summary)
	require.NoError(t, err)
	calls := straceCalls(string(text))
	fi, err := os.Stat(filepath.Join(dir, "many.tif"))
	require.NoError(t, err)
	mib := (fi.Size() + 1<<20 - 1) >> 20
	t.Logf("%d bytes; system calls: %v", fi.Size(), calls)
	for _, never := range []string{"ftruncate", "fallocate", "lseek"} {
		assert.Zero(t, calls[never], never)
	}
	// The test binary itself writes a few lines of output; the file, by
	// offset (iohandle's WriteAt), takes at least one call: none counted
	// is strace's summary not read.
	assert.LessOrEqual(t, calls["write"]+calls["pwrite64"]+calls["writev"]+calls["pwritev"], mib+1+5)
	assert.GreaterOrEqual(t, calls["pwrite64"]+calls["pwritev"], int64(1), "the file's writes, in:\n%s", text)
	assert.GreaterOrEqual(t, calls["write"], int64(1), "the test's output, in:\n%s", text)
}

// straceCalls reads the call counts of an strace -c -U name,calls summary.
func straceCalls(text string) map[string]int64 {
	calls := map[string]int64{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || f[0] == "syscall" || f[0] == "total" {
			continue
		}
		if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			calls[f[0]] = n
		}
	}
	return calls
}
