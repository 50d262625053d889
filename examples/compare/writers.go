//go:build linux

package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// tifffileScript is the Python side of the tifffile peer.
//
//go:embed tifffile_peer.py
var tifffileScript []byte

// A task is one run of a writer: the workload, the writer's input
// (prepared from the raw file) and the output path.
type task struct {
	w       workload
	in, out string
	workers int
}

// A writer is a program the comparison runs on the workloads it can do.
type writer struct {
	name    string
	version string // what it is and does, for the report
	ext     string // of its output file
	can     func(workload) bool
	// prepare converts the raw input, untimed, into the input the writer
	// reads and returns its path; nil means the raw file itself.
	prepare func(w workload, raw string) (string, error)
	// command returns the argv of a run and variables added to its
	// environment.
	command func(t task) (argv, env []string)
	// printsWrites says the program prints its OS write calls on stdout.
	printsWrites bool
}

// Writer names, in table order.
const (
	ours     = "ometiff"
	vips     = "vips"
	tifffile = "tifffile"
	gdal     = "gdal"
	dd       = "dd"
)

// peerNames are the peers compare knows, in table order.
var peerNames = []string{vips, tifffile, gdal, dd}

// findWriters returns our writer and the peers installed on the machine,
// and a line for each peer that is not. The tifffile script is written to
// dir.
func findWriters(python, dir string) ([]writer, []string) {
	writers := []writer{oursWriter()}
	var skipped []string
	for _, find := range []func() (writer, error){
		findVips,
		func() (writer, error) { return findTifffile(python, dir) },
		findGDAL,
		findDD,
	} {
		w, err := find()
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		writers = append(writers, w)
	}
	return writers, skipped
}

// oursWriter re-executes this program as the worker.
func oursWriter() writer {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return writer{
		name: ours, version: "package pyramid of this tree; Image.ReadPlanes reads the raw file (planes that are their own tile straight into the 2 MiB output buffer); no fsync; compressed output with iohandle.Options.DirectIO", ext: ".ome.tif", printsWrites: true,
		can: func(workload) bool { return true },
		command: func(t task) ([]string, []string) {
			spec, _ := json.Marshal(job{Workload: t.w, In: t.in, Out: t.out, Workers: t.workers})
			return []string{exe}, []string{jobEnv + "=" + string(spec)}
		},
	}
}

// findVips finds libvips, which reads a .v file made by vips rawload.
func findVips() (writer, error) {
	version, err := versionOf("vips", "--version")
	if err != nil {
		return writer{}, err
	}
	return writer{
		name: vips, version: version + "; reads a .v file from vips rawload; a stack as pages (--page-height); not huge", ext: ".tif",
		can:     func(w workload) bool { return w.Kind != hugeKind },
		prepare: vipsInput,
		command: func(t task) ([]string, []string) {
			argv := []string{"vips", "tiffsave", t.in, t.out, "--tile",
				"--tile-width", strconv.Itoa(t.w.Tile), "--tile-height", strconv.Itoa(t.w.Tile),
				"--compression", t.w.Compression}
			if t.w.Quality > 0 {
				argv = append(argv, "--Q", strconv.Itoa(t.w.Quality))
			}
			if t.w.Kind == stackKind {
				return append(argv, "--page-height", strconv.Itoa(t.w.Size)), nil
			}
			return append(argv, "--pyramid", "--subifd"), nil
		},
	}, nil
}

// vipsInput loads the raw file into libvips's native format, untimed. A
// stack becomes one tall image whose pages are the planes.
func vipsInput(w workload, raw string) (string, error) {
	out := strings.TrimSuffix(raw, ".raw") + ".v"
	format, interpretation, bands := "ushort", "grey16", 1
	if w.RGB {
		format, interpretation, bands = "uchar", "srgb", 3
	}
	return out, makeOnce(out, "vips", "rawload", raw, out, strconv.Itoa(w.Size), strconv.Itoa(w.Size*w.planes()),
		strconv.Itoa(bands), "--format", format, "--interpretation", interpretation)
}

