package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit"
	"github.com/counterkit/counterkit/vectors"
)

// shippedVectors is the module's vectors directory, seen from this
// package's directory.
var shippedVectors = filepath.Join("..", "..", "testdata", "vectors")

// TestVectorsShipped runs counterkit vectors with no directory: it checks
// the vectors built into the binary (counterkit.VectorFiles), which are
// exactly the module's testdata/vectors, checks every file this build has
// a checker for, lists the others as skipped, and every checked file
// passes. (The files change as the module grows, so this test reads the
// output's shape; TestVectorsGolden holds the exact text.)
func TestVectorsShipped(t *testing.T) {
	onDisk, err := filepath.Glob(filepath.Join(shippedVectors, "*.json"))
	require.NoError(t, err)
	built, err := fs.Glob(counterkit.VectorFiles(), "*.json")
	require.NoError(t, err)
	require.Len(t, built, len(onDisk))
	for _, path := range onDisk {
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		got, err := fs.ReadFile(counterkit.VectorFiles(), filepath.Base(path))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%s: the built-in copy differs", path)
	}

	var out, errOut bytes.Buffer
	code := run([]string{"vectors"}, nil, &out, &errOut)
	require.Equal(t, 0, code, "%s%s", out.String(), errOut.String())
	require.Empty(t, errOut.String())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Equal(t, "dir  (built in)", lines[0])
	checked := map[string]bool{}
	for _, line := range lines[1 : len(lines)-1] {
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 3, line)
		switch f[0] {
		case "ok":
			checked[f[1]] = true
		case "--":
			require.True(t, strings.HasSuffix(line, "skipped: no checker"), line)
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	for _, name := range vectors.Files() {
		require.True(t, checked[name], "%s is checked and passes", name)
	}
	require.Regexp(t, `^\d+ files: \d+ passed, 0 failed, \d+ skipped \(no checker\); \d+ vectors, 0 failed$`, lines[len(lines)-1])
}

// TestVectorsGolden runs counterkit vectors on a copy of three shipped
// files.
func TestVectorsGolden(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"envelope.json", "storage.json", "tally.json"} {
		b, err := os.ReadFile(filepath.Join(shippedVectors, name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"vectors", dir}, nil, &out, &errOut), errOut.String())
	require.Empty(t, errOut.String())
	golden(t, "vectors.txt", strings.ReplaceAll(out.String(), dir, "DIR"))
}

// TestVectorsFailures runs counterkit vectors on a directory holding a
// vector whose expected error was changed, a truncated file and a file
// with no checker: the changed vector and the truncated file fail with
// messages that say where, the other file is skipped, and the exit status
// is 1.
func TestVectorsFailures(t *testing.T) {
	dir := t.TempDir()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(shippedVectors, name))
		require.NoError(t, err)
		return string(b)
	}
	write := func(name, s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	// envelope.json: the input 01 is refused as corrupt; the file now
	// claims too_large.
	env := read("envelope.json")
	vector := `"name": "not an array",
      "decoder": "gcounter",
      "hex": "01",
      "error": "corrupt"`
	require.Equal(t, 1, strings.Count(env, vector))
	write("envelope.json", strings.Replace(env, vector, strings.Replace(vector, `"corrupt"`, `"too_large"`, 1), 1))
	// storage.json: cut in the middle of its third line.
	storage := read("storage.json")
	lines := strings.SplitAfterN(storage, "\n", 4)
	write("storage.json", lines[0]+lines[1]+lines[2][:len(lines[2])/2])
	// drivers.json: no checker in this build.
	write("drivers.json", `{"comment": "replayed by a test of the root module"}`+"\n")

	var out, errOut bytes.Buffer
	code := run([]string{"vectors", dir}, nil, &out, &errOut)
	require.Equal(t, 1, code)
	got := strings.ReplaceAll(out.String(), dir, "DIR")
	golden(t, "vectors-failures.txt", got+"-- stderr --\n"+errOut.String())

	// -v lists the passed vectors too, each under its file.
	var verbose bytes.Buffer
	require.Equal(t, 1, run([]string{"vectors", "-v", dir}, nil, &verbose, &errOut))
	m := regexp.MustCompile(`envelope\.json  1 of (\d+) vectors failed`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the summary names envelope.json's vectors")
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.Contains(t, verbose.String(), fmt.Sprintf("FAIL  envelope.json  1 of %d vectors failed\n      ok    malformed/gcounter/empty input\n", n))
	require.Contains(t, verbose.String(), "      FAIL  malformed/gcounter/not an array\n")
	require.Equal(t, strings.Count(out.String(), "\n")+n-1, strings.Count(verbose.String(), "\n"), "-v adds a line for each of the %d vectors but the failed one", n)
}

func TestVectorsBadDirectory(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "envelope.json")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing", []string{"vectors", filepath.Join(empty, "nope")}, 1, "no such file or directory"},
		{"no vector files", []string{"vectors", empty}, 1, "no vector files (*.json)"},
		{"a file", []string{"vectors", file}, 1, "not a directory"},
		{"two directories", []string{"vectors", empty, empty}, 2, "at most one directory"},
		{"unknown flag", []string{"vectors", "-x"}, 2, "unknown flag: --x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "a file" {
				require.NoError(t, os.WriteFile(file, []byte("{}"), 0o644))
				defer os.Remove(file)
			}
			var out, errOut bytes.Buffer
			require.Equal(t, tc.code, run(tc.args, nil, &out, &errOut))
			require.Empty(t, out.String())
			require.Contains(t, errOut.String(), tc.want)
			require.True(t, strings.HasPrefix(errOut.String(), "counterkit vectors: ") || tc.code == 2, errOut.String())
		})
	}
}
