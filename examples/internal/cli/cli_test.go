package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/pyramid"
)

func TestExit(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, 0, ""},
		{"help", UsageError{flag.ErrHelp}, 0, ""},
		{"usage error", UsageError{errors.New("-size 0: want at least 1")}, 2, "prog: -size 0: want at least 1\n"},
		{"bad option", fmt.Errorf("writing: %w", pyramid.ErrOption), 2, "prog: writing: pyramid: bad option\n"},
		{"bad metadata", pyramid.ErrMetadata, 2, "prog: pyramid: bad metadata\n"},
		{"bad pixel type", pyramid.ErrPixelType, 2, "prog: pyramid: unsupported pixel type\n"},
		{"failure", errors.New("disk full"), 1, "prog: disk full\n"},
		{"the input's metadata", fmt.Errorf("in.tif: %w", InputError{fmt.Errorf("source: %w", pyramid.ErrMetadata)}), 1, "prog: in.tif: source: pyramid: bad metadata\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			assert.Equal(t, tt.code, Exit("prog", &stderr, tt.err))
			assert.Equal(t, tt.stderr, stderr.String())
		})
	}
}

func TestRunPassesAContext(t *testing.T) {
	var stderr strings.Builder
	code := Run("prog", &stderr, func(ctx context.Context) error { return ctx.Err() })
	assert.Equal(t, 0, code)
	assert.Empty(t, stderr.String())
}

func TestParse(t *testing.T) {
	newFlags := func() *flag.FlagSet {
		fs := NewFlagSet("prog", "usage: prog [flags]\n\n")
		fs.Int("n", 1, "a `number`")
		return fs
	}
	tests := []struct {
		name   string
		args   []string
		err    string
		stdout string // where -h prints the usage
	}{
		{"flags", []string{"-n", "2"}, "", ""},
		{"help", []string{"-h"}, flag.ErrHelp.Error(), "usage: prog [flags]\n\n  -n number\n    \ta number (default 1)\n"},
		{"bad flag", []string{"-m"}, "flag provided but not defined: -m", ""},
		{"argument", []string{"-n", "2", "file"}, `unexpected argument "file" (prog takes only flags)`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout strings.Builder
			err := ParseFlagsOnly(newFlags(), tt.args, &stdout)
			if tt.err == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tt.err)
			}
			assert.Equal(t, tt.stdout, stdout.String())
		})
	}
	assert.NoError(t, Parse(newFlags(), []string{"file"}, io.Discard), "Parse takes arguments")
}

// TestParseDoubleDashValue: "--" as a flag's value is that value, not the
// end of the flags.
func TestParseDoubleDashValue(t *testing.T) {
	fs := NewFlagSet("prog", "usage\n")
	str := fs.String("s", "", "")
	v := fs.Bool("v", false, "")
	require.NoError(t, Parse(fs, []string{"-s", "--", "a", "-v"}, io.Discard))
	assert.Equal(t, "--", *str)
	assert.True(t, *v, "-v after the argument is a flag")
	assert.Equal(t, []string{"a"}, fs.Args())
}

// TestParseInterspersed checks that Parse takes flags after and between
// the arguments, and none after "--".
func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		name string
		args []string
		n    int
		v    bool
		rest []string
		err  string
	}{
		{"flags first", []string{"-n", "2", "a", "b"}, 2, false, []string{"a", "b"}, ""},
		{"flags last", []string{"a", "b", "-n", "3", "-v"}, 3, true, []string{"a", "b"}, ""},
		{"flags between", []string{"a", "-n=4", "b", "-v"}, 4, true, []string{"a", "b"}, ""},
		{"stdin", []string{"-", "b", "-n", "5"}, 5, false, []string{"-", "b"}, ""},
		{"double dash", []string{"a", "--", "-n", "b"}, 1, false, []string{"a", "-n", "b"}, ""},
		{"double dash first", []string{"--", "-v"}, 1, false, []string{"-v"}, ""},
		{"none", nil, 1, false, []string{}, ""},
		{"negative numbers", []string{"-1", "a", "-2.5", "-n", "6"}, 6, false, []string{"-1", "a", "-2.5"}, ""},
		{"a negative number after a bool flag", []string{"a", "-v", "-1"}, 1, true, []string{"a", "-1"}, ""},
		{"a negative number after flags first", []string{"-v", "-n", "2", "-1", "a"}, 2, true, []string{"-1", "a"}, ""},
		{"a negative value", []string{"a", "-n", "-3"}, -3, false, []string{"a"}, ""},
		{"two dashes and an equals sign", []string{"--n=7", "a", "--v"}, 7, true, []string{"a"}, ""},
		{"bad flag last", []string{"a", "b", "-m"}, 1, false, nil, "flag provided but not defined: -m"},
		{"missing value", []string{"a", "-n"}, 1, false, nil, "flag needs an argument: -n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewFlagSet("prog", "usage: prog [flags] file...\n\n")
			n := fs.Int("n", 1, "a `number`")
			v := fs.Bool("v", false, "verbose")
			err := Parse(fs, tt.args, io.Discard)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.n, *n)
			assert.Equal(t, tt.v, *v)
			assert.Equal(t, tt.rest, fs.Args())
		})
	}
}

// FuzzParse parses arguments (NUL-separated) with a string, an int and a
// bool flag: never a panic; the arguments Parse returns are arguments of
// the input, in their order; and an input without a flag is returned
// whole.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"a\x00-n\x003", "-s\x00--\x00a\x00-v", "--\x00-v", "-1\x00-v\x00-2.5", "a\x00-n", "-h", "-n=-4\x00b", "-\x00--s=x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		fs := NewFlagSet("prog", "usage\n")
		fs.String("s", "", "")
		fs.Int("n", 0, "")
		fs.Bool("v", false, "")
		if err := Parse(fs, args, io.Discard); err != nil {
			return
		}
		i := 0
		for _, a := range fs.Args() {
			for i < len(args) && args[i] != a {
				i++
			}
			require.Less(t, i, len(args), "argument %q not in the input, or out of its order", a)
			i++
		}
		if !slices.ContainsFunc(args, func(a string) bool { return len(a) > 1 && a[0] == '-' }) {
			assert.Equal(t, args, fs.Args())
		}
	})
}
