package ledger_test

import (
	"context"
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
		mem, clock, a, b, run := pendingElsewhere(t)
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
		mem, clock, la, lb, a, b, run := watchedElsewhere(t)
		require.NoError(t, la.Deliver(0))
		la.DropHeld()
		run.want += 9 // w
		for range 2 {
			_, err := a.Find(ctx)
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
