package main

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/clitest"
	"github.com/ometiff-go/ometiff/examples/internal/pngstream/pngtest"
	"github.com/ometiff-go/ometiff/examples/internal/rusage"
	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/readback"
)

// buildForMeasure builds the program, without the race detector, for tests
// that measure it as a subprocess.
func buildForMeasure(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("peak memory is measured through getrusage")
	}
	return buildProgram(t)
}

// measured is a run of the program as a subprocess.
type measured struct {
	code    int
	stderr  string
	peakRSS int64
}

// measureEnv makes the test binary a go-between: Linux gives a child the
// peak RSS of the process that spawned it (exec records the memory it
// shared until then), so the program is run from a fresh, small process,
// this binary started anew, which prints the program's exit code and
// peak RSS.
const measureEnv = "OMETIFF_CONVERT_MEASURE"

func init() {
	if os.Getenv(measureEnv) == "" {
		return
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Println(cmd.ProcessState.ExitCode(), rusage.Of(cmd.ProcessState).PeakRSS())
	os.Exit(0)
}

// runMeasured runs the convert command of the program at bin with args
// and measures its peak memory through getrusage.
func runMeasured(t *testing.T, bin string, args ...string) measured {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(self, append([]string{bin, "convert"}, args...)...)
	cmd.Env = append(os.Environ(), measureEnv+"=1")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s", stderr.String())
	m := measured{stderr: stderr.String()}
	_, err = fmt.Sscan(stdout.String(), &m.code, &m.peakRSS)
	require.NoError(t, err, "the go-between printed %q", stdout.String())
	require.Positive(t, m.peakRSS, "getrusage gave no peak RSS")
	t.Logf("%s: exit %d, peak RSS %.1f MiB", filepath.Base(args[len(args)-2]), m.code, float64(m.peakRSS)/(1<<20))
	return m
}

// pngBomb is the 1,243-byte PNG of issue 13: its header claims 100000 x
// 100000 RGBA, and its image data is the start of a zlib stream of zeros.
func pngBomb(t testing.TB) []byte {
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, zlib.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(make([]byte, 4<<20))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	ihdr := binary.BigEndian.AppendUint32(nil, 100000)
	ihdr = binary.BigEndian.AppendUint32(ihdr, 100000)
	ihdr = append(ihdr, 8, 6, 0, 0, 0)
	data := append([]byte(pngtest.Signature), pngtest.Chunk("IHDR", ihdr)...)
	data = append(data, pngtest.Chunk("IDAT", z.Bytes()[:1243-len(data)-12-12])...)
	data = append(data, pngtest.Chunk("IEND", nil)...)
	require.Len(t, data, 1243)
	return data
}

// jpegBomb is a JPEG whose frame header claims 65535 x 65535 YCbCr, the
// most a JPEG can: a 16 x 16 JPEG with its size changed.
func jpegBomb(t testing.TB) []byte {
	data := bytes.Clone(encoded(t.(*testing.T), nrgbaImage(16, 16, false), encodeJPEG))
	sof := bytes.Index(data, []byte{0xff, 0xc0})
	require.Positive(t, sof)
	binary.BigEndian.PutUint16(data[sof+5:], 65535)
	binary.BigEndian.PutUint16(data[sof+7:], 65535)
	return data
}

// bombEntry is an entry of a bomb's directory: a lone SHORT value sits in
// the first two bytes of value, little-endian.
type bombEntry struct {
	tag, typ uint16
	count    uint32
	value    uint32
}

const bombShort, bombLong = 3, 4

// bombTIFF is a little-endian TIFF of one directory, at 8, of entries,
// followed by tail.
func bombTIFF(entries []bombEntry, tail ...byte) []byte {
	le := binary.LittleEndian
	data := []byte("II*\x00")
	data = le.AppendUint32(data, 8)
	data = le.AppendUint16(data, uint16(len(entries)))
	for _, e := range entries {
		data = le.AppendUint16(data, e.tag)
		data = le.AppendUint16(data, e.typ)
		data = le.AppendUint32(data, e.count)
		data = le.AppendUint32(data, e.value)
	}
	data = le.AppendUint32(data, 0) // no next directory
	return append(data, tail...)
}

// tiffBomb is a 170-byte TIFF whose directory claims 100000 x 100000 RGB
// in one strip of 3 bytes.
func tiffBomb() []byte {
	return bombTIFF([]bombEntry{
		{256, bombLong, 1, 100000}, {257, bombLong, 1, 100000}, {258, bombShort, 3, 8 + 2 + 11*12 + 4}, {259, bombShort, 1, 1},
		{262, bombShort, 1, 2}, {273, bombLong, 1, 8}, {277, bombShort, 1, 3}, {278, bombLong, 1, 100000}, {279, bombLong, 1, 3},
		{284, bombShort, 1, 1}, {339, bombShort, 1, 1},
	}, 8, 0, 8, 0, 8, 0, 1, 2, 3) // BitsPerSample, then spare bytes
}

// jpegTileBomb is a TIFF of one gray JPEG tile of 16384 x 16384 in 3
// bytes: its bands fit -max-memory's 1 GiB, but decoding the tile, were
// it a progressive frame, takes 1.6 GB more.
func jpegTileBomb() []byte {
	const tail = 8 + 2 + 10*12 + 4
	return bombTIFF([]bombEntry{
		{256, bombLong, 1, 16384}, {257, bombLong, 1, 16384}, {258, bombShort, 1, 8}, {259, bombShort, 1, 7},
		{262, bombShort, 1, 1}, {277, bombShort, 1, 1}, {322, bombLong, 1, 16384}, {323, bombLong, 1, 16384},
		{324, bombLong, 1, tail}, {325, bombLong, 1, 3},
	}, 0xff, 0xd8, 0xff)
}

// TestBombsAreRefusedInLittleMemory runs the converter on files whose
// headers claim huge images: each is refused before anything large is
// allocated, in under 64 MiB of peak RSS, and leaves no file behind.
func TestBombsAreRefusedInLittleMemory(t *testing.T) {
	bin := buildForMeasure(t)
	tests := []struct {
		name string
		data []byte
		args []string
		want string
	}{
		{"PNG, 100000 x 100000 RGBA", pngBomb(t), nil, "its header claims 100000 x 100000 pixels, more than -max-pixels 4294967296"},
		{"PNG, no pixel limit", pngBomb(t), []string{"-max-pixels", "0"}, "a 1243-byte file cannot hold this 100000 x 100000 PNG"},
		{"JPEG, 65535 x 65535", jpegBomb(t), nil, "this 65535 x 65535 JPEG is decoded whole, which takes about"},
		{"TIFF, 100000 x 100000 RGB", tiffBomb(), nil, "image 0 (100000 x 100000) needs about 84.0 GiB for the bands read and written at tile 256 and the blocks decoded, more than -max-memory 1.0 GiB"},
		{"TIFF, one JPEG tile of 16384 x 16384", jpegTileBomb(), []string{"-compression", "zstd"},
			"image 0 (16384 x 16384) needs about 2.0 GiB for the bands read and written at tile 256 and the blocks decoded, more than -max-memory 1.0 GiB"},
		{"TIFF, -max-pixels given", tiffBomb(), []string{"-max-pixels", "4294967296"}, "its header claims 100000 x 100000 pixels, more than -max-pixels 4294967296"},
		{"TIFF, no memory limit", tiffBomb(), []string{"-max-memory", "0"}, "source: plane z=0 c=0 t=0 (the page at 8): image too large: the page at 8 has bands of 100000 x 100000 pixels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := writeFile(t, t.TempDir(), "bomb", tt.data)
			dir := t.TempDir()
			m := runMeasured(t, bin, append(tt.args, input, filepath.Join(dir, "out.ome.tif"))...)
			assert.Equal(t, 1, m.code, m.stderr)
			clitest.AssertErrorLine(t, convertName, m.stderr)
			assert.Contains(t, m.stderr, tt.want)
			assert.Less(t, m.peakRSS, int64(64<<20), "peak RSS")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "files left behind")
		})
	}
}

