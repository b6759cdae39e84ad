package balance_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
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

// A Delete that fails after its first batch (RecordShards 256: several
// batches), called again, leaves no record of an account that idled:
// Delete first writes where the old windows start as the expiry mark,
// which it deletes last. Found by a review: the first batch deleted the
// row partitions and the mark, from which Delete finds those windows.
func TestTransactionsDeleteCalledAgain(t *testing.T) {
	for _, ahead := range []bool{false, true} { // also with a mark ahead of the clock, read as none (a review found it stopped the make-up)
		t.Run(fmt.Sprint("ahead mark=", ahead), func(t *testing.T) {
			ctx := context.Background()
			c := newTestClock()
			mem := memory.NewPartitions()
			st := faulty.NewPartitions(mem, faulty.Options{})
			o := txnOpts(c)
			o.RetryWindow, o.RecordShards = time.Hour, 256
			tx, err := balance.NewTransactions(st, o)
			require.NoError(t, err)
			rw := tx.Options().RetryWindow
			first := windowOf(c.Now(), rw)
			for _, id := range []crdt.TxnID{"a", "b", "c", "d", "e", "f"} {
				mustApply(t, tx, id, 1, balance.Applied)
			}
			c.Add(time.Second)
			mustMerge(t, tx)
			c.Add(tx.Options().SettleGrace + time.Second)
			mustMerge(t, tx)
			before, ws := recordRows(t, mem, tx, acct, first-3, first+3)
			require.Positive(t, before)
			t.Logf("records before Delete: %d rows in windows %v", before, ws)

			c.Add(10 * rw) // idle
			if ahead {
				putAheadMark(t, mem, windowOf(c.Now(), rw)+1000)
			}
			var deletes atomic.Int32
			st.SetPolicy(func(call faulty.Call) faulty.Fault {
				if call.Method == faulty.MethodApply && len(call.Batch) > 0 && call.Batch[0].Op == store.OpDeletePartition {
					if deletes.Add(1) == 2 {
						return faulty.Refuse
					}
				}
				return faulty.Pass
			})
			require.Error(t, tx.Delete(ctx, acct), "the second batch is refused")
			st.SetPolicy(nil)
			require.NoError(t, tx.Delete(ctx, acct), "called again")
			left, windows := recordRows(t, mem, tx, acct, first-4, first+14)
			require.Zero(t, left, "Delete, failed then called again, left %d record rows in windows %v", left, windows)
		})
	}
}
