package vectors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

// A Reporter is told how each vector went. The checks call Run once per
// named vector (a scenario, a malformed input, a group of them) and Fail
// when a check fails; a failure outside any Run is the file's own (it
// could not be read, or a check of the file as a whole failed).
//
// In TestVectors, Run is t.Run and Fail is t.Error (testReporter); the
// tests of the checker record into a recorder (report_test.go).
type Reporter interface {
	// Run checks the named vector by calling check with the Reporter that
	// receives that vector's failures. A Run inside another names a vector
	// within a group.
	Run(name string, check func(Reporter))
	// Fail reports that the current vector (or file) failed, and why. The
	// check of that vector stops at its first failure; the file's other
	// vectors are still checked.
	Fail(msg string)
}

// checker is the t every generator and check is given. It satisfies
// testify's require.TestingT: a failed assertion reports to the Reporter
// and stops the current check with a panic that Run recovers, so the
// file's other vectors are still checked.
type checker struct{ r Reporter }

// stop is the panic value that ends a check after a reported failure.
type stop struct{}

// Errorf reports a failure of the current check.
func (t *checker) Errorf(format string, args ...any) { t.r.Fail(fmt.Sprintf(format, args...)) }

// FailNow stops the current check, whose failure Errorf reported.
func (t *checker) FailNow() { panic(stop{}) }

// Helper is testing.T's: the failure messages carry no file positions.
func (t *checker) Helper() {}

// Fatalf reports a failure of the current check and stops it.
func (t *checker) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	t.FailNow()
}

// Run checks a named vector. A failure stops that vector only.
func (t *checker) Run(name string, f func(t *checker)) {
	t.r.Run(name, func(r Reporter) { guard(r, f) })
}

// guard calls f with a checker reporting to r. It ends the check quietly
// after a reported failure, and reports any other panic (a vector that
// makes the code under check, or the check itself, panic) as a failure.
func guard(r Reporter, f func(t *checker)) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(stop); !ok {
				r.Fail(panicMessage(p))
			}
		}
	}()
	f(&checker{r: r})
}

// panicMessage describes a recovered panic and where it happened: the
// first frames below the panic, outside the runtime.
func panicMessage(p any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "panic: %v", p)
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for n := 0; n < 6; {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "runtime.") {
			if !more {
				break
			}
			continue
		}
		if strings.HasSuffix(f.Function, "vectors.guard") {
			break
		}
		fmt.Fprintf(&b, "\n  at %s (%s/%s:%d)", f.Function, filepath.Base(filepath.Dir(f.File)), filepath.Base(f.File), f.Line)
		n++
		if !more {
			break
		}
	}
	return b.String()
}

// readJSON decodes a vector file into v. A file that is not JSON, or whose
// JSON does not fit the file's layout, fails with the line and column.
func readJSON(t *checker, raw []byte, v any) {
	err := json.Unmarshal(raw, v)
	if err == nil {
		return
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(raw, syn.Offset)
		t.Fatalf("not a vector file: invalid JSON at line %d, column %d: %v", line, col, err)
	case errors.As(err, &typ):
		line, col := position(raw, typ.Offset)
		t.Fatalf("not a vector file of this kind: at line %d, column %d: %v", line, col, err)
	}
	t.Fatalf("not a vector file of this kind: %v", err)
}

// position turns a byte offset into a 1-based line and column.
func position(raw []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(raw)))
	before := raw[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}
