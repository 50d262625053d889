//go:build cgo && ometiff_turbo

package compress

// This file decodes JPEG blocks with libjpeg-turbo through cgo, in builds
// with the ometiff_turbo tag only, as jpeg_turbo.go encodes them. It gives
// the samples libtiff and libvips give for the same block: libjpeg-turbo's
// accurate integer IDCT, its fancy upsampling and its colour conversion.

/*
#cgo pkg-config: libjpeg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

// otDecoder is one libjpeg decompressor with its error handler. The
// decompressor comes first, so libjpeg's callbacks can cast their
// j_common_ptr to it.
typedef struct {
	struct jpeg_decompress_struct d;
	struct jpeg_error_mgr err;
	struct jpeg_progress_mgr progress;
	jmp_buf jump;
	int failed;
	int code;
	char msg[JMSG_LENGTH_MAX];
} otDecoder;

static void otDecErrorExit(j_common_ptr c) {
	otDecoder *e = (otDecoder *)c;
	e->code = c->err->msg_code;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jump, 1);
}

// otDecEmit turns libjpeg's first warning that samples were made up into
// the block's error: that is how libjpeg reports a truncated or damaged
// stream, whose missing data it fills in. Other warnings (bytes between
// markers, an unknown JFIF revision or Adobe transform) are ignored, as
// libtiff and libvips ignore them and image/jpeg decodes such streams.
static void otDecEmit(j_common_ptr c, int level) {
	otDecoder *e = (otDecoder *)c;
	if (level >= 0 || e->failed) {
		return;
	}
	switch (c->err->msg_code) {
	case JWRN_JPEG_EOF:
	case JWRN_HIT_MARKER:
	case JWRN_MUST_RESYNC:
	case JWRN_HUFF_BAD_CODE:
	case JWRN_ARITH_BAD_CODE:
	case JWRN_NOT_SEQUENTIAL:
	case JWRN_BOGUS_PROGRESSION:
		e->failed = 1;
		e->code = c->err->msg_code;
		(*c->err->format_message)(c, e->msg);
	}
}

// otMaxScans bounds the scans of a progressive stream, as djpeg's
// -maxscans and TurboJPEG's scan limit do: a few hundred bytes of
// hostile stream can hold thousands of scans, each a pass over the frame.
enum { otMaxScans = 500, otTooManyScans = -2 };

// otDecProgress also stops a stream that has failed at its next scan,
// rather than after the rest of its scans.
static void otDecProgress(j_common_ptr c) {
	otDecoder *e = (otDecoder *)c;
	if (e->failed) {
		longjmp(e->jump, 1);
	}
	if (e->d.input_scan_number > otMaxScans) {
		e->code = otTooManyScans;
		snprintf(e->msg, JMSG_LENGTH_MAX, "more than %d scans", otMaxScans);
		longjmp(e->jump, 1);
	}
}

static void otDecFree(otDecoder *e) {
	jpeg_destroy_decompress(&e->d);
	free(e);
}

static otDecoder *otDecNew(void) {
	otDecoder *e = calloc(1, sizeof(otDecoder));
	if (e == NULL) {
		return NULL;
	}
	e->d.err = jpeg_std_error(&e->err);
	e->err.error_exit = otDecErrorExit;
	e->err.emit_message = otDecEmit;
	if (setjmp(e->jump)) {
		free(e);
		return NULL;
	}
	jpeg_create_decompress(&e->d);
	e->progress.progress_monitor = otDecProgress;
	e->d.progress = &e->progress;
	return e;
}

// otDecLoadStream loads the tables stream (n bytes: SOI, tables, EOI) into e,
// for the abbreviated streams it decodes next; -1 on an error, left in e.
static int otDecLoadStream(otDecoder *e, const unsigned char *tables, unsigned long n) {
	if (setjmp(e->jump)) {
		jpeg_abort_decompress(&e->d);
		return -1;
	}
	e->failed = 0;
	jpeg_mem_src(&e->d, tables, n);
	if (jpeg_read_header(&e->d, FALSE) != JPEG_HEADER_TABLES_ONLY) {
		ERREXIT(&e->d, JERR_NO_IMAGE);
	}
	return e->failed ? -1 : 0;
}

// otDecForget drops libjpeg's pointer into the stream just decoded, which
// Go owns and may move or free once the call returns.
static void otDecForget(otDecoder *e) {
	if (e->d.src != NULL) {
		e->d.src->next_input_byte = NULL;
		e->d.src->bytes_in_buffer = 0;
	}
}

// Results of otDecode besides 0 (decoded).
enum { otDecFailed = -1, otDecShape = 1 };

// otDecodeStream decodes the stream src (n bytes) into out, rows of width x comps
// bytes, with the tables loaded before it. The frame must be width x height
// pixels of comps components, else it returns otDecShape before libjpeg
// allocates for the frame, with the frame's size in shape. Three components
// are converted to RGB, taken as RGB-coded when rgb is set (Photometric
// RGB, as libtiff sets it) or when the stream says so by libjpeg's rules
// (an Adobe marker, else component IDs 'R', 'G', 'B'). otDecFailed leaves libjpeg's message and code in e.
static int otDecodeStream(otDecoder *e, const unsigned char *src, unsigned long n,
		int width, int height, int comps, int rgb, unsigned char *out, int shape[3]) {
	if (setjmp(e->jump)) {
		jpeg_abort_decompress(&e->d);
		return otDecFailed;
	}
	e->failed = 0;
	jpeg_mem_src(&e->d, src, n);
	jpeg_read_header(&e->d, TRUE);
	shape[0] = e->d.image_width;
	shape[1] = e->d.image_height;
	shape[2] = e->d.num_components;
	if ((int)e->d.image_width != width || (int)e->d.image_height > height || e->d.num_components != comps) {
		jpeg_abort_decompress(&e->d);
		return otDecShape;
	}
	if (comps == 3) {
		if (rgb) {
			e->d.jpeg_color_space = JCS_RGB;
		}
		e->d.out_color_space = JCS_RGB;
	} else {
		e->d.out_color_space = JCS_GRAYSCALE;
	}
	e->d.dct_method = JDCT_ISLOW;
	jpeg_start_decompress(&e->d);
	size_t stride = (size_t)width * comps;
	while (e->d.output_scanline < e->d.output_height && !e->failed) {
		JSAMPROW row = (JSAMPROW)(out + (size_t)e->d.output_scanline * stride);
		jpeg_read_scanlines(&e->d, &row, 1);
	}
	if (e->failed) {
		jpeg_abort_decompress(&e->d);
		return otDecFailed;
	}
	jpeg_finish_decompress(&e->d);
	return e->failed ? otDecFailed : 0;
}

static int otDecLoad(otDecoder *e, const unsigned char *tables, unsigned long n) {
	int r = otDecLoadStream(e, tables, n);
	otDecForget(e);
	return r;
}

static int otDecode(otDecoder *e, const unsigned char *src, unsigned long n,
		int width, int height, int comps, int rgb, unsigned char *out, int shape[3]) {
	int r = otDecodeStream(e, src, n, width, height, comps, rgb, out, shape);
	otDecForget(e);
	return r;
}

// otUnsupported reports whether a libjpeg message code says the stream is
// valid but of a kind this build of libjpeg does not decode.
static int otUnsupported(int code) {
	switch (code) {
	case JERR_BAD_PRECISION:
	case JERR_NOT_COMPILED:
	case JERR_CONVERSION_NOTIMPL:
	case JERR_NOTIMPL:
	case JERR_ARITH_NOTIMPL:
	case JERR_SOF_UNSUPPORTED:
	case otTooManyScans:
		return 1;
	}
	return 0;
}
*/
import "C"

