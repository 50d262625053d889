package pyramid

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigDocs make OME-XML documents of about n bytes of the two shapes that
// grow large: an image with a Plane element per plane (a long time-lapse),
// and annotations (a MapAnnotation of many entries, one a line).
var bigDocs = map[string]func(n int) []byte{
	"planes": func(n int) []byte {
		var b bytes.Buffer
		b.Grow(n + 1024)
		b.WriteString(omeRoot + `<Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="1" SizeT="16777216"><TiffData/>`)
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, `<Plane TheZ="0" TheC="0" TheT="%d" DeltaT="%d.25" DeltaTUnit="s" ExposureTime="0.1" PositionX="1.5"/>`, i, i)
		}
		b.WriteString(`</Pixels></Image>` + omeEnd)
		return b.Bytes()
	},
	"annotations": func(n int) []byte {
		var b bytes.Buffer
		b.Grow(n + 1024)
		b.WriteString(omeRoot + `<StructuredAnnotations><MapAnnotation ID="Annotation:0"><Value>` + "\n")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "  <M K=\"key %d\">a value of some length for key %d &amp; more</M>\n", i, i)
		}
		b.WriteString(`</Value></MapAnnotation></StructuredAnnotations>` + omeEnd)
		return b.Bytes()
	},
}

// TestParseOMEMemory: the tree of a parsed document takes at most as much
// memory as the document itself (it holds the values and text once, and
// 28 and 12 bytes an element and an attribute).
func TestParseOMEMemory(t *testing.T) {
	for name, doc := range bigDocs {
		t.Run(name, func(t *testing.T) {
			data := doc(2 << 20)
			live := treeSize(t, data)
			t.Logf("%d bytes of XML, a tree of %d bytes", len(data), live)
			assert.LessOrEqual(t, live, int64(len(data)), "the tree of %d bytes of XML", len(data))
		})
	}
}

// treeSize parses data and returns the memory its tree keeps.
func treeSize(t testing.TB, data []byte) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := ParseOME(data)
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(d)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// BenchmarkParseOME parses documents of the two large shapes; it reports
// the tree's memory, and the peak RSS that parsing a document just under
// MaxOMEXMLSize adds to a fresh process, per byte of XML.
func BenchmarkParseOME(b *testing.B) {
	for name, doc := range bigDocs {
		b.Run(name, func(b *testing.B) {
			data := doc(16 << 20)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseOME(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(treeSize(b, data))/float64(len(data)), "tree-B/B")
			b.ReportMetric(peakRSSRatio(b, name), "peak-RSS-B/B")
		})
	}
}

// peakRSSRatio parses a document of shape name just under MaxOMEXMLSize in
// a fresh process (this test binary, running TestParseOMEPeakChild) and
// returns the memory parsing added to that process's peak RSS, divided by
// the document's size.
func peakRSSRatio(b *testing.B, name string) float64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestParseOMEPeakChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OMETIFF_OME_PEAK_CHILD="+name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	var size, before, after float64
	if _, err := fmt.Sscanf(string(out), "%g %g %g", &size, &before, &after); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	return (after - before) / size
}

// TestParseOMEPeakChild is BenchmarkParseOME's child process: it prints
// the document's size and the process's peak RSS (VmHWM, for this process
// alone) before and after parsing it.
func TestParseOMEPeakChild(t *testing.T) {
	name := os.Getenv("OMETIFF_OME_PEAK_CHILD")
	if name == "" {
		t.Skip("the child of BenchmarkParseOME")
	}
	data := bigDocs[name](MaxOMEXMLSize - 1<<20)
	runtime.GC()
	before := vmHWM(t)
	d, err := ParseOME(data)
	require.NoError(t, err)
	fmt.Printf("%d %d %d\n", len(data), before, vmHWM(t))
	runtime.KeepAlive(d)
}

// vmHWM returns the process's peak resident memory, in bytes.
func vmHWM(t *testing.T) int64 {
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// BenchmarkOMEXMLImages builds the OME-XML of files of many one-plane
// images, each with a map annotation, and reports the time per image,
// which should not grow with their number (it grew as their number).
func BenchmarkOMEXMLImages(b *testing.B) {
	spec, err := ImageSpec{SizeX: 16, SizeY: 16, Annotations: []KeyValue{{Key: "Software", Value: "tifffile"}}}.normalized()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000, 10000, 40000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			images := make([]omeImage, n)
			for i := range images {
				images[i] = omeImage{spec: spec, firstIFD: i}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := omeXML(images, nil, "urn:uuid:00000000-0000-4000-8000-000000000000", "f.ome.tif"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/image")
		})
	}
}
