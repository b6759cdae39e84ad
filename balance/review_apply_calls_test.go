package balance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// README: a credit is "1 record read (one row), 1 row write (and at most
// one read a second of the account's layout marker)"; SPEC.md 9.4
// "Layout": the account's first Apply writes the marker in its row's
// batch, and a Transactions trusts a marker it found, or wrote, for a
// second by its clock; Recorded reads as Apply does, never writes. The
// store calls of each call are counted, on a fresh account and on one with
// a history of merged credits.
func TestReviewApplyStoreCalls(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	var calls []string
	st.SetPolicy(func(call faulty.Call) faulty.Fault {
		calls = append(calls, call.Method+" "+call.Key)
		return faulty.Pass
	})
	tx := newTxns(t, st, c)
	expect := func(what string, want int, f func() error) {
		t.Helper()
		calls = nil
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(calls) != want {
			t.Errorf("%s made %d store calls %q, want %d", what, len(calls), calls, want)
		}
	}
	apply := func(id string, want balance.Outcome) func() error {
		return func() error {
			out, err := tx.Apply(ctx, acct, crdt.TxnID(id), 1)
			if err == nil && out != want {
				return fmt.Errorf("outcome %v, want %v", out, want)
			}
			return err
		}
	}
	expect("the account's first Apply", 3, apply("a", balance.Applied))
	expect("an Apply right after", 2, apply("b", balance.Applied))
	expect("a Recorded right after", 1, func() error { _, err := tx.Recorded(ctx, acct, "a"); return err })
	c.Add(1100 * time.Millisecond)
	expect("an Apply a second later", 3, apply("c", balance.Applied))
	expect("an Apply right after that", 2, apply("d", balance.Applied))
	for i := range 2000 {
		if _, err := tx.Apply(ctx, acct, crdt.TxnID(fmt.Sprint("h", i)), 1); err != nil {
			t.Fatal(err)
		}
		if i%500 == 0 {
			c.Add(2 * time.Second)
			mustMerge(t, tx)
		}
	}
	c.Add(2 * time.Second)
	mustMerge(t, tx)
	expect("a duplicate", 2, apply("a", balance.Duplicate)) // layout check + record read
	expect("a duplicate right after", 1, apply("b", balance.Duplicate))
	expect("an Apply on a large account", 2, apply("e", balance.Applied))
}
