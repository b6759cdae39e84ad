package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/vectors"
)

const vectorsUsage = `usage: counterkit vectors [-v] [DIR]

Replays every vector file (*.json) of DIR against this build's Go
implementation (package vectors) and prints, per file, whether it passed
and how many of its named vectors failed, then every failed vector and the
first expectation it broke, and a summary. The default DIR is the
testdata/vectors directory of the counterkit module this command was built
from (found through the build's source path: a checkout or the module
cache); name DIR when the command was built elsewhere.

Each vector is replayed on the real types and re-derived by independent
models and a separate msgpack writer, as go test . -run TestVectors does.
A file this build has no checker for (for example a new file whose
checker is still a test) is listed as "skipped: no checker" and does not
fail the run. A file that is not valid JSON, or not of its kind, fails
with the line and column.

Exit status: 0 when every checked file passed, 1 when a file failed or DIR
is missing, unreadable or holds no *.json file, 2 for a usage error.

Flags:
`

func runVectors(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vectors", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "list every vector, passed or failed")
	fs.Usage = func() { fmt.Fprint(stderr, vectorsUsage); fs.PrintDefaults() }
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 1 {
		return fail(stderr, "vectors", usagef("%w: vectors takes at most one directory", crdt.ErrInvalidConfig))
	}
	dir := fs.Arg(0)
	if dir == "" {
		var err error
		if dir, err = vectors.Dir(); err != nil {
			fmt.Fprintf(stderr, "counterkit vectors: %v\n", err)
			return 1
		}
	}
	rep, err := vectors.Check(dir)
	if err != nil {
		fmt.Fprintf(stderr, "counterkit vectors: %v\n", err)
		return 1
	}
	writeVectorReport(stdout, rep, *verbose)
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
