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

type reviewWriterKey struct{}

// SPEC.md 9.4: "a call writes its row within Deadline of reading the
// record and not at all if the record is there", and a row lands within
// SafetyMargin. A writer reads x's record (none), then merges record and
// sum x (another writer's copy) before its row write is sent, 0–4 s
// later; the write is held and lands after each of the merges that follow
// (at +1 s, +10 s, +25 s), or at once. Merges then settle and remove x's
// rows: x counts once, and a retry is a duplicate.
func TestReviewLateCopyAfterRecordingMerge(t *testing.T) {
	run := func(t *testing.T, gap time.Duration, mergesBefore, landAfter int) {
		ctx := context.Background()
		c := &testClock{t: worldStart(t0)}
		st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
		hold, fired := false, false
		st.SetPolicy(func(call faulty.Call) faulty.Fault {
			if hold && call.Method == faulty.MethodApply {
				hold = false
				return faulty.Hold
			}
			return faulty.Pass
		})
		mk := func(off time.Duration) *balance.Transactions { return skewedTxns(t, st, c, off, twoPartitions) }
		a, b := mk(0), mk(3*time.Second)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		_, err := b.Apply(ctx, acct, "y", 5)
		must(err)
		_, err = b.Apply(ctx, acct, "x", 7)
		must(err)
		st.SetHook(func(hctx context.Context, call faulty.Call, after bool) error {
			if !after || fired || hctx.Value(reviewWriterKey{}) == nil || !faulty.IsRead(call.Method) || call.Key == acct+"#txn.layout" {
				return nil
			}
			fired = true
			for i := range mergesBefore {
				c.Add(gap / time.Duration(mergesBefore))
				if _, err := b.Merge(ctx, acct); err != nil {
					t.Errorf("merge %d between a's read and write: %v", i, err)
				}
			}
			hold = true
			return nil
		})
		out, err := a.Apply(context.WithValue(ctx, reviewWriterKey{}, true), acct, "x", 7)
		if !fired {
			t.Fatalf("a's record read not seen (out %v, err %v)", out, err)
		}
		if err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) {
			t.Fatalf("a's apply: %v", err)
		}
		check := func(stage string) {
			t.Helper()
			v, err := a.Balance(ctx, acct)
			if err != nil || v != 12 {
				t.Fatalf("%s: balance %d, %v; want 12", stage, v, err)
			}
		}
		land := func(i int) {
			if i == landAfter && st.Held() > 0 {
				must(st.DeliverAll())
			}
		}
		land(0)
		check("after a's write")
		for i, d := range []time.Duration{time.Second, 9 * time.Second, 15 * time.Second} {
			c.Add(d)
			_, err := a.Merge(ctx, acct)
			must(err)
			land(i + 1)
			check(fmt.Sprintf("after merge %d", i+1))
		}
		for range 4 {
			c.Add(70 * time.Second)
			_, err := b.Merge(ctx, acct)
			must(err)
			check("after settling")
		}
		for _, tx := range []*balance.Transactions{a, b} {
			out, err := tx.Apply(ctx, acct, "x", 7)
			must(err)
			if out != balance.Duplicate {
				t.Fatalf("retry: %v", out)
			}
		}
		for _, p := range a.RowPartitions(acct) {
			rows, err := st.Snapshot(ctx, p, balance.MaxRows, 0)
			must(err)
			if len(rows) > 1 {
				t.Errorf("%s holds %d rows once settled", p, len(rows))
			}
		}
		check("at the end")
	}
	for _, gap := range []time.Duration{0, time.Second, 4 * time.Second} {
		for mb := 1; mb <= 2; mb++ {
			for la := 0; la <= 3; la++ {
				t.Run(fmt.Sprintf("gap%v/merges%d/land%d", gap, mb, la), func(t *testing.T) { run(t, gap, mb, la) })
			}
		}
	}
}
