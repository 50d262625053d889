package omexmltest

import (
	"fmt"
	"strings"
)

// RichDoc is a caller's document with most of the OME model: rights,
// a project, dataset and folder linking the images, an experiment and its
// experimenters, an instrument (microscope, laser, LED, detector,
// objective, filters, filter set, dichroic), two images (a 2-channel
// Z/T stack with channel settings, light paths, plane times, exposures
// and positions, a stage label and an imaging environment; an RGB
// overview), eleven kinds of structured annotation (XMLAnnotation content
// in two foreign namespaces, a FileAnnotation with its bytes inline), and
// two ROIs (a rectangle, an ellipse, a polygon with a transform, a mask
// with its bits, a label). Its prefixes are unusual on purpose: the OME
// namespace is the default, and also bound to "ome", used by one element.
// The stack's Pixels holds an empty BinData and the overview's a TiffData
// at IFD 12, which the writer replaces with its own; an OME-TIFF holding
// the stack's 12 planes in IFDs 0 to 11 needs a TiffData in the BinData's
// place.
func RichDoc() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<OME xmlns="http://www.openmicroscopy.org/Schemas/OME/2016-06" xmlns:ome="http://www.openmicroscopy.org/Schemas/OME/2016-06" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:lab="urn:example:lab" xsi:schemaLocation="http://www.openmicroscopy.org/Schemas/OME/2016-06 http://www.openmicroscopy.org/Schemas/OME/2016-06/ome.xsd" UUID="urn:uuid:0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0" Creator="acquisition 4.2">
  <!-- written by an acquisition program -->
  <Rights><RightsHolder>Example Lab</RightsHolder><RightsHeld>CC-BY 4.0</RightsHeld></Rights>
  <Project ID="Project:0" Name="cells"><Description>Live cells, 2026</Description><ExperimenterRef ID="Experimenter:0"/><DatasetRef ID="Dataset:0"/><AnnotationRef ID="Annotation:tag"/></Project>
  <Dataset ID="Dataset:0" Name="day 1"><ExperimenterGroupRef ID="ExperimenterGroup:0"/><ImageRef ID="Image:rich"/><ImageRef ID="Image:overview"/></Dataset>
  <Folder ID="Folder:0" Name="plate A"><ImageRef ID="Image:rich"/><ROIRef ID="ROI:cells"/></Folder>
  <Experiment ID="Experiment:0" Type="TimeLapse"><Description>mitosis</Description><ExperimenterRef ID="Experimenter:0"/></Experiment>
  <Experimenter ID="Experimenter:0" FirstName="Ada" LastName="Lovelace" Email="ada@example.org" Institution="Example Lab" UserName="ada"/>
  <Experimenter ID="Experimenter:1" FirstName="Charles" LastName="Babbage"/>
  <ExperimenterGroup ID="ExperimenterGroup:0" Name="imaging"><ExperimenterRef ID="Experimenter:0"/><ExperimenterRef ID="Experimenter:1"/><Leader ID="Experimenter:0"/></ExperimenterGroup>
  <Instrument ID="Instrument:0">
    <Microscope Manufacturer="Nikon" Model="Ti2" SerialNumber="N-1" Type="Inverted"/>
    <Laser ID="LightSource:0:0" Manufacturer="Coherent" Model="OBIS 488" Power="20" PowerUnit="mW" Type="SolidState" Wavelength="488" WavelengthUnit="nm"/>
    <LightEmittingDiode ID="LightSource:0:1" Model="pE-300" Power="5" PowerUnit="mW"/>
    <Detector ID="Detector:0:0" Manufacturer="Hamamatsu" Model="ORCA-Fusion" Type="CMOS" Gain="1.5" Offset="100"/>
    <Objective ID="Objective:0:0" Manufacturer="Nikon" Model="CFI Plan Apo 60x" Immersion="Oil" LensNA="1.4" NominalMagnification="60" WorkingDistance="130" WorkingDistanceUnit="µm" Correction="PlanApo"/>
    <FilterSet ID="FilterSet:0:0" Model="GFP"><ExcitationFilterRef ID="Filter:0:0"/><DichroicRef ID="Dichroic:0:0"/><EmissionFilterRef ID="Filter:0:1"/></FilterSet>
    <Filter ID="Filter:0:0" Type="BandPass"><TransmittanceRange CutIn="470" CutOut="490" CutInUnit="nm" CutOutUnit="nm"/></Filter>
    <Filter ID="Filter:0:1" Type="BandPass"><TransmittanceRange CutIn="500" CutOut="550"/></Filter>
    <Dichroic ID="Dichroic:0:0" Model="T495lpxr"/>
  </Instrument>
