// Package cli is the command-line plumbing the example programs share:
// flag sets that print their usage only when asked for with -h, the exit
// codes and one-line error reports of a run, and its handling of signals.
//
// A program exits with 0 when it succeeds or prints its usage, 2 for a
// usage error (bad flags or flag values, including those package pyramid
// rejects) and 1 for any other failure, which it reports as one line on
// stderr prefixed with its name.
//
// A program that does its work through Run treats SIGTERM, which batch
// schedulers such as Slurm and Kubernetes send at a time limit, and SIGHUP
// (its terminal closed) like SIGINT (Ctrl-C): the first one cancels the
// work, which discards its output (a writer from package pyramid removes
// its temporary file, if it has one), and the program exits with 128 plus
// the signal's number, as a shell reports a process the signal killed: 130
// for SIGINT, 143 for SIGTERM. A signal ignored when the program started
// (SIGHUP under nohup, SIGINT in a job a script started in the
// background) stays ignored. A second signal kills the program at once,
// and so does the first when the work has not ended 10 seconds after it
// (blocked reading a pipe that sends nothing, say), losing whatever it had
// not finished writing. On Linux that still leaves no partial output (see
// package iohandle); elsewhere a temporary file may stay until the next
// run for the same output. An output already named when the program is
// ended that way stays, complete, though the exit status says a signal:
// naming it is the last step of writing, and nothing can undo it.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

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
// the usage to stdout, since it was asked for (as vips and gdal print
// theirs, for a pager), and returns flag.ErrHelp.
//
// Flags may follow the arguments, as vips and gdal take them
// ("in.tif out.ome.tif -compression jpeg"); "--" ends the flags, for an
// argument that starts with "-". fs.Args() returns the arguments.
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
	}
	return err
}

// parseInterspersed parses the flags among args, which package flag
// stops at the first argument. It walks args one at a time: a flag, with
// the next argument as its value unless it is a bool flag or says
// "=value", goes to fs; "-" and a negative number (a file index) are
// arguments; "--" in the place of a flag ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var positional []string
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			positional, args = append(positional, args[1:]...), nil
			continue
		case len(a) < 2 || a[0] != '-' || isNumber(a[1:]):
			positional, args = append(positional, a), args[1:]
			continue
		}
		n := 1
		if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") {
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
				n = min(2, len(args))
			}
		}
		if err := fs.Parse(args[:n]); err != nil {
			return err
		}
		args = args[n:]
	}
	// Parsing "--" alone sets fs.Args() to what follows it.
	return fs.Parse(append([]string{"--"}, positional...))
}

// isBoolFlag reports whether f takes no value, as package flag decides.
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// isNumber reports whether s is a decimal number.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && s[0] >= '0' && s[0] <= '9'
}

// ParseFlagsOnly is Parse for a program that takes only flags: an
// argument after them is an error.
func ParseFlagsOnly(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if err := Parse(fs, args, stdout); err != nil {
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

// An InputError is a problem with the input a program reads, not with its
// command line, even when it wraps an error of package pyramid that
// would otherwise be taken for a flag value the writer rejects (an input
// file's OME-XML the writer cannot carry matches pyramid.ErrMetadata).
type InputError struct{ Err error }

// Error returns the problem's message.
func (e InputError) Error() string { return e.Err.Error() }

// Unwrap returns the problem.
func (e InputError) Unwrap() error { return e.Err }

// Run calls work with a context that SIGINT, SIGTERM or SIGHUP cancels
// (those not ignored when the program started), and returns the exit code
// of the error work returns, which Exit reports. When a signal came and
// work failed (it stopped for the signal), Run reports "stopped by
// SIGTERM" (or SIGINT, SIGHUP) instead, and returns 128 plus the signal's
// number. Work that succeeds despite a signal, because it was done before
// it looked, succeeds, unless it took longer than graceTime (or a second
// signal came): the program is ended then.
func Run(name string, stderr io.Writer, work func(ctx context.Context) error) int {
	ctx, stop := notifyContext(context.Background(), func(sig os.Signal, late bool) {
		if late {
			fmt.Fprintf(stderr, "%s: %v, and not stopped %v after it: ended\n", name, stoppedError{sig}, graceTime)
		}
		kill(sig)
	})
	defer stop()
	err := work(ctx)
	var stopped stoppedError
	if err == nil || !errors.As(context.Cause(ctx), &stopped) {
		return Exit(name, stderr, err)
	}
	if errors.Is(err, context.Canceled) {
		err = stopped
	} else {
		err = fmt.Errorf("%w: %w", stopped, err)
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return stopped.exitCode()
}

// stopSignals are the signals that cancel Run's work: SIGINT, SIGTERM and
// SIGHUP, but those ignored when the program started, which Notify would
// otherwise catch (nohup's SIGHUP, a background job's SIGINT).
var stopSignals = func() []os.Signal {
	var out []os.Signal
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			out = append(out, sig)
		}
	}
	return out
}()

// graceTime is how long the work has to end after the first signal.
var graceTime = 10 * time.Second

// notifyContext returns a context that the first of stopSignals cancels
// with a stoppedError as its cause. A second signal, or the first one's
// graceTime passing, calls end (with late true for the latter). stop
// releases the signals.
func notifyContext(parent context.Context, end func(sig os.Signal, late bool)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, stopSignals...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var sig os.Signal
		select {
		case sig = <-signals:
			cancel(stoppedError{sig})
		case <-done:
			return
		}
		grace := time.NewTimer(graceTime)
		defer grace.Stop()
		select {
		case again := <-signals:
			end(again, false)
		case <-grace.C:
			end(sig, true)
		case <-done:
		}
	})
	return ctx, func() {
		signal.Stop(signals)
		close(done)
		wg.Wait()
		cancel(nil)
	}
}

