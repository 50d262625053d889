package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/examples/internal/stackpool"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
)

// indexEnvs are the environment variables that give a task its index when
// the command line does not: Slurm's array task ID, then a Kubernetes
// indexed Job's completion index.
var indexEnvs = []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"}

// afterPlane, if set, is called after each plane a part writes, with the
// number written; the tests stop a part there.
var afterPlane func(n int)

// runWrite is the write command.
func runWrite(args []string, stdout, stderr io.Writer) int {
	var (
		dir     string
		workers int
		file    iohandle.Options
	)
	fs := cli.NewFlagSet("dataset write", "usage: dataset write [flags] PLAN [INDEX]\n\n"+
		"Write writes file INDEX of the plan: the planes the plan puts in it, with\n"+
		"the OME-XML of the whole dataset. INDEX defaults to $SLURM_ARRAY_TASK_ID,\n"+
		"then $JOB_COMPLETION_INDEX.\n\n")
	fs.StringVar(&dir, "dir", "", "`directory` of the file (default the plan's)")
	fs.IntVar(&workers, "workers", 1, "encoding goroutines; 0 is one per CPU")
	fs.BoolVar(&file.Replace, "replace", false, "replace a file a previous run left")
	fs.BoolVar(&file.NoSync, "nosync", false, "skip the fsync at the end")
	if err := cli.Parse(fs, args, stdout); err != nil {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: err})
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: errors.New("write takes a plan and an index")})
	}
	if err := cli.CheckWorkers(workers); err != nil {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: err})
	}
	planPath := fs.Arg(0)
	index, source, err := taskIndex(fs.Arg(1))
	if err != nil {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: err})
	}
	if dir == "" {
		dir = filepath.Dir(planPath)
	}
	return cli.Run("dataset", stderr, func(ctx context.Context) error {
		d, err := loadPlan(planPath)
		if err != nil {
			return err
		}
		if index >= d.Files() {
			return cli.UsageError{Err: fmt.Errorf("%s %d: the plan has %s", source, index, cli.Plural(int64(d.Files()), "file"))}
		}
		fill, err := stackFill(d)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := d.WritePart(ctx, dir, index, pyramid.PartOptions{Workers: workers, File: file}, fill); err != nil {
			// The library's message names its option: the command's is
			// -replace. (A directory in the way is ErrExist too, and keeps
			// its own message.)
			if !errors.Is(err, os.ErrExist) || file.Replace {
				return err
			}
			part := filepath.Join(dir, d.File(index).Name)
			if fi, serr := os.Lstat(part); serr == nil && fi.Mode().IsRegular() {
				return fmt.Errorf("%s exists (use -replace to replace it)", part)
			} else if serr == nil { // a directory or a link: the library says which
				return err
			}
			if name, _ := d.Companion(); name != "" {
				companion := filepath.Join(dir, name)
				if fi, serr := os.Lstat(companion); serr == nil && fi.Mode().IsRegular() {
					return fmt.Errorf("%s exists and is another plan's companion, or this plan's before it changed (use -replace to replace it, and write every file again)", companion)
				}
			}
			return err
		}
		return printWritten(stdout, d, dir, index, time.Since(start))
	})
}

// taskIndex reads the index given, or the first of indexEnvs set, and
// says which it read ("INDEX", "$SLURM_ARRAY_TASK_ID").
func taskIndex(arg string) (int, string, error) {
	source := "INDEX"
	if arg == "" {
		for _, env := range indexEnvs {
			if arg = os.Getenv(env); arg != "" {
				source = "$" + env
				break
			}
		}
	}
	if arg == "" {
		return 0, source, errors.New("no INDEX, and neither $SLURM_ARRAY_TASK_ID nor $JOB_COMPLETION_INDEX is set")
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		return 0, source, fmt.Errorf("%s %q is not a file index", source, arg)
	}
	return n, source, nil
}

// loadPlan reads the plan at path.
func loadPlan(path string) (*pyramid.Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := pyramid.ParseDataset(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// stackFill returns the planes of the stack workload for d's images, which
// must be uint16 planes of one square size: plane i of the dataset,
// counting through its images in order and each image's planes in
// DimensionOrder, is pool plane i % stackpool.Size, as examples/stack
// writes them.
func stackFill(d *pyramid.Dataset) (func(pyramid.PlaneRef, []byte) error, error) {
	images := d.Spec().Images
	first := make([]int, len(images)) // the dataset's index of each image's first plane
	total, size := 0, images[0].SizeX
	for k, s := range images {
		if s.PixelType != pyramid.Uint16 || s.SamplesPerPixel != 1 || s.SizeX != size || s.SizeY != size {
			return nil, fmt.Errorf("image %d is %d x %d x %d %v: the example writes planes of one square size of one uint16 sample", k, s.SizeX, s.SizeY, s.SamplesPerPixel, s.PixelType)
		}
		first[k] = total
		total += s.Planes()
	}
	if err := stackpool.CheckSize("size", size); err != nil {
		return nil, err
	}
	pool := stackpool.New(size, stackpool.Planes(size, total))
	n := 0
	return func(ref pyramid.PlaneRef, pix []byte) error {
		p, err := images[ref.Image].PlaneIndex(ref.Z, ref.C, ref.T)
		if err != nil {
			return err
		}
		copy(pix, pool[(first[ref.Image]+p)%len(pool)])
		if n++; afterPlane != nil {
			afterPlane(n)
		}
		return nil
	}, nil
}

// printWritten prints what the part wrote.
func printWritten(w io.Writer, d *pyramid.Dataset, dir string, index int, elapsed time.Duration) error {
	f := d.File(index)
	info, err := os.Stat(filepath.Join(dir, f.Name))
	if err != nil {
		return err
	}
	planes, raw := 0, int64(0)
	images := d.Spec().Images
	for _, r := range f.Planes {
		s := images[r.Image]
		planes += r.Count
		raw += int64(r.Count) * int64(s.SizeX) * int64(s.SizeY) * int64(s.PixelType.Size()) * int64(s.SamplesPerPixel)
	}
	_, err = fmt.Fprintf(w, "wrote %s: %d planes of %s, %.1f MB in %.2f s (%.1f MB/s raw)\n", f.Name, planes, imageRange(f.Planes),
		float64(info.Size())/1e6, elapsed.Seconds(), float64(raw)/1e6/elapsed.Seconds())
	return err
}

// imageRange names the images of runs by index, as the check does:
// "image 3" or "images 3 to 5".
func imageRange(runs []pyramid.PlaneRange) string {
	a, b := runs[0].Image, runs[len(runs)-1].Image
	if a == b {
		return fmt.Sprintf("image %d", a)
	}
	return fmt.Sprintf("images %d to %d", a, b)
}
