package pyramid

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// The OME 2016-06 model where the writer rebuilds a caller's document:
// the children each element may have, in the order the schema requires.
var (
	// rootElements is OME's sequence (BinaryOnly, its alternative, is
	// refused).
	rootElements = []string{"Rights", "Project", "Dataset", "Folder", "Experiment", "Plate", "Screen", "Experimenter",
		"ExperimenterGroup", "Instrument", "Image", "StructuredAnnotations", "ROI"}
	// imageElements is Image's sequence.
	imageElements = []string{"AcquisitionDate", "ExperimenterRef", "Description", "ExperimentRef", "ExperimenterGroupRef",
		"InstrumentRef", "ObjectiveSettings", "ImagingEnvironment", "StageLabel", "Pixels", "ROIRef",
		"MicrobeamManipulationRef", "AnnotationRef"}
	// channelElements is Channel's sequence.
	channelElements = []string{"LightSourceSettings", "DetectorSettings", "FilterSetRef", "AnnotationRef", "LightPath"}

	rootOrder    = ranks(rootElements...)
	imageOrder   = ranks(imageElements...)
	channelOrder = ranks(channelElements...)
	// pixelsOrder is Pixels' sequence; BinData, TiffData and MetadataOnly,
	// the writer's, never reach the tree.
	pixelsOrder = ranks("Channel", "Plane")
	// annotationKinds are the elements StructuredAnnotations holds.
	annotationKinds = ranks("XMLAnnotation", "FileAnnotation", "ListAnnotation", "LongAnnotation", "DoubleAnnotation",
		"CommentAnnotation", "BooleanAnnotation", "TimestampAnnotation", "TagAnnotation", "TermAnnotation", "MapAnnotation")
	// lightSources are the elements that are an Instrument's light sources.
	lightSources = ranks("Laser", "Arc", "Filament", "LightEmittingDiode", "GenericExcitationSource")
)

// The attributes the schema allows on the elements the writer rebuilds,
// besides namespace declarations and xsi's (it declares no
// anyAttribute there: any other makes the document invalid).
var (
	imageAttrs  = names{"ID", "Name"}
	pixelsAttrs = names{"ID", "DimensionOrder", "Type", "SignificantBits", "Interleaved", "BigEndian", "SizeX", "SizeY",
		"SizeZ", "SizeC", "SizeT", "PhysicalSizeX", "PhysicalSizeXUnit", "PhysicalSizeY", "PhysicalSizeYUnit",
		"PhysicalSizeZ", "PhysicalSizeZUnit", "TimeIncrement", "TimeIncrementUnit"}
	channelAttrs = names{"ID", "Name", "SamplesPerPixel", "IlluminationType", "PinholeSize", "PinholeSizeUnit",
		"AcquisitionMode", "ContrastMethod", "ExcitationWavelength", "ExcitationWavelengthUnit", "EmissionWavelength",
		"EmissionWavelengthUnit", "Fluor", "NDFilter", "PockelCellSetting", "Color"}
	planeAttrs = names{"TheZ", "TheT", "TheC", "DeltaT", "DeltaTUnit", "ExposureTime", "ExposureTimeUnit", "PositionX",
		"PositionXUnit", "PositionY", "PositionYUnit", "PositionZ", "PositionZUnit"}
)

// idPattern returns the schema's pattern of the IDs of an element kind:
// (urn:lsid:([\w\-\.]+\.[\w\-\.]+)+:KIND:\S+)|(KIND:\S+), whole, XML
// Schema's \w being any character but punctuation, separators and others.
func idPattern(kind string) *regexp.Regexp {
	w := `(?:[^\p{P}\p{Z}\p{C}]|[-.])`
	return regexp.MustCompile(`^(?:urn:lsid:(?:` + w + `+\.` + w + `+)+:` + kind + `:[^ \t\n\r]+|` + kind + `:[^ \t\n\r]+)$`)
}

