package pyramid_test

import (
	"bytes"
	"fmt"
	"log"
	"strings"

	"github.com/ometiff-go/ometiff/iohandle"
	"github.com/ometiff-go/ometiff/pyramid"
	"github.com/ometiff-go/ometiff/tiff"
)

// Carry a source's OME-XML into the file, as a converter of OME-TIFFs
// does: parse the ImageDescription of the source's first directory and
// give it in Options.OME. The document's Images are the images added, in
// order; its instrument, annotations and every other element come along,
// and the writer replaces what describes the source's layout (big-endian
// planes at IFD 3, here) with the file's.
func ExampleParseOME() {
	source := `<?xml version="1.0" encoding="UTF-8"?>
<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" UUID="urn:uuid:1b3c5d7e-9f00-4a2b-8c4d-6e8f0a1b2c3d">
  <Instrument ID="Instrument:0"><Objective ID="Objective:0:0" NominalMagnification="40" LensNA="0.95"/></Instrument>
  <Image ID="Image:0" Name="cells">
    <InstrumentRef ID="Instrument:0"/><ObjectiveSettings ID="Objective:0:0"/>
    <Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint16" SizeX="64" SizeY="48" SizeZ="1" SizeC="1" SizeT="1" BigEndian="true">
      <Channel ID="Channel:0:0" Name="DAPI" ExcitationWavelength="405"/>
      <TiffData IFD="3" PlaneCount="1"/>
      <Plane TheZ="0" TheC="0" TheT="0" ExposureTime="20" ExposureTimeUnit="ms"/>
    </Pixels>
  </Image>
</OME>`
	doc, err := pyramid.ParseOME([]byte(source))
	if err != nil {
		log.Fatal(err)
	}
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, pyramid.Options{OME: doc})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddImage(pyramid.ImageSpec{SizeX: 64, SizeY: 48, PixelType: pyramid.Uint16})
	if err != nil {
		log.Fatal(err)
	}
	if err := im.WritePlane(0, 0, 0, make([]byte, im.PlaneBytes())); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// The file's OME-XML (its first directory's ImageDescription, found
	// here by its text), an element a line after the root: the document's,
	// with the file's layout.
	file := h.Bytes()
	start, end := bytes.Index(file, []byte("<?xml")), bytes.Index(file, []byte("</OME>"))
	xml := string(file[start : end+len("</OME>")])
	for _, line := range strings.Split(strings.ReplaceAll(xml, "><", ">\n<"), "\n")[2:] {
		fmt.Println(line)
	}
	// Output:
	// <Instrument ID="Instrument:0">
	// <Objective ID="Objective:0:0" NominalMagnification="40" LensNA="0.95"/>
	// </Instrument>
	// <Image ID="Image:0" Name="cells">
	// <InstrumentRef ID="Instrument:0"/>
	// <ObjectiveSettings ID="Objective:0:0"/>
	// <Pixels ID="Pixels:0" DimensionOrder="XYZCT" Type="uint16" SizeX="64" SizeY="48" SizeZ="1" SizeC="1" SizeT="1" BigEndian="false" Interleaved="false">
	// <Channel ID="Channel:0:0" SamplesPerPixel="1" Name="DAPI" ExcitationWavelength="405"/>
	// <TiffData IFD="0" PlaneCount="1"/>
	// <Plane TheZ="0" TheC="0" TheT="0" ExposureTime="20" ExposureTimeUnit="ms"/>
	// </Pixels>
	// </Image>
	// </OME>
}

// Describe the acquisition in typed fields, without writing XML: the
// microscope's objective, detector and light source, each channel's
// wavelengths and settings, each plane's time, exposure and stage
// position, all with their units.
func ExampleImageSpec_metadata() {
	scope := &pyramid.Instrument{
		LightSources: []pyramid.LightSource{{Kind: pyramid.LightSourceLaser, Wavelength: pyramid.Quantity{Value: 488, Unit: "nm"}}},
		Detectors:    []pyramid.Detector{{Type: pyramid.DetectorCMOS}},
		Objectives: []pyramid.Objective{{NominalMagnification: 60, LensNA: 1.4, Immersion: pyramid.ImmersionOil,
			Product: pyramid.Product{Manufacturer: "Nikon", Model: "CFI Plan Apo 60x"}}},
	}
	spec := pyramid.ImageSpec{Name: "timelapse", SizeX: 64, SizeY: 64, SizeT: 2, PixelType: pyramid.Uint16,
		Instrument: scope, // its one objective is the image's
		Channels: []pyramid.Channel{{Name: "GFP", Fluor: "EGFP",
			ExcitationWavelength: pyramid.Quantity{Value: 488, Unit: "nm"}, EmissionWavelength: pyramid.Quantity{Value: 510, Unit: "nm"},
			AcquisitionMode:     pyramid.AcquisitionSpinningDiskConfocal,
			LightSourceSettings: &pyramid.LightSourceSettings{LightSource: 0}, DetectorSettings: &pyramid.DetectorSettings{Detector: 0}}},
	}
	for t := range 2 {
		spec.PlaneInfo = append(spec.PlaneInfo, pyramid.Plane{T: t,
			DeltaT:       pyramid.Quantity{Value: 30 * float64(t), Unit: "s"},
			ExposureTime: pyramid.Quantity{Value: 50, Unit: "ms"},
			PositionX:    pyramid.Quantity{Value: 1204.5, Unit: "µm"}, PositionY: pyramid.Quantity{Value: -310, Unit: "µm"}})
	}
	h := iohandle.NewMemory()
	w, err := pyramid.New(h, pyramid.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	im, err := w.AddImage(spec)
	if err != nil {
		log.Fatal(err)
	}
	for t := range 2 {
		if err := im.WritePlane(0, 0, t, make([]byte, im.PlaneBytes())); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	// The OME-XML of the file: the objective, and the second plane.
	f, err := tiff.Read(bytes.NewReader(h.Bytes()), int64(len(h.Bytes())))
	if err != nil {
		log.Fatal(err)
	}
	xml := f.Pages[0].Description()
	for _, element := range []string{"<Objective ", `<Plane TheZ="0" TheC="0" TheT="1"`} {
		at := strings.Index(xml, element)
		fmt.Println(xml[at : at+strings.Index(xml[at:], ">")+1])
	}
	// Output:
	// <Objective ID="Objective:0:0" Manufacturer="Nikon" Model="CFI Plan Apo 60x" Immersion="Oil" LensNA="1.4" NominalMagnification="60"/>
	// <Plane TheZ="0" TheC="0" TheT="1" DeltaT="30" DeltaTUnit="s" ExposureTime="50" ExposureTimeUnit="ms" PositionX="1204.5" PositionXUnit="µm" PositionY="-310" PositionYUnit="µm"/>
}
