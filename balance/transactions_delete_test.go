package balance_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// Delete's work does not grow with the time an account idled: it deletes
// the record windows of its clock and those around its last merge, not
// every window between. Found by a review: with a RetryWindow of one
// minute, an account idle for a week cost Delete about 160,000 partition
// deletes (8.4 million for a year).
func TestTransactionsDeleteCostFlatInIdleTime(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := memory.NewPartitions()
	cnt := &countDeletes{Partitions: mem}
	o := txnOpts(c)
	o.RetryWindow = time.Minute
	tx, err := balance.NewTransactions(cnt, o)
	require.NoError(t, err)
	mustApply(t, tx, "a", 1, balance.Applied)
	c.Add(time.Second)
	mustMerge(t, tx)
	c.Add(tx.Options().SettleGrace + time.Second)
	mustMerge(t, tx)
	cnt.n.Store(0)
	c.Add(7 * 24 * time.Hour)
	require.NoError(t, tx.Delete(ctx, acct))
	t.Logf("Delete wrote %d partition deletes", cnt.n.Load())
	require.Less(t, cnt.n.Load(), int64(10_000), "Delete of an account idle for a week")
}

type countDeletes struct {
	store.Partitions
	n atomic.Int64
}

func (c *countDeletes) Apply(ctx context.Context, muts []store.Mutation) error {
	for _, m := range muts {
		if m.Op == store.OpDeletePartition {
			c.n.Add(1)
		}
	}
	return c.Partitions.Apply(ctx, muts)
}

// An expiry mark far in the past (here 10^6 windows, which no merge
// writes) does not make Delete unbounded: it deletes at most
// deleteWindows (1,024) windows before its clock's. Found by a review:
// Delete built a delete of every window from the mark on.
func TestTransactionsDeleteDamagedMarkBounded(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := memory.NewPartitions()
	cnt := &countDeletes{Partitions: mem}
	o := txnOpts(c)
	o.RecordShards = 1
	tx, err := balance.NewTransactions(cnt, o)
	require.NoError(t, err)
	mustApply(t, tx, "a", 1, balance.Applied)
	rw := tx.Options().RetryWindow
	mark := windowOf(c.Now(), rw) - 1_000_000
	row := balance.NormalRow(expiryID(), mark)
	b, err := row.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: acct + "#txn.expired", Op: store.OpPut,
		Key: balance.EncodeKey(row.Key()), Value: b, Timestamp: 1}}))
	cnt.n.Store(0)
	require.NoError(t, tx.Delete(ctx, acct))
	t.Logf("Delete wrote %d partition deletes", cnt.n.Load())
	require.Less(t, cnt.n.Load(), int64(10_000), "Delete with a damaged expiry mark")
}

func expiryID() balance.ID {
	return timeid.FromParts(time.Date(1582, time.October, 15, 0, 0, 0, 0, time.UTC), 0, 0)
}
