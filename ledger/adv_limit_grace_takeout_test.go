package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitGraceDropLosesTakeOut shows the limit SPEC.md 6.10 states for
// RetiredGrace (found by a review): lateTakeOut, a's take-out unwritten
// (its write refused), then a neither reads nor writes for more than
// RetiredGrace/2 (5 days). Its next Update's renewStale drops the state,
// take-out and all, and a's late copy of x stays in the store: x counts
// twice (+5). TestRenewStaleKeepsTakeOut shows a read in between keeping
// it.
func TestLimitGraceDropLosesTakeOut(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, a := limitLedger(t, mem, clock, "a", -1)
	_, b := limitLedger(t, mem, clock, "b", -1)
	run := &limitRun{t: t}
	lateTakeOut(t, mem, la, b, run, true, func(x crdt.TxnID, n int64) (ledger.Result, error) { return a.Update(ctx, x, n) },
		func() error { _, err := a.Find(ctx); return err })
	unwritten, _ := ledger.Holding(a)
	require.True(t, unwritten, "a holds its take-out, unwritten")
	clock.Add(5*24*time.Hour + time.Minute)
	aw := a.Writer()
	run.upd(a, "a1", 1, tpncounter.Applied)
	t.Logf("a writes as %s (was %s)", a.Writer(), aw)
	run.settle(a, b)
	require.Equal(t, run.want+5, stored(t, mem).Value(), "the stated limit: x counts twice")
}
