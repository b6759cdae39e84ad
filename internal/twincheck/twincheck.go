// Package twincheck checks, from a package's test sources, that every test
// and benchmark reaching a real server does so through a gate that also
// runs its body on a twin (a model or test double) in CI, and that no body
// asserts on one side only. A test that runs only against a real server is
// not run by CI, so its expectations could drift from the code unseen; a
// benchmark is not run by go test at all, so the body a benchmark passes
// to a gate must also be passed to one by a test (RunBenchmarkOnce runs
// it there, on the twin).
package twincheck

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Rules say what reaches a real server and how a test may reach it.
type Rules struct {
	// Roots are top-level identifiers whose use reaches the server, and
	// Env the environment variable naming it (a string literal of it in a
	// function reaches the server too, but in a Setenv(Env, "") call,
	// which makes sure no server is named).
	Roots []string
	Env   string
	// Gates run a body on the twin and on the server; what is passed to a
	// gate is not followed. A benchmark's gate may run its body on the
	// server only: the body must then be passed to a gate by a test too.
	Gates []string
	// Prefixes are the test names that must call a gate.
	Prefixes []string
	// Marker is the method or field a body reads to tell the server from
	// the twin. A branch on it (an if or a switch case, also through a
	// local set from it) must not assert, skip, return or leave its loop,
	// nor set a variable an assertion after it takes as an argument (an
	// expectation per target).
	Marker string
	// Fields are fields of the target that also tell the server from the
	// twin (the session a Marker method reads, say): a branch on one
	// compared with nil is a branch on the Marker.
	Fields []string
	// Twin names what CI runs in the server's place ("model", "double").
	Twin string
}

