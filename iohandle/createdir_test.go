package iohandle

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCreateOnDirectory: a destination that is a directory is never
// replaced, Replace or not (rename(2) cannot put a file over it), so
// Create refuses it with ErrExist at once, before the caller writes a
// whole file that Commit could not publish. The directory is left as it was.
func TestCreateOnDirectory(t *testing.T) {
	for _, kind := range tempKinds {
		for _, replace := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/replace=%v", kind.name, replace), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "out.tif")
				require.NoError(t, os.Mkdir(dir, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "inside"), []byte("kept"), 0o644))

				h, err := create(dir, Options{Replace: replace, NoSync: true}, kind.unnamed)
				if h != nil {
					_ = h.Abort()
				}
				require.Error(t, err, "replace=%v", replace)
				assert.Nil(t, h)
				assert.ErrorIs(t, err, ErrExist)
				assert.ErrorIs(t, err, fs.ErrExist)
				assert.ErrorContains(t, err, "is a directory")

				info, err := os.Lstat(dir)
				require.NoError(t, err)
				assert.True(t, info.IsDir(), "the directory is still there")
				assert.Equal(t, []string{"out.tif"}, dirEntries(t, filepath.Dir(dir)), "no temporary file left")
			})
		}
	}
	// Create, as callers call it, whichever kind of file it picks.
	dir := filepath.Join(t.TempDir(), "out.tif")
	require.NoError(t, os.Mkdir(dir, 0o755))
	h, err := Create(dir, Options{Replace: true, NoSync: true})
	if h != nil {
		_ = h.Abort()
	}
	assert.ErrorIs(t, err, ErrExist)
}
