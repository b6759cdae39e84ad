package counterkit_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/testsize"
)

// exampleExempt are the exported types, by directory and name, that need
// no runnable Example, and why. With output is the rule: an Example whose
// output go test checks.
var exampleExempt = map[string]string{
	// Their Examples reach a real cluster, so they print nothing under go
	// test; TestExampleRunsTypes checks what each prints, on the model and
	// on a cluster.
	"adapters/cassandra.DB":         "ExampleDB runs on a cluster",
	"adapters/cassandra.Partitions": "ExamplePartitions runs on a cluster",
	"adapters/cassandra.Siblings":   "ExampleSiblings runs on a cluster",
	// A check's argument, which only a test can call (it takes a
	// *testing.T): adapters/riak's records_window_test.go passes one.
	"ledger/ledgertest.RecordsTTLStores": "the argument of RecordsKeepTheWindow",
}

// exampleGaps returns "dir.Type" for each exported type of each non-main
// package under root (internal, testdata and hidden directories left out;
// sub-modules included, read with go/parser) that no Example with checked
// output covers: one named Type, or Type_suffix (a method's or a variant).
func exampleGaps(root string) ([]string, error) {
	var gaps []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != root && (name == "internal" || name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		var src, tests []*ast.File
		for name, pkg := range pkgs {
			for file, f := range pkg.Files {
				switch {
				case strings.HasSuffix(file, "_test.go"):
					tests = append(tests, f)
				case name != "main":
					src = append(src, f)
				}
			}
		}
		if len(src) == 0 {
			return nil
		}
		p, err := doc.NewFromFiles(fset, src, "example.com/"+path)
		if err != nil {
			return err
		}
		var covered []string
		for _, e := range doc.Examples(tests...) {
			if e.Output != "" || e.EmptyOutput {
				covered = append(covered, e.Name)
			}
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		for _, t := range p.Types {
			if !slices.ContainsFunc(covered, func(n string) bool { return n == t.Name || strings.HasPrefix(n, t.Name+"_") }) {
				gaps = append(gaps, filepath.ToSlash(rel)+"."+t.Name)
			}
		}
		return nil
	})
	return gaps, err
}

// TestEveryExportedTypeHasAnExample: every exported type of the
// repository's packages, sub-modules included, has a runnable Example
// whose output go test checks, but those exampleExempt names. It runs on
// one goroutine: the race pass (-short) leaves it to the full pass.
func TestEveryExportedTypeHasAnExample(t *testing.T) {
	testsize.SkipSequential(t)
	gaps, err := exampleGaps(".")
	require.NoError(t, err)
	var missing []string
	for _, g := range gaps {
		if _, ok := exampleExempt[g]; !ok {
			missing = append(missing, g)
		}
	}
	require.Empty(t, missing, "exported types without a runnable Example (// Output:)")
	for name := range exampleExempt {
		require.Contains(t, gaps, name, "%s is exempt but has a runnable Example: drop it from exampleExempt", name)
	}
}

// exampleGaps names a type with no Example and one whose Example checks
// no output, and passes one covered by a method's Example.
func TestExampleGapsCatchesMissingExamples(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	write("p/p.go", "package p\n\ntype A struct{}\n\nfunc (A) Do() {}\n\ntype B int\n\ntype C int\n\ntype d int\n")
	write("p/p_test.go", "package p_test\n\nfunc ExampleA_Do() {\n\t// Output:\n}\n\nfunc ExampleC() {}\n")
	write("p/internal/q/q.go", "package q\n\ntype Hidden int\n")
	write("cmd/main.go", "package main\n\ntype Tool int\n\nfunc main() {}\n")
	gaps, err := exampleGaps(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"p.B", "p.C"}, gaps)
}