// ParseTests parses the _test.go files of dir, plus extra sources.
func ParseTests(dir string, extra ...string) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	srcs := make([]any, len(names)) // nil: read the file
	for i, src := range extra {
		names, srcs = append(names, fmt.Sprintf("extra%d_test.go", i)), append(srcs, src)
	}
	fset := token.NewFileSet()
	files := make([]*ast.File, len(names))
	for i, n := range names {
		if files[i], err = parser.ParseFile(fset, n, srcs[i], 0); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// Check parses the _test.go files of dir and extra sources, failing t if
// one does not parse, and returns what Untwinned returns for them.
func Check(t testing.TB, dir string, r Rules, extra ...string) (problems, gated []string) {
	t.Helper()
	files, err := ParseTests(dir, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return Untwinned(files, r)
}

// Untwinned returns one line per rule broken in files: a Test, Fuzz or
// Benchmark function that reaches the server other than through a gate, a
// test named with one of the prefixes that calls no gate, a Benchmark that
// passes a gate a body no Test or Fuzz function passes to a gate (go test
// runs no benchmark, so the body would never run on the twin) or a
// function literal (which no test can pass), and a branch on the marker
// that asserts or skips. It also returns the tests and benchmarks that
// call a gate.
func Untwinned(files []*ast.File, r Rules) (problems, gated []string) {
	// gateCall reports whether n calls a gate: g(...) or x.g(...).
	gateCall := func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return false
		}
		name := ""
		switch f := c.Fun.(type) {
		case *ast.Ident:
			name = f.Name
		case *ast.SelectorExpr:
			name = f.Sel.Name
		}
		return slices.Contains(r.Gates, name)
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
	envLit := strconv.Quote(r.Env)
	refs := func(n ast.Node, inFunc bool) []string {
		var out []string
		ast.Inspect(n, func(n ast.Node) bool {
			if clearsEnv(n) {
				return false
			}
			switch n := n.(type) {
			case *ast.Ident:
				out = append(out, n.Name)
			case *ast.BasicLit:
				if inFunc && n.Kind == token.STRING && n.Value == envLit {
					out = append(out, envLit)
				}
			}
			return !gateCall(n)
		})
		return out
	}
	// path returns how name reaches the server ("" if it does not).
	memo := map[string]string{}
	var path func(name string) string
	path = func(name string) string {
		if name == envLit || slices.Contains(r.Roots, name) {
			return name
		}
		if p, ok := memo[name]; ok || slices.Contains(r.Gates, name) {
			return p
		}
		memo[name] = "" // cycles reach nothing new
		for _, d := range decls[name] {
			body, inFunc := ast.Node(d), false
			if fd, ok := d.(*ast.FuncDecl); ok {
				body, inFunc = fd.Body, true
			}
			for _, ref := range refs(body, inFunc) {
				if p := path(ref); p != "" { // a self-reference finds the memo's ""
					memo[name] = name + " → " + p
					return memo[name]
				}
			}
		}
		return ""
	}

	// Functions passed to a gate by name are bodies; testBodies are those
	// a Test or Fuzz function passes, which go test runs on the twin.
	bodies, testBodies := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if gateCall(n) {
				for _, a := range n.(*ast.CallExpr).Args {
					if id, ok := a.(*ast.Ident); ok {
						bodies[id.Name] = true
					}
				}
			}
			return true
		})
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Body != nil && kind(fd.Name.Name) != "Benchmark" && kind(fd.Name.Name) != "" {
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if gateCall(n) {
						for _, a := range n.(*ast.CallExpr).Args {
							if id, ok := a.(*ast.Ident); ok {
								testBodies[id.Name] = true
							}
						}
					}
					return true
				})
			}
		}
	}
	isFunc := func(name string) bool {
		return slices.ContainsFunc(decls[name], func(d ast.Node) bool { _, ok := d.(*ast.FuncDecl); return ok })
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			test := kind(name) != ""
			if test {
				if p := path(name); p != "" {
					problems = append(problems, "reaches the server without running on the "+r.Twin+": "+p)
				}
				callsGate := first(fd.Body, gateCall) != nil
				if callsGate {
					gated = append(gated, name)
				}
				if kind(name) == "Benchmark" {
					ast.Inspect(fd.Body, func(n ast.Node) bool {
						if !gateCall(n) {
							return true
						}
						c := n.(*ast.CallExpr)
						gate := c.Fun
						if s, ok := gate.(*ast.SelectorExpr); ok {
							gate = s.Sel
						}
						for _, a := range c.Args {
							switch a := a.(type) {
							case *ast.FuncLit:
								problems = append(problems, fmt.Sprintf("%s passes a function literal to %s: no test can run it on the %s; name the body",
									name, gate.(*ast.Ident).Name, r.Twin))
							case *ast.Ident:
								if isFunc(a.Name) && !testBodies[a.Name] {
									problems = append(problems, fmt.Sprintf("%s runs %s through %s, and no test passes %s to a gate: go test never runs it on the %s",
										name, a.Name, gate.(*ast.Ident).Name, a.Name, r.Twin))
								}
							}
						}
						return true
					})
				}
				for _, p := range r.Prefixes {
					if strings.HasPrefix(name, p) && !callsGate {
						problems = append(problems, fmt.Sprintf("%s runs no body through %s", name, strings.Join(r.Gates, " or ")))
					}
				}
			}
			if !test && !bodies[name] {
				continue
			}
			problems = append(problems, r.markerBranches(name, fd.Body)...)
		}
	}
	sort.Strings(problems)
	sort.Strings(gated)
	return problems, gated
}

// branches reports whether cond reads the marker, or compares one of the
// fields with nil.
func (r Rules) branches(cond ast.Expr) bool {
	return first(cond, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			return n.Sel.Name == r.Marker
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return false
			}
			for _, pair := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
				s, ok := pair[0].(*ast.SelectorExpr)
				nilID, isNil := pair[1].(*ast.Ident)
				if ok && isNil && nilID.Name == "nil" && slices.Contains(r.Fields, s.Sel.Name) {
					return true
				}
			}
		}
		return false
	}) != nil
}

