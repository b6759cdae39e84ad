package counterkit

import (
	"embed"
	"io/fs"
)

//go:embed testdata/vectors/*.json
var vectorFiles embed.FS

// VectorFiles returns the language-neutral test vectors (the *.json files
// of testdata/vectors) built into this module, so that a program checks a
// build against them without a checkout of this repository.
func VectorFiles() fs.FS {
	sub, err := fs.Sub(vectorFiles, "testdata/vectors")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}
