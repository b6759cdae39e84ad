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
// faults, duplicate deliveries and 10 late retries, for several seeds on
// the in-memory store; run returns an error when any balance differs from
// the sum of its distinct transactions or a late retry was applied again.
func TestRunVerifiesBalances(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r, err := run(memory.NewSiblings(), workload{seed: seed, txns: 300, actors: 5, dup: 0.3, accounts: 3, late: 10})
			if err != nil {
				t.Fatalf("replay: go -C examples/ledger run . -memory -seed %d -txns 300 -late 10: %v", seed, err)
			}
			if r.lateDuplicate != 10 {
				t.Fatalf("late retries: %d answered duplicate, want 10", r.lateDuplicate)
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
		r, err := run(db.Siblings(), workload{seed: seed, txns: 200, actors: 4, dup: 0.3, accounts: 3})
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		last = r.balances
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(last) != 3 {
		t.Fatalf("balances of %d accounts, want 3", len(last))
	}
}

// TestRunManyAccounts runs the workload over 60 accounts with Books that
// keep 8 ledgers each, so every actor drops and re-opens ledgers all the
// time: the balances still verify, and an account holds few actor entries
// (a re-opened key continues its incarnation unless its first read is
// stale, and each stale one adds an entry).
func TestRunManyAccounts(t *testing.T) {
	ctx := context.Background()
	for seed := int64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			st := memory.NewSiblings()
			w := workload{seed: seed, txns: 400, actors: 4, dup: 0.3, accounts: 60, open: 8}
			r, err := run(st, w)
			if err != nil {
				t.Fatalf("replay: go -C examples/ledger run . -memory -seed %d -txns 400 -actors 4 -accounts 60 -open 8: %v", seed, err)
			}
			if r.evicted == 0 {
				t.Fatalf("%d ledgers opened, none dropped: the Books never re-opened a key", r.opened)
			}
			most := 0
			for _, acct := range accountNames(w.accounts) {
				l, err := ledger.New(st, "account/"+acct, ledger.Options{Actor: "test"})
				if err != nil {
					t.Fatal(err)
				}
				c, err := l.Find(ctx)
				if err != nil {
					t.Fatal(err)
				}
				most = max(most, c.Stats().Actors)
			}
			t.Logf("%d ledgers opened, %d dropped; at most %d actor entries in an account (%d actors)", r.opened, r.evicted, most, w.actors)
		})
	}
}
