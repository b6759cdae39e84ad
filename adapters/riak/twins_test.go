package riak_test

// A test that only runs against a real server is not run by CI, so its
// expectations can drift from the code unseen. This file checks, from the
// package's test sources, that every test reaching a real Riak does so
// through eachBackend (or forEachBackend), which runs the same body on the
// test double, in a created bucket type and in the default type, in CI, or
// through forEachExpiringBackend, which runs it on the double with an
// expiring backend; and that every benchmark reaching a real Riak does so
// through benchOnRiak, with a test running its body on the doubles through
// benchOnDoubles (go test runs no benchmark).

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/twincheck"
)

var riakTwins = twincheck.Rules{
	Roots:    []string{"realTarget"},
	Env:      "RIAK_ADDR",
	Gates:    []string{"eachBackend", "forEachBackend", "forEachExpiringBackend", "benchOnRiak", "benchOnDoubles"},
	Prefixes: []string{"TestBackend", "TestConcurrent", "TestConformance"},
	Marker:   "srv",
	Twin:     "double",
}

// TestServerTestsHaveDoubleTwins: every test and benchmark of the package
// that can reach a real Riak does so through eachBackend, forEachBackend
// or forEachExpiringBackend (a benchmark: benchOnRiak, its body run by a
// test through benchOnDoubles), so its body also runs on the test double
// in CI; the backend, concurrency and suite tests do; no body asserts only
// on one backend.
//
// Not covered: Example, which is its own twin: it runs on the double
// unless RIAK_ADDR is set, with the same // Output: either way.
func TestServerTestsHaveDoubleTwins(t *testing.T) {
	problems, gated := twincheck.Check(t, ".", riakTwins)
	require.Empty(t, problems)
	t.Logf("%d tests and benchmarks run their bodies on the double and on Riak: %s", len(gated), strings.Join(gated, " "))
	require.GreaterOrEqual(t, len(gated), 8, "the backend tests are still found")
	require.Contains(t, gated, "BenchmarkShortfall")
	require.Contains(t, gated, "TestBackendExpiringLedgerRecords")
}

// TestTwinCheckCatchesUntwinnedTests adds broken tests to the package's
// sources and requires twincheck.Check to name each.
func TestTwinCheckCatchesUntwinnedTests(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"a real-Riak test with no double run", `package riak_test
func TestBackendAlone(t *testing.T) { tg := realTarget(t); _ = tg }`, []string{
			"TestBackendAlone runs no body through eachBackend or forEachBackend or forEachExpiringBackend or benchOnRiak or benchOnDoubles",
			"reaches the server without running on the double: TestBackendAlone → realTarget",
		}},
		{"through the backend list, any name", `package riak_test
func TestQuiet(t *testing.T) { for _, b := range backends { b.open(t) } }`, []string{
			"reaches the server without running on the double: TestQuiet → backends → realTarget",
		}},
		{"an expiring real-Riak target with no double run", `package riak_test
func TestExpiringAlone(t *testing.T) { tg := realExpiringTarget(t); _ = tg }`, []string{
			"reaches the server without running on the double: TestExpiringAlone → realExpiringTarget → realTarget",
		}},
		{"reads the variable", `package riak_test
func TestEnv(t *testing.T) { cl, _ := riak.NewCluster(ctx, time.Second, os.Getenv("RIAK_ADDR")); _ = cl }`, []string{
			`reaches the server without running on the double: TestEnv → "RIAK_ADDR"`,
		}},
		{"named as a backend test, no gate", `package riak_test
func TestBackendDoubleOnly(t *testing.T) { fakeCluster(t) }`, []string{
			"TestBackendDoubleOnly runs no body through eachBackend or forEachBackend or forEachExpiringBackend or benchOnRiak or benchOnDoubles",
		}},
		{"a benchmark on a real Riak with no double run", `package riak_test
func BenchmarkAlone(b *testing.B) { tg := realTarget(b); _ = tg }`, []string{
			"reaches the server without running on the double: BenchmarkAlone → realTarget",
		}},
		{"a benchmark body no test runs on the doubles", `package riak_test
func BenchmarkLonely(b *testing.B) { benchOnRiak(b, benchLonely) }
func benchLonely(b *testing.B, tg target) { newStore(b, tg.cl, tg.opts) }`, []string{
			"BenchmarkLonely runs benchLonely through benchOnRiak, and no test passes benchLonely to a gate: go test never runs it on the double",
		}},
		{"a body that asserts on Riak only", `package riak_test
func TestBackendBranch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, tg target) { if tg.srv == nil { require.True(t, false) } })
}`, []string{
			"TestBackendBranch asserts (require.True) in a branch on srv: the other target never checks it",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			problems, _ := twincheck.Check(t, ".", riakTwins, c.src)
			require.ElementsMatch(t, c.want, problems)
		})
	}
	problems, gated := twincheck.Check(t, ".", riakTwins, `package riak_test
func TestBackendGood(t *testing.T) { forEachBackend(t, func(t *testing.T, tg target) { newStore(t, tg.cl, tg.opts) }) }`)
	require.Empty(t, problems)
	require.Contains(t, gated, "TestBackendGood")
}
