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

// TifffileOMEXML is a Python script: it prints what tifffile gives as the
// OME-XML of the file its argument names (TiffFile.ome_metadata).
const TifffileOMEXML = `
import sys, tifffile
with tifffile.TiffFile(sys.argv[1]) as tif:
    sys.stdout.write(tif.ome_metadata)
`

// TifffileDataset is a Python script: tifffile opens the OME-TIFF named by
// its first argument, the reference, and then each further argument, a
// file of a multi-file dataset, and checks that each gives the reference's
// series: as many, of the same shapes and types, every plane there, and
// the same pixels (compared by SHA-256). It prints a line per file:
// "NAME: S series, P planes, M across files", and exits with an error
// naming the first difference, or any warning tifffile logs other than
// that it does not read multi-file pyramids (it reads their full
// resolution only).
const TifffileDataset = `
import hashlib, logging, os, sys, tifffile
warnings = []
class Keep(logging.Handler):
    def emit(self, record):
        warnings.append(record.getMessage())
log = logging.getLogger('tifffile')
log.addHandler(Keep())
log.propagate = False

def series(path):
    with tifffile.TiffFile(path) as tif:
        if not tif.is_ome:
            sys.exit(f'{path}: not an OME-TIFF to tifffile')
        out = []
        for s in tif.series:
            a = s.asarray()
            present = sum(p is not None for p in s.pages)
            out.append((s.shape, str(a.dtype), len(s.pages), present, bool(s.is_multifile), hashlib.sha256(a.tobytes()).hexdigest()))
        return out

want = series(sys.argv[1])
for path in sys.argv[2:]:
    got = series(path)
    name = os.path.basename(path)
    if len(got) != len(want):
        sys.exit(f'{name}: {len(got)} series, the reference has {len(want)}')
    for i, (g, w) in enumerate(zip(got, want)):
        if g[:3] != w[:3] or g[3] != g[2]:
            sys.exit(f'{name}: series {i} is {g[:4]}, the reference {w[:4]}')
        if g[5] != w[5]:
            sys.exit(f'{name}: series {i}: the pixels differ from the reference')
    print(f'{name}: {len(got)} series, {sum(g[2] for g in got)} planes, {sum(g[4] for g in got)} across files')
bad = [w for w in warnings if 'cannot read multi-file pyramids' not in w]
if bad:
    sys.exit('tifffile warned: ' + '; '.join(bad[:5]))
`
