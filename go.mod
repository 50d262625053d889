module github.com/ometiff-go/ometiff

go 1.26.0

require github.com/stretchr/testify v1.12.1

require (
	github.com/google/tiff v0.0.0-20161109161721-4b31f3041d9a // indirect
	github.com/hhrutter/lzw v1.0.0 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/image v0.48.0 // indirect
)
