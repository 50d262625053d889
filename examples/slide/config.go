package main

import (
	"fmt"
	"image/color"
	"io"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
)

// config is what the flags ask for.
type config struct {
	output   string
	size     int // width and height
	channels int
	kind     pixelKind
	options  pyramid.Options
	direct   bool // write around the page cache
}

// parseArgs reads the command line. Errors are one line; the usage goes to
// stderr only when asked for with -h.
func parseArgs(args []string, stdout io.Writer) (config, error) {
	cfg := config{}
	fs := cli.NewFlagSet("slide", "usage: slide [flags]\n\n"+
		"Slide writes a synthetic fluorescence slide as a pyramidal OME-TIFF\n"+
		"and reports the time, throughput, peak memory and write calls.\n\n")
	fs.StringVar(&cfg.output, "o", "pyramid.ome.tif", "output `path`, replaced if it exists")
	fs.IntVar(&cfg.size, "size", 8192, "width and height of the slide in pixels")
	fs.IntVar(&cfg.channels, "channels", 3, "number of channels")
	fs.TextVar(&cfg.kind, "type", pixelKinds[0], "sample `type`: "+kindNames())
	fs.TextVar(&cfg.options.Compression, "compression", pyramid.LZW, "tile `codec`: lzw, none, deflate, zstd or jpeg (jpeg: -type uint8 or rgb8)")
	fs.IntVar(&cfg.options.Level, "level", 0, "deflate or zstd level; 0 is the codec's default")
	fs.IntVar(&cfg.options.Quality, "quality", 0, "JPEG quality, 1 to 100; 0 is the default, 75")
	fs.TextVar(&cfg.options.JPEGColor, "jpeg-color", pyramid.JPEGYCbCr420, "`coding` of RGB JPEG tiles: ycbcr (4:2:0) or rgb")
	fs.IntVar(&cfg.options.TileSize, "tile", 256, "tile width and height, a multiple of 16")
	fs.IntVar(&cfg.options.Workers, "workers", 0, "encoding goroutines; 0 is one per CPU")
	fs.IntVar(&cfg.options.Levels, "levels", 0, "resolutions including the full one; 0 halves until one tile")
	fs.TextVar(&cfg.options.BigTIFF, "bigtiff", pyramid.BigTIFFAuto, "`when` to write BigTIFF: auto, always or never")
	fs.BoolVar(&cfg.direct, "direct", false, "write around the page cache (Linux; faster when compressing keeps the cores busy)")
	if err := cli.ParseFlagsOnly(fs, args, stdout); err != nil {
		return cfg, err
	}
	switch {
	case cfg.size < 1:
		return cfg, fmt.Errorf("-size %d: want at least 1", cfg.size)
	case cfg.channels < 1:
		return cfg, fmt.Errorf("-channels %d: want at least 1", cfg.channels)
	}
	if err := cli.CheckWorkers(cfg.options.Workers); err != nil {
		return cfg, err
	}
	return cfg, cli.CheckOutputName("slide", cfg.output)
}

// tileSize is the tile side the writer uses, and the height of the bands
// the slide is generated in.
func (cfg config) tileSize() int {
	if cfg.options.TileSize == 0 {
		return 256
	}
	return cfg.options.TileSize
}

// pixelSize is the physical size of a pixel in µm, a common 20x objective's.
const pixelSize = 0.325

// spec describes the slide's one image.
func (cfg config) spec() pyramid.ImageSpec {
	return pyramid.ImageSpec{
		Name:            "synthetic slide",
		SizeX:           cfg.size,
		SizeY:           cfg.size,
		SizeC:           cfg.channels,
		PixelType:       cfg.kind.pixelType,
		SamplesPerPixel: cfg.kind.samples,
		PhysicalSizeX:   pixelSize,
		PhysicalSizeY:   pixelSize,
		Channels:        channels(cfg.channels, cfg.kind.samples == 3),
		Description:     "Deterministic synthetic fluorescence slide from ometiff's internal/synth.",
		Annotations:     []pyramid.KeyValue{{Key: "Generator", Value: "ometiff examples/slide"}, {Key: "Seed", Value: fmt.Sprint(seed)}},
	}
}

// fluorophores name and colour the first channels of a fluorescence slide.
var fluorophores = []pyramid.Channel{
	{Name: "DAPI", Color: color.RGBA{0, 0, 255, 255}},
	{Name: "FITC", Color: color.RGBA{0, 255, 0, 255}},
	{Name: "TRITC", Color: color.RGBA{255, 0, 0, 255}},
	{Name: "Cy5", Color: color.RGBA{255, 0, 255, 255}},
	{Name: "Cy7", Color: color.RGBA{0, 255, 255, 255}},
}

// channels describes n channels: fluorophores, or brightfield renderings
// when the channels are RGB.
func channels(n int, rgb bool) []pyramid.Channel {
	out := make([]pyramid.Channel, n)
	for c := range out {
		switch {
		case rgb:
			out[c] = pyramid.Channel{Name: fmt.Sprintf("Brightfield %d", c+1)}
		case c < len(fluorophores):
			out[c] = fluorophores[c]
		default:
			out[c] = pyramid.Channel{Name: fmt.Sprintf("Channel %d", c+1)}
		}
	}
	return out
}
