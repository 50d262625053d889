package pyramid

import (
	"bytes"
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/goldenfile"
	"github.com/ometiff-go/ometiff/internal/omexmltest"
)

const goldenDir = "../testdata/pyramid"

// smooth fills a plane with a smooth, compressible pattern, so golden files
// stay small.
func smooth(w, h, spp int, t PixelType, seed int) refPlane {
	c := codecOf(t)
	p := refPlane{w: w, h: h, spp: spp, pix: make([]byte, w*h*spp*c.size)}
	for y := range h {
		for x := range w {
			for s := range spp {
				v := 100 + 80*math.Sin(float64(x+seed)/9)*math.Cos(float64(y-seed)/13) + float64(20*s) + float64((x*y+seed)%7)
				if t == Int8 || t == Int16 || t == Int32 {
					v -= 120
				}
				if t == Uint16 || t == Uint32 {
					v *= 100
				}
				c.write(p.pix[((y*w+x)*spp+s)*c.size:], math.Round(v))
			}
		}
	}
	return p
}

// goldenImage is one image of a golden file and the planes written to it.
type goldenImage struct {
	spec   ImageSpec
	planes []refPlane // in DimensionOrder
}

type goldenPyramid struct {
	name   string
	opts   Options
	images []goldenImage
	// xmlDump adds the OME-XML to the text dump, a line per element.
	xmlDump bool
}

func goldenPyramids() []goldenPyramid {
	acquired := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	zct := ImageSpec{Name: "stack", SizeX: 64, SizeY: 48, SizeZ: 3, SizeC: 2, SizeT: 2, PixelType: Uint8,
		PhysicalSizeX: 0.5, PhysicalSizeY: 0.5, PhysicalSizeZ: 2,
		Channels:        []Channel{{Name: "DAPI", Color: color.NRGBA{0, 0, 255, 255}}, {Name: "GFP", Color: color.NRGBA{0, 255, 0, 255}}},
		AcquisitionDate: acquired, Annotations: []KeyValue{{"objective", "20x"}, {"note", "a <b> & 'c'"}}}
	ctz := ImageSpec{Name: "second", SizeX: 40, SizeY: 40, SizeZ: 2, SizeC: 1, SizeT: 1, PixelType: Int16, DimensionOrder: XYCTZ}
	return []goldenPyramid{
		{name: "one-series-levels", opts: Options{TileSize: 64}, images: []goldenImage{
			planesFor(ImageSpec{Name: "slide", SizeX: 300, SizeY: 200, PixelType: Uint16, PhysicalSizeX: 0.25, PhysicalSizeY: 0.25,
				Channels: []Channel{{Name: "Hoechst"}}}),
		}},
		{name: "series-zct", opts: Options{TileSize: 32, Compression: Deflate}, images: []goldenImage{planesFor(zct), planesFor(ctz)}},
		{name: "rgb", opts: Options{TileSize: 32, Compression: Zstd}, images: []goldenImage{
			planesFor(ImageSpec{Name: "brightfield", SizeX: 96, SizeY: 70, PixelType: Uint8, SamplesPerPixel: 3}),
		}},
		{name: "float-none", opts: Options{TileSize: 16, Compression: None, Levels: 2, Downsampling: Nearest}, images: []goldenImage{
			planesFor(ImageSpec{Name: "float", SizeX: 40, SizeY: 24, PixelType: Float32}),
		}},
		richGolden(),
	}
}

// richGolden is a file with a caller's rich OME-XML document (richDoc)
// and typed metadata on top: what the writer adds to a document and how
// it merges them is in the golden bytes and, readable, in its dump.
func richGolden() goldenPyramid {
	doc, err := ParseOME([]byte(omexmltest.RichDoc()))
	if err != nil {
		panic(err)
	}
	stack, overview := richSpecs[0], richSpecs[1]
	stack.Name = `rich & "stack"` // as the document says: the readers' tests compare names with the spec's
	stack.Annotations = []KeyValue{{"pipeline", "ometiff golden"}}
	stack.PlaneInfo = []Plane{{Z: 2, C: 1, T: 1, ExposureTime: Quantity{75, "ms"}}}
	overview.Name = "overview, typed"
	overview.Instrument = &Instrument{Objectives: []Objective{{NominalMagnification: 4, LensNA: 0.13, Immersion: ImmersionAir}}}
	overview.Channels = []Channel{{Name: "RGB", Color: color.NRGBA{255, 255, 255, 255}, IlluminationType: IlluminationTransmitted}}
	return goldenPyramid{name: "rich-metadata", opts: Options{TileSize: 16, Compression: Deflate, OME: doc}, xmlDump: true,
		images: []goldenImage{planesFor(stack), planesFor(overview)}}
}

