package balance_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store/faulty"
)

// Transactions.Merge: "A crash between any two steps leaves the balance
// and the records correct". Every store call of a merge (reads and
// writes, of records, row partitions and expiry), one at a time, fails
// with each fault kind the faulty store has (a held write is delivered
// within MaxMerge, or dropped), or is made after the merge's clock moved
// past MaxMerge (a slow merge, its write still landing within MaxMerge +
// SafetyMargin); the merge runs on an account with settled
// rows to remove and fresh rows to record. Then both writers retry every
// transaction, merges run until settled, and the balance, Recorded,
// Conflicts and the retries' outcomes are checked.

// twoPartitions makes the review tests' accounts small: two row
// partitions and two record shards, so every call of a merge is
// enumerable.
func twoPartitions(o *balance.TxnOptions) { o.Partitions, o.RecordShards = 2, 2 }

func TestReviewMergeFaultAtEveryCall(t *testing.T) {
	type variant struct {
		name    string
		fault   faulty.Fault
		deliver bool
		slow    time.Duration // the clock jumps by this before the call
	}
	variants := []variant{
		{"refuse", faulty.Refuse, false, 0},
		{"loseack", faulty.LoseAck, false, 0},
		{"lose", faulty.Lose, false, 0},
		{"hold-deliver", faulty.Hold, true, 0},
		{"hold-drop", faulty.Hold, false, 0},
		{"unclassified", faulty.Unclassified, false, 0},
		{"slow", faulty.Pass, false, 11 * time.Second},
	}
	txns := []struct {
		id  crdt.TxnID
		amt int64
	}{{"x", 7}, {"y", 5}, {"z", -3}, {"w", 11}, {"v", 2}}
	want := int64(0)
	for _, x := range txns {
		want += x.amt
	}
	run := func(t *testing.T, v variant, k int) (calls int) {
		ctx := context.Background()
		c := &testClock{t: worldStart(t0)}
		st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
		inMerge, n := false, 0
		st.SetPolicy(func(call faulty.Call) faulty.Fault {
			if !inMerge {
				return faulty.Pass
			}
			n++
			if n == k {
				c.Add(v.slow)
				if v.fault != faulty.Unclassified && v.fault != faulty.Refuse && faulty.IsRead(call.Method) {
					return faulty.Refuse
				}
				return v.fault
			}
			return faulty.Pass
		})
		mk := func(off time.Duration) *balance.Transactions { return skewedTxns(t, st, c, off, twoPartitions) }
		a, b := mk(0), mk(4*time.Second)
		apply := func(tx *balance.Transactions, i int) balance.Outcome {
			out, err := tx.Apply(ctx, acct, txns[i].id, txns[i].amt)
			if err != nil {
				t.Fatalf("apply %s: %v", txns[i].id, err)
			}
			return out
		}
		merge := func(tx *balance.Transactions) {
			if _, err := tx.Merge(ctx, acct); err != nil {
				t.Fatalf("merge: %v", err)
			}
		}
		apply(a, 0)
		apply(b, 1)
		c.Add(time.Second)
		merge(a)
		c.Add(70 * time.Second)
		apply(a, 2)
		apply(b, 3)
		merge(b) // settles the first merge
		c.Add(70 * time.Second)
		apply(b, 4)
		apply(a, 2) // a retry before any merge recorded z: rewrites its row
		c.Add(time.Second)
		mF := c.Now()
		inMerge = true
		_, err := a.Merge(ctx, acct)
		inMerge = false
		if k > 0 && n >= k && err == nil && v.fault != faulty.Hold && v.fault != faulty.LoseAck && v.fault != faulty.Pass {
			// a failed read or write must be reported (a held or
			// acknowledged-lost write may be one the merge tolerates)
			t.Errorf("call %d failed with %v, merge returned nil", k, v.fault)
		}
		if err != nil && !errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, faulty.ErrUnclassified) {
			t.Errorf("merge error wraps no store sentinel: %v", err)
		}
		if v.deliver {
			c.Add(2 * time.Second)
			if err := st.DeliverAll(); err != nil {
				t.Fatal(err)
			}
		} else {
			st.DropHeld()
		}
		check := func(stage string) {
			t.Helper()
			for _, tx := range []*balance.Transactions{a, b} {
				got, err := tx.Balance(ctx, acct)
				if err != nil || got != want {
					t.Fatalf("%s: balance %d, %v; want %d", stage, got, err, want)
				}
			}
		}
		check("after the failed merge")
		for i := range txns {
			apply(a, i)
			apply(b, i)
		}
		check("after retries")
		for range 4 {
			c.Add(70 * time.Second)
			merge(a)
			check("after a merge")
			for i := range txns {
				apply(b, i)
			}
			check("after retries")
		}
		for i, x := range txns {
			r, err := b.Recorded(ctx, acct, x.id)
			if err != nil || !slices.Equal(r, []int64{x.amt}) {
				t.Fatalf("Recorded(%s) = %v, %v", x.id, r, err)
			}
			if out := apply(a, i); out != balance.Duplicate {
				t.Fatalf("retry of %s after merges: %v", x.id, out)
			}
		}
		cf, err := a.Conflicts(ctx, acct)
		if err != nil || len(cf) != 0 {
			t.Fatalf("Conflicts = %v, %v", cf, err)
		}
		c.Add(20 * time.Hour)
		merge(b)
		for i := range txns {
			if out := apply(b, i); out != balance.Duplicate {
				t.Fatalf("retry of %s 20h after: %v", txns[i].id, out)
			}
		}
		check("20h after")
		// v (first recorded by the failed merge or a later one) within
		// RetryWindow of every merge that recorded it, after a merge at
		// that instant
		c.Set(mF.Add(balance.DefaultRetryWindow - 10*time.Second))
		merge(a)
		for _, tx := range []*balance.Transactions{a, b} {
			if out := apply(tx, 4); out != balance.Duplicate {
				t.Fatalf("retry of %s at the window's end: %v", txns[4].id, out)
			}
		}
		check("at the end")
		return n
	}
	calls := run(t, variant{"none", faulty.Pass, false, 0}, 0)
	t.Logf("a clean merge makes %d store calls", calls)
	for _, v := range variants {
		for k := 1; k <= calls+1; k++ {
			t.Run(fmt.Sprintf("%s/call%d", v.name, k), func(t *testing.T) { run(t, v, k) })
		}
	}
}

