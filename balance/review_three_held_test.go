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

// SPEC.md 9.4: copies of a transaction written at once by any writers are
// one row. Three writers (clocks −4 s, 0, +4 s) write v at once, each
// write held; each lands before the first of three merges (+1 s, +10 s,
// +25 s), after one of them, or never: every one of the 125 combinations.
// v counts once as soon as a copy landed, 0 before, and after the writers
// retry and merges settle, once.
func TestReviewThreeHeldCopies(t *testing.T) {
	const never = 4
	run := func(t *testing.T, land [3]int) {
		ctx := context.Background()
		c := &testClock{t: worldStart(t0)}
		st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
		hold := false
		st.SetPolicy(func(call faulty.Call) faulty.Fault {
			if hold && call.Method == faulty.MethodApply {
				return faulty.Hold
			}
			return faulty.Pass
		})
		var ws []*balance.Transactions
		for _, off := range []time.Duration{-4 * time.Second, 0, 4 * time.Second} {
			ws = append(ws, skewedTxns(t, st, c, off, twoPartitions))
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		_, err := ws[1].Apply(ctx, acct, "y", 5)
		must(err)
		hold = true
		for _, w := range ws {
			if _, err := w.Apply(ctx, acct, "v", 2); !errors.Is(err, crdt.ErrAmbiguousWrite) {
				t.Fatalf("held apply: %v", err)
			}
		}
		hold = false
		calls := st.HeldCalls()
		if len(calls) != 3 {
			t.Fatalf("%d writes held", len(calls))
		}
		landed := false
		deliver := func(point int) {
			// the writers' held writes, by call number (sent in order)
			for w := range 3 {
				if land[w] != point {
					continue
				}
				for i, h := range st.HeldCalls() {
					if h.N == calls[w].N {
						must(st.Deliver(i))
						landed = true
					}
				}
			}
		}
		check := func(stage string) {
			t.Helper()
			want := int64(5)
			if landed {
				want = 7
			}
			v, err := ws[0].Balance(ctx, acct)
			if err != nil || v != want {
				t.Fatalf("%s: balance %d, %v; want %d", stage, v, err, want)
			}
		}
		deliver(0)
		check("before the merges")
		for i, d := range []time.Duration{time.Second, 9 * time.Second, 15 * time.Second} {
			c.Add(d)
			_, err := ws[i].Merge(ctx, acct)
			must(err)
			check(fmt.Sprintf("after merge %d", i+1))
			deliver(i + 1)
			check(fmt.Sprintf("after merge %d and its copies", i+1))
		}
		st.DropHeld()
		for range 3 {
			for _, w := range ws {
				_, err := w.Apply(ctx, acct, "v", 2)
				must(err)
			}
			landed = true
			c.Add(70 * time.Second)
			_, err := ws[2].Merge(ctx, acct)
			must(err)
			check("after retries and a merge")
		}
		for _, w := range ws {
			out, err := w.Apply(ctx, acct, "v", 2)
			if err != nil || out != balance.Duplicate {
				t.Fatalf("final retry: %v, %v", out, err)
			}
		}
	}
	for a := 0; a <= never; a++ {
		for b := 0; b <= never; b++ {
			for c := 0; c <= never; c++ {
				land := [3]int{a, b, c}
				t.Run(fmt.Sprint(land), func(t *testing.T) { run(t, land) })
			}
		}
	}
}