// markerBranches returns the problems of the branches on the marker in
// body, the function name: one that asserts, skips, returns or leaves its
// loop; and an assertion taking as an argument a variable that such a
// branch set before it, with no assignment outside one in between (in the
// source's order: the check does not follow loops). A branch is an if or
// a switch case whose condition reads the marker, compares a field with
// nil, or reads a local set from the marker or a field.
func (r Rules) markerBranches(name string, body *ast.BlockStmt) []string {
	var problems []string
	locals := map[string]bool{} // set from the marker or a field
	ast.Inspect(body, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && len(a.Lhs) == len(a.Rhs) {
			for i, rhs := range a.Rhs {
				if id, ok := a.Lhs[i].(*ast.Ident); ok && r.reads(rhs) {
					locals[id.Name] = true
				}
			}
		}
		return true
	})
	on := func(e ast.Expr) bool {
		return e != nil && (r.branches(e) || first(e, func(n ast.Node) bool { id, ok := n.(*ast.Ident); return ok && locals[id.Name] }) != nil)
	}
	var branches []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			if on(n.Cond) {
				branches = append(branches, n.Body)
				if n.Else != nil {
					branches = append(branches, n.Else)
				}
			}
		case *ast.SwitchStmt:
			marked := on(n.Tag)
			for _, c := range n.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					marked = marked || on(e)
				}
			}
			if marked {
				for _, c := range n.Body.List {
					branches = append(branches, &ast.BlockStmt{List: c.(*ast.CaseClause).Body})
				}
			}
		}
		return true
	})
	set := map[string][]token.Pos{} // where a branch sets a variable
	inBranch := map[ast.Node]bool{}
	for _, b := range branches {
		if call := assertion(b); call != "" {
			problems = append(problems, fmt.Sprintf("%s asserts (%s) in a branch on %s: the other target never checks it", name, call, r.Marker))
		}
		if leaves(b) {
			problems = append(problems, fmt.Sprintf("%s returns in a branch on %s: what follows never runs on one target", name, r.Marker))
		}
		assigns(b, func(n ast.Node, v string) { set[v] = append(set[v], n.Pos()); inBranch[n] = true })
	}
	plain := map[string][]token.Pos{} // where code outside the branches sets it
	assigns(body, func(n ast.Node, v string) {
		if !inBranch[n] {
			plain[v] = append(plain[v], n.Pos())
		}
	})
	chosen := func(v string, at token.Pos) bool {
		for _, p := range set[v] {
			if p < at && !slices.ContainsFunc(plain[v], func(q token.Pos) bool { return p < q && q < at }) {
				return true
			}
		}
		return false
	}
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if call := assertCall(c); call != "" {
			for _, a := range c.Args {
				for _, v := range valuesIn(a) {
					if chosen(v, c.Pos()) {
						problems = append(problems, fmt.Sprintf("%s asserts (%s) on %s, which a branch on %s sets: each target checks another expectation", name, call, v, r.Marker))
					}
				}
			}
		}
		return true
	})
	return problems
}

// reads reports whether e is the marker or one of the fields, read as it
// is (x.Server(), x.session, !x.Server(), x.session == nil), not a call on
// a field (x.session.Query()).
func (r Rules) reads(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return r.reads(x.X)
	case *ast.UnaryExpr:
		return r.reads(x.X)
	case *ast.BinaryExpr:
		return r.reads(x.X) || r.reads(x.Y)
	case *ast.CallExpr:
		s, ok := x.Fun.(*ast.SelectorExpr)
		return ok && len(x.Args) == 0 && s.Sel.Name == r.Marker
	case *ast.SelectorExpr:
		return x.Sel.Name == r.Marker || slices.Contains(r.Fields, x.Sel.Name)
	}
	return false
}

// leaves reports whether branch returns, or leaves or skips the loop
// around it (break, continue or goto outside a loop, switch or select of
// its own), outside the function literals it holds.
func leaves(branch ast.Node) bool {
	found := false
	var walk func(n ast.Node, nested bool)
	walk = func(n ast.Node, nested bool) {
		ast.Inspect(n, func(m ast.Node) bool {
			if found || m == nil {
				return false
			}
			switch m := m.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ReturnStmt:
				found = true
			case *ast.BranchStmt:
				found = found || !nested || m.Tok == token.GOTO
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				if m != n {
					walk(m, true)
					return false
				}
			}
			return !found
		})
	}
	walk(branch, false)
	return found
}

// assigns calls f with each assignment (=, op=, ++, --; not :=, which
// declares its own) in n outside function literals, and the variable it
// sets: the root of a field, element or pointer it writes.
func assigns(n ast.Node, f func(ast.Node, string)) {
	ast.Inspect(n, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			if m.Tok != token.DEFINE {
				for _, l := range m.Lhs {
					if v := root(l); v != "" {
						f(m, v)
					}
				}
			}
		case *ast.IncDecStmt:
			if v := root(m.X); v != "" {
				f(m, v)
			}
		}
		return true
	})
}

