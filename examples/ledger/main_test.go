package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
)

// TestRunVerifiesBalances runs the example's workload, with its injected
// faults and duplicate deliveries, for several seeds on the in-memory store;
// run returns an error when any balance differs from the sum of its distinct
// transactions.
func TestRunVerifiesBalances(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			if _, err := run(memory.NewSiblings(), seed, 300, 5, 0.3); err != nil {
				t.Fatalf("replay: go -C examples/ledger run . -memory -seed %d -txns 300: %v", seed, err)
			}
		})
	}
}

// TestSecondRunContinues runs the example twice on one embedded data
// directory, closing and reopening it in between as two processes would:
// the second run starts from the first run's balances (run checks every
// balance against where it started plus its own transactions) and adds to
// them.
func TestSecondRunContinues(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var last map[string]int64
	for i, seed := range []int64{1, 2} {
		db, err := embedded.Open(dir, embedded.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for acct, want := range last {
			l, err := ledger.New(db.Siblings(), "account/"+acct, ledger.Options{Actor: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := l.Value(ctx); err != nil || got != want {
				t.Fatalf("after reopening, %s holds %d (%v), the last run left %d", acct, got, err, want)
			}
		}
		if last, err = run(db.Siblings(), seed, 200, 4, 0.3); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(last) != 3 {
		t.Fatalf("balances of %d accounts, want 3", len(last))
	}
}
