package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ometiff-go/ometiff/examples/internal/cli"
	"github.com/ometiff-go/ometiff/pyramid"
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
		if fs.NArg() == 2 {
			d, lerr := loadPlan(fs.Arg(0))
			if lerr != nil {
				return lerr
			}
			report, err = d.Check(fs.Arg(1))
		} else {
			report, err = pyramid.CheckDataset(fs.Arg(0))
		}
		var problems *pyramid.DatasetError
		if err != nil && !errors.As(err, &problems) {
			return err
		}
		printReport(stdout, report, problems)
		if problems != nil {
			return fmt.Errorf("%s: incomplete: %d problems", problems.Path, len(problems.Problems))
		}
		return nil
	})
}

// printReport prints a line per file and one for the whole, then a line
// per problem.
func printReport(w io.Writer, r pyramid.DatasetReport, problems *pyramid.DatasetError) {
	for _, f := range r.Files {
		fmt.Fprintf(w, "%s %s: %d planes, %d IFDs\n", f.Name, f.UUID, f.Planes, f.IFDs)
	}
	layout := "every file a master"
	if r.Companion {
		layout = "metadata in the companion"
	}
	fmt.Fprintf(w, "%s: %d images, %d planes in %d files, %s", r.Metadata, r.Images, r.Planes, len(r.Files), layout)
	if problems == nil {
		fmt.Fprintln(w, ": complete")
		return
	}
	fmt.Fprintln(w)
	for _, p := range problems.Problems {
		fmt.Fprintln(w, p.String())
	}
}
