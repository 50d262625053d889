package pyramid

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/readback"
)

// stackPlan is a stack like the stack workload's, small: images series of
// z focal planes x c channels of size x size uint16, named and described
// as examples/stack does, split by split.
func stackPlan(series, z, c, size int, split Split) DatasetSpec {
	spec := DatasetSpec{Name: "stack", Split: split}
	for s := range series {
		channels := make([]Channel, c)
		for k := range channels {
			channels[k].Name = fmt.Sprintf("Channel %d", k+1)
		}
		spec.Images = append(spec.Images, ImageSpec{Name: fmt.Sprintf("series %d", s+1), SizeX: size, SizeY: size, SizeZ: z, SizeC: c,
			PixelType: Uint16, PhysicalSizeX: 0.325, PhysicalSizeY: 0.325, PhysicalSizeZ: 1, Channels: channels})
	}
	return spec
}

// fillPlane fills pix, a plane of 16-bit samples, with pixels that depend
// on the plane and vary smoothly, so that they compress and every plane
// differs.
func fillPlane(ref PlaneRef, pix []byte) error {
	for i := 0; i+1 < len(pix); i += 2 {
		v := ref.Image*7919 + ref.Z*131 + ref.C*1009 + ref.T*17 + i/2*3 + (i/64)%7
		binary.LittleEndian.PutUint16(pix[i:], uint16(v))
	}
	return nil
}

// mustDataset makes a dataset of spec or fails the test.
func mustDataset(t testing.TB, spec DatasetSpec) *Dataset {
	t.Helper()
	d, err := NewDataset(spec)
	require.NoError(t, err)
	return d
}

// writeParts writes the given parts of d in dir, one after the other,
// with fillPlane.
func writeParts(t testing.TB, d *Dataset, dir string, opts PartOptions, parts ...int) {
	t.Helper()
	for _, i := range parts {
		require.NoError(t, d.WritePart(context.Background(), dir, i, opts, fillPlane), "part %d", i)
	}
}

// allParts lists the indices of d's files.
func allParts(d *Dataset) []int {
	parts := make([]int, d.Files())
	for i := range parts {
		parts[i] = i
	}
	return parts
}

// readFiles reads every file of dir by name.
func readFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files, err := readback.Dir(dir)
	require.NoError(t, err)
	return files
}
