package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/ometiff-go/ometiff/compress"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// Encoded returns the levels of the image whose tiles can be copied
// through into a pyramid writer (pyramid.Writer.AddEncodedImage) as the
// file stores them: the full resolution, and with levels its reduced
// resolutions (Plane.Levels) too. Every plane must be a whole page (not
// one sample of it) whose tiles the writer can carry (see
// pyramid.EncodedLevelOf), all pages coded alike; the reduced levels must
// be there for every plane, coded alike; and AddEncodedImage must take
// them for the image's spec (pyramid.CheckEncodedLevels: an OME pyramid,
// codings that suit the samples); and the file's blocks must not share
// their data so much that copying each would write many times the file
// (past 16 times its size and 64 MiB: the tiles are then decoded). What
// stands in the way is an error matching ErrUnsupported that names it.
//
// WritePlanes copies the tiles of the levels given encoded into an image
// added with them, and decodes the full resolution only when the writer
// computes the other levels. Those are tiled as the writer's
// pyramid.Options.TileSize says.
//
// The ometiff command adds a policy of its own on top, which a program
// wanting its output must follow too: it copies only square tiles of 32
// to 1024 pixels a side (or an image within one tile), and encodes other
// images again in their source's codec, at its tile size; it sets
// TileSize to the first copied image's tile side (unless -tile is
// given), so that the computed levels are tiled as the full resolution;
// and it names an image the file does not name after the file, without
// its folder and extensions (".ome.tif" whole), numbered by its index in
// the file ("slide", "slide #2"), as ometiff info lists them.
func (im *Image) Encoded(levels bool) ([]pyramid.EncodedLevel, error) {
	if im.noCopy != nil {
		return nil, im.noCopy
	}
	var out []pyramid.EncodedLevel
	for p, pl := range im.Planes {
		if pl.Page == nil || slices.Contains(pl.Levels, nil) {
			return nil, fmt.Errorf("%w: plane %d has no page (nil)", ErrMismatch, p)
		}
		if pl.Sample >= 0 {
			return nil, fmt.Errorf("%w: tiles copied through: plane %d is one sample of its page", ErrUnsupported, p)
		}
		pages := []*tiff.Page{pl.Page}
		if levels {
			if len(pl.Levels) == 0 {
				return nil, fmt.Errorf("%w: tiles copied through: the file stores no reduced levels of plane %d", ErrUnsupported, p)
			}
			pages = append(pages, pl.Levels...)
		}
		if p > 0 && len(pages) != len(out) {
			return nil, fmt.Errorf("%w: tiles copied through: plane %d has %d levels, plane 0 %d", ErrUnsupported, p, len(pages), len(out))
		}
		var format uint16 // of the full resolution, which gives the spec's
		for k, page := range pages {
			l, err := page.Layout()
			if err == nil && l.BitsPerSample != 8*im.Spec.PixelType.Size() {
				return nil, fmt.Errorf("%w: tiles copied through: level %d of plane %d: samples of %d bits, widened to the image's %v",
					ErrUnsupported, k, p, l.BitsPerSample, im.Spec.PixelType)
			}
			// A level that says its samples are of another format (signed
			// under unsigned) would be read as the image's. One that says
			// nothing is taken as the image's: libvips writes the levels
			// of signed and float pyramids without SampleFormat.
			if _, said := page.Field(tiff.TagSampleFormat); err == nil && k > 0 && said && l.SampleFormat != format {
				return nil, fmt.Errorf("%w: tiles copied through: level %d of plane %d: SampleFormat %d, the full resolution's %d",
					ErrUnsupported, k, p, l.SampleFormat, format)
			}
			if k == 0 {
				format = l.SampleFormat
			}
			e, err := pyramid.EncodedLevelOf(page)
			if err != nil {
				return nil, fmt.Errorf("%w: tiles copied through: level %d of plane %d: %w", ErrUnsupported, k, p, err)
			}
			if i, err := sparseBlock(page); err != nil {
				return nil, fmt.Errorf("%w: tiles copied through: level %d of plane %d: %w", ErrUnsupported, k, p, err)
			} else if i >= 0 {
				return nil, fmt.Errorf("%w: tiles copied through: tile %d of level %d of plane %d is sparse (0 bytes), which the writer "+
					"does not write and libtiff cannot read (decoded, it is zeros, or GDAL's no-data value)", ErrUnsupported, i, k, p)
			}
			// The first tile's first bytes, as the writer checks every
			// tile's (compress.CheckFraming): a writer whose streams it
			// refuses (LZW without its Clear code, which libtiff cannot
			// read) is found before anything is copied, and the image
			// encoded again. Plane 0's levels stand for the others, coded
			// alike: a stack of thousands of planes reads one tile a level.
			if p == 0 && page.NumBlocks() > 0 && l.Compression != tiff.CompressionNone {
				b, err := page.ReadBlock(nil, 0)
				if err == nil {
					err = compress.CheckFraming(l.Compression, b)
				}
				if err != nil {
					return nil, fmt.Errorf("%w: tiles copied through: tile 0 of level %d of plane %d: %w", ErrUnsupported, k, p, err)
				}
			}
			if p == 0 {
				out = append(out, e)
				continue
			}
			// Coded alike: the same size and tile coding (pages of one
			// image have the same samples, whether they say SampleFormat
			// or not).
			if e.Width != out[k].Width || e.Height != out[k].Height || !reflect.DeepEqual(e.TileCoding, out[k].TileCoding) {
				return nil, fmt.Errorf("%w: tiles copied through: level %d of plane %d is not coded as plane 0's", ErrUnsupported, k, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: tiles copied through: the image has no planes", ErrUnsupported)
	}
	if err := pyramid.CheckEncodedLevels(im.Spec, out...); err != nil {
		return nil, fmt.Errorf("%w: tiles copied through: %w", ErrUnsupported, err)
	}
	return out, nil
}

// sparseBlock returns the index of the page's first block of 0 bytes
// (GDAL writes empty tiles so), or -1; or the error of a block past the
// end of the file.
func sparseBlock(page *tiff.Page) (int, error) {
	for i := range page.NumBlocks() {
		b, err := page.Block(i)
		if err != nil {
			return -1, err // past the end of the file: a reduced level New did not check
		}
		if b.Size == 0 {
			return i, nil
		}
	}
	return -1, nil
}

// writeEncoded writes the planes of an image added with AddEncodedImage
// and the levels Encoded gave: the tiles of each level given encoded, as
// stored, and when the writer computes the other levels, the full
// resolution's rows, decoded band by band, each band after the row of
// tiles it covers (so the file is the same at every run).
func (im *Image) writeEncoded(ctx context.Context, dst *pyramid.Image, opts Options) error {
	encoded := dst.EncodedLevels()
	rows := encoded < dst.Levels()
	var tile []byte
	for p, pl := range im.Planes {
		z, c, t := im.Spec.PlaneCoords(p)
		name := fmt.Sprintf("plane z=%d c=%d t=%d (the page at %d)", z, c, t, pl.Page.Offset)
		if pl.Sample >= 0 || len(pl.Levels) < encoded-1 {
			return fmt.Errorf("%w: %s: not the levels the image was added with", ErrMismatch, name)
		}
		if done, err := dst.PlaneComplete(z, c, t); err != nil || done {
			if err != nil {
				return planeError(name, err)
			}
			continue // written before an error, which WritePlanes resumes after
		}
		if err := checkCodings(dst, pl, encoded); err != nil {
			return planeError(name, err)
		}
		ep, err := dst.EncodedPlane(z, c, t)
		if err != nil {
			return planeError(name, err)
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					ep.Abort() // a Progress panicked: the plane is written anew
					panic(p)
				}
			}()
			tile, err = copyPlane(ctx, ep, pl, encoded, rows, opts, tile)
			if err == nil {
				err = ep.Close()
			}
		}()
		if err != nil {
			ep.Abort() // so that WritePlanes again writes it anew
			return planeError(name, err)
		}
	}
	return nil
}

// checkCodings returns ErrMismatch when the tiles of the plane's first
// encoded levels are not coded as dst's levels were added with (another
// image's Encoded levels, say): copied, they would be read as that coding,
// other pixels (tiles without a predictor in a level that says one).
func checkCodings(dst *pyramid.Image, pl Plane, encoded int) error {
	samples := max(dst.Spec().SamplesPerPixel, 1)
	for k := range encoded {
		page := pl.Page
		if k > 0 {
			page = pl.Levels[k-1]
		}
		want, err := dst.EncodedLevel(k)
		if err != nil {
			return err
		}
		got, err := pyramid.EncodedLevelOf(page)
		if err != nil {
			return fmt.Errorf("%w: level %d: %w", ErrMismatch, k, err)
		}
		a, b := normalCoding(got.TileCoding, samples), normalCoding(want.TileCoding, samples)
		if sized := want.Width == 0 && want.Height == 0 && k == 0 || got.Width == want.Width && got.Height == want.Height; !sized {
			return fmt.Errorf("%w: level %d: the page at %d is %d x %d, the destination's level %d x %d",
				ErrMismatch, k, page.Offset, got.Width, got.Height, want.Width, want.Height)
		}
		if !bytes.Equal(a.JPEGTables, b.JPEGTables) || !slices.Equal(a.ReferenceBlackWhite, b.ReferenceBlackWhite) {
			return fmt.Errorf("%w: level %d: the page at %d has other JPEGTables or ReferenceBlackWhite than the destination's level",
				ErrMismatch, k, page.Offset)
		}
		a.JPEGTables, a.ReferenceBlackWhite, b.JPEGTables, b.ReferenceBlackWhite = nil, nil, nil, nil
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("%w: level %d: the page at %d has tiles of %s, the destination's level %s",
				ErrMismatch, k, page.Offset, codingText(a), codingText(b))
		}
	}
	return nil
}

