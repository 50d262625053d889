package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/pyramid/source"
)

// config is what the command line asks for.
type config struct {
	input, output string
	name          string   // of the image; the input's base name by default
	channelNames  []string // of the first image's channels, one each; "" keeps the input's
	physicalSize  float64  // of a pixel in X and Y; 0 is unknown
	physicalSizeZ float64  // between focal planes; 0 is unknown
	unit          string   // of the physical sizes
	options       pyramid.Options
	force         bool // replace an existing output
	raw           rawFormat
	limits        limits
	set           map[string]bool // the flags given
	// skipUnsupported converts what can be and reports the rest on stderr.
	skipUnsupported bool
	// copyLevels copies a TIFF input's reduced levels through with its
	// tiles.
	copyLevels bool
	// direct writes the output around the page cache when the converter
	// compresses tiles itself (directIO); off by default.
	direct bool
	// images are the numbers of the input's images to convert, ascending
	// (-images); nil for all.
	images []int
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
// stdout, only when asked for with -h.
func parseArgs(args []string, stdout io.Writer) (config, error) {
	cfg := config{}
	fs := cli.NewFlagSet(convertName, "usage: ometiff convert [flags] input output.ome.tif\n\n"+
		"Convert converts a TIFF, BigTIFF or OME-TIFF file, a whole-slide file (Aperio\n"+
		"SVS, Hamamatsu NDPI, Roche/Ventana BIF, Leica SCN, Philips TIFF, Akoya QPTIFF),\n"+
		"a MetaMorph STK or Zeiss LSM stack, a MetaMorph MetaSeries TIFF, a PNG, JPEG,\n"+
		"GIF, BMP or WebP image, or a raw file of little-endian samples described by\n"+
		"the -raw flags, into a pyramidal OME-TIFF.\n\n"+
		"A TIFF file keeps every image (series), every plane and the metadata that\n"+
		"maps to OME (an OME-TIFF its whole OME-XML): ometiff info shows how. Its\n"+
		"tiles or strips are streamed, in memory that grows with the width (and a\n"+
		"few kilobytes a page and image).\n"+
		"What it holds and OME-TIFF cannot carry is refused, or with\n"+
		"-skip-unsupported left out and reported. Tiles the writer can carry (JPEG,\n"+
		"LZW, Deflate, Zstd, none) are copied as they are unless -compression is\n"+
		"given; tiles not copied for their size or predictor are encoded again in\n"+
		"their codec (JPEG at the source's quality, or -quality's), other images\n"+
		"take LZW.\n"+
		"Non-interlaced PNG and raw files are streamed too: about 2 x 3 x tile x\n"+
		"width x bytes per pixel + 48 MiB (180 MiB for RGB 30000 pixels wide).\n"+
		"Other images are decoded whole.\n"+
		"The header is checked before the output is created: an image of more than\n"+
		"-max-pixels pixels (TIFF and raw files only when it is given), a PNG, BMP or GIF\n"+
		"too short for the image it claims, and an image needing more than -max-memory (decoded\n"+
		"whole, or the bands read and written) are refused, leaving no file. An\n"+
		"image refused for being decoded whole can be rewritten as a non-interlaced\n"+
		"PNG, which streams: vips copy in.jpg in.png\n\n")
	o := &cfg.options
	fs.IntVar(&o.TileSize, "tile", 256, "tile width and height, a multiple of 16")
	fs.TextVar(&o.Compression, "compression", pyramid.LZW,
		"tile `codec`: lzw, none, deflate, zstd or jpeg (uint8 gray or RGB). A TIFF input whose\n"+
			"tiles the writer can carry has them copied through, in its codec, unless given")
	fs.IntVar(&o.Quality, "quality", 0, "JPEG quality, 1 to 100; 0 is the writer's default (75), or the\n"+
		"source's when its JPEG tiles are copied through")
	fs.TextVar(&o.JPEGColor, "jpeg-color", pyramid.JPEGYCbCr420, "`coding` of RGB JPEG tiles: ycbcr (4:2:0) or rgb")
	fs.BoolVar(&cfg.copyLevels, "copy-levels", false,
		"copy the reduced levels of a TIFF input through too, when its tiles are copied and\n"+
			"its levels form an OME pyramid (one integer factor), instead of computing them;\n"+
			"with -levels N, the first N (full resolution included), none computed past them")
	fs.IntVar(&o.Level, "level", 0, "deflate or zstd level; 0 is the codec's default")
	fs.TextVar(&o.Predictor, "predictor", pyramid.PredictorAuto,
		"`predictor`: auto, none, horizontal or floating-point; auto is one of the last two when compressed.\n"+
			"Of a TIFF input's integer and float images, those the one given is not for take the other")
	fs.IntVar(&o.Levels, "levels", 0, "resolutions including the full one; 0 halves until one tile")
	fs.TextVar(&o.Downsampling, "downsampling", pyramid.Mean, "`method` computing each level: mean, nearest or mode")
	fs.IntVar(&o.Workers, "workers", 0, "encoding goroutines, up to 256 (each holds its tiles); 0 is one per CPU")
	fs.TextVar(&o.BigTIFF, "bigtiff", pyramid.BigTIFFAuto, "`when` to write BigTIFF: auto, always or never; auto is always for\n"+
		"an output named .btf, .tf8 or .tf2, as Bio-Formats writes them")
	fs.BoolVar(&cfg.force, "force", false, "replace the output if it exists, when the conversion is done: a new file takes its name\n"+
		"(its mode from the umask; other hard links keep the old file, and a symbolic link named as\n"+
		"the output is replaced, its target kept)")
	fs.BoolVar(&cfg.direct, "direct", false,
		"write the tiles compressed here around the page cache (O_DIRECT, Linux): less CPU per\n"+
			"byte, but each write waits for the device; for local disks, not network file systems")
	fs.StringVar(&cfg.name, "name", "", "`name` of the (first) image; the input's, or its base name, by default")
	channels := fs.String("channels", "", "channel `names` of the (first) image, one per channel, separated by commas;\n"+
		"an empty one keeps the input's (DAPI,,Cy5)")
	fs.Float64Var(&cfg.physicalSize, "physical-size", 0, "pixel width and height of the (first) image; 0 is unknown (the input's by default)")
	fs.Float64Var(&cfg.physicalSizeZ, "physical-size-z", 0, "step between focal planes of the (first) image; 0 is unknown")
	fs.StringVar(&cfg.unit, "physical-unit", "µm", "OME length `unit` of the physical sizes given (um for µm)")
	images := fs.String("images", "", "`numbers` of the input's images (series) to convert, as ometiff info lists them,\n"+
		"separated by commas (0,2), written in the input's order; all by default. Pages it\n"+
		"cannot read that ometiff info leaves out, and metadata of images not named that\n"+
		"the output cannot carry, need no -skip-unsupported then")
	fs.BoolVar(&cfg.skipUnsupported, "skip-unsupported", false,
		"convert the images of a TIFF file that can be, and report on stderr those left out\n"+
			"(refused otherwise)")
	fs.Int64Var(&cfg.limits.maxPixels, "max-pixels", defaultMaxPixels,
		"refuse an image whose header claims more `pixels` (width x height); 0 is no limit.\n"+
			"TIFF and raw inputs are streamed: checked only when given")
	fs.TextVar(&cfg.limits.maxMemory, "max-memory", byteSize(defaultMaxMemory),
		"memory `size` planned for the image: decoded whole, or the writer's bands\n"+
			"while rows stream; a larger input is refused (e.g. 512MiB, 4GiB; 0 is no limit). A TIFF\n"+
			"band or block past 256MiB (a whole scan in one strip) is read only with a size above it,\n"+
			"or 0 (then up to a thousand times the file's size). It bounds the image's plan, not\n"+
			"the process, which holds the program and garbage besides: leave a container room above it")
	fs.IntVar(&cfg.limits.maxDecodeRatio, "max-decode-ratio", source.DefaultMaxDecodeRatio,
		"refuse a TIFF whose blocks share their data or store none (sparse) when it decodes\n"+
			"to more than `ratio` times its size (and 256MiB): a decompression bomb. 0 is no limit,\n"+
			"for a trusted file (a mostly empty GDAL SPARSE_OK raster)")
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
	if err := cli.Parse(fs, args, stdout); err != nil {
		return cfg, err
	}
	if fs.NArg() != 2 {
		got := "none"
		if fs.NArg() > 0 {
			got = fmt.Sprintf("%d: %q", fs.NArg(), fs.Args())
		}
		return cfg, fmt.Errorf("want an input and an output file, got %s (usage: ometiff convert [flags] input output.ome.tif)", got)
	}
	cfg.input, cfg.output = fs.Arg(0), fs.Arg(1)
	if err := cli.CheckOutputName("ometiff", cfg.output); err != nil {
		return cfg, err
	}
	cfg.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { cfg.set[f.Name] = true })
	if !cfg.set["name"] {
		cfg.name = baseName(cfg.input)
	}
	cfg.channelNames = splitNames(*channels)
	// Refused here, in the flags' words, so that the writer's refusal of
	// metadata is the input's (tiffSource.write).
	if err := checkXMLText("-name", cfg.name); err != nil {
		return cfg, err
	}
	if err := checkXMLText("-channels", *channels); err != nil {
		return cfg, err
	}
	if cfg.set["images"] {
		var err error
		if cfg.images, err = parseImages(*images); err != nil {
			return cfg, err
		}
	}
	if cfg.unit == "um" {
		cfg.unit = "µm"
	}
	for name := range cfg.set {
		r.set = r.set || strings.HasPrefix(name, "raw-")
	}
	if err := cli.CheckWorkers(o.Workers); err != nil {
		return cfg, err
	}
	// Ranges the writer checks too, said here in the flags' words (its
	// errors name its options: "Level 99", "PhysicalSizeX -1").
	switch {
	case o.Quality < 0 || o.Quality > 100:
		return cfg, fmt.Errorf("-quality %d: want 1 to 100, or 0 for the default (%d)", o.Quality, compress.DefaultJPEGQuality)
	case o.Levels < 0:
		return cfg, fmt.Errorf("-levels %d: want 0 (down to one tile) or more", o.Levels)
	case o.Compression == pyramid.Deflate && (o.Level < 0 || o.Level > 9):
		return cfg, fmt.Errorf("-level %d: deflate takes 1 to 9, or 0 for the default", o.Level)
	case o.Compression == pyramid.Zstd && (o.Level < 0 || o.Level > 22):
		return cfg, fmt.Errorf("-level %d: zstd takes 1 to 22, or 0 for the default", o.Level)
	case !(cfg.physicalSize >= 0) || math.IsInf(cfg.physicalSize, 0):
		return cfg, fmt.Errorf("-physical-size %v: want a size above 0, or 0 (unknown)", cfg.physicalSize)
	case !(cfg.physicalSizeZ >= 0) || math.IsInf(cfg.physicalSizeZ, 0):
		return cfg, fmt.Errorf("-physical-size-z %v: want a size above 0, or 0 (unknown)", cfg.physicalSizeZ)
	}
	// Checked here, before any image is looked at (the writer would refuse
	// it only after the copying was planned and said).
	if o.TileSize < 16 || o.TileSize > 32768 || o.TileSize%16 != 0 {
		return cfg, fmt.Errorf("-tile %d: want a multiple of 16 from 16 to 32768", o.TileSize)
	}
	// Bio-Formats' TIFF writer writes BigTIFF for these names, and readers
	// that go by the name expect it.
	if ext := strings.ToLower(filepath.Ext(cfg.output)); o.BigTIFF == pyramid.BigTIFFAuto && ext != ".tif" && ext != ".tiff" {
		o.BigTIFF = pyramid.BigTIFFAlways
	}
	cfg.limits.pixelsGiven = cfg.set["max-pixels"]
	if cfg.limits.maxPixels < 0 {
		return cfg, fmt.Errorf("-max-pixels %d: want 0 (no limit) or more", cfg.limits.maxPixels)
	}
	if cfg.limits.maxDecodeRatio < 0 {
		return cfg, fmt.Errorf("-max-decode-ratio %d: want 0 (no limit) or more", cfg.limits.maxDecodeRatio)
	}
	cfg.limits.tile = o.TileSize
	return cfg, r.check()
}

