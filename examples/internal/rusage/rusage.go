// Package rusage measures what the example programs' process consumes:
// its CPU time and its peak resident memory.
package rusage

import (
	"fmt"
	"io"
	"time"
)

// Usage is what the process has consumed up to a moment; zero when the
// system does not say.
type Usage struct {
	peakRSS int64         // peak resident set size in bytes
	cpu     time.Duration // user and system time
}

// PeakRSS is the peak resident set size in bytes; 0 when unknown.
func (u Usage) PeakRSS() int64 { return u.peakRSS }

// Print prints the CPU time and peak memory of a run of elapsed wall time
// that consumed the difference between before and after, if known.
func Print(w io.Writer, before, after Usage, elapsed time.Duration) {
	if after.peakRSS == 0 {
		return
	}
	cpu := after.cpu - before.cpu
	fmt.Fprintf(w, "cpu     %.2f s user+system, %.1f cores busy on average\n", cpu.Seconds(), cpu.Seconds()/elapsed.Seconds())
	fmt.Fprintf(w, "memory  %.0f MiB peak RSS\n", float64(after.peakRSS)/(1<<20))
}
