package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitStaleReadHidesRetirementOfAMetCopy shows a limit SPEC.md 6.11
// states, traced from TestAdvWatchRandom (seed 5454,
// COUNTERKIT_CASES=1500, H=F=1/case427, x007 counted twice, +7). a's call of x is slow; b lands and
// records x first; a's put lands, the copies meet (a answers duplicate),
// and a's copy is the owner (a~ < b~). a folds x (deferred: b holds it).
// b stays idle, so it never gives its copy up (6.11 step 6). An hour
// later r's pass records x naming a and retires b at the stored version
// (nothing of b ahead or in doubt): b's copy leaves without counting (a's
// folded copy owns x, 6.10). a writes again and, with b retired, forgets
// x: a's total counts it. b's next account read is stale: it shows
// neither the retirement nor a's copy (a state b's lane read before a's
// copy landed). b merges its last write (its live entry at the retired
// version) and puts the next version with x still in its history: the
// newer live entry wins over the retired one (6.5), no one else holds x,
// so b's copy is the owner and counts x a second time. Nothing reads x's
// records again (b recorded x itself; a's watch ended when a forgot x),
// so the double count stays through settling and retries.
//
// Controls: with a fresh read (stale by 0) b continues from its retired
// entry; with a stale read that shows a's copy (b read the account after
// the copies met, so the stale read answers that state) b gives its copy
// up (records x naming a, takes it out): x counts once in both. The
// "own write" case shows that the stale read need not be behind b's own
// landed write (b read its write back before a's copy landed): a rule
// comparing a read with the ledger's last landed write would not close
// the hole.
//
// This is SPEC.md 6.11 Limits, "Retirement of a writer whose write is in
// doubt, or that reads stale" (its third case: "before a stale read of
// that ledger that does not show the retirement"), here with b's entry at
// the stored version, unlike TestLimitStaleReadHidesRetirement, where c's
// entry is ahead of the store.
func TestLimitStaleReadHidesRetirementOfAMetCopy(t *testing.T) {
	const (
		readNone = iota // b reads nothing between its write of x and y
		readOwn         // b reads (Value) its own write of x before a's copy lands
		readMet         // b reads (Value) after the copies met
	)
	for _, tc := range []struct {
		age, read int
		twice     bool
	}{{0, readNone, false}, {1, readNone, true}, {3, readNone, true}, {1, readOwn, true}, {1, readMet, false}} {
		age := tc.age
		t.Run(fmt.Sprintf("stale by %d/b read %s", age, [...]string{"nothing", "its own write", "the met copies"}[tc.read]), func(t *testing.T) {
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, a := limitLedger(t, mem, clock, "a", -1)
			lb, b := limitLedger(t, mem, clock, "b", -1)
			_, r := limitLedger(t, mem, clock, "r", time.Hour)
			run := &limitRun{t: t}
			run.upd(a, "open", 1000, tpncounter.Applied)

			g, done := slowUpdate(la, a, "x", 7)
			run.upd(b, "x", 7, tpncounter.Applied) // b lands and records x first
			if tc.read == readOwn {
				_, err := b.Value(context.Background())
				require.NoError(t, err)
			}
			ans := landSlow(t, g, done)
			if tc.read == readMet {
				_, err := b.Value(context.Background())
				require.NoError(t, err)
			}
			require.Equal(t, tpncounter.Duplicate, ans.r.Outcome, "a's copy met b's")
			st := stored(t, mem)
			owner, ok := st.Owner("x")
			require.True(t, ok)
			require.Equal(t, a.Writer(), owner.Actor, "a's copy is the owner")

			run.upd(r, "r1", 1, tpncounter.Applied) // r's first pass sees b
			run.upd(a, "a1", 1, tpncounter.Applied)
			run.upd(a, "a2", 1, tpncounter.Applied) // a folds x; b still holds it
			clock.Add(61 * time.Minute)
			run.upd(a, "a3", 1, tpncounter.Applied)
			run.upd(r, "r2", 1, tpncounter.Applied) // r retires b (idle an hour)
			_, bLive := maps.Collect(stored(t, mem).LiveActors())[b.Writer()]
			require.False(t, bLive, "r retired b")
			run.upd(a, "a4", 1, tpncounter.Applied) // a forgets x: b no longer holds it
			require.Equal(t, tpncounter.Unknown, stored(t, mem).Status("x"), "x left every entry, counted in a's total")
			require.Equal(t, run.want, stored(t, mem).Value(), "x counted once after the retirement")

			bw := b.Writer()
			lb.plan.set(nil, []faulty.Fault{faulty.StaleBy(age)}, nil)
			run.upd(b, "y", 1, tpncounter.Applied)
			st = stored(t, mem)
			_, bLive = maps.Collect(st.LiveActors())[bw]
			t.Logf("after y: writer %s -> %s; retired incarnation live again: %v; x %v; value %d want %d",
				bw, b.Writer(), bLive, st.Status("x"), st.Value(), run.want)

			run.settle(a, b, r)
			if !tc.twice {
				require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
				return
			}
			require.Equal(t, run.want+7, stored(t, mem).Value(), "the stated limit: x counts twice")
		})
	}
}
