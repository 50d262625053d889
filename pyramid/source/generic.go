package source

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// generic maps a plain TIFF, as Bio-Formats' TiffReader does: the pages
// of the main chain, less those marked reduced (NewSubfileType bit 0:
// pyramid levels and COG overviews), are planes along T, in the order
// XYCZT, with a page's samples as channels when they are not RGB. Unlike
// Bio-Formats, which takes every page for a plane of the first page's
// shape, pages of another shape (size, samples, pixel type, mask or not)
// make further images, one per shape, in the order each shape first
// appears, as tifffile groups them. An ImageJ description spreads the
// pages of the first image over Z, C and T as it says (the pages it
// counts: pages of their shape after them are a further image); in a file of
// tifffile's shaped series, each series (from a page with its JSON
// description) is an image, spread as its description says.
//
// An image's metadata comes from its first page: PageName is its name,
// ImageDescription its description, DateTime its acquisition date, the
// resolution its pixel size, and the other text fields (Software, Make,
// Model, Artist, ...), ImageJ's Info, properties and labels, and GDAL's
// metadata its map annotation.
func (m *mapper) generic() error { return m.genericPages(m.file.TIFF.Pages) }

// genericPages is generic for the pages given: all of a plain TIFF's, or
// those a vendor's metadata does not name.
func (m *mapper) genericPages(pages []*tiff.Page) error {
	type group struct {
		layout pageLayout
		series int // tifffile's shaped series the pages are of
		pages  []*tiff.Page
	}
	var groups []*group
	type groupKey struct {
		layout pageLayout // pages of one shape (sameShape)
		series int
	}
	byKey := map[groupKey]*group{}
	levels := map[*tiff.Page][]*tiff.Page{}
	// ImageJ writes an 8-bit image shown through a lookup table other
	// than gray as a palette image: its values are the indices, and the
	// table is how ImageJ shows them, as Bio-Formats and tifffile read it.
	ij0, isImageJ0 := parseImageJ(pages[0].Description())
	// tifffile writes each shaped series' description on its first page:
	// a page that has one starts a series, as tifffile reads them.
	_, shapedFile := parseShaped(pages[0].Description())
	series := 0
	// The full-resolution pages the reduced ones follow: the last image's
	// and the last mask's, as GDAL writes a COG with an internal mask
	// (image, mask, the image's overviews, the mask's).
	var last [2]*tiff.Page
	// The pages left out, by their index in File.Skipped: each is an image
	// left out whole unless it has the size of a page mapped, whose image
	// it might belong to, read (see markLeftOut).
	unread := map[int]*tiff.Page{}
	for i, p := range pages {
		kind := min(p.NewSubfileType()&tiff.SubfileMask, 1)
		if len(pages) > 1 && p.NewSubfileType()&tiff.SubfileReducedImage != 0 {
			full := last[kind]
			if full == nil {
				continue
			}
			// A level is of the full page's samples and aspect. Another
			// page marked reduced (a label or macro, as some slide writers
			// mark them) is an image of its own, as tifffile reads it.
			if continuesPyramid(full, p) {
				levels[full] = append(levels[full], p)
				continue
			}
		} else {
			last[kind] = p
		}
		if shapedFile && i > 0 {
			if _, starts := parseShaped(p.Description()); starts {
				series++
			}
		}
		mode := paletteColours
		if isImageJ0 {
			mode = paletteIndices
		}
		l, err := pageLayoutOf(p, mode)
		if err != nil {
			if err := m.skip(fmt.Errorf("page %d: %w", i, err)); err != nil {
				return err
			}
			unread[len(m.file.Skipped)-1] = p
			continue
		}
		// Found by its key, not by comparing with each group: a file of
		// one series per page (tifffile writes such) would otherwise take
		// time in the square of its pages.
		if g := byKey[groupKey{l, series}]; g != nil {
			g.pages = append(g.pages, p)
		} else {
			g = &group{layout: l, series: series, pages: []*tiff.Page{p}}
			groups, byKey[groupKey{l, series}] = append(groups, g), g
		}
	}
	// ImageJ's description counts the pages of its stack: pages of the
	// same shape after them (stacks joined by tiffcp, each with its own
	// description) are a further image, as tifffile reads the stack alone.
	for k := 0; k < len(groups); k++ {
		g := groups[k]
		if ij, ok := parseImageJ(g.pages[0].Description()); ok && ij.pages(g.layout, len(g.pages)) > 0 && ij.pages(g.layout, len(g.pages)) < len(g.pages) {
			n := ij.pages(g.layout, len(g.pages))
			rest := &group{layout: g.layout, series: g.series, pages: g.pages[n:len(g.pages):len(g.pages)]}
			g.pages = g.pages[:n:n]
			groups = slices.Insert(groups, k+1, rest)
		}
	}
	var mapped []*tiff.Page
	for _, g := range groups {
		mapped = append(mapped, g.pages...)
	}
	markLeftOut(m.file.Skipped, unread, mapped)
	for i, g := range groups {
		var ij imageJ
		var sh shaped
		isImageJ, isShaped := false, false
		d := g.pages[0].Description()
		if i == 0 && g.pages[0] == pages[0] {
			ij, isImageJ = ij0, isImageJ0
		} else {
			ij, isImageJ = parseImageJ(d) // a stack joined after the first
		}
		if !isImageJ && shapedFile {
			sh, isShaped = parseShaped(d)
			sh = sh.axesFor(g.layout)
		}
		var err error
		switch {
		case isImageJ && ij.pages(g.layout, len(g.pages)) > len(g.pages):
			what := fmt.Sprintf("the ImageJ description (images=%d)", ij.images)
			g.pages, err = m.storedAfter(ij.pages(g.layout, len(g.pages)), g.pages, g.layout, len(pages) == 1, what)
		case isShaped && sh.pages(g.layout) > len(g.pages):
			what := fmt.Sprintf("tifffile's description (shape %v, axes %q)", sh.Shape, sh.Axes)
			g.pages, err = m.storedAfter(sh.pages(g.layout), g.pages, g.layout, len(pages) == 1, what)
		}
		if err != nil {
			return err
		}
		if isShaped && g.layout.rgb && strings.IndexByte("ZT", sh.samplesAxis(g.layout)) >= 0 {
			g.layout.rgb = false // the samples are planes along Z or T, not colours
		}
		im := genericImage(g.pages, g.layout, levels)
		if isShaped {
			sh.apply(im, g.layout, len(g.pages))
		}
		if isImageJ {
			ij.apply(im, g.layout, len(g.pages))
			more, dropped := imageJText(im, g.pages[0])
			if more > 0 {
				if err := m.skipImageMetadata(im, fmt.Errorf("%w: the ImageJ description's page holds %d properties, and only the first %d are kept",
					ErrMetadata, maxImageJProperties+more, maxImageJProperties)); err != nil {
					return err
				}
			}
			if dropped > 0 {
				if err := m.skipImageMetadata(im, fmt.Errorf("%w: the ImageJ metadata's text (Info, properties, labels) is kept to %d bytes: %d characters of it past those are left out",
					ErrMetadata, maxImageJText, dropped)); err != nil {
					return err
				}
			}
			if c := lutColor(g.pages[0]); c != nil && im.Spec.SizeC == 1 {
				im.Spec.Channels = []pyramid.Channel{{Color: c}}
			}
			// A composite image's channels are shown through the tables
			// of its metadata, one a channel.
			if luts := imageJLUTs(g.pages[0]); len(luts) == im.Spec.SizeC && len(im.Spec.Channels) == 0 && !g.layout.rgb {
				im.Spec.Channels = make([]pyramid.Channel, len(luts))
				for c, lut := range luts {
					im.Spec.Channels[c].Color = lastColor(lut[255], lut[511], lut[767])
				}
			}
		}
		textTags(im)
		if err := m.gdal(im, g.layout); err != nil {
			return err
		}
		m.add(im)
	}
	return nil
}

