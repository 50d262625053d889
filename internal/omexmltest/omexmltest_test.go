package omexmltest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMissingFrom: what the writer owns may differ, and everything else
// the caller gave must be there, matched by ID, plane or order.
func TestMissingFrom(t *testing.T) {
	const want = `<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="urn:uuid:1" Creator="me">` +
		`<Instrument ID="Instrument:0"><Objective ID="Objective:0" NominalMagnification="20"/></Instrument>` +
		`<Image ID="Image:0" Name="a"><Description>two
lines</Description><Pixels ID="Pixels:0" SizeX="8" Type="uint8"><TiffData IFD="0"/>` +
		`<Plane TheZ="0" TheC="0" TheT="0" DeltaT="1"/><Plane TheZ="1" TheC="0" TheT="0" DeltaT="2"/></Pixels>` +
		`<AnnotationRef ID="Annotation:0"/><AnnotationRef ID="Annotation:1"/></Image></OME>`
	tests := []struct {
		name string
		got  string
		want []string // the entries, in order
	}{
		{"the same", want, nil},
		{"what the writer owns differs, in another order, with more", strings.NewReplacer(`UUID="urn:uuid:1" Creator="me"`, `UUID="urn:uuid:2" Creator="ometiff"`,
			`SizeX="8" Type="uint8"><TiffData IFD="0"/>`, `SizeX="16" Type="uint16" BigEndian="false"><TiffData IFD="4" PlaneCount="2"/>`,
			`<Plane TheZ="0" TheC="0" TheT="0" DeltaT="1"/><Plane TheZ="1" TheC="0" TheT="0" DeltaT="2"/>`,
			`<Plane TheZ="1" TheC="0" TheT="0" DeltaT="2"/><Plane TheZ="0" TheC="0" TheT="0" DeltaT="1" ExposureTime="5"/>`,
			`</Instrument>`, `</Instrument><Instrument ID="Instrument:1"/>`).Replace(want), nil},
		{"an attribute missing, a value changed", strings.NewReplacer(` NominalMagnification="20"`, ``, `DeltaT="2"`, `DeltaT="2.0"`).Replace(want),
			[]string{`OME/Instrument[Instrument:0]/Objective[Objective:0]@NominalMagnification: want "20", got "" (present false)`,
				`OME/Image[Image:0]/Pixels[Pixels:0]/Plane[z=1 c=0 t=0]@DeltaT: want "2", got "2.0" (present true)`}},
		{"text changed", strings.Replace(want, "two\nlines", "two lines", 1), []string{`OME/Image[Image:0]/Description: text "two\nlines", got "two lines"`}},
		{"elements missing", strings.NewReplacer(`<AnnotationRef ID="Annotation:1"/>`, ``, `<Instrument ID="Instrument:0">`, `<Instrument ID="Instrument:9">`).Replace(want),
			[]string{`OME/Instrument[Instrument:0]: missing`, `OME/Image[Image:0]/AnnotationRef: missing`}},
		{"another root", `<Other/>`, []string{`root {http://www.openmicroscopy.org/Schemas/OME/2016-06 OME}, got { Other}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, MissingFrom(Parse(t, []byte(want)), Parse(t, []byte(tc.got))))
		})
	}
}

// TestRichDoc: the rich document parses, and has what its comment says.
func TestRichDoc(t *testing.T) {
	doc := Parse(t, []byte(RichDoc()))
	assert.Len(t, doc.Children("Image"), 2)
	assert.Len(t, doc.Children("ROI"), 2)
	assert.Len(t, doc.Element("StructuredAnnotations").Kids, 11)
	for _, path := range [][]string{{"Instrument", "Objective"}, {"Instrument", "Detector"}, {"Instrument", "Laser"},
		{"Image", "Pixels", "Channel", "LightSourceSettings"}, {"Image", "Pixels", "Channel", "DetectorSettings"}} {
		assert.NotNil(t, doc.Element(path...), "%v", path)
	}
	assert.Equal(t, []string{"Rights", "Project", "Dataset", "Folder", "Experiment", "Experimenter", "Experimenter", "ExperimenterGroup",
		"Instrument", "Image", "Image", "StructuredAnnotations", "ROI", "ROI"}, doc.ChildNames())
	assert.Equal(t, map[string]string{"ID": "Objective:0:0", "Manufacturer": "Nikon", "Model": "CFI Plan Apo 60x", "Immersion": "Oil", "LensNA": "1.4",
		"NominalMagnification": "60", "WorkingDistance": "130", "WorkingDistanceUnit": "µm", "Correction": "PlanApo"}, doc.Element("Instrument", "Objective").PlainAttrs())
}