import (
	"bytes"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ometiff-go/ometiff/tiff"
)

func init() { jpegTurboDecode = (*Decoder).decodeJPEGTurbo }

// turboDecState owns a C decompressor, freed when the state is collected.
type turboDecState struct {
	e *C.otDecoder
}

// newTurboDecState returns a decompressor with the tables t loaded, if any.
// A pooled one is freed when it is collected; any other by free, as soon
// as its block is decoded, since its C memory is out of the collector's
// sight.
func newTurboDecState(t []byte, pooled bool) (*turboDecState, error) {
	e := C.otDecNew()
	if e == nil {
		return nil, fmt.Errorf("%w: out of memory", ErrLibJPEG)
	}
	st := &turboDecState{e: e}
	if len(t) > 0 && C.otDecLoad(e, (*C.uchar)(unsafe.Pointer(&t[0])), C.ulong(len(t))) != 0 {
		err := st.err("JPEGTables")
		st.free()
		return nil, err
	}
	if pooled {
		runtime.AddCleanup(st, func(e *C.otDecoder) { C.otDecFree(e) }, e)
	}
	return st, nil
}

// free frees a decompressor that is not pooled.
func (st *turboDecState) free() { C.otDecFree(st.e) }

// err returns the decompressor's error, typed by its libjpeg code.
func (st *turboDecState) err(what string) error {
	msg := C.GoString(&st.e.msg[0])
	if C.otUnsupported(st.e.code) != 0 {
		return fmt.Errorf("%w: %s: libjpeg: %s", ErrCompression, what, msg)
	}
	return fmt.Errorf("%w: %s: libjpeg: %s", ErrCorrupt, what, msg)
}

