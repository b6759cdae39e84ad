// Package balancetest runs balance's account-level behaviours against any
// store.Partitions, so that every backend shows the tombstone balance works
// on it. A backend runs it with one call:
//
//	func TestBalance(t *testing.T) {
//	    balancetest.Run(t, func(t *testing.T) store.Partitions { return newStore(t) })
//	}
//
// Each behaviour is its own subtest with a fresh store from newStore, using
// only balance.Accounts and the store.Partitions interface, so it runs
// unchanged against a real database. Account keys are unique per subtest.
// The store's own contract (ordering, timestamps, atomicity, isolation) is
// checked by package store/storetest.
package balancetest

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog/rowlogtest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// rows returns account's stored rows in row order, checking that every row
// decodes, that its key is its row's, and that the order is CompareRows'.
func rows(t *testing.T, s store.Partitions, account string) []balance.Row {
	t.Helper()
	return storedRows(t, s, account, false)
}

// txnRows returns the rows of a Transactions row partition, checking that
// every row decodes and that its key (balance.DecodeTxnRowKey) is its
// row's.
func txnRows(t *testing.T, s store.Partitions, partition string) []balance.Row {
	t.Helper()
	return storedRows(t, s, partition, true)
}

func storedRows(t *testing.T, s store.Partitions, partition string, placed bool) []balance.Row {
	t.Helper()
	stored, err := s.Snapshot(context.Background(), partition, balance.MaxRows, store.ReadComplete)
	require.NoError(t, err)
	out := make([]balance.Row, len(stored))
	for i, sr := range stored {
		k, err := balance.DecodeKey(sr.Key)
		if placed {
			_, k, err = balance.DecodeTxnRowKey(sr.Key)
		}
		require.NoError(t, err)
		require.NoError(t, out[i].UnmarshalBinary(sr.Value))
		require.Equal(t, k, out[i].Key())
		if i > 0 && !placed {
			require.Equal(t, -1, balance.CompareRows(out[i-1], out[i]), "rows %d and %d", i-1, i)
		}
	}
	return out
}

// kit is balance's side of the behaviours it shares with deltalog.
var kit = rowlogtest.Kit[*balance.Accounts, balance.Batch]{
	Name: "balance", Nouns: "Accounts",
	New: func(s store.Partitions, now func() time.Time) (*balance.Accounts, error) {
		return balance.New(s, balance.Options{Clock: now})
	},
	Add:   (*balance.Accounts).Add,
	Apply: (*balance.Accounts).Apply,
	Batch: (*balance.Batch).Add,
	Read:  (*balance.Accounts).Balance,
	Merge: func(a *balance.Accounts, ctx context.Context, account string) error {
		_, err := a.Merge(ctx, account)
		return err
	},
	MergeAfter: time.Second,
	Delete:     (*balance.Accounts).Delete,
	Rows:       func(t *testing.T, s store.Partitions, account string) int { return len(rows(t, s, account)) },
}

