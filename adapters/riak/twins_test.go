package riak_test

// A test that only runs against a real server is not run by CI, so its
// expectations can drift from the code unseen. This file checks, from the
// package's test sources, that every test reaching a real Riak does so
// through eachBackend (or forEachBackend), which runs the same body on the
// test double, in a created bucket type and in the default type, in CI.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// twinRules say what reaches a real server and how a test may reach it.
type twinRules struct {
	// roots are top-level identifiers whose use reaches the server, and
	// env the environment variable naming it (a string literal of it in a
	// function reaches the server too).
	roots []string
	env   string
	// gates run a body on the model or double and on the server; what is
	// passed to a gate is not followed.
	gates []string
	// prefixes are the test names that must call a gate.
	prefixes []string
	// marker is the method or field a body reads to tell the server from
	// the model or double; a branch on it must not assert or skip.
	marker string
}

var riakTwins = twinRules{
	roots:    []string{"realTarget"},
	env:      "RIAK_ADDR",
	gates:    []string{"eachBackend", "forEachBackend"},
	prefixes: []string{"TestBackend", "TestConcurrent", "TestSiblingsConformance", "TestStatestoreBehaviours", "TestLedgerBehaviours", "TestBoundedBehaviours"},
	marker:   "srv",
}

// parseTests parses the _test.go files of dir, plus extra sources.
func parseTests(t *testing.T, dir string, extra ...string) []*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, n, nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	for i, src := range extra {
		f, err := parser.ParseFile(fset, fmt.Sprintf("extra%d_test.go", i), src, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	return files
}

// untwinned returns one line per rule broken in files: a Test or Fuzz
// function that reaches the server other than through a gate, a test named
// with one of the prefixes that calls no gate, and a branch on the marker
// that asserts or skips. It also returns the tests that call a gate.
func untwinned(files []*ast.File, r twinRules) (problems, gated []string) {
	isGate := map[string]bool{}
	for _, g := range r.gates {
		isGate[g] = true
	}
	// Top-level declarations (functions without receivers, vars, consts)
	// and the top-level names each refers to, calls to gates left out.
	decls := map[string][]ast.Node{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					decls[d.Name.Name] = append(decls[d.Name.Name], d)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						for _, n := range vs.Names {
							decls[n.Name] = append(decls[n.Name], vs)
						}
					}
				}
			}
		}
	}
	envLit := strconv.Quote(r.env)
	refs := func(n ast.Node, inFunc bool) []string {
		var out []string
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if isGate[calleeName(n)] {
					return false
				}
			case *ast.Ident:
				out = append(out, n.Name)
			case *ast.BasicLit:
				if inFunc && n.Kind == token.STRING && n.Value == envLit {
					out = append(out, envLit)
				}
			}
			return true
		})
		return out
	}
	isRoot := map[string]bool{envLit: true}
	for _, n := range r.roots {
		isRoot[n] = true
	}
	// path returns how name reaches the server ("" if it does not).
	memo := map[string]string{}
	var path func(name string) string
	path = func(name string) string {
		if isRoot[name] {
			return name
		}
		if p, ok := memo[name]; ok {
			return p
		}
		memo[name] = "" // cycles reach nothing new
		if isGate[name] {
			return ""
		}
		for _, d := range decls[name] {
			body, inFunc := ast.Node(d), false
			if fd, ok := d.(*ast.FuncDecl); ok {
				body, inFunc = fd.Body, true
			}
			for _, ref := range refs(body, inFunc) {
				if ref == name {
					continue
				}
				if p := path(ref); p != "" {
					memo[name] = name + " → " + p
					return memo[name]
				}
			}
		}
		return ""
	}

	// Functions passed to a gate by name are bodies.
	bodies := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok && isGate[calleeName(c)] {
				for _, a := range c.Args {
					if id, ok := a.(*ast.Ident); ok {
						bodies[id.Name] = true
					}
				}
			}
			return true
		})
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			test := (strings.HasPrefix(name, "Test") && name != "TestMain" || strings.HasPrefix(name, "Fuzz"))
			if test {
				if p := path(name); p != "" {
					problems = append(problems, "reaches the server without running on the double: "+p)
				}
				callsGate := false
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok && isGate[calleeName(c)] {
						callsGate = true
					}
					return !callsGate
				})
				if callsGate {
					gated = append(gated, name)
				}
				for _, p := range r.prefixes {
					if strings.HasPrefix(name, p) && !callsGate {
						problems = append(problems, fmt.Sprintf("%s runs no body through %s", name, strings.Join(r.gates, " or ")))
					}
				}
			}
			if !test && !bodies[name] {
				continue
			}
			// A branch on the marker sets things up; it asserts nothing.
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				ifs, ok := n.(*ast.IfStmt)
				if !ok || !mentions(ifs.Cond, r.marker) {
					return true
				}
				for _, branch := range []ast.Node{ifs.Body, ifs.Else} {
					if branch == nil {
						continue
					}
					if call := assertion(branch); call != "" {
						problems = append(problems, fmt.Sprintf("%s asserts (%s) in a branch on %s: the other target never checks it", name, call, r.marker))
					}
				}
				return true
			})
		}
	}
	sort.Strings(problems)
	sort.Strings(gated)
	return problems, gated
}