`)
	b.WriteString(`  <Image ID="Image:rich" Name="rich &amp; &quot;stack&quot;">
    <AcquisitionDate>2026-03-04T05:06:07.25</AcquisitionDate>
    <ExperimenterRef ID="Experimenter:0"/>
    <Description>two channels
over time</Description>
    <ExperimentRef ID="Experiment:0"/>
    <ExperimenterGroupRef ID="ExperimenterGroup:0"/>
    <InstrumentRef ID="Instrument:0"/>
    <ObjectiveSettings ID="Objective:0:0" Medium="Oil" RefractiveIndex="1.515"/>
    <ImagingEnvironment Temperature="37" TemperatureUnit="°C" CO2Percent="0.05"><Map><M K="incubator">on</M></Map></ImagingEnvironment>
    <StageLabel Name="well A1" X="1000.5" XUnit="µm" Y="-20" YUnit="µm"/>
    <Pixels ID="Pixels:rich" DimensionOrder="XYCZT" Type="uint16" SizeX="48" SizeY="32" SizeZ="3" SizeC="2" SizeT="2" BigEndian="true" Interleaved="false" SignificantBits="12" PhysicalSizeX="0.108" PhysicalSizeXUnit="µm" PhysicalSizeY="0.108" PhysicalSizeZ="0.3" TimeIncrement="1.5" TimeIncrementUnit="s">
      <Channel ID="Channel:rich:0" Name="GFP" SamplesPerPixel="1" Color="16711935" Fluor="EGFP" ExcitationWavelength="488" ExcitationWavelengthUnit="nm" EmissionWavelength="510" AcquisitionMode="SpinningDiskConfocal" IlluminationType="Epifluorescence" ContrastMethod="Fluorescence" PinholeSize="50" PinholeSizeUnit="µm" NDFilter="0.5">
        <LightSourceSettings ID="LightSource:0:0" Attenuation="0.9" Wavelength="488"/>
        <DetectorSettings ID="Detector:0:0" Gain="2" Binning="2x2" Integration="4"/>
        <FilterSetRef ID="FilterSet:0:0"/>
        <AnnotationRef ID="Annotation:comment"/>
        <LightPath><ExcitationFilterRef ID="Filter:0:0"/><DichroicRef ID="Dichroic:0:0"/><EmissionFilterRef ID="Filter:0:1"/></LightPath>
      </Channel>
      <Channel ID="Channel:rich:1" Name="brightfield" SamplesPerPixel="1" IlluminationType="Transmitted" ContrastMethod="DIC">
        <LightSourceSettings ID="LightSource:0:1"/>
        <LightPath/>
      </Channel>
      <BinData BigEndian="true" Length="0"></BinData>
`)
	for tt := range 2 {
		for z := range 3 {
			for c := range 2 {
				fmt.Fprintf(&b, `      <Plane TheZ="%d" TheC="%d" TheT="%d" DeltaT="%g" DeltaTUnit="s" ExposureTime="%d" ExposureTimeUnit="ms" PositionX="1000.5" PositionXUnit="µm" PositionY="-20" PositionYUnit="µm" PositionZ="%g" PositionZUnit="µm"`,
					z, c, tt, 1.5*float64(tt)+0.01*float64(2*z+c), 50+50*c, 0.3*float64(z))
				if z == 1 && c == 0 && tt == 1 {
					b.WriteString(`><HashSHA1>0123456789abcdef0123456789abcdef01234567</HashSHA1><AnnotationRef ID="Annotation:double"/></Plane>` + "\n")
				} else {
					b.WriteString("/>\n")
				}
			}
		}
	}
	b.WriteString(`    </Pixels>
    <ROIRef ID="ROI:cells"/>
    <ROIRef ID="ROI:mask"/>
    <AnnotationRef ID="Annotation:map"/>
    <AnnotationRef ID="Annotation:xml"/>
  </Image>
  <ome:Image ID="Image:overview" Name="overview">
    <ome:Pixels ID="Pixels:overview" DimensionOrder="XYZCT" Type="uint8" SizeX="40" SizeY="30" SizeZ="1" SizeC="3" SizeT="1" Interleaved="true">
      <ome:Channel ID="Channel:overview:0" Name="RGB" SamplesPerPixel="3"/>
      <ome:TiffData IFD="12" PlaneCount="1"/>
    </ome:Pixels>
    <ome:AnnotationRef ID="Annotation:timestamp"/>
  </ome:Image>