// Run runs every behaviour against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) store.Partitions) {
	t.Helper()
	ctx := context.Background()
	kit.Run(t, newStore)

	t.Run("EmptyAccountIsZero", func(t *testing.T) {
		a, s, _, k := kit.Setup(t, newStore)
		require.Zero(t, kit.Value(t, a, k))
		require.Empty(t, rows(t, s, k))
	})
	t.Run("RowsAreStoredInClusteringOrder", func(t *testing.T) {
		a, s, c, k := kit.Setup(t, newStore)
		// Equal timestamps: the tail decides, as signed bytes.
		ids := []balance.ID{timeid.FromParts(c.T, 0x0001, 1), timeid.FromParts(c.T, 0x00ff, 1),
			timeid.FromParts(c.T.Add(-time.Second), 5, 5)}
		for i, id := range []balance.ID{ids[2], ids[0], ids[1]} {
			require.NoError(t, a.Add(ctx, k, id, int64(i+1)))
		}
		c.T = c.T.Add(time.Second)
		_, err := a.Merge(ctx, k)
		require.NoError(t, err)
		got := rows(t, s, k) // checks the order
		require.Len(t, got, 7, "three N rows, three tombstones, one sum row")
		require.Equal(t, int64(6), kit.Value(t, a, k))
	})
	t.Run("ExtremeAmountsRoundTrip", func(t *testing.T) {
		a, s, c, k := kit.Setup(t, newStore)
		require.NoError(t, a.Add(ctx, k, timeid.New(c.T), math.MinInt64))
		require.Equal(t, int64(math.MinInt64), kit.Value(t, a, k))
		require.NoError(t, a.Add(ctx, k+"-max", timeid.New(c.T), math.MaxInt64))
		require.Equal(t, int64(math.MaxInt64), kit.Value(t, a, k+"-max"))
		require.Equal(t, int64(math.MinInt64), rows(t, s, k)[0].Amount)
	})
	t.Run("ReusedIDCountsOnceAndIsReported", func(t *testing.T) {
		// One update id written with two amounts is two rows (the amount
		// is in the key); one amount counts.
		a, s, c, k := kit.Setup(t, newStore)
		u := timeid.New(c.T)
		require.NoError(t, a.Add(ctx, k, u, 5))
		require.NoError(t, a.Add(ctx, k, u, 7))
		require.NoError(t, a.Add(ctx, k, u, 5))
		require.Len(t, rows(t, s, k), 2)
		require.Equal(t, int64(5), kit.Value(t, a, k))
		conflicts, err := a.Conflicts(ctx, k)
		require.NoError(t, err)
		require.Equal(t, []balance.Conflict{{UpdateID: u, Counted: 5, Refused: []int64{7}}}, conflicts)
	})
	t.Run("MergesSettleAndCollect", func(t *testing.T) {
		a, s, c, k := kit.Setup(t, newStore)
		var want int64
		for i := range 20 {
			amt := int64(i*3 - 20)
			if amt == 0 {
				amt = 1
			}
			want += amt
			require.NoError(t, a.Add(ctx, k, timeid.New(c.T), amt))
			c.T = c.T.Add(time.Second)
			if i%7 == 6 {
				_, err := a.Merge(ctx, k)
				require.NoError(t, err)
				require.Equal(t, want, kit.Value(t, a, k))
			}
		}
		for range 8 {
			c.T = c.T.Add(11 * time.Minute)
			_, err := a.Merge(ctx, k)
			require.NoError(t, err)
			require.Equal(t, want, kit.Value(t, a, k))
		}
		require.Len(t, rows(t, s, k), 1, "fully merged and collected")
	})
	t.Run("TransactionsCountOnce", func(t *testing.T) {
		// Three writers apply one transaction, a merge records it, and
		// every retry after is a duplicate: through settling, and until
		// a merge deletes its record partition past RetryWindow.
		_, s, c, k := kit.Setup(t, newStore)
		var txs [3]*balance.Transactions
		for i := range txs {
			var err error
			txs[i], err = balance.NewTransactions(s, balance.TxnOptions{Options: balance.Options{Clock: c.Now}})
			require.NoError(t, err)
		}
		apply := func(tx *balance.Transactions, txn crdt.TxnID, amount int64, want balance.Outcome) {
			t.Helper()
			got, err := tx.Apply(ctx, k, txn, amount)
			require.NoError(t, err)
			require.Equal(t, want, got, "%s", txn)
		}
		merge := func() {
			t.Helper()
			_, err := txs[0].Merge(ctx, k)
			require.NoError(t, err)
		}
		for _, tx := range txs {
			apply(tx, "x", 7, balance.Applied)
		}
		apply(txs[1], "y", -2, balance.Applied)
		value := func() int64 {
			t.Helper()
			v, err := txs[2].Balance(ctx, k)
			require.NoError(t, err)
			return v
		}
		require.Equal(t, int64(5), value())
		c.T = c.T.Add(time.Second)
		merge()
		for _, tx := range txs {
			apply(tx, "x", 7, balance.Duplicate)
			_, err := tx.Apply(ctx, k, "x", 8)
			require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
		}
		for range 3 { // settle, collect, compact
			c.T = c.T.Add(11 * time.Minute)
			merge()
			apply(txs[2], "y", -2, balance.Duplicate)
		}
		for _, p := range txs[0].RowPartitions(k) {
			require.LessOrEqual(t, len(txnRows(t, s, p)), 1, "%s: not fully merged and collected", p)
		}
		require.Equal(t, int64(5), value())
		c.T = c.T.Add(3*balance.DefaultRetryWindow + time.Minute)
		merge()
		for _, txn := range []crdt.TxnID{"x", "y"} {
			recorded, err := txs[1].Recorded(ctx, k, txn)
			require.NoError(t, err)
			require.Empty(t, recorded, "%s's record partition was not deleted", txn)
		}
	})
}
