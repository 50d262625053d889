package pyramid_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ometiff-go/ometiff/pyramid"
)

// A dataset of 4 images of 10 focal planes, written as 3 files by whatever
// processes: each makes the same Dataset from the plan, and writes the
// file its index names. Here one process writes them all, then checks the
// set.
func ExampleDataset_WritePart() {
	dir, err := os.MkdirTemp("", "dataset")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	spec := pyramid.DatasetSpec{Name: "wells", Split: pyramid.Split{Files: 3}}
	for i := range 4 {
		spec.Images = append(spec.Images, pyramid.ImageSpec{Name: fmt.Sprintf("well %d", i), SizeX: 64, SizeY: 64, SizeZ: 10, PixelType: pyramid.Uint16})
	}
	d, err := pyramid.NewDataset(spec)
	if err != nil {
		log.Fatal(err)
	}
	fill := func(ref pyramid.PlaneRef, pix []byte) error {
		for i := range pix {
			pix[i] = byte(ref.Image + ref.Z + i)
		}
		return nil
	}
	for i := range d.Files() { // in a batch system, i is the task's index
		if err := d.WritePart(context.Background(), dir, i, pyramid.PartOptions{}, fill); err != nil {
			log.Fatal(err)
		}
	}
	report, err := pyramid.CheckDataset(filepath.Join(dir, d.File(2).Name))
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range report.Files {
		fmt.Printf("%s: %d planes\n", f.Name, f.Planes)
	}
	fmt.Println(d.File(1).Planes)
	// Output:
	// wells_0.ome.tif: 14 planes
	// wells_1.ome.tif: 13 planes
	// wells_2.ome.tif: 13 planes
	// [{1 4 6} {2 0 7}]
}

// A plan read from JSON, as each process of a batch job reads the plan
// file: the files, their names and UUIDs are the same in every process.
func ExampleParseDataset() {
	plan := []byte(`{
		"Version": 1,
		"Name": "plate",
		"Seed": "plate 17, 2026-12-03",
		"Options": {"Compression": "zstd"},
		"Images": [
			{"Name": "A1", "SizeX": 512, "SizeY": 512, "SizeC": 3, "PixelType": "uint16"},
			{"Name": "A2", "SizeX": 512, "SizeY": 512, "SizeC": 3, "PixelType": "uint16"}
		],
		"Split": {"ByImage": true}
	}`)
	d, err := pyramid.ParseDataset(plan)
	if err != nil {
		log.Fatal(err)
	}
	for i := range d.Files() {
		fmt.Println(d.File(i).Name, d.File(i).Planes, len(d.UUID(i)))
	}
	resolved, err := json.Marshal(d)
	if err != nil {
		log.Fatal(err)
	}
	again, err := pyramid.ParseDataset(resolved)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(again.UUID(1) == d.UUID(1))
	// Output:
	// plate_0.ome.tif [{0 0 3}] 45
	// plate_1.ome.tif [{1 0 3}] 45
	// true
}
