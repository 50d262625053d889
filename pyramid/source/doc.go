// Package source reads the images of existing files for the pyramid
// writer: a BandReader gives the rows of one TIFF page, top to bottom, in
// bands of its block height, decoding its tiles or strips once each, in
// parallel through compress's ordered Pipeline, with memory bounded by the
// width of the page times its block height.
//
// It builds on package tiff, which reads a file's structure and its
// blocks as stored, and package compress, which decodes a block.
package source
