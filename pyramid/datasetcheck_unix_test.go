//go:build linux || darwin

package pyramid

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDatasetNamedPipe: a named pipe under a dataset file's name (or the
// companion's) is reported, not opened: CheckDataset, Check, WriteCompanion
// and WritePart waited for a writer for ever.
func TestDatasetNamedPipe(t *testing.T) {
	within := func(t *testing.T, what string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { f(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s blocked on a named pipe", what)
		}
	}
	for _, companion := range []bool{false, true} {
		spec := stackPlan(2, 2, 1, 16, Split{Files: 2})
		spec.Companion = companion
		d := mustDataset(t, spec)
		dir := t.TempDir()
		writeParts(t, d, dir, PartOptions{}, 0)
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, d.File(1).Name), 0o600))
		within(t, "Check", func() {
			_, err := d.Check(dir)
			assert.Error(t, err)
		})
		within(t, "CheckDataset", func() {
			_, err := CheckDataset(filepath.Join(dir, d.File(0).Name))
			assert.Error(t, err)
		})
		if companion {
			name, _ := d.Companion()
			cdir := t.TempDir()
			require.NoError(t, syscall.Mkfifo(filepath.Join(cdir, name), 0o600))
			within(t, "WriteCompanion", func() { assert.Error(t, d.WriteCompanion(cdir, iohandle.Options{NoSync: true})) })
			within(t, "WritePart", func() {
				assert.Error(t, d.WritePart(context.Background(), cdir, 0, PartOptions{}, func(PlaneRef, []byte) error { return nil }))
			})
		}
	}
}
