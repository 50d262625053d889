package pyramid

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/omexmltest"
)

// specOf derives from a caller's Image the spec of small pixels it
// describes, as a converter would from its source; false if the image is
// too large for a fuzz run.
func specOf(m *OMEImage) (ImageSpec, bool) {
	d, px := m.doc, m.pixels()
	size := func(attr string) int {
		v, _ := d.attr(px, attr)
		n, ok := xmlInt(v)
		if !ok {
			return 1
		}
		return n
	}
	s := ImageSpec{SizeX: size("SizeX"), SizeY: size("SizeY"), SizeZ: size("SizeZ"), SizeC: size("SizeC"), SizeT: size("SizeT")}
	if v, ok := d.attr(px, "DimensionOrder"); ok {
		s.DimensionOrder = DimensionOrder(v)
	}
	if v, ok := d.attr(px, "Type"); ok {
		for p := Uint8; p <= Float64; p++ {
			if p.String() == string(v) {
				s.PixelType = p
			}
		}
	}
	if channels := m.channels(); len(channels) > 0 {
		if v, ok := d.attr(channels[0], "SamplesPerPixel"); ok && string(v) == "3" {
			s.SamplesPerPixel, s.SizeC = 3, s.SizeC/3
		}
	}
	if s.SizeX > 64 || s.SizeY > 64 || s.SizeZ > 16 || s.SizeC > 16 || s.SizeT > 16 || s.SizeZ*s.SizeC*s.SizeT > 256 {
		return s, false
	}
	return s, true
}

// FuzzOMEXML parses any document and merges it into a file's OME-XML, the
// images given as the document describes them: a refusal must be an
// *OMEError (or, for the spec, a typed error), never a panic; and what the
// writer makes of an accepted document is again a document ParseOME
// accepts, which the writer turns into the same bytes (it is a fixed
// point), with the UUID where it says.
func FuzzOMEXML(f *testing.F) {
	for _, doc := range []string{tifffileDoc(), bioformatsDoc(), omexmltest.RichDoc(), omeRoot + omeImage0 + omeEnd,
		omeRoot + `<Experimenter ID="Experimenter:0"/>` + omeEnd,
		`<o:OME xmlns:o="http://www.openmicroscopy.org/Schemas/OME/2016-06"><o:Image ID="Image:0"><o:Pixels ID="Pixels:0" SizeX="2" SizeY="2"><o:Channel ID="Channel:0:0" SamplesPerPixel="3"/><o:Plane TheZ="0" TheC="0" TheT="0"/></o:Pixels></o:Image></o:OME>`} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseOME(data)
		if err != nil {
			var oe *OMEError
			if !errors.As(err, &oe) || !errors.Is(err, ErrMetadata) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		images, ok := imagesOf(t, d, func(i int) *OMEImage { return d.Image(i) })
		if !ok {
			return
		}
		out, uuidAt, err := omeXML(images, d, uuidPlaceholder, "f.ome.tif")
		if err != nil {
			requireTyped(t, err)
			return
		}
		checkTags(t, out)
		for _, at := range uuidAt {
			require.Equal(t, uuidPlaceholder, string(out[at:at+len(uuidPlaceholder)]))
		}
		again, err := ParseOME(out)
		require.NoError(t, err, "the writer's OME-XML:\n%s", out)
		images2, ok := imagesOf(t, again, func(i int) *OMEImage { return again.Image(i) })
		require.True(t, ok)
		out2, _, err := omeXML(images2, again, uuidPlaceholder, "f.ome.tif")
		require.NoError(t, err)
		if !bytes.Equal(out, out2) {
			t.Fatalf("not a fixed point:\n%s\n%s", out, out2)
		}
	})
}

// imagesOf makes the images of a document; false if one is too large or
// its spec is refused (with a typed error).
func imagesOf(t *testing.T, d *OMEDocument, image func(int) *OMEImage) ([]omeImage, bool) {
	var images []omeImage
	ifd := 0
	for i := range d.Images() {
		s, ok := specOf(d.Image(i))
		if !ok {
			return nil, false
		}
		s.OME = image(i)
		n, err := s.normalized()
		if err != nil {
			requireTyped(t, err)
			return nil, false
		}
		images = append(images, omeImage{spec: n, firstIFD: ifd})
		ifd += n.Planes()
	}
	return images, true
}
