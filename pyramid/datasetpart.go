package pyramid

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/ometiff-go/ometiff/iohandle"
)

// PartOptions are what the process writing a file of a dataset decides.
// The zero value works: one encoding goroutine per CPU, a new file synced
// at Close.
type PartOptions struct {
	// Workers and Progress are Options.Workers and Options.Progress, for
	// the part's file.
	Workers  int
	Progress func(Progress)
	// File says how CreatePart creates the file, and the companion when it
	// writes it: Replace to replace an existing one, NoSync, DirectIO,
	// Perm. A BufferSize of 0 is iohandle.BigBuffer, as Create has.
	File iohandle.Options
}

// Part writes one file of a dataset: a Writer restricted to the planes the
// plan puts in that file, whose OME-XML is the dataset's. Write each of
// its planes once, in any order and from any goroutines, as with a Writer,
// then Close. Its methods may be called from several goroutines at once,
// as the Writer's doc says.
type Part struct {
	d      *Dataset
	file   int
	w      *Writer
	images []*Image // per run of planes of the file, in its order

	companionDir string           // where Close writes the companion; "" for none
	fileOptions  iohandle.Options // and how

	mu       sync.Mutex
	closed   bool
	closeErr error // of a Close that failed before the writer's Close
}

// CreatePart writes file i of the dataset in dir, under the name the plan
// gives it, with Create's semantics: the file appears, whole, only when
// Close succeeds, and an existing file is an error wrapping fs.ErrExist
// unless opts.File.Replace is set. ctx cancels the writing. An i not in
// [0, d.Files()) is an ErrOption, here and in NewPart and WritePart.
//
// In the companion layout, Close also writes the companion in dir before
// it commits the file, unless the same companion is there already: every
// part writes the same bytes, so whichever process comes first writes it,
// and the others find it (a different file there is an error wrapping
// fs.ErrExist unless opts.File.Replace is set). A committed part thus
// always has its companion beside it, and no process has to finish the
// dataset.
func (d *Dataset) CreatePart(ctx context.Context, dir string, i int, opts PartOptions) (*Part, error) {
	if err := d.checkIndex(i); err != nil {
		return nil, err
	}
	fileOptions := opts.File
	if fileOptions.BufferSize == 0 {
		fileOptions.BufferSize = iohandle.BigBuffer
	}
	path := filepath.Join(dir, d.spec.Files[i].Name)
	h, err := iohandle.Create(path, fileOptions)
	if errors.Is(err, iohandle.ErrExist) && !fileOptions.Replace && !isDir(path) {
		return nil, &describedError{msg: fmt.Sprintf("%s%s exists (set PartOptions.File.Replace to replace it)", prefix, path), errs: []error{err}}
	}
	if err != nil {
		return nil, err
	}
	p, err := d.NewPart(ctx, h, i, opts)
	if err != nil {
		_ = h.Abort()
		return nil, err
	}
	if d.spec.Companion {
		p.companionDir, p.fileOptions = dir, fileOptions
	}
	return p, nil
}

// NewPart writes file i of the dataset to h, which must be empty, as New
// does; the file's name is the plan's, whatever h's path. It does not write
// the companion: see WriteCompanion.
func (d *Dataset) NewPart(ctx context.Context, h iohandle.Handle, i int, opts PartOptions) (*Part, error) {
	if err := d.checkIndex(i); err != nil {
		return nil, err
	}
	description, err := d.description(i)
	if err != nil {
		return nil, err
	}
	o := d.spec.Options
	o.Workers, o.Progress, o.UUID = opts.Workers, opts.Progress, d.uuids[i]
	w, err := NewContext(ctx, h, o)
	if err != nil {
		return nil, err
	}
	w.description = description
	p := &Part{d: d, file: i, w: w}
	for _, r := range d.spec.Files[i].Planes {
		s := d.images[r.Image]
		// The run is an image of the writer: planes of the image's size
		// and type, one after the other; the OME-XML is the dataset's.
		run := ImageSpec{SizeX: s.SizeX, SizeY: s.SizeY, SizeZ: r.Count, PixelType: s.PixelType, SamplesPerPixel: s.SamplesPerPixel,
			PhysicalSizeX: s.PhysicalSizeX, PhysicalSizeY: s.PhysicalSizeY, PhysicalSizeXUnit: s.PhysicalSizeXUnit, PhysicalSizeYUnit: s.PhysicalSizeYUnit}
		im, err := w.AddImage(run)
		if err != nil {
			_ = w.Abort()
			return nil, err
		}
		im.origin = &planeOrigin{index: r.Image, spec: s, first: r.First}
		p.images = append(p.images, im)
	}
	return p, nil
}

// locate returns the image of the part holding plane ref, and the plane's
// index in it.
func (p *Part) locate(ref PlaneRef) (*Image, int, error) {
	if p == nil || p.d == nil {
		return nil, 0, errZero
	}
	if ref.Image < 0 || ref.Image >= len(p.d.images) {
		return nil, 0, fmt.Errorf("%w: image %d of a dataset of %d", ErrPlane, ref.Image, len(p.d.images))
	}
	index, err := p.d.images[ref.Image].PlaneIndex(ref.Z, ref.C, ref.T)
	if err != nil {
		return nil, 0, err
	}
	for k, r := range p.d.spec.Files[p.file].Planes {
		if r.Image == ref.Image && index >= r.First && index < r.First+r.Count {
			return p.images[k], index - r.First, nil
		}
	}
	return nil, 0, fmt.Errorf("%w: plane z=%d c=%d t=%d of image %d is in %s, not in this part, %s",
		ErrPlane, ref.Z, ref.C, ref.T, ref.Image, p.d.fileHolding(ref.Image, index, p.file), p.d.spec.Files[p.file].Name)
}

