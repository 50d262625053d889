package iohandletest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/iohandle"
)

// writeSome issues three appends, a patch and a commit.
func writeSome(h iohandle.Handle) error {
	for _, s := range []string{"header..", "tile data", "directory"} {
		if _, err := h.Write([]byte(s)); err != nil {
			return err
		}
	}
	if _, err := h.WriteAt([]byte("HE"), 0); err != nil {
		return err
	}
	return h.Commit()
}

func TestFaultyLeavesNoFile(t *testing.T) {
	tests := []struct {
		name   string
		faults Faults
	}{
		{"first write", Faults{Write: 1}},
		{"third write", Faults{Write: 3}},
		{"patch", Faults{Write: 4}},
		{"no space", Faults{MaxBytes: 12}},
		{"sync", Faults{Sync: true}},
		{"rename", Faults{Rename: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.tif")
			f, err := iohandle.Create(path, iohandle.Options{NoSync: true})
			require.NoError(t, err)
			h := NewFaulty(f, tt.faults)

			err = writeSome(h)
			require.ErrorIs(t, err, ErrInjected)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries)
			_, err = h.Write([]byte("x"))
			assert.ErrorIs(t, err, ErrInjected, "sticky")
			assert.ErrorIs(t, h.Commit(), ErrInjected, "sticky")
			assert.NoError(t, h.Close())
		})
	}
}

func TestFaultyWithoutFaultsPassesThrough(t *testing.T) {
	m := iohandle.NewMemory()
	h := NewFaulty(m, Faults{Write: 99, MaxBytes: 1 << 20})
	require.NoError(t, writeSome(h))
	assert.Equal(t, "HEader..tile datadirectory", string(m.Bytes()))
	assert.Equal(t, iohandle.Stats{Appends: 3, Patches: 1, Bytes: 28}, h.Stats())
}

func TestFaultyFlush(t *testing.T) {
	m := iohandle.NewMemory()
	h := NewFaulty(m, Faults{Flush: true})
	_, err := h.Write([]byte("abc"))
	require.NoError(t, err)
	assert.ErrorIs(t, h.Flush(), ErrInjected)
	assert.Nil(t, m.Bytes(), "output discarded")
}
