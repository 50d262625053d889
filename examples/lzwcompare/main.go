// Command lzwcompare measures the LZW tile compression of package compress
// against libtiff's, side by side in one run, on the slide workload's
// plane.
//
// It generates the slide workload's full-resolution plane (8192 x 8192
// uint16 from internal/synth), cuts it into 256 x 256 tiles and times:
//
//   - package compress: every tile through a Pipeline with LZW, with and
//     without the horizontal predictor, at 1 and 2 workers. The timing
//     covers copying each tile into a pipeline buffer and compressing it;
//     the encoded tiles are counted and discarded, not written.
//   - libtiff: `tiffcp -c lzw:2 -t -w 256 -l 256` (and `-c lzw`) from an
//     uncompressed tiled TIFF of the same plane to a file on the same
//     disk, so its time includes reading and writing; `tiffcp -c none`
//     measures that copying alone.
//
// The output size of a tiffcp row is its whole file (tiles, header and
// directory), of a package compress row the sum of the encoded tiles.
//
// Each timing is the median of -runs rounds (the mean of the middle two
// for an even count); every round runs every
// compressor once, so that background load spreads over all of them.
//
// It then checks that libtiff decodes our LZW tiles: it writes them as a
// tiled TIFF, has `tiffcp -c none` decompress it, and compares the pixels
// with the plane.
//
// -h prints the flags. A bad flag, -runs below 1, a -tile that is not a
// positive multiple of 16 or a -size that is not a positive multiple of
// -tile exits with 2 and a message naming the flag.
//
// SIGINT (Ctrl-C) and SIGTERM stop it after the measurement running, and
// it removes its temporary directory and exits with 130 or 143 (128 plus
// the signal's number).
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	xtiff "golang.org/x/image/tiff"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/synth"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/tiff"
)

func main() {
	cfg, err := parseArgs(os.Args[1:], os.Stdout)
	if err != nil {
		os.Exit(cli.Exit("lzwcompare", os.Stderr, cli.UsageError{Err: err}))
	}
	os.Exit(cli.Run("lzwcompare", os.Stderr, func(ctx context.Context) error {
		return run(ctx, cfg.size, cfg.tile, cfg.runs, cfg.dir)
	}))
}

// config is what the flags ask for.
type config struct {
	size, tile, runs int
	dir              string
}

// parseArgs reads the command line: -h prints the usage to stdout and
// returns flag.ErrHelp; a value out of range is an error naming its flag.
func parseArgs(args []string, stdout io.Writer) (config, error) {
	var cfg config
	fs := cli.NewFlagSet("lzwcompare", "usage: lzwcompare [flags]\n\n"+
		"Lzwcompare times package compress's LZW against libtiff's (tiffcp) on the\n"+
		"slide workload's plane.\n\n")
	fs.IntVar(&cfg.size, "size", 8192, "image width and height in pixels, a multiple of -tile")
	fs.IntVar(&cfg.tile, "tile", 256, "tile width and height in pixels, a multiple of 16")
	fs.IntVar(&cfg.runs, "runs", 3, "runs per measurement; the median is reported")
	fs.StringVar(&cfg.dir, "dir", "", "directory for the TIFF files (default: a new temporary one, removed at the end)")
	if err := cli.ParseFlagsOnly(fs, args, stdout); err != nil {
		return cfg, err
	}
	switch {
	case cfg.runs < 1:
		return cfg, fmt.Errorf("-runs %d: want at least 1", cfg.runs)
	case cfg.tile < 16 || cfg.tile%16 != 0:
		return cfg, fmt.Errorf("-tile %d: want a positive multiple of 16", cfg.tile)
	case cfg.size < 1:
		return cfg, fmt.Errorf("-size %d: want at least 1", cfg.size)
	case cfg.size%cfg.tile != 0:
		return cfg, fmt.Errorf("-size %d: want a multiple of -tile %d", cfg.size, cfg.tile)
	}
	return cfg, nil
}

// result is one measured row of the table.
type result struct {
	name    string
	workers int // cores busy compressing
	wall    time.Duration
	size    int64 // output bytes
}

// run measures and verifies. Cancelling ctx stops it between two
// measurements, and it removes its temporary directory.
func run(ctx context.Context, size, tileSize, runs int, dir string) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "lzwcompare")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	start := time.Now()
	plane := make([]uint16, size*size)
	synth.Pattern{Seed: 1}.Gray16(plane, 0, 0, size, size)
	tiles := cutTiles(plane, size, tileSize)
	raw := int64(2 * len(plane))
	fmt.Printf("slide plane: %d x %d uint16 (%.0f MiB), %d tiles of %d x %d, generated in %v\n\n",
		size, size, float64(raw)/(1<<20), len(tiles), tileSize, tileSize, time.Since(start).Round(time.Millisecond))

	in := filepath.Join(dir, "in.tif")
	if err := writeTiled(in, size, tileSize, tiff.CompressionNone, tiff.PredictorNone, tiles); err != nil {
		return err
	}
	results, err := measure(ctx, contenders(tiles, tileSize, in, filepath.Join(dir, "out.tif")), runs)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	printTable(results, raw)
	printPerCore(results, raw)
	return verifyWithLibtiff(dir, plane, size, tileSize, tiles)
}

