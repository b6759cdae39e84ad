//go:build counterkit_mutants

package bounded_test

import (
	"strings"
	"testing"

	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/schedtest"
)

// TestAccountInterleavingCatchesBrokenRetry: with an Account that
// does not read records (a broken retry), the enumeration of a retry on
// the other Account after the transaction left its holder's window (W=1)
// finds the acknowledged transaction applied again; with the Account as
// it is, it finds nothing.
func TestAccountInterleavingCatchesBrokenRetry(t *testing.T) {
	sc := ivScenario{name: "retry-after-window", actors: []string{"a", "b"}, window: 1, shared: []crdt.TxnID{"x"},
		script: []func(*ivActor){
			func(h *ivActor) { h.credit("x", 1); h.credit("y", 4) },
			func(h *ivActor) { h.waitDone(0); h.credit("x", 1) },
		}}
	run := func() (n int, caught string) {
		schedtest.Explore(t, 0, func(s *schedtest.Sched) string {
			n++
			vs, log := ivOnce(sc, ivConfig{maxFaults: 1}, s)
			for _, v := range vs {
				if caught == "" && strings.HasPrefix(v, "HOLE") {
					caught = v + "\n" + strings.Join(log, "\n")
				}
			}
			return ""
		})
		return n, caught
	}
	if n, caught := run(); caught != "" {
		t.Fatalf("the Account as it is: %d schedules, %s", n, caught)
	}
	bounded.SetBrokenNoRecordLookup(true)
	defer bounded.SetBrokenNoRecordLookup(false)
	n, caught := run()
	if caught == "" {
		t.Fatalf("broken retry not caught in %d schedules", n)
	}
	t.Logf("caught in %d schedules, as it must be:\n%s", n, caught)
}