// rebuiltIDs are the ID patterns of the elements the writer rebuilds.
var rebuiltIDs = map[string]*regexp.Regexp{"Image": idPattern("Image"), "Pixels": idPattern("Pixels"), "Channel": idPattern("Channel")}

// checkAttrs verifies that the attributes of n are among those allowed,
// and its ID, if it is one of rebuiltIDs' kinds, of its pattern.
func (d *OMEDocument) checkAttrs(n int32, allowed names) error {
	node := d.nodes[n]
	for _, a := range d.attrs[node.a : node.a+node.n] {
		name := d.names[a.name]
		switch {
		case name.space == xmlnsNamespace || name.space == xsiNamespace:
		case name.space != "" || !allowed.has(name.local):
			what := name.local
			if name.prefix != "" {
				what = name.prefix + ":" + name.local
			}
			return d.invalid(n, what, "the schema allows no attribute %s on %s", what, d.name(n).local)
		}
	}
	if re := rebuiltIDs[d.name(n).local]; re != nil {
		if id, ok := d.attr(n, "ID"); ok && !re.Match(id) {
			return d.invalid(n, "ID", "%q is not an ID of the schema's pattern for %s (%s:0, say)", truncate(id, 40), d.name(n).local, d.name(n).local)
		}
	}
	return nil
}

// repeatable are the children of Image and Channel that may occur more
// than once; the others at most once.
var repeatable = map[string]bool{"ROIRef": true, "MicrobeamManipulationRef": true, "AnnotationRef": true}

func ranks(names ...string) map[string]int {
	m := make(map[string]int, len(names))
	for i, n := range names {
		m[n] = i
	}
	return m
}

// refTargets returns the kind of element a reference element names by
// its ID attribute ("" for any kind), and whether it is one. Kinds are
// element names, except "LightSource" for the light sources and
// "Annotation" for the children of StructuredAnnotations.
func refTargets(name string) (string, bool) {
	switch name {
	case "ObjectiveSettings":
		return "Objective", true
	case "DetectorSettings":
		return "Detector", true
	case "LightSourceSettings", "Pump":
		return "LightSource", true
	case "Leader", "Contact":
		return "Experimenter", true
	case "ExcitationFilterRef", "EmissionFilterRef", "FilterRef":
		return "Filter", true
	case "AnnotationRef":
		return "Annotation", true
	}
	if kind, ok := strings.CutSuffix(name, "Ref"); ok && kind != "" {
		return kind, true
	}
	return "", false
}

// kind returns the kind of an element that defines an ID.
func (d *OMEDocument) kind(n int32) string {
	name := d.name(n).local
	if _, ok := lightSources[name]; ok {
		return "LightSource"
	}
	if p := d.nodes[n].parent; p >= 0 && d.is(p, "StructuredAnnotations") {
		return "Annotation"
	}
	return name
}

// check verifies what the writer relies on in a parsed document: the
// root, the elements where it rebuilds the document, and the references.
func (p *omeParser) check() error {
	d := p.d
	root := d.name(0)
	switch {
	case root.space != omeNamespace && root.local == "OME":
		space := "namespace " + root.space
		if root.space == "" {
			space = "no namespace"
		}
		return &OMEError{Err: ErrOMEVersion, Element: "OME", Line: int(d.nodes[0].line),
			Detail: fmt.Sprintf("%s; the writer takes %s only", space, omeNamespace)}
	case root.space != omeNamespace || root.local != "OME":
		return &OMEError{Err: ErrOMEInvalid, Element: root.local, Line: int(d.nodes[0].line), Detail: "the root element is not OME"}
	}
	if err := d.checkChildren(0, rootOrder, map[string]bool{"Project": true, "Dataset": true, "Folder": true,
		"Experiment": true, "Plate": true, "Screen": true, "Experimenter": true, "ExperimenterGroup": true,
		"Instrument": true, "Image": true, "ROI": true}); err != nil {
		return err
	}
	for _, c := range d.children(0) {
		var err error
		switch d.name(c).local {
		case "Image":
			d.images = append(d.images, c)
			err = d.checkImage(c)
		case "StructuredAnnotations":
			err = d.checkChildren(c, annotationKinds, nil)
		}
		if err != nil {
			return err
		}
	}
	return p.checkRefs()
}

