package main

import (
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkConvertRaw converts a raw file of four 2048 x 2048 uint16
// planes, uncompressed and with LZW.
func BenchmarkConvertRaw(b *testing.B) {
	const width, height, planes = 2048, 2048, 4
	dir := b.TempDir()
	_, input := rawPlanes(b, dir, planes, width*height*2)
	for _, compression := range []string{"none", "lzw"} {
		b.Run(compression, func(b *testing.B) {
			output := filepath.Join(dir, compression+".ome.tif")
			args := []string{"-force", "-compression", compression, "-raw-width", "2048", "-raw-height", "2048",
				"-raw-type", "uint16", "-raw-z", "4", input, output}
			b.SetBytes(width * height * 2 * planes)
			for b.Loop() {
				if code := runConvert(args, io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit code %d", code)
				}
			}
		})
	}
}
