package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ometiff-go/ometiff/examples/internal/rusage"
	"github.com/ometiff-go/ometiff/tiff"
)

// layout is the structure of a written file, read back from it.
type layout struct {
	size    int64
	bigTIFF bool
	planes  int   // directories of the main chain
	levels  int   // resolutions of the first plane
	tiles   int   // tiles of every level of every plane
	pixels  int64 // bytes of the pixels of every level of every plane
}

// readLayout reads the structure of the file at path.
func readLayout(path string) (layout, error) {
	f, err := os.Open(path)
	if err != nil {
		return layout{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return layout{}, err
	}
	t, err := tiff.Read(f, info.Size())
	if err != nil {
		return layout{}, fmt.Errorf("reading back %s: %w", path, err)
	}
	l := layout{size: info.Size(), bigTIFF: t.BigTIFF, planes: len(t.Pages)}
	if len(t.Pages) > 0 {
		l.levels = 1 + len(t.Pages[0].SubIFDs)
	}
	for _, d := range t.Pages {
		for _, dir := range append([]*tiff.Page{d}, d.SubIFDs...) {
			blocks, err := dir.Blocks()
			if err != nil {
				return layout{}, fmt.Errorf("reading back %s: %w", path, err)
			}
			l.tiles += len(blocks)
			l.pixels += pixelBytes(dir)
		}
	}
	return l, nil
}

// pixelBytes is the size of a directory's pixels, uncompressed and
// without tile padding.
func pixelBytes(d *tiff.Page) int64 {
	width, _ := d.Uint(tiff.TagImageWidth)
	height, _ := d.Uint(tiff.TagImageLength)
	bits, _ := d.Uint(tiff.TagBitsPerSample)
	samples, ok := d.Uint(tiff.TagSamplesPerPixel)
	if !ok {
		samples = 1
	}
	return int64(width * height * samples * bits / 8)
}

// printSummary reads the written file back and prints what it holds and
// what the run measured.
func printSummary(w io.Writer, cfg config, rep report) error {
	l, err := readLayout(cfg.output)
	if err != nil {
		return err
	}
	raw := int64(cfg.channels) * int64(cfg.size) * int64(cfg.size) * int64(cfg.kind.pixelBytes())
	flavour := "classic TIFF"
	if l.bigTIFF {
		flavour = "BigTIFF"
	}
	spec := cfg.spec()
	fmt.Fprintf(w, "wrote %s: 1 series of %d planes of %d x %d %s", cfg.output, l.planes, spec.SizeX, spec.SizeY, spec.PixelType)
	if spec.SamplesPerPixel == 3 {
		fmt.Fprint(w, " RGB")
	}
	fmt.Fprintf(w, ", %d levels, %d tiles of at most %d x %d, %v\n", l.levels, l.tiles, cfg.tileSize(), cfg.tileSize(), cfg.options.Compression)
	fmt.Fprintf(w, "input   %.1f MB raw, %.1f MB with the reduced levels\n", float64(raw)/1e6, float64(l.pixels)/1e6)
	fmt.Fprintf(w, "output  %.1f MB, %s, every level compressed %.2fx\n", float64(l.size)/1e6, flavour, float64(l.pixels)/float64(l.size))
	fmt.Fprintf(w, "time    %.2f s wall: generating %.2f s, in Write %.2f s, in Close %.2f s\n",
		rep.total.Seconds(), rep.generate.Seconds(), rep.write.Seconds(), rep.close.Seconds())
	fmt.Fprintf(w, "speed   %.1f MB/s (raw input over wall time)\n", float64(raw)/1e6/rep.total.Seconds())
	rusage.Print(w, rep.before, rep.after, rep.total)
	_, err = fmt.Fprintf(w, "writes  %d OS write calls (%d sequential, %d positioned), %d fsync\n",
		rep.stats.Writes(), rep.stats.Appends, rep.stats.Patches, rep.stats.Syncs)
	return err
}
