package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
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
	if err := cli.Parse(fs, args, stderr); err != nil {
		return cli.Exit(inspectName, stderr, cli.UsageError{Err: err})
	}
	if fs.NArg() == 0 {
		return cli.Exit(inspectName, stderr, cli.UsageError{Err: errors.New("no file given (usage: ometiff inspect [-fields] file...)")})
	}
	code := 0
	for i, path := range fs.Args() {
		if fs.NArg() > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "==> %s <==\n", path)
		}
		if err := inspect(stdout, path, opts); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", inspectName, err)
			code = 1
		}
	}
	return code
}

// inspect describes the file at path.
func inspect(w io.Writer, path string, opts pyramid.InspectOptions) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	if err := pyramid.Inspect(w, f, info.Size(), opts); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
