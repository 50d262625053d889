package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// runCheck is the check command.
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("dataset check", "usage: dataset check PLAN DIR | dataset check FILE\n\n"+
		"Check checks a written dataset: every file there, with the UUID and the\n"+
		"metadata the dataset says, every plane in one file. Given the plan, it\n"+
		"checks the files of DIR against it; given a file of the dataset (a TIFF\n"+
		"or the companion), against the metadata that file holds or points to.\n\n")
	if err := cli.Parse(fs, args, stdout); err != nil {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: err})
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return cli.Exit("dataset", stderr, cli.UsageError{Err: errors.New("check takes a plan and a directory, or a file")})
	}
	return cli.Run("dataset", stderr, func(context.Context) error {
		var (
			report pyramid.DatasetReport
			err    error
		)
		from := "" // what the metadata was read from, as printed
		if fs.NArg() == 2 {
			d, lerr := loadPlan(fs.Arg(0))
			if lerr != nil {
				return lerr
			}
			report, err = d.Check(fs.Arg(1))
			from = fs.Arg(0)
		} else {
			if isPlan(fs.Arg(0)) {
				return cli.UsageError{Err: fmt.Errorf("%s is a plan: give the dataset's directory after it (check PLAN DIR)", fs.Arg(0))}
			}
			report, err = pyramid.CheckDataset(fs.Arg(0))
			from = report.Metadata
		}
		var problems *pyramid.DatasetError
		if err != nil && !errors.As(err, &problems) {
			return err
		}
		printReport(stdout, from, report, problems)
		if problems != nil {
			return fmt.Errorf("%s: incomplete: %s", problems.Path, cli.Plural(int64(len(problems.Problems)), "problem"))
		}
		return nil
	})
}

// printReport prints a line per file and one for the whole, then a line
// per problem. When no metadata was read (the file given, or the
// companion it points to, is not one of a dataset), only the problems are
// printed.
func printReport(w io.Writer, from string, r pyramid.DatasetReport, problems *pyramid.DatasetError) {
	if r.Metadata == "" && problems != nil {
		for _, p := range problems.Problems {
			fmt.Fprintln(w, p.String())
		}
		return
	}
	for _, f := range r.Files {
		ifds := cli.Plural(int64(f.IFDs), "IFD")
		if f.IFDs == 0 { // missing or unreadable: a problem below says which
			ifds = "not read"
		}
		fmt.Fprintf(w, "%s %s: %s, %s\n", f.Name, f.UUID, cli.Plural(int64(f.Planes), "plane"), ifds)
	}
	layout := "every file a master"
	switch {
	case r.Companion:
		layout = "metadata in the companion"
	case r.BinaryOnly > 0:
		layout = fmt.Sprintf("metadata in the master %s, %s BinaryOnly", r.Metadata, cli.Plural(int64(r.BinaryOnly), "file"))
	}
	fmt.Fprintf(w, "%s: %s, %s in %s, %s", from, cli.Plural(int64(r.Images), "image"), cli.Plural(int64(r.Planes), "plane"),
		cli.Plural(int64(len(r.Files)), "file"), layout)
	if problems == nil {
		fmt.Fprintln(w, ": complete")
		return
	}
	fmt.Fprintln(w)
	for _, p := range problems.Problems {
		fmt.Fprintln(w, p.String())
	}
}

// isPlan reports whether the file at path starts as JSON does, as a plan
// and no TIFF or OME-XML does.
func isPlan(path string) bool {
	f, err := tiff.OpenRegular(path) // a named pipe's open would block
	if err != nil {
		return false
	}
	defer f.Close()
	var head [512]byte
	n, _ := f.Read(head[:])
	text := bytes.TrimLeft(head[:n], " \t\r\n")
	return len(text) > 0 && text[0] == '{'
}
