package iohandle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemory(t *testing.T) {
	m := NewMemory()
	_, err := m.Write([]byte("hello world"))
	require.NoError(t, err)
	_, err = m.WriteAt([]byte("W"), 6)
	require.NoError(t, err)
	assert.Equal(t, int64(11), m.Len())
	assert.Equal(t, "hello World", string(m.Bytes()))
	require.NoError(t, m.Flush())
	require.NoError(t, m.Commit())
	assert.Equal(t, "hello World", string(m.Bytes()), "committed output stays readable")
	assert.Equal(t, Stats{Appends: 1, Patches: 1, Bytes: 12}, m.Stats())
	assert.Equal(t, int64(2), m.Stats().Writes())
}

func TestMemoryAbort(t *testing.T) {
	m := NewMemory()
	_, _ = m.Write([]byte("x"))
	require.NoError(t, m.Abort())
	assert.Nil(t, m.Bytes())
}
