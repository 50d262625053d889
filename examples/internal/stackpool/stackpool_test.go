package stackpool

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewPlanesDiffer(t *testing.T) {
	pool := New(32, Size)
	seen := map[string]int{}
	for i, p := range pool {
		require.Len(t, p, 2*32*32)
		if j, ok := seen[string(p)]; ok {
			t.Fatalf("pool planes %d and %d are equal", j, i)
		}
		seen[string(p)] = i
	}
}
