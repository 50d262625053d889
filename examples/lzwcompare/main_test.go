package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
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

// TestParseArgs checks the flags: values out of range are usage errors
// (exit code 2) naming their flag, -h is not an error (exit code 0).
func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want config
		msg  string // "": no error
	}{
		{nil, config{size: 8192, tile: 256, runs: 3}, ""},
		{[]string{"-size", "512", "-tile", "128", "-runs", "2", "-dir", "d"}, config{size: 512, tile: 128, runs: 2, dir: "d"}, ""},
		{[]string{"-runs", "0"}, config{}, "-runs 0"},
		{[]string{"-runs", "-1"}, config{}, "-runs -1"},
		{[]string{"-tile", "0"}, config{}, "-tile 0"},
		{[]string{"-tile", "-16"}, config{}, "-tile -16"},
		{[]string{"-tile", "24"}, config{}, "-tile 24"},
		{[]string{"-size", "0"}, config{}, "-size 0"},
		{[]string{"-size", "-256"}, config{}, "-size -256"},
		{[]string{"-size", "300"}, config{}, "-size 300: want a multiple of -tile 256"},
		{[]string{"-bogus"}, config{}, "-bogus"},
		{[]string{"extra"}, config{}, "extra"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cfg, err := parseArgs(tc.args, io.Discard)
			if tc.msg == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, cfg)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Equal(t, 2, cli.Exit("lzwcompare", io.Discard, cli.UsageError{Err: err}))
		})
	}
}

func TestParseArgsHelp(t *testing.T) {
	var out strings.Builder
	_, err := parseArgs([]string{"-h"}, &out)
	assert.True(t, errors.Is(err, flag.ErrHelp))
	assert.Equal(t, 0, cli.Exit("lzwcompare", io.Discard, cli.UsageError{Err: err}))
	assert.Contains(t, out.String(), "-runs")
}
