package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestMedian checks the median of odd and even counts: the mean of the two
// middle values for an even one.
func TestMedian(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, m := range v {
			out = append(out, time.Duration(m)*time.Millisecond)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want time.Duration
	}{
		{"one", ms(7), 7 * time.Millisecond},
		{"odd", ms(9, 1, 5), 5 * time.Millisecond},
		{"two", ms(10, 20), 15 * time.Millisecond},
		{"even", ms(40, 10, 20, 80), 30 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, median(tc.in))
		})
	}
}
