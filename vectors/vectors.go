package vectors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// files maps every vector file this package checks to the function that
// generates it (Generate) and the one that checks it (CheckFile).
//
// To check a new file: write gen<Name> and check<Name> in <name>.go, each
// taking the *checker that plays the role of testing.T, and list them
// here. Until then, Check reports the file as skipped, with no checker.
var files = map[string]struct {
	gen   func(t *checker) any
	check func(t *checker, raw []byte)
}{
	"envelope.json":   {genEnvelope, checkEnvelope},
	"gcounter.json":   {genGCounter, checkGCounter},
	"pncounter.json":  {genPNCounter, checkPNCounter},
	"tpncounter.json": {genTPN, checkTPN},
	"tally.json":      {genTally, checkTally},
	"deltalog.json":   {genDeltalog, checkDeltalog},
	"balance.json":    {genBalance, checkBalance},
	"storage.json":    {genStorage, checkStorage},
}

// ErrNoChecker is returned by CheckFile and Generate for a file name that
// has no checker in this package.
var ErrNoChecker = errors.New("no checker")

// Files returns the names of the vector files this package checks, sorted.
func Files() []string { return sortedKeys(files) }

// CheckFile checks data, the contents of the vector file name (its base
// name, as in Files), against this build, and reports every vector to r.
// It returns ErrNoChecker when name has no checker; every other failure,
// an unreadable file included, goes to r.
func CheckFile(r Reporter, name string, data []byte) error {
	f, ok := files[name]
	if !ok {
		return fmt.Errorf("%s: %w", name, ErrNoChecker)
	}
	guard(r, func(t *checker) { f.check(t, data) })
	return nil
}

// Generate builds the vector file name from this build's behaviour and
// returns it as indented JSON. The shipped files were made by it and then
// locked: regenerate them only after a deliberate change, and review the
// difference (go test . -run TestVectors -update).
func Generate(name string) ([]byte, error) {
	f, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, ErrNoChecker)
	}
	var failures failureList
	var v any
	guard(&failures, func(t *checker) { v = f.gen(t) })
	if len(failures) > 0 {
		return nil, fmt.Errorf("generating %s: %s", name, strings.Join(failures, "; "))
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("generating %s: %w", name, err)
	}
	return append(b, '\n'), nil
}

// failureList is a Reporter that keeps the failure messages.
type failureList []string

func (l *failureList) Run(name string, check func(Reporter)) {
	check(&prefixed{name, l})
}

func (l *failureList) Fail(msg string) { *l = append(*l, msg) }

type prefixed struct {
	name string
	l    *failureList
}

func (p *prefixed) Run(name string, check func(Reporter)) {
	check(&prefixed{p.name + "/" + name, p.l})
}

func (p *prefixed) Fail(msg string) { p.l.Fail(p.name + ": " + msg) }

// Report is the outcome of Check: one FileResult per *.json file of the
// directory, in name order.
type Report struct {
	Dir   string
	Files []FileResult
}

// OK reports whether no file failed. Skipped files do not fail.
func (r *Report) OK() bool {
	return !slices.ContainsFunc(r.Files, FileResult.Failed)
}

// FileResult is the outcome of one vector file.
type FileResult struct {
	Name string
	// Skipped is set when the file has no checker in this package; it was
	// not read.
	Skipped bool
	// Vectors are the file's named vectors, in the order checked.
	Vectors []VectorResult
	// Errors are the failures outside any named vector: the file could not
	// be read or parsed, or a check of the file as a whole failed.
	Errors []string
}

// Failed reports whether the file or any of its vectors failed.
func (f FileResult) Failed() bool {
	return len(f.Errors) > 0 || slices.ContainsFunc(f.Vectors, VectorResult.Failed)
}

// FailedVectors returns the number of vectors that failed.
func (f FileResult) FailedVectors() int {
	n := 0
	for _, v := range f.Vectors {
		if v.Failed() {
			n++
		}
	}
	return n
}

// VectorResult is the outcome of one named vector. Its Name is the name
// the check gives it; a vector in a group is named "group/name" (the same
// names as the subtests of go test . -run TestVectors, where spaces become
// underscores).
type VectorResult struct {
	Name     string
	Failures []string
	group    bool // had vectors of its own: listed only if it failed itself
}

// Failed reports whether the vector failed.
func (v VectorResult) Failed() bool { return len(v.Failures) > 0 }

// Check checks every *.json file of dir against this build: each file with
// a checker (Files) vector by vector, each other file is reported as
// Skipped. The error is for the directory itself: missing, unreadable, or
// holding no *.json file; a file that cannot be read or parsed is a
// failure in the Report.
func Check(dir string) (*Report, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("vectors directory: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("vectors directory %s: not a directory", dir)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("vectors directory %s: %w", dir, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("vectors directory %s: no vector files (*.json)", dir)
	}
	slices.Sort(names)
	rep := &Report{Dir: dir}
	for _, path := range names {
		name := filepath.Base(path)
		res := FileResult{Name: name}
		if _, ok := files[name]; !ok {
			res.Skipped = true
			rep.Files = append(rep.Files, res)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
				err = pe.Err // the report names the file already
			}
			res.Errors = append(res.Errors, fmt.Sprintf("cannot read the file: %v", err))
			rep.Files = append(rep.Files, res)
			continue
		}
		if err := CheckFile(&recorder{res: &res, at: -1}, name, data); err != nil {
			return nil, err // not reached: name has a checker
		}
		res.Vectors = slices.DeleteFunc(res.Vectors, func(v VectorResult) bool { return v.group && !v.Failed() })
		rep.Files = append(rep.Files, res)
	}
	return rep, nil
}

// recorder is Check's Reporter: it records into one FileResult. at is the
// index of the current vector in res.Vectors, -1 for the file itself.
type recorder struct {
	res    *FileResult
	prefix string
	at     int
}

func (r *recorder) Run(name string, check func(Reporter)) {
	if r.prefix != "" {
		name = r.prefix + "/" + name
	}
	if r.at >= 0 {
		r.res.Vectors[r.at].group = true
	}
	r.res.Vectors = append(r.res.Vectors, VectorResult{Name: name})
	check(&recorder{res: r.res, prefix: name, at: len(r.res.Vectors) - 1})
}

func (r *recorder) Fail(msg string) {
	if r.at < 0 {
		r.res.Errors = append(r.res.Errors, msg)
		return
	}
	v := &r.res.Vectors[r.at]
	v.Failures = append(v.Failures, msg)
}