// normalCoding gives a coding's defaults their values: PredictorAuto is
// none for tiles given encoded, Photometric 0 is BlackIsZero or RGB, and
// YCbCr's subsampling 0 0 is 2 2.
func normalCoding(c pyramid.TileCoding, samples int) pyramid.TileCoding {
	if c.Predictor == pyramid.PredictorAuto {
		c.Predictor = pyramid.PredictorNone
	}
	if c.Photometric == 0 {
		c.Photometric = tiff.PhotometricBlackIsZero
		if samples == 3 {
			c.Photometric = tiff.PhotometricRGB
		}
	}
	if c.Photometric == tiff.PhotometricYCbCr && c.YCbCrSubSampling == [2]int{} {
		c.YCbCrSubSampling = [2]int{2, 2}
	}
	return c
}

// codingText names a coding's compression, predictor, tile size and
// photometric interpretation, for ErrMismatch.
func codingText(c pyramid.TileCoding) string {
	return fmt.Sprintf("%v, predictor %v, %d x %d, photometric %d, subsampling %v, positioning %d",
		c.Compression, c.Predictor, c.TileWidth, c.TileHeight, c.Photometric, c.YCbCrSubSampling, c.YCbCrPositioning)
}

// copyPlane gives ep the tiles of the plane's first encoded levels and,
// with rows, the full resolution's rows. It returns the tile buffer for
// reuse.
func copyPlane(ctx context.Context, ep *pyramid.EncodedPlaneWriter, pl Plane, encoded int, rows bool, opts Options, tile []byte) ([]byte, error) {
	page := pl.Page
	l, err := page.Layout()
	if err != nil {
		return tile, err
	}
	copyRow := func(level int, p *tiff.Page, l tiff.Layout, down int) error {
		// An uncompressed block may be stored longer than its samples
		// (libtiff reads such files): the writer takes the samples. A
		// shorter one is the writer's ErrData.
		raw := 0
		if l.Compression == tiff.CompressionNone {
			raw = l.BlockWidth * l.BlockHeight * l.SamplesPerPixel * l.BitsPerSample / 8
		}
		for x := range l.BlocksAcross {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			var err error
			if tile, err = p.ReadBlock(tile[:0], down*l.BlocksAcross+x); err != nil {
				return err
			}
			if raw > 0 && len(tile) > raw {
				tile = tile[:raw]
			}
			if err := ep.WriteTile(level, tile); err != nil {
				return err
			}
		}
		return nil
	}
	if !rows {
		for down := range l.BlocksDown {
			if err := copyRow(0, page, l, down); err != nil {
				return tile, err
			}
		}
	} else {
		// Bands hold whole tile rows (Options.Rows takes whole blocks):
		// the tiles of the rows a band reaches go before it.
		r, err := NewBandReader(ctx, page, opts)
		if err != nil {
			return tile, err
		}
		defer r.Close()
		next := 0 // the next row of tiles to copy
		for {
			y, band, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return tile, err
			}
			end := y + len(band)/r.RowBytes()
			for ; next < l.BlocksDown && next*l.BlockHeight < end; next++ {
				if err := copyRow(0, page, l, next); err != nil {
					return tile, err
				}
			}
			if _, err := ep.Write(band); err != nil {
				return tile, err
			}
		}
		if err := r.Close(); err != nil {
			return tile, err
		}
	}
	for k := 1; k < encoded; k++ {
		lp := pl.Levels[k-1]
		ll, err := lp.Layout()
		if err != nil {
			return tile, err
		}
		for down := range ll.BlocksDown {
			if err := copyRow(k, lp, ll, down); err != nil {
				return tile, err
			}
		}
	}
	return tile, nil
}