// root is the variable an assignment to e writes ("" for _ or none).
func root(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			if x.Name == "_" {
				return ""
			}
			return x.Name
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return ""
		}
	}
}

// valuesIn returns the variables whose values e passes on: every
// identifier in it but the receivers of method calls (c in c.Get()) and
// the functions called.
func valuesIn(e ast.Expr) []string {
	var out []string
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			for _, a := range n.Args {
				out = append(out, valuesIn(a)...)
			}
			if _, ok := n.Fun.(*ast.Ident); !ok {
				if _, ok := n.Fun.(*ast.SelectorExpr); !ok {
					out = append(out, valuesIn(n.Fun)...)
				}
			}
			return false
		case *ast.SelectorExpr:
			out = append(out, valuesIn(n.X)...)
			return false
		case *ast.Ident:
			out = append(out, n.Name)
		}
		return true
	})
	return out
}

// clearsEnv reports whether n is a call x.Setenv(lit, ""): it names the
// variable to clear it, which reaches no server.
func clearsEnv(n ast.Node) bool {
	c, ok := n.(*ast.CallExpr)
	if !ok || len(c.Args) != 2 {
		return false
	}
	if s, ok := c.Fun.(*ast.SelectorExpr); !ok || s.Sel.Name != "Setenv" {
		return false
	}
	v, ok := c.Args[1].(*ast.BasicLit)
	return ok && v.Value == `""`
}

// kind returns "Test", "Fuzz" or "Benchmark" for a function go test runs
// as one (TestMain aside), and "" for any other name.
func kind(name string) string {
	for _, k := range []string{"Test", "Fuzz", "Benchmark"} {
		if strings.HasPrefix(name, k) && name != "TestMain" {
			return k
		}
	}
	return ""
}

// RunBenchmarkOnce runs f as a benchmark with b.N = 1, every
// sub-benchmark (b.Run) once too, and fails t if it fails: the twin run,
// in a test, of a benchmark's body. It sets the test.benchtime flag to 1x
// while f runs (testing.Benchmark reads it), so it must not run in
// parallel with another benchmark. A body that skips (itself: a skipped
// sub-benchmark is not seen) fails t too: its twin run is what CI checks. testing.Benchmark discards what f logs, so t
// reports that the body failed, not why.
func RunBenchmarkOnce(t *testing.T, f func(b *testing.B)) {
	t.Helper()
	if err := runOnce(f); err != nil {
		t.Fatal(err)
	}
}

// runOnce is RunBenchmarkOnce, returning why the body failed.
func runOnce(f func(b *testing.B)) error {
	bt := flag.Lookup("test.benchtime")
	if bt == nil {
		return errors.New("twincheck: no test.benchtime flag (not in a test binary?)")
	}
	old := bt.Value.String()
	if err := bt.Value.Set("1x"); err != nil {
		return err
	}
	defer func() { _ = bt.Value.Set(old) }()
	var failed, skipped bool
	testing.Benchmark(func(b *testing.B) {
		defer func() { failed, skipped = b.Failed(), b.Skipped() }()
		f(b)
	})
	switch {
	case failed:
		return errors.New("the benchmark body failed (testing.Benchmark discards its log)")
	case skipped:
		return errors.New("the benchmark body skipped: it has no run on the twin")
	}
	return nil
}

// first returns the first node of n, depth first, that match accepts, or
// nil.
func first(n ast.Node, match func(ast.Node) bool) ast.Node {
	var found ast.Node
	ast.Inspect(n, func(n ast.Node) bool {
		if found == nil && n != nil && match(n) {
			found = n
		}
		return found == nil
	})
	return found
}

// assertion returns the first call in n that asserts or skips, or "".
func assertion(n ast.Node) string {
	found := ""
	first(n, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			found = assertCall(c)
		}
		return found != ""
	})
	return found
}

// assertCall returns what c calls when it asserts or skips, or "".
func assertCall(c *ast.CallExpr) string {
	s, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if x, ok := s.X.(*ast.Ident); ok && (x.Name == "require" || x.Name == "assert") {
		return x.Name + "." + s.Sel.Name
	}
	switch s.Sel.Name {
	case "Fatal", "Fatalf", "FailNow", "Fail", "Error", "Errorf", "Skip", "Skipf", "SkipNow":
		return s.Sel.Name
	}
	return ""
}
