// Package stackpool makes the planes of the stack workload, which the
// example programs that write it (stack, dataset) share, so that they
// write the same pixels.
package stackpool

import (
	"encoding/binary"

	"github.com/ometiff-go/ometiff/internal/synth"
)

// Size is the number of distinct planes a stack cycles through: plane i
// of a stack, counting through its series in the order of the file, is
// pool plane i % Size.
const Size = 64

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
