package main

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
)

// TestLateDeliveryThatLandsItIsNoRetry runs a small workload (3
// transactions, 5 actors, each delivered again late) 300 times. A late
// delivery goes to an actor after every other delivery was handed out,
// but the actor of the first may still be retrying it through the
// injected faults, so the late call can be the one that lands the
// transaction, answered Applied while it counts once. Such a call is no
// retry of an acknowledged one: the run must not fail for it (it failed
// in a few of these runs when every late Applied counted as "applied
// again"). TestWithoutRecordsLateRetryCountsTwice shows the check still
// fails a run whose late retries count again.
func TestLateDeliveryThatLandsItIsNoRetry(t *testing.T) {
	for i := range 300 {
		if _, err := run(memory.NewSiblings(), workload{seed: 1, txns: 3, actors: 5, dup: 0.3, accounts: 3, late: 10}); err != nil {
			t.Fatalf("run %d of 300: %v", i+1, err)
		}
	}
}
