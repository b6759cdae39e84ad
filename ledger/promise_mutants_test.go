//go:build counterkit_mutants

package ledger_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/ledger"
)

// TestPromiseChecksCatchBrokenVariants runs the promise tests, each in a
// child process of this test binary with one broken variant switched on,
// and requires each to fail against the variants listed for it. The
// promise tests of bad input and of overdraw assert one answer each and
// have no variant here.
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

// promiseBreaks are the broken variants the promise tests
// (promise_*_test.go) run against, by the name COUNTERKIT_BREAK gives.
var promiseBreaks = map[string]func() (restore func()){
	"count-window":      ledger.BreakCountWindow,
	"retire-unrecorded": ledger.BreakRetirement,
	"dating":            ledger.BreakDating,
	"long-doubt":        ledger.BreakLongDoubt,
	"long-doubt-own":    ledger.BreakLongDoubtOwn,
	"ack-early":         func() func() { return ledger.BreakGroup(ledger.GroupAckEarly) },
	"drop-on-retry":     func() func() { return ledger.BreakGroup(ledger.GroupDropOnRetry) },
	"keep-refused":      func() func() { return ledger.BreakGroup(ledger.GroupKeepRefused) },
	"late-declined":     func() func() { return ledger.BreakLate(ledger.LateDeclined) },
	"late-all":          func() func() { return ledger.BreakLate(ledger.LateAll) },
	"cancel-refused":    ledger.BreakCancel,
	"book-forgets":      ledger.BreakBookMemory,
}

// A child process started by TestPromiseChecksCatchBrokenVariants runs
// with the variant COUNTERKIT_BREAK names switched on throughout.
func init() {
	v := os.Getenv("COUNTERKIT_BREAK")
	if v == "" {
		return
	}
	brk, ok := promiseBreaks[v]
	if !ok {
		panic(fmt.Sprintf("COUNTERKIT_BREAK=%q: no such variant", v))
	}
	brk()
}
