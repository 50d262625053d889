//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"

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

// run writes the output file and returns the handle's counters. The input
// is read whole into memory first, as the peers read theirs.
func (j job) run() (iohandle.Stats, error) {
	var pix []byte
	if j.In != "" {
		var err error
		if pix, err = readInput(j.In); err != nil {
			return iohandle.Stats{}, err
		}
	}
	h, err := iohandle.Create(j.Out, iohandle.Options{Replace: true, NoSync: true})
	if err != nil {
		return iohandle.Stats{}, err
	}
	opts := pyramid.Options{TileSize: j.Workload.Tile, Compression: compressions[j.Workload.Compression], Workers: j.Workers}
	if j.Workload.Kind == hugeKind {
		opts.BigTIFF = pyramid.BigTIFFAlways
	}
	w, err := pyramid.New(h, opts)
	if err != nil {
		_ = h.Abort()
		return iohandle.Stats{}, err
	}
	if err := j.write(w, pix); err != nil {
		_ = w.Abort()
		return iohandle.Stats{}, err
	}
	if err := w.Close(); err != nil {
		return iohandle.Stats{}, err
	}
	return h.Stats(), nil
}

// write adds the workload's images and writes their planes.
func (j job) write(w *pyramid.Writer, pix []byte) error {
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
			err = writeSeries(im, wl, pix[s*wl.Z*wl.C*wl.planeBytes():])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeSeries writes the planes of one series from its raw bytes, which
// hold them channel by channel, z fastest.
func writeSeries(im *pyramid.Image, wl workload, pix []byte) error {
	n := wl.planeBytes()
	for c := range wl.C {
		for z := range wl.Z {
			off := (c*wl.Z + z) * n
			if err := im.WritePlane(z, c, 0, pix[off:off+n]); err != nil {
				return err
			}
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

// readInput reads a file whole into memory advised to be backed by huge
// pages, as numpy does for the arrays tifffile writes from. Faulting in
// hundreds of MiB 4 KiB at a time (os.ReadFile's buffer) costs seconds of
// system time on virtual machines, which would be charged to the writer.
func readInput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	buf, err := syscall.Mmap(-1, 0, int(fi.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	if err := syscall.Madvise(buf, syscall.MADV_HUGEPAGE); err != nil {
		return nil, err
	}
	_, err = io.ReadFull(f, buf)
	return buf, err
}
