package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
)

const versionName = "ometiff version"

// runVersion prints what the program was built from: its module version
// (or commit), the Go release, and which JPEG codec it holds, for bug
// reports and to check that a build with the ometiff_turbo tag got
// libjpeg-turbo.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(versionName, "usage: ometiff version\n\n"+
		"Version prints the program's version, the Go release it was built with,\n"+
		"and the JPEG codec it encodes and decodes with: libjpeg-turbo in builds\n"+
		"with -tags ometiff_turbo and cgo, Go's otherwise.\n")
	if err := cli.ParseFlagsOnly(fs, args, stdout); err != nil {
		return cli.Exit(versionName, stderr, cli.UsageError{Err: err})
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprint(stdout, describeBuild(bi))
	return 0
}

// describeBuild says what a build holds, from the build information the
// go command records (nil if there is none). The JPEG codec follows the
// build constraint of package compress's libjpeg-turbo files: the
// ometiff_turbo tag with cgo enabled.
func describeBuild(bi *debug.BuildInfo) string {
	version, goVersion := "(devel)", runtime.Version()
	var tags []string
	var cgo, revision, modified string
	if bi != nil {
		goVersion = bi.GoVersion
		if v := bi.Main.Version; v != "" {
			version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "-tags":
				tags = strings.Split(s.Value, ",")
			case "CGO_ENABLED":
				cgo = s.Value
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	if version == "(devel)" && revision != "" {
		version = "(devel, commit " + revision[:min(len(revision), 12)]
		if modified == "true" {
			version += ", modified"
		}
		version += ")"
	}
	jpeg := "Go (image/jpeg decodes, package compress encodes)"
	if slices.Contains(tags, "ometiff_turbo") && cgo == "1" {
		jpeg = "libjpeg-turbo (cgo)"
	}
	return fmt.Sprintf("ometiff %s\n%s\nJPEG: %s\n", version, goVersion, jpeg)
}
