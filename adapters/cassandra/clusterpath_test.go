package cassandra

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// clusterPathTests are the integration tests whose cluster half
// TestClusterPathOnTheDouble runs against the wire-protocol double: the
// quick ones (the rest take from 5 s to a minute each there).
var clusterPathTests = []string{
	"TestIntegrationSiblings", "TestIntegrationTimestampsSurviveClockSteps",
	"TestIntegrationPartitionsRules", "TestIntegrationPartitionsMatchReference",
	"TestIntegrationErrorMapping", "TestIntegrationConcurrentActors",
	"TestIntegrationRetriedWriteIsAmbiguous", "TestIntegrationSinglePageReads",
	"TestIntegrationBatchTooLarge", "TestIntegrationSpanningBatchWorstCase",
	"TestIntegrationSiblingsSimulation", "TestIntegrationKeyRefusals",
	"TestIntegrationOversizedMutation", "TestIntegrationLogAccounting",
	"TestIntegrationBalanceAccounting", "TestExampleRuns", "TestExampleRunsTypes",
}

// TestClusterPathOnTheDouble runs the cluster half ("cassandra" subtests)
// of clusterPathTests in a child process with CASSANDRA_HOSTS=double, so
// that CI runs, through the driver, the code only a real run takes
// otherwise: the harness's session, keyspace and tables, the examples'
// connection, and every expectation of those bodies (the model half
// checks the same expectations below the driver). The whole suite on the
// double is `CASSANDRA_HOSTS=double go test .` (harness_test.go). The
// child runs on the double whatever the environment names.
func TestClusterPathOnTheDouble(t *testing.T) {
	// The child ends before this test's deadline, and with it.
	timeout := 5 * time.Minute
	if d, ok := t.Deadline(); ok {
		timeout = min(timeout, time.Until(d)-10*time.Second)
	}
	args := []string{"-test.run", "^(" + strings.Join(clusterPathTests, "|") + ")$/^cassandra$",
		"-test.count=1", "-test.v", "-test.timeout=" + timeout.String()}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CASSANDRA_HOSTS=double") // the last one counts
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the cluster halves on the double: %v\n%s", err, out)
	}
	for _, name := range clusterPathTests {
		// Each ran its cluster half, and it passed (a skip would not do).
		if !regexp.MustCompile(`(?m)^\s*--- PASS: ` + name + `/cassandra `).Match(out) {
			t.Errorf("%s/cassandra did not pass on the double:\n%s", name, out)
		}
	}
}
