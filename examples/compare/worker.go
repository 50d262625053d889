//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
)

// jobEnv names the environment variable that turns the program into the
// worker that runs our writer once, as a child of the comparison, so its
// time and memory are measured like a peer's.
const jobEnv = "OMETIFF_COMPARE_JOB"

// A job is what the worker is asked to do, passed as JSON in jobEnv.
type job struct {
	Workload workload `json:"workload"`
	In       string   `json:"in"` // raw input; empty for huge
	Out      string   `json:"out"`
	Workers  int      `json:"workers"`
}

// work runs the job in spec and prints the number of OS write calls the
// output handle made to stdout. It returns the exit code.
func work(spec string, stdout, stderr io.Writer) int {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fmt.Fprintf(stderr, "compare worker: bad job: %v\n", err)
		return 2
	}
	stats, err := j.run()
	if err != nil {
		fmt.Fprintf(stderr, "compare worker: %s: %v\n", j.Workload.Name, err)
		return 1
	}
	fmt.Fprintln(stdout, stats.Writes())
	return 0
}

// run writes the output file and returns its write counters. The input
// streams from the raw file in bands (the pyramid package's way: its
// memory does not grow with the image), as libvips and GDAL stream theirs.
func (j job) run() (iohandle.Stats, error) {
	var in io.Reader
	if j.In != "" {
		f, err := os.Open(j.In)
		if err != nil {
			return iohandle.Stats{}, err
		}
		defer f.Close()
		in = f
	}
	opts := pyramid.Options{TileSize: j.Workload.Tile, Compression: compressions[j.Workload.Compression], Quality: j.Workload.Quality, Workers: j.Workers}
	if j.Workload.Kind == hugeKind {
		opts.BigTIFF = pyramid.BigTIFFAlways
	}
	h, err := iohandle.Create(j.Out, iohandle.Options{BufferSize: iohandle.BigBuffer, Replace: true, NoSync: true,
		// Around the page cache when compressing, as Options.DirectIO advises.
		DirectIO: j.Workload.Compression != "none"})
	if err != nil {
		return iohandle.Stats{}, err
	}
	defer h.Close() // discards the output unless the writer committed it
	w, err := pyramid.New(h, opts)
	if err != nil {
		return iohandle.Stats{}, err
	}
	if err := j.write(w, in); err != nil {
		_ = w.Abort()
		return iohandle.Stats{}, err
	}
	if err := w.Close(); err != nil {
		return iohandle.Stats{}, err
	}
	return w.Stats(), nil
}

// write adds the workload's images and writes their planes: the raw
// input holds them in plane order (channel by channel, z fastest), as
// ReadPlanes takes them.
func (j job) write(w *pyramid.Writer, in io.Reader) error {
	wl := j.Workload
	spec := pyramid.ImageSpec{SizeX: wl.Size, SizeY: wl.Size, SizeZ: wl.Z, SizeC: wl.C,
		PixelType: wl.pixelType(), SamplesPerPixel: wl.samples()}
	for s := range wl.Series {
		spec.Name = fmt.Sprintf("%s %d", wl.Name, s)
		im, err := w.AddImage(spec)
		if err != nil {
			return err
		}
		if wl.Kind == hugeKind {
			err = streamHuge(im, wl)
		} else {
			err = im.ReadPlanes(in)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// streamHuge generates the plane band by band and streams it to the
// writer, so neither side ever holds the whole plane.
func streamHuge(im *pyramid.Image, wl workload) error {
	pw, err := im.Plane(0, 0, 0)
	if err != nil {
		return err
	}
	b := newBand(wl)
	for y := 0; y < wl.Size; y += bandRows {
		if _, err := pw.Write(b.fill(y, min(bandRows, wl.Size-y))); err != nil {
			return err
		}
	}
	return pw.Close()
}
