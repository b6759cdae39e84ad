package twincheck_test

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/twincheck"
)

var rules = twincheck.Rules{Roots: []string{"dial"}, Env: "DB_ADDR", Gates: []string{"each", "benchServer", "benchFake"},
	Prefixes: []string{"TestServer"}, Marker: "Real", Fields: []string{"sess"}, Twin: "fake"}

// Each rule is named when a source breaks it, and a gated test passes.
func TestUntwinned(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"gated", `package p
func TestServerOK(t *testing.T) { each(t, func(t *testing.T, c *conn) { c.Put() }) }`, nil},
		{"through another function", `package p
func open(t *testing.T) *conn { return dial(t) }
func TestOther(t *testing.T) { open(t) }`, []string{"reaches the server without running on the fake: TestOther → open → dial"}},
		{"the variable", `package p
func FuzzEnv(f *testing.F) { _ = os.Getenv("DB_ADDR") }`, []string{`reaches the server without running on the fake: FuzzEnv → "DB_ADDR"`}},
		{"the variable cleared", `package p
func TestUsage(t *testing.T) { t.Setenv("DB_ADDR", ""); os.Setenv("DB_ADDR", "") }`, nil},
		{"the variable set", `package p
func TestSet(t *testing.T) { t.Setenv("DB_ADDR", "127.0.0.1") }`, []string{`reaches the server without running on the fake: TestSet → "DB_ADDR"`}},
		{"prefix without gate", `package p
func TestServerAlone(t *testing.T) {}`, []string{"TestServerAlone runs no body through each or benchServer or benchFake"}},
		{"assert on one side", `package p
func TestServerBranch(t *testing.T) { each(t, body) }
func body(t *testing.T, c *conn) { if c.Real { t.Fatal("x") } }`, []string{
			"body asserts (Fatal) in a branch on Real: the other target never checks it"}},
		{"return on one side", `package p
func TestServerBranch(t *testing.T) { each(t, body) }
func body(t *testing.T, c *conn) { if !c.Real() { return }; c.Put() }`, []string{
			"body returns in a branch on Real: what follows never runs on one target"}},
		{"an expectation per target", `package p
func TestServerBranch(t *testing.T) { each(t, body) }
func body(t *testing.T, c *conn) { want := 1; if c.Real() { want = 2 }; require.Equal(t, want, c.Get()) }`, []string{
			"body asserts (require.Equal) on want, which a branch on Real sets: each target checks another expectation"}},
		{"a branch on a field compared with nil", `package p
func TestServerBranch(t *testing.T) { each(t, func(t *testing.T, c *conn) { if c.sess != nil { t.Skip("x") } }) }`, []string{
			"TestServerBranch asserts (Skip) in a branch on Real: the other target never checks it"}},
		{"set-up branches", `package p
func TestServerBranch(t *testing.T) { each(t, body) }
func body(t *testing.T, c *conn) {
	if c.Real() { x := 2; c.Use(x); go func() { return }() } else { c.Use(1) }
	db := open(); if c.Real() { db = dial(t) }; require.NoError(t, db.Put())
	if err := c.sess.Put(); err != nil { t.Fatal(err) }
}`, nil},
		{"a benchmark reaching the server", `package p
func BenchmarkAlone(b *testing.B) { open(b) }
func open(t testing.TB) *conn { return dial(t) }`, []string{"reaches the server without running on the fake: BenchmarkAlone → open → dial"}},
		{"a benchmark's body run by a test", `package p
func BenchmarkPut(b *testing.B) { benchServer(b, benchPut) }
func TestBenchmarksOnFake(t *testing.T) { benchFake(t, benchPut) }
func benchPut(b *testing.B, c *conn) { c.Put() }`, nil},
		{"a benchmark's body no test runs", `package p
func BenchmarkPut(b *testing.B) { benchServer(b, benchPut) }
func benchPut(b *testing.B, c *conn) { c.Put() }`, []string{
			"BenchmarkPut runs benchPut through benchServer, and no test passes benchPut to a gate: go test never runs it on the fake"}},
		{"a benchmark's body passed to a gate by another benchmark only", `package p
func BenchmarkPut(b *testing.B) { benchServer(b, benchPut) }
func BenchmarkPutAgain(b *testing.B) { b.Run("x", func(b *testing.B) { benchFake(b, benchPut) }) }
func benchPut(b *testing.B, c *conn) { c.Put() }`, []string{
			"BenchmarkPut runs benchPut through benchServer, and no test passes benchPut to a gate: go test never runs it on the fake",
			"BenchmarkPutAgain runs benchPut through benchFake, and no test passes benchPut to a gate: go test never runs it on the fake"}},
		{"a benchmark's body as a literal", `package p
func BenchmarkPut(b *testing.B) { benchServer(b, func(b *testing.B, c *conn) { c.Put() }) }`, []string{
			"BenchmarkPut passes a function literal to benchServer: no test can run it on the fake; name the body"}},
		{"a benchmark's body asserting on one side", `package p
func BenchmarkPut(b *testing.B) { benchServer(b, benchPut) }
func TestBenchmarksOnFake(t *testing.T) { benchFake(t, benchPut) }
func benchPut(b *testing.B, c *conn) { if c.Real { b.Fatal("x") } }`, []string{
			"benchPut asserts (Fatal) in a branch on Real: the other target never checks it"}},
		{"a benchmark on the fake alone", `package p
func BenchmarkFake(b *testing.B) { var c conn; c.Put() }`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			files, err := twincheck.ParseTests(t.TempDir(), c.src)
			require.NoError(t, err)
			problems, _ := twincheck.Untwinned(files, rules)
			require.Equal(t, c.want, problems)
		})
	}
	_, err := twincheck.ParseTests(t.TempDir(), "package p\nfunc (")
	require.Error(t, err)
}

// The gated list names benchmarks that call a gate, as it names tests.
func TestUntwinnedListsGatedBenchmarks(t *testing.T) {
	files, err := twincheck.ParseTests(t.TempDir(), `package p
func BenchmarkPut(b *testing.B) { benchServer(b, benchPut) }
func TestServerPut(t *testing.T) { each(t, body) }
func TestBenchmarksOnFake(t *testing.T) { benchFake(t, benchPut) }`)
	require.NoError(t, err)
	problems, gated := twincheck.Untwinned(files, rules)
	require.Empty(t, problems)
	require.Equal(t, []string{"BenchmarkPut", "TestBenchmarksOnFake", "TestServerPut"}, gated)
}

// RunBenchmarkOnce runs a benchmark, and each of its sub-benchmarks,
// with b.N = 1, and restores -test.benchtime.
func TestRunBenchmarkOnce(t *testing.T) {
	before := flag.Lookup("test.benchtime").Value.String()
	var ns []int
	twincheck.RunBenchmarkOnce(t, func(b *testing.B) {
		ns = append(ns, b.N)
		b.Run("sub", func(b *testing.B) { ns = append(ns, b.N) })
		b.Run("parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
				}
			})
			ns = append(ns, b.N)
		})
	})
	require.Equal(t, []int{1, 1, 1}, ns)
	require.Equal(t, before, flag.Lookup("test.benchtime").Value.String())
}