// SPEC.md 9.4: every writer of a transaction, and every retry, writes one
// row, which counts once, and a merge records a transaction only once its
// row is stored. A writer's row write is held (the writer sees an
// ambiguous error) and lands before each store call of the next merge, or
// after it; another writer's copy of the transaction was written at once,
// or not; the merge fails at each of its calls, or not. Then merges run
// until settled and both writers retry: the transaction counts once.
func TestReviewHeldCopyAroundEveryMergeCall(t *testing.T) {
	testsize.SkipSequential(t)
	const calls = 10 // more than a merge of this account makes
	run := func(t *testing.T, holder int, copyToo bool, j, k int) {
		ctx := context.Background()
		c := &testClock{t: worldStart(t0)}
		st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
		inMerge, hold, n, hn := false, false, 0, 0
		st.SetPolicy(func(call faulty.Call) faulty.Fault {
			switch {
			case hold && call.Method == faulty.MethodApply:
				hold = false
				return faulty.Hold
			case !inMerge:
				return faulty.Pass
			}
			if n++; n == k {
				return faulty.Refuse
			}
			return faulty.Pass
		})
		st.SetHook(func(ctx context.Context, call faulty.Call, after bool) error {
			if inMerge && !after {
				if hn++; hn == j {
					if err := st.DeliverAll(); err != nil {
						t.Errorf("deliver: %v", err)
					}
				}
			}
			return nil
		})
		mk := func(off time.Duration) *balance.Transactions { return skewedTxns(t, st, c, off, twoPartitions) }
		ws := []*balance.Transactions{mk(0), mk(4 * time.Second)}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		_, err := ws[0].Apply(ctx, acct, "x", 7)
		must(err)
		c.Add(time.Second)
		_, err = ws[1].Merge(ctx, acct)
		must(err)
		c.Add(70 * time.Second)
		_, err = ws[1].Apply(ctx, acct, "y", 5)
		must(err)
		_, err = ws[0].Merge(ctx, acct)
		must(err)
		c.Add(70 * time.Second)
		// the held write
		hold = true
		_, err = ws[holder].Apply(ctx, acct, "v", 2)
		if !errors.Is(err, crdt.ErrAmbiguousWrite) {
			t.Fatalf("held apply: %v", err)
		}
		if copyToo {
			_, err = ws[1-holder].Apply(ctx, acct, "v", 2)
			must(err)
		}
		c.Add(time.Second)
		inMerge = true
		_, err = ws[0].Merge(ctx, acct)
		inMerge = false
		if k > 0 && k <= n && err == nil {
			t.Errorf("merge with call %d refused returned nil", k)
		}
		if st.Held() > 0 {
			must(st.DeliverAll())
		}
		const want = 14
		check := func(stage string) {
			t.Helper()
			for _, tx := range ws {
				got, err := tx.Balance(ctx, acct)
				if err != nil || got != want {
					t.Fatalf("%s: balance %d, %v; want %d", stage, got, err, want)
				}
			}
		}
		check("after the merge")
		c.Add(10 * time.Second)
		_, err = ws[1].Merge(ctx, acct)
		must(err)
		check("after a second merge")
		for range 3 {
			for _, tx := range ws {
				_, err := tx.Apply(ctx, acct, "v", 2)
				must(err)
			}
			c.Add(70 * time.Second)
			_, err = ws[0].Merge(ctx, acct)
			must(err)
			check("after retries and a merge")
		}
		for _, tx := range ws {
			out, err := tx.Apply(ctx, acct, "v", 2)
			must(err)
			if out != balance.Duplicate {
				t.Fatalf("retry after merges: %v", out)
			}
		}
		r, err := ws[1].Recorded(ctx, acct, "v")
		if err != nil || !slices.Equal(r, []int64{2}) {
			t.Fatalf("Recorded = %v, %v", r, err)
		}
		c.Add(23 * time.Hour)
		_, err = ws[1].Merge(ctx, acct)
		must(err)
		check("at the end")
	}
	for holder := range 2 {
		for _, copyToo := range []bool{false, true} {
			for j := 1; j <= calls; j++ {
				for k := 0; k <= calls; k++ {
					t.Run(fmt.Sprintf("holder%d/copy=%v/land%d/fail%d", holder, copyToo, j, k), func(t *testing.T) {
						run(t, holder, copyToo, j, k)
					})
				}
			}
		}
	}
}
