package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/examples/internal/stackpool"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
)

// stack is the shape of a stack workload.
type stack struct {
	series, z, channels int
	size                int // width and height of a plane
}

// spec returns the plan of the stack, named and described as examples/stack
// names and describes its series.
func (s stack) spec(name string, opts pyramid.Options) pyramid.DatasetSpec {
	spec := pyramid.DatasetSpec{Name: name, Options: opts}
	for i := range s.series {
		channels := make([]pyramid.Channel, s.channels)
		for c := range channels {
			channels[c].Name = fmt.Sprintf("Channel %d", c+1)
		}
		spec.Images = append(spec.Images, pyramid.ImageSpec{Name: fmt.Sprintf("series %d", i+1), SizeX: s.size, SizeY: s.size,
			SizeZ: s.z, SizeC: s.channels, PixelType: pyramid.Uint16, PhysicalSizeX: 0.325, PhysicalSizeY: 0.325, PhysicalSizeZ: 1,
			Channels: channels})
	}
	return spec
}

// stackFlags adds the flags of the stack's shape and codec to fs.
func stackFlags(fs *flag.FlagSet, s *stack, opts *pyramid.Options) {
	fs.IntVar(&s.series, "series", 84, "number of series")
	fs.IntVar(&s.z, "z", 90, "focal planes per series")
	fs.IntVar(&s.channels, "channels", 2, "channels per series")
	fs.IntVar(&s.size, "size", 128, "width and height of each plane in pixels")
	fs.TextVar(&opts.Compression, "compression", pyramid.LZW, "tile `codec`: lzw, none, deflate or zstd")
	fs.IntVar(&opts.Level, "level", 0, "deflate or zstd level; 0 is the codec's default")
}

// check refuses a stack with a count below 1.
func (s stack) check() error {
	for _, n := range []struct {
		flag  string
		value int
	}{{"series", s.series}, {"z", s.z}, {"channels", s.channels}, {"size", s.size}} {
		if n.value < 1 {
			return fmt.Errorf("-%s %d: want at least 1", n.flag, n.value)
		}
	}
	// The specs are made before pyramid.NewDataset bounds their count: an
	// Image element takes 300 bytes at least, and the OME-XML of a set at
	// most pyramid.MaxOMEXMLSize.
	if most := pyramid.MaxOMEXMLSize / 300; s.series > most {
		return fmt.Errorf("-series %d: more images than an OME-XML of %d MiB (pyramid.MaxOMEXMLSize) describes, %d", s.series, pyramid.MaxOMEXMLSize>>20, most)
	}
	if most := 1 << 31; s.z > most/s.channels {
		return fmt.Errorf("-z %d x -channels %d: more than %d planes an image", s.z, s.channels, most)
	}
	return stackpool.CheckSize("size", s.size)
}

// runPlan is the plan command.
func runPlan(args []string, stdout, stderr io.Writer) int {
	var (
		s         stack
		opts      pyramid.Options
		out, name string
		spec      pyramid.DatasetSpec
	)
	fs := cli.NewFlagSet("dataset plan", "usage: dataset plan [flags]\n\n"+
		"Plan writes the plan of the stack workload as a multi-file dataset: its\n"+
		"series, the writer options, and which planes go in which file.\n\n")
	fs.StringVar(&out, "o", "plan.json", "the plan's `path`, replaced if it exists (its directory, where the files go, made)")
	fs.StringVar(&name, "name", "stack", "`name` of the files: NAME_0.ome.tif, NAME_1.ome.tif...")
	fs.IntVar(&spec.Split.Files, "files", 8, "number of `files`, of equal plane counts")
	fs.BoolVar(&spec.Split.ByImage, "by-image", false, "keep each series in one file (with -files 0, one file per series)")
	fs.BoolVar(&spec.Companion, "companion", false, "write the metadata once, in NAME.companion.ome, not in every file")
	fs.StringVar(&spec.Seed, "seed", "", "`text` hashed into the UUIDs, to tell this dataset from others of the same plan;\n"+
		"without it, a random one is drawn and kept in the plan (give one to plan the same UUIDs again)")
	stackFlags(fs, &s, &opts)
	if err := cli.ParseFlagsOnly(fs, args, stdout); err != nil {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: err})
	}
	if err := s.check(); err != nil {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: err})
	}
	plan := s.spec(name, opts)
	plan.Split, plan.Companion, plan.Seed = spec.Split, spec.Companion, spec.Seed
	if plan.Seed == "" {
		// Two plans of the same flags would otherwise name their files
		// with the same UUIDs, which readers take for one dataset's.
		plan.Seed = rand.Text()
	}
	return cli.Run("dataset", stderr, func(context.Context) error {
		d, err := pyramid.NewDataset(plan)
		if err != nil {
			return cli.UsageError{Err: err}
		}
		if err := savePlan(out, d); err != nil {
			return err
		}
		last := d.File(d.Files() - 1).Name
		_, err = fmt.Fprintf(stdout, "wrote %s: %d files (%s to %s), %d series of %d planes\n", out, d.Files(), d.File(0).Name, last, s.series, s.z*s.channels)
		return err
	})
}

// savePlan writes d's plan as indented JSON to path, atomically, replacing
// a file there, and makes its directory, where the dataset's files go.
func savePlan(path string, d *pyramid.Dataset) error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	h, err := iohandle.Create(path, iohandle.Options{Replace: true})
	if err != nil {
		return err
	}
	defer h.Close() // discards the file unless committed
	if _, err := h.Write(append(data, '\n')); err != nil {
		return err
	}
	return h.Commit()
}
