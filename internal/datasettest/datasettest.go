// Package datasettest writes the small multi-file OME-TIFF datasets that
// the tests of their readers start from.
package datasettest

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/pyramid"
)

// Width and Height are the size of the planes Write writes.
const Width, Height = 40, 24

// Fill gives the pixels of each plane Write writes (uint16,
// little-endian): a pattern of the plane's image and coordinates.
func Fill(ref pyramid.PlaneRef, pix []byte) error {
	for i := 0; i+1 < len(pix); i += 2 {
		binary.LittleEndian.PutUint16(pix[i:], uint16(ref.Image*1000+ref.Z*100+ref.C*10+ref.T+i*7))
	}
	return nil
}

// Write writes into dir, with package pyramid, a dataset of two images,
// "well 0" and "well 1", of 2 channels ("DAPI", "GFP") x 3 focal planes
// of Width x Height uint16 pixels of 0.5 µm, in Deflate tiles of 32 x 32,
// cut into 3 files, set_0.ome.tif to set_2.ome.tif, so that the images
// span files. Every file holds the OME-XML or, with companion,
// set.companion.ome does. The test's name goes into the UUIDs.
func Write(t testing.TB, dir string, companion bool) *pyramid.Dataset {
	t.Helper()
	spec := pyramid.DatasetSpec{Name: "set", Seed: t.Name(), Companion: companion, Split: pyramid.Split{Files: 3},
		Options: pyramid.Options{TileSize: 32, Compression: pyramid.Deflate}}
	for i := range 2 {
		spec.Images = append(spec.Images, pyramid.ImageSpec{Name: fmt.Sprintf("well %d", i), SizeX: Width, SizeY: Height, SizeZ: 3, SizeC: 2,
			PixelType: pyramid.Uint16, PhysicalSizeX: 0.5, PhysicalSizeY: 0.5,
			Channels: []pyramid.Channel{{Name: "DAPI"}, {Name: "GFP"}}})
	}
	d, err := pyramid.NewDataset(spec)
	require.NoError(t, err)
	for i := range d.Files() {
		require.NoError(t, d.WritePart(context.Background(), dir, i, pyramid.PartOptions{}, Fill))
	}
	return d
}
