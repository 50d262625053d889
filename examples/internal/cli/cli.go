// Package cli is the command-line plumbing the example programs share:
// flag sets that print their usage only when asked for with -h, and the
// exit codes and one-line error reports of a run.
//
// A program exits with 0 when it succeeds or prints its usage, 2 for a
// usage error (bad flags or flag values, including those package pyramid
// rejects) and 1 for any other failure, which it reports as one line on
// stderr prefixed with its name.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/ometiff-go/ometiff/pyramid"
)

// NewFlagSet returns a flag set for the program name that prints nothing
// while parsing. Its usage is header followed by the flags' defaults.
func NewFlagSet(name, header string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), header)
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args with fs, which NewFlagSet made. Given -h, it prints
// the usage to stderr and returns flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fs.Usage()
	}
	return err
}

// ParseFlagsOnly is Parse for a program that takes only flags: an
// argument after them is an error.
func ParseFlagsOnly(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	if err := Parse(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (%s takes only flags)", fs.Arg(0), fs.Name())
	}
	return nil
}

// A UsageError is a mistake on the command line: a bad flag, flag value
// or argument.
type UsageError struct{ Err error }

// Error returns the mistake's message.
func (e UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the mistake.
func (e UsageError) Unwrap() error { return e.Err }

// Run calls work with a context cancelled on interrupt and returns the
// exit code of the error it returns, which Exit reports.
func Run(name string, stderr io.Writer, work func(ctx context.Context) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return Exit(name, stderr, work(ctx))
}

// Exit reports err, if any, as one line on stderr prefixed with the
// program's name, and returns the exit code: 0 for nil or flag.ErrHelp
// (the usage was printed), 2 for a usage error, 1 for any other error.
func Exit(name string, stderr io.Writer, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	if isUsageError(err) {
		return 2
	}
	return 1
}

// isUsageError reports whether err comes from the command line: a
// UsageError, or package pyramid's rejection of a value from a flag: an
// option, metadata or a pixel type.
func isUsageError(err error) bool {
	var u UsageError
	return errors.As(err, &u) || errors.Is(err, pyramid.ErrOption) ||
		errors.Is(err, pyramid.ErrMetadata) || errors.Is(err, pyramid.ErrPixelType)
}