// parseImages reads -images: image numbers separated by commas, at least
// one, returned ascending and once each.
func parseImages(list string) ([]int, error) {
	var out []int
	for _, field := range splitNames(list) {
		n, err := strconv.Atoi(field)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-images %q: want image numbers from 0, separated by commas (0,2)", list)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-images %q: name at least one image (0 is the first)", list)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
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

// baseName is a file's name without its folder and extensions (".ome.tif"
// whole), as the images it names are named: made text the OME-XML can
// hold (pyramid.XMLText), since a file name need not be UTF-8 nor free of control
// characters, and the name is not the user's to fix, as -name's is.
func baseName(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".ome.tiff", ".ome.tif", ".ome.btf", ".ome.tf8"} {
		if len(base) > len(ext) && strings.EqualFold(base[len(base)-len(ext):], ext) {
			return pyramid.XMLText(base[:len(base)-len(ext)])
		}
	}
	return pyramid.XMLText(strings.TrimSuffix(base, filepath.Ext(base)))
}

// checkXMLText refuses the value of a flag (name, as "-name") that the
// OME-XML cannot hold, naming the flag: the writer's refusal would name
// its field ("(Name)"), which the user did not write.
func checkXMLText(flag, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q: invalid UTF-8, which the OME-XML cannot hold", flag, s)
	}
	clean := []rune(pyramid.XMLText(s))
	for i, r := range []rune(s) {
		if i >= len(clean) || clean[i] != r {
			return fmt.Errorf("%s %q: character %U, which XML 1.0 does not allow", flag, s, r)
		}
	}
	return nil
}