// kill ends the program as sig does by default: it gives the signal back
// its default action and sends it again, and exits with 128 plus the
// signal's number should that action not be taken.
func kill(sig os.Signal) {
	signal.Reset(sig)
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Signal(sig)
		time.Sleep(100 * time.Millisecond) // delivery is asynchronous
	}
	os.Exit(stoppedError{sig}.exitCode())
}

// stoppedError is the cause of a context that a signal cancelled.
type stoppedError struct{ sig os.Signal }

// Error names the signal.
func (e stoppedError) Error() string {
	name := e.sig.String()
	switch e.sig {
	case os.Interrupt:
		name = "SIGINT"
	case syscall.SIGTERM:
		name = "SIGTERM"
	case syscall.SIGHUP:
		name = "SIGHUP"
	}
	return "stopped by " + name
}

// Is reports a stoppedError as a context.Canceled, as the context's Err
// is, for work that returns the cause of its context's end.
func (e stoppedError) Is(target error) bool { return target == context.Canceled }

// exitCode is 128 plus the signal's number, or 1 where signals have none.
func (e stoppedError) exitCode() int {
	if n, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
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
// option, metadata or a pixel type; never an InputError.
func isUsageError(err error) bool {
	var u UsageError
	var in InputError
	if errors.As(err, &in) {
		return false
	}
	return errors.As(err, &u) || errors.Is(err, pyramid.ErrOption) ||
		errors.Is(err, pyramid.ErrMetadata) || errors.Is(err, pyramid.ErrPixelType)
}

// Plural writes n nouns: "1 file", "2 files".
func Plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// MaxWorkers bounds the -workers of the programs: each worker holds the
// tiles it encodes, and beyond the CPUs more of them only take memory and
// time.
const MaxWorkers = 256

// CheckWorkers refuses a -workers value below 0 or above MaxWorkers.
func CheckWorkers(workers int) error {
	if workers < 0 || workers > MaxWorkers {
		return fmt.Errorf("-workers %d: want 0 (one per CPU) to %d", workers, MaxWorkers)
	}
	return nil
}

// TIFFExtensions are the extensions of an output, after ".ome" or not:
// those of TIFF and BigTIFF files that Bio-Formats' OME-TIFF reader takes
// by name.
var TIFFExtensions = []string{".tif", ".tiff", ".btf", ".tf2", ".tf8"}

// CheckOutputName refuses an output whose name says it is not a TIFF
// file ("out.png", "out"): the file written is OME-TIFF whatever its
// name, and a viewer that goes by the name would not open it. program
// names the writer in the message.
func CheckOutputName(program, name string) error {
	ext := strings.ToLower(filepath.Ext(name))
	if slices.Contains(TIFFExtensions, ext) {
		return nil
	}
	if ext == "" {
		return fmt.Errorf("output %q has no extension: %s writes OME-TIFF; name it .ome.tif", name, program)
	}
	return fmt.Errorf("output %q: %s writes OME-TIFF, not %s; name it .ome.tif", name, program, ext)
}