// planesFor makes the planes of a golden image.
func planesFor(spec ImageSpec) goldenImage {
	n, _ := spec.normalized()
	g := goldenImage{spec: spec}
	for p := range n.Planes() {
		g.planes = append(g.planes, smooth(n.SizeX, n.SizeY, n.SamplesPerPixel, n.PixelType, p))
	}
	return g
}

// write produces the golden file.
func (g goldenPyramid) write(t testing.TB) []byte {
	return writeMemory(t, g.opts, g.add)
}

// writeFile writes the pyramid with Create, so its OME-XML names the file.
func (g goldenPyramid) writeFile(t testing.TB, path string) {
	w, err := Create(path, g.opts)
	require.NoError(t, err)
	require.NoError(t, g.add(w))
	require.NoError(t, w.Close())
}

// add adds the images and writes their planes.
func (g goldenPyramid) add(w *Writer) error {
	for _, gi := range g.images {
		im, err := w.AddImage(gi.spec)
		if err != nil {
			return err
		}
		for p, plane := range gi.planes {
			z, c, tt := im.Spec().PlaneCoords(p)
			if err := im.WritePlane(z, c, tt, plane.pix); err != nil {
				return err
			}
		}
	}
	return nil
}

// expected returns the reference pyramids of the golden's main chain.
func (g goldenPyramid) expected(t testing.TB) [][]refPlane {
	var want [][]refPlane
	for _, gi := range g.images {
		n, err := gi.spec.normalized()
		require.NoError(t, err)
		levels, err := pyramidLevels(n.SizeX, n.SizeY, max(g.opts.TileSize, 16), g.opts.Levels)
		require.NoError(t, err)
		for _, plane := range gi.planes {
			want = append(want, referencePyramid(plane, n.PixelType, g.opts.Downsampling, len(levels)))
		}
	}
	return want
}

func goldenPath(name string) string { return filepath.Join(goldenDir, name+".ome.tif") }

// inspectText is the golden dump: Inspect's summary and every field.
func inspectText(t testing.TB, data []byte) string {
	var b bytes.Buffer
	require.NoError(t, Inspect(&b, bytes.NewReader(data), int64(len(data)), InspectOptions{Fields: true}))
	return b.String()
}

// TestGoldenPyramids writes every golden pyramid, compares it with
// testdata/pyramid byte for byte and its dump line for line, and reads it
// back pixel-exact. -update rewrites the goldens.
func TestGoldenPyramids(t *testing.T) {
	for _, g := range goldenPyramids() {
		t.Run(g.name, func(t *testing.T) {
			data := g.write(t)
			text := inspectText(t, data)
			if g.xmlDump {
				text += "\nOME-XML, an element a line:\n" + strings.ReplaceAll(descriptionOf(t, data), "><", ">\n<") + "\n"
			}
			want := goldenfile.Check(t, goldenPath(g.name), data, text)
			checkPyramid(t, want, g.expected(t))
		})
	}
}

// TestGoldenJPEG writes the JPEG pyramids, compares them with
// testdata/pyramid byte for byte and their dumps line for line (-update
// rewrites them); TestJPEGFields checks their fields and pixels. The bytes
// are the Go encoder's: a build that encodes with libjpeg-turbo skips it.
func TestGoldenJPEG(t *testing.T) {
	if !goJPEG {
		t.Skip("libjpeg-turbo encodes in this build (ometiff_turbo): the golden bytes are the Go encoder's")
	}
	for _, g := range jpegPyramids() {
		t.Run(g.name, func(t *testing.T) {
			data := g.write(t)
			goldenfile.Check(t, goldenPath(g.name), data, inspectText(t, data))
		})
	}
}
