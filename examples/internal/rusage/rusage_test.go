package rusage

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrint(t *testing.T) {
	var out strings.Builder
	before := Usage{peakRSS: 1 << 20, cpu: time.Second}
	after := Usage{peakRSS: 300 << 20, cpu: 4 * time.Second}
	Print(&out, before, after, 2*time.Second)
	assert.Equal(t, "cpu     3.00 s user+system, 1.5 cores busy on average\nmemory  300 MiB peak RSS\n", out.String())
}

func TestPrintUnknown(t *testing.T) {
	var out strings.Builder
	Print(&out, Usage{}, Usage{}, time.Second)
	assert.Empty(t, out.String())
}

func TestSelf(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the system does not say")
	}
	assert.Positive(t, Self().peakRSS)
}

func TestOf(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the system does not say")
	}
	cmd := exec.Command("sh", "-c", "true")
	require.NoError(t, cmd.Run())
	assert.Positive(t, Of(cmd.ProcessState).PeakRSS())
}