// contender is one compressor of the table: run compresses the whole
// plane once and returns the output size.
type contender struct {
	name    string
	workers int // cores busy compressing
	run     func() (int64, error)
}

// contenders returns the rows of the table, in order: package compress with
// and without the predictor at 1 and 2 workers, then tiffcp.
func contenders(tiles [][]byte, tileSize int, in, out string) []contender {
	var cs []contender
	for _, predictor := range []uint16{tiff.PredictorHorizontal, tiff.PredictorNone} {
		enc := &compress.TileEncoder{Codec: lzwCodec(), Predictor: predictor, Format: compress.Format{BitsPerSample: 16}, Width: tileSize}
		suffix := "+p2"
		if predictor == tiff.PredictorNone {
			suffix = ""
		}
		for _, workers := range []int{1, 2} {
			cs = append(cs, contender{fmt.Sprintf("compress LZW%s, Workers=%d", suffix, workers), workers, func() (int64, error) {
				var total int64
				err := compressAll(enc, tiles, workers, func(_ int64, b []byte) error {
					total += int64(len(b))
					return nil
				})
				return total, err
			}})
		}
	}
	for _, c := range []struct{ name, arg string }{
		{"tiffcp -c lzw:2 (libtiff, 1 core)", "lzw:2"},
		{"tiffcp -c lzw (libtiff, 1 core)", "lzw"},
		{"tiffcp -c none (copy only)", "none"},
	} {
		cs = append(cs, contender{c.name, 1, func() (int64, error) { return tiffcp(in, out, c.arg, tileSize) }})
	}
	return cs
}

// measure runs every contender once per round, runs rounds, so that
// background load spreads over all of them, and keeps the median time.
func measure(ctx context.Context, cs []contender, runs int) ([]result, error) {
	times := make([][]time.Duration, len(cs))
	results := make([]result, len(cs))
	for range runs {
		for i, c := range cs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			start := time.Now()
			size, err := c.run()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			times[i] = append(times[i], time.Since(start))
			results[i] = result{name: c.name, workers: c.workers, size: size}
		}
	}
	for i := range results {
		results[i].wall = median(times[i])
	}
	return results, nil
}

// cutTiles returns the tiles of a square plane as little-endian bytes, left
// to right, top to bottom.
func cutTiles(plane []uint16, size, tile int) [][]byte {
	var tiles [][]byte
	for ty := 0; ty < size; ty += tile {
		for tx := 0; tx < size; tx += tile {
			t := make([]byte, 0, 2*tile*tile)
			for y := ty; y < ty+tile; y++ {
				for _, v := range plane[y*size+tx : y*size+tx+tile] {
					t = binary.LittleEndian.AppendUint16(t, v)
				}
			}
			tiles = append(tiles, t)
		}
	}
	return tiles
}

// compressAll submits every tile to a pipeline and returns its error.
func compressAll(enc compress.Encoder, tiles [][]byte, workers int, consume func(int64, []byte) error) error {
	p := compress.NewPipeline(context.Background(), compress.Options{Workers: workers}, consume)
	for _, t := range tiles {
		buf := p.Buffer(len(t))
		copy(buf, t)
		if err := p.Submit(enc, buf); err != nil {
			p.Close()
			return err
		}
	}
	return p.Close()
}

// tiffcp converts in to out with compression arg in tiles, and returns
// the size of out.
func tiffcp(in, out, arg string, tile int) (int64, error) {
	os.Remove(out)
	cmd := exec.Command("tiffcp", "-c", arg, "-t", "-w", fmt.Sprint(tile), "-l", fmt.Sprint(tile), in, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("tiffcp -c %s: %v: %s", arg, err, msg)
	}
	st, err := os.Stat(out)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// median returns the median of d: the middle value, or the mean of the
// two middle ones for an even count.
func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	n := len(s)
	if n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[n/2]
}

func printTable(results []result, raw int64) {
	base := results[len(results)-3].wall // tiffcp -c lzw:2
	fmt.Printf("%-38s %9s %12s %12s %10s %14s\n", "compressor", "wall", "MB/s/core", "output MiB", "ratio", "vs tiffcp lzw:2")
	for _, r := range results {
		fmt.Printf("%-38s %8.3fs %12.1f %12.1f %10.3f %13.2fx\n", r.name, r.wall.Seconds(),
			float64(raw)/1e6/r.wall.Seconds()/float64(r.workers), float64(r.size)/(1<<20),
			float64(raw)/float64(r.size), base.Seconds()/r.wall.Seconds())
	}
	fmt.Println()
}

