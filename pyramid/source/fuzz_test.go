package source

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/ifd"
	"github.com/ometiff-go/ometiff/internal/ndpitest"
	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// typedError reports whether err is one of the errors a hostile file may
// give: the file is not TIFF, malformed or unsupported, a block does not
// decode, or a band is too large.
func typedError(err error) bool {
	for _, e := range []error{tiff.ErrNotTIFF, tiff.ErrMalformed, tiff.ErrUnsupported, compress.ErrCorrupt,
		compress.ErrCompression, compress.ErrFormat, compress.ErrPredictor, ErrSize, ErrUnsupported} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzBandReader reads every page of arbitrary bytes with the band reader,
// seeded with small files of several layouts built in code: errors must
// be typed, and a page read to the end must give exactly its rows.
func FuzzBandReader(f *testing.F) {
	for i, p := range []testPage{
		{width: 20, height: 9, samples: 1, bits: 16, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionLZW), predictor: 2},
		{width: 7, height: 5, samples: 3, bits: 8, rowsPerStrip: 2, planar: true, codec: mustCodec(tiff.CompressionDeflate)},
		{width: 9, height: 4, samples: 1, bits: 32, float: true, rowsPerStrip: 3, codec: mustCodec(tiff.CompressionZstd), predictor: 3},
		{width: 16, height: 16, samples: 2, bits: 8, tileW: 16, tileH: 16, sparse: []int{0}},
	} {
		order := binary.ByteOrder(binary.LittleEndian)
		if i%2 == 1 {
			order = binary.BigEndian
		}
		file, _ := fileOf(f, order, i == 2, p)
		f.Add(byte(i), file)
	}
	f.Fuzz(func(t *testing.T, workers byte, data []byte) {
		file, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !typedError(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		for _, page := range file.Pages[:min(len(file.Pages), 4)] {
			r, err := NewBandReader(context.Background(), page, Options{Workers: 1 + int(workers%3), MaxBandBytes: 1 << 20})
			if err != nil {
				if !typedError(err) {
					t.Fatalf("untyped error: %v", err)
				}
				continue
			}
			n, err := io.Copy(io.Discard, r)
			if cerr := r.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				if !typedError(err) {
					t.Fatalf("untyped error: %v", err)
				}
				continue
			}
			if l := r.Layout(); n != int64(l.Height)*int64(r.RowBytes()) {
				t.Fatalf("%d bytes read of a %d x %d page (%d bytes a row)", n, l.Width, l.Height, r.RowBytes())
			}
		}
	})
}

// mappedOK checks what New made of a file: every image's planes are pages
// of the file, as many as its spec has, of samples the page has; and the
// pyramid writer takes every spec.
func mappedOK(t *testing.T, f *File) {
	t.Helper()
	w, err := pyramid.New(iohandle.NewMemory(), pyramid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for i, im := range f.Images {
		if len(im.Planes) != im.Spec.Planes() {
			t.Fatalf("image %d: %d planes for a spec of %d", i, len(im.Planes), im.Spec.Planes())
		}
		for p, pl := range im.Planes {
			l, err := pl.Page.Layout()
			if err != nil || pl.Sample >= l.SamplesPerPixel || pl.Sample < -1 {
				t.Fatalf("image %d plane %d: sample %d of a page of %d samples (%v)", i, p, pl.Sample, l.SamplesPerPixel, err)
			}
		}
		if _, err := w.AddImage(im.Spec); err != nil {
			t.Fatalf("image %d: the writer refuses its spec %+v: %v", i, im.Spec, err)
		}
	}
}

// mappingError reports whether err is one New may give.
func mappingError(err error) bool {
	return typedError(err) || errors.Is(err, ErrMetadata) || errors.Is(err, ErrMultiFile)
}

// fuzzDescription maps files whose first page's description is the fuzzed
// text, before the pages given: errors must be typed, and what is mapped
// sound.
func fuzzDescription(f *testing.F, seeds []string, pages ...testPage) {
	for _, s := range seeds {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, d string, skip bool) {
		if strings.ContainsRune(d, 0) {
			return // ASCII fields end at NUL
		}
		first := pages[0]
		first.more = description(d)
		file, _ := fileOf(t, binary.LittleEndian, false, append([]testPage{first}, pages[1:]...)...)
		mapFuzzed(t, file, skip)
	})
}

