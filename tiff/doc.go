// Package tiff reads and writes the structure of TIFF and BigTIFF files:
// the format's constants, its header, the directories and the blocks
// they point to (Open, Read, File, Page), and the low-level layout of a
// file on an output handle (Writer).
//
// # File layout
//
// A Writer produces files shaped like this:
//
//	offset 0        header, 16 bytes reserved (classic TIFF uses 8)
//	offset 16       data blocks (strips or tiles), appended as they come
//	after the data  every directory, each followed by its out-of-line
//	                values; a main directory is followed by its SubIFDs
//
// Data goes first because a writer streams tiles long before it knows how
// many directories there will be or how large they are. The directories
// go last, all at Close: each is built by package ifd, serialized whole
// into memory and handed to the output in one write, so the output never
// sees field-by-field writes and the file never grows a few bytes at a
// time. The header is written last, by one positioned write at offset 0.
//
// Classic TIFF or BigTIFF is decided at Close from the final offsets
// (Options.BigTIFF can force either): the writer plans the directories in
// classic form and falls back to BigTIFF only when a block offset, a byte
// count or a directory would lie past 4 GiB. Reserving 16 bytes for the
// header is what lets the decision wait; a classic file leaves bytes 8 to
// 15 unused.
//
// Offsets and byte counts of blocks are LONG in classic TIFF and LONG8 in
// BigTIFF; SubIFDs are IFD or IFD8. Nothing is ever truncated: a value
// that does not fit is an error.
//
// # Reading
//
// Read (or Open) parses the structure of any TIFF or BigTIFF file, in
// either byte order, through github.com/google/tiff: the pages of the main
// chain and their SubIFDs, with every field. It checks the file before
// that parser allocates anything (loops, counts and offsets past the end),
// so a hostile file gives ErrMalformed and never a hang or an allocation
// its size cannot justify. A Page's Layout says how its image is cut into
// tiles or strips, and ReadBlock reads any one of them, still compressed;
// package compress decodes them. Dump prints a file's structure as stable
// text, for tests, golden files and the inspector.
//
// The package imports ifd (the directory builder; read fields are ifd
// entries too) and iohandle (the buffered output); the pyramid writer and
// the sources of package pyramid/source build on it.
package tiff