// continuesPyramid reports whether the page p, marked reduced, is a level
// of the pyramid of the full page: of its samples, smaller, and of full's
// aspect within a pixel of either side, or padded along one side to whole
// tiles (as Philips writes its levels). A thumbnail of that aspect is one
// too: the levels are computed again, and -copy-levels copies only those
// of one factor.
func continuesPyramid(full, p *tiff.Page) bool {
	size := func(p *tiff.Page, wTag, hTag uint16) (uint64, uint64) {
		w, _ := p.Uint(wTag)
		h, _ := p.Uint(hTag)
		return w, h
	}
	fw, fh := size(full, tiff.TagImageWidth, tiff.TagImageLength)
	w, h := size(p, tiff.TagImageWidth, tiff.TagImageLength)
	tw, th := size(p, tiff.TagTileWidth, tiff.TagTileLength) // 0 for strips
	if w == 0 || h == 0 || w > fw || h > fh || w == fw && h == fh || max(fw, fh, tw, th) > 1<<32 {
		return false
	}
	// Of other samples (a mask of one sample after an RGB pyramid): no
	// level. Their format may differ (libvips marks the levels of a signed
	// pyramid unsigned), and a page whose layout is not read is one still.
	if lf, err := full.Layout(); err == nil {
		if lp, err := p.Layout(); err == nil && (lp.SamplesPerPixel != lf.SamplesPerPixel || lp.BitsPerSample != lf.BitsPerSample) {
			return false
		}
	}
	// Products of 32-bit sizes: w*fh is h*fw for a level of full's aspect.
	a, b := w*fh, h*fw
	switch {
	case max(a, b)-min(a, b) <= max(fw, fh):
		return true
	case b > a: // taller than the aspect: rows padded, less than a tile
		return b-a < (th+1)*fw
	default: // wider: columns padded
		return a-b < (tw+1)*fh
	}
}

// imageJBlocks returns the blocks of an ImageJ page's metadata (tags
// 50838 and 50839) that keep takes, by kind ("info", "labl", "luts"...),
// and the byte order of their numbers and text. keep is given each
// block's kind and its index among the blocks of that kind, so that a
// file of millions of blocks costs only those kept. The blocks' header
// ("IJIJ", or "JIJI" little-endian) lists each kind of block and how
// many; nil when there are none or the blocks do not add up.
func imageJBlocks(p *tiff.Page, keep func(kind string, i int) bool) (map[string][][]byte, binary.ByteOrder) {
	data, ok1 := p.Field(tiff.TagIJMetadata)
	countsField, ok2 := p.Field(tiff.TagIJMetadataByteCounts)
	if !ok1 || !ok2 || data.Type.Size() != 1 {
		return nil, nil
	}
	counts, err := countsField.Uints()
	if err != nil || len(counts) == 0 || counts[0] < 4 || counts[0]%8 != 4 || counts[0] > uint64(len(data.Value)) {
		return nil, nil
	}
	head := data.Value[:counts[0]]
	var order binary.ByteOrder
	switch string(head[:4]) {
	case "IJIJ":
		order = binary.BigEndian
	case "JIJI":
		order = binary.LittleEndian
	default:
		return nil, nil
	}
	at, block := counts[0], 1 // the byte and the count of the block next
	blocks := map[string][][]byte{}
	seen := map[string]int{}
	for k := 4; k+8 <= len(head); k += 8 {
		var b [4]byte // a number, its bytes reversed little-endian
		copy(b[:], head[k:k+4])
		if order == binary.LittleEndian {
			slices.Reverse(b[:])
		}
		kind := string(b[:])
		n := uint64(order.Uint32(head[k+4:]))
		if n > uint64(len(counts)-block) {
			return nil, nil
		}
		for range n {
			size := counts[block]
			if size > uint64(len(data.Value))-at {
				return nil, nil
			}
			if keep(kind, seen[kind]) {
				blocks[kind] = append(blocks[kind], data.Value[at:at+size])
			}
			seen[kind]++
			at, block = at+size, block+1
		}
	}
	return blocks, order
}

