package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ometiff-go/ometiff/pyramid"
)

// BenchmarkWriteSlide writes one 2048 x 2048 channel of every pixel type,
// generation included.
func BenchmarkWriteSlide(b *testing.B) {
	for _, kind := range []string{"uint8", "uint16", "float32", "rgb8"} {
		for _, compression := range []pyramid.Compression{pyramid.None, pyramid.LZW} {
			b.Run(kind+"/"+compression.String(), func(b *testing.B) {
				cfg := config{output: filepath.Join(b.TempDir(), "slide.ome.tif"), size: 2048, channels: 1,
					kind: kindNamed(b, kind), options: pyramid.Options{Compression: compression}}
				b.SetBytes(int64(cfg.size) * int64(cfg.size) * int64(cfg.kind.pixelBytes()))
				for b.Loop() {
					if _, err := writeSlide(context.Background(), cfg); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