// bigPixel is pixel (x, y) of the large PNGs: every byte differs from its
// neighbours, and rows repeat every 256 pixels, so that the file is small.
func bigPixel(x, y int) [3]byte { return [3]byte{byte(x + y), byte(x ^ y), byte(y + x/256)} }

// writeBigPNG streams a width x height RGB PNG of bigPixel to path.
func writeBigPNG(t *testing.T, path string, width, height int) {
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, pngtest.Stream(f, width, height, 2, func(y int, row []byte) {
		for x := range width {
			p := bigPixel(x, y)
			copy(row[3*x:], p[:])
		}
	}))
	require.NoError(t, f.Close())
}

// streamedBudget is the peak memory the converter documents for a
// streamed image: twice the writer's bands, as Go's garbage collector
// lets the heap grow to twice what is live, and 48 MiB for the rest (the
// program, the decoder, the encoders' tiles and the output's buffer).
func streamedBudget(width, pixelBytes int) int64 {
	return 2*limits{}.bandBytes(width, width, pixelBytes) + 48<<20
}

// checkStreamedPNG converts a size x size RGB PNG, made at test time, as a
// subprocess with the default options, and checks that its peak memory
// stays within the documented budget and that sampled tiles of the full
// resolution read back equal.
func checkStreamedPNG(t *testing.T, size int) {
	bin := buildForMeasure(t)
	dir := t.TempDir()
	input := filepath.Join(dir, "big.png")
	writeBigPNG(t, input, size, size)
	output := filepath.Join(dir, "big.ome.tif")
	m := runMeasured(t, bin, input, output)
	require.Equal(t, 0, m.code, m.stderr)
	assert.LessOrEqual(t, m.peakRSS, streamedBudget(size, 3), "peak RSS past the documented budget")

	checkBigTiles(t, output, size)
}

