// Package stackpool makes the planes of the stack workload, which the
// example programs that write it (stack, dataset) share, so that they
// write the same pixels.
package stackpool

import (
	"encoding/binary"
	"fmt"

	"github.com/ometiff-go/ometiff/internal/synth"
)

// Size is the number of distinct planes a stack cycles through: plane i
// of a stack, counting through its series in the order of the file, is
// pool plane i % Size.
const Size = 64

// MaxSize bounds the side of a plane: a pool holds whole planes, and one
// of MaxSize² uint16 samples is 512 MiB.
const MaxSize = 16384

// budget bounds the bytes of a pool's planes, but for its first.
const budget = 1 << 30

// Planes returns the number of planes of the pool of a stack of n planes
// of size x size: at most Size, and no more than budget bytes hold (but
// one).
func Planes(size, n int) int {
	return max(1, min(Size, n, budget/(2*max(size, 1)*max(size, 1))))
}

// CheckSize refuses a plane side of more than MaxSize, naming the flag
// that gave it.
func CheckSize(flag string, size int) error {
	if size > MaxSize {
		return fmt.Errorf("-%s %d: want at most %d (the planes of the workload are held whole, %d MiB each at most)", flag, size, MaxSize, 2*MaxSize*MaxSize>>20)
	}
	return nil
}

// New returns n distinct size x size uint16 planes as little-endian
// bytes: neighbouring regions of a synthetic two-channel slide, so they
// compress like real data.
func New(size, n int) [][]byte {
	const across = 8 // regions per row of the slide
	pool := make([][]byte, n)
	gray := make([]uint16, size*size)
	for i := range pool {
		p := synth.Pattern{Seed: 2, Channel: i % 2}
		region := i / 2
		p.Gray16(gray, region%across*size, region/across*size, size, size)
		pool[i] = make([]byte, 2*len(gray))
		for j, v := range gray {
			binary.LittleEndian.PutUint16(pool[i][2*j:], v)
		}
	}
	return pool
}
