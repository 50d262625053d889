package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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
		stderr string
	}{
		{"flags", []string{"-n", "2"}, "", ""},
		{"help", []string{"-h"}, flag.ErrHelp.Error(), "usage: prog [flags]\n\n  -n number\n    \ta number (default 1)\n"},
		{"bad flag", []string{"-m"}, "flag provided but not defined: -m", ""},
		{"argument", []string{"-n", "2", "file"}, `unexpected argument "file" (prog takes only flags)`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			err := ParseFlagsOnly(newFlags(), tt.args, &stderr)
			if tt.err == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tt.err)
			}
			assert.Equal(t, tt.stderr, stderr.String())
		})
	}
	assert.NoError(t, Parse(newFlags(), []string{"file"}, io.Discard), "Parse takes arguments")
}
