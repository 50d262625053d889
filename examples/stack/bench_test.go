package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ometiff-go/ometiff/examples/internal/stackpool"
	"github.com/ometiff-go/ometiff/pyramid"
)

// BenchmarkWriteStack writes a tenth of the stack workload's series.
func BenchmarkWriteStack(b *testing.B) {
	for _, compression := range []pyramid.Compression{pyramid.None, pyramid.LZW, pyramid.Deflate, pyramid.Zstd} {
		b.Run(compression.String(), func(b *testing.B) {
			cfg := config{output: filepath.Join(b.TempDir(), "stack.ome.tif"), series: 8, z: 90, channels: 2, size: 128,
				options: pyramid.Options{Compression: compression}}
			pool := stackpool.New(cfg.size, stackpool.Size)
			b.SetBytes(int64(cfg.planes()) * cfg.planeBytes())
			for b.Loop() {
				if _, err := writeStack(context.Background(), cfg, pool); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
