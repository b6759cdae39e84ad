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

// TxnOptions.TxnTime: a transaction not recorded whose time is more than
// RetryWindow old is refused (crdt.ErrOutsideWindow) "rather than counted
// again". The first merge of the account fails at each of its store calls
// with each fault kind; merges then run on, and every transaction is
// retried across its window's end: no retry may change the balance, and
// each is answered applied, duplicate or ErrOutsideWindow.
func TestReview2TxnTimeMergeFaultAtEveryCall(t *testing.T) {
	const window = time.Hour
	faults := []faulty.Fault{faulty.Refuse, faulty.Lose, faulty.LoseAck, faulty.Hold, faulty.Unclassified}
	run := func(t *testing.T, fault faulty.Fault, deliver bool, k int) int {
		ctx := context.Background()
		t0 := worldStart(t0)
		c := &testClock{t: t0}
		st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
		inMerge, n := false, 0
		st.SetPolicy(func(call faulty.Call) faulty.Fault {
			if !inMerge {
				return faulty.Pass
			}
			n++
			if n == k {
				if faulty.IsRead(call.Method) && fault != faulty.Unclassified {
					return faulty.Refuse
				}
				return fault
			}
			return faulty.Pass
		})
		times := map[crdt.TxnID]time.Time{"x": t0, "y": t0.Add(-10 * time.Minute), "z": t0.Add(time.Second)}
		amts := map[crdt.TxnID]int64{"x": 7, "y": 5, "z": -3}
		tx, err := balance.NewTransactions(st, balance.TxnOptions{Partitions: 2, RecordShards: 2, RetryWindow: window,
			TxnTime: func(id crdt.TxnID) (time.Time, bool) { at, ok := times[id]; return at, ok },
			Options: balance.Options{Clock: c.Now}})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		for _, id := range []crdt.TxnID{"x", "y", "z"} {
			if _, err := tx.Apply(ctx, acct, id, amts[id]); err != nil {
				t.Fatalf("apply %s: %v", id, err)
			}
			want += amts[id]
		}
		c.Add(2 * time.Second)
		inMerge = true
		_, err = tx.Merge(ctx, acct)
		inMerge = false
		calls := n
		if err != nil && !errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, faulty.ErrUnclassified) {
			t.Errorf("merge error wraps no store sentinel: %v", err)
		}
		if deliver {
			c.Add(time.Second)
			if err := st.DeliverAll(); err != nil {
				t.Fatal(err)
			}
		} else {
			st.DropHeld()
		}
		check := func(stage string) {
			t.Helper()
			got, err := tx.Balance(ctx, acct)
			if err != nil || got != want {
				t.Fatalf("%s: balance %d, %v; want %d", stage, got, err, want)
			}
		}
		retry := func(stage string) {
			t.Helper()
			for _, id := range []crdt.TxnID{"x", "y", "z"} {
				_, err := tx.Apply(ctx, acct, id, amts[id])
				if err != nil && !errors.Is(err, crdt.ErrOutsideWindow) {
					t.Fatalf("%s: retry %s: %v", stage, id, err)
				}
			}
			check(stage)
		}
		merge := func() {
			t.Helper()
			if _, err := tx.Merge(ctx, acct); err != nil {
				t.Fatalf("merge: %v", err)
			}
		}
		check("after the failed merge")
		retry("retries after the failed merge")
		for i := range 4 {
			c.Add(70 * time.Second)
			merge()
			retry(fmt.Sprintf("retries after merge %d", i))
		}
		for _, at := range []time.Duration{window - 15*time.Minute, window - 2*time.Second, window + 2*time.Second, window + 15*time.Minute, 2*window + time.Minute, 3 * window} {
			c.Set(t0.Add(at))
			merge()
			retry(fmt.Sprintf("retries at t0+%v", at))
			c.Add(70 * time.Second)
			merge()
			retry(fmt.Sprintf("retries at t0+%v+70s", at))
		}
		return calls
	}
	calls := run(t, faulty.Pass, false, 0)
	if calls == 0 {
		t.Fatal("the merge made no store call")
	}
	t.Logf("the merge makes %d store calls", calls)
	for _, f := range faults {
		for _, deliver := range []bool{false, true} {
			if deliver && f != faulty.Hold {
				continue
			}
			for k := 1; k <= calls; k++ {
				t.Run(fmt.Sprintf("%v/deliver=%v/call%d", f, deliver, k), func(t *testing.T) { run(t, f, deliver, k) })
			}
		}
	}
}
