package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/timeid"
)

// A merge's Event.Folded counts the rows it folded into its sum row (its
// tombstones) and those it removed (settled rows deleted, invalid rows
// collected), as a deltalog merge counts the cells it sums and a
// compaction those it deletes: the merge that sums three rows an hour old
// reports 3 beside its Lag, not 0. Transactions.Merge sums its
// partitions'.
func TestMergeEventCountsFoldedRows(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var evs []observe.Event
	obs := observe.Func(func(_ context.Context, e observe.Event) { evs = append(evs, e) })
	clock := func() time.Time { return now }
	ac, err := balance.New(memory.NewPartitions(), balance.Options{Clock: clock, Observer: obs})
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, ac.Add(ctx, "seller-1", timeid.FromParts(now.Add(-time.Duration(i)*time.Second), uint16(i), 1), 5))
	}
	now = now.Add(time.Hour)
	rep, err := ac.Merge(ctx, "seller-1")
	require.NoError(t, err)
	require.NotNil(t, rep.Sum)
	e := evs[len(evs)-1]
	require.Equal(t, 3, e.Folded, "the merge summed 3 rows")
	require.Positive(t, e.Lag)
	now = now.Add(2 * time.Hour)
	rep, err = ac.Merge(ctx, "seller-1")
	require.NoError(t, err)
	require.Equal(t, len(rep.Deleted)+len(rep.Collected), evs[len(evs)-1].Folded, "the merge removed rows")
	require.Positive(t, evs[len(evs)-1].Folded)

	tx, err := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{Options: balance.Options{Clock: clock, Observer: obs}})
	require.NoError(t, err)
	for _, id := range []string{"t1", "t2", "t3"} {
		_, err := tx.Apply(ctx, "shop-1", crdt.TxnID(id), 5)
		require.NoError(t, err)
	}
	now = now.Add(time.Hour)
	reps, err := tx.Merge(ctx, "shop-1")
	require.NoError(t, err)
	summed := 0
	for _, r := range reps {
		summed += len(r.Tombstones)
	}
	require.Equal(t, 3, summed)
	require.Equal(t, 3, evs[len(evs)-1].Folded, "Transactions.Merge summed 3 rows")
}

// A merge's Lag is how long ago the newest update it summed was made. A
// Transactions row's id is a hash of its transaction id (a time before
// 1900), so Transactions.Merge takes the time the row was placed: a
// merge one second after a credit reports a second, not centuries (found
// by a review from the docs: 2,168,275 hours).
func TestTransactionsMergeLag(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var evs []observe.Event
	obs := observe.Func(func(_ context.Context, e observe.Event) { evs = append(evs, e) })
	tx, err := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{Options: balance.Options{Clock: func() time.Time { return now }, Observer: obs}})
	require.NoError(t, err)
	_, err = tx.Apply(ctx, "seller-42", "pay-0", 2500)
	require.NoError(t, err)
	now = now.Add(time.Second)
	_, err = tx.Apply(ctx, "seller-42", "pay-1", 100)
	require.NoError(t, err)
	now = now.Add(3 * time.Second)
	_, err = tx.Merge(ctx, "seller-42")
	require.NoError(t, err)
	e := evs[len(evs)-1]
	require.Equal(t, "merge", e.Op)
	require.Equal(t, 3*time.Second, e.Lag.Round(time.Millisecond), "the newest credit, pay-1, was made 3 s before the merge")
}
