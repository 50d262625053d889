package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDescribeBuild says what builds hold: the module's version or the
// commit, and libjpeg-turbo only with both the ometiff_turbo tag and cgo,
// as package compress's build constraint has it.
func TestDescribeBuild(t *testing.T) {
	goJPEG, turbo := "JPEG: Go (image/jpeg decodes, package compress encodes)\n", "JPEG: libjpeg-turbo (cgo)\n"
	build := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ometiff-go/ometiff", Version: version}}
		for i := 0; i < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install @version", build("v1.2.0", "CGO_ENABLED", "1"), "ometiff v1.2.0\ngo1.26.8\n" + goJPEG},
		{"libjpeg-turbo", build("v1.2.0", "-tags", "netgo,ometiff_turbo", "CGO_ENABLED", "1"), "ometiff v1.2.0\ngo1.26.8\n" + turbo},
		{"the tag without cgo", build("v1.2.0", "-tags", "ometiff_turbo", "CGO_ENABLED", "0"), "ometiff v1.2.0\ngo1.26.8\n" + goJPEG},
		{"a tag that only contains the name", build("v1.2.0", "-tags", "ometiff_turbo_not", "CGO_ENABLED", "1"), "ometiff v1.2.0\ngo1.26.8\n" + goJPEG},
		{"a checkout", build("(devel)", "vcs.revision", "2df7fac0123456789abcdef", "vcs.modified", "true"), "ometiff (devel, commit 2df7fac01234, modified)\ngo1.26.8\n" + goJPEG},
		{"a checkout without version control", build("(devel)"), "ometiff (devel)\ngo1.26.8\n" + goJPEG},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, describeBuild(tt.bi))
		})
	}
	assert.Contains(t, describeBuild(nil), "ometiff (devel)\ngo1.")
}
