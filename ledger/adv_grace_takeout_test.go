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

// TestGraceDropCarriesTakeOut (a limit a review found): lateTakeOut, a's
// take-out unwritten (its write refused), then a neither reads nor writes
// for more than RetiredGrace/2 (5 days). Its next Update's renewStale
// drops the state but keeps the take-out, which the read makes again,
// whether a keeps its incarnation (RetireAfter 1h) or takes a new one (0):
// x counts once. Dropped with the state, as before, the late copy stayed:
// +5. With that read stale (a's entry shown before its last write), a
// takes a new incarnation and keeps the take-out (a Book would keep a
// open) until a read shows the entry as last known stored (run.settle's).
func TestGraceDropCarriesTakeOut(t *testing.T) {
	for _, tc := range []struct {
		retire time.Duration
		stale  bool
	}{{-1, false}, {time.Hour, false}, {-1, true}, {time.Hour, true}} {
		t.Run(fmt.Sprintf("retire=%v,stale=%v", tc.retire, tc.stale), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, a, b, run := limitPair(t, tc.retire)
			lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
				func() error { _, err := a.Find(ctx); return err })
			unwritten, _ := ledger.Holding(a)
			require.True(t, unwritten, "a holds its take-out, unwritten")
			clock.Add(5*24*time.Hour + time.Minute)
			aw := a.Writer()
			if tc.stale {
				la.plan.set(nil, []faulty.Fault{faulty.StaleBy(2)}, nil)
			}
			run.upd(a, "a1", 1, tpncounter.Applied)
			la.plan.set(nil, nil, nil)
			require.Equal(t, tc.retire < 0 || tc.stale, aw != a.Writer(), "a new incarnation with RetireAfter 0 or after a stale read")
			if tc.stale {
				require.Equal(t, run.want+5, stored(t, mem).Value(), "x counts twice until a read shows a's entry")
				unwritten, _ := ledger.Holding(a)
				require.True(t, unwritten, "a still holds the take-out")
			}
			run.settle(a, b)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counts once")
		})
	}
}