// imageJLUTs returns the lookup tables of an ImageJ page's metadata, one a
// channel of a composite image: 768 bytes each, the reds, greens and
// blues of its 256 entries.
func imageJLUTs(p *tiff.Page) [][]byte {
	blocks, _ := imageJBlocks(p, func(kind string, _ int) bool { return kind == "luts" })
	var luts [][]byte
	for _, b := range blocks["luts"] {
		if len(b) == 768 {
			luts = append(luts, b)
		}
	}
	return luts
}

// maxImageJProperties bounds the properties read of an ImageJ image: a
// few in the files ImageJ writes, and a file of millions of empty ones
// would otherwise cost tens of times its size.
const maxImageJProperties = 4096

// maxImageJText bounds the text of an ImageJ image's Info, properties and
// labels kept: a block is kept while the bytes kept before it and its
// characters are within it. A few kilobytes in the files ImageJ writes;
// the text kept, at most 3 bytes a character in UTF-8 and 5 times longer
// escaped for XML, stays below pyramid.MaxOMEXMLSize, past which this
// package reads no OME-XML.
const maxImageJText = 8 << 20

// imageJText adds the text of an ImageJ page's metadata to the image's
// map annotation, as Bio-Formats keeps it as original metadata: the
// image's Info ("Info", the first block, as ImageJ reads it), its
// properties (each under its key, the first maxImageJProperties), and the
// labels of its stack's planes ("Label 1"..., by position in the stack,
// those not empty). The display ranges, overlays and ROIs have no place.
// It returns how many properties there are past those kept, and the
// bytes of text left out past maxImageJText.
func imageJText(im *Image, p *tiff.Page) (more, dropped int) {
	blocks, order := imageJBlocks(p, func(kind string, i int) bool {
		switch kind {
		case "info":
			return i == 0
		case "prop":
			if i >= 2*maxImageJProperties && i%2 == 0 {
				more++ // a key
			}
			return i < 2*maxImageJProperties
		case "labl":
			return i < len(im.Planes) // one a plane of the stack: others label nothing
		}
		return false
	})
	if blocks == nil {
		return 0, 0 // the blocks do not add up: none is read
	}
	kept := 0
	text := func(b []byte) string {
		if kept+len(b)/2 > maxImageJText { // at least a byte a character
			dropped += len(b) / 2
			return ""
		}
		// UTF-8 straight from the UTF-16, not through a []rune of four
		// bytes a character.
		out := make([]byte, 0, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			r := rune(order.Uint16(b[i:]))
			if utf16.IsSurrogate(r) {
				r2 := unicode.ReplacementChar
				if i+3 < len(b) {
					r2 = rune(order.Uint16(b[i+2:]))
				}
				if r = utf16.DecodeRune(r, r2); r != unicode.ReplacementChar {
					i += 2
				}
			}
			out = utf8.AppendRune(out, r)
		}
		t := pyramid.XMLText(strings.TrimSpace(string(out)))
		kept += len(t)
		return t
	}
	add := func(key, value string) {
		if key != "" && value != "" {
			im.Spec.Annotations = append(im.Spec.Annotations, pyramid.KeyValue{Key: key, Value: value})
		}
	}
	for _, b := range blocks["info"] {
		add("Info", text(b))
	}
	props := blocks["prop"]
	for i := 0; i+1 < len(props); i += 2 {
		before := dropped
		key := text(props[i])
		if dropped > before { // its value goes with it
			dropped += len(props[i+1]) / 2
			continue
		}
		if key != "" { // a property of no value is one still
			im.Spec.Annotations = append(im.Spec.Annotations, pyramid.KeyValue{Key: key, Value: text(props[i+1])})
		}
	}
	for i, b := range blocks["labl"] {
		add("Label "+strconv.Itoa(i+1), text(b))
	}
	return more, dropped
}

// lastColor returns the colour of a lookup table's last entry, nil for
// black (an inverted table, which no channel colour renders).
func lastColor(r, g, b uint8) color.Color {
	if r == 0 && g == 0 && b == 0 {
		return nil
	}
	return color.NRGBA{r, g, b, 0xff}
}

// lutColor returns the colour ImageJ shows the highest value of a palette
// page in, the colour of its channel; nil for a page without a palette,
// or one whose highest entry is black (an inverted table, which no
// channel colour renders).
func lutColor(p *tiff.Page) color.Color {
	e, ok := p.Field(tiff.TagColorMap)
	if !ok {
		return nil
	}
	v, err := e.Uints()
	if err != nil || len(v) < 3 || len(v)%3 != 0 {
		return nil
	}
	n := len(v) / 3
	return lastColor(uint8(v[n-1]>>8), uint8(v[2*n-1]>>8), uint8(v[3*n-1]>>8))
}

// shaped is what tifffile's description of a shaped series
// ({"shape": [...], "axes": "..."}, JSON) says of its pages.
type shaped struct {
	Shape  []int  `json:"shape"`
	Axes   string `json:"axes"`
	unsaid bool   // the axes are axesFor's, the description naming none
}

// parseShaped reads tifffile's JSON description.
func parseShaped(d string) (shaped, bool) {
	var sh shaped
	if !strings.HasPrefix(strings.TrimSpace(d), "{") || json.Unmarshal([]byte(d), &sh) != nil {
		return shaped{}, false
	}
	return sh, (sh.Axes == "" || len(sh.Axes) == len(sh.Shape)) && len(sh.Shape) > 0
}