// calleeName returns the name a call calls: f(...) or x.f(...).
func calleeName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// mentions reports whether n selects name (x.name).
func mentions(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok && s.Sel.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// assertion returns the first call in n that asserts or skips, or "".
func assertion(n ast.Node) string {
	found := ""
	ast.Inspect(n, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || found != "" {
			return found == ""
		}
		s, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := s.X.(*ast.Ident); ok && (x.Name == "require" || x.Name == "assert") {
			found = x.Name + "." + s.Sel.Name
		}
		switch s.Sel.Name {
		case "Fatal", "Fatalf", "FailNow", "Fail", "Error", "Errorf", "Skip", "Skipf", "SkipNow":
			found = s.Sel.Name
		}
		return found == ""
	})
	return found
}

// TestServerTestsHaveDoubleTwins: every test of the package that can reach
// a real Riak does so through eachBackend or forEachBackend, so its body
// also runs on the test double in CI; the backend, concurrency and suite
// tests do; no body asserts only on one backend.
//
// Not covered: benchmarks (BenchmarkShortfall measures, it asserts
// nothing) and Example, which is its own twin: it runs on the double
// unless RIAK_ADDR is set, with the same // Output: either way.
func TestServerTestsHaveDoubleTwins(t *testing.T) {
	problems, gated := untwinned(parseTests(t, "."), riakTwins)
	require.Empty(t, problems)
	t.Logf("%d tests run their bodies on the double and on Riak: %s", len(gated), strings.Join(gated, " "))
	require.GreaterOrEqual(t, len(gated), 11, "the backend tests are still found")
}

// TestTwinCheckCatchesUntwinnedTests adds broken tests to the package's
// sources and requires untwinned to name each.
func TestTwinCheckCatchesUntwinnedTests(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"a real-Riak test with no double run", `package riak_test
func TestBackendAlone(t *testing.T) { tg := realTarget(t); _ = tg }`, []string{
			"TestBackendAlone runs no body through eachBackend or forEachBackend",
			"reaches the server without running on the double: TestBackendAlone → realTarget",
		}},
		{"through the backend list, any name", `package riak_test
func TestQuiet(t *testing.T) { for _, b := range backends { b.open(t) } }`, []string{
			"reaches the server without running on the double: TestQuiet → backends → realTarget",
		}},
		{"reads the variable", `package riak_test
func TestEnv(t *testing.T) { cl, _ := riak.NewCluster(ctx, time.Second, os.Getenv("RIAK_ADDR")); _ = cl }`, []string{
			`reaches the server without running on the double: TestEnv → "RIAK_ADDR"`,
		}},
		{"named as a backend test, no gate", `package riak_test
func TestBackendDoubleOnly(t *testing.T) { fakeCluster(t) }`, []string{
			"TestBackendDoubleOnly runs no body through eachBackend or forEachBackend",
		}},
		{"a body that asserts on Riak only", `package riak_test
func TestBackendBranch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) { if tg.srv == nil { require.True(t, false) } })
}`, []string{
			"TestBackendBranch asserts (require.True) in a branch on srv: the other target never checks it",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			problems, _ := untwinned(parseTests(t, ".", c.src), riakTwins)
			require.ElementsMatch(t, c.want, problems)
		})
	}
	problems, gated := untwinned(parseTests(t, ".", `package riak_test
func TestBackendGood(t *testing.T) { forEachBackend(t, func(t *testing.T, tg target) { newStore(t, tg.cl, tg.opts) }) }`), riakTwins)
	require.Empty(t, problems)
	require.Contains(t, gated, "TestBackendGood")
}
