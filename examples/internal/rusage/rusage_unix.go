//go:build linux || darwin

package rusage

import (
	"runtime"
	"syscall"
	"time"
)

// Self returns what the process has consumed so far, or the zero Usage if
// the system does not say.
func Self() Usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}
	}
	rss := int64(ru.Maxrss) * 1024 // KiB on Linux
	if runtime.GOOS == "darwin" {
		rss = int64(ru.Maxrss) // bytes
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return Usage{peakRSS: rss, cpu: cpu}
}