// axesFor returns sh with axes when its description gives none (tifffile
// writes none unless asked): the page's (YX, with the samples' axis S
// after them or, planar, before them), and Q, an axis OME lacks, for each
// of the others, as tifffile names them.
func (sh shaped) axesFor(l pageLayout) shaped {
	k := len(sh.Shape)
	if sh.Axes != "" || k < 2 {
		return sh
	}
	is := func(at int, v int) bool { return at >= 0 && sh.Shape[at] == v }
	page := ""
	switch {
	case l.samples == 1 && is(k-2, l.height) && is(k-1, l.width):
		page = "YX"
	case l.samples > 1 && is(k-3, l.height) && is(k-2, l.width) && is(k-1, l.samples):
		page = "YXS"
	case l.samples > 1 && is(k-3, l.samples) && is(k-2, l.height) && is(k-1, l.width):
		page = "SYX"
	default:
		return sh
	}
	sh.Axes, sh.unsaid = strings.Repeat("Q", k-len(page))+page, true
	return sh
}

// apply spreads the n pages of im over Z, C and T as the axes say, when
// the axes before the page's (see pageAxes) name Z and C once at most and
// their sizes multiply to n. Axes OME lacks (tifffile's Q, I, R, ...) go
// along T with T, if any, the slower axis the outer one: T's size is
// their product. Otherwise the pages stay along T.
func (sh shaped) apply(im *Image, l pageLayout, n int) {
	if !sh.spread(im, l, n) {
		sh.samplesOnly(im, l, n)
		if n > 1 {
			what := fmt.Sprintf("tifffile's axes %s (shape %v) do", sh.Axes, sh.Shape)
			if sh.unsaid || sh.Axes == "" {
				what = fmt.Sprintf("tifffile's shape %v does", sh.Shape)
			}
			im.Notes = append(im.Notes, fmt.Sprintf("%s not fit its %d pages: they go along T", what, n))
		}
	}
}

// samplesOnly puts the samples of pages whose samples are planes along
// the axis the description names for them when it is Z or T (the pages
// along T, slower), where spread could not map the other axes.
func (sh shaped) samplesOnly(im *Image, l pageLayout, n int) {
	s, planes := &im.Spec, l.planesPerPage()
	switch sh.samplesAxis(l) {
	case 'Z':
		s.SizeZ, s.SizeC, s.SizeT, s.DimensionOrder = planes, 1, n, pyramid.XYZTC
	case 'T':
		s.SizeZ, s.SizeC, s.SizeT, s.DimensionOrder = 1, 1, planes*n, pyramid.XYTCZ
	}
}

// spread is apply's mapping, false when the axes do not allow it. The
// planes of im, in the order of the pages and their samples, are put in
// the order of the spec's DimensionOrder: where the axes along T are not
// next to one another, no DimensionOrder is the pages' own.
func (sh shaped) spread(im *Image, l pageLayout, n int) bool {
	lead, _ := sh.pageAxes(l)
	if lead < 0 {
		return false
	}
	type axis struct {
		along byte // Z, C or T
		size  int
	}
	var axes []axis // slowest first: those before the page's, then its samples
	var alongT []string
	product := 1
	for k := range lead {
		a, size := sh.Axes[k], sh.Shape[k]
		if size <= 0 || size > n || product > n/size {
			return false
		}
		if a != 'Z' && a != 'C' && a != 'T' && size > 1 && !sh.unsaid {
			alongT = append(alongT, fmt.Sprintf("%c (%d)", a, size))
		}
		if a != 'Z' && a != 'C' {
			a = 'T'
		}
		axes = append(axes, axis{a, size})
		product *= size
	}
	if product != n {
		return false
	}
	var alongC string
	if pp := l.planesPerPage(); pp > 1 { // the page's samples are planes: channels, unless the axes say Z or T
		a := sh.samplesAxis(l)
		if a != 'Z' && a != 'T' && a != 'C' && a != 'S' && a != 0 && !sh.unsaid {
			alongC = fmt.Sprintf("%c (%d)", a, pp)
		}
		if a != 'Z' && a != 'T' {
			a = 'C'
		}
		axes = append(axes, axis{a, pp})
	}
	// A page's samples along C after an axis C (tifffile's CYXS of several
	// samples) are channels within each of its channels: C x S channels,
	// as an OME-TIFF of such pages counts them.
	samplesC := 1
	if n := len(axes); l.planesPerPage() > 1 && axes[n-1].along == 'C' {
		samplesC = axes[n-1].size
	}
	sizes := map[byte]int{'Z': 1, 'C': 1, 'T': 1}
	order := "" // fastest first
	for k := len(axes) - 1; k >= 0; k-- {
		a := axes[k]
		if a.size == 1 {
			continue
		}
		if a.along != 'T' && sizes[a.along] > 1 && (a.along != 'C' || sizes['C'] != samplesC || samplesC == 1) {
			return false // Z or C twice
		}
		sizes[a.along] *= a.size
		if strings.IndexByte(order, a.along) < 0 {
			order += string(a.along)
		}
	}
	s := im.Spec
	s.SizeZ, s.SizeC, s.SizeT = sizes['Z'], sizes['C'], sizes['T']
	if len(order) > 1 { // with one axis (or none) the order is moot
		for _, a := range "CZT" {
			if !strings.ContainsRune(order, a) {
				order += string(a)
			}
		}
		s.DimensionOrder = pyramid.DimensionOrder("XY" + order)
	}
	if len(im.Planes) != s.Planes() {
		return false
	}
	planes := make([]Plane, len(im.Planes))
	idx := make([]int, len(axes))
	slot := map[byte]int{'Z': 0, 'C': 1, 'T': 2}
	for i, p := range im.Planes {
		rest := i
		for k := len(axes) - 1; k >= 0; k-- { // i's digits, fastest first
			idx[k], rest = rest%axes[k].size, rest/axes[k].size
		}
		var at [3]int            // z, c, t
		for k, a := range axes { // slowest first: the outer index along T
			at[slot[a.along]] = at[slot[a.along]]*a.size + idx[k]
		}
		j, err := s.PlaneIndex(at[0], at[1], at[2])
		if err != nil || planes[j].Page != nil {
			return false
		}
		planes[j] = p
	}
	im.Spec, im.Planes = s, planes
	if len(alongT) > 0 {
		im.Notes = append(im.Notes, fmt.Sprintf("tifffile's axes %s (shape %v): %s put along T, as OME has no such axis",
			sh.Axes, sh.Shape, strings.Join(alongT, ", ")))
	}
	if alongC != "" { // the samples of each page
		im.Notes = append(im.Notes, fmt.Sprintf("tifffile's axes %s (shape %v): %s, the samples of each page, put along C, as OME has no such axis",
			sh.Axes, sh.Shape, alongC))
	}
	return true
}