// mapFuzzed maps data as New does, named "test.tif", and checks what it
// makes of it: an untyped error fails the test, and a file mapped must
// pass mappedOK. It returns nil for data that tiff.Read refuses (tiff's
// targets and FuzzBandReader cover the structure) or that New refuses.
func mapFuzzed(t *testing.T, data []byte, skip bool) *File {
	t.Helper()
	tf, err := tiff.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil
	}
	m, err := New(tf, "test.tif", Options{SkipUnsupported: skip})
	if err != nil {
		if !mappingError(err) {
			t.Fatalf("untyped error: %v", err)
		}
		return nil
	}
	mappedOK(t, m)
	return m
}

// FuzzOMEXML maps OME-TIFFs of four 8 x 8 pages (two gray, two RGB)
// described by arbitrary OME-XML, seeded with documents of every TiffData
// form.
func FuzzOMEXML(f *testing.F) {
	seeds := []string{
		omeDocument("", pixels(2, 1, 1, "XYZCT", `<TiffData/>`)),
		omeDocument(`UUID="urn:uuid:1"`, pixels(1, 2, 1, "XYCZT", `<TiffData IFD="1" FirstC="1" PlaneCount="1"><UUID FileName="test.tif">urn:uuid:1</UUID></TiffData><TiffData IFD="0"/>`)),
		omeDocument("", pixels(1, 1, 2, "XYZTC", `<TiffData IFD="0" FirstT="1"/><TiffData IFD="1" FirstT="2"/>`),
			`<Pixels DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="3" SizeT="2"><Channel Name="a" SamplesPerPixel="3" Color="255"/><TiffData IFD="2" PlaneCount="2"/></Pixels>`),
		omeDocument("", `<AcquisitionDate>2021-03-04T05:06:07Z</AcquisitionDate><Pixels DimensionOrder="XYZCT" Type="uint16" SizeX="8" SizeY="8" SizeZ="1" SizeC="1" SizeT="1" PhysicalSizeX="1" PhysicalSizeXUnit="nm"><TiffData><UUID FileName="b.ome.tif">urn:uuid:2</UUID></TiffData></Pixels>`),
		`<OME><BinaryOnly/></OME>`,
	}
	g := gray(8, 8)
	rgb := testPage{width: 8, height: 8, samples: 3, bits: 8}
	fuzzDescription(f, seeds, g, g, rgb, rgb)
}

// FuzzSVSDescription maps SVS files of a slide, a thumbnail, a level, a
// label and a macro whose slide description is arbitrary, seeded with
// Aperio's.
func FuzzSVSDescription(f *testing.F) {
	seeds := []string{svsHead, "Aperio Image Library v12.0.5\n24576x16384 [0,100 24576x16384] (240x240) JPEG/RGB Q=70|AppMag = 20|MPP = 0.4990|Date = 01/02/21|Time = 10:11:12|Time Zone = GMT+0100",
		"Aperio Image|MPP=|Date=13/45/99|Time=x", "Aperio Image\nlabel\nmacro"}
	fuzzDescription(f, seeds, svsPage(64, 48, true), svsPage(32, 24, false), svsPage(16, 12, true),
		svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\nlabel 20x30")), svsPage(60, 20, false))
}

// FuzzSVSFocalPlanes maps SVS files of two pages of one size, the second a
// focal plane when both descriptions, arbitrary, give Z offsets, with a
// level and a label, seeded with a Z stack.
func FuzzSVSFocalPlanes(f *testing.F) {
	f.Add(svsHead+"|TotalDepth = 2|Emission Wavelength = 520|Dye = FITC", svsHead+"|OffsetZ = 1", false)
	f.Add(svsHead+"|OffsetZ = 0,5|Left = 1e300", svsHead+"|OffsetZ = -0.5|Top = NaN", false)
	f.Add(svsHead+"|OffsetZ = 1", svsHead+"|OffsetZ = 1", true)
	f.Fuzz(func(t *testing.T, first, second string, skip bool) {
		if strings.ContainsRune(first, 0) || strings.ContainsRune(second, 0) {
			return // ASCII fields end at NUL
		}
		file, _ := fileOf(t, binary.LittleEndian, false, svsPage(64, 48, true, description(first)), svsPage(32, 24, true),
			svsPage(64, 48, true, description(second)), svsPage(20, 30, false, description("Aperio Image Library v10.0.51\r\nlabel 20x30")))
		mapFuzzed(t, file, skip)
	})
}

// FuzzImageJDescription maps files of one uncompressed 8 x 8 page, with
// 384 bytes after its data, whose ImageJ description is arbitrary: a stack
// of planes stored after the page's data, as ImageJ stores stacks past
// 4 GiB.
func FuzzImageJDescription(f *testing.F) {
	seeds := []string{"ImageJ=1.54f\nimages=3\nchannels=3\n", "ImageJ=1.54f\nimages=4\nslices=2\nframes=2\nhyperstack=true\nunit=pixel\nspacing=2",
		"ImageJ=\nimages=99999999999\n", "ImageJ=1\nimages=-1\nimages=2"}
	for _, s := range seeds {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, d string, skip bool) {
		if strings.ContainsRune(d, 0) {
			return // ASCII fields end at NUL
		}
		file, _ := imageJStack(t, 4, d)
		mapFuzzed(t, file, skip)
	})
}