`)
	b.WriteString(`  <StructuredAnnotations>
    <MapAnnotation ID="Annotation:map" Namespace="example.org/stain" Annotator="Experimenter:1"><Description>staining</Description><Value><M K="stain">H&amp;E</M><M K="empty"></M><M K="  spaced  ">  value  </M></Value></MapAnnotation>
    <CommentAnnotation ID="Annotation:comment"><Value>bleaches after 40 s;
keep the laser low</Value></CommentAnnotation>
    <XMLAnnotation ID="Annotation:xml" Namespace="urn:example:acquisition"><Value>
      <acq:Settings xmlns:acq="urn:example:acquisition" acq:version="2">
        <acq:Laser power="5" unit="mW">on<!-- kept? no: comments go --></acq:Laser>
        <lab:Note xml:lang="en">mixed <b xmlns="">content</b> &amp; more</lab:Note>
        <acq:Empty/>
      </acq:Settings>
    </Value></XMLAnnotation>
    <TagAnnotation ID="Annotation:tag"><Value>mitosis</Value></TagAnnotation>
    <TermAnnotation ID="Annotation:term" Namespace="http://purl.obolibrary.org/obo/"><Value>GO:0007067</Value></TermAnnotation>
    <DoubleAnnotation ID="Annotation:double"><Value>0.125</Value></DoubleAnnotation>
    <LongAnnotation ID="Annotation:long"><Value>-9007199254740993</Value></LongAnnotation>
    <BooleanAnnotation ID="Annotation:bool"><Value>true</Value></BooleanAnnotation>
    <TimestampAnnotation ID="Annotation:timestamp"><Value>2026-03-04T05:06:07Z</Value></TimestampAnnotation>
    <ListAnnotation ID="Annotation:list"><AnnotationRef ID="Annotation:long"/><AnnotationRef ID="Annotation:bool"/></ListAnnotation>
    <FileAnnotation ID="Annotation:file"><BinaryFile FileName="protocol.txt" Size="3" MIMEType="text/plain"><BinData BigEndian="false" Length="4">YWJj</BinData></BinaryFile></FileAnnotation>
  </StructuredAnnotations>
  <ROI ID="ROI:cells" Name="cells">
    <Union>
      <Rectangle ID="Shape:0" TheZ="1" TheC="0" TheT="0" X="4" Y="5" Width="10.5" Height="8" StrokeColor="-16776961" Text="cell 1"/>
      <Ellipse ID="Shape:1" X="30" Y="20" RadiusX="6" RadiusY="4" FillColor="16711808"/>
      <Polygon ID="Shape:2" Points="1,1 10,1 5,9"><Transform A00="1" A10="0" A01="0" A11="1" A02="2.5" A12="-1"/></Polygon>
    </Union>
    <AnnotationRef ID="Annotation:tag"/>
    <Description>segmented by hand</Description>
  </ROI>
  <ROI ID="ROI:mask">
    <Union>
      <Mask ID="Shape:3" X="0" Y="0" Width="8" Height="2"><BinData BigEndian="false" Length="2">/wA=</BinData></Mask>
      <Label ID="Shape:4" X="2" Y="3" Text="nucleus" FontSize="12"/>
    </Union>
  </ROI>
</OME>
`)
	return b.String()
}
