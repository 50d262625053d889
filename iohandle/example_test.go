package iohandle_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ometiff-go/ometiff/iohandle"
)

// A File is written by appends and patches, and appears at its path, whole,
// only when Commit succeeds.
func ExampleCreate() {
	dir, err := os.MkdirTemp("", "iohandle")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "out.bin")

	h, err := iohandle.Create(path, iohandle.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close() // discards the output unless committed
	if _, err := h.Write([]byte("header: ?? | body")); err != nil {
		log.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("17"), 8); err != nil { // patch the header
		log.Fatal(err)
	}
	if _, err := os.Stat(path); os.IsNotExist(err) {
		fmt.Println("nothing at the path before Commit")
	}
	if err := h.Commit(); err != nil {
		log.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", got)
	// Output:
	// nothing at the path before Commit
	// header: 17 | body
}