// checkBigTiles checks that sampled tiles of the full resolution of the
// output, a size x size RGB image of bigPixel in 256 x 256 tiles, read
// back equal.
func checkBigTiles(t *testing.T, output string, size int) {
	f, err := os.Open(output)
	require.NoError(t, err)
	defer f.Close()
	info, err := f.Stat()
	require.NoError(t, err)
	file, err := readback.ParseFile(f, info.Size())
	require.NoError(t, err)
	require.Len(t, file.IFDs, 1)
	d := file.IFDs[0]
	require.Equal(t, uint64(size), d.Uint(256, 0))
	const tile = 256
	across := (size + tile - 1) / tile
	tiles := across * across
	for _, i := range []int{0, 1, across - 1, across, tiles / 2, tiles - across, tiles - 1} {
		pix, err := file.Tile(d, i)
		require.NoError(t, err)
		require.Len(t, pix, tile*tile*3)
		x0, y0 := i%across*tile, i/across*tile
		for y := range tile {
			for x := range tile {
				want := [3]byte{}
				if x0+x < size && y0+y < size {
					want = bigPixel(x0+x, y0+y)
				}
				if got := [3]byte(pix[3*(y*tile+x):]); got != want {
					require.Failf(t, "pixel differs", "tile %d, pixel (%d, %d): %v, want %v", i, x0+x, y0+y, got, want)
				}
			}
		}
	}
}

// TestStreamedPNGMemory converts a 6000 x 6000 RGB PNG in the documented
// memory; TestInteropStreamed30000PNG does the same at 30000 x 30000,
// whose budget the program's doc states (180 MiB).
func TestStreamedPNGMemory(t *testing.T) {
	checkStreamedPNG(t, 6000)
}

// TestInteropStreamed30000PNG converts the 30000 x 30000 RGB PNG of issue
// 13 (2.7 GB of pixels) in the documented memory. It takes about a minute,
// so it runs with the interop checks (make interop), not in make test.
func TestInteropStreamed30000PNG(t *testing.T) {
	interop.Selected(t)
	require.Less(t, streamedBudget(30000, 3), int64(180<<20), "the doc's figure")
	checkStreamedPNG(t, 30000)
}

