"""tifffile's side of examples/compare.

    python3 tifffile_peer.py write JOB   write the job's workload (JSON, as the Go worker takes it)
    python3 tifffile_peer.py describe PATH   print an OME-TIFF's series and levels as JSON
"""

import json
import sys

import numpy
import tifffile


def mean2x2(a):
    """Halve a level by 2x2 mean, (a+b+c+d+2)//4, dropping an odd last row or column."""
    h, w = a.shape[0] // 2 * 2, a.shape[1] // 2 * 2
    s = a[:h, :w].astype(numpy.uint32)
    m = (s[0::2, 0::2] + s[0::2, 1::2] + s[1::2, 0::2] + s[1::2, 1::2] + 2) // 4
    return m.astype(a.dtype)


def options(job):
    """The TiffWriter.write options every IFD of the job shares."""
    w = job['workload']
    compressed = w['compression'] != 'none'
    return dict(
        tile=(w['tile'], w['tile']),
        compression={'deflate': 'zlib', 'none': None}[w['compression']],
        predictor=compressed,
        maxworkers=job['workers'],
        photometric='rgb' if w['rgb'] else 'minisblack',
    )


def write_slide(job):
    """One plane with subifds levels computed by 2x2 mean until one tile."""
    w, size = job['workload'], job['workload']['size']
    if w['rgb']:
        data = numpy.fromfile(job['in'], numpy.uint8).reshape(size, size, 3)
    else:
        data = numpy.fromfile(job['in'], '<u2').reshape(size, size)
    levels = [data]
    while max(levels[-1].shape[:2]) > w['tile']:
        levels.append(mean2x2(levels[-1]))
    opts = options(job)
    with tifffile.TiffWriter(job['out'], bigtiff=True, ome=True) as tif:
        tif.write(data, subifds=len(levels) - 1, metadata={'axes': 'YXS' if w['rgb'] else 'YX'}, **opts)
        for level in levels[1:]:
            tif.write(level, subfiletype=1, **opts)


def write_stack(job):
    """Every series as one write of its C x Z planes."""
    w = job['workload']
    data = numpy.fromfile(job['in'], '<u2').reshape(w['series'], w['c'], w['z'], w['size'], w['size'])
    opts = options(job)
    with tifffile.TiffWriter(job['out'], bigtiff=True, ome=True) as tif:
        for series in data:
            tif.write(series, metadata={'axes': 'CZYX'}, **opts)


def describe(path):
    """Print whether the file is OME, its series, the levels and shape of the first."""
    with tifffile.TiffFile(path) as tif:
        print(json.dumps({
            'ome': tif.is_ome,
            'series': len(tif.series),
            'levels': len(tif.series[0].levels),
            'shape': list(tif.series[0].shape),
        }))


def main():
    if sys.argv[1] == 'describe':
        describe(sys.argv[2])
        return
    job = json.loads(sys.argv[2])
    {'slide': write_slide, 'stack': write_stack}[job['workload']['kind']](job)


if __name__ == '__main__':
    main()
