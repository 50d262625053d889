package iohandle

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// appendsPerFile is the `appends` workload of REFERENCE.md §3: two-byte
// appends, 200,000 per file.
const appendsPerFile = 200_000

// appender writes one file of the appends workload and returns the write
// calls it issued to the operating system.
type appender func(path string) (int64, error)

// appendThroughHandle is this package: buffered appends through a File.
func appendThroughHandle(path string) (int64, error) {
	h, err := Create(path, Options{NoSync: true})
	if err != nil {
		return 0, err
	}
	defer h.Close()
	p := []byte{0x2a, 0x00}
	for range appendsPerFile {
		if _, err := h.Write(p); err != nil {
			return 0, err
		}
	}
	if err := h.Commit(); err != nil {
		return 0, err
	}
	return h.Stats().Writes(), nil
}

// appendExtending is what the Java handle does: before each write past the
// end it extends the file to its new length, then writes at the position.
func appendExtending(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	p := []byte{0x2a, 0x00}
	var off int64
	for range appendsPerFile {
		if err := f.Truncate(off + int64(len(p))); err != nil {
			return 0, err
		}
		if _, err := f.WriteAt(p, off); err != nil {
			return 0, err
		}
		off += int64(len(p))
	}
	return 2 * appendsPerFile, nil
}

// appendUnbuffered writes two bytes per system call into a file sized
// up front.
func appendUnbuffered(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := f.Truncate(2 * appendsPerFile); err != nil {
		return 0, err
	}
	p := []byte{0x2a, 0x00}
	for range appendsPerFile {
		if _, err := f.Write(p); err != nil {
			return 0, err
		}
	}
	return appendsPerFile, nil
}

// BenchmarkAppends runs the appends workload: each operation writes one
// file of 200,000 two-byte appends per goroutine, with 1, 2, 4 and 8 files
// written at once. It reports the wall time per append seen by each writer
// (ns/write), the aggregate appends per second of all files, and the write
// calls the OS received per 1,000 appends.
func BenchmarkAppends(b *testing.B) {
	writers := []struct {
		name string
		fn   appender
	}{
		{"handle", appendThroughHandle},
		{"extend-then-write", appendExtending},
		{"unbuffered-presized", appendUnbuffered},
	}
	for _, w := range writers {
		for _, files := range []int{1, 2, 4, 8} {
			b.Run(fmt.Sprintf("%s/files=%d", w.name, files), func(b *testing.B) {
				benchmarkAppends(b, w.fn, files)
			})
		}
	}
}

func benchmarkAppends(b *testing.B, fn appender, files int) {
	dir := b.TempDir()
	b.SetBytes(int64(2 * appendsPerFile * files))
	b.ReportAllocs()
	var osWrites int64
	var elapsed time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		calls, err := runFiles(dir, i, files, fn)
		elapsed += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		osWrites += calls
		b.StopTimer()
		if err := emptyDir(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	appends := float64(b.N) * appendsPerFile
	b.ReportMetric(float64(elapsed.Nanoseconds())/appends, "ns/write")
	b.ReportMetric(appends*float64(files)/elapsed.Seconds(), "writes/s")
	b.ReportMetric(float64(osWrites)/(appends*float64(files))*1000, "oswrites/1000")
}

// runFiles writes files at once, each from its own goroutine.
func runFiles(dir string, round, files int, fn appender) (int64, error) {
	var wg sync.WaitGroup
	calls := make([]int64, files)
	errs := make([]error, files)
	for f := range files {
		wg.Go(func() {
			path := filepath.Join(dir, fmt.Sprintf("r%d-f%d.bin", round, f))
			calls[f], errs[f] = fn(path)
		})
	}
	wg.Wait()
	var total int64
	for f := range files {
		if errs[f] != nil {
			return 0, errs[f]
		}
		total += calls[f]
	}
	return total, nil
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
