package pyramid_test

import (
	"fmt"
	"log"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
)

// Close a time-lapse stopped early: planned for 10 time points of 2
// channels, stopped in its fourth, whose first channel was complete and
// second half written. The half-written plane is given back, the image
// truncated to its 3 complete time points, and the file closed as if it
// had been planned for them.
func ExampleImage_TruncateT() {
	h := iohandle.NewMemory() // pyramid.Create for a file
	w, err := pyramid.New(h, pyramid.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort() // also for a stop before any time point is complete: no file
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 64, SizeY: 48, SizeC: 2, SizeT: 10, PixelType: pyramid.Uint16})
	if err != nil {
		log.Fatal(err)
	}
	frame := make([]byte, im.PlaneBytes()) // the camera's
	for t := range 3 {
		for c := range 2 {
			if err := im.WritePlane(0, c, t, frame); err != nil {
				log.Fatal(err)
			}
		}
	}
	if err := im.WritePlane(0, 0, 3, frame); err != nil {
		log.Fatal(err)
	}
	pw, err := im.Plane(0, 1, 3)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := pw.Write(frame[:len(frame)/2]); err != nil {
		log.Fatal(err)
	}

	// Stopped: give back the plane still open, then keep 3 time points.
	if err := pw.Abort(); err != nil {
		log.Fatal(err)
	}
	if err := im.TruncateT(3); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	spec := im.Spec()
	fmt.Printf("SizeT %d, %d planes\n", spec.SizeT, spec.Planes())
	// Output:
	// SizeT 3, 6 planes
}
