package balance_test

// An expiry mark ahead of the clock (a layout race's loser of a smaller
// RetryWindow, or damage) is read as none and replaced by the mark a
// first expiry, or a Delete, writes first, so a failed expiry or Delete
// is still made up by the next (a third review found both broken by it).

import (
	"context"
	"strings"
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

// putAheadMark stores an expiry mark row naming window w (as a layout
// race's loser of a smaller RetryWindow, or damage, leaves), written at
// timestamp 1 so that any later delete of it wins.
func putAheadMark(t *testing.T, mem store.Partitions, w int64) {
	t.Helper()
	row := balance.NormalRow(expiryID(), w)
	b, err := row.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, mem.Apply(context.Background(), []store.Mutation{{Partition: acct + "#txn.expired", Op: store.OpPut,
		Key: balance.EncodeKey(row.Key()), Value: b, Timestamp: 1}}))
}

// TestTransactionsFailedExpiryIsMadeUp with an expiry mark ahead of the
// clock.
func TestTransactionsFailedExpiryWithAheadMarkIsMadeUp(t *testing.T) {
	ctx := context.Background()
	tx, c, mem, st := faultyHourTxns(t, 1)
	var refuse atomic.Bool
	rw := tx.Options().RetryWindow

	first := windowOf(c.Now(), rw)
	burst(t, c, tx, txnsIn("burst-", 0, 1, 20))
	burstRows, _ := recordRows(t, mem, tx, acct, first-3, first+3)
	require.Positive(t, burstRows)

	c.Add(10 * rw)
	putAheadMark(t, mem, windowOf(c.Now(), rw)+1000)
	mustApply(t, tx, "later-0", 1, balance.Applied)
	c.Add(time.Second)
	refuse.Store(true)
	st.SetPolicy(func(call faulty.Call) faulty.Fault {
		if call.Method == faulty.MethodApply && refuse.Load() && call.Key != "" && strings.Contains(call.Key, "#txn.") &&
			!strings.HasSuffix(call.Key, "#txn.expired") && windowOfKey(call.Key) <= first+3 {
			return faulty.Refuse
		}
		return faulty.Pass
	})
	_, err := tx.Merge(ctx, acct)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "the expiry's delete batch is refused")
	refuse.Store(false)

	keepMerging(t, c, tx, "after-", rw, 10)
	left, windows := recordRows(t, mem, tx, acct, first-3, windowOf(c.Now(), rw))
	t.Logf("marks now: %v", storedRows(mem, acct+"#txn.expired"))
	require.Zero(t, left, "records left behind for good after one failed expiry (ahead mark): %d in windows %v", left, windows)
}

// TestTransactionsDeleteCalledAgain with an expiry mark ahead of the
// clock.
func TestTransactionsDeleteCalledAgainWithAheadMark(t *testing.T) {
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
	before, _ := recordRows(t, mem, tx, acct, first-3, first+3)
	require.Positive(t, before)

	c.Add(10 * rw) // idle
	putAheadMark(t, mem, windowOf(c.Now(), rw)+1000)
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
}

// A damaged layout marker makes every call fail corrupt_encoding
// (TestTransactionsLayoutCorruptMarker) but Delete, the only way to change
// a layout: it deletes the account, the marker with it, by its own
// layout (a review found Delete refused too, leaving the account neither
// usable nor deletable).
func TestTransactionsDeleteCorruptLayoutMarker(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := memory.NewPartitions()
	tx := newTxns(t, mem, c)
	mustApply(t, tx, "pay-1", 1, balance.Applied)
	bad, err := balance.New(mem, balance.Options{Clock: c.Now})
	require.NoError(t, err)
	require.NoError(t, bad.Add(ctx, acct+"#txn.layout", timeid.FromParts(c.Now(), 1, 1), 5))
	_, err = tx.Balance(ctx, acct)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	require.NoError(t, tx.Delete(ctx, acct), "Delete of an account whose layout marker is damaged")
}
