package main

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// While a TIFF file streams, the bands read and written are most of what
// is live, for the whole conversion, and the runtime lets the heap grow to
// twice what is live before it collects (GOGC=100), and keeps pages freed
// since for a while. holdMemory keeps the process within a sixteenth of
// the live heap instead, plus heapSlack, but never below memoryFloor: it
// sets the soft memory limit (debug.SetMemoryLimit) to that every
// holdPeriod, so that the collector runs, and the scavenger returns memory
// to the system, before it is passed. The limit follows the live heap, so
// it never starves the program; below the floor, collecting more often
// than GOGC=100 does is not worth its CPU.
const (
	heapSlack   = 8 << 20
	memoryFloor = 192 << 20
	holdPeriod  = 100 * time.Millisecond
)

// liveHeap is the runtime metric of the heap's live bytes, as of the last
// collection.
const liveHeap = "/gc/heap/live:bytes"

// memoryLimit is the soft memory limit holdMemory sets for a live heap.
func memoryLimit(live uint64) int64 {
	return int64(min(max(live+live/16+heapSlack, memoryFloor), math.MaxInt64))
}

// holdMemory starts keeping the memory near the live heap, unless
// GOMEMLIMIT or GOGC says how the user wants it kept; stop ends it and
// restores the limit.
func holdMemory() (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != "" {
		return func() {}
	}
	before := debug.SetMemoryLimit(-1)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: liveHeap}}
		tick := time.NewTicker(holdPeriod)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetMemoryLimit(memoryLimit(sample[0].Value.Uint64()))
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		debug.SetMemoryLimit(before)
	}
}
