package vectors

// The shipped files are checked by TestVectors; these tests check the
// checker: what it reports for a changed, broken or unknown file.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// shippedFile reads one file of testdata/vectors, applying edit to its text.
func shippedFile(t *testing.T, name string, edit func(text string) string) []byte {
	b, err := os.ReadFile(filepath.Join(vectorDir, name))
	require.NoError(t, err)
	return []byte(edit(string(b)))
}

func unchanged(text string) string { return text }

func TestCheckPasses(t *testing.T) {
	var r recorder
	require.NoError(t, checkFile(&r, "envelope.json", shippedFile(t, "envelope.json", unchanged)))
	require.Empty(t, r.failed)
	require.Contains(t, r.vectors, "malformed/gcounter/empty input")
	r = recorder{}
	require.NoError(t, checkFile(&r, "storage.json", shippedFile(t, "storage.json", unchanged)))
	require.Empty(t, r.failed)
	require.Zero(t, r.runs, "storage.json has no named vectors")
}

func TestCheckReportsTheFailedVector(t *testing.T) {
	// The malformed input "trailing byte" is refused as corrupt; the
	// changed file claims overflow.
	data := shippedFile(t, "envelope.json", func(text string) string {
		old := `"name": "trailing byte",
      "decoder": "gcounter",`
		require.Equal(t, 1, strings.Count(text, old))
		i := strings.Index(text, old)
		j := i + strings.Index(text[i:], `"error": "corrupt"`)
		return text[:j] + `"error": "overflow"` + text[j+len(`"error": "corrupt"`):]
	})
	var r recorder
	require.NoError(t, checkFile(&r, "envelope.json", data))
	require.Len(t, r.failed, 1, r.failed)
	require.Equal(t, "malformed/gcounter/trailing byte", r.failed[0].name)
	require.Contains(t, r.failed[0].msg, "expected error kind overflow, got error kind corrupt")
	require.Greater(t, r.runs, 10, "the other vectors are checked")
}

// A file that is not JSON, or not of its kind, fails as a whole (outside
// any named vector), with the line and column.
func TestCheckBrokenFiles(t *testing.T) {
	var r recorder
	require.NoError(t, checkFile(&r, "storage.json", shippedFile(t, "storage.json", func(text string) string { return text[:len(text)/2] })))
	require.Len(t, r.failed, 1)
	require.Empty(t, r.failed[0].name)
	require.Contains(t, r.failed[0].msg, "not a vector file: invalid JSON at line")

	// Valid JSON, but ints must be a list.
	r = recorder{}
	require.NoError(t, checkFile(&r, "envelope.json", shippedFile(t, "envelope.json", func(text string) string {
		return strings.Replace(text, `"ints": [`, `"ints": "none", "was": [`, 1)
	})))
	require.Len(t, r.failed, 1)
	require.Empty(t, r.failed[0].name)
	require.Contains(t, r.failed[0].msg, "not a vector file of this kind: at line 3, column")
	require.Contains(t, r.failed[0].msg, "cannot unmarshal string")
	require.Zero(t, r.runs)
}

func TestCheckFileAndGenerateUnknownName(t *testing.T) {
	err := checkFile(nil, "drivers.json", nil)
	require.ErrorIs(t, err, errNoChecker)
	_, err = generateFile("drivers.json")
	require.ErrorIs(t, err, errNoChecker)
	require.NotContains(t, allVectorFiles(), "drivers.json")
}

// A vector that makes the check panic (here: a scenario step without its
// amount) is a failed vector naming the panic, and the file's other
// vectors are still checked.
func TestCheckPanicIsAFailure(t *testing.T) {
	// The first two scenarios, the first version 1 encoding and the first
	// malformed input of gcounter.json (the whole file takes seconds).
	text, err := os.ReadFile(filepath.Join(vectorDir, "gcounter.json"))
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
	require.NoError(t, checkFile(&r, "gcounter.json", []byte(small)))
	require.Empty(t, r.failed)
	require.Equal(t, 4, r.runs)

	step := `"op":"increment","actor":"a","amount":"1"`
	require.Equal(t, 1, strings.Count(small, step))
	r = recorder{}
	require.NoError(t, checkFile(&r, "gcounter.json", []byte(strings.Replace(small, step, `"op":"increment","actor":"a"`, 1))))
	require.Len(t, r.failed, 1, r.failed)
	require.Equal(t, "single", r.failed[0].name)
	require.Contains(t, r.failed[0].msg, "panic: runtime error: invalid memory address or nil pointer dereference")
	require.Contains(t, r.failed[0].msg, "vectors.runG")
	require.Equal(t, 4, r.runs, "the other vectors are checked")
}

// generateFile rebuilds the shipped files byte for byte (the cheap ones;
// go test ./vectors -run TestVectors -update rebuilds them all).
func TestGenerateMatchesShipped(t *testing.T) {
	for _, name := range []string{"envelope.json", "storage.json"} {
		want, err := os.ReadFile(filepath.Join(vectorDir, name))
		require.NoError(t, err)
		got, err := generateFile(name)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), name)
	}
}

// recorder is a Reporter that keeps the failures and counts the vectors.
type recorder struct {
	name    string
	runs    int
	vectors []string // every vector run, "group/name" within a group
	failed  []failure
	parent  *recorder
}

type failure struct{ name, msg string }

func (r *recorder) root() *recorder {
	for r.parent != nil {
		r = r.parent
	}
	return r
}

func (r *recorder) Run(name string, check func(Reporter)) {
	r.root().runs++
	if r.name != "" {
		name = r.name + "/" + name
	}
	check(&recorder{name: name, parent: r})
	r.root().vectors = append(r.root().vectors, name)
}

func (r *recorder) Fail(msg string) {
	root := r.root()
	root.failed = append(root.failed, failure{r.name, msg})
}
