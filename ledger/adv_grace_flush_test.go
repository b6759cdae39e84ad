package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestGraceDropFlushReadsFirst (found by a review): the schedule of
// TestGraceDropThenFailedFetch. Whenever a read would drop the state
// (RetiredGrace/2 since the last one), flush reads first, so that a
// take-out its owed records make is not dropped by the cycle's read that
// follows (fetchFails=false: +5 before). With that read one state stale
// (stale=true), the ledger takes a new incarnation, its owed record of x
// no longer names its writer, and its ledger never takes the late copy in
// the old entry out; r's pass retires that entry with the copy left out
// (SPEC.md 6.9). x counts once either way.
func TestGraceDropFlushReadsFirst(t *testing.T) {
	for _, tc := range []struct{ stale, fetchFails bool }{{false, true}, {true, true}, {false, false}} {
		stale := tc.stale
		t.Run(fmt.Sprintf("stale=%v,fetchFails=%v", tc.stale, tc.fetchFails), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := owedLateCopy(t)
			var err error
			aw := a.Writer()

			clock.Add(70 * time.Minute)
			if tc.fetchFails {
				la.plan.set(nil, []faulty.Fault{faulty.Refuse}, nil)
				_, err = a.Value(ctx)
				require.Error(t, err, "the fetch fails")
			}
			if stale {
				la.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil) // flush's read
			} else {
				la.plan.set(nil, nil, nil)
			}
			res, err := a.Update(ctx, "p0", 1)
			t.Logf("p0: %+v %v; a writes as %s (was %s)", res, err, a.Writer(), aw)
			if err == nil && res.Outcome == tpncounter.Applied {
				run.want++
			}
			la.plan.set(nil, nil, nil)
			run.settle(a, b)
			r := watchLedger(t, mem, clock, "r", time.Hour)
			for i := range 10 {
				run.upd(r, crdt.TxnID(fmt.Sprintf("r%d", i)), 1, tpncounter.Applied)
				clock.Add(20 * time.Minute)
			}
			st := stored(t, mem)
			_, oldLive := maps.Collect(st.LiveActors())[aw]
			t.Logf("a's old entry %s live %v holds %v", aw, oldLive, maps.Collect(st.Transactions(aw)))
			require.Equal(t, run.want, st.Value(), "each transaction counted once")
		})
	}
}
