package balance_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
)

// A row partition may hold more than int64 while the account's balance
// fits: Balance sums the partitions exactly, and a merge whose sum would
// not fit covers the oldest rows while it fits, so merges cover the
// oldest live rows in turn and nothing piles up. Found by a review: Balance
// and Merge failed crdt.ErrOverflow on the partition's own sum, for good
// unless a debit happened to land in that partition. An account whose
// balance does not fit is crdt.ErrOverflow until a debit brings it back.
func TestTransactionsPartitionPastInt64(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := memory.NewPartitions()
	tx := newTxns(t, mem, c)
	apply := func(txn crdt.TxnID, amount int64) {
		t.Helper()
		_, err := tx.Apply(ctx, acct, txn, amount)
		require.NoError(t, err)
	}
	apply(txnInOf("big-", 0, tx.Options().Partitions), math.MaxInt64)
	apply(txnInOf("one-", 0, tx.Options().Partitions), 1)
	_, err := tx.Balance(ctx, acct)
	require.ErrorIs(t, err, crdt.ErrOverflow, "the balance is MaxInt64 + 1")
	apply(txnInOf("debit-", 1, tx.Options().Partitions), -1002)
	want := int64(math.MaxInt64 - 1001)
	require.Equal(t, want, balanceOf(t, tx))

	for i := range 40 { // credits keep landing in partition 0
		apply(txnInOf(fmt.Sprint("more-", i), 0, tx.Options().Partitions), 1)
		apply(txnInOf(fmt.Sprint("less-", i), 2, tx.Options().Partitions), -1)
		c.Add(5 * time.Second)
		mustMerge(t, tx)
		require.Equal(t, want, balanceOf(t, tx), "after merge %d", i)
	}
	// Idle, the partition holds its two live sum rows, and the last
	// merge's tombstone and the sum row it covers until they settle:
	// merges cover the older live sum row in turn, so nothing piles up.
	for i := range 20 {
		c.Add(2 * time.Minute)
		mustMerge(t, tx)
		require.Equal(t, want, balanceOf(t, tx))
		if n := len(storedRows(mem, tx.RowPartitions(acct)[0])); i >= 2 {
			require.LessOrEqual(t, n, 4, "idle merge %d", i)
		}
	}
	require.Len(t, storedRows(mem, tx.RowPartitions(acct)[2]), 1)
}
