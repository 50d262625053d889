package source

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// TestGDALMetadata: GDAL's band descriptions name the channels when each
// sample is one; its other items and the no-data value become the
// image's annotations; a document that is not GDAL's XML is refused, or
// left out with SkipUnsupported.
func TestGDALMetadata(t *testing.T) {
	const doc = `<GDALMetadata>
  <Item name="ACQUIRED">2024-05-01</Item>
  <Item name="STAIN">H&amp;amp;E &amp;lt;1&amp;gt;</Item>
  <Item name="RAW">a &amp; b</Item>
  <Item name="SCALE" sample="0" role="scale">2</Item>
  <Item name="DESCRIPTION" sample="0" role="description">DAPI</Item>
  <Item name="DESCRIPTION" sample="1" role="description"> GFP </Item>
  <Item name="DESCRIPTION" sample="5" role="description">past the bands</Item>
  <Item name="AREA" domain="IMAGERY">12</Item>
</GDALMetadata>`
	gdal := func(metadata, nodata string) func(*ifd.Builder) {
		return func(b *ifd.Builder) {
			if metadata != "" {
				b.AddASCII(tiff.TagGDALMetadata, metadata)
			}
			if nodata != "" {
				b.AddASCII(tiff.TagGDALNoData, nodata)
			}
		}
	}
	common := []pyramid.KeyValue{{Key: "ACQUIRED", Value: "2024-05-01"}, {Key: "STAIN", Value: "H&E <1>"}, {Key: "RAW", Value: "a & b"},
		{Key: "SCALE (band 1)", Value: "2"}}
	tests := []struct {
		name        string
		page        testPage
		channels    []pyramid.Channel
		annotations []pyramid.KeyValue
	}{
		{"a channel a sample", testPage{width: 8, height: 8, samples: 2, bits: 8, planar: true, more: gdal(doc, "0 ")}, []pyramid.Channel{{Name: "DAPI"}, {Name: "GFP"}},
			append(common, pyramid.KeyValue{Key: "DESCRIPTION (band 6)", Value: "past the bands"}, pyramid.KeyValue{Key: "IMAGERY:AREA", Value: "12"},
				pyramid.KeyValue{Key: "GDAL_NODATA", Value: "0"})},
		{"RGB: descriptions are annotations", testPage{width: 8, height: 8, samples: 3, bits: 8, more: gdal(doc, "")}, nil,
			append(common, pyramid.KeyValue{Key: "DESCRIPTION (band 1)", Value: "DAPI"}, pyramid.KeyValue{Key: "DESCRIPTION (band 2)", Value: "GFP"},
				pyramid.KeyValue{Key: "DESCRIPTION (band 6)", Value: "past the bands"}, pyramid.KeyValue{Key: "IMAGERY:AREA", Value: "12"})},
		{"no-data only", testPage{width: 8, height: 8, samples: 1, bits: 16, more: gdal("", "-9999")}, nil, []pyramid.KeyValue{{Key: "GDAL_NODATA", Value: "-9999"}}},
		{"none", testPage{width: 8, height: 8, samples: 1, bits: 8}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, err := mapPages(t, Options{}, tt.page)
			require.NoError(t, err)
			s := f.Images[0].Spec
			assert.Equal(t, tt.channels, s.Channels)
			assert.Equal(t, tt.annotations, s.Annotations)
		})
	}

	bad := testPage{width: 8, height: 8, samples: 1, bits: 8, more: gdal("<GDALMetadata><Item>", "1")}
	_, _, err := mapPages(t, Options{}, bad)
	assert.ErrorIs(t, err, ErrMetadata)
	assert.ErrorContains(t, err, "GDAL metadata (tag 42112)")
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, bad)
	require.NoError(t, err)
	require.Len(t, f.Skipped, 1)
	assert.ErrorContains(t, f.Skipped[0], "(left out)")
	assert.NotErrorIs(t, f.Skipped[0], ErrLeftOut, "the metadata is left out, not the image")
	assert.Equal(t, []pyramid.KeyValue{{Key: "GDAL_NODATA", Value: "1"}}, f.Images[0].Spec.Annotations, "the no-data value is kept")
}

// TestSkippedImage: an entry of File.Skipped about one image's metadata
// names that image (SkippedImage); one about the file names none.
func TestSkippedImage(t *testing.T) {
	bad := func(b *ifd.Builder) { b.AddASCII(tiff.TagGDALMetadata, "<GDALMetadata><Item") }
	f, _, err := mapPages(t, Options{SkipUnsupported: true}, gray(8, 8), gray(16, 8, bad))
	require.NoError(t, err)
	require.Len(t, f.Images, 2)
	require.Len(t, f.Skipped, 1)
	assert.ErrorIs(t, f.Skipped[0], ErrNotCarried)
	assert.Same(t, f.Images[1], SkippedImage(f.Skipped[0]))
	// The document of an OME-TIFF, cut short: the file's.
	doc := omeDocument(``, pixels(2, 1, 1, "XYZCT", `<TiffData/>`))
	f, _, err = mapPages(t, Options{SkipUnsupported: true}, grays(2, doc[:len(doc)-10])...)
	require.NoError(t, err)
	require.NotEmpty(t, f.Skipped)
	assert.Nil(t, SkippedImage(f.Skipped[0]))
	assert.Nil(t, SkippedImage(ErrNotCarried))
}

// TestPhilips: a Philips slide's full resolution has the pixel size of
// its description's first DICOM_PIXEL_SPACING (rows', columns', in mm);
// its pages described "Label" and "Macro" are named so, as OpenSlide
// reads them.
func TestPhilips(t *testing.T) {
	const head = `<?xml version="1.0" encoding="UTF-8" ?>` + "\n" + `<DataObject ObjectType="DPUfsImport"><Attribute Name="DICOM_MANUFACTURER" Group="0x0008" Element="0x0070" PMSVR="IString">PHILIPS</Attribute>`
	spacing := func(v string) string {
		return head + `<Attribute Name="DICOM_PIXEL_SPACING" Group="0x0028" Element="0x0030" PMSVR="IDoubleArray">` + v + `</Attribute>` +
			`<Attribute Name="DICOM_PIXEL_SPACING" Group="0x0028" Element="0x0030" PMSVR="IDoubleArray">&quot;0.0005&quot; &quot;0.0005&quot;</Attribute></DataObject>`
	}
	f, _, err := mapPages(t, Options{}, gray(64, 48, description(spacing(`&quot;0.00025&quot; &quot;0.0005&quot;`))),
		gray(20, 30, description("Label")), gray(60, 20, description("Macro")))
	require.NoError(t, err)
	require.Len(t, f.Images, 3)
	s := f.Images[0].Spec
	assert.Equal(t, [4]any{0.5, "µm", 0.25, "µm"}, [4]any{s.PhysicalSizeX, s.PhysicalSizeXUnit, s.PhysicalSizeY, s.PhysicalSizeYUnit})
	assert.Equal(t, []string{"", "label", "macro"}, []string{s.Name, f.Images[1].Spec.Name, f.Images[2].Spec.Name})
	assert.Zero(t, f.Images[1].Spec.PhysicalSizeX)
	for _, bad := range []string{`&quot;0.00025&quot;`, `&quot;x&quot; &quot;0.5&quot;`, `&quot;-1&quot; &quot;0.5&quot;`, ``} {
		f, _, err = mapPages(t, Options{}, gray(64, 48, description(spacing(bad))))
		require.NoError(t, err)
		assert.Zero(t, f.Images[0].Spec.PhysicalSizeX, bad)
	}
}
