package cassandra

// A test that only runs against a real server is not run by CI, so its
// expectations can drift from the code unseen. This file checks, from the
// package's test sources, that every test reaching the cluster does so
// through eachTarget, which runs the same body on the model in CI, and
// every benchmark through benchOnCluster, with a test running its body on
// the model through benchOnModel (bench_twins_test.go).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/internal/twincheck"
)

var cassandraTwins = twincheck.Rules{
	Roots:    []string{"integration"},
	Env:      "CASSANDRA_HOSTS",
	Gates:    []string{"eachTarget", "EachTarget", "benchOnCluster", "benchOnModel"},
	Prefixes: []string{"TestIntegration", "TestConformance", "TestExampleRuns"},
	Marker:   "Server",
	Fields:   []string{"session", "model"},
	Twin:     "model",
}

// TestServerTestsHaveModelTwins: every test of the package that reaches
// the cluster does so through eachTarget, so its body also runs on the
// model in CI; every TestIntegration*, TestConformance* and
// TestExampleRuns does; no body asserts only on one target.
func TestServerTestsHaveModelTwins(t *testing.T) {
	problems, gated := twincheck.Check(t, ".", cassandraTwins)
	require.Empty(t, problems)
	t.Logf("%d tests and benchmarks run their bodies on the model and the cluster: %s", len(gated), strings.Join(gated, " "))
	require.GreaterOrEqual(t, len(gated), 17, "the integration tests are still found")
}

// TestTwinCheckCatchesUntwinnedTests adds broken tests to the package's
// sources and requires twincheck.Check to name each.
func TestTwinCheckCatchesUntwinnedTests(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"a server test with no model run", `package cassandra
func TestIntegrationAlone(t *testing.T) { db := newTestDB(t, Options{}); _ = db }`, []string{
			"TestIntegrationAlone runs no body through eachTarget or EachTarget or benchOnCluster or benchOnModel",
			"reaches the server without running on the model: TestIntegrationAlone → newTestDB → integration",
		}},
		{"through a helper, any name", `package cassandra
func sessionOf(t *testing.T) *gocql.Session { s, _ := integration(t); return s }
func TestQuiet(t *testing.T) { sessionOf(t) }`, []string{
			"reaches the server without running on the model: TestQuiet → sessionOf → integration",
		}},
		{"reads the variable", `package cassandra
func TestEnv(t *testing.T) { if os.Getenv("CASSANDRA_HOSTS") == "" { t.Skip() } }`, []string{
			`reaches the server without running on the model: TestEnv → "CASSANDRA_HOSTS"`,
		}},
		{"named as a server test, no gate", `package cassandra
func TestIntegrationModelOnly(t *testing.T) { modelSiblings(t) }`, []string{
			"TestIntegrationModelOnly runs no body through eachTarget or EachTarget or benchOnCluster or benchOnModel",
		}},
		{"a body that asserts on the server only", `package cassandra
func TestIntegrationBranch(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg *target) { if tg.Server() { require.True(t, false) } })
}`, []string{
			"TestIntegrationBranch asserts (require.True) in a branch on Server: the other target never checks it",
		}},
		{"a named body that skips on the model only", `package cassandra
func TestConformanceBranch(t *testing.T) { eachTarget(t, conformanceBranch) }
func conformanceBranch(t *testing.T, tg *target) { if !tg.Server() { t.Skip("later") }; integrationSiblings(t, tg) }`, []string{
			"conformanceBranch asserts (Skip) in a branch on Server: the other target never checks it",
		}},
		{"an early return on the model", `package cassandra
func TestIntegrationEarlyReturn(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg *target) {
		if !tg.Server() { return }
		require.True(t, false)
	})
}`, []string{
			"TestIntegrationEarlyReturn returns in a branch on Server: what follows never runs on one target",
		}},
		{"an expectation chosen per target", `package cassandra
func TestIntegrationWantPerTarget(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg *target) {
		want := 1
		if tg.Server() { want = 2 }
		require.Equal(t, want, 1)
	})
}`, []string{
			"TestIntegrationWantPerTarget asserts (require.Equal) on want, which a branch on Server sets: each target checks another expectation",
		}},
		{"a branch on the session instead of Server", `package cassandra
func TestIntegrationSessionBranch(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg *target) {
		if tg.session != nil { require.True(t, false) }
	})
}`, []string{
			"TestIntegrationSessionBranch asserts (require.True) in a branch on Server: the other target never checks it",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			problems, _ := twincheck.Check(t, ".", cassandraTwins, c.src)
			require.ElementsMatch(t, c.want, problems)
		})
	}
	// A server test written as the package's are passes.
	problems, gated := twincheck.Check(t, ".", cassandraTwins, `package cassandra
func TestIntegrationGood(t *testing.T) { eachTarget(t, integrationSiblings) }`)
	require.Empty(t, problems)
	require.Contains(t, gated, "TestIntegrationGood")
}

// TestEachTargetRunsTheModel: eachTarget runs the body on the model first,
// whatever the environment.
func TestEachTargetRunsTheModel(t *testing.T) {
	var ran []string
	eachTarget(t, func(t *testing.T, tg *target) {
		ran = append(ran, fmt.Sprintf("%s server=%v model=%v", t.Name(), tg.Server(), tg.model != nil))
	})
	require.NotEmpty(t, ran)
	require.Equal(t, "TestEachTargetRunsTheModel/model server=false model=true", ran[0])
}
