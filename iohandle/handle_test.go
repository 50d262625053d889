package iohandle

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStatsString: the counts by name, singular where one.
func TestStatsString(t *testing.T) {
	for _, tc := range []struct {
		s    Stats
		want string
	}{
		{Stats{}, "0 appends, 0 patches, 0 bytes, 0 syncs, 0 writebacks"},
		{Stats{Appends: 12, DirectWrites: 3, Patches: 1, Bytes: 25165824, Syncs: 1, Writebacks: 4}, "12 appends (3 direct), 1 patch, 25165824 bytes, 1 sync, 4 writebacks"},
		{Stats{Appends: 1, Patches: 2, Bytes: 1, Syncs: 2, Writebacks: 1}, "1 append, 2 patches, 1 byte, 2 syncs, 1 writeback"},
	} {
		assert.Equal(t, tc.want, tc.s.String())
		assert.Equal(t, tc.want, fmt.Sprint(tc.s), "fmt prints it by name")
	}
}
