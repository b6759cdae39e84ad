package cassandra

// go test runs no benchmark, so a benchmark that reaches the cluster is
// checked in CI only through a test that runs its body on the model:
// twincheck.Untwinned requires every Benchmark to reach the cluster
// through a gate (benchOnCluster) and the body it passes to be passed to
// a gate by a test too (benchOnModel, from TestBenchmarksRunOnModel,
// bench_test.go).

import (
	"go/ast"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/twincheck"
)

// TestTwinCheckCatchesUntwinnedBenchmarks adds broken benchmarks to the
// package's sources and requires twincheck.Check to name each.
func TestTwinCheckCatchesUntwinnedBenchmarks(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"a benchmark on the cluster with no model run", `package cassandra
func BenchmarkAlone(b *testing.B) { db := newTestDB(b, Options{}); _ = db }`, []string{
			"reaches the server without running on the model: BenchmarkAlone → newTestDB → integration",
		}},
		{"a body no test runs on the model", `package cassandra
func BenchmarkLonely(b *testing.B) { benchOnCluster(b, benchLonely) }
func benchLonely(b *testing.B, tg *target) { tg.newDB(b, Options{}) }`, []string{
			"BenchmarkLonely runs benchLonely through benchOnCluster, and no test passes benchLonely to a gate: go test never runs it on the model",
		}},
		{"a body as a literal", `package cassandra
func BenchmarkLiteral(b *testing.B) { benchOnCluster(b, func(b *testing.B, tg *target) { tg.newDB(b, Options{}) }) }`, []string{
			"BenchmarkLiteral passes a function literal to benchOnCluster: no test can run it on the model; name the body",
		}},
		{"a body that asserts on the cluster only", `package cassandra
func BenchmarkBranch(b *testing.B) { benchOnCluster(b, benchBranch) }
func TestBranchOnModel(t *testing.T) { benchOnModel(t, benchBranch) }
func benchBranch(b *testing.B, tg *target) { if tg.Server() { b.Fatal("x") } }`, []string{
			"benchBranch asserts (Fatal) in a branch on Server: the other target never checks it",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			problems, _ := twincheck.Check(t, ".", cassandraTwins, c.src)
			require.ElementsMatch(t, c.want, problems)
		})
	}
	problems, gated := twincheck.Check(t, ".", cassandraTwins, `package cassandra
func BenchmarkGood(b *testing.B) { benchOnCluster(b, benchGood) }
func TestGoodOnModel(t *testing.T) { benchOnModel(t, benchGood) }
func benchGood(b *testing.B, tg *target) { tg.newDB(b, Options{}) }`)
	require.Empty(t, problems)
	require.Contains(t, gated, "BenchmarkGood")
}

// TestBenchmarksHaveModelTwins: every benchmark of the package runs its
// body through a gate (none of them measures the model alone), and the
// package's sources break no rule.
func TestBenchmarksHaveModelTwins(t *testing.T) {
	files, err := twincheck.ParseTests(".")
	require.NoError(t, err)
	var benches []string
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Benchmark") {
				benches = append(benches, fd.Name.Name)
			}
		}
	}
	require.GreaterOrEqual(t, len(benches), 6, "the benchmarks are still found")
	problems, gated := twincheck.Untwinned(files, cassandraTwins)
	require.Empty(t, problems, "benchmarks that reach the cluster and never run on the model")
	require.Subset(t, gated, benches, "a benchmark runs no body through a gate")
}
