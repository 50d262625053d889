package iohandletest_test

import (
	"errors"
	"fmt"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/iohandle/iohandletest"
)

// A Faulty handle fails where it is told to, as a full disk would, and
// discards the output: a writer above it can be checked for the error it
// returns and for leaving nothing behind.
func ExampleNewFaulty() {
	m := iohandle.NewMemory()
	h := iohandletest.NewFaulty(m, iohandletest.Faults{MaxBytes: 8})
	_, err := h.Write([]byte("0123"))
	fmt.Println(err)
	_, err = h.Write([]byte("456789"))
	fmt.Println(errors.Is(err, iohandletest.ErrInjected), m.Bytes() == nil)
	// Output:
	// <nil>
	// true true
}
