package balance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// copyAfterItsTombstone applies x (7) on a writer, then x with amount on a
// writer FutureSkew ahead whose record read comes just before a merge
// records and sums the first copy: its row lands placed after that
// merge's tombstone and sum row. A merge past SettleGrace then settles.
// It returns the balance, the conflicts and the rows left in x's row
// partition.
func copyAfterItsTombstone(t *testing.T, amount int64) (int64, []balance.Conflict, int) {
	ctx := context.Background()
	c := newTestClock()
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	tx0 := newTxns(t, st, c)
	o := tx0.Options()
	o.Clock = func() time.Time { return c.Now().Add(o.FutureSkew) }
	tx1, err := balance.NewTransactions(st, o)
	require.NoError(t, err)
	mustApply(t, tx0, "x", 7, balance.Applied)
	merged := false
	st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after && call.Method == faulty.MethodScan && !merged {
			merged = true
			c.Add(time.Second)
			mustMerge(t, tx0)
		}
		return nil
	})
	mustApply(t, tx1, "x", amount, balance.Applied)
	st.SetHook(nil)
	c.Add(o.SettleGrace + time.Second)
	reps := mustMerge(t, tx0)
	removed := 0
	for _, r := range reps {
		removed += len(r.Deleted) + len(r.Collected)
	}
	require.Positive(t, removed, "the settling merge removed nothing")
	bal, err := tx0.Balance(ctx, acct)
	require.NoError(t, err)
	conflicts, err := tx0.Conflicts(ctx, acct)
	require.NoError(t, err)
	rows := 0
	for _, p := range tx0.RowPartitions(acct) {
		n, err := st.Snapshot(ctx, p, balance.MaxRows, store.ReadAny)
		require.NoError(t, err)
		rows += len(n)
	}
	return bal, conflicts, rows
}

// A copy of a transaction's row placed after the tombstone that cancels it
// (a writer that read no record while a merge recorded and summed the
// transaction) is removed with that tombstone, not left to count once the
// oldest rows go (SPEC.md 9.4): with the same amount (one row at two
// places) and with another (a second row of the id, which counts nothing).
func TestTransactionsCopyAfterItsTombstone(t *testing.T) {
	for _, amount := range []int64{7, 8} {
		bal, conflicts, rows := copyAfterItsTombstone(t, amount)
		require.EqualValues(t, 7, bal, "amount %d", amount)
		require.Empty(t, conflicts, "amount %d: the refused copy is removed", amount)
		require.Equal(t, 1, rows, "amount %d: only the settled sum row is left", amount)
	}
}

// An idle account's row partitions end with one row, even when a writer
// whose clock is FutureSkew ahead placed a row after the merge's version
// (the sum row is placed after every row it covers: SPEC.md 9.4).
func TestTransactionsIdleAccountCompacts(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := memory.NewPartitions()
	tx0 := newTxns(t, st, c)
	o := tx0.Options()
	o.Clock = func() time.Time { return c.Now().Add(o.FutureSkew) }
	tx1, err := balance.NewTransactions(st, o)
	require.NoError(t, err)
	for i := range 20 {
		mustApply(t, tx1, crdt.TxnID(fmt.Sprint("ahead-", i)), 1, balance.Applied)
		mustApply(t, tx0, crdt.TxnID(fmt.Sprint("on-time-", i)), 1, balance.Applied)
	}
	mustMerge(t, tx0)
	for range 3 {
		c.Add(o.SettleGrace + o.FutureSkew + time.Second)
		mustMerge(t, tx0)
	}
	for _, p := range tx0.RowPartitions(acct) {
		rows, err := st.Snapshot(ctx, p, balance.MaxRows, store.ReadAny)
		require.NoError(t, err)
		require.LessOrEqual(t, len(rows), 1, "%s: %d rows left", p, len(rows))
	}
	bal, err := tx0.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, 40, bal)
}

// A merge that covers a sum row settled before leaves it where it is: the
// tombstone it names it with is placed there, and a delete-range over it
// would leave the merge's sum row a tombstone short (invalid). Here a
// GCGrace-old invalid sum row placed after the settled one gives the run
// a reason to pass it.
func TestMergeDoesNotMoveWhatItCovers(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: t0}
	st := newSpy()
	ac, err := balance.New(st, balance.Options{Clock: c.Now})
	require.NoError(t, err)
	ac = balance.Placed(ac)
	live := balance.Row{UpdateID: id(-20*time.Minute, 1), Kind: balance.KindSum, Version: id(-20*time.Minute, 1), Amount: 5, Covers: 1, Settled: true}
	bad := balance.Row{UpdateID: id(-15*time.Minute, 2), Kind: balance.KindSum, Version: id(-15*time.Minute, 2), Amount: 3, Covers: 1}
	require.NoError(t, writePlaced(st, acct, live, bad))
	require.NoError(t, ac.Add(ctx, acct, id(0, 3), 1))
	c.now = t0.Add(time.Second)
	rep, err := ac.Merge(ctx, acct)
	require.NoError(t, err)
	require.NotNil(t, rep.Sum)
	c.now = t0.Add(2 * time.Second)
	rep, err = ac.Merge(ctx, acct)
	require.NoError(t, err)
	require.Empty(t, rep.TooYoung, "the first merge's sum row turned invalid")
	bal, err := ac.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, 6, bal)
}
