// Ometiff converts images into pyramidal OME-TIFF and describes TIFF
// files: one program with subcommands, as vips and gdal are used.
//
//	ometiff convert [flags] input output.ome.tif
//	ometiff info file...
//	ometiff inspect [-fields] file...
//	ometiff version
//	ometiff help [command]
//
// Install it with
//
//	go install github.com/ometiff-go/ometiff/examples/ometiff@latest
//
// Its name does not shadow ImageMagick's convert. Run a command with -h
// for its flags.
//
// # Convert
//
// Convert writes a pyramidal OME-TIFF from a TIFF, BigTIFF or OME-TIFF
// file, a whole-slide file of Aperio (SVS), Hamamatsu (NDPI), Roche/Ventana
// (BIF), Leica (SCN), Philips (TIFF) or Akoya/PerkinElmer (QPTIFF) (.tif,
// .tiff, .svs, .ndpi, .bif, .scn, .qptiff, .ome.tif, .ome.tiff, .btf,
// .tf8), a PNG, JPEG, GIF, BMP or WebP image, or a raw file of
// little-endian samples described by the -raw flags. A MetaMorph STK
// stack (.stk) is read whole: every plane its UIC2tag counts, along Z, C
// and T. A Zeiss LSM stack (.lsm) has its planes along Z and T and its
// channels along C as its CZ_LSMINFO says, its thumbnails left out. A
// MetaMorph MetaSeries TIFF (each page's description MetaData XML) has its
// pages along C, Z and T as their wavelengths and Z positions say, each
// stage position an image.
//
// A TIFF file keeps every image (series), every plane and every field of
// its metadata that maps to the writer's, as package pyramid/source maps
// them following Bio-Formats: an OME-TIFF its images, planes, dimension
// order and its whole OME-XML (instruments and channel settings, planes'
// times, exposures and positions, ROIs, structured annotations, links to
// experimenters and projects...), but for what the writer writes itself
// (the layout of the planes, the file's UUID and creator); an SVS its
// slide (MPP as the pixel size, AppMag as the objective's nominal
// magnification, the fields of its description as a map annotation, its
// focal planes along Z) and its label and macro images; an NDPI its focal planes
// along Z, read a restart interval at a time, with its macro and map; a
// BIF its level=0 page and its label and thumbnail; an SCN each image its
// XML describes; a QPTIFF its channels along C (named, coloured, their
// exposures), its thumbnail, overview (macro) and label; a Philips TIFF its
// pixel size, objective, barcode, label and macro; a plain TIFF its pages of one shape as
// planes along T, and pages of other shapes as further images. 1-, 2- and
// 4-bit pages (bilevel images, GDAL's masks) are
// read as uint8, their values as stored (tifffile reads them so); a
// palette page's colours are written (RGB, or gray when they all are),
// as libvips reads it, not its indices, which tifffile and Bio-Formats
// give (ImageJ's lookup tables but stay indices). What the input holds
// and the output cannot carry (JPEG 2000, a plane no TiffData maps, OME-XML of another schema
// version than 2016-06, the frames past the first of an animated image)
// is refused with an error naming it; with -skip-unsupported the rest is
// converted (an OME-TIFF's images with the metadata their typed fields
// hold: names, descriptions, dates, physical sizes, channels, map
// annotations) and what was left out is reported on stderr. ometiff info
// shows the mapping without converting; -images converts the images it
// numbers alone (Viv's loader, for one, reads a file of one image).
//
// # Tiles copied through
//
// When an image of a TIFF file is tiled in a codec the writer writes (JPEG,
// LZW, Deflate, Zstd or none), in square tiles of a multiple of 16 from 32
// to 1024 a side (or shrunk to an image smaller than one, as the writer
// cuts them; -tile copies other sides), and -compression is not given, its
// tiles are copied into the output byte for byte, with their JPEGTables and
// YCbCr fields: no generation is lost, and no time goes to encoding them.
// The image keeps the source's codec and predictor for the levels it
// computes (and for JPEG the quality its tables were made at), and the
// output the first such image's tile size; images whose tiles are not
// copied take LZW, losslessly, as an SVS's label and macro do, but those of
// a -tile or -predictor other than the source's, or tiles not square or of
// another side, are encoded again in the source's codec (a JPEG slide stays
// JPEG, at its quality). The converter says what it copies on stderr. The
// full resolution is still decoded, to compute the reduced levels; with
// -copy-levels the source's own levels are copied as well, with no decoding
// at all, when they form an OME pyramid (one integer factor between levels:
// 2 for a libvips pyramid, 4 for an Aperio slide): with -levels N, the
// first N of them (the full resolution included), none computed past
// them. -compression encodes every image again, as it says.
//
// Images (PNG, JPEG, GIF, BMP, WebP) are decoded by the standard library
// and golang.org/x/image (non-interlaced PNGs by a streaming reader of
// their rows); a decoded image becomes one plane: gray images one uint8 or
// uint16 channel, colour images interleaved RGB, uint16 for 16-bit colour
// models and uint8 otherwise. The output holds no transparency: an image
// with a pixel that is not opaque (alpha, a transparent colour or palette
// entry) is refused, naming it, or with -skip-unsupported converted
// without it; alpha that is opaque throughout is dropped. A PNG's text
// (tEXt, zTXt, iTXt before its image data) is kept as the image's map
// annotations; an ICC profile (PNG or JPEG) and a JPEG's comment are
// said not to be kept. A raw file is read plane by plane, in the
// -raw-order of its planes.
//
// The metadata flags (-name, -channels, -physical-size and
// -physical-size-z) describe the first image and override what the input
// says; images without a name are named after the input.
//
// # Memory
//
// A TIFF file is streamed from its tiles or strips: each page is read in
// bands of the writer's tile height (the most whole blocks that fit in
// it), decoded in parallel while the writer encodes, and memory holds a
// few of the page's bands and the writer's bands of each plane the page
// holds, whatever the height of the image: about 3 x band x width x bytes
// per pixel of the page and 3 x tile x width x bytes per pixel of each
// plane. While it streams, the soft memory limit follows the live heap
// (unless GOMEMLIMIT or GOGC is set): the garbage collector runs as it
// does by default (when the heap has doubled) until the process holds
// 192 MiB, and beyond that keeps it within a sixteenth of what is live.
// So the process peaks at the smaller of twice those bands and the larger
// of 192 MiB and 17/16 of them, plus 48 MiB for the rest, however tall
// the image; make hugeconvert checks a 100,000 x 100,000 RGB slide in
// 128-row JPEG tiles under 256 MiB.
//
// A non-interlaced PNG and a raw file are streamed too: their rows reach
// the writer a band at a time. The writer's bands take about 3 x tile x
// width x bytes per pixel (3 for RGB uint8), and Go's garbage collector
// lets the process peak at about twice that, plus 48 MiB for the rest:
// under 180 MiB for a 30000-pixel-wide RGB PNG at the default 256-pixel
// tiles, however tall. Every other image (JPEG, GIF, BMP, WebP and
// interlaced PNG) is decoded whole by Go's decoders, which hold all of it.
//
// # Limits
//
// The input's header is read and checked before the output is created,
// and an input refused leaves no file. Convert refuses:
//   - an image whose header claims more than -max-pixels pixels (default
//     2^32, 65536 x 65536; 0 lifts it). A TIFF file is checked only when
//     -max-pixels is given: its size is bounded by its structure (every
//     block must lie in the file) and its memory by its bands, so a
//     100,000-pixel-wide slide converts; so is a raw file, whose size
//     its flags give;
//   - a TIFF whose blocks share their data or store none (sparse) and that
//     decodes to more than -max-decode-ratio times its size (default 1024;
//     0 lifts it, for a trusted file) and 256 MiB: a decompression bomb;
//   - a PNG shorter than the image it claims can be, as deflate expands at
//     most 1032 times: a decompression bomb or a truncated file; and a
//     BMP shorter than its rows (uncompressed) or a GIF shorter than its
//     LZW codes can be, which Go's decoders would allocate first;
//   - an image whose plan needs more than -max-memory (default 1 GiB; 0
//     lifts it): the decoded image and the writer's bands for an image
//     decoded whole, the bands read and written for one streamed. Go's
//     decoders' working buffers are counted (a progressive JPEG's
//     coefficients, say). An image refused because it must be decoded
//     whole can be rewritten as a non-interlaced PNG, which streams: vips
//     copy in.jpg in.png.
//
// -max-memory bounds what the converter plans to hold; GOMEMLIMIT set to it
// holds the process's heap to it as well, at the cost of more garbage
// collection.
//
// For example:
//
//	ometiff convert slide.svs slide.ome.tif
//	ometiff convert -physical-size 0.25 -compression zstd slide.png slide.ome.tif
//	ometiff convert -raw-width 2048 -raw-height 2048 -raw-type uint16 -raw-channels 3 \
//		-raw-z 40 -channels DAPI,FITC,TRITC stack.raw stack.ome.tif
//
// The output appears only when the conversion succeeds, and replaces an
// existing file only with -force. A progress bar of the tiles written, of
// every plane of every image, is drawn on stderr when it is a terminal.
// With -direct (Linux), tiles the converter compresses are written around
// the page cache (O_DIRECT): the kernel copies nothing and finds no pages
// for them, but each write waits for the device, so it suits local disks,
// not network file systems.
//
// # Info
//
// Info prints how each TIFF file named maps to images: its kind, each
// image's name, size, dimensions, order, pixel type, metadata and the
// pages holding its planes, and what convert cannot convert.
//
// # Inspect
//
// Inspect prints the structure of TIFF and OME-TIFF files: the header, a
// summary of the OME-XML (images, dimensions, pixel types, channels,
// annotations) and every directory of the main chain with its SubIFDs;
// with -fields, every field of every directory. The text depends only on
// the files' bytes. Given several files, it heads each one's description
// with its name.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
)

