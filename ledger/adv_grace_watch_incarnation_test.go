package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitWatchAcrossAnIncarnation (found by a review):
// TestWatchJudgedAtItsTime with a gap of 5 days 1 hour: a's read drops its
// state and takes a new incarnation, and the watch, of the earlier
// incarnation's copy, ends; b's held write lands and forgets x, and x
// counts twice: the limit SPEC.md 6.10 states. At 25 hours, x counts once.
func TestLimitWatchAcrossAnIncarnation(t *testing.T) {
	for _, gap := range []time.Duration{25 * time.Hour, 5*24*time.Hour + time.Hour} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la := newLane(mem)
			oa := limitOptions(clock, "a", -1)
			oa.MaxGroup = 2
			a, err := ledger.New(la, advKey, oa)
			require.NoError(t, err)
			lb, b := limitLedger(t, mem, clock, "b", -1)
			run := &limitRun{t: t}
			run.upd(b, "open", 1000, tpncounter.Applied)
			run.upd(a, "a0", 1, tpncounter.Applied)
			heldGroup(t, la, a, "a0", 1, []crdt.TxnID{"x", "w"}, []int64{5, 9})
			run.upd(b, "x", 5, tpncounter.Applied)
			run.upd(b, "y0", 1, tpncounter.Applied)
			run.upd(b, "y1", 1, tpncounter.Applied)
			lb.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
			_, err = b.Update(ctx, "y2", 1)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			lb.plan.set(nil, nil, nil)
			require.True(t, holdsAny(stored(t, mem), "b", "x"), "the store still shows b holding x")

			require.NoError(t, la.Deliver(0))
			la.DropHeld()
			run.want += 9 // w
			_, err = a.Find(ctx)
			require.NoError(t, err)
			unwritten, watching := ledger.Holding(a)
			t.Logf("after a's Find: unwritten %v watching %v", unwritten, watching)
			_, err = a.Find(ctx)
			require.NoError(t, err)
			unwritten, watching = ledger.Holding(a)
			t.Logf("after a's second Find: unwritten %v watching %v", unwritten, watching)

			w0 := a.Writer()
			clock.Add(gap)
			require.NoError(t, lb.Deliver(0)) // b's write lands, forgetting x
			lb.DropHeld()
			run.want += 1 // y2
			st := stored(t, mem)
			t.Logf("after b's write: b holds x %v, a holds x %v, value %d, want %d", holdsAny(st, "b", "x"), holdsAny(st, "a", "x"), st.Value(), run.want)
			run.settle(a, b)
			t.Logf("a writes as %s (was %s)", a.Writer(), w0)
			if gap > 25*time.Hour {
				require.Equal(t, run.want+5, stored(t, mem).Value(), "the stated limit: x counts twice")
				return
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}
