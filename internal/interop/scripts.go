package interop

// TifffilePages is a Python script: tifffile opens the TIFF named by its
// first argument and writes to stdout, as little-endian raw samples, every
// directory of the main chain, each followed by its SubIFDs.
const TifffilePages = `
import sys, numpy as np, tifffile
out = sys.stdout.buffer
with tifffile.TiffFile(sys.argv[1]) as tif:
    for i, page in enumerate(tif.pages):
        arrays = [page.asarray()]
        for off in (page.subifds or ()):
            tif.filehandle.seek(off)
            arrays.append(tifffile.TiffPage(tif, index=(i, 0)).asarray())
        for a in arrays:
            out.write(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder('<')).tobytes())
`
