package pyramid

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ometiff-go/ometiff/tiff"
)

// kinds are this package's sentinel errors, which every error it makes
// itself wraps.
var kinds = []error{ErrOption, ErrSize, ErrPixelType, ErrMetadata, ErrPlane, ErrData, ErrMissingPlanes, ErrTooLarge, ErrClosed, ErrPlan, ErrMissingFile, ErrWrongFile}

// prefix starts the message of every error this package makes.
const prefix = "pyramid: "

// describedError is an error of a layer below that this package describes
// in its own words: its message is this package's alone, so that the
// prefixes of two packages do not pile up, and errors.Is finds this
// package's sentinel (if any) and the cause.
type describedError struct {
	msg  string
	errs []error // the sentinel, if any, then the cause
}

func (e *describedError) Error() string   { return e.msg }
func (e *describedError) Unwrap() []error { return e.errs }

// classify describes cause as an error of kind, one of this package's
// sentinels: the message is kind's and text.
func classify(kind error, text string, cause error) error {
	return &describedError{msg: kind.Error() + ": " + text, errs: []error{kind, cause}}
}

// errZero is the error of a method called on a zero Writer, Image,
// PlaneWriter, EncodedPlaneWriter or Part, which only this package makes.
var errZero = fmt.Errorf("%w: a zero value, not made by New, Create, AddImage, Plane, EncodedPlane or CreatePart", ErrClosed)

// within says where err, an error of this package, arose: its message is
// that of its sentinel, then where, then the rest ("pyramid: bad option:
// encoded level 1: tile coding: ..."), with this package's prefix once.
func within(err error, where string) error {
	for _, kind := range kinds {
		if rest, ok := strings.CutPrefix(err.Error(), kind.Error()+": "); ok && errors.Is(err, kind) {
			return &describedError{msg: kind.Error() + ": " + where + ": " + rest, errs: []error{err}}
		}
	}
	return fmt.Errorf("%s: %w", where, err)
}

// closedBy is ErrClosed for a writer that failed with err: the message
// says both, with this package's prefix once.
func closedBy(err error) error {
	return classify(ErrClosed, strings.TrimPrefix(err.Error(), prefix), err)
}

// wrapLower returns an error of a layer below as this package returns it:
// described under ErrTooLarge when it is tiff's, else unchanged (an I/O
// failure, the context's cancellation), as the standard library's writers
// return the errors of their writers.
func wrapLower(err error) error {
	if errors.Is(err, tiff.ErrTooLarge) && !errors.Is(err, ErrTooLarge) {
		return classify(ErrTooLarge, "the file passes 4 GiB and Options.BigTIFF is BigTIFFNever", err)
	}
	return err
}