// decodeJPEGTurbo decodes one JPEG block into out with libjpeg; the checks
// and errors are decodeJPEG's. libjpeg keeps the tables a stream defines
// for the streams after it, so a decompressor holding only the page's
// JPEGTables is pooled, and a block that defines tables of its own gets a
// fresh one, used once: every block decodes as it would alone.
func (d *Decoder) decodeJPEGTurbo(out, src []byte) (int, error) {
	if len(src) < 2 || src[0] != 0xff || src[1] != 0xd8 {
		return 0, fmt.Errorf("%w: JPEG block does not start with SOI", ErrCorrupt)
	}
	var st *turboDecState
	own := len(d.f.JPEGTables) == 0 || definesTables(src)
	if !own {
		st, _ = d.jpegStates.Get().(*turboDecState)
	}
	if st == nil {
		var err error
		if st, err = newTurboDecState(d.f.JPEGTables, !own); err != nil {
			return 0, err
		}
	}
	if own {
		defer st.free()
	} else {
		defer d.jpegStates.Put(st)
	}
	rows := len(out) / d.rowBytes
	rgb := C.int(0)
	if d.f.Photometric == tiff.PhotometricRGB {
		rgb = 1
	}
	var shape [3]C.int
	r := C.otDecode(st.e, (*C.uchar)(unsafe.Pointer(&src[0])), C.ulong(len(src)),
		C.int(d.f.Width), C.int(rows), C.int(d.l.samples), rgb,
		(*C.uchar)(unsafe.Pointer(&out[0])), &shape[0])
	runtime.KeepAlive(src)
	runtime.KeepAlive(out)
	switch r {
	case 0:
		return int(shape[1]) * d.rowBytes, nil
	case C.otDecShape:
		if int(shape[0]) != d.f.Width || int(shape[1]) > rows {
			return 0, fmt.Errorf("%w: JPEG frame of %d x %d in a block of %d x %d", ErrCorrupt, shape[0], shape[1], d.f.Width, rows)
		}
		return 0, fmt.Errorf("%w: JPEG of %d components in a block of %d samples per pixel", ErrCorrupt, shape[2], d.l.samples)
	}
	return 0, st.err("JPEG")
}

// definesTables reports whether a JPEG stream may define quantization or
// Huffman tables (DQT or DHT), anywhere in it: entropy-coded
// data never holds 0xff followed by either marker's code (it stuffs 0x00
// after each 0xff), so bytes of segments that are not markers can only
// make the answer yes where it is no, never the other way round.
func definesTables(stream []byte) bool {
	return bytes.Contains(stream, []byte{0xff, 0xdb}) || bytes.Contains(stream, []byte{0xff, 0xc4})
}
