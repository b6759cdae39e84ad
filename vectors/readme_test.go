package vectors

// The error kinds testdata/vectors/README.md lists against SPEC.md 2.3 and
// against the kinds the vector files use.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/testsize"
)

// specErrorKinds returns the first column of SPEC.md 2.3's table of error
// kinds, in its order.
func specErrorKinds(spec string) []string {
	_, sec, _ := strings.Cut(spec, "### 2.3 Error kinds")
	sec, _, _ = strings.Cut(sec, "\n###")
	sec, _, _ = strings.Cut(sec, "Decoders return")
	var kinds []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(sec, -1) {
		kinds = append(kinds, m[1])
	}
	return kinds
}

// readmeErrorKinds returns the kinds the README's `error` row lists.
func readmeErrorKinds(readme string) []string {
	_, row, _ := strings.Cut(readme, "\n| `error` |")
	row, _, _ = strings.Cut(row, "\n")
	var kinds []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(row, -1) {
		kinds = append(kinds, m[1])
	}
	return kinds
}

// usedErrorKinds returns every value of a field named error or *_error in
// the vector files (kinds joined by +, as the files give them).
func usedErrorKinds(files map[string]string) map[string]string {
	re := regexp.MustCompile(`"[a-z_]*error": "([^"]*)"`)
	used := map[string]string{}
	for name, body := range files {
		for _, m := range re.FindAllStringSubmatch(body, -1) {
			if m[1] != "" {
				used[m[1]] = name
			}
		}
	}
	return used
}

// errorKindProblems lists what is wrong with the README's list of error
// kinds: it must be SPEC.md 2.3's table in order, and every kind a file
// uses (each part of a joined pair in the table's order) must be in it.
func errorKindProblems(spec, readme string, files map[string]string) []string {
	var out []string
	want, got := specErrorKinds(spec), readmeErrorKinds(readme)
	if len(want) < 10 {
		out = append(out, fmt.Sprintf("SPEC.md 2.3: found only %d kinds", len(want)))
	}
	if !slices.Equal(want, got) {
		out = append(out, fmt.Sprintf("README lists %v, SPEC.md 2.3 has %v", got, want))
	}
	for v, file := range usedErrorKinds(files) {
		parts := strings.Split(v, "+")
		last := -1
		for _, k := range parts {
			i := slices.Index(got, k)
			switch {
			case i < 0:
				out = append(out, fmt.Sprintf("%s: error %q: %q is not in the README's list", file, v, k))
			case i <= last:
				out = append(out, fmt.Sprintf("%s: error %q: kinds not in SPEC.md 2.3's order", file, v))
			}
			last = i
		}
	}
	slices.Sort(out)
	return out
}

// TestVectorReadmeErrorKinds checks the error kinds the vectors README
// lists against SPEC.md 2.3 and the vector files, and catches broken
// variants. It runs on one goroutine: the race pass (-short) leaves it to
// the full pass.
func TestVectorReadmeErrorKinds(t *testing.T) {
	testsize.SkipSequential(t)
	spec, err := os.ReadFile(filepath.Join(repoRoot, "SPEC.md"))
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(vectorDir, "README.md"))
	require.NoError(t, err)
	paths, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
	require.NoError(t, err)
	files := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		files[filepath.Base(p)] = string(b)
	}
	require.Empty(t, errorKindProblems(string(spec), string(readme), files))
	require.Contains(t, usedErrorKinds(files), "insufficient_rights")

	// Broken variants the check must catch.
	for _, c := range []struct {
		name, readme string
		files        map[string]string
		want         string
	}{
		{"a kind left out", strings.Replace(string(readme), "`insufficient_rights`, ", "", 1), nil, "README lists"},
		{"two kinds swapped", strings.Replace(string(readme), "`corrupt`, `unsupported_version`", "`unsupported_version`, `corrupt`", 1), nil, "README lists"},
		{"a kind no table has", string(readme), map[string]string{"x.json": `{"error": "insufficient_funds"}`}, `"insufficient_funds" is not in`},
		{"a pair out of order", string(readme), map[string]string{"x.json": `{"read_error": "unavailable+ambiguous_write"}`}, "not in SPEC.md 2.3's order"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NotEqual(t, c.readme == string(readme), c.files == nil, "the variant changes nothing")
			problems := errorKindProblems(string(spec), c.readme, c.files)
			require.NotEmpty(t, problems)
			require.Contains(t, strings.Join(problems, "\n"), c.want)
		})
	}
}
