//go:build linux || darwin

package main

import (
	"runtime"
	"syscall"
	"time"
)

// processUsage returns what the process has consumed so far, or the zero
// usage if the system does not say.
func processUsage() usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}
	}
	rss := int64(ru.Maxrss) * 1024 // KiB on Linux
	if runtime.GOOS == "darwin" {
		rss = int64(ru.Maxrss) // bytes
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return usage{peakRSS: rss, cpu: cpu}
}
