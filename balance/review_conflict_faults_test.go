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

// README: "an id reused with another amount before a merge recorded it is
// applied too, counted once with one amount, shown by Conflicts and each
// merge's MergeReport until merges have settled and removed its rows". Two
// writers apply x with 7 and 8 at once; the first merge fails at each of
// its store calls in turn (refused, or its acknowledgement lost). The
// balance counts x once, with one amount, the same at every read; Recorded
// names that amount; a retry with it is a duplicate, with the other
// crdt.ErrConflictingTransaction; Conflicts lists x until settled merges
// removed its rows, then not.
func TestReviewReusedIDMergeFaultAtEveryCall(t *testing.T) {
	const calls = 9
	run := func(t *testing.T, f faulty.Fault, k int) {
		ctx := context.Background()
		c := &testClock{t: worldStart(t0)}
		st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
		inMerge, n := false, 0
		st.SetPolicy(func(call faulty.Call) faulty.Fault {
			if !inMerge {
				return faulty.Pass
			}
			if n++; n == k {
				if faulty.IsRead(call.Method) {
					return faulty.Refuse
				}
				return f
			}
			return faulty.Pass
		})
		mk := func(off time.Duration) *balance.Transactions { return skewedTxns(t, st, c, off, twoPartitions) }
		a, b := mk(0), mk(4*time.Second)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		_, err := a.Apply(ctx, acct, "y", 5)
		must(err)
		_, err = a.Apply(ctx, acct, "x", 7)
		must(err)
		_, err = b.Apply(ctx, acct, "x", 8)
		must(err)
		first, err := a.Balance(ctx, acct)
		must(err)
		if first != 12 && first != 13 {
			t.Fatalf("balance %d: x not counted once", first)
		}
		counted := first - 5
		check := func(stage string) {
			t.Helper()
			for _, tx := range []*balance.Transactions{a, b} {
				v, err := tx.Balance(ctx, acct)
				if err != nil || v != first {
					t.Fatalf("%s: balance %d, %v; want %d", stage, v, err, first)
				}
			}
		}
		cf, err := a.Conflicts(ctx, acct)
		if err != nil || len(cf) != 1 || cf[0].UpdateID != balance.TxnRowID("x") {
			t.Fatalf("Conflicts before a merge = %v, %v", cf, err)
		}
		c.Add(time.Second)
		inMerge = true
		_, _ = a.Merge(ctx, acct)
		inMerge = false
		if k == 0 && n >= calls {
			t.Fatalf("the merge made %d store calls: raise calls", n)
		}
		check("after the failed merge")
		for i := range 5 {
			c.Add(70 * time.Second)
			reps, err := b.Merge(ctx, acct)
			must(err)
			if i == 0 {
				seen := false
				for _, r := range reps {
					for _, x := range r.Conflicts {
						seen = seen || x.UpdateID == balance.TxnRowID("x")
					}
				}
				cf, err := a.Conflicts(ctx, acct)
				must(err)
				if len(cf) > 0 && !seen {
					t.Errorf("Conflicts lists x, the merge's report did not")
				}
			}
			check("after a merge")
		}
		r, err := a.Recorded(ctx, acct, "x")
		if err != nil || len(r) != 1 || r[0] != counted {
			t.Fatalf("Recorded(x) = %v, %v; counted %d", r, err, counted)
		}
		other := int64(15) - counted
		for _, tx := range []*balance.Transactions{a, b} {
			out, err := tx.Apply(ctx, acct, "x", counted)
			if err != nil || out != balance.Duplicate {
				t.Fatalf("retry with %d: %v, %v", counted, out, err)
			}
			if _, err := tx.Apply(ctx, acct, "x", other); !errors.Is(err, crdt.ErrConflictingTransaction) {
				t.Fatalf("retry with %d: %v", other, err)
			}
		}
		c.Add(15 * time.Minute)
		for range 3 {
			c.Add(70 * time.Second)
			_, err := b.Merge(ctx, acct)
			must(err)
		}
		cf, err = a.Conflicts(ctx, acct)
		if err != nil || len(cf) != 0 {
			t.Errorf("Conflicts once settled and removed = %v, %v", cf, err)
		}
		check("at the end")
	}
	for _, f := range []faulty.Fault{faulty.Refuse, faulty.LoseAck, faulty.Lose} {
		for k := 0; k <= calls; k++ {
			t.Run(fmt.Sprintf("%v/call%d", f, k), func(t *testing.T) { run(t, f, k) })
		}
	}
}
