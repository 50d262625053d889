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
//
// A file of tens of thousands of small images keeps a large heap of what
// each image will write at Close, and its many tiles make garbage fast (an
// LZW encoder's table a tile): within a sixteenth of that heap the
// collector would take most of the CPU. So while the collector takes more
// than gcBusy of the CPU time, the room past the live heap doubles each
// period, up to the live heap itself (GOGC=100's), and while it takes less
// than gcIdle it halves again. The runtime updates its CPU metrics only
// when a collection ends, so the share is measured between the last
// collection and the one that ended at least gcWindow periods before it;
// a window in which no collection ended counts as idle. A streamed slide's
// collections, a few short bursts, do not reach gcBusy.
const (
	heapSlack   = 8 << 20
	memoryFloor = 192 << 20
	holdPeriod  = 100 * time.Millisecond
	gcWindow    = 10
	gcBusy      = 0.25
	gcIdle      = 0.05
	maxRoom     = 4 // the room past the live heap is live >> (maxRoom - room)
)

// liveHeap is the runtime metric of the heap's live bytes, as of the last
// collection.
const liveHeap = "/gc/heap/live:bytes"

// gcCPU and allCPU are the runtime's estimates of the CPU time the
// collector took and of all the CPU time the process had, in seconds, as
// of the end of the last collection.
const (
	gcCPU  = "/cpu/classes/gc/total:cpu-seconds"
	allCPU = "/cpu/classes/total:cpu-seconds"
)

// memoryLimit is the soft memory limit holdMemory sets for a live heap,
// with room (0 to maxRoom) past it.
func memoryLimit(live uint64, room int) int64 {
	return int64(min(max(live+live>>(maxRoom-room)+heapSlack, memoryFloor), math.MaxInt64))
}

// nextRoom is the room after a period in which the collector took gcShare
// of the CPU time.
func nextRoom(room int, gcShare float64) int {
	switch {
	case gcShare > gcBusy && room < maxRoom:
		return room + 1
	case gcShare < gcIdle && room > 0:
		return room - 1
	}
	return room
}

// gcMeter follows the collector's share of the CPU time, one sample of
// the runtime's metrics a period, and gives the room past the live heap.
type gcMeter struct {
	n       int
	room    int
	gc, all [gcWindow]float64 // the metrics as of the last periods, a ring
}

// step takes a period's sample of gcCPU (g) and allCPU (a) and returns
// the room. The oldest sample is a window ago (zero at first). The metrics
// are unchanged since it when no collection ended in the window: the
// collector took none of the CPU time.
func (m *gcMeter) step(g, a float64) int {
	k := m.n % gcWindow
	switch {
	case a > m.all[k]:
		m.room = nextRoom(m.room, (g-m.gc[k])/(a-m.all[k]))
	case m.n >= gcWindow:
		m.room = nextRoom(m.room, 0)
	}
	m.gc[k], m.all[k] = g, a
	m.n++
	return m.room
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
		sample := []metrics.Sample{{Name: liveHeap}, {Name: gcCPU}, {Name: allCPU}}
		tick := time.NewTicker(holdPeriod)
		defer tick.Stop()
		var meter gcMeter
		room := 0
		for {
			metrics.Read(sample)
			if sample[1].Value.Kind() == metrics.KindFloat64 && sample[2].Value.Kind() == metrics.KindFloat64 {
				room = meter.step(sample[1].Value.Float64(), sample[2].Value.Float64())
			}
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetMemoryLimit(memoryLimit(sample[0].Value.Uint64(), room))
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
