package balance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
	"github.com/stretchr/testify/require"
)

// No backlog makes a partition unmergeable (SPEC.md 9.3 steps 5, 7, 8 and
// 9.4's records): every batch a merge writes stays within store.MaxBatch.
// Each case failed with crdt.ErrTooLarge, for good, before the limits
// (found by a review): more than 10,000 live rows in one partition (the
// tombstones, and with one record shard the records), and a merge pause
// that lets three sums of 3,500 rows each reach SettleGrace together.
func TestMergeBatchesStayWithinTheStoreLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("about 10,000 credits a case")
	}
	ctx := context.Background()
	balanceIs := func(t *testing.T, tx *balance.Transactions, want int) {
		t.Helper()
		v, err := tx.Balance(ctx, acct)
		require.NoError(t, err)
		require.EqualValues(t, want, v)
	}
	credit := func(t *testing.T, tx *balance.Transactions, from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			_, err := tx.Apply(ctx, acct, crdt.TxnID(fmt.Sprint("c", i)), 1)
			require.NoError(t, err)
		}
	}
	for _, shards := range []int{1, 16} {
		t.Run(fmt.Sprint("live rows over MaxBatch, record shards ", shards), func(t *testing.T) {
			c := newTestClock()
			o := txnOpts(c)
			o.Partitions, o.RecordShards = 1, shards
			tx, err := balance.NewTransactions(memory.NewPartitions(), o)
			require.NoError(t, err)
			n := store.MaxBatch + 1
			credit(t, tx, 0, n)
			c.Add(time.Second)
			reps := mustMerge(t, tx)
			require.Len(t, reps[0].Tombstones, balance.MaxCover, "one merge covers MaxCover rows")
			balanceIs(t, tx, n)
			for range 2 {
				c.Add(time.Second)
				mustMerge(t, tx)
			}
			mustApply(t, tx, "c0", 1, balance.Duplicate)
			mustApply(t, tx, crdt.TxnID(fmt.Sprint("c", n-1)), 1, balance.Duplicate)
			c.Add(2 * time.Minute)
			mustMerge(t, tx)
			balanceIs(t, tx, n)
		})
	}
	t.Run("a merge pause past SettleGrace", func(t *testing.T) {
		c := newTestClock()
		o := txnOpts(c)
		o.Partitions = 1
		tx, err := balance.NewTransactions(memory.NewPartitions(), o)
		require.NoError(t, err)
		for i := range 3 { // three merges 5 s apart, 3,500 credits each
			credit(t, tx, i*3500, 3500)
			c.Add(5 * time.Second)
			mustMerge(t, tx)
		}
		c.Add(2 * time.Minute)
		deleted := 0 // credits' rows settled
		for range 3 {
			// The store refuses a batch of more than store.MaxBatch
			// mutations, so each merge succeeding shows they fit (a row
			// partition removes its rows by range: SPEC.md 9.4).
			for _, r := range mustMerge(t, tx) {
				for _, d := range r.Deleted {
					if d.Kind == balance.KindNormal {
						deleted++
					}
				}
			}
			balanceIs(t, tx, 3*3500)
			c.Add(time.Second)
		}
		require.Equal(t, 3*3500, deleted, "every credit's row settled over the merges")
	})
}

// A plain account with more live rows than MaxCover: each merge covers the
// MaxCover oldest, so a backlog drains oldest first, and the balance stays
// exact throughout.
func TestMergeCoversTheOldestFirst(t *testing.T) {
	testsize.SkipSequential(t)
	l, _, c := newAccounts(t)
	ctx := context.Background()
	n := balance.MaxCover + 1000
	ids := make([]timeid.ID, n)
	for i := range n {
		ids[i] = timeid.New(c.now)
		require.NoError(t, l.Add(ctx, "a", ids[i], 1))
		c.now = c.now.Add(10 * time.Microsecond)
	}
	c.now = c.now.Add(time.Second)
	rep, err := l.Merge(ctx, "a")
	require.NoError(t, err)
	require.Len(t, rep.Tombstones, balance.MaxCover)
	covered := map[timeid.ID]bool{}
	for _, tb := range rep.Tombstones {
		covered[tb.UpdateID] = true
	}
	for i, id := range ids {
		require.Equal(t, i < balance.MaxCover, covered[id], "update %d of %d", i, n)
	}
	v, err := l.Balance(ctx, "a")
	require.NoError(t, err)
	require.EqualValues(t, n, v)
	c.now = c.now.Add(time.Second)
	rep, err = l.Merge(ctx, "a")
	require.NoError(t, err)
	require.Len(t, rep.Tombstones, 1000+1, "the rest and the first merge's sum row")
	v, err = l.Balance(ctx, "a")
	require.NoError(t, err)
	require.EqualValues(t, n, v)
}