func TestByteSize(t *testing.T) {
	for _, tt := range []struct {
		text string
		want byteSize
	}{{"1GiB", 1 << 30}, {"512MiB", 512 << 20}, {"1.5 GiB", 3 << 29}, {"2gb", 2e9}, {"1000", 1000}, {"64KiB", 64 << 10}, {"0", 0}, {"7B", 7}} {
		var b byteSize
		require.NoError(t, b.UnmarshalText([]byte(tt.text)), tt.text)
		assert.Equal(t, tt.want, b, tt.text)
	}
	for _, bad := range []string{"", "GiB", "-1MiB", "1 parsec", "1e30TiB", "NaN"} {
		var b byteSize
		assert.Error(t, b.UnmarshalText([]byte(bad)), bad)
	}
	text, _ := byteSize(1 << 30).MarshalText()
	assert.Equal(t, "1GiB", string(text))
	text, _ = byteSize(1000).MarshalText()
	assert.Equal(t, "1000", string(text))
	assert.Equal(t, "1.5 GiB", byteSize(3<<29).String())
	assert.Equal(t, "12 bytes", byteSize(12).String())
}

func TestMulSaturates(t *testing.T) {
	assert.Equal(t, int64(24), mul(2, 3, 4))
	assert.Equal(t, int64(1<<62), mul(1<<31, 1<<31))
	assert.Equal(t, int64(1<<63-1), mul(1<<32, 1<<32))
	assert.Equal(t, int64(1<<63-1), mul(1<<62, 2))
	assert.Equal(t, int64(1<<63-1), mul(1<<62, 4, 0), "saturation is final, even times zero")
}

func TestJPEGFrame(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
		want float64 // bytes per pixel
	}{
		{"gray", encoded(t, grayImage(16, 16), encodeJPEG), 1},
		{"4:2:0", encoded(t, nrgbaImage(16, 16, false), encodeJPEG), 1.5},
	} {
		f, err := readJPEGFrame(bytes.NewReader(tt.data))
		require.NoError(t, err, tt.name)
		assert.False(t, f.progressive)
		assert.InDelta(t, tt.want, f.bytesPerPixel(), 1e-9, tt.name)
	}
	progressive := jpegFrame{progressive: true, sampling: [][2]int{{1, 1}, {1, 1}, {1, 1}}}
	assert.InDelta(t, 15.0, progressive.bytesPerPixel(), 1e-9, "4:4:4 progressive: samples and their coefficients")
	cmyk := jpegFrame{sampling: [][2]int{{1, 1}, {1, 1}, {1, 1}, {1, 1}}}
	assert.InDelta(t, 8.0, cmyk.bytesPerPixel(), 1e-9)
	assert.InDelta(t, 24.0, jpegFrame{}.bytesPerPixel(), 1e-9, "unknown: the worst case")
	for _, bad := range [][]byte{nil, []byte("GIF89a"), {0xff, 0xd8, 0xff, 0xda, 0, 2}, {0xff, 0xd8, 0xff, 0xc0, 0, 4, 8, 0}} {
		_, err := readJPEGFrame(bytes.NewReader(bad))
		assert.Error(t, err, fmt.Sprintf("% x", bad))
	}
}

