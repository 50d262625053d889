//go:build ometiff_turbo

package compress

import "testing"

// TestTurboBuild fails a build with the ometiff_turbo tag that has no
// libjpeg-turbo in it, as happens without cgo: its tests would otherwise
// be left out silently and the pure-Go codecs tested in their place.
func TestTurboBuild(t *testing.T) {
	if jpegTurbo == nil || jpegTurboDecode == nil {
		t.Fatal("built with the ometiff_turbo tag but without libjpeg-turbo: set CGO_ENABLED=1")
	}
}
