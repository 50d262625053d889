// Opens an OME-TIFF with Viv's loader (@vivjs/loaders: the OME-TIFF reader
// of Avivator and Vizarr, over geotiff.js and a WebAssembly LZW decoder),
// as the interop tests run it:
//
//   node read.mjs FILE RAW
//
// It prints, as JSON, what Viv sees in FILE: per image its name, dtype,
// axis labels, DimensionOrder, the photometric interpretation its layers
// render the rasters with (6, YCbCr, is converted to RGB by their shader)
// and, per level, the shape Viv assumes and the size of the raster it
// decodes. It writes to RAW every raster, as the
// samples of the host's (little-endian) byte order: image after image,
// plane after plane in the image's DimensionOrder, each plane's levels
// largest first. An interleaved RGB image has one plane per channel, Z and T.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DOMParser } from '@xmldom/xmldom';

globalThis.DOMParser ??= DOMParser; // Viv parses the OME-XML with the browser's parser
const { loadOmeTiff } = await import('@vivjs/loaders');

const [file, rawPath] = process.argv.slice(2);
const images = await loadOmeTiff(pathToFileURL(resolve(file)).href, { images: 'all' });
const rasters = [];
const summary = [];
for (const { data, metadata } of images) {
  const pixels = metadata.Pixels;
  const labels = data[0].labels;
  // Viv's c axis counts samples, as SizeC does; an interleaved image has one
  // plane per Channel element (each of SamplesPerPixel samples).
  const sizes = { Z: pixels.SizeZ, C: labels.includes('_c') ? pixels.Channels.length : pixels.SizeC, T: pixels.SizeT };
  const order = pixels.DimensionOrder.slice(2); // e.g. ZCT: Z varies fastest
  const planes = sizes.Z * sizes.C * sizes.T;
  const levels = data.map((source) => ({ shape: source.shape, width: 0, height: 0 }));
  for (let p = 0; p < planes; p++) {
    const selection = {};
    let rest = p;
    for (const axis of order) {
      selection[axis.toLowerCase()] = rest % sizes[axis];
      rest = Math.floor(rest / sizes[axis]);
    }
    for (let l = 0; l < data.length; l++) {
      const raster = await data[l].getRaster({ selection });
      levels[l].width = raster.width;
      levels[l].height = raster.height;
      rasters.push(Buffer.from(raster.data.buffer, raster.data.byteOffset, raster.data.byteLength));
    }
  }
  const photometric = data[0].meta?.photometricInterpretation ?? null;
  summary.push({ name: metadata.Name ?? '', dtype: data[0].dtype, labels, order: pixels.DimensionOrder, photometric, planes, levels });
}
writeFileSync(rawPath, Buffer.concat(rasters));
console.log(JSON.stringify(summary));
