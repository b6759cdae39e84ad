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

// expireAt runs ExpireRecords with the defaults at clock's time over the
// records of txns on advKey.
func expireAt(t *testing.T, mem *memory.Siblings, clock *fakeClock, txns ...crdt.TxnID) {
	t.Helper()
	var keys []string
	for _, x := range txns {
		keys = append(keys, ledger.RecordKey(advKey, x))
	}
	res, err := ledger.ExpireRecords(context.Background(), mem, keys, ledger.ExpireOptions{Clock: clock.Now})
	require.NoError(t, err)
	require.Positive(t, res.Deleted, "records expired")
}

// TestLimitExpiredRecordsEndOldJudgements: the judgements that read the
// records live at an earlier time (TestPendingWriteJudgedAtItsTimeDefaults,
// TestOwedRecordJudgedAtItsTime, TestWatchJudgedAtItsTime), made more than
// DefaultExpireAfter after b recorded x, after ExpireRecords with the
// defaults deleted that record: a finds none, keeps its copy, and x counts
// twice, the limit SPEC.md 6.11 "Storage" states.
func TestLimitExpiredRecordsEndOldJudgements(t *testing.T) {
	gap := ledger.DefaultExpireAfter + time.Second
	ctx := context.Background()
	t.Run("pending", func(t *testing.T) {
		mem := memory.NewSiblings()
		clock := newFakeClock(time.Unix(1_800_000_000, 0))
		la := newLane(mem)
		opts := func(n crdt.ActorID) ledger.Options {
			return ledger.Options{Actor: n, Clock: clock.Now, Backoff: ledger.Backoff{Initial: -1}}
		}
		a, err := ledger.New(la, advKey, opts("a"))
		require.NoError(t, err)
		b, err := ledger.New(mem, advKey, opts("b"))
		require.NoError(t, err)
		run := &limitRun{t: t}
		run.upd(b, "open", 1000, tpncounter.Applied)
		run.upd(a, "a0", 1, tpncounter.Applied)
		la.plan.set(repeat(faulty.Lose, 4), nil, nil)
		_, err = a.Update(ctx, "x", 5)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		la.plan.set(nil, nil, nil)
		run.upd(b, "x", 5, tpncounter.Applied)
		for i := range 60 {
			run.upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
		}
		clock.Add(gap)
		expireAt(t, mem, clock, "x")
		run.upd(a, "w", 9, tpncounter.Applied)
		run.settle(a, b)
		require.Equal(t, run.want+5, stored(t, mem).Value(), "x counts twice")
	})
	t.Run("owed", func(t *testing.T) {
		mem, clock, la, a, b, run := limitPair(t, time.Hour)
		retriedElsewhere(t, la, a, b, run, faulty.Hold)
		require.NoError(t, la.Deliver(0))
		la.DropHeld()
		_, err := a.Find(ctx)
		require.NoError(t, err)
		clock.Add(gap)
		expireAt(t, mem, clock, "x")
		run.upd(a, "w", 9, tpncounter.Applied)
		run.settle(a, b)
		require.Equal(t, run.want+5, stored(t, mem).Value(), "x counts twice")
	})
	t.Run("watch", func(t *testing.T) {
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
		require.NoError(t, la.Deliver(0))
		la.DropHeld()
		run.want += 9 // w
		for range 2 {
			_, err = a.Find(ctx)
			require.NoError(t, err)
		}
		_, watching := ledger.Holding(a)
		require.True(t, watching, "a watches its copy of x")
		clock.Add(gap)
		expireAt(t, mem, clock, "x")
		require.NoError(t, lb.Deliver(0)) // b's write lands, forgetting x
		lb.DropHeld()
		run.want += 1 // y2
		run.settle(a, b)
		require.Equal(t, run.want+5, stored(t, mem).Value(), "x counts twice")
	})
}