// pageAxes returns how many axes come before the page's, and the index of
// the samples' axis (-1 for a page of one sample), for pages of layout l:
// Y and X of the page's size, the samples' axis after them (YXS, or YXC
// for samples that are not colours) or, for planar-separate samples,
// before them. lead is -1 when the axes do not end with the page's.
func (sh shaped) pageAxes(l pageLayout) (lead, samples int) {
	last := len(sh.Axes) - 1
	yx := func(at int) bool {
		return at >= 0 && at+1 <= last && sh.Axes[at:at+2] == "YX" && sh.Shape[at] == l.height && sh.Shape[at+1] == l.width
	}
	switch {
	case l.samples == 1 && yx(last-1):
		return last - 1, -1
	case l.samples > 1 && yx(last-2) && sh.Shape[last] == l.samples:
		return last - 2, last
	case l.samples > 1 && yx(last-1) && last >= 2 && sh.Shape[last-2] == l.samples:
		return last - 2, last - 2
	}
	return -1, -1
}

// samplesAxis returns the letter of the samples' axis of pages of more
// than one sample; 0 for none.
func (sh shaped) samplesAxis(l pageLayout) byte {
	if _, at := sh.pageAxes(l); at >= 0 {
		return sh.Axes[at]
	}
	return 0
}

// pages returns the pages the description counts, for pages of layout
// l: the product of the sizes of the axes before the page's; 0 when the
// axes are not the page's, or past the int range.
func (sh shaped) pages(l pageLayout) int {
	lead, _ := sh.pageAxes(l)
	if lead < 0 {
		return 0
	}
	n := 1
	for _, size := range sh.Shape[:lead] {
		if size <= 0 || n > math.MaxInt32/size {
			return 0
		}
		n *= size
	}
	return n
}

// successorCost is about what the mapping holds of a page stored after
// another's data, beyond its offsets and fields; planeCost what the
// mapping and the writer hold of each plane the page makes.
const (
	successorCost = 512
	planeCost     = 1024
)

// storedAfter returns the pages of an image whose description (what)
// counts want pages, more than the file has. ImageJ writes a stack past
// 4 GiB (and tifffile, asked to truncate, any shaped series) as one
// directory followed by every plane's data, uncompressed and contiguous,
// as ImageJ, tifffile and Bio-Formats read it: alone is whether the file's
// main chain is that one page. A file that does not hold so many planes
// is ErrMetadata, and with SkipUnsupported the pages there are kept and
// the shortfall said. What the pages cost the mapping (their offsets and
// fields) is bounded by the file's size, or 8 MiB for a small file:
// ErrSize past it.
func (m *mapper) storedAfter(want int, pages []*tiff.Page, l pageLayout, alone bool, what string) ([]*tiff.Page, error) {
	short := func(err error) ([]*tiff.Page, error) {
		held := fmt.Sprintf("%d pages", len(pages))
		if len(pages) == 1 {
			held = "1 page"
		}
		return pages, m.skipMetadata(fmt.Errorf("%w: %s says %d planes, and the file holds %s of the first page's size and type: %w",
			ErrMetadata, what, want, held, err))
	}
	if !alone {
		return short(errors.New("its planes are not stored after the first page's alone"))
	}
	first := pages[0]
	size := m.file.TIFF.Size
	cost := int64(8*first.NumBlocks()+48*len(first.Fields)) + successorCost + planeCost*int64(l.planesPerPage())
	if limit := max(size, 8<<20); int64(want) > limit/cost {
		return pages, m.skipMetadata(fmt.Errorf("%w: %s says %d planes of %d blocks each in a %d-byte file, more than it can hold",
			ErrSize, what, want, first.NumBlocks(), size))
	}
	// The last plane first: a file that does not reach it is refused
	// before any page is made.
	if _, err := first.Successor(want - 1); err != nil {
		return short(err)
	}
	out := make([]*tiff.Page, want)
	out[0] = first
	for k := 1; k < want; k++ {
		p, err := first.Successor(k)
		if err != nil {
			return short(err)
		}
		out[k] = p
	}
	return out, nil
}

// genericImage makes the image of pages of one layout: the pages along
// T, each page's planes (its samples, unless RGB) along C, each with its
// levels.
func genericImage(pages []*tiff.Page, l pageLayout, levels map[*tiff.Page][]*tiff.Page) *Image {
	first := pages[0]
	spec := pyramid.ImageSpec{
		SizeX: l.width, SizeY: l.height,
		SizeZ: 1, SizeC: l.planesPerPage(), SizeT: len(pages),
		DimensionOrder: pyramid.XYCZT, PixelType: l.pixelType, SamplesPerPixel: l.specSamples(),
	}
	if name, ok := first.Text(tiff.TagPageName); ok {
		spec.Name = pyramid.XMLText(strings.TrimSpace(name))
	}
	if d := strings.TrimSpace(first.Description()); d != "" && !strings.HasPrefix(d, "ImageJ=") {
		spec.Description = pyramid.XMLText(d)
	}
	if dt, ok := first.Text(tiff.TagDateTime); ok {
		// TIFF's DateTime has no zone: its clock is the writer's, whatever that was.
		if t, err := time.ParseInLocation("2006:01:02 15:04:05", strings.TrimSpace(dt), pyramid.NoZone); err == nil && t.Year() >= 1 { // xsd:dateTime's years
			spec.AcquisitionDate = t
		}
	}
	spec.PhysicalSizeX, spec.PhysicalSizeY = resolution(first)
	if x, y, ok := philipsSpacing(first.Description()); ok {
		spec.PhysicalSizeX, spec.PhysicalSizeY = x, y
		spec.PhysicalSizeXUnit, spec.PhysicalSizeYUnit = "µm", "µm"
		philipsDescribe(&spec, first.Description())
	}
	// A Philips slide's label and macro pages are described so, as
	// OpenSlide names them.
	if d := strings.ToLower(strings.TrimSpace(first.Description())); spec.Name == "" && (d == "label" || d == "macro") {
		spec.Name = d
	}
	im := &Image{Spec: spec, OMEImage: -1, palette: l.palette}
	if l.palette {
		im.Notes = append(im.Notes, "a palette image: the colours of its ColorMap are written, as libvips reads it, not its indices, "+
			"which tifffile and Bio-Formats give")
	}
	for _, p := range pages {
		im.Planes = append(im.Planes, planesOf(p, l, levels[p])...)
	}
	return im
}