// FuzzImageJRGBDescription maps files of four RGB pages whose first
// page's ImageJ description is arbitrary: ImageJ's RGB hyperstacks (a page
// per RGB channel) and Bio-Formats' (images counting samples).
func FuzzImageJRGBDescription(f *testing.F) {
	seeds := []string{"ImageJ=1.11a\nimages=4\nchannels=2\nslices=2\nhyperstack=true", "ImageJ=\nimages=12\nchannels=3\nslices=4\n",
		"ImageJ=1.54f\nimages=3\nchannels=3\n", "ImageJ=1\nimages=8\nchannels=2\nframes=2\n"}
	rgb := testPage{width: 8, height: 8, samples: 3, bits: 8}
	fuzzDescription(f, seeds, rgb, rgb, rgb, rgb)
}

// FuzzShapedDescription maps files of six pages (four gray, two of two
// samples) whose first page's description is arbitrary, seeded with
// tifffile's JSON of shaped series.
func FuzzShapedDescription(f *testing.F) {
	seeds := []string{`{"axes": "ZCYX", "shape": [2, 2, 8, 8]}`, `{"shape": [4, 8, 8]}`, `{"axes": "TZCYX", "shape": [1, 2, 2, 8, 8], "x": null}`,
		`{"axes": "CYXS", "shape": [2, 8, 8, 2]}`, `{"axes": "", "shape": []}`, `{"axes": "QCYXS", "shape": [1, 2, 8, 8, 2]}`}
	g, two := gray(8, 8), testPage{width: 8, height: 8, samples: 2, bits: 8}
	fuzzDescription(f, seeds, g, g, g, g, two, two)
}

// FuzzGDALMetadata maps a page of two samples whose GDAL metadata and
// no-data value are arbitrary: the channel names and annotations made
// from them must be text the writer takes (mappedOK).
func FuzzGDALMetadata(f *testing.F) {
	f.Add(`<GDALMetadata><Item name="DESCRIPTION" sample="1" role="description">GFP</Item><Item name="x" domain="d">1</Item></GDALMetadata>`, "0", false)
	f.Add(`<GDALMetadata><Item sample="-1">\x01</Item></GDALMetadata>`, "nan", true)
	f.Fuzz(func(t *testing.T, metadata, nodata string, skip bool) {
		if strings.ContainsRune(metadata, 0) || strings.ContainsRune(nodata, 0) || metadata == "" || nodata == "" {
			return // ASCII fields end at NUL, and hold a character at least
		}
		page := testPage{width: 8, height: 8, samples: 2, bits: 8, more: func(b *ifd.Builder) {
			b.AddASCII(tiff.TagGDALMetadata, metadata)
			b.AddASCII(tiff.TagGDALNoData, nodata)
		}}
		file, _ := fileOf(t, binary.LittleEndian, false, page)
		mapFuzzed(t, file, skip)
	})
}

