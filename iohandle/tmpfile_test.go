package iohandle

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnnamedAppearsAtCommit writes several MiB to an unnamed file: no
// name shows in the directory until Commit, which gives the complete file
// the destination's name in one link, and no other.
func TestUnnamedAppearsAtCommit(t *testing.T) {
	h, path := newFileOf(t, true, Options{NoSync: true})
	dir := filepath.Dir(path)
	want := pattern(5<<20+7, 3)
	_, err := h.Write(want)
	require.NoError(t, err)
	require.NoError(t, h.Flush())
	assert.Equal(t, int64(len(want)), sizeOnDisk(t, h), "written, in no directory")
	assert.Empty(t, dirEntries(t, dir))

	var linked []string
	link := linkUnnamed
	stub(t, &linkUnnamed, func(f osFile, name string) error {
		linked = append(linked, filepath.Base(name))
		assert.Empty(t, dirEntries(t, dir), "nothing visible before the link")
		err := link(f, name)
		got, readErr := os.ReadFile(name)
		require.NoError(t, readErr)
		assert.True(t, bytes.Equal(want, got), "complete from the moment it has a name")
		return err
	})
	require.NoError(t, h.Commit())
	assert.Equal(t, []string{"out.tif"}, linked, "one link, straight to the destination")
	assert.Equal(t, []string{"out.tif"}, dirEntries(t, dir))
}

// TestUnnamedReplace replaces an existing destination with an unnamed
// file: linked to a hidden temporary name, then renamed over it.
func TestUnnamedReplace(t *testing.T) {
	h, path := newFileOf(t, true, Options{NoSync: true, Replace: true})
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	_, err := h.Write([]byte("new"))
	require.NoError(t, err)
	var linked []string
	link := linkUnnamed
	stub(t, &linkUnnamed, func(f osFile, name string) error {
		linked = append(linked, filepath.Base(name))
		return link(f, name)
	})
	require.NoError(t, h.Commit())
	require.Len(t, linked, 2)
	assert.Equal(t, "out.tif", linked[0], "tried straight to the destination first")
	assert.True(t, isTempName(linked[1], "out.tif"), "then %q", linked[1])
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
	assert.Equal(t, []string{"out.tif"}, dirEntries(t, filepath.Dir(path)))
}

// linkFails is a linkUnnamed that fails with err for names other than the
// destination, and for it too unless the real link is wanted there.
func linkFails(err error, realForDestination bool) func(osFile, string) error {
	link := linkUnnamed
	return func(f osFile, name string) error {
		if realForDestination && filepath.Base(name) == "out.tif" {
			return link(f, name)
		}
		return err
	}
}

// TestUnnamedCommitFailures fails each step of committing an unnamed
// file: Commit returns the error and leaves no file of its own, and a
// destination that was there keeps its content.
func TestUnnamedCommitFailures(t *testing.T) {
	tests := []struct {
		name     string
		replace  bool
		existing bool // the destination exists before Commit
		stubs    func(t *testing.T)
		want     error
	}{
		{"link finds the destination", false, false, func(t *testing.T) {
			stub(t, &linkUnnamed, linkFails(syscall.EEXIST, false))
		}, ErrExist},
		{"link across devices", false, false, func(t *testing.T) {
			stub(t, &linkUnnamed, linkFails(syscall.EXDEV, false))
		}, syscall.EXDEV},
		{"link fails", false, false, func(t *testing.T) {
			stub(t, &linkUnnamed, linkFails(syscall.EIO, false))
		}, syscall.EIO},
		{"replace: link fails", true, false, func(t *testing.T) {
			stub(t, &linkUnnamed, linkFails(syscall.EIO, false))
		}, syscall.EIO},
		{"replace: link to the temporary name fails", true, true, func(t *testing.T) {
			stub(t, &linkUnnamed, linkFails(syscall.EXDEV, true))
		}, syscall.EXDEV},
		{"replace: rename fails", true, true, func(t *testing.T) {
			stub(t, &renameFile, failWith(syscall.EIO))
		}, syscall.EIO},
		{"replace: rename across devices", true, true, func(t *testing.T) {
			stub(t, &renameFile, failWith(syscall.EXDEV))
		}, syscall.EXDEV},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, path := newFileOf(t, true, Options{Replace: tt.replace})
			_, err := h.Write([]byte("ours"))
			require.NoError(t, err)
			var want []string
			if tt.existing {
				require.NoError(t, os.WriteFile(path, []byte("theirs"), 0o644))
				want = []string{"out.tif"}
			}
			tt.stubs(t)
			assert.ErrorIs(t, h.Commit(), tt.want)
			assert.Equal(t, want, dirEntries(t, filepath.Dir(path)))
			if tt.existing {
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, "theirs", string(got))
			}
			_, err = h.Write([]byte("x"))
			assert.ErrorIs(t, err, tt.want, "sticky")
			assert.NoError(t, h.Close())
		})
	}
}

// TestUnnamedRefused: where the file system refuses O_TMPFILE, Create
// writes a named temporary file instead, and commits it all the same.
func TestUnnamedRefused(t *testing.T) {
	for _, err := range []error{syscall.EOPNOTSUPP, syscall.EISDIR, syscall.EINVAL, errors.ErrUnsupported} {
		t.Run(err.Error(), func(t *testing.T) {
			stub(t, &openUnnamed, func(string, os.FileMode) (osFile, error) { return nil, err })
			h, path := newFile(t, Options{NoSync: true})
			assert.False(t, h.unnamed)
			assert.True(t, isTempName(filepath.Base(h.tmp), "out.tif"))
			_, err := h.Write([]byte("abc"))
			require.NoError(t, err)
			require.NoError(t, h.Commit())
			assert.Equal(t, []string{"out.tif"}, dirEntries(t, filepath.Dir(path)))
		})
	}
}

// TestNoTmpfileEnvironment: OMETIFF_NO_TMPFILE set to a true value makes
// Create use a named temporary file.
func TestNoTmpfileEnvironment(t *testing.T) {
	for _, tt := range []struct {
		value   string
		unnamed bool
	}{{"", true}, {"0", true}, {"false", true}, {"1", false}, {"true", false}, {"T", false}} {
		t.Run("value "+tt.value, func(t *testing.T) {
			t.Setenv(noTmpfileEnv, tt.value)
			h, _ := newFile(t, Options{NoSync: true})
			requireKind(t, h, tt.unnamed)
			assert.Equal(t, tt.unnamed, h.tmp == "")
		})
	}
}
