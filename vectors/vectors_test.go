package vectors

// Language-neutral test vectors (SPEC.md, "Test vectors").
//
// The JSON files under testdata/vectors are produced by the code and then
// locked:
//
//	go test ./vectors -run TestVectors -update   # regenerate (review the diff!)
//	go test ./vectors -run TestVectors           # check
//
// TestVectors runs one subtest per file and one per named vector.
//
// Checking replays every vector against the real types (operations, merges,
// encodings, decodings, rejections) and, separately, against plain models
// written from the specification: a per-actor map for the G/PN counters,
// a map of accepted transactions for the transactional counters, a map of
// regular cells for the delta log, plain loops for the tally aggregates
// (including HyperLogLog registers computed from MetroHash64 directly) and
// "the sum of every normal row ever added" for balance. Every expected
// encoding is also rebuilt from the vector's structured state by a small
// msgpack writer that shares no code with the codecs. So a vector whose
// expectations merely mirror a bug in the implementation fails here.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/testsize"
)

var update = flag.Bool("update", false, "regenerate testdata/vectors/*.json from the code (review the diff before committing)")

// repoRoot is the module root, from this package's directory.
const repoRoot = ".."

var vectorDir = filepath.Join(repoRoot, "testdata", "vectors")

// vectorFiles maps the vector files checked with *testing.T directly
// (bounded.json, ledger.json and the driver files: each registers itself
// in an init function) to the functions that generate and check them. The
// other files are in files (files_test.go).
var vectorFiles = map[string]struct {
	gen   func(t *testing.T) any
	check func(t *testing.T, raw []byte)
}{}

// testReporter runs each named vector as a subtest.
type testReporter struct{ t *testing.T }

func (r testReporter) Run(name string, check func(Reporter)) {
	r.t.Run(name, func(t *testing.T) { check(testReporter{t}) })
}

func (r testReporter) Fail(msg string) { r.t.Error(msg) }

// allVectorFiles lists every file with a checker, in files or in
// vectorFiles, sorted.
func allVectorFiles() []string {
	var names []string
	for name := range files {
		names = append(names, name)
	}
	for name := range vectorFiles {
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func TestVectors(t *testing.T) {
	testsize.SkipSequential(t)
	for _, name := range allVectorFiles() {
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			path := filepath.Join(vectorDir, name)
			if *update {
				require.NoError(t, os.MkdirAll(vectorDir, 0o755))
				require.NoError(t, os.WriteFile(path, generate(t, name), 0o644))
			}
			raw, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./vectors -run TestVectors -update to create it")
			if vf, ok := vectorFiles[name]; ok {
				vf.check(t, raw)
				return
			}
			require.NoError(t, checkFile(testReporter{t}, name, raw))
		})
	}
}

// generate builds the vector file name from the code.
func generate(t *testing.T, name string) []byte {
	if vf, ok := vectorFiles[name]; ok {
		b, err := json.MarshalIndent(vf.gen(t), "", "  ")
		require.NoError(t, err)
		return append(b, '\n')
	}
	b, err := generateFile(name)
	require.NoError(t, err)
	return b
}

// TestVectorFilesAreRead fails when a vector file exists that no test reads,
// when a package with a wire codec has no vector file, or when a type tag
// registered in crdt/envelope.go appears in no vector.
func TestVectorFilesAreRead(t *testing.T) {
	known := allVectorFiles()
	paths, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, f := range paths {
		require.Contains(t, known, filepath.Base(f), "%s is not read by any test: add a checker to files (files_test.go) or vectorFiles", f)
	}
	// Every top-level package that encodes with internal/wire is a type
	// package and needs <name>.json.
	dirs, err := os.ReadDir(repoRoot)
	require.NoError(t, err)
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "internal" || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		srcs, _ := filepath.Glob(filepath.Join(repoRoot, d.Name(), "*.go"))
		codec := false
		for _, s := range srcs {
			if strings.HasSuffix(s, "_test.go") {
				continue
			}
			b, err := os.ReadFile(s)
			require.NoError(t, err)
			if bytes.Contains(b, []byte("wire.NewEncoder(")) {
				codec = true
			}
		}
		if codec {
			require.Contains(t, known, d.Name()+".json", "package %s has a wire codec but no testdata/vectors/%s.json", d.Name(), d.Name())
			_, err := os.Stat(filepath.Join(vectorDir, d.Name()+".json"))
			require.NoError(t, err)
		}
	}
	// Every registered tag occurs in some vector file.
	var all []byte
	for _, f := range paths {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		all = append(all, b...)
	}
	for _, tag := range registeredTags(t) {
		enc := hex.EncodeToString(msgpackStr(tag))
		require.True(t, bytes.Contains(all, []byte(enc)), "type tag %q is in crdt/envelope.go but in no vector's hex", tag)
	}
}

// msgpackStr is the msgpack encoding of a string of at most 255 bytes
// (fixstr or str8), as a type tag appears in an envelope.
func msgpackStr(s string) []byte {
	if len(s) < 32 {
		return append([]byte{0xa0 | byte(len(s))}, s...)
	}
	return append([]byte{0xd9, byte(len(s))}, s...)
}

// registeredTags parses crdt/envelope.go for its TypeTag constants, so a new
// tag without vectors is noticed.
func registeredTags(t *testing.T) []string {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(repoRoot, "crdt", "envelope.go"), nil, 0)
	require.NoError(t, err)
	var tags []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "TypeTag" {
				continue
			}
			for _, v := range vs.Values {
				lit := v.(*ast.BasicLit)
				s, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				tags = append(tags, s)
			}
		}
	}
	require.GreaterOrEqual(t, len(tags), 8)
	return tags
}