// printPerCore compares LZW per core with and without the predictor,
// ours at one worker against libtiff with and without its copying time.
func printPerCore(results []result, raw int64) {
	mb := float64(raw) / 1e6
	copyOnly := results[len(results)-1].wall
	fmt.Printf("LZW per core (MB/s of raw tiles):   %12s %12s\n", "predictor 2", "none")
	fmt.Printf("  %-34s %12.1f %12.1f\n", "package compress, Workers=1", mb/results[0].wall.Seconds(), mb/results[2].wall.Seconds())
	fmt.Printf("  %-34s %12.1f %12.1f\n", "libtiff (tiffcp wall)", mb/results[4].wall.Seconds(), mb/results[5].wall.Seconds())
	fmt.Printf("  %-34s %12.1f %12.1f\n", "libtiff (tiffcp minus copy time)",
		mb/(results[4].wall-copyOnly).Seconds(), mb/(results[5].wall-copyOnly).Seconds())
	fmt.Println()
}

// writeTiled writes a tiled, little-endian uint16 TIFF of encoded tiles.
func writeTiled(path string, size, tile int, compression, predictor uint16, tiles [][]byte) error {
	h, err := iohandle.Create(path, iohandle.Options{Replace: true, NoSync: true})
	if err != nil {
		return err
	}
	defer h.Close() // after Commit, a no-op
	w, err := tiff.NewWriter(h, tiff.Options{BigTIFF: tiff.BigTIFFNever})
	if err != nil {
		return err
	}
	fields := new(ifd.Builder)
	fields.AddLong(tiff.TagImageWidth, uint32(size))
	fields.AddLong(tiff.TagImageLength, uint32(size))
	fields.AddShort(tiff.TagBitsPerSample, 16)
	fields.AddShort(tiff.TagCompression, compression)
	fields.AddShort(tiff.TagPhotometricInterpretation, tiff.PhotometricBlackIsZero)
	fields.AddShort(tiff.TagSamplesPerPixel, 1)
	fields.AddShort(tiff.TagPlanarConfiguration, tiff.PlanarContig)
	if predictor != tiff.PredictorNone {
		fields.AddShort(tiff.TagPredictor, predictor)
	}
	fields.AddLong(tiff.TagTileWidth, uint32(tile))
	fields.AddLong(tiff.TagTileLength, uint32(tile))
	fields.AddShort(tiff.TagSampleFormat, tiff.SampleFormatUint)
	d := &tiff.Directory{Fields: fields, OffsetsTag: tiff.TagTileOffsets, CountsTag: tiff.TagTileByteCounts}
	for _, t := range tiles {
		b, err := w.WriteBlock(t)
		if err != nil {
			return err
		}
		d.Blocks = append(d.Blocks, b)
	}
	if err := w.AddDirectory(d); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return h.Commit()
}

// verifyWithLibtiff writes our LZW + predictor tiles as a TIFF, has libtiff
// decompress it and compares the pixels with the plane.
func verifyWithLibtiff(dir string, plane []uint16, size, tile int, tiles [][]byte) error {
	enc := &compress.TileEncoder{Codec: lzwCodec(), Predictor: tiff.PredictorHorizontal, Format: compress.Format{BitsPerSample: 16}, Width: tile}
	encoded := make([][]byte, len(tiles))
	err := compressAll(enc, tiles, 2, func(seq int64, b []byte) error {
		encoded[seq] = slices.Clone(b)
		return nil
	})
	if err != nil {
		return err
	}
	ours := filepath.Join(dir, "ours.tif")
	plain := filepath.Join(dir, "ours-decoded.tif")
	if err := writeTiled(ours, size, tile, tiff.CompressionLZW, tiff.PredictorHorizontal, encoded); err != nil {
		return err
	}
	if msg, err := exec.Command("tiffcp", "-c", "none", ours, plain).CombinedOutput(); err != nil || len(msg) > 0 {
		return fmt.Errorf("libtiff could not decode our LZW tiles: %v: %s", err, msg)
	}
	f, err := os.Open(plain)
	if err != nil {
		return err
	}
	defer f.Close()
	img, err := xtiff.Decode(f)
	if err != nil {
		return fmt.Errorf("reading libtiff's output: %w", err)
	}
	g, ok := img.(*image.Gray16)
	if !ok || g.Rect.Dx() != size || g.Rect.Dy() != size {
		return fmt.Errorf("libtiff's output is a %T of %v", img, img.Bounds())
	}
	for y := range size {
		for x := range size {
			if got := g.Gray16At(x, y).Y; got != plane[y*size+x] {
				return fmt.Errorf("libtiff decodes pixel (%d, %d) as %d, want %d", x, y, got, plane[y*size+x])
			}
		}
	}
	fmt.Printf("libtiff check: tiffcp -c none decodes our %d LZW+p2 tiles to the same %d x %d pixels\n", len(tiles), size, size)
	return nil
}

// lzwCodec returns the library's LZW codec.
func lzwCodec() compress.Codec {
	c, err := compress.NewCodec(tiff.CompressionLZW, 0)
	if err != nil {
		panic(err) // LZW has no level to get wrong
	}
	return c
}
