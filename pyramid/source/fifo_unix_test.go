//go:build unix

package source

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/tiff"
)

// within returns open's error, or fails the test when open blocks (as the
// open of a FIFO does until a writer comes): the goroutine is left
// blocked, the test failed.
func within(t *testing.T, open func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- open() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the open blocks: the FIFO was opened")
		return nil
	}
}

// TestDatasetFIFO: a dataset's file or companion that is a FIFO is
// refused, not opened (the open would block until a writer came).
func TestDatasetFIFO(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	write := func(name, d string) string {
		writeGrays(t, dir, name, d, 1)
		return filepath.Join(dir, name)
	}
	part := write("part.ome.tif", omeDocument(`UUID="`+uuidA+`"`, pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"/>`),
		pixels(1, 1, 1, "XYZCT", `<TiffData IFD="0"><UUID FileName="fifo">`+uuidB+`</UUID></TiffData>`)))
	err := within(t, func() error { _, err := Open(part, Options{}); return err })
	assert.ErrorIs(t, err, tiff.ErrNotTIFF)
	assert.ErrorContains(t, err, `the dataset's file "fifo": tiff: not a TIFF file: `)
	assert.ErrorContains(t, err, "is not a regular file")

	binaryOnly := write("binary.ome.tif", `<?xml version="1.0"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="`+uuidA+`">`+
		`<BinaryOnly MetadataFile="fifo" UUID="`+uuidB+`"/></OME>`)
	err = within(t, func() error { _, err := Open(binaryOnly, Options{}); return err })
	assert.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, `the metadata file "fifo" is not a regular file`)

	err = within(t, func() error { _, err := tiff.Open(filepath.Join(dir, "fifo")); return err })
	assert.ErrorIs(t, err, tiff.ErrNotTIFF)
	_, err = tiff.Open(dir)
	assert.ErrorIs(t, err, tiff.ErrNotTIFF, "a directory")

	// Opened, a FIFO or a directory is said to be neither a TIFF nor a
	// companion, not a companion that is no regular file.
	for _, name := range []string{filepath.Join(dir, "fifo"), dir} {
		err = within(t, func() error { _, err := Open(name, Options{}); return err })
		assert.ErrorIs(t, err, tiff.ErrNotTIFF, name)
		assert.ErrorContains(t, err, name+" is not a regular file")
		assert.NotContains(t, err.Error(), "companion", name)
	}
}
