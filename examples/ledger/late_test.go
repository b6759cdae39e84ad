package main

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
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

// TestLateRetryAfterStaleRecordRead: the late retry's read of its
// transaction's record is answered by a lagging replica (faulty.Stale on
// every read of a record key: the state before the record was written).
// The retry must still be answered as a duplicate and every balance
// verify: stale reads are what the ledger tolerates for its counter
// (package documentation, read-your-writes).
func TestLateRetryAfterStaleRecordRead(t *testing.T) {
	lagging := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Policy: func(c faulty.Call) faulty.Fault {
			if c.Method == faulty.MethodFetch && ledger.IsRecordKey(c.Key) {
				return faulty.Stale
			}
			return faulty.Pass
		},
		RecordWrites: true,
	})
	w := workload{seed: 1, txns: 101, actors: 1, accounts: 1, late: 1}
	r, err := run(lagging, w)
	if err != nil {
		t.Fatalf("run %+v with stale reads of the records: %v", w, err)
	}
	if r.lateDuplicate != 1 {
		t.Fatalf("the late retry: %d duplicate, %d applied; want 1 duplicate", r.lateDuplicate, r.lateApplied)
	}
}