// FuzzImageJMetadata reads the lookup tables of a page whose ImageJ
// metadata blocks (tags 50838 and 50839) are arbitrary: counts past the
// data, headers of any length and kinds must neither panic nor read out of
// the blocks (every table taken is 768 bytes of them).
func FuzzImageJMetadata(f *testing.F) {
	blocks := map[string][][]byte{"luts": {lut(0, 255, 0), lut(255, 0, 0)}, "labl": {[]byte("\x00x")}, "info": {[]byte("\x00a\x00=\x001")},
		"prop": {[]byte("\x00k"), []byte("\x00v")}}
	var b ifd.Builder
	ijMetadata(binary.BigEndian, blocks, "info", "labl", "luts", "prop")(&b)
	data, _ := b.Get(tiff.TagIJMetadata)
	counts, _ := b.Get(tiff.TagIJMetadataByteCounts)
	f.Add(data.Value, counts.Value)
	f.Fuzz(func(t *testing.T, data, counts []byte) {
		n := len(counts) / 4
		if n == 0 || len(data) == 0 {
			return // fields hold a value at least
		}
		var b ifd.Builder
		b.Add(ifd.Entry{Tag: tiff.TagIJMetadataByteCounts, Type: ifd.Long, Count: uint64(n), Value: counts[:4*n]})
		b.AddByte(tiff.TagIJMetadata, data...)
		page := pageOf(t, rawPage(t, func(x *ifd.Builder) {
			x.AddShort(tiff.TagImageWidth, 8)
			x.AddShort(tiff.TagImageLength, 8)
			x.AddShort(tiff.TagStripOffsets, 200)
			x.AddShort(tiff.TagStripByteCounts, 64)
			x.AddAll(&b)
		}))
		for _, l := range imageJLUTs(page) {
			if len(l) != 768 {
				t.Fatalf("a table of %d bytes", len(l))
			}
		}
		// The text of its blocks: as many entries as blocks at most,
		// each of text XML can hold, and no more of it than the field.
		im := &Image{Planes: make([]Plane, 8)}
		_, _ = imageJText(im, page)
		size := 0
		for _, kv := range im.Spec.Annotations {
			if kv.Key == "" || kv.Key != pyramid.XMLText(kv.Key) || kv.Value != pyramid.XMLText(kv.Value) {
				t.Fatalf("entry %q = %q", kv.Key, kv.Value)
			}
			size += len(kv.Value)
		}
		if len(im.Spec.Annotations) > n || size > 2*len(data) {
			t.Fatalf("%d entries of %d bytes from %d blocks of %d bytes", len(im.Spec.Annotations), size, n, len(data))
		}
	})
}

// FuzzParseAperio splits arbitrary descriptions: the fields and the text
// hold nothing XML cannot, and parsing never fails.
func FuzzParseAperio(f *testing.F) {
	f.Add(svsHead)
	f.Add("a|b=c|=|==|\r\n|label|macro=1")
	f.Fuzz(func(t *testing.T, d string) {
		a := parseAperio(d)
		texts := []string{a.text}
		for _, kv := range a.fields {
			texts = append(texts, kv.Key, kv.Value)
		}
		for _, s := range texts {
			if s != pyramid.XMLText(s) {
				t.Fatalf("%q is not clean", s)
			}
		}
	})
}

