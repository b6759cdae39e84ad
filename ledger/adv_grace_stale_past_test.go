package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitGraceDropCarryStalePastTheGrace (found by a review):
// TestGraceDropCarriesTakeOut's stale case, no one retiring. After a
// 5-day gap the stale read keeps the carry and a later read makes it:
// x counts once. After 10 days, RetiredGrace after the take-out, the
// stale read drops it (its entry may have been folded by then,
// TestGraceDropCarryAcrossAFoldedHalf), and x counts twice: the limit
// SPEC.md 6.10 states.
func TestLimitGraceDropCarryStalePastTheGrace(t *testing.T) {
	for _, gap := range []time.Duration{5*24*time.Hour + time.Minute, 10*24*time.Hour + time.Minute} {
		t.Run(fmt.Sprintf("gap=%v", gap), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, -1)
			lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
				func() error { _, err := a.Find(ctx); return err })
			unwritten, _ := ledger.Holding(a)
			require.True(t, unwritten, "a holds its take-out, unwritten")
			clock.Add(gap)
			la.plan.set(nil, []faulty.Fault{faulty.StaleBy(2)}, nil)
			run.upd(a, "a1", 1, tpncounter.Applied)
			la.plan.set(nil, nil, nil)
			unwritten, _ = ledger.Holding(a)
			t.Logf("after the stale read: a holds the take-out %v, value %d want %d", unwritten, stored(t, mem).Value(), run.want)
			run.settle(a, b)
			run.settle(a, b)
			if gap > 10*24*time.Hour {
				require.Equal(t, run.want+5, stored(t, mem).Value(), "the stated limit: x counts twice")
				return
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}
