package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/counterkit/counterkit"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/vectors"
)

const vectorsUsage = `usage: counterkit vectors [-v] [DIR]

Replays every vector file (*.json) of DIR against this build's Go
implementation (package vectors) and prints, per file, whether it passed
and how many of its named vectors failed, then every failed vector and the
first expectation it broke, and a summary. Without DIR it checks the
vectors built into the binary (counterkit.VectorFiles: the testdata/vectors
of the counterkit module it was built with), so an installed binary needs
no checkout.

Each vector is replayed on the real types and re-derived by independent
models and a separate msgpack writer, as go test . -run TestVectors does.
A file this build has no checker for (for example a new file whose
checker is still a test) is listed as "skipped: no checker" and does not
fail the run. A file that is not valid JSON, or not of its kind, fails
with the line and column.

Exit status: 0 when every checked file passed, 1 when a file failed or DIR
is missing, unreadable or holds no *.json file, 2 for a usage error.
`

// builtIn names the directory of the vectors built into the binary.
const builtIn = "(built in)"

func runVectors(args []string, stdout, stderr io.Writer) int {
	c := newCommand("vectors", vectorsUsage, stderr)
	verbose := c.fs.BoolP("verbose", "v", false, "list every vector, passed or failed")
	if code := c.parse(args); code >= 0 {
		return code
	}
	if c.fs.NArg() > 1 {
		return fail(stderr, "vectors", usagef("%w: vectors takes at most one directory", crdt.ErrInvalidConfig))
	}
	dir := c.fs.Arg(0)
	var rep *vectors.Report
	var err error
	if dir == "" {
		rep, err = checkBuiltIn()
	} else {
		rep, err = vectors.Check(dir)
	}
	if err != nil {
		return fail(stderr, "vectors", fmt.Errorf("%w: %v", crdt.ErrNotFound, err))
	}
	if code := c.emit(stdout, &vectorReport{rep, *verbose}); code != 0 {
		return code
	}
	if !rep.OK() {
		failed := 0
		for _, f := range rep.Files {
			if f.Failed() {
				failed++
			}
		}
		fmt.Fprintf(stderr, "counterkit vectors: %d of %d files failed\n", failed, len(rep.Files))
		return 1
	}
	return 0
}

// checkBuiltIn checks the vector files built into the binary: it writes
// them to a temporary directory, which package vectors reads.
func checkBuiltIn() (*vectors.Report, error) {
	tmp, err := os.MkdirTemp("", "counterkit-vectors-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	src := counterkit.VectorFiles()
	names, err := fs.Glob(src, "*.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		b, err := fs.ReadFile(src, name)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o600); err != nil {
			return nil, err
		}
	}
	rep, err := vectors.Check(tmp)
	if rep != nil {
		rep.Dir = builtIn
	}
	return rep, err
}

// vectorReport is what vectors prints.
type vectorReport struct {
	rep     *vectors.Report
	verbose bool
}

func (r *vectorReport) writeTable(w io.Writer) { writeVectorReport(w, r.rep, r.verbose) }

// MarshalJSON prints the report with the output's key names.
func (r *vectorReport) MarshalJSON() ([]byte, error) {
	type vec struct {
		Name     string   `json:"name"`
		OK       bool     `json:"ok"`
		Failures []string `json:"failures,omitempty"`
	}
	type file struct {
		Name    string   `json:"name"`
		Status  string   `json:"status"` // ok, failed or skipped
		Errors  []string `json:"errors,omitempty"`
		Vectors []vec    `json:"vectors"`
	}
	out := struct {
		Dir   string `json:"dir"`
		OK    bool   `json:"ok"`
		Files []file `json:"files"`
	}{Dir: r.rep.Dir, OK: r.rep.OK(), Files: []file{}}
	for _, f := range r.rep.Files {
		jf := file{Name: f.Name, Status: "ok", Errors: f.Errors, Vectors: []vec{}}
		switch {
		case f.Skipped:
			jf.Status = "skipped"
		case f.Failed():
			jf.Status = "failed"
		}
		for _, v := range f.Vectors {
			if v.Failed() || r.verbose {
				jf.Vectors = append(jf.Vectors, vec{Name: v.Name, OK: !v.Failed(), Failures: v.Failures})
			}
		}
		out.Files = append(out.Files, jf)
	}
	return json.Marshal(out)
}

// writeVectorReport prints one line per file, each failure (every vector
// with verbose) under its file, and a summary line.
func writeVectorReport(w io.Writer, rep *vectors.Report, verbose bool) {
	fmt.Fprintf(w, "dir  %s\n", rep.Dir)
	width := 0
	for _, f := range rep.Files {
		width = max(width, len(f.Name))
	}
	var passed, failed, skipped, nVectors, nFailed int
	for _, f := range rep.Files {
		nVectors, nFailed = nVectors+len(f.Vectors), nFailed+f.FailedVectors()
		verdict := "ok"
		switch {
		case f.Skipped:
			skipped++
			verdict = "--"
		case f.Failed():
			failed++
			verdict = "FAIL"
		default:
			passed++
		}
		fmt.Fprintf(w, "%-4s  %-*s  %s\n", verdict, width, f.Name, fileStatus(f))
		for _, msg := range f.Errors {
			fmt.Fprintf(w, "      file: %s\n", indent(msg, "            "))
		}
		for _, v := range f.Vectors {
			switch {
			case v.Failed():
				fmt.Fprintf(w, "      FAIL  %s\n", v.Name)
				for _, msg := range v.Failures {
					fmt.Fprintf(w, "            %s\n", indent(msg, "            "))
				}
			case verbose:
				fmt.Fprintf(w, "      ok    %s\n", v.Name)
			}
		}
	}
	fmt.Fprintf(w, "%d files: %d passed, %d failed, %d skipped (no checker); %d vectors, %d failed\n",
		len(rep.Files), passed, failed, skipped, nVectors, nFailed)
}

// fileStatus says how a file went: skipped, its vectors, and whether its
// checks of the file as a whole failed.
func fileStatus(f vectors.FileResult) string {
	if f.Skipped {
		return "skipped: no checker"
	}
	var parts []string
	switch n, bad := len(f.Vectors), f.FailedVectors(); {
	case bad > 0:
		parts = append(parts, fmt.Sprintf("%d of %d vectors failed", bad, n))
	case n == 1:
		parts = append(parts, "1 vector")
	case n > 1:
		parts = append(parts, fmt.Sprintf("%d vectors", n))
	}
	if len(f.Errors) > 0 {
		parts = append(parts, "the file failed as a whole")
	}
	if len(parts) == 0 {
		return "checked as a whole (no named vectors)"
	}
	return strings.Join(parts, "; ")
}

// indent indents every line of s after the first with prefix.
func indent(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
