//go:build cgo && ometiff_turbo

package compress

// This file encodes JPEG tiles with libjpeg-turbo through cgo, in builds
// with the ometiff_turbo tag only (go build -tags ometiff_turbo; Debian:
// libjpeg62-turbo-dev). The default build and go get need neither cgo nor
// the library.

/*
#cgo pkg-config: libjpeg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

// otEncoder is one libjpeg compressor with its error handler and an output
// buffer it grows. The compressor comes first, so libjpeg's callbacks can
// cast their j_common_ptr or j_compress_ptr to it.
typedef struct {
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr err;
	struct jpeg_destination_mgr dest;
	jmp_buf jump;
	JOCTET *buf;
	size_t cap;
	char msg[JMSG_LENGTH_MAX];
} otEncoder;

static void otErrorExit(j_common_ptr c) {
	otEncoder *e = (otEncoder *)c;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jump, 1);
}

static void otOutputMessage(j_common_ptr c) {}

static void otInitDestination(j_compress_ptr c) {
	otEncoder *e = (otEncoder *)c;
	e->dest.next_output_byte = e->buf;
	e->dest.free_in_buffer = e->cap;
}

static boolean otEmptyOutputBuffer(j_compress_ptr c) {
	otEncoder *e = (otEncoder *)c;
	JOCTET *buf = realloc(e->buf, 2 * e->cap);
	if (buf == NULL) {
		ERREXIT1(c, JERR_OUT_OF_MEMORY, 0);
	}
	e->dest.next_output_byte = buf + e->cap;
	e->dest.free_in_buffer = e->cap;
	e->buf = buf;
	e->cap *= 2;
	return TRUE;
}

static void otTermDestination(j_compress_ptr c) {}

static void otFree(otEncoder *e) {
	jpeg_destroy_compress(&e->c);
	free(e->buf);
	free(e);
}

// otNew returns a compressor for tiles of width pixels of comps (1 or 3)
// samples, coded as RGB when rgb is set, else as gray or YCbCr 4:2:0, with
// the quantization tables q (natural order, luminance then chrominance) and
// libjpeg's default (Annex K) Huffman tables, all of them suppressed from
// its output: TIFF's JPEGTables carries them. NULL if out of memory or on
// an error, written to msg.
static otEncoder *otNew(int width, int comps, int rgb, const unsigned int *q, char *msg) {
	otEncoder *e = calloc(1, sizeof(otEncoder));
	if (e == NULL) {
		return NULL;
	}
	e->cap = 1 << 16;
	e->buf = malloc(e->cap);
	if (e->buf == NULL) {
		free(e);
		return NULL;
	}
	e->c.err = jpeg_std_error(&e->err);
	e->err.error_exit = otErrorExit;
	e->err.output_message = otOutputMessage;
	if (setjmp(e->jump)) {
		strcpy(msg, e->msg);
		otFree(e);
		return NULL;
	}
	jpeg_create_compress(&e->c);
	e->dest.init_destination = otInitDestination;
	e->dest.empty_output_buffer = otEmptyOutputBuffer;
	e->dest.term_destination = otTermDestination;
	e->c.dest = &e->dest;
	e->c.image_width = width;
	e->c.image_height = 1;
	e->c.input_components = comps;
	e->c.in_color_space = comps == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_set_defaults(&e->c);
	jpeg_set_colorspace(&e->c, comps == 1 ? JCS_GRAYSCALE : rgb ? JCS_RGB : JCS_YCbCr);
	jpeg_add_quant_table(&e->c, 0, q, 100, TRUE);
	jpeg_add_quant_table(&e->c, 1, q + 64, 100, TRUE);
	e->c.dct_method = JDCT_ISLOW;
	e->c.write_JFIF_header = FALSE;
	e->c.write_Adobe_marker = comps == 3 && rgb;
	jpeg_suppress_tables(&e->c, TRUE);
	return e;
}

// otEncode compresses the height rows of src, stride bytes apart, and
// returns the size of the stream in e->buf, or -1 on an error, written to
// e->msg.
static long otEncode(otEncoder *e, const JSAMPLE *src, int height, int stride) {
	if (setjmp(e->jump)) {
		jpeg_abort_compress(&e->c);
		return -1;
	}
	e->c.image_height = height;
	jpeg_start_compress(&e->c, FALSE);
	while (e->c.next_scanline < e->c.image_height) {
		JSAMPROW row = (JSAMPROW)(src + (size_t)e->c.next_scanline * stride);
		jpeg_write_scanlines(&e->c, &row, 1);
	}
	jpeg_finish_compress(&e->c);
	return (long)(e->cap - e->dest.free_in_buffer);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

func init() { jpegTurbo = newTurboEncoder }

// turboEncoder encodes a JPEG's tiles with pooled libjpeg compressors.
type turboEncoder struct {
	j    *JPEG
	q    [128]C.uint // the quantization tables, natural order
	pool sync.Pool   // of *turboState
}

// turboState owns a C compressor, freed when the state is collected.
type turboState struct {
	e *C.otEncoder
}

func newTurboEncoder(j *JPEG) jpegEngine {
	t := &turboEncoder{j: j}
	for i := range 64 {
		t.q[i], t.q[64+i] = C.uint(j.quant[0].value[i]), C.uint(j.quant[1].value[i])
	}
	return t
}

func (t *turboEncoder) state() (*turboState, error) {
	if st, ok := t.pool.Get().(*turboState); ok {
		return st, nil
	}
	var msg [C.JMSG_LENGTH_MAX]C.char
	rgb := C.int(0)
	if t.j.color == JPEGRGB {
		rgb = 1
	}
	e := C.otNew(C.int(t.j.width), C.int(t.j.samples), rgb, &t.q[0], &msg[0])
	if e == nil {
		if msg[0] == 0 {
			return nil, fmt.Errorf("%w: out of memory", ErrLibJPEG)
		}
		return nil, fmt.Errorf("%w: %s", ErrLibJPEG, C.GoString(&msg[0]))
	}
	st := &turboState{e: e}
	runtime.AddCleanup(st, func(e *C.otEncoder) { C.otFree(e) }, e)
	return st, nil
}

func (t *turboEncoder) encode(dst, src []byte, height int) ([]byte, error) {
	st, err := t.state()
	if err != nil {
		return dst, err
	}
	n := C.otEncode(st.e, (*C.JSAMPLE)(unsafe.Pointer(&src[0])), C.int(height), C.int(t.j.width*t.j.samples))
	if n < 0 {
		err = fmt.Errorf("%w: %s", ErrLibJPEG, C.GoString(&st.e.msg[0]))
		t.pool.Put(st)
		return dst, err
	}
	dst = append(dst, unsafe.Slice((*byte)(unsafe.Pointer(st.e.buf)), int(n))...)
	runtime.KeepAlive(src)
	t.pool.Put(st)
	return dst, nil
}
