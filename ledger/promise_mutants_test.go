//go:build counterkit_mutants

package ledger_test

import (
	"os"
	"os/exec"
	"regexp"
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
			"TestPromiseShardedRetriesOnOtherInstances", "TestPromiseOutboxExactlyOnce", "TestPromiseCreditCostFlat"}},
		{"drop-on-retry", []string{"TestPromiseConcurrentDeliveriesLostAcks", "TestPromiseOutboxExactlyOnce"}},
		{"cancel-refused", []string{"TestPromiseContextCancelledAfterPutLanded"}},
		{"book-forgets", []string{"TestPromiseBookReopenedManyTimes"}},
		{"late-all", []string{"TestPromiseRetryAfterWriterDied", "TestPromiseRetryAcrossDayOfWriters"}},
		{"late-declined", []string{"TestPromiseRetryAfterWriterDied"}},
		{"retire-unrecorded", []string{"TestPromiseRetryAfterWriterDied"}},
	} {
		t.Run(c.variant, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^("+strings.Join(c.tests, "|")+")$", "-test.count=1", "-test.timeout=5m")
			cmd.Env = append(os.Environ(), "COUNTERKIT_BREAK="+c.variant)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("every test passed with %s:\n%s", c.variant, out)
			}
			for _, name := range c.tests {
				if !regexp.MustCompile(`(?m)^--- FAIL: ` + name + ` \(`).Match(out) {
					t.Errorf("%s passed with %s", name, c.variant)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}