// FuzzNew maps arbitrary files, seeded with small OME-TIFF, SVS, plain
// TIFF (palette pages too), NDPI, BIF, Leica SCN, MetaMorph STK, Zeiss LSM and MetaSeries files: errors
// must be typed, what is mapped sound, and the planes
// of the first image, read through WritePlanes, must stream into a writer
// or fail with a typed error.
func FuzzNew(f *testing.F) {
	rgb := testPage{width: 8, height: 8, samples: 3, bits: 8, tileW: 16, tileH: 16, codec: mustCodec(tiff.CompressionLZW)}
	seeds := [][]testPage{
		grays(2, omeDocument("", pixels(2, 1, 1, "XYZCT", `<TiffData/>`))),
		{svsPage(32, 24, true, description(svsHead)), svsPage(16, 12, false), svsPage(20, 10, false, description("Aperio Image\nlabel"))},
		{gray(8, 8), gray(8, 8), rgb, {width: 4, height: 4, samples: 2, bits: 16, rowsPerStrip: 2, codec: mustCodec(tiff.CompressionDeflate)}},
		{svsPage(16, 16, true, description("Label_Image"), xmp(bifISCan)), svsPage(32, 24, true, description("level=0 mag=40"), xmp(bifEncodeInfo(4))), svsPage(16, 12, true, description("level=1 mag=20"))},
		scnBrightfieldPages(),
		{withDescription(scnGray(32, 24, 0), scnDocument("", scnImageXML("main", scnMainView, "20", "0.4", "fluorescence",
			"0 0 0 0 32x24", "0 1 0 1 32x24", "1 0 0 2 16x12", "1 1 0 3 16x12"))), scnGray(32, 24, 1), scnGray(16, 12, 2), scnGray(16, 12, 3)},
		{qpiPage(32, 24, 1, false, qpiChannel("DAPI", "", "0,0,255", "2500")), qpiPage(32, 24, 1, false, qpiChannel("Opal 520", "CD8", "0,255,0", "9000")),
			qpiPage(8, 6, 3, false, qpiXML("ImageType", "Thumbnail")), qpiPage(16, 12, 1, true, ""), qpiPage(16, 12, 1, true, ""),
			qpiPage(12, 8, 3, false, qpiXML("ImageType", "Overview"))},
	}
	for i, pages := range seeds {
		file, _ := fileOf(f, binary.LittleEndian, i == 1, pages...)
		f.Add(file)
	}
	// Palette pages, whose colours are written: RGB, gray, and 16-bit.
	palette := func(bits int, gray bool, p testPage) testPage {
		n := 1 << bits
		cmap := make([]uint16, 3*n)
		for i := range cmap {
			cmap[i] = uint16(i * 4099)
			if gray {
				cmap[i] = uint16(i % n * 257)
			}
		}
		p.more = fields(short(tiff.TagPhotometricInterpretation, tiff.PhotometricPalette), short(tiff.TagColorMap, cmap...))
		return p
	}
	paletted, _ := fileOf(f, binary.BigEndian, false, palette(8, false, testPage{width: 20, height: 9, samples: 1, bits: 8, tileW: 16, tileH: 16,
		codec: mustCodec(tiff.CompressionDeflate)}), palette(8, true, testPage{width: 9, height: 5, samples: 1, bits: 8, rowsPerStrip: 2}),
		palette(16, false, testPage{width: 5, height: 3, samples: 1, bits: 16}))
	f.Add(paletted)
	// An NDPI slide, its strips of restart intervals read as tiles.
	ndpi, err := ndpitest.File(ndpitest.Page{Width: 32, Height: 16, RGB: ndpitest.Pattern(32, 16, 0), Interval: 1, Magnification: 20},
		ndpitest.Page{Width: 16, Height: 16, RGB: ndpitest.Pattern(16, 16, 1), Magnification: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ndpi)
	// A MetaMorph STK: its planes after the first page's data, its UIC
	// tables where their fields point.
	f.Add(zStack().file(f))
	bigSTK := zStack()
	bigSTK.bigEndian, bigSTK.bits, bigSTK.uic1 = true, 8, nil
	f.Add(bigSTK.file(f))
	// An STK whose planes' descriptions are MetaData XML.
	f.Add(xmlSTK(stkXMLPlane{0, "1", []string{"100"}, nil}, stkXMLPlane{1, "2", []string{"200"}, nil}).file(f))
	// A Zeiss LSM stack: CZ_LSMINFO, its channel colours and time stamps.
	lsm, _ := lsmStack{width: 8, height: 8, z: 2, c: 2, t: 1, scanType: 6, voxel: [3]float64{1e-6, 1e-6, 2e-6},
		names: []string{"Ch1", "Ch2"}, colors: []uint32{0xff00, 0xff}, stamps: []float64{0}}.build(f)
	f.Add(lsm)
	// A MetaSeries TIFF: two fields of two wavelengths, its XML on every page.
	ms, _ := fileOf(f, binary.LittleEndian, false, msFile([]msPlane{{525, "FITC", "1", 0, "10", "20"}, {617, "TxRed", "1", 1, "10", "20"},
		{525, "FITC", "1", 2, "30", "20"}, {617, "TxRed", "1", 3, "30", "20"}}, msCalibrated...)...)
	f.Add(ms)
	f.Fuzz(func(t *testing.T, data []byte) {
		m := mapFuzzed(t, data, true)
		if m == nil {
			return
		}
		im := m.Images[0]
		if int64(im.Spec.SizeX)*int64(im.Spec.SizeY)*int64(im.Spec.Planes()) > 1<<20 {
			return // too large to write here
		}
		w, err := pyramid.New(iohandle.NewMemory(), pyramid.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		dst, err := w.AddImage(im.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := im.WritePlanes(context.Background(), dst, Options{Workers: 1, MaxBandBytes: 1 << 20}); err != nil && !typedError(err) {
			t.Fatalf("untyped error: %v", err)
		}
	})
}

// FuzzDataset maps a multi-file dataset from a file whose OME-XML, and
// whose directory's companion file, are arbitrary: beside them are an
// OME-TIFF of two 8 x 8 gray pages (UUID urn:uuid:2) and a TIFF of one RGB
// page without a description. Errors must be typed, what is mapped sound,
// and every file opened closed.
func FuzzDataset(f *testing.F) {
	two := omeDocument(`UUID="urn:uuid:2"`)
	seeds := [][2]string{
		{omeDocument(`UUID="urn:uuid:1"`, pixels(1, 1, 3, "XYZCT", `<TiffData IFD="0" PlaneCount="1"/><TiffData IFD="0" FirstT="1"><UUID FileName="b.ome.tif">urn:uuid:2</UUID></TiffData>`)), ""},
		{omeDocument(`UUID="urn:uuid:1"`, pixels(1, 1, 1, "XYZCT", `<TiffData/>`),
			`<Pixels DimensionOrder="XYZCT" Type="uint8" SizeX="8" SizeY="8" SizeZ="1" SizeC="3" SizeT="1"><TiffData><UUID FileName="c.tif"/></TiffData></Pixels>`), ""},
		{`<OME UUID="urn:uuid:1"><BinaryOnly MetadataFile="set.companion.ome" UUID="urn:uuid:3"/></OME>`,
			omeDocument(`UUID="urn:uuid:3"`, pixels(1, 1, 3, "XYZCT", `<TiffData><UUID FileName="test.tif">urn:uuid:1</UUID></TiffData><TiffData FirstT="1"><UUID FileName="b.ome.tif"/></TiffData>`))},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], false)
	}
	dir := f.TempDir()
	files := map[string][]testPage{
		"b.ome.tif": {gray(8, 8, description(two)), gray(8, 8)},
		"c.tif":     {{width: 8, height: 8, samples: 3, bits: 8}},
	}
	for name, pages := range files {
		data, _ := fileOf(f, binary.LittleEndian, false, pages...)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, d, companion string, skip bool) {
		if strings.ContainsRune(d, 0) {
			return // ASCII fields end at NUL
		}
		data, _ := fileOf(t, binary.LittleEndian, false, gray(8, 8, description(d)))
		if err := os.WriteFile(filepath.Join(dir, "test.tif"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "set.companion.ome"), []byte(companion), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"test.tif", "set.companion.ome"} {
			m, err := Open(filepath.Join(dir, name), Options{SkipUnsupported: skip})
			if err != nil {
				if !mappingError(err) {
					t.Fatalf("%s: untyped error: %v", name, err)
				}
				continue
			}
			mappedOK(t, m)
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzNoData parses arbitrary no-data text for every sample type: the
// sample made is nil or one sample's bytes.
func FuzzNoData(f *testing.F) {
	for _, s := range []string{"-5", "nan", "1e+20", " 255 ", "-inf", "0x10"} {
		f.Add(s)
	}
	layouts := []tiff.Layout{{BitsPerSample: 1}, {BitsPerSample: 8}, {BitsPerSample: 16, SampleFormat: tiff.SampleFormatInt},
		{BitsPerSample: 32, SampleFormat: tiff.SampleFormatUint}, {BitsPerSample: 16, SampleFormat: tiff.SampleFormatFloat},
		{BitsPerSample: 32, SampleFormat: tiff.SampleFormatFloat}, {BitsPerSample: 64, SampleFormat: tiff.SampleFormatFloat}}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		for _, l := range layouts {
			b := noDataSample(text, l)
			if b == nil {
				continue
			}
			if len(b) != max(1, l.BitsPerSample/8) {
				t.Fatalf("%q: %d bytes for %d bits", text, len(b), l.BitsPerSample)
			}
			if err != nil || v == 0 {
				t.Fatalf("%q: a sample from no number, or 0", text)
			}
			// The sample read back is the value, exactly for integers and
			// in the float's own precision for floats (halves: GDAL's
			// rounding, within a part in 2^10, or infinite past them).
			var back float64
			switch {
			case l.SampleFormat == tiff.SampleFormatFloat && len(b) == 8:
				back = math.Float64frombits(binary.LittleEndian.Uint64(b))
			case l.SampleFormat == tiff.SampleFormatFloat && len(b) == 4:
				back, v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), float64(float32(v))
				if back != v && !(math.IsNaN(back) && math.IsNaN(v)) {
					t.Fatalf("%q: float32 %v, read back %v", text, v, back)
				}
				continue
			case l.SampleFormat == tiff.SampleFormatFloat:
				continue // halves: TestHalfBits
			case l.SampleFormat == tiff.SampleFormatInt:
				back = float64(int64(binary.LittleEndian.Uint64(append(b, bytes.Repeat([]byte{b[len(b)-1] >> 7 * 0xff}, 8-len(b))...))))
			default:
				back = float64(binary.LittleEndian.Uint64(append(b, make([]byte, 8-len(b))...)))
			}
			if back != v && !(math.IsNaN(back) && math.IsNaN(v)) {
				t.Fatalf("%q as %d bits (format %d): read back %v", text, l.BitsPerSample, l.SampleFormat, back)
			}
		}
	})
}