// WritePlane writes plane ref whole, as Image.WritePlane does: SizeY rows
// of SizeX pixels of the image's little-endian samples. A plane the plan
// puts in another file is ErrPlane.
func (p *Part) WritePlane(ref PlaneRef, pix []byte) error {
	im, index, err := p.locate(ref)
	if err != nil {
		return err
	}
	return im.WritePlane(index, 0, 0, pix)
}

// Plane starts plane ref for streaming, as Image.Plane does.
func (p *Part) Plane(ref PlaneRef) (*PlaneWriter, error) {
	im, index, err := p.locate(ref)
	if err != nil {
		return nil, err
	}
	return im.Plane(index, 0, 0)
}

// Stats returns the write calls the output received so far, as
// Writer.Stats does.
func (p *Part) Stats() iohandle.Stats {
	if p == nil {
		return iohandle.Stats{}
	}
	return p.w.Stats()
}

// Close finishes the file and commits it, after writing the companion if
// CreatePart said so, as Writer.Close does: every plane of the part must
// have been written. On any error the file is discarded.
func (p *Part) Close() error {
	if p == nil {
		return errZero
	}
	if err := p.closing(); err != nil {
		return err
	}
	// Not under p.mu: the writer's Close calls Options.Progress, which may
	// call the part's methods.
	return p.w.Close()
}

// closing marks the part closed and, at its first Close, writes the
// companion, unless the part cannot be closed.
func (p *Part) closing() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closeErr != nil { // a later Close says the same
		return p.closeErr
	}
	if !p.closed && p.companionDir != "" {
		// The companion goes first, so that no part is committed without
		// it; but not for a part that cannot be closed.
		p.w.mu.Lock()
		err := p.w.usableLocked()
		if err == nil {
			err = p.w.missingPlanes()
		}
		p.w.mu.Unlock()
		if err == nil {
			err = p.d.WriteCompanion(p.companionDir, p.fileOptions)
		}
		if err != nil {
			p.closed, p.closeErr = true, err
			_ = p.w.Abort()
			return err
		}
	}
	p.closed = true
	return nil
}

// Abort stops writing and discards the file, as Writer.Abort does.
func (p *Part) Abort() error {
	if p == nil {
		return errZero
	}
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	return p.w.Abort()
}

// WritePart writes file i of the dataset in dir, as CreatePart does,
// taking its planes from fill: for each plane of the file, in the order of
// Planes, fill gets the plane's reference and a buffer of its size (the
// image's PlaneBytes) to fill with its pixels. An error of fill stops the
// writing and is returned as it is; the file is then discarded. A nil fill
// is an ErrOption.
func (d *Dataset) WritePart(ctx context.Context, dir string, i int, opts PartOptions, fill func(ref PlaneRef, pix []byte) error) error {
	if fill == nil {
		return fmt.Errorf("%w: no fill function (nil)", ErrOption)
	}
	p, err := d.CreatePart(ctx, dir, i, opts)
	if err != nil {
		return err
	}
	defer p.Abort() // does nothing once Close committed the file
	var buf []byte
	for ref := range d.Planes(i) {
		n := int(d.planeBytesOf(ref.Image))
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if err := fill(ref, buf); err != nil {
			return err
		}
		if err := p.WritePlane(ref, buf); err != nil {
			return err
		}
	}
	return p.Close()
}

// WriteCompanion writes the dataset's companion file in dir, with the
// dataset's whole OME-XML, when the plan has one (DatasetSpec.Companion),
// unless the same companion is there already. Each process may call it:
// all write the same bytes, atomically, and a process that finds them
// there, or loses the race to another that wrote them, does nothing more.
// A different file there is an error wrapping fs.ErrExist unless
// opts.Replace is set. CreatePart's parts write it at Close; NewPart's do
// not.
func (d *Dataset) WriteCompanion(dir string, opts iohandle.Options) error {
	if d.unmade() {
		return errUnmade
	}
	if !d.spec.Companion {
		return fmt.Errorf("%w: the dataset has no companion (DatasetSpec.Companion is false)", ErrOption)
	}
	want, err := d.companionXML()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, d.companion[0])
	if holds(path, want) {
		return nil
	}
	opts.DirectIO = false // one small write
	h, err := iohandle.Create(path, opts)
	if err == nil {
		if _, err = h.Write(want); err == nil {
			err = h.Commit()
		}
		_ = h.Close()
	}
	switch {
	case errors.Is(err, iohandle.ErrExist) && holds(path, want):
		return nil // another process wrote it meanwhile
	case errors.Is(err, iohandle.ErrExist) && !opts.Replace && !isDir(path):
		return &describedError{msg: fmt.Sprintf("%s%s exists and is another plan's companion, or this plan's before it changed "+
			"(set Replace to replace it, and write every file again)", prefix, path), errs: []error{err}}
	}
	return err
}

// isDir reports whether path names a directory, which Replace does not
// replace (iohandle.Create's error says so).
func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

// holds reports whether the file at path holds exactly want.
func holds(path string, want []byte) bool {
	f, err := openRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, int64(len(want))+1))
	return err == nil && bytes.Equal(got, want)
}

// planeBytesOf is the length of a plane of image k of the dataset.
func (d *Dataset) planeBytesOf(k int) int64 {
	s := d.images[k]
	return int64(s.SizeX) * int64(s.SizeY) * int64(s.pixelBytes())
}
