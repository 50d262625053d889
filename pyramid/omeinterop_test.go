package pyramid

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ometiff-go/ometiff/internal/interop"
	"github.com/ometiff-go/ometiff/internal/omexmltest"
)

// metadataFiles are files whose OME-XML merges callers' documents and
// typed fields in every way the tests try: each caller case whole, an
// image of a document alone, typed fields alone, typed fields over a
// caller's document, and the caller IDs the writer must step around.
func metadataFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, tc := range callerCases() {
		files[tc.name] = writeImages(t, Options{TileSize: 16, OME: mustParseOME(t, tc.doc)}, tc.specs...)
	}
	rich := mustParseOME(t, omexmltest.RichDoc())
	overview := richSpecs[1]
	overview.OME = rich.Image(1)
	files["one image of a document"] = writeImages(t, Options{TileSize: 16}, overview, typedSpec())
	files["typed"] = writeImages(t, Options{TileSize: 16}, typedSpec(), typedSpec())
	over := bioformatsSpec
	over.Instrument = typedInstrument()
	over.Channels = []Channel{{Name: "typed", LightSourceSettings: &LightSourceSettings{LightSource: 1}}}
	over.PlaneInfo = []Plane{{Z: 1, DeltaT: Quantity{1, "s"}}}
	files["typed over Bio-Formats"] = writeImages(t, Options{TileSize: 16, OME: mustParseOME(t, bioformatsDoc())}, over)
	files["documents that define the same IDs"] = writeImages(t, Options{TileSize: 16}, mergedDocs(t)...)
	return files
}

// TestInteropOMEXMLMetadataSchema validates with xmllint, against the OME
// 2016-06 schema, the OME-XML of files that carry callers' documents and
// typed metadata (keyrefs included: every ID they refer to is defined). It
// runs in make test too, and needs the schema as TestInteropOMEXMLSchema
// does.
func TestInteropOMEXMLMetadataSchema(t *testing.T) {
	needSchema(t)
	dir := t.TempDir()
	for name, data := range metadataFiles(t) {
		t.Run(name, func(t *testing.T) {
			xml := filepath.Join(dir, "description.xml")
			require.NoError(t, os.WriteFile(xml, []byte(descriptionOf(t, data)), 0o644))
			r := interop.Run("xmllint", "--noout", "--nonet", "--schema", schemaPath(), xml)
			require.NoError(t, r.Err, r.Stderr)
			assert.Contains(t, r.Stderr, "validates")
		})
	}
}

// TestInteropTifffileOMEMetadata: tifffile reads back the OME-XML of files
// carrying callers' documents (ome_metadata), and in it, parsed as XML,
// every element and attribute the callers gave is there, but what the
// writer owns; and tifffile sees the series the document describes.
func TestInteropTifffileOMEMetadata(t *testing.T) {
	interop.Selected(t)
	interop.Need(t, "tifffile")
	dir := t.TempDir()
	for _, tc := range callerCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".ome.tif")
			require.NoError(t, os.WriteFile(path, writeImages(t, Options{TileSize: 16, OME: mustParseOME(t, tc.doc)}, tc.specs...), 0o644))
			out := interop.RunPython(t, interop.TifffileOMEXML, path)
			assert.Empty(t, omexmltest.MissingFrom(omexmltest.Parse(t, []byte(tc.doc)), omexmltest.Parse(t, []byte(out))))
		})
	}
}

// TestInteropOMEXMLWellFormed: xmllint, stricter than encoding/xml, finds
// the OME-XML the writer makes of documents with unusual namespace
// bindings well-formed and namespace-well-formed (these documents are
// not valid: they have attributes the schema does not allow).
func TestInteropOMEXMLWellFormed(t *testing.T) {
	interop.Need(t, "xmllint")
	dir := t.TempDir()
	for i, doc := range namespaceDocs {
		xml := filepath.Join(dir, "description.xml")
		out := descriptionOf(t, writeImages(t, Options{TileSize: 16, OME: mustParseOME(t, doc)}, ImageSpec{SizeX: 8, SizeY: 8}))
		require.NoError(t, os.WriteFile(xml, []byte(out), 0o644))
		r := interop.Run("xmllint", "--noout", "--nonet", xml)
		require.NoError(t, r.Err, "document %d: %s", i, r.Stderr)
		assert.Empty(t, r.Stderr)
	}
}
