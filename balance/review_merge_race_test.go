package balance_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

type reviewMergerKey struct{}

// SPEC.md 9.2, 9.4: merges may race. Merger A stops before each of its
// store calls in turn while merger B (another process, its clock
// FutureSkew ahead or behind) runs a whole merge, then A goes on; three
// writers (clocks −4 s, 0, +4 s) wrote copies of a transaction at once,
// and one of them retries between the merges. Then merges run until
// settled: every transaction counts once, is recorded with its amount,
// and a retry is a duplicate.
func TestReviewMergeRacesAtEveryCall(t *testing.T) {
	const calls = 13 // one more than merge A makes
	type txn struct {
		id  crdt.TxnID
		amt int64
	}
	txns := []txn{{"x", 7}, {"y", 5}, {"v", 2}, {"u", -1}}
	const want = 13
	run := func(t *testing.T, stopAt int, bOff time.Duration) {
		ctx := context.Background()
		c := &testClock{t: worldStart(t0)}
		st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
		stopped, resume := make(chan struct{}), make(chan struct{})
		n := 0
		st.SetHook(func(ctx context.Context, call faulty.Call, after bool) error {
			if after || ctx.Value(reviewMergerKey{}) == nil {
				return nil
			}
			if n++; n == stopAt {
				close(stopped)
				<-resume
			}
			return nil
		})
		mk := func(off time.Duration) *balance.Transactions { return skewedTxns(t, st, c, off, twoPartitions) }
		ws := []*balance.Transactions{mk(-4 * time.Second), mk(0), mk(4 * time.Second)}
		mergerB := mk(bOff)
		apply := func(tx *balance.Transactions, x txn) balance.Outcome {
			t.Helper()
			out, err := tx.Apply(ctx, acct, x.id, x.amt)
			if err != nil {
				t.Fatalf("apply %s: %v", x.id, err)
			}
			return out
		}
		check := func(stage string) {
			t.Helper()
			got, err := ws[1].Balance(ctx, acct)
			if err != nil || got != want {
				t.Fatalf("%s: balance %d, %v; want %d", stage, got, err, want)
			}
		}
		apply(ws[0], txns[0])
		apply(ws[2], txns[1])
		c.Add(time.Second)
		if _, err := ws[1].Merge(ctx, acct); err != nil {
			t.Fatal(err)
		}
		c.Add(70 * time.Second)
		for _, w := range ws {
			apply(w, txns[2])
		}
		apply(ws[1], txns[3])
		c.Add(time.Second)
		done := make(chan error, 1)
		go func() {
			_, err := ws[1].Merge(context.WithValue(ctx, reviewMergerKey{}, true), acct)
			done <- err
		}()
		var errA error
		select {
		case <-stopped:
			c.Add(time.Second)
			apply(ws[0], txns[2]) // a retry between the merges
			if _, err := mergerB.Merge(ctx, acct); err != nil {
				t.Errorf("merge B: %v", err)
			}
			apply(ws[2], txns[3])
			close(resume)
			errA = <-done
		case errA = <-done:
			t.Logf("merge A made %d calls", n)
		}
		if errA != nil {
			t.Logf("merge A: %v", errA)
		}
		check("after the race")
		for range 4 {
			c.Add(70 * time.Second)
			if _, err := mergerB.Merge(ctx, acct); err != nil {
				t.Fatal(err)
			}
			check("after a merge")
			for _, w := range ws {
				for _, x := range txns {
					apply(w, x)
				}
			}
			check("after retries")
		}
		for _, x := range txns {
			r, err := ws[0].Recorded(ctx, acct, x.id)
			if err != nil || !slices.Equal(r, []int64{x.amt}) {
				t.Fatalf("Recorded(%s) = %v, %v", x.id, r, err)
			}
			if out := apply(ws[2], x); out != balance.Duplicate {
				t.Fatalf("retry of %s: %v", x.id, out)
			}
		}
		cf, err := ws[1].Conflicts(ctx, acct)
		if err != nil || len(cf) != 0 {
			t.Fatalf("Conflicts = %v, %v", cf, err)
		}
	}
	for _, bOff := range []time.Duration{-5 * time.Second, 0, 5 * time.Second} {
		for stop := 1; stop <= calls; stop++ {
			t.Run(fmt.Sprintf("b%v/stop%d", bOff, stop), func(t *testing.T) { run(t, stop, bOff) })
		}
	}
}
