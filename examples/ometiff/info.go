package main

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/examples/internal/pngstream"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/pyramid/source"
	"github.com/ometiff-go/ometiff/tiff"
)

// infoName prefixes the info command's error lines.
const infoName = "ometiff info"

// runInfo is the info command: for every file named in args it prints
// what convert reads from it. Of a TIFF file: the kind of file, each
// image with its dimensions, pixel type, metadata and the pages holding
// its planes, whether convert copies its tiles through, and what convert
// leaves out with -skip-unsupported (and refuses without); of an image
// file, its one plane. It returns the exit code: 0, 1 if a file could
// not be read, 2 for a usage error.
func runInfo(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(infoName, "usage: ometiff info file...\n\n"+
		"Info says how the pages of TIFF, BigTIFF, OME-TIFF, SVS, NDPI, BIF, SCN,\n"+
		"Philips, QPTIFF, STK, LSM and MetaSeries files map to the images (series) and\n"+
		"planes that ometiff convert writes, with the metadata it keeps, the tiles it\n"+
		"copies through, and what it cannot convert; of PNG, JPEG, GIF, BMP and WebP\n"+
		"files, the one plane convert writes.\n\n")
	if err := cli.Parse(fs, args, stdout); err != nil {
		return cli.Exit(infoName, stderr, cli.UsageError{Err: err})
	}
	return eachFile(infoName, "ometiff info file...", fs.Args(), stdout, stderr, func(path string) error {
		f, err := source.Open(path, source.Options{SkipUnsupported: true})
		if errors.Is(err, source.ErrBomb) {
			// Described all the same: the file may be trusted.
			if f, berr := source.Open(path, source.Options{SkipUnsupported: true, MaxDecodeRatio: -1}); berr == nil {
				defer f.Close()
				describeFile(stdout, f, path)
				fmt.Fprintf(stdout, "not converted (convert goes on only with -max-decode-ratio 0, for a trusted file): %v\n", err)
				return nil
			}
		}
		if err != nil {
			if desc, ok := imageFile(path); ok {
				fmt.Fprint(stdout, desc)
				return nil
			}
			// A companion (an XML file) is never a TIFF: source.Open's
			// error says what is wrong with it (a file of its dataset
			// missing), where tiff.Open's would only say it is no TIFF.
			if xmlFile(path) && !errors.Is(err, tiff.ErrNotTIFF) {
				return fmt.Errorf("%s: %w", path, err)
			}
			rc, terr := tiff.Open(path) // the file itself, not a file it names
			if terr == nil {
				rc.Close()
			} else if errors.Is(terr, tiff.ErrNotTIFF) {
				return fmt.Errorf("%s: not a TIFF, PNG, JPEG, GIF, BMP or WebP file (%w)", path, terr)
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		defer f.Close()
		describeFile(stdout, f, path)
		return nil
	})
}

// xmlFile reports whether the file at path starts as an XML document
// does (a companion of a multi-file OME-TIFF dataset), as convert tells
// one (isXML).
func xmlFile(path string) bool {
	f, err := tiff.OpenRegular(path) // a FIFO's open would block
	if err != nil {
		return false
	}
	defer f.Close()
	var head [64]byte
	n, _ := io.ReadFull(f, head[:])
	return isXML(head[:n])
}

// imageFile describes a PNG, JPEG, GIF, BMP or WebP file as convert
// writes it: one plane, of the size, layout and (from a PNG's pHYs) pixel
// size its header gives, if the file is one.
func imageFile(path string) (string, bool) {
	f, err := tiff.OpenRegular(path) // a FIFO's open would block
	if err != nil {
		return "", false
	}
	defer f.Close()
	// Not a TIFF, told by its magic: source.Open refused it, and no image
	// decoder reads one.
	br := bufio.NewReader(f)
	if magic, err := br.Peek(4); err == nil && isTIFF(magic) {
		return "", false
	}
	cfg, format, err := image.DecodeConfig(br)
	if err != nil {
		return "", false
	}
	var spec pyramid.ImageSpec
	var left []error
	var notes []string // what convert says, or may refuse, as it does
	how := "decoded whole"
	start := func() io.Reader { return bufio.NewReader(io.NewSectionReader(f, 0, math.MaxInt64)) }
	lim := limits{maxPixels: defaultMaxPixels}
	var refused error // what convert refuses at its defaults, from the header
	if err := lim.checkPixels(path, cfg.Width, cfg.Height); err != nil {
		refused = err
	}
	transparency := "the image has transparency: convert refuses it if a pixel is not opaque (-skip-unsupported writes its colours without it)"
	if d, err := pngstream.NewDecoder(start()); err == nil {
		h := d.Header()
		spec, left = pngSource{dec: d}.spec(), pngFrames(h)
		if !h.Interlaced {
			how = "streamed"
		}
		if st, err := f.Stat(); err == nil && h.MinSize() > st.Size() && refused == nil {
			refused = fmt.Errorf("a %d-byte file cannot hold this %d x %d PNG (the file is truncated or forged)", st.Size(), h.Width, h.Height)
		}
		if h.ColorType == pngstream.GrayAlpha || h.ColorType == pngstream.RGBA || h.Transparent ||
			slices.ContainsFunc(h.Palette, func(c color.NRGBA) bool { return c.A != 0xff }) {
			notes = append(notes, transparency)
		}
	} else {
		if m := cfg.ColorModel; m == color.NRGBAModel || m == color.RGBAModel || m == color.NRGBA64Model || m == color.RGBA64Model || m == color.NYCbCrAModel {
			notes = append(notes, transparency)
		} else if p, ok := m.(color.Palette); ok && slices.ContainsFunc(p, func(c color.Color) bool { _, _, _, a := c.RGBA(); return a != 0xffff }) {
			notes = append(notes, transparency)
		}
		var frame jpegFrame
		if format == "jpeg" {
			frame, _ = readJPEGFrame(start())
			if frame.orientation > 1 {
				notes = append(notes, fmt.Sprintf("EXIF Orientation %d is not applied: the pixels are written as stored, as tifffile and Bio-Formats read them", frame.orientation))
			}
		}
		left = headerLeftOut(start(), format, frame)
		if animatedWebP(start()) {
			return "WEBP, animated\nnot converted: an animated WebP: golang.org/x/image/webp reads still images only\n", true
		}
		spec.PixelType, spec.SamplesPerPixel = pyramid.Uint8, 3
		switch outputPixelBytes(cfg.ColorModel) {
		case 1:
			spec.SamplesPerPixel = 1
		case 2:
			spec.PixelType, spec.SamplesPerPixel = pyramid.Uint16, 1
		case 6:
			spec.PixelType = pyramid.Uint16
		}
	}
	rgb := ""
	if spec.SamplesPerPixel == 3 {
		rgb = "RGB "
	}
	text := fmt.Sprintf("%s, 1 image, 1 plane\nimage 0: %d x %d, %s%s, %s by convert\n", strings.ToUpper(format), cfg.Width, cfg.Height, rgb, spec.PixelType, how)
	if spec.PhysicalSizeX > 0 && spec.PhysicalSizeY > 0 {
		text += fmt.Sprintf("  pixel %s x %s\n", length(spec.PhysicalSizeX, spec.PhysicalSizeXUnit), length(spec.PhysicalSizeY, spec.PhysicalSizeYUnit))
	}
	for _, n := range notes {
		text += fmt.Sprintf("  note: %s\n", n)
	}
	for _, err := range left {
		text += fmt.Sprintf("not converted but with -skip-unsupported: %v\n", err)
	}
	if refused != nil {
		text += fmt.Sprintf("not converted: %v\n", refused)
	}
	return text, true
}

// describeFile prints what the mapped file at path holds: its images,
// named as convert names them (those without a name after the file), with
// the metadata convert writes as typed fields, the pages holding their
// planes (and which files hold them, for a multi-file dataset), the images
// whose tiles convert copies through by default, and whether its OME-XML
// goes to the output.
func describeFile(w io.Writer, f *source.File, path string) {
	base := baseName(path)
	planes := 0
	for _, im := range f.Images {
		planes += len(im.Planes)
	}
	files := ""
	switch {
	case f.TIFF == nil:
		files = ", in " + plural(len(f.Parts), "file") + " and the companion"
	case len(f.Parts) > 0:
		files = ", in " + plural(len(f.Parts)+1, "file")
	}
	fmt.Fprintf(w, "%s, %s, %s%s\n", f.Kind, plural(len(f.Images), "image"), plural(planes, "plane"), files)
	carried := func(im *source.Image) bool { return im.Spec.OME != nil }
	switch {
	case len(f.Images) > 0 && !slices.ContainsFunc(f.Images, func(im *source.Image) bool { return !carried(im) }):
		fmt.Fprintln(w, "OME-XML kept whole, but for what the writer writes itself")
	case slices.ContainsFunc(f.Images, carried):
		fmt.Fprintln(w, "OME-XML kept, but for the Image elements not carried (below) and what the writer writes itself")
	}
	if f.TIFF != nil && f.TIFF.LoopsTo != 0 {
		fmt.Fprintln(w, loopNote(f.TIFF))
	}
	index := map[*tiff.Page]pageAt{} // of the main chains' pages
	if f.TIFF != nil {
		own := "" // named when the images span files
		if len(f.Parts) > 0 {
			own = filepath.Base(path)
		}
		for i, p := range f.TIFF.Pages {
			index[p] = pageAt{own, i}
		}
	}
	for _, part := range f.Parts {
		for i, p := range part.TIFF.Pages {
			index[p] = pageAt{part.Name, i}
		}
	}
	for i, im := range f.Images {
		s := im.Spec
		layout := s.PixelType.String()
		if s.SamplesPerPixel == 3 {
			layout = "RGB " + layout
		}
		name := s.Name
		if name == "" { // as convert names it
			name = base
			if i > 0 {
				name = fmt.Sprintf("%s #%d", base, i)
			}
		}
		fmt.Fprintf(w, "image %d %s: %d x %d, Z %d x C %d x T %d, %s, %s, %s\n",
			i, clipped(name), s.SizeX, s.SizeY, s.SizeZ, s.SizeC, s.SizeT, s.DimensionOrder, layout, pagesOf(index, im))
		// As convert decides it (without -tile): tiles the writer would cut
		// alike, square or shrunk to the image, are copied.
		levels, err := im.Encoded(false)
		var c pyramid.TileCoding
		if err == nil {
			c = levels[0].TileCoding
		} else if c, err = jpegTiles(im, err); err == nil {
			levels = nil
		}
		switch {
		case err == nil && levels != nil && copiable(im.Spec, c):
			also := ""
			if all, err := im.Encoded(true); err == nil {
				also = fmt.Sprintf(", with its %s by -copy-levels", plural(len(all)-1, "reduced level"))
			}
			fmt.Fprintf(w, "  %s tiles of %d x %d, copied through by convert%s\n", codecName(c.Compression), c.TileWidth, c.TileHeight, also)
		case err == nil && levels != nil && c.Compression != pyramid.JPEG:
			fmt.Fprintf(w, "  %s tiles of %d x %d, encoded again by convert (it copies square tiles of %d to %d)\n",
				codecName(c.Compression), c.TileWidth, c.TileHeight, minCopiedTile, maxCopiedTile)
		case err == nil && c.Compression == pyramid.JPEG:
			// Not copied for their size alone: a JPEG slide stays JPEG.
			why := fmt.Sprintf("it copies square tiles of %d to %d", minCopiedTile, maxCopiedTile)
			if levels == nil { // what convert says (planCopy)
				why = "their sides are not multiples of 16"
			}
			fmt.Fprintf(w, "  JPEG tiles of %d x %d, encoded again in JPEG by convert (%s)\n", c.TileWidth, c.TileHeight, why)
		}
		for _, n := range im.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		switch x, y := s.PhysicalSizeX > 0, s.PhysicalSizeY > 0; {
		case x && y:
			fmt.Fprintf(w, "  pixel %s x %s\n", length(s.PhysicalSizeX, s.PhysicalSizeXUnit), length(s.PhysicalSizeY, s.PhysicalSizeYUnit))
		case x: // a size of 0 would read as a measured one
			fmt.Fprintf(w, "  pixel width %s (no height)\n", length(s.PhysicalSizeX, s.PhysicalSizeXUnit))
		case y:
			fmt.Fprintf(w, "  pixel height %s (no width)\n", length(s.PhysicalSizeY, s.PhysicalSizeYUnit))
		}
		if s.PhysicalSizeZ > 0 {
			fmt.Fprintf(w, "  Z step %s\n", length(s.PhysicalSizeZ, s.PhysicalSizeZUnit))
		}
		if q := s.TimeIncrement; q.Value > 0 {
			fmt.Fprintf(w, "  time step %s %s\n", strconv.FormatFloat(q.Value, 'g', -1, 64), q.Unit)
		}
		if !s.AcquisitionDate.IsZero() {
			layout := "2006-01-02T15:04:05Z07:00"
			if s.AcquisitionDate.Location() == pyramid.NoZone {
				layout = "2006-01-02T15:04:05 (no time zone)"
			}
			fmt.Fprintf(w, "  acquired %s\n", s.AcquisitionDate.Format(layout))
		} else if im.AcquisitionDate != "" { // carried in the Image element, as it is written
			fmt.Fprintf(w, "  acquired %q\n", im.AcquisitionDate)
		}
		if s.Description != "" {
			fmt.Fprintf(w, "  description %s\n", clipped(s.Description))
		}
		if s.Instrument != nil {
			for _, o := range s.Instrument.Objectives {
				if o.NominalMagnification > 0 {
					fmt.Fprintf(w, "  objective %gx\n", o.NominalMagnification)
				}
			}
		}
		for c, ch := range s.Channels {
			fmt.Fprintf(w, "  channel %d %s", c, clipped(ch.Name))
			if ch.Color != nil {
				n := color.NRGBAModel.Convert(ch.Color).(color.NRGBA)
				fmt.Fprintf(w, ", colour #%02X%02X%02X%02X", n.R, n.G, n.B, n.A)
			}
			fmt.Fprintln(w)
		}
		for i, kv := range s.Annotations {
			if i == shownAnnotations && len(s.Annotations) > i+1 {
				fmt.Fprintf(w, "  ... %d annotations more\n", len(s.Annotations)-i)
				break
			}
			fmt.Fprintf(w, "  %s = %s\n", clipped(kv.Key), clipped(kv.Value))
		}
	}
	for _, n := range f.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, err := range f.Skipped {
		switch {
		case errors.Is(err, source.ErrNotCarried): // the image is converted without it, if the user says so
			if i := slices.Index(f.Images, source.SkippedImage(err)); i >= 0 && len(f.Images) > 1 {
				fmt.Fprintf(w, "metadata of image %d not carried (convert goes on only with -skip-unsupported, or -images without %d): %v\n", i, i, err)
			} else {
				fmt.Fprintf(w, "metadata not carried (convert goes on only with -skip-unsupported): %v\n", err)
			}
		case errors.Is(err, source.ErrLeftOut): // no image above loses a plane: -images goes on
			fmt.Fprintf(w, "not converted (convert goes on only with -skip-unsupported, or -images naming images above): %v\n", err)
		default: // maybe a plane of an image above: convert refuses the file, -images or not
			fmt.Fprintf(w, "not converted (convert goes on only with -skip-unsupported, whatever -images says): %v\n", err)
		}
	}
}

// What info shows of an image's text: a name, description or annotation
// of a few MB, or hundreds of thousands of annotations, would bury the
// rest.
// convert carries them whole.
const (
	shownText        = 512 // bytes of a name, description, key or value
	shownAnnotations = 256
)

// clipped quotes s, cut to shownText bytes (at a character) and saying
// how long it is.
func clipped(s string) string {
	if len(s) <= shownText {
		return strconv.Quote(s)
	}
	cut := shownText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes in all)", s[:cut], len(s))
}

// pagesOf says which pages of the main chain (index gives their places)
// hold an image's planes, as ranges, and whether their samples are
// channels.
func pagesOf(index map[*tiff.Page]pageAt, im *source.Image) string {
	var files []string // in the order of the planes
	pages := map[string][]int{}
	split := false
	after := map[*tiff.Page]bool{} // pages with no directory of their own
	embedded := 0                  // planes of no page of the file's: decoded from its metadata
	for _, p := range im.Planes {
		at, ok := index[p.Page.Original()]
		if !ok {
			if f := p.Page.File(); f != nil && len(f.Pages) > 0 {
				if _, known := index[f.Pages[0]]; known {
					after[p.Page] = true // a page of the file's, as ImageJ stores stacks
					continue
				}
			}
			embedded++
			continue
		}
		if _, ok := pages[at.file]; !ok {
			files = append(files, at.file)
		}
		pages[at.file] = append(pages[at.file], at.i)
		split = split || p.Sample >= 0
	}
	// The first files and the last, in a dataset of thousands: a line.
	const shown = 8
	var each []string
	for i, file := range files {
		if len(files) > shown && i == shown/2 {
			each = append(each, fmt.Sprintf("... (%d more files)", len(files)-shown))
		}
		if len(files) <= shown || i < shown/2 || i >= len(files)-shown/2 {
			each = append(each, pageRanges(pages[file], file))
		}
	}
	out := strings.Join(each, "; ")
	if len(after) > 0 {
		out += fmt.Sprintf(" and %d images stored after its data", len(after))
	}
	if embedded > 0 {
		out = strings.TrimPrefix(out+", not a page: an image the file's metadata holds", ", ")
	}
	if split {
		out += ", each sample a plane"
	}
	return out
}

// pageAt is where a page is: its index in the main chain of the file
// named, or of the file opened when the name is "".
type pageAt struct {
	file string
	i    int
}

// pageRanges writes page indexes as ranges: "page 3", "pages 0-4, 7",
// followed by " of FILE" when a file is named.
func pageRanges(pages []int, file string) string {
	slices.Sort(pages)
	pages = slices.Compact(pages)
	var ranges []string
	for i := 0; i < len(pages); {
		j := i
		for j+1 < len(pages) && pages[j+1] == pages[j]+1 {
			j++
		}
		if j > i {
			ranges = append(ranges, fmt.Sprintf("%d-%d", pages[i], pages[j]))
		} else {
			ranges = append(ranges, fmt.Sprint(pages[i]))
		}
		i = j + 1
	}
	out := "page " + strings.Join(ranges, ", ")
	if len(pages) > 1 {
		out = "pages " + strings.Join(ranges, ", ")
	}
	if file != "" {
		out += " of " + file
	}
	return out
}

// length writes a physical length with its unit (µm when empty).
func length(v float64, unit string) string {
	if unit == "" {
		unit = "µm"
	}
	// As the OME-XML writes it: the schema's sizes are 32-bit floats.
	return strconv.FormatFloat(v, 'g', -1, 32) + " " + unit
}

// plural writes n nouns.
func plural(n int, noun string) string { return cli.Plural(int64(n), noun) }

// plural64 is plural for a count of int64.
func plural64(n int64, noun string) string { return cli.Plural(n, noun) }
