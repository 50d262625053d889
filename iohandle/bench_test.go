package iohandle

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// appendsPerFile is the size of the appends workload: 200,000 two-byte
// appends per file, against the same appends extending the file before
// each write past its end, and unbuffered writes to a file sized first.
const appendsPerFile = 200_000

// appendTarget is one file of the appends workload, written one way.
type appendTarget interface {
	append(p []byte) error
	finish() error // everything handed to the OS
	close() error  // committed or closed
	osWrites() int64
}

// handleTarget is this package: buffered appends through a File.
type handleTarget struct{ h *File }

func openHandle(path string) (appendTarget, error) {
	h, err := Create(path, Options{NoSync: true})
	return handleTarget{h}, err
}

func (t handleTarget) append(p []byte) error { _, err := t.h.Write(p); return err }
func (t handleTarget) finish() error         { return t.h.Flush() }
func (t handleTarget) close() error          { return t.h.Commit() }
func (t handleTarget) osWrites() int64       { return t.h.Stats().Writes() }

// extendingTarget is what the Java handle does: before each write past
// the end it extends the file to its new length, then writes at the
// position.
type extendingTarget struct {
	f     *os.File
	off   int64
	calls int64
}

func openExtending(path string) (appendTarget, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	return &extendingTarget{f: f}, err
}

func (t *extendingTarget) append(p []byte) error {
	t.calls += 2 // ftruncate and pwrite
	if err := t.f.Truncate(t.off + int64(len(p))); err != nil {
		return err
	}
	_, err := t.f.WriteAt(p, t.off)
	t.off += int64(len(p))
	return err
}
func (t *extendingTarget) finish() error   { return nil }
func (t *extendingTarget) close() error    { return t.f.Close() }
func (t *extendingTarget) osWrites() int64 { return t.calls }

// presizedTarget writes two bytes per system call into a file sized up
// front.
type presizedTarget struct {
	f      *os.File
	writes int64
}

func openPresized(path string) (appendTarget, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err == nil {
		err = f.Truncate(2 * appendsPerFile)
	}
	return &presizedTarget{f: f}, err
}

func (t *presizedTarget) append(p []byte) error {
	t.writes++
	_, err := t.f.Write(p)
	return err
}
func (t *presizedTarget) finish() error   { return nil }
func (t *presizedTarget) close() error    { return t.f.Close() }
func (t *presizedTarget) osWrites() int64 { return t.writes }

// BenchmarkAppends runs the appends workload: per operation, files files
// each get 200,000 two-byte appends from their own goroutine, at once. The
// timer runs over the appends and the hand-over of every byte to the OS;
// creating and committing the files is reported apart as
// create+close-µs/file.
// Also reported: the wall time per append seen by each writer (ns/write),
// the aggregate appends per second of all files, and the write calls the
// OS received per 1,000 appends.
func BenchmarkAppends(b *testing.B) {
	methods := []struct {
		name string
		open func(string) (appendTarget, error)
	}{
		{"handle", openHandle},
		{"extend-then-write", openExtending},
		{"unbuffered-presized", openPresized},
	}
	for _, m := range methods {
		for _, files := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("%s/files=%d", m.name, files), func(b *testing.B) {
				benchmarkAppends(b, m.open, files)
			})
		}
	}
}

func benchmarkAppends(b *testing.B, open func(string) (appendTarget, error), files int) {
	dir := b.TempDir()
	b.SetBytes(int64(2 * appendsPerFile * files))
	b.ReportAllocs()
	var appending, setup time.Duration
	var osWrites int64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		start := time.Now()
		targets := make([]appendTarget, files)
		for f := range targets {
			t, err := open(filepath.Join(dir, fmt.Sprintf("r%d-f%d.bin", i, f)))
			if err != nil {
				b.Fatal(err)
			}
			targets[f] = t
		}
		setup += time.Since(start)
		b.StartTimer()

		start = time.Now()
		if err := appendAll(targets); err != nil {
			b.Fatal(err)
		}
		appending += time.Since(start)

		b.StopTimer()
		start = time.Now()
		for _, t := range targets {
			osWrites += t.osWrites()
			if err := t.close(); err != nil {
				b.Fatal(err)
			}
		}
		setup += time.Since(start)
		if err := emptyDir(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	appends := float64(b.N) * appendsPerFile
	b.ReportMetric(float64(appending.Nanoseconds())/appends, "ns/write")
	b.ReportMetric(appends*float64(files)/appending.Seconds(), "writes/s")
	b.ReportMetric(float64(osWrites)/(appends*float64(files))*1000, "oswrites/1000")
	b.ReportMetric(float64(setup.Microseconds())/float64(b.N*files), "create+close-µs/file")
}

// appendAll writes every target's appends, each from its own goroutine.
func appendAll(targets []appendTarget) error {
	var wg sync.WaitGroup
	errs := make([]error, len(targets))
	for i, t := range targets {
		wg.Go(func() {
			p := []byte{0x2a, 0x00}
			for range appendsPerFile {
				if err := t.append(p); err != nil {
					errs[i] = err
					return
				}
			}
			errs[i] = t.finish()
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
