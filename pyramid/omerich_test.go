package pyramid

// richSpecs are the images omexmltest.RichDoc describes.
var richSpecs = []ImageSpec{
	{SizeX: 48, SizeY: 32, SizeZ: 3, SizeC: 2, SizeT: 2, PixelType: Uint16, DimensionOrder: XYCZT},
	{SizeX: 40, SizeY: 30, PixelType: Uint8, SamplesPerPixel: 3},
}
