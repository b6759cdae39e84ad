//go:build counterkit_mutants

package ledger_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPromiseChecksCatchBrokenVariants runs the promise tests, each in a
// child process of this test binary with one broken variant switched on
// (COUNTERKIT_BREAK, ledger.Breaks), and requires each to fail against
// the variants listed for it. The promise tests of bad input and of
// overdraw assert one answer each and have no variant here.
func TestPromiseChecksCatchBrokenVariants(t *testing.T) {
	for _, c := range []struct {
		variant string
		tests   []string
	}{
		{"count-window", []string{"TestPromiseRetryAfterManyCreditsAndTime", "TestPromiseRetryAcrossDayOfWriters",
			"TestPromiseRetryAfterWriterDied", "TestPromiseBookEvictionAndForgetting",
			"TestPromiseShardedRetriesOnOtherInstances", "TestPromiseOutboxExactlyOnce", "TestPromiseCreditCostFlat",
			"TestPromiseDebitRetriesOnEveryKind"}},
		{"drop-on-retry", []string{"TestPromiseConcurrentDeliveriesLostAcks", "TestPromiseOutboxExactlyOnce",
			"TestPromiseConcurrentDeliveriesOneActorName"}},
		{"cancel-refused", []string{"TestPromiseContextCancelledAfterPutLanded"}},
		{"book-forgets", []string{"TestPromiseBookReopenedManyTimes"}},
		{"sweep-dating", []string{"TestColdAccountSweptRetiresWritersThatLeft"}},
		{"seen-ignored", []string{"TestWritersStoppedBeforeTheirRecordsLeaveRoom", "TestLateCopyOfAStoppedWriterOnARestartOnlyAccount", "TestColdAccountWithATTLRecordsStore"}},
		{"seen-any-version", []string{"TestSightingOfAnEarlierVersionDatesNoOne"}},
		{"seen-capped", []string{"TestManyWritersStoppedBeforeTheirRecordsLeaveRoom"}},
		{"late-all", []string{"TestPromiseRetryAfterWriterDied", "TestPromiseRetryAcrossDayOfWriters"}},
		{"late-declined", []string{"TestPromiseRetryAfterWriterDied"}},
		{"retire-unrecorded", []string{"TestPromiseRetryAfterWriterDied"}},
	} {
		t.Run(c.variant, func(t *testing.T) {
			// A test whose faults meet the variant only under some
			// schedules (concurrent calls forming a group) may pass one
			// run: each gets up to three.
			todo := slices.Clone(c.tests)
			var out []byte
			for run := 0; run < 3 && len(todo) > 0; run++ {
				cmd := exec.Command(os.Args[0], "-test.run", "^("+strings.Join(todo, "|")+")$", "-test.count=1", "-test.timeout=5m")
				cmd.Env = append(os.Environ(), "COUNTERKIT_BREAK="+c.variant)
				out, _ = cmd.CombinedOutput()
				todo = slices.DeleteFunc(todo, func(name string) bool {
					return regexp.MustCompile(`(?m)^--- FAIL: ` + name + ` \(`).Match(out)
				})
			}
			if len(todo) > 0 {
				t.Errorf("passed with %s in three runs: %s; last output:\n%s", c.variant, strings.Join(todo, ", "), out)
			}
		})
	}
}