// writeStripedRGB streams a width x height RGB TIFF of bigPixel in
// uncompressed strips of 64 rows to path, a row at a time.
func writeStripedRGB(t *testing.T, path string, width, height int) {
	const rowsPerStrip = 64
	strips := (height + rowsPerStrip - 1) / rowsPerStrip
	rowBytes := 3 * width
	le := binary.LittleEndian
	type entry struct {
		tag, typ uint16
		count    uint32
		value    uint32
	}
	const short, long = 3, 4
	dataStart := uint32(8)
	ifdStart := dataStart + uint32(rowBytes*height)
	const entries = 11
	offsets := ifdStart + 2 + entries*12 + 4
	counts := offsets + 4*uint32(strips)
	bits := counts + 4*uint32(strips)
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	head := le.AppendUint32([]byte("II*\x00"), ifdStart)
	w.Write(head)
	row := make([]byte, rowBytes)
	for y := range height {
		for x := range width {
			p := bigPixel(x, y)
			copy(row[3*x:], p[:])
		}
		w.Write(row)
	}
	ifd := le.AppendUint16(nil, entries)
	for _, e := range []entry{
		{256, long, 1, uint32(width)}, {257, long, 1, uint32(height)}, {258, short, 3, bits}, {259, short, 1, 1},
		{262, short, 1, 2}, {273, long, uint32(strips), offsets}, {277, short, 1, 3}, {278, long, 1, rowsPerStrip},
		{279, long, uint32(strips), counts}, {284, short, 1, 1}, {339, short, 1, 1},
	} {
		ifd = le.AppendUint16(ifd, e.tag)
		ifd = le.AppendUint16(ifd, e.typ)
		ifd = le.AppendUint32(ifd, e.count)
		ifd = le.AppendUint32(ifd, e.value)
	}
	ifd = le.AppendUint32(ifd, 0)
	for s := range strips {
		ifd = le.AppendUint32(ifd, dataStart+uint32(s*rowsPerStrip*rowBytes))
	}
	for s := range strips {
		ifd = le.AppendUint32(ifd, uint32(min(rowsPerStrip, height-s*rowsPerStrip)*rowBytes))
	}
	ifd = append(ifd, 8, 0, 8, 0, 8, 0)
	w.Write(ifd)
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}

// TestStreamedTIFFMemory converts a 6000 x 6000 RGB TIFF in strips as a
// subprocess: its peak memory stays within the documented budget for
// TIFF files (tiffBudget), and sampled tiles read back equal.
func TestStreamedTIFFMemory(t *testing.T) {
	bin := buildForMeasure(t)
	dir := t.TempDir()
	const size = 6000
	input := filepath.Join(dir, "big.tif")
	writeStripedRGB(t, input, size, size)
	output := filepath.Join(dir, "big.ome.tif")
	m := runMeasured(t, bin, input, output)
	require.Equal(t, 0, m.code, m.stderr)
	budget := tiffBudget(size, 64, 3)
	t.Logf("budget %.1f MiB", float64(budget)/(1<<20))
	assert.LessOrEqual(t, m.peakRSS, budget, "peak RSS past the documented budget")
	checkBigTiles(t, output, size)
}

// tiffBudget is the peak memory the converter documents for a TIFF file
// width pixels wide in blocks of blockRows rows, pixelBytes a pixel: the
// memory it plans (three bands of the page, the writer's bands), twice
// that as the garbage collector lets the heap double, or when that is
// more, memoryFloor or a sixteenth more and heapSlack, as holdMemory keeps
// the heap within them, and 48 MiB for the rest.
func tiffBudget(width, blockRows, pixelBytes int) int64 {
	rows := max(1, 256/blockRows) * blockRows
	planned := mul(3, int64(rows), int64(width), int64(pixelBytes)) + limits{}.bandBytes(width, width, pixelBytes)
	return min(2*planned, max(planned*17/16+heapSlack, memoryFloor)) + 48<<20
}

// TestGCMeter feeds gcMeter the runtime's CPU metrics, which change only
// when a collection ends: a busy collector widens the room, and a second
// without a collection narrows it again, the metrics unchanged.
func TestGCMeter(t *testing.T) {
	var m gcMeter
	g, a := 0.0, 0.0
	for range 3 * gcWindow { // collections every period, half the CPU time
		g, a = g+0.05, a+0.1
		m.step(g, a)
	}
	require.Equal(t, maxRoom, m.room, "a busy collector")
	for range 2 * gcWindow { // a collection every 20 periods: metrics unchanged
		m.step(g, a)
	}
	assert.Less(t, m.room, maxRoom, "no collection for two windows")
	for range 4 * gcWindow {
		m.step(g, a)
	}
	assert.Equal(t, 0, m.room, "idle")
}

