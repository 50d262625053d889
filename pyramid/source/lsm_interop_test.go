package source

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/tiff"
)

// tifffileLSM prints what tifffile reads of an LSM file: whether it is
// one, then for each series its kind, axes and shape, and the SHA-256 of
// the first series' samples; then the physical sizes (µm), the channel
// names and the time stamps of CZ_LSMINFO.
const tifffileLSM = `
import sys, hashlib, tifffile
with tifffile.TiffFile(sys.argv[1]) as t:
    print(t.is_lsm)
    for s in t.series:
        print(s.kind, s.axes, 'x'.join(map(str, s.shape)))
    print(hashlib.sha256(t.series[0].asarray().tobytes()).hexdigest())
    m = t.lsm_metadata
    print(' '.join('%.6g' % (m[k] * 1e6) for k in ('VoxelSizeX', 'VoxelSizeY', 'VoxelSizeZ')))
    print('names:' + '|'.join(m.get('ChannelColors', {}).get('ColorNames', [])))
`

// bitsOnce writes BitsPerSample as one value: tifffile reads two values
// of an LSM page as the offset of the values (as old Zeiss writers stored
// them), which a file of two inline values does not hold.
func bitsOnce(_ int, b *ifd.Builder) {
	e, _ := b.Get(tiff.TagBitsPerSample)
	v, _ := e.Uints()
	b.Remove(tiff.TagBitsPerSample)
	b.AddShort(tiff.TagBitsPerSample, uint16(v[0]))
}

// TestInteropLSM: in the LSM files the tests build, tifffile finds the
// image the mapping makes as its first series, of the same axes (the
// mapping's dimension order reversed, axes of 1 squeezed), shape and
// samples in that order, the same physical sizes and channel names; its
// second series is the thumbnails, which the mapping leaves out.
func TestInteropLSM(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	dir := t.TempDir()
	tests := []struct {
		name  string
		stack lsmStack
	}{
		{"stack of three 16-bit channels", lsmStack{width: 64, height: 48, z: 2, c: 3, t: 2, scanType: 6, bits: 16,
			voxel: [3]float64{0.1e-6, 0.12e-6, 0.5e-6}, names: []string{"Ch1-T1", "Ch2-T2", "ChS1-T3"}, colors: []uint32{0xff00, 0xff, 0xff0000}}},
		{"one channel", lsmStack{width: 32, height: 16, z: 3, c: 1, t: 1, voxel: [3]float64{0.2e-6, 0.2e-6, 1e-6}}},
		{"time series x-y", lsmStack{width: 32, height: 16, z: 1, c: 3, t: 3, scanType: 3, voxel: [3]float64{0.2e-6, 0.2e-6, 1e-6}}},
		{"two channels", lsmStack{width: 32, height: 16, z: 2, c: 2, t: 1, page: bitsOnce, voxel: [3]float64{0.2e-6, 0.2e-6, 1e-6},
			names: []string{"DAPI", "GFP"}, colors: []uint32{0xff0000, 0xff00}}},
	}
	tests = append(tests, struct {
		name  string
		stack lsmStack
	}{"two channels, BitsPerSample at an offset", oldBits(t, lsmStack{width: 32, height: 16, z: 1, c: 2, t: 2, scanType: 3, bits: 16,
		voxel: [3]float64{0.2e-6, 0.2e-6, 1e-6}})})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, _ := tt.stack.build(t)
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".lsm")
			require.NoError(t, os.WriteFile(path, file, 0o644))
			f, err := Open(path, Options{})
			require.NoError(t, err)
			defer f.Close()
			require.Len(t, f.Images, 1)
			s := f.Images[0].Spec
			// tifffile warns that it corrects an old writer's BitsPerSample.
			r := interop.Run(interop.Python(), "-c", tifffileLSM, path)
			require.NoError(t, r.Err, r.Stderr)
			if strings.Contains(tt.name, "at an offset") {
				assert.Contains(t, r.Stderr, "correcting LSM bitspersample tag")
			} else {
				assert.Empty(t, r.Stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
			require.Len(t, lines, 6)
			require.Equal(t, "True", lines[0])

			// The axes: the dimension order reversed, C, Z and T of 1 squeezed.
			size := map[byte]int{'X': s.SizeX, 'Y': s.SizeY, 'Z': s.SizeZ, 'C': s.SizeC, 'T': s.SizeT}
			var axes string
			var shape []string
			order := string(s.DimensionOrder)
			for i := len(order) - 1; i >= 0; i-- {
				if a := order[i]; size[a] > 1 || a == 'X' || a == 'Y' {
					axes += string(a)
					shape = append(shape, fmt.Sprint(size[a]))
				}
			}
			assert.Equal(t, "lsm "+axes+" "+strings.Join(shape, "x"), lines[1], "the image")
			assert.True(t, strings.HasPrefix(lines[2], "lsm "), "tifffile's second series, the thumbnails: %s", lines[2])

			// The samples of the planes in the image's order.
			h := sha256.New()
			for _, pl := range f.Images[0].Planes {
				h.Write(planeSamples(t, pl))
			}
			assert.Equal(t, lines[3], hex.EncodeToString(h.Sum(nil)), "the samples")
			assert.Equal(t, fmt.Sprintf("%.6g %.6g %.6g", s.PhysicalSizeX, s.PhysicalSizeY, s.PhysicalSizeZ), lines[4], "the physical sizes")
			var names []string
			for _, c := range s.Channels {
				names = append(names, c.Name)
			}
			assert.Equal(t, "names:"+strings.Join(tt.stack.names, "|"), lines[5])
			assert.Equal(t, "names:"+strings.Join(names, "|"), lines[5], "the channel names")
		})
	}
}

// planeSamples returns the samples of a plane: its page's, or its one
// sample of them.
func planeSamples(t *testing.T, pl Plane) []byte {
	all := readPlane(t, pl.Page)
	if pl.Sample < 0 {
		return all
	}
	l, err := pl.Page.Layout()
	require.NoError(t, err)
	size := max(1, l.BitsPerSample/8)
	var out []byte
	for i := pl.Sample * size; i < len(all); i += l.SamplesPerPixel * size {
		out = append(out, all[i:i+size]...)
	}
	return out
}

// TestInteropLSMPositions: the positions of an LSM file (DimensionM,
// tiles of a mosaic), images of their own here as Bio-Formats' series,
// are tifffile's M axis, first: the images' samples one after the other
// are its first series'.
func TestInteropLSMPositions(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	file, _ := lsmStack{width: 16, height: 12, z: 2, c: 1, t: 1, positions: [2]int32{1, 3}}.build(t)
	path := filepath.Join(t.TempDir(), "mosaic.lsm")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	f, err := Open(path, Options{})
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Images, 3)
	lines := strings.Split(strings.TrimSpace(interop.RunPython(t, tifffileLSM, path)), "\n")
	require.Len(t, lines, 6)
	assert.Equal(t, "lsm MZYX 3x2x12x16", lines[1])
	h := sha256.New()
	for _, im := range f.Images {
		assert.Equal(t, [3]int{2, 1, 1}, [3]int{im.Spec.SizeZ, im.Spec.SizeC, im.Spec.SizeT})
		for _, pl := range im.Planes {
			h.Write(planeSamples(t, pl))
		}
	}
	assert.Equal(t, lines[3], hex.EncodeToString(h.Sum(nil)), "the samples")
}
