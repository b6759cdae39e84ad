package main

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
)

// TestLateRetryAfterTenThousand: with the example's defaults (no window
// option set), the late retry is answered as a duplicate and every balance
// verifies.
func TestLateRetryAfterTenThousand(t *testing.T) {
	const seed = 1
	r, err := run(memory.NewSiblings(), lateWorkload(seed))
	if err != nil {
		t.Fatalf("replay: go -C examples/ledger run . -memory -seed %d -txns 10001 -actors 4 -accounts 1 -late 1: %v", seed, err)
	}
	if r.lateDuplicate != 1 || r.lateApplied != 0 {
		t.Fatalf("the retry after 10,000 transactions: %d duplicate, %d applied; want 1 duplicate", r.lateDuplicate, r.lateApplied)
	}
}
