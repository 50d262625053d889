//go:build linux || darwin

package rusage

import (
	"os"
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
	return fromRusage(&ru)
}

// Of returns what a finished child process consumed, or the zero Usage if
// the system does not say.
func Of(ps *os.ProcessState) Usage {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return Usage{}
	}
	return fromRusage(ru)
}

// fromRusage converts the system's figures.
func fromRusage(ru *syscall.Rusage) Usage {
	rss := int64(ru.Maxrss) * 1024 // KiB on Linux
	if runtime.GOOS == "darwin" {
		rss = int64(ru.Maxrss) // bytes
	}
	return Usage{peakRSS: rss, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
}
