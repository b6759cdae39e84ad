package vectors_test

// The shipped files are checked by the root module's TestVectors (and by
// counterkit vectors); these tests check the checker: what it reports for
// a changed, broken, unknown or missing file.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/vectors"
)

const shipped = "../testdata/vectors"

// dirWith copies the named shipped files to a new directory, applying
// edit to each file's text.
func dirWith(t *testing.T, edit func(name, text string) string, names ...string) string {
	dir := t.TempDir()
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(shipped, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(edit(name, string(b))), 0o644))
	}
	return dir
}

func unchanged(_, text string) string { return text }

func TestCheckPasses(t *testing.T) {
	dir := dirWith(t, unchanged, "envelope.json", "storage.json")
	rep, err := vectors.Check(dir)
	require.NoError(t, err)
	require.True(t, rep.OK())
	require.Equal(t, dir, rep.Dir)
	require.Len(t, rep.Files, 2)
	env := rep.Files[0]
	require.Equal(t, "envelope.json", env.Name)
	require.False(t, env.Skipped)
	require.False(t, env.Failed())
	require.NotEmpty(t, env.Vectors)
	require.Contains(t, names(env.Vectors), "malformed/gcounter/empty input")
	require.Equal(t, "storage.json", rep.Files[1].Name)
	require.Empty(t, rep.Files[1].Vectors, "storage.json has no named vectors")
}

func TestCheckReportsTheFailedVector(t *testing.T) {
	// The malformed input "trailing byte" is refused as corrupt; the
	// changed file claims overflow.
	dir := dirWith(t, func(_, text string) string {
		old := `"name": "trailing byte",
      "decoder": "gcounter",`
		require.Equal(t, 1, strings.Count(text, old))
		i := strings.Index(text, old)
		j := i + strings.Index(text[i:], `"error": "corrupt"`)
		return text[:j] + `"error": "overflow"` + text[j+len(`"error": "corrupt"`):]
	}, "envelope.json")
	rep, err := vectors.Check(dir)
	require.NoError(t, err)
	require.False(t, rep.OK())
	f := rep.Files[0]
	require.True(t, f.Failed())
	require.Equal(t, 1, f.FailedVectors())
	require.Empty(t, f.Errors)
	for _, v := range f.Vectors {
		if v.Failed() {
			require.Equal(t, "malformed/gcounter/trailing byte", v.Name)
			require.Len(t, v.Failures, 1)
			require.Contains(t, v.Failures[0], "expected error kind overflow, got error kind corrupt")
		}
	}
}

func TestCheckBrokenFiles(t *testing.T) {
	dir := dirWith(t, func(name, text string) string {
		switch name {
		case "storage.json":
			return text[:len(text)/2]
		case "envelope.json":
			// Valid JSON, but ints must be a list.
			return strings.Replace(text, `"ints": [`, `"ints": "none", "was": [`, 1)
		}
		return text
	}, "envelope.json", "storage.json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "drivers.json"), []byte("{}"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a vector file"), 0o644))

	rep, err := vectors.Check(dir)
	require.NoError(t, err)
	require.False(t, rep.OK())
	require.Equal(t, []string{"drivers.json", "envelope.json", "storage.json"}, fileNames(rep))

	drivers := rep.Files[0]
	require.True(t, drivers.Skipped)
	require.False(t, drivers.Failed(), "a file with no checker does not fail")

	env := rep.Files[1]
	require.Len(t, env.Errors, 1)
	require.Contains(t, env.Errors[0], "not a vector file of this kind: at line 3, column")
	require.Contains(t, env.Errors[0], "cannot unmarshal string")
	require.Empty(t, env.Vectors)

	storage := rep.Files[2]
	require.Len(t, storage.Errors, 1)
	require.Contains(t, storage.Errors[0], "not a vector file: invalid JSON at line")
}