// describe adds the command line's metadata to the input's specs: the
// flags given describe the first image, overriding what the input says;
// images without a name are named after the input by their numbers in
// it, as ometiff info names them ("name", "name #1" and so on), numbers
// giving those of specs (nil: 0, 1...).
func (cfg config) describe(specs []pyramid.ImageSpec, numbers []int) ([]pyramid.ImageSpec, error) {
	first := &specs[0]
	// A name short is more often a mistake than a wish to name the first
	// channels only, which an empty name ("DAPI,,Cy5") still allows.
	if n, c := len(cfg.channelNames), max(first.SizeC, 1); n > 0 && n != c {
		what := plural(c, "channel")
		if first.SamplesPerPixel == 3 {
			what += " (RGB)"
		}
		return specs, cli.UsageError{Err: fmt.Errorf("-channels: %s for %s: give one name per channel; an empty name keeps the input's, as in \"DAPI,,Cy5\"",
			plural(n, "name"), what)}
	}
	if cfg.set["physical-unit"] && !cfg.set["physical-size"] && !cfg.set["physical-size-z"] {
		return specs, cli.UsageError{Err: errors.New("-physical-unit is the unit of -physical-size and -physical-size-z: give one of them too")}
	}
	if cfg.set["name"] {
		first.Name = cfg.name
	}
	// Images without a name are named after the input, as ometiff info
	// lists them: -name names the first image only.
	input := baseName(cfg.input)
	for i := range specs {
		if specs[i].Name == "" {
			n := i
			if numbers != nil {
				n = numbers[i]
			}
			specs[i].Name = input
			if n > 0 {
				specs[i].Name = fmt.Sprintf("%s #%d", input, n)
			}
		}
	}
	first.Channels = slices.Clone(first.Channels)
	for i, name := range cfg.channelNames {
		if i < len(first.Channels) {
			if name != "" {
				first.Channels[i].Name = name
			}
		} else {
			first.Channels = append(first.Channels, pyramid.Channel{Name: name})
		}
	}
	if cfg.set["physical-size"] {
		first.PhysicalSizeX, first.PhysicalSizeY = cfg.physicalSize, cfg.physicalSize
		first.PhysicalSizeXUnit, first.PhysicalSizeYUnit = cfg.unit, cfg.unit
	}
	if cfg.set["physical-size-z"] {
		first.PhysicalSizeZ, first.PhysicalSizeZUnit = cfg.physicalSizeZ, cfg.unit
	}
	return specs, nil
}
