package compress

import "fmt"

// JPEGQuality estimates the IJG quality (1 to 100, the scale of
// JPEGOptions.Quality, libjpeg, libvips and GDAL) that a JPEG stream's
// luminance quantization table was made at: a JPEGTables field, or a
// stream that holds its own tables. The quality whose table, scaled from
// ITU T.81 Annex K as libjpeg scales it, is nearest wins; exact reports
// whether it is the table itself, as it is for libjpeg, libjpeg-turbo,
// libvips, libtiff, GDAL, Aperio's scanners and this package. A converter
// that copies a source's JPEG tiles encodes the levels it computes at the
// source's quality with it. A stream without an 8-bit table 0 before its
// first frame or scan is ErrCorrupt.
func JPEGQuality(stream []byte) (quality int, exact bool, err error) {
	table, err := lumaTable(stream)
	if err != nil {
		return 0, false, err
	}
	best, bestDiff := 0, -1
	for q := 1; q <= 100; q++ {
		scaled := newJPEGQuant(&jpegLumaQuant, q)
		diff := 0
		for k := range 64 {
			d := int(scaled.value[jpegZigzag[k]]) - int(table[k])
			diff += max(d, -d)
		}
		if bestDiff < 0 || diff < bestDiff {
			best, bestDiff = q, diff
		}
	}
	return best, bestDiff == 0, nil
}

// lumaTable returns quantization table 0 of a stream, in zigzag order, as
// its first DQT defining it holds it.
func lumaTable(b []byte) ([64]byte, error) {
	var table [64]byte
	bad := func(what string) ([64]byte, error) {
		return table, fmt.Errorf("%w: JPEG tables: %s", ErrCorrupt, what)
	}
	if len(b) < 2 || b[0] != 0xff || b[1] != jpegSOI {
		return bad("no SOI")
	}
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xff {
			return bad(fmt.Sprintf("no marker at %d", i))
		}
		marker := b[i+1]
		if marker == 0xff { // fill byte
			i++
			continue
		}
		if marker == jpegEOI || marker == jpegSOS || marker >= 0xc0 && marker <= 0xcf && marker != jpegDHT && marker != 0xc8 && marker != 0xcc {
			break // the tables end where the image begins
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		if n < 2 || i+2+n > len(b) {
			return bad(fmt.Sprintf("segment of %d bytes at %d", n, i))
		}
		seg := b[i+4 : i+2+n]
		for marker == jpegDQT && len(seg) > 0 {
			precision, id := seg[0]>>4, seg[0]&15
			size := 64 << precision
			if precision > 1 || len(seg) < 1+size {
				return bad("a DQT segment cut short or of unknown precision")
			}
			if id == 0 {
				if precision != 0 {
					return bad("a 16-bit table 0")
				}
				copy(table[:], seg[1:65])
				return table, nil
			}
			seg = seg[1+size:]
		}
		i += 2 + n
	}
	return bad("no quantization table 0")
}
