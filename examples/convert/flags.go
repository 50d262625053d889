package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
)

// config is what the command line asks for.
type config struct {
	input, output string
	name          string   // of the image; the input's base name by default
	channelNames  []string // of the first channels
	physicalSize  float64  // of a pixel in X and Y; 0 is unknown
	physicalSizeZ float64  // between focal planes; 0 is unknown
	unit          string   // of the physical sizes
	options       pyramid.Options
	force         bool // replace an existing output
	raw           rawFormat
	limits        limits
}

// rawFormat describes a raw input: planes of little-endian samples, one
// after another in the dimension order.
type rawFormat struct {
	set            bool // a -raw flag was given: the input is raw
	width, height  int
	channels, z, t int
	samples        int // per pixel: 1, or 3 for interleaved RGB
	pixelType      pyramid.PixelType
	order          pyramid.DimensionOrder
}

// parseArgs reads the command line. Errors are one line; the usage goes to
// stderr only when asked for with -h.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	fs := cli.NewFlagSet("convert", "usage: convert [flags] input output.ome.tif\n\n"+
		"Convert converts a PNG, JPEG, GIF, BMP, TIFF or WebP image, or a raw file\n"+
		"of little-endian samples described by the -raw flags, into a pyramidal\n"+
		"OME-TIFF.\n\n"+
		"Non-interlaced PNG and raw files are streamed, in memory that grows with\n"+
		"the width only: about 2 x 3 x tile x width x bytes per pixel + 48 MiB\n"+
		"(180 MiB for RGB 30000 pixels wide). Other images are decoded whole.\n"+
		"The header is checked before the output is created: an image of more\n"+
		"than -max-pixels pixels, a PNG too short for the image it claims, and an\n"+
		"image needing more than -max-memory (decoded whole, or the writer's bands)\n"+
		"are refused, leaving no file. An image refused for being decoded whole can\n"+
		"be rewritten as a non-interlaced PNG, which streams: vips copy in.jpg in.png\n\n")
	o := &cfg.options
	fs.IntVar(&o.TileSize, "tile", 256, "tile width and height, a multiple of 16")
	fs.TextVar(&o.Compression, "compression", pyramid.LZW, "tile `codec`: lzw, none, deflate or zstd")
	fs.IntVar(&o.Level, "level", 0, "deflate or zstd level; 0 is the codec's default")
	fs.TextVar(&o.Predictor, "predictor", pyramid.PredictorAuto,
		"`predictor`: auto, none, horizontal or floating-point; auto is one of the last two when compressed")
	fs.IntVar(&o.Levels, "levels", 0, "resolutions including the full one; 0 halves until one tile")
	fs.TextVar(&o.Downsampling, "downsampling", pyramid.Mean, "`method` computing each level: mean, nearest or mode")
	fs.IntVar(&o.Workers, "workers", 0, "encoding goroutines; 0 is one per CPU")
	fs.TextVar(&o.BigTIFF, "bigtiff", pyramid.BigTIFFAuto, "`when` to write BigTIFF: auto, always or never")
	fs.BoolVar(&cfg.force, "force", false, "replace the output if it exists")
	fs.StringVar(&cfg.name, "name", "", "image `name`; the input's base name by default")
	channels := fs.String("channels", "", "channel `names`, separated by commas")
	fs.Float64Var(&cfg.physicalSize, "physical-size", 0, "pixel width and height; 0 is unknown")
	fs.Float64Var(&cfg.physicalSizeZ, "physical-size-z", 0, "step between focal planes; 0 is unknown")
	fs.StringVar(&cfg.unit, "physical-unit", "µm", "OME length `unit` of the physical sizes (um for µm)")
	fs.Int64Var(&cfg.limits.maxPixels, "max-pixels", defaultMaxPixels,
		"refuse an image whose header claims more `pixels` (width x height); 0 is no limit")
	fs.TextVar(&cfg.limits.maxMemory, "max-memory", byteSize(defaultMaxMemory),
		"memory `size` planned for the image: decoded whole, or the writer's bands\n"+
			"while rows stream; a larger input is refused (e.g. 512MiB, 4GiB; 0 is no limit)")
	r := &cfg.raw
	fs.IntVar(&r.width, "raw-width", 0, "raw input: plane width in pixels")
	fs.IntVar(&r.height, "raw-height", 0, "raw input: plane height in pixels")
	fs.TextVar(&r.pixelType, "raw-type", pyramid.Uint8,
		"raw input: sample `type`: uint8, int8, uint16, int16, uint32, int32, float32 or float64")
	fs.IntVar(&r.samples, "raw-samples", 1, "raw input: samples per pixel, 1 or 3 (interleaved RGB)")
	fs.IntVar(&r.channels, "raw-channels", 1, "raw input: number of channels")
	fs.IntVar(&r.z, "raw-z", 1, "raw input: number of focal planes")
	fs.IntVar(&r.t, "raw-t", 1, "raw input: number of time points")
	fs.TextVar(&r.order, "raw-order", pyramid.XYZCT, "raw input: `order` of the planes, fastest first after XY: XYZCT,\n"+
		"XYZTC, XYCZT, XYCTZ, XYTZC or XYTCZ")
	if err := cli.Parse(fs, args, stderr); err != nil {
		return cfg, err
	}
	if fs.NArg() != 2 {
		return cfg, errors.New("want an input and an output file (usage: convert [flags] input output.ome.tif)")
	}
	cfg.input, cfg.output = fs.Arg(0), fs.Arg(1)
	if cfg.name == "" {
		base := filepath.Base(cfg.input)
		cfg.name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	cfg.channelNames = splitNames(*channels)
	if cfg.unit == "um" {
		cfg.unit = "µm"
	}
	fs.Visit(func(f *flag.Flag) { r.set = r.set || strings.HasPrefix(f.Name, "raw-") })
	if cfg.limits.maxPixels < 0 {
		return cfg, fmt.Errorf("-max-pixels %d: want 0 (no limit) or more", cfg.limits.maxPixels)
	}
	cfg.limits.tile = o.TileSize
	return cfg, r.check()
}

