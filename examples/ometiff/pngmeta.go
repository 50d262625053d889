package main

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/ometiff-go/ometiff/pyramid"
)

// pngMeta is what a PNG's chunks before its image data hold besides the
// pixels: its text, kept as the image's map annotations, and what is not
// kept, said on stderr.
type pngMeta struct {
	text  []pyramid.KeyValue // tEXt, zTXt and iTXt, keyword and text, in file order
	notes []string           // what the output does not keep
}

// maxPNGText bounds the bytes of one text chunk read, and of its text
// inflated: a caption or a tool's settings, not a payload.
const maxPNGText = 1 << 20

// readPNGMeta reads the chunks of a PNG (r, from its signature) up to its
// first IDAT: the header already read, as a pipe's first MiB is. Text
// after the image data is not seen: libpng, libvips and Pillow write
// theirs before it.
func readPNGMeta(r io.Reader) pngMeta {
	var m pngMeta
	br := bufio.NewReader(r)
	if _, err := br.Discard(len(pngSignature)); err != nil {
		return m
	}
	for {
		var head [8]byte
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return m
		}
		length, typ := int64(binary.BigEndian.Uint32(head[:])), string(head[4:])
		switch typ {
		case "IDAT", "IEND":
			return m
		case "iCCP":
			if !slices.Contains(m.notes, iccNote) {
				m.notes = append(m.notes, iccNote)
			}
		case "tEXt", "zTXt", "iTXt":
			if length > maxPNGText {
				m.notes = append(m.notes, fmt.Sprintf("a %s chunk of %d bytes is not kept (text of up to %d bytes is, as a map annotation)", typ, length, maxPNGText))
				break
			}
			data := make([]byte, length) // at most maxPNGText
			if _, err := io.ReadFull(br, data); err != nil {
				return m
			}
			length = 0
			kv, err := pngText(typ, data)
			if err != nil {
				m.notes = append(m.notes, fmt.Sprintf("a %s chunk is not kept: %v", typ, err))
				break
			}
			m.text = append(m.text, kv)
		}
		if _, err := br.Discard(int(min(length, 1<<31-1)) + 4); err != nil { // the data left, and the CRC
			return m
		}
	}
}

// iccNote says a colour profile is not kept, as convert says it of a
// TIFF's.
const iccNote = "its ICC colour profile is not kept (OME has no field for it)"

// pngText reads a text chunk's keyword and text as OME-XML text: tEXt's
// and zTXt's Latin-1, iTXt's UTF-8 (its language tag and translated
// keyword left out), zTXt's and a compressed iTXt's inflated, up to
// maxPNGText bytes.
func pngText(typ string, data []byte) (pyramid.KeyValue, error) {
	keyword, rest, ok := bytes.Cut(data, []byte{0})
	if !ok || len(keyword) == 0 {
		return pyramid.KeyValue{}, errors.New("no keyword")
	}
	compressed, utf := false, false
	switch typ {
	case "zTXt":
		if len(rest) < 1 {
			return pyramid.KeyValue{}, errors.New("no compression method")
		}
		compressed, rest = true, rest[1:]
	case "iTXt":
		if len(rest) < 2 {
			return pyramid.KeyValue{}, errors.New("no compression flag")
		}
		compressed, utf = rest[0] != 0, true
		rest = rest[2:]
		for range 2 { // the language tag and the translated keyword
			if _, rest, ok = bytes.Cut(rest, []byte{0}); !ok {
				return pyramid.KeyValue{}, errors.New("no text")
			}
		}
	}
	if compressed {
		zr, err := zlib.NewReader(bytes.NewReader(rest))
		if err != nil {
			return pyramid.KeyValue{}, err
		}
		if rest, err = io.ReadAll(io.LimitReader(zr, maxPNGText+1)); err != nil {
			return pyramid.KeyValue{}, err
		}
		if len(rest) > maxPNGText {
			return pyramid.KeyValue{}, fmt.Errorf("its text inflates to more than %d bytes", maxPNGText)
		}
	}
	text := string(rest)
	if !utf {
		text = latin1(rest)
	}
	key := pyramid.XMLText(latin1(keyword))
	if key == "" { // a map annotation's key is not empty
		return pyramid.KeyValue{}, errors.New("its keyword holds no character XML allows")
	}
	return pyramid.KeyValue{Key: key, Value: pyramid.XMLText(text)}, nil
}

// latin1 decodes ISO 8859-1, which PNG's keywords and tEXt are in.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}
