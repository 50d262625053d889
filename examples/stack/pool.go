package main

import (
	"encoding/binary"

	"github.com/ometiff-go/ometiff/internal/synth"
)

// poolSize is the number of distinct planes a stack cycles through.
const poolSize = 64

// newPool returns n distinct size x size uint16 planes as little-endian
// bytes: neighbouring regions of a synthetic two-channel slide, so they
// compress like real data.
func newPool(size, n int) [][]byte {
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