// TestHoldMemory checks that holdMemory sets the soft memory limit to
// memoryLimit of the live heap, a sixteenth past it plus heapSlack and at
// least memoryFloor (more room while the collector is busy, as nextRoom
// says), and restores it when stopped.
func TestHoldMemory(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != "" {
		t.Skip("GOMEMLIMIT or GOGC is set: holdMemory leaves the limit alone")
	}
	for _, tt := range []struct {
		live uint64
		room int
		want int64
	}{
		{0, 0, memoryFloor}, {100 << 20, 0, memoryFloor}, {256 << 20, 0, 256<<20 + 16<<20 + heapSlack},
		{256 << 20, 1, 256<<20 + 32<<20 + heapSlack}, {256 << 20, maxRoom, 512<<20 + heapSlack}, {100 << 20, maxRoom, 208 << 20},
	} {
		assert.Equal(t, tt.want, memoryLimit(tt.live, tt.room), "live %d, room %d", tt.live, tt.room)
	}
	for _, tt := range []struct {
		room    int
		gcShare float64
		want    int
	}{{0, 0.5, 1}, {1, 0.3, 2}, {1, 0.2, 1}, {maxRoom, 0.9, maxRoom}, {2, 0.10, 2}, {2, 0.01, 1}, {0, 0, 0}} {
		assert.Equal(t, tt.want, nextRoom(tt.room, tt.gcShare), "room %d, GC share %.2f", tt.room, tt.gcShare)
	}
	before := debug.SetMemoryLimit(-1)
	stop := holdMemory()
	time.Sleep(3 * holdPeriod)
	limit := debug.SetMemoryLimit(-1)
	stop()
	assert.Equal(t, int64(memoryFloor), limit, "the test's heap is below the floor")
	assert.Equal(t, before, debug.SetMemoryLimit(-1), "restored")
}

// TestInteropDecodedWholeMemory converts a 12000 x 12000 JPEG, which is
// decoded whole, as a subprocess (with the interop checks, make interop,
// for its half a minute): its peak memory stays within what the converter
// plans for it (and checks -max-memory against), plus the 48 MiB the
// runtime and the program take, as for streamed PNGs. The collector runs
// before the garbage of the tiles encoded doubles the heap (GOGC=100,
// which took it to 1.7 times the plan).
func TestInteropDecodedWholeMemory(t *testing.T) {
	interop.Selected(t)
	bin := buildForMeasure(t)
	dir := t.TempDir()
	input, output := filepath.Join(dir, "big.jpg"), filepath.Join(dir, "big.ome.tif")
	const size = 12000
	img := image.NewYCbCr(image.Rect(0, 0, size, size), image.YCbCrSubsampleRatio420)
	x := uint32(1)
	for _, p := range [][]byte{img.Y, img.Cb, img.Cr} { // noise: tiles that do not compress
		for i := range p {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			p[i] = byte(x)
		}
	}
	var data bytes.Buffer
	require.NoError(t, jpeg.Encode(&data, img, &jpeg.Options{Quality: 85}))
	require.NoError(t, os.WriteFile(input, data.Bytes(), 0o644))
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data.Bytes()))
	require.NoError(t, err)
	frame, err := readJPEGFrame(bytes.NewReader(data.Bytes()))
	require.NoError(t, err)
	// The file is held whole while it decodes, to count its scans.
	plan := wholeBytes("jpeg", cfg, frame) + int64(data.Len()) + limits{}.bandBytes(size, size, 3)
	img, data = nil, bytes.Buffer{}

	m := runMeasured(t, bin, input, output)
	require.Equal(t, 0, m.code, m.stderr)
	t.Logf("peak RSS %.1f MiB, planned %.1f MiB", float64(m.peakRSS)/(1<<20), float64(plan)/(1<<20))
	assert.LessOrEqual(t, m.peakRSS, plan+48<<20, "peak RSS past the plan")
}
