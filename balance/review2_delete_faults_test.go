package balance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// Transactions.Delete: "If it fails, call it again". Every store call of a
// Delete, one at a time, is refused, loses its write, or applies it and
// answers ambiguous; Delete is then called again, the key is reused after
// SafetyMargin, and the new account's balances, outcomes and records must
// be those of a Delete that never failed.
func TestReview2DeleteFaultAtEveryCall(t *testing.T) {
	faults := []faulty.Fault{faulty.Refuse, faulty.Lose, faulty.LoseAck}
	run := func(t *testing.T, fault faulty.Fault, k int) (string, int) {
		ctx := context.Background()
		c := &testClock{t: worldStart(t0)}
		st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
		inDelete, n, refusedRead := false, 0, false
		st.SetPolicy(func(call faulty.Call) faulty.Fault {
			if !inDelete {
				return faulty.Pass
			}
			n++
			if n == k {
				refusedRead = faulty.IsRead(call.Method)
				if faulty.IsRead(call.Method) {
					return faulty.Refuse
				}
				return fault
			}
			return faulty.Pass
		})
		tx, err := balance.NewTransactions(st, balance.TxnOptions{Partitions: 2, RecordShards: 2,
			Options: balance.Options{Clock: c.Now}})
		if err != nil {
			t.Fatal(err)
		}
		trace := ""
		apply := func(id crdt.TxnID, amt int64) {
			out, err := tx.Apply(ctx, acct, id, amt)
			if err != nil {
				t.Fatalf("apply %s: %v", id, err)
			}
			trace += fmt.Sprintf("%s:%v ", id, out)
		}
		merge := func() {
			if _, err := tx.Merge(ctx, acct); err != nil {
				t.Fatalf("merge: %v", err)
			}
		}
		bal := func() {
			b, err := tx.Balance(ctx, acct)
			if err != nil {
				t.Fatalf("balance: %v", err)
			}
			trace += fmt.Sprintf("bal=%d ", b)
		}
		// an old account: recorded, settled and unrecorded transactions
		apply("x", 7)
		apply("y", 5)
		c.Add(time.Second)
		merge()
		c.Add(70 * time.Second)
		apply("z", -3)
		merge()
		c.Add(70 * time.Second)
		apply("w", 11)
		merge()
		c.Add(70 * time.Second)
		apply("v", 2) // never merged
		c.Add(time.Minute)
		inDelete = true
		err = tx.Delete(ctx, acct)
		inDelete = false
		calls := n
		if k > 0 && k <= calls {
			// a refused read may hide windows to delete: only damage
			// is skipped ("Delete works on a damaged account")
			if err == nil && (fault == faulty.Refuse || refusedRead) {
				t.Errorf("call %d refused, Delete returned nil", k)
			}
		}
		if err != nil && !errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, crdt.ErrAmbiguousWrite) {
			t.Errorf("Delete error wraps no documented sentinel: %v", err)
		}
		if err != nil {
			c.Add(time.Second)
			if err := tx.Delete(ctx, acct); err != nil {
				t.Fatalf("Delete called again: %v", err)
			}
		}
		c.Add(time.Minute)
		bal()
		for _, id := range []crdt.TxnID{"x", "y", "z", "w", "v"} {
			r, err := tx.Recorded(ctx, acct, id)
			if err != nil {
				t.Fatalf("recorded %s: %v", id, err)
			}
			trace += fmt.Sprintf("rec(%s)=%v ", id, r)
		}
		// the new account: a new transaction, and old ids reused
		apply("n", 4)
		apply("x", 7)
		apply("z", -3)
		bal()
		c.Add(time.Second)
		merge()
		bal()
		apply("x", 7)
		apply("n", 4)
		apply("v", 2)
		bal()
		for range 3 {
			c.Add(70 * time.Second)
			merge()
		}
		apply("x", 7)
		apply("v", 2)
		bal()
		return trace, calls
	}
	ref, calls := run(t, faulty.Pass, 0)
	t.Logf("reference (%d Delete calls): %s", calls, ref)
	if calls == 0 {
		t.Fatal("Delete made no store call")
	}
	for _, f := range faults {
		for k := 1; k <= calls; k++ {
			t.Run(fmt.Sprintf("%v/call%d", f, k), func(t *testing.T) {
				got, _ := run(t, f, k)
				if got != ref {
					t.Errorf("after a Delete failing at call %d (%v), then called again:\n got %s\nwant %s", k, f, got, ref)
				}
			})
		}
	}
}
