package pyramid

import (
	"fmt"
	"strings"
)

// Caller documents for the tests, shaped like what the tools that write
// most OME-TIFFs put in them.

// tifffileDoc is shaped like tifffile's OME-XML (2023): a ZCYX uint16
// stack of 3 channels and 5 focal planes, Pixels without BigEndian or
// Interleaved, each Channel with an empty LightPath, Planes with TheC first.
func tifffileDoc() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openmicroscopy.org/Schemas/OME/2016-06 http://www.openmicroscopy.org/Schemas/OME/2016-06/ome.xsd" UUID="urn:uuid:200f84c6-ef20-11f1-a5e6-02fc00000001"  Creator="tifffile.py 2023.2.3">`)
	b.WriteString(`<Image ID="Image:0" Name="Image0"><Pixels ID="Pixels:0" DimensionOrder="XYCZT" Type="uint16" SizeX="32" SizeY="24" SizeC="3" SizeZ="5" SizeT="1" PhysicalSizeX="0.5">`)
	for c, name := range []string{"a", "b", "c"} {
		fmt.Fprintf(&b, `<Channel ID="Channel:0:%d" SamplesPerPixel="1" Name="%s"><LightPath/></Channel>`, c, name)
	}
	b.WriteString(`<TiffData IFD="0" PlaneCount="15"/>`)
	for z := range 5 {
		for c := range 3 {
			fmt.Fprintf(&b, `<Plane TheC="%d" TheZ="%d" TheT="0" PositionX="1.0"/>`, c, z)
		}
	}
	b.WriteString(`</Pixels></Image></OME>`)
	return b.String()
}

// tifffileSpec is the image tifffileDoc describes.
var tifffileSpec = ImageSpec{SizeX: 32, SizeY: 24, SizeC: 3, SizeZ: 5, PixelType: Uint16}

// bioformatsDoc is shaped like Bio-Formats' OME-XML (6.x): the warning
// comment before the root, attributes in alphabetical order, an
// instrument, big-endian Pixels with SignificantBits, a TiffData per plane
// naming its file, Planes with times and positions, and the original
// metadata as XMLAnnotations whose content is in the OME namespace.
func bioformatsDoc() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><!-- Warning: this comment is an OME-XML metadata block, which contains crucial dimensional parameters and other important metadata. Please edit cautiously (if at all), and back up the original data before doing so. For more information, see the OME-TIFF web site: https://docs.openmicroscopy.org/latest/ome-model/ome-tiff/. -->`)
	b.WriteString(`<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" Creator="OME Bio-Formats 6.11.1" UUID="urn:uuid:6b0d4f5e-6a2e-4b7b-9d1e-0e3a2b1c4d5f" xsi:schemaLocation="http://www.openmicroscopy.org/Schemas/OME/2016-06 http://www.openmicroscopy.org/Schemas/OME/2016-06/ome.xsd">`)
	b.WriteString(`<Experimenter FirstName="Ada" ID="Experimenter:0" LastName="Lovelace"/>`)
	b.WriteString(`<Instrument ID="Instrument:0"><Microscope Manufacturer="Zeiss" Type="Inverted"/><Laser ID="LightSource:0:0" Model="Argon" Power="25.0" PowerUnit="mW" Wavelength="488.0" WavelengthUnit="nm"/><Detector ID="Detector:0:0" Model="Orca" Type="CMOS"/><Objective ID="Objective:0:0" Immersion="Oil" LensNA="1.4" Model="Plan-Apochromat 63x/1.40 Oil" NominalMagnification="63.0"/></Instrument>`)
	b.WriteString(`<Image ID="Image:0" Name="cells.czi #1"><AcquisitionDate>2014-05-14T13:41:52</AcquisitionDate><ExperimenterRef ID="Experimenter:0"/><InstrumentRef ID="Instrument:0"/><ObjectiveSettings ID="Objective:0:0"/>`)
	b.WriteString(`<Pixels BigEndian="true" DimensionOrder="XYCZT" ID="Pixels:0" Interleaved="false" PhysicalSizeX="0.1" PhysicalSizeXUnit="µm" PhysicalSizeY="0.1" PhysicalSizeYUnit="µm" PhysicalSizeZ="0.5" PhysicalSizeZUnit="µm" SignificantBits="12" SizeC="2" SizeT="1" SizeX="40" SizeY="30" SizeZ="3" Type="uint16">`)
	b.WriteString(`<Channel AcquisitionMode="WideField" Color="16711935" EmissionWavelength="520.0" EmissionWavelengthUnit="nm" ExcitationWavelength="488.0" ExcitationWavelengthUnit="nm" Fluor="GFP" ID="Channel:0:0" Name="GFP" SamplesPerPixel="1"><LightSourceSettings ID="LightSource:0:0"/><DetectorSettings Binning="1x1" ID="Detector:0:0"/><LightPath/></Channel>`)
	b.WriteString(`<Channel Color="-16776961" ID="Channel:0:1" Name="DAPI" SamplesPerPixel="1"><LightPath/></Channel>`)
	for i := range 6 {
		fmt.Fprintf(&b, `<TiffData FirstC="%d" FirstT="0" FirstZ="%d" IFD="%d" PlaneCount="1"><UUID FileName="cells.ome.tif">urn:uuid:6b0d4f5e-6a2e-4b7b-9d1e-0e3a2b1c4d5f</UUID></TiffData>`, i%2, i/2, i)
	}
	for i := range 6 {
		fmt.Fprintf(&b, `<Plane DeltaT="%d.5" DeltaTUnit="s" ExposureTime="100.0" ExposureTimeUnit="ms" PositionX="1024.5" PositionXUnit="µm" PositionY="-88.25" PositionYUnit="µm" PositionZ="%d.0" PositionZUnit="µm" TheC="%d" TheT="0" TheZ="%d"/>`, i, i/2, i%2, i/2)
	}
	b.WriteString(`</Pixels></Image><StructuredAnnotations>`)
	b.WriteString(`<XMLAnnotation ID="Annotation:0" Namespace="openmicroscopy.org/OriginalMetadata"><Value><OriginalMetadata><Key>Exposure</Key><Value>100 ms</Value></OriginalMetadata></Value></XMLAnnotation>`)
	b.WriteString(`<XMLAnnotation ID="Annotation:1" Namespace="openmicroscopy.org/OriginalMetadata"><Value><OriginalMetadata><Key>Objective</Key><Value>63x &amp; oil</Value></OriginalMetadata></Value></XMLAnnotation>`)
	b.WriteString(`</StructuredAnnotations></OME>`)
	return b.String()
}

// bioformatsSpec is the image bioformatsDoc describes.
var bioformatsSpec = ImageSpec{SizeX: 40, SizeY: 30, SizeC: 2, SizeZ: 3, PixelType: Uint16, DimensionOrder: XYCZT}