// philipsSpacing returns the pixel size, in µm, that a Philips slide's
// description (XML of a DPUfsImport DataObject) gives its full
// resolution: the first DICOM_PIXEL_SPACING, the rows' spacing then the
// columns', in mm, as OpenSlide reads it.
func philipsSpacing(d string) (x, y float64, ok bool) {
	if !isPhilips(d) {
		return 0, 0, false
	}
	value, found := philipsAttribute(d, "DICOM_PIXEL_SPACING")
	if !found {
		return 0, 0, false
	}
	fields := strings.Fields(strings.ReplaceAll(value, `"`, " "))
	if len(fields) != 2 {
		return 0, 0, false
	}
	rows, err1 := strconv.ParseFloat(fields[0], 64)
	cols, err2 := strconv.ParseFloat(fields[1], 64)
	x, y = positive(cols*1000), positive(rows*1000)
	return x, y, err1 == nil && err2 == nil && x > 0 && y > 0
}

// philipsAttribute returns the text of the first Attribute element named
// name in a Philips slide's description, its entities replaced, as
// OpenSlide reads the attributes it maps.
func philipsAttribute(d, name string) (string, bool) {
	_, after, found := strings.Cut(d, `Name="`+name+`"`)
	if !found {
		return "", false
	}
	_, after, found = strings.Cut(after, ">")
	value, _, closed := strings.Cut(after, "<")
	if !found || !closed {
		return "", false
	}
	return xmlEntities.Replace(value), true
}

// xmlEntities replaces XML's predefined entities.
var xmlEntities = strings.NewReplacer("&quot;", `"`, "&apos;", "'", "&lt;", "<", "&gt;", ">", "&amp;", "&")

// philipsDescribe maps what OpenSlide maps of a Philips slide's
// description besides its pixel size: the objective's magnification, the
// first entry of DICOM_DERIVATION_DESCRIPTION's "levels=" when at most
// 200 (a larger one is no magnification), and the barcode,
// PIM_DP_UFS_BARCODE in base64, as an annotation.
func philipsDescribe(s *pyramid.ImageSpec, d string) {
	if v, ok := philipsAttribute(d, "DICOM_DERIVATION_DESCRIPTION"); ok {
		for item := range strings.SplitSeq(v, "-") {
			key, value, _ := strings.Cut(item, "=")
			if key == "sourceFilename" { // a quoted value, whose dashes split it
				break
			}
			if key == "levels" {
				first, _, _ := strings.Cut(value, ",")
				if mag, err := strconv.ParseUint(first, 10, 32); err == nil && mag > 0 && mag <= 200 {
					s.Instrument = objective(float64(mag))
				}
				break
			}
		}
	}
	if v, ok := philipsAttribute(d, "PIM_DP_UFS_BARCODE"); ok {
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v)); err == nil {
			if text := strings.TrimSpace(pyramid.XMLText(string(b))); text != "" {
				s.Annotations = append(s.Annotations, pyramid.KeyValue{Key: "Barcode", Value: text})
			}
		}
	}
}

// resolution returns the size of a pixel in µm from XResolution,
// YResolution and ResolutionUnit (inch by default, as the TIFF
// specification has it, or centimeter), as Bio-Formats reads it; 0 for
// none, or for ResolutionUnit none.
func resolution(p *tiff.Page) (x, y float64) {
	unit, ok := p.Uint(tiff.TagResolutionUnit)
	if !ok {
		unit = uint64(tiff.ResolutionUnitInch)
	}
	perUnit := map[uint64]float64{uint64(tiff.ResolutionUnitInch): 25400, uint64(tiff.ResolutionUnitCentimeter): 10000}[unit]
	return sizeOf(p, tiff.TagXResolution, perUnit), sizeOf(p, tiff.TagYResolution, perUnit)
}

// sizeOf converts a resolution field, in pixels per unit, to the size of
// a pixel: perUnit over the resolution; 0 when absent or not positive.
func sizeOf(p *tiff.Page, tag uint16, perUnit float64) float64 {
	e, ok := p.Field(tag)
	if !ok {
		return 0
	}
	v, err := e.Floats()
	if err != nil || len(v) == 0 || !(v[0] > 0) || perUnit == 0 {
		return 0
	}
	return positive(perUnit / v[0]) // not a pixel size otherwise: the writer would refuse it
}

// imageJ is what an ImageJ description ("ImageJ=1.x\nimages=..\n...")
// says of a hyperstack.
type imageJ struct {
	images                   int // planes in the stack; 0 when not said
	channels, slices, frames int
	spacing                  float64 // between slices, in unit
	unit                     string  // of the pixel sizes (the resolution's unit), OME's spelling
	unitSaid                 string  // the unit as said, "" when not
	yunit, zunit             axisUnit
	interval                 float64 // between frames, in tunit
	tunit                    axisUnit
}