// splitNames splits a comma-separated list, trimming spaces.
func splitNames(list string) []string {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	names := strings.Split(list, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
	}
	return names
}

// check reports raw dimensions that cannot be right.
func (r rawFormat) check() error {
	if !r.set {
		return nil
	}
	if r.width < 1 || r.height < 1 {
		return errors.New("a raw input needs -raw-width and -raw-height of at least 1")
	}
	for _, n := range []struct {
		flag  string
		value int
	}{{"raw-channels", r.channels}, {"raw-z", r.z}, {"raw-t", r.t}} {
		if n.value < 1 {
			return fmt.Errorf("-%s %d: want at least 1", n.flag, n.value)
		}
	}
	if r.samples != 1 && r.samples != 3 {
		return fmt.Errorf("-raw-samples %d: want 1 or 3", r.samples)
	}
	return nil
}

// describe adds the command line's metadata to the input's spec.
func (cfg config) describe(spec pyramid.ImageSpec) (pyramid.ImageSpec, error) {
	if len(cfg.channelNames) > spec.SizeC {
		return spec, cli.UsageError{Err: fmt.Errorf("-channels: %d names for SizeC %d", len(cfg.channelNames), spec.SizeC)}
	}
	spec.Name = cfg.name
	for _, name := range cfg.channelNames {
		spec.Channels = append(spec.Channels, pyramid.Channel{Name: name})
	}
	spec.PhysicalSizeX, spec.PhysicalSizeY, spec.PhysicalSizeZ = cfg.physicalSize, cfg.physicalSize, cfg.physicalSizeZ
	spec.PhysicalSizeXUnit, spec.PhysicalSizeYUnit, spec.PhysicalSizeZUnit = cfg.unit, cfg.unit, cfg.unit
	return spec, nil
}
