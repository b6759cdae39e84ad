package ledger_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestGraceDropReadsOwnEntryRetired: a's entry is retired by b at the
// version a last stored; a reads again past RetiredGrace/2 (state dropped,
// resume = stored), its read shows the entry retired at exactly that
// version, so it keeps the incarnation and writes its retired entry again.
// ahead: a's last write was refused (its state ahead of the store).
func TestGraceDropReadsOwnEntryRetired(t *testing.T) {
	for _, ahead := range []bool{false, true} {
		t.Run(map[bool]string{false: "inplace", true: "ahead"}[ahead], func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, lb := newLane(mem), newLane(mem)
			o := ledger.Options{Actor: "a", RetireAfter: time.Hour, RetiredGrace: 2 * time.Hour, RetryCount: 1,
				Backoff: ledger.Backoff{Initial: -1}, MaxGroup: 1, Counter: tpncounter.Options{HistoryLength: 2, FoldedLength: 2}}
			clock.opts(&o)
			a, err := ledger.New(la, advKey, o)
			require.NoError(t, err)
			ob := o
			ob.Actor = "b"
			b, err := ledger.New(lb, advKey, ob)
			require.NoError(t, err)
			run := &limitRun{t: t}
			run.upd(a, "a1", 10, tpncounter.Applied)
			run.upd(a, "a2", 20, tpncounter.Applied)
			run.upd(b, "b1", 1, tpncounter.Applied) // b sees a
			if ahead {
				la.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
				_, err := a.Update(ctx, "r", 7)
				require.ErrorIs(t, err, crdt.ErrUnavailable)
				la.plan.set(nil, nil, nil)
			}
			aw := a.Writer()
			clock.Add(61 * time.Minute)
			run.upd(b, "b2", 1, tpncounter.Applied) // a idle an hour: retired
			st := stored(t, mem)
			_, live := maps.Collect(st.LiveActors())[aw]
			t.Logf("a %s live after b's pass: %v (version %d)", aw, live, st.Version(aw))
			clock.Add(10 * time.Minute) // a's last read 71m ago > RetiredGrace/2
			run.upd(a, "a3", 30, tpncounter.Applied)
			t.Logf("a writes as %s (was %s)", a.Writer(), aw)
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
			clock.Add(3 * time.Hour) // past the grace: folds
			run.settle(a, b)
			run.settle(b, a)
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once after folds")
		})
	}
}