// axisUnit is an ImageJ unit of one axis (yunit, zunit, tunit): OME's
// spelling, "" when it is not said or not known.
type axisUnit struct {
	ome   string
	given bool // said, known or not
}

// imageJUnit reads an ImageJ unit as units spells them.
func imageJUnit(value string, units map[string]string) axisUnit {
	return axisUnit{ome: units[value], given: value != ""}
}

// imageJValue is a value of an ImageJ description as ImageJ reads it
// (java.util.Properties): without the spaces around it, its \uXXXX
// escapes decoded (ImageJ writes µ as \u00B5).
func imageJValue(v string) string {
	v = strings.TrimSpace(v)
	if !strings.Contains(v, `\u`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+6 <= len(v) && v[i+1] == 'u' {
			if r, err := strconv.ParseUint(v[i+2:i+6], 16, 16); err == nil {
				b.WriteRune(rune(r))
				i += 5
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// imageJFloat reads a number of an ImageJ description as Java's
// Double.parseDouble does: Go's digit separators ("1_000") are no number,
// and Java's float and double suffixes ("0.5f", "2D") end one.
func imageJFloat(v string) (float64, error) {
	if strings.Contains(v, "_") {
		return 0, strconv.ErrSyntax
	}
	if n := len(v); n > 1 && strings.IndexByte("fFdD", v[n-1]) >= 0 {
		v = v[:n-1] // a hexadecimal number ends in its exponent's digits, so this is no digit of it
	}
	return strconv.ParseFloat(v, 64)
}

// parseImageJ reads an ImageJ description: its channels, slices and
// frames (1 when absent), spacing and unit.
func parseImageJ(d string) (imageJ, bool) {
	if !strings.HasPrefix(d, "ImageJ=") {
		return imageJ{}, false
	}
	ij := imageJ{channels: 1, slices: 1, frames: 1}
	for line := range strings.SplitSeq(d, "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), imageJValue(value)
		n, err := strconv.Atoi(value)
		switch {
		case key == "images" && err == nil && n > 0:
			ij.images = n
		case key == "channels" && err == nil && n > 0:
			ij.channels = n
		case key == "slices" && err == nil && n > 0:
			ij.slices = n
		case key == "frames" && err == nil && n > 0:
			ij.frames = n
		// A key said again replaces what it said (java.util.Properties),
		// a value that is no number with none.
		case key == "spacing":
			ij.spacing = 0
			if v, err := imageJFloat(value); err == nil {
				ij.spacing = positive(math.Abs(v)) // as ImageJ takes it; 0, unknown, if OME's float cannot hold it
			}
		case key == "finterval":
			ij.interval = 0
			if v, err := imageJFloat(value); err == nil && v > 0 && float32(v) > 0 && v < 1e30 { // not 0 as a float
				ij.interval = v
			}
		case key == "tunit":
			ij.tunit = imageJUnit(strings.ToLower(value), imageJTimeUnits)
		case key == "yunit":
			ij.yunit = imageJUnit(value, imageJUnits)
		case key == "zunit":
			ij.zunit = imageJUnit(value, imageJUnits)
		case key == "unit":
			ij.unit, ij.unitSaid = imageJUnits[value], value
		}
	}
	return ij, true
}

// pages returns the pages the description counts, for have pages of
// layout l: its images, each a page, but for pages of several samples when
// channels counts the samples (Bio-Formats writes "images" as SizeC x
// SizeZ x SizeT, an RGB page's samples counted in SizeC) and the file does
// not hold as many pages as images (ImageJ and tifffile write an RGB
// hyperstack of 3 channels as 3 RGB pages a slice, "channels=3").
func (ij imageJ) pages(l pageLayout, have int) int {
	if l.samples > 1 && ij.channels == l.samples && ij.images%l.samples == 0 && have != ij.images {
		return ij.images / l.samples
	}
	return ij.images
}

// imageJTimeUnits are ImageJ's spellings of time units, in lower case,
// with OME's.
var imageJTimeUnits = map[string]string{
	"s": "s", "sec": "s", "second": "s", "seconds": "s", "ms": "ms", "msec": "ms", "us": "µs", "µs": "µs", "usec": "µs",
	"ns": "ns", "nsec": "ns", "ps": "ps", "psec": "ps", "min": "min", "minute": "min", "minutes": "min", "h": "h", "hr": "h", "hour": "h", "hours": "h", "d": "d", "day": "d", "days": "d",
}

// imageJUnits are ImageJ's spellings of length units, with OME's.
var imageJUnits = map[string]string{
	"micron": "µm", "microns": "µm", "um": "µm", "µm": "µm", "nm": "nm", "nanometer": "nm",
	"mm": "mm", "millimeter": "mm", "cm": "cm", "centimeter": "cm", "m": "m", "meter": "m",
	"inch": "in", "in": "in", "km": "km", "pm": "pm", "Å": "Å", "angstrom": "Å", "\u212b": "Å", "pixel": "", "": "",
}

// apply spreads the n pages of im over channels, slices and frames, in
// ImageJ's order (channels fastest, then slices: XYCZT), when their
// product is n; RGB pages count as one channel when slices and frames
// alone make n, each an RGB channel when channels, slices and frames do
// (an RGB hyperstack, as Bio-Formats reads both), and pages whose samples
// are channels count their samples (Bio-Formats writes such files).
// Otherwise the pages stay along T, and a note says so.
//
// The sizes are ImageJ's: the resolution is in the description's unit,
// whatever ResolutionUnit says (but for ImageJ's own rule: "um" of a
// resolution per centimeter is per centimeter), the spacing of slices
// too; yunit and zunit, when said, are Y's and Z's; a unit said that OME
// does not have, or "pixel" (an image not calibrated), leaves its sizes
// out. Without a unit, the sizes are Bio-Formats': the resolution in
// ResolutionUnit's (as genericImage read it), the spacing in µm. The frame
// interval is the time increment, in ImageJ's time unit (seconds when not
// said), and left out in a unit not known.
func (ij imageJ) apply(im *Image, l pageLayout, n int) {
	s := &im.Spec
	channels := ij.channels
	if l.rgb {
		channels = 1
	}
	// The sizes are each at most n, so that their products cannot
	// overflow.
	within := channels <= n && ij.slices <= n && ij.frames <= n
	switch {
	case within && l.planesPerPage() == 1 && channels*ij.slices*ij.frames == n:
		s.SizeC, s.SizeZ, s.SizeT = channels, ij.slices, ij.frames
	case within && ij.channels <= n && l.rgb && ij.channels*ij.slices*ij.frames == n:
		s.SizeC, s.SizeZ, s.SizeT = ij.channels, ij.slices, ij.frames
	case within && l.planesPerPage() > 1 && channels == l.planesPerPage() && ij.slices*ij.frames == n:
		// Bio-Formats' layout: a page's samples are the channels.
		s.SizeZ, s.SizeT = ij.slices, ij.frames
	case n > 1 && (ij.channels > 1 || ij.slices > 1 || ij.frames > 1) && !(l.rgb && ij.channels == l.samples && ij.slices*ij.frames == 1):
		im.Notes = append(im.Notes, fmt.Sprintf("the ImageJ description's channels=%d slices=%d frames=%d do not fit its %d pages: they go along T",
			ij.channels, ij.slices, ij.frames, n))
	}
	page := im.Planes[0].Page
	switch {
	case ij.unit != "":
		perUnit := 1.0
		if unit, _ := page.Uint(tiff.TagResolutionUnit); ij.unitSaid == "um" && unit == uint64(tiff.ResolutionUnitCentimeter) {
			perUnit = 10000
		}
		s.PhysicalSizeX = sizeOf(page, tiff.TagXResolution, perUnit)
		s.PhysicalSizeY = sizeOf(page, tiff.TagYResolution, perUnit)
		s.PhysicalSizeXUnit, s.PhysicalSizeYUnit = ij.unit, ij.unit
	case ij.unitSaid != "":
		s.PhysicalSizeX, s.PhysicalSizeY, s.PhysicalSizeXUnit, s.PhysicalSizeYUnit = 0, 0, "", ""
	}
	if ij.yunit.given {
		s.PhysicalSizeY, s.PhysicalSizeYUnit = 0, ""
		if ij.yunit.ome != "" {
			s.PhysicalSizeY, s.PhysicalSizeYUnit = sizeOf(page, tiff.TagYResolution, 1), ij.yunit.ome
		}
	}
	if ij.interval > 0 && s.SizeT > 1 && (ij.tunit.ome != "" || !ij.tunit.given) {
		unit := ij.tunit.ome
		if unit == "" {
			unit = "s" // ImageJ's default
		}
		s.TimeIncrement = pyramid.Quantity{Value: ij.interval, Unit: unit}
	}
	zunit := ij.unit
	switch {
	case ij.zunit.given:
		zunit = ij.zunit.ome
	case ij.unitSaid == "":
		zunit = "µm"
	}
	if ij.spacing > 0 && s.SizeZ > 1 && zunit != "" {
		s.PhysicalSizeZ, s.PhysicalSizeZUnit = ij.spacing, zunit
	}
}

// markLeftOut marks as ErrLeftOut the entries of skipped for the pages
// unread that have the size of no page mapped: read, such a page would be
// an image of its own, as pages of one shape are one image. One of the
// size of a page mapped might have been a plane of its image.
func markLeftOut(skipped []error, unread map[int]*tiff.Page, mapped []*tiff.Page) {
	type size struct{ w, h uint64 }
	sizeOf := func(p *tiff.Page) (size, bool) {
		w, okW := p.Uint(tiff.TagImageWidth)
		h, okH := p.Uint(tiff.TagImageLength)
		return size{w, h}, okW && okH
	}
	sizes := map[size]bool{}
	for _, p := range mapped {
		if s, ok := sizeOf(p); ok {
			sizes[s] = true
		}
	}
	for i, p := range unread {
		if s, ok := sizeOf(p); ok && !sizes[s] {
			skipped[i] = leftOut{skipped[i]}
		}
	}
}

// textFields are the TIFF fields of free text that say where a file comes
// from and OME has no field for, named as the TIFF specification names
// them.
var textFields = []struct {
	tag uint16
	key string
}{
	{tiff.TagDocumentName, "DocumentName"}, {tiff.TagMake, "Make"}, {tiff.TagModel, "Model"}, {tiff.TagSoftware, "Software"},
	{tiff.TagDateTime, "DateTime"}, {tiff.TagArtist, "Artist"}, {tiff.TagHostComputer, "HostComputer"}, {tiff.TagCopyright, "Copyright"},
}

// textTags keeps the text fields of an image's first page as keys of its
// map annotation, as Bio-Formats keeps them in its original metadata, so
// that a conversion does not drop them: DateTime only when it was not read
// as the acquisition date (text that is no TIFF date, or a year
// xsd:dateTime cannot write).
func textTags(im *Image) {
	p := im.Planes[0].Page
	for _, f := range textFields {
		v, ok := p.Text(f.tag)
		// Copyright may hold two strings (the photographer's and the
		// editor's), each ended by a NUL.
		var parts []string
		for s := range strings.SplitSeq(v, "\x00") {
			if s = pyramid.XMLText(strings.TrimSpace(s)); s != "" {
				parts = append(parts, s)
			}
		}
		v = strings.Join(parts, "; ")
		if !ok || v == "" || f.tag == tiff.TagDateTime && !im.Spec.AcquisitionDate.IsZero() {
			continue
		}
		im.Spec.Annotations = append(im.Spec.Annotations, pyramid.KeyValue{Key: f.key, Value: v})
	}
}