// findTifffile finds tifffile and numpy in python's site packages.
func findTifffile(python, dir string) (writer, error) {
	version, err := versionOf(python, "-c", "import numpy, tifffile; print('tifffile', tifffile.__version__, 'numpy', numpy.__version__)")
	if err != nil {
		return writer{}, fmt.Errorf("tifffile: %w", err)
	}
	script := filepath.Join(dir, "tifffile_peer.py")
	if err := os.WriteFile(script, tifffileScript, 0o644); err != nil {
		return writer{}, fmt.Errorf("tifffile: %w", err)
	}
	return writer{
		name: tifffile, version: version + " via " + python + "; reads the raw file; deflate and none only (no imagecodecs)", ext: ".ome.tif",
		// Without imagecodecs tifffile has zlib and no codec else.
		can: func(w workload) bool {
			return w.Kind != hugeKind && (w.Compression == "deflate" || w.Compression == "none")
		},
		command: func(t task) ([]string, []string) {
			spec, _ := json.Marshal(job{Workload: t.w, In: t.in, Out: t.out, Workers: t.workers})
			return []string{python, script, "write", string(spec)}, nil
		},
	}, nil
}

// findGDAL finds gdal_translate, which reads a VRT over the raw file.
func findGDAL() (writer, error) {
	version, err := versionOf("gdal_translate", "--version")
	if err != nil {
		return writer{}, err
	}
	return writer{
		name: gdal, version: version + "; COG driver, reads a VRT over the raw file; slides only", ext: ".tif",
		can:     func(w workload) bool { return w.Kind == slideKind },
		prepare: gdalInput,
		command: func(t task) ([]string, []string) {
			argv := []string{"gdal_translate", "-q", "-of", "COG", "-co", "COMPRESS=" + strings.ToUpper(t.w.Compression),
				"-co", "BLOCKSIZE=" + strconv.Itoa(t.w.Tile), "-co", "NUM_THREADS=" + strconv.Itoa(t.workers),
				"-co", "RESAMPLING=AVERAGE"}
			switch {
			case t.w.Quality > 0:
				argv = append(argv, "-co", "QUALITY="+strconv.Itoa(t.w.Quality))
			case t.w.Compression != "none":
				argv = append(argv, "-co", "PREDICTOR=2")
			}
			return append(argv, t.in, t.out), nil
		},
	}, nil
}

// gdalInput writes a VRT that maps the raw file's bytes as bands.
func gdalInput(w workload, raw string) (string, error) {
	out := strings.TrimSuffix(raw, ".raw") + ".vrt"
	var b strings.Builder
	fmt.Fprintf(&b, "<VRTDataset rasterXSize=\"%d\" rasterYSize=\"%d\">\n", w.Size, w.Size)
	dataType, colors := "UInt16", []string{"Gray"}
	if w.RGB {
		dataType, colors = "Byte", []string{"Red", "Green", "Blue"}
	}
	pixel := w.samples() * w.pixelType().Size()
	for i, color := range colors {
		fmt.Fprintf(&b, "  <VRTRasterBand dataType=%q band=\"%d\" subClass=\"VRTRawRasterBand\">\n"+
			"    <ColorInterp>%s</ColorInterp>\n"+
			"    <SourceFilename relativeToVRT=\"1\">%s</SourceFilename>\n"+
			"    <ImageOffset>%d</ImageOffset><PixelOffset>%d</PixelOffset><LineOffset>%d</LineOffset><ByteOrder>LSB</ByteOrder>\n"+
			"  </VRTRasterBand>\n", dataType, i+1, color, filepath.Base(raw), i*w.pixelType().Size(), pixel, pixel*w.Size)
	}
	b.WriteString("</VRTDataset>\n")
	return out, os.WriteFile(out, []byte(b.String()), 0o644)
}

// findDD finds dd, which copies the raw bytes: the floor.
func findDD() (writer, error) {
	version, err := versionOf("dd", "--version")
	if err != nil {
		return writer{}, err
	}
	return writer{
		name: dd, version: version + "; copies the raw file, bs=4M (the floor); not huge", ext: ".raw",
		can: func(w workload) bool { return w.Kind != hugeKind },
		command: func(t task) ([]string, []string) {
			return []string{"dd", "if=" + t.in, "of=" + t.out, "bs=4M", "status=none"}, nil
		},
	}, nil
}

// versionOf runs a program's version command and returns the first line
// of its output, or why the program is not there.
func versionOf(name string, args ...string) (string, error) {
	if _, err := exec.LookPath(name); err != nil {
		return "", fmt.Errorf("%s: not installed", name)
	}
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", name, err, lastLine(out))
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first, nil
}

// makeOnce runs argv to create path unless an earlier call did.
func makeOnce(path string, argv ...string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", argv[0], err, lastLine(out))
	}
	return nil
}

// lastLine is the last non-empty line of a program's output.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
