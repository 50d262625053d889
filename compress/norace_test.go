//go:build !race

package compress

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
