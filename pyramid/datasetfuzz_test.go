package pyramid

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseDataset reads any bytes as a plan: it must refuse them with an
// ErrPlan or accept them, and an accepted plan's JSON must read back into
// the same plan (a fixed point), with the same UUIDs. For a plan of few
// planes, the OME-XML of its files must put every plane in the file the
// plan says, once.
func FuzzParseDataset(f *testing.F) {
	for _, spec := range []DatasetSpec{stackPlan(3, 2, 2, 16, Split{Files: 5}), richPlan()} {
		data, err := json.Marshal(mustDataset(f, spec))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"Version": 1, "Name": "a", "Images": [{"SizeX": 8, "SizeY": 8, "SizeZ": 3}, {"SizeX": 4, "SizeY": 4, "SizeC": 2}], "Split": {"Files": 2, "ByImage": true}}`))
	f.Add([]byte(`{"Version": 1, "Name": "a", "Images": [{"SizeX": 8, "SizeY": 8, "SizeZ": 3}], "Files": [{"Planes": [{"Image": 0, "First": 1, "Count": 2}]}, {"Planes": [{"Image": 0, "Count": 1}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDataset(data)
		if err != nil {
			if !errors.Is(err, ErrPlan) {
				t.Fatalf("not ErrPlan: %v", err)
			}
			requireTyped(t, err)
			return
		}
		canonical, _ := d.MarshalJSON()
		back, err := ParseDataset(canonical)
		if err != nil {
			t.Fatalf("the plan's own JSON is refused: %v\n%s", err, canonical)
		}
		again, _ := back.MarshalJSON()
		if !bytes.Equal(canonical, again) {
			t.Fatalf("not a fixed point:\n%s\n%s", canonical, again)
		}
		for i := range d.Files() {
			if d.UUID(i) != back.UUID(i) {
				t.Fatalf("file %d: UUID %s, then %s", i, d.UUID(i), back.UUID(i))
			}
		}
		total := 0
		for _, im := range d.Spec().Images {
			total += im.Planes()
		}
		if total <= 256 {
			checkDatasetXML(t, d)
		}
	})
}

// checkDatasetXML checks that the OME-XML of d's first file, read by the
// dataset check's parser, puts every plane in the file d says, once, at
// consecutive IFDs.
func checkDatasetXML(t *testing.T, d *Dataset) {
	t.Helper()
	xml, err := d.metadata(d.UUID(0))
	if err != nil {
		t.Fatalf("the OME-XML of an accepted plan: %v", err)
	}
	meta, err := parseDatasetMeta(xml)
	if err != nil {
		t.Fatalf("the dataset's OME-XML does not parse: %v", err)
	}
	if meta.uuid != d.UUID(0) || len(meta.images) != len(d.Spec().Images) {
		t.Fatalf("root UUID %s, %d images", meta.uuid, len(meta.images))
	}
	where := map[PlaneRef]string{}
	for k, im := range meta.images {
		s := im.spec()
		for _, td := range im.tiffData {
			start, err := s.PlaneIndex(td.first[0], td.first[1], td.first[2])
			if err != nil {
				t.Fatal(err)
			}
			for p := range td.count {
				z, c, tt := s.PlaneCoords(start + p)
				ref := PlaneRef{Image: k, Z: z, C: c, T: tt}
				if _, twice := where[ref]; twice {
					t.Fatalf("%v twice", ref)
				}
				where[ref] = td.fileName
			}
		}
	}
	for i := range d.Files() {
		for ref := range d.Planes(i) {
			if where[ref] != d.File(i).Name {
				t.Fatalf("%v is in %q, not in %s", ref, where[ref], d.File(i).Name)
			}
			delete(where, ref)
		}
	}
	if len(where) > 0 {
		t.Fatalf("%d planes in TiffData the plan does not have", len(where))
	}
}

// FuzzDatasetMeta reads any bytes as the OME-XML of a dataset: the parser
// must refuse them or return images whose planes an int counts.
func FuzzDatasetMeta(f *testing.F) {
	d := mustDataset(f, richPlan())
	companion, _ := d.companionXML()
	stub, _ := d.description(0)
	f.Add(companion)
	f.Add(stub)
	f.Add([]byte(bioformatsDoc()))
	f.Add([]byte(tifffileDoc()))
	f.Add([]byte(`<OME UUID="u"><Image><Pixels DimensionOrder="XYZCT" Type="uint8" SizeX="1" SizeY="1" SizeZ="1" SizeC="3" SizeT="1"><Channel SamplesPerPixel="3"/><TiffData/></Pixels></Image></OME>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseDatasetMeta(data)
		if err != nil {
			if !errors.Is(err, errMetaSyntax) {
				t.Fatalf("an error of no kind: %v", err)
			}
			return
		}
		for _, im := range m.images {
			if _, ok := mul(im.sizes[0], im.sizes[1], im.sizes[2]); !ok || im.planes() < 1 || im.samples < 1 || im.sizeX < 1 || im.sizeY < 1 {
				t.Fatalf("image %+v", im)
			}
			for _, td := range im.tiffData {
				if td.ifd < 0 || td.count < 0 || td.first[0] < 0 || td.first[1] < 0 || td.first[2] < 0 {
					t.Fatalf("TiffData %+v", td)
				}
			}
		}
	})
}

// FuzzCheckDataset checks a written dataset whose companion holds any
// bytes: the check must finish without a panic, and report every problem
// with its file and one of its kinds.
func FuzzCheckDataset(f *testing.F) {
	spec := stackPlan(3, 2, 2, 16, Split{Files: 3})
	spec.Companion = true
	d := mustDataset(f, spec)
	dir := f.TempDir()
	writeParts(f, d, dir, PartOptions{}, 0, 1) // file 2 missing
	companion, _ := d.companionXML()
	f.Add(companion)
	f.Add(bytes.Replace(companion, []byte(`PlaneCount="4"`), []byte(`PlaneCount="9"`), 1))
	f.Add(bytes.Replace(companion, []byte(`IFD="0"`), []byte(`IFD="2" FirstZ="1"`), 1))
	f.Add([]byte(bioformatsDoc()))
	name, _ := d.Companion()
	path := filepath.Join(dir, name)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := CheckDataset(path)
		if err == nil {
			return
		}
		var de *DatasetError
		if !errors.As(err, &de) {
			t.Fatalf("not a DatasetError: %v", err)
		}
		requireTyped(t, err)
		for _, p := range de.Problems {
			known := p.Err == ErrMissingFile || p.Err == ErrWrongFile || p.Err == ErrMissingPlanes || p.Err == ErrPlane
			if !known || p.File == "" || p.Detail == "" {
				t.Fatalf("problem %+v", p)
			}
		}
	})
}
