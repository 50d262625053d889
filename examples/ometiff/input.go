package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// input is the file to convert. Its header is read before the output is
// created, and its data from the start again: through ReadAt when it is a
// regular file (so the TIFF decoder reads only what it needs, not the
// whole file), and once from a buffer whose start was peeked when it is a
// pipe.
type input struct {
	f    *os.File
	name string
	size int64         // -1 when not a regular file
	br   *bufio.Reader // a pipe's buffer
}

// headerPeek bounds the header read from a pipe before its data.
const headerPeek = 1 << 20

// openInput opens the file at path, refusing a directory.
func openInput(path string) (*input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && info.IsDir() {
		err = fmt.Errorf("%s is a directory, not an image or raw file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	in := &input{f: f, name: path, size: -1}
	if info.Mode().IsRegular() {
		in.size = info.Size()
	} else {
		in.br = bufio.NewReaderSize(f, headerPeek)
	}
	return in, nil
}

// Close closes the file.
func (in *input) Close() error { return in.f.Close() }

// peekReaderAt reads a regular file through a buffer that image.Decode can
// peek into, and gives the TIFF decoder ReadAt.
type peekReaderAt struct {
	*bufio.Reader
	io.ReaderAt
}

// header returns a reader of the input's start, for its header. A pipe's
// header must lie in its first MiB.
func (in *input) header() io.Reader {
	if in.size >= 0 {
		return in.fromStart()
	}
	p, _ := in.br.Peek(headerPeek) // an error is the pipe's end: the header reader meets it
	return bytes.NewReader(p)
}

// body returns a reader of the input from its start, for its data. A
// pipe's is the only one.
func (in *input) body() io.Reader {
	if in.size >= 0 {
		return in.fromStart()
	}
	return in.br
}

func (in *input) fromStart() io.Reader {
	r := io.NewSectionReader(in.f, 0, in.size)
	return peekReaderAt{bufio.NewReaderSize(r, 64<<10), r}
}

// headerError explains an input whose header could not be read.
func (in *input) headerError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) && in.size < 0 {
		if p, _ := in.br.Peek(headerPeek); len(p) == headerPeek {
			return fmt.Errorf("%s: the header is not in the first MiB read from the pipe (give a file instead): %w", in.name, err)
		}
	}
	return fmt.Errorf("%s: %w", in.name, err)
}