func main() {
	os.Exit(runChecked(os.Args[1:], os.Stdout, os.Stderr))
}

// runChecked is run with stdout's write errors checked: a command whose
// output was lost (stdout on a full disk) fails with exit status 1 and
// says so, whatever it returned. (A convert's file is written then; only
// what it said of it is lost.)
func runChecked(args []string, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	code := run(args, out, stderr)
	if out.err != nil && code == 0 {
		fmt.Fprintf(stderr, "ometiff: writing to stdout: %v\n", out.err)
		return 1
	}
	return code
}

// checkedWriter keeps the first error of writes to w, and writes nothing
// after it.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.err = err
	return n, err
}

// command is a subcommand: its name, what it does in one line, and its
// run function.
type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) int
}

// commands are the subcommands, in the order the usage lists them.
var commands = []command{
	{"convert", "convert an image, a TIFF, OME-TIFF or whole-slide file into a pyramidal OME-TIFF", runConvert},
	{"info", "say which images and planes convert would read from TIFF files", runInfo},
	{"inspect", "print the structure of TIFF files: header, OME-XML, directories", runInspect},
	{"version", "print the version, the Go release and the JPEG codec of this build", runVersion},
}

// run is the program: it runs the subcommand args[0] with the rest of
// args. It returns the subcommand's exit code, or 2 for a missing or
// unknown subcommand; "help" (or -h) prints the usage.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return cli.Exit("ometiff", stderr, cli.UsageError{Err: fmt.Errorf("no command given (run ometiff help for the commands)")})
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && name == "help" {
			return run([]string{args[1], "-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage())
		return 0
	}
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		return cli.Exit("ometiff", stderr, cli.UsageError{Err: fmt.Errorf("unknown command %q (run ometiff help for the commands)", name)})
	}
	return commands[i].run(args[1:], stdout, stderr)
}

// usage lists the subcommands.
func usage() string {
	s := "usage: ometiff command [flags] [arguments]\n\nThe commands are:\n"
	for _, c := range commands {
		s += fmt.Sprintf("  %-8s %s\n", c.name, c.summary)
	}
	return s + "\nRun ometiff command -h for a command's flags.\n"
}