func TestCheckDirectoryErrors(t *testing.T) {
	empty := t.TempDir()
	_, err := vectors.Check(filepath.Join(empty, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = vectors.Check(empty)
	require.ErrorContains(t, err, "no vector files (*.json)")
	file := filepath.Join(empty, "x.json")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = vectors.Check(file)
	require.ErrorContains(t, err, "not a directory")
}

func TestCheckFileAndGenerateUnknownName(t *testing.T) {
	err := vectors.CheckFile(nil, "drivers.json", nil)
	require.ErrorIs(t, err, vectors.ErrNoChecker)
	_, err = vectors.Generate("drivers.json")
	require.ErrorIs(t, err, vectors.ErrNoChecker)
	require.NotContains(t, vectors.Files(), "drivers.json")
}

// A vector that makes the check panic (here: a scenario step without its
// amount) is a failed vector naming the panic, and the file's other
// vectors are still checked.
func TestCheckPanicIsAFailure(t *testing.T) {
	// The first two scenarios, the first version 1 encoding and the first
	// malformed input of gcounter.json (the whole file takes seconds).
	text, err := os.ReadFile(filepath.Join(shipped, "gcounter.json"))
	require.NoError(t, err)
	var f map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(text, &f))
	var scenarios, version1, malformed []json.RawMessage
	require.NoError(t, json.Unmarshal(f["scenarios"], &scenarios))
	require.NoError(t, json.Unmarshal(f["version1"], &version1))
	require.NoError(t, json.Unmarshal(f["malformed"], &malformed))
	f["scenarios"] = must(json.Marshal(scenarios[:2]))
	f["version1"] = must(json.Marshal(version1[:1]))
	f["malformed"] = must(json.Marshal(malformed[:1]))
	small := string(must(json.Marshal(f)))
	var r recorder
	require.NoError(t, vectors.CheckFile(&r, "gcounter.json", []byte(small)))
	require.Empty(t, r.failed)
	require.Equal(t, 4, r.runs)

	step := `"op":"increment","actor":"a","amount":"1"`
	require.Equal(t, 1, strings.Count(small, step))
	r = recorder{}
	require.NoError(t, vectors.CheckFile(&r, "gcounter.json", []byte(strings.Replace(small, step, `"op":"increment","actor":"a"`, 1))))
	require.Len(t, r.failed, 1, r.failed)
	require.Equal(t, "single", r.failed[0].name)
	require.Contains(t, r.failed[0].msg, "panic: runtime error: invalid memory address or nil pointer dereference")
	require.Contains(t, r.failed[0].msg, "vectors.runG")
	require.Equal(t, 4, r.runs, "the other vectors are checked")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Generate rebuilds the shipped files byte for byte (the cheap ones; the
// root module's go test . -run TestVectors -update rebuilds them all).
func TestGenerateMatchesShipped(t *testing.T) {
	for _, name := range []string{"envelope.json", "storage.json"} {
		want, err := os.ReadFile(filepath.Join(shipped, name))
		require.NoError(t, err)
		got, err := vectors.Generate(name)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), name)
	}
}

func TestDir(t *testing.T) {
	dir, err := vectors.Dir()
	require.NoError(t, err)
	want, err := filepath.Abs(shipped)
	require.NoError(t, err)
	require.Equal(t, want, dir)
}

// recorder is a Reporter that keeps the failures and counts the vectors.
type recorder struct {
	name   string
	runs   int
	failed []failure
	parent *recorder
}

type failure struct{ name, msg string }

func (r *recorder) root() *recorder {
	for r.parent != nil {
		r = r.parent
	}
	return r
}

func (r *recorder) Run(name string, check func(vectors.Reporter)) {
	r.root().runs++
	check(&recorder{name: name, parent: r})
}

func (r *recorder) Fail(msg string) {
	root := r.root()
	root.failed = append(root.failed, failure{r.name, msg})
}

func names(vs []vectors.VectorResult) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

func fileNames(rep *vectors.Report) []string {
	var out []string
	for _, f := range rep.Files {
		out = append(out, f.Name)
	}
	return out
}