// checkChildren verifies that the children of n are OME elements named in
// order, each at most once unless many says otherwise (nil: all may
// repeat), with no text but whitespace between them.
func (d *OMEDocument) checkChildren(n int32, order map[string]int, many map[string]bool) error {
	count := map[string]int{}
	for c := d.nodes[n].first; c >= 0; c = d.nodes[c].next {
		if d.nodes[c].name < 0 {
			return d.invalid(n, "", "text %q where the schema allows elements only", truncate(d.textOf(c), 40))
		}
		name := d.name(c)
		if _, ok := order[name.local]; !ok || name.space != omeNamespace {
			if name.local == "BinaryOnly" && n == 0 {
				return d.invalid(c, "", "the document describes a file without metadata; give its companion's document")
			}
			return d.invalid(c, "", "the schema allows no such element in %s", d.name(n).local)
		}
		count[name.local]++
		if many != nil && !many[name.local] && count[name.local] > 1 {
			return d.invalid(c, "", "more than one %s in %s", name.local, d.name(n).local)
		}
	}
	return nil
}

// truncate shortens text for a message.
func truncate(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// checkImage verifies an Image element's children, its Pixels' and its
// Channels'.
func (d *OMEDocument) checkImage(n int32) error {
	if err := d.checkChildren(n, imageOrder, repeatable); err != nil {
		return err
	}
	if err := d.checkAttrs(n, imageAttrs); err != nil {
		return err
	}
	pixels := d.child(n, "Pixels")
	if pixels < 0 {
		return d.invalid(n, "", "no Pixels")
	}
	if err := d.checkChildren(pixels, pixelsOrder, nil); err != nil {
		return err
	}
	if err := d.checkAttrs(pixels, pixelsAttrs); err != nil {
		return err
	}
	for _, c := range d.children(pixels) {
		var err error
		switch {
		case d.is(c, "Channel"):
			if err = d.checkChildren(c, channelOrder, repeatable); err == nil {
				err = d.checkAttrs(c, channelAttrs)
			}
		case d.is(c, "Plane"):
			err = d.checkAttrs(c, planeAttrs)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// child returns the first OME element local among the children of n, or
// -1.
func (d *OMEDocument) child(n int32, local string) int32 {
	for c := d.nodes[n].first; c >= 0; c = d.nodes[c].next {
		if d.is(c, local) {
			return c
		}
	}
	return -1
}

// checkRefs verifies that every reference names an ID the document
// defines, of the kind referred to.
func (p *omeParser) checkRefs() error {
	d := p.d
	for _, r := range d.refs {
		attr, want := "ID", ""
		if id, ok := d.attr(r, "Annotator"); ok && !d.isRefElement(r) {
			attr, want = "Annotator", "Experimenter"
			if err := d.resolves(r, attr, id, want); err != nil {
				return err
			}
			continue
		}
		id, _ := d.attr(r, "ID")
		want, _ = refTargets(d.name(r).local)
		if err := d.resolves(r, attr, id, want); err != nil {
			return err
		}
	}
	return nil
}

// isRefElement reports whether element n refers to an ID by its ID
// attribute.
func (d *OMEDocument) isRefElement(n int32) bool {
	_, ok := refTargets(d.name(n).local)
	return ok && d.name(n).space == omeNamespace
}

// resolves verifies that id, element n's attribute attr, names an element
// of kind want ("" for any).
func (d *OMEDocument) resolves(n int32, attr string, id []byte, want string) error {
	target, ok := d.ids[string(id)]
	if !ok {
		return d.invalid(n, attr, "%q names no element of the document", id)
	}
	if kind := d.kind(target); want != "" && kind != want {
		return d.invalid(n, attr, "%q names a %s, not a %s", id, kind, want)
	}
	return nil
}
