package main

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store"
)

// TestLateRetryAfterTenThousand: with the example's defaults (no window
// option set), on memory and on the embedded store the example runs on by
// default, the late retry is answered as a duplicate and every balance
// verifies.
func TestLateRetryAfterTenThousand(t *testing.T) {
	const seed = 1
	check := func(t *testing.T, st store.Siblings, flags string) {
		r, err := run(st, lateWorkload(seed))
		if err != nil {
			t.Fatalf("replay: go -C examples/ledger run .%s -seed %d -txns 10001 -actors 4 -accounts 1 -late 1: %v", flags, seed, err)
		}
		if r.lateDuplicate != 1 || r.lateApplied != 0 {
			t.Fatalf("the retry after 10,000 transactions: %d duplicate, %d applied; want 1 duplicate", r.lateDuplicate, r.lateApplied)
		}
	}
	t.Run("memory", func(t *testing.T) { check(t, memory.NewSiblings(), " -memory") })
	t.Run("embedded", func(t *testing.T) {
		db, err := embedded.Open(t.TempDir(), embedded.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		check(t, db.Siblings(), "")
	})
}
