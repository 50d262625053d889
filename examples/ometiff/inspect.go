package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// inspectName prefixes the inspect command's error lines.
const inspectName = "ometiff inspect"

// runInspect is the inspect command: it describes every file named in
// args on stdout and reports each failure as one line on stderr. It
// returns the exit code: 0, 1 if a file could not be described, 2 for a
// usage error.
func runInspect(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(inspectName, "usage: ometiff inspect [-fields] file...\n\n"+
		"Inspect prints the structure of TIFF and OME-TIFF files: the header, a\n"+
		"summary of the OME-XML and every directory with its SubIFDs. The text\n"+
		"depends only on the files' bytes.\n\n")
	var opts pyramid.InspectOptions
	fs.BoolVar(&opts.Fields, "fields", false, "list every field of every directory")
	if err := cli.Parse(fs, args, stdout); err != nil {
		return cli.Exit(inspectName, stderr, cli.UsageError{Err: err})
	}
	return eachFile(inspectName, "ometiff inspect [-fields] file...", fs.Args(), stdout, stderr,
		func(path string) error { return inspect(stdout, path, opts) })
}

// eachFile runs describe on every file named, for the command name of
// the usage given: each description headed by the file's name when there
// are several, each failure reported as one line on stderr. It returns
// the exit code: 0, 1 if a file could not be described, 2 if none was
// named.
func eachFile(name, usage string, paths []string, stdout, stderr io.Writer, describe func(path string) error) int {
	if len(paths) == 0 {
		return cli.Exit(name, stderr, cli.UsageError{Err: fmt.Errorf("no file given (usage: %s)", usage)})
	}
	code := 0
	for i, path := range paths {
		if len(paths) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "==> %s <==\n", path)
		}
		err := errors.New("-: standard input is not read as such: name the file (a file of that name is ./-)")
		if path != "-" {
			err = describe(path)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			code = 1
		}
	}
	return code
}

// inspect describes the file at path.
func inspect(w io.Writer, path string, opts pyramid.InspectOptions) error {
	// Opening a named pipe would block until a writer comes.
	f, err := tiff.OpenRegular(path)
	if errors.Is(err, tiff.ErrNotRegular) {
		return fmt.Errorf("%s: not a regular file", path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if err := pyramid.Inspect(w, f, info.Size(), opts); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
