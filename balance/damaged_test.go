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
	"github.com/counterkit/counterkit/internal/stamp"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// TestDamagedRowStopsTheAccount stores, beside a good row, a row that does
// not decode, a row under another row's key, a key that is no balance key
// and an N row under another amount's key: Balance, Conflicts and Merge
// refuse the account with crdt.ErrCorruptEncoding naming it (and the row,
// where its key decodes), Merge writes nothing, and Delete removes it.
func TestDamagedRowStopsTheAccount(t *testing.T) {
	ctx := context.Background()
	l, s, c := newAccounts(t)
	n := balance.NormalRow(timeid.New(c.now), 4)
	v, err := n.MarshalBinary()
	require.NoError(t, err)
	other := balance.NormalRow(timeid.New(c.now), 4)
	for name, m := range map[string]store.Mutation{
		"garbage":            {Key: balance.EncodeKey(n.Key()), Value: []byte{1, 2, 3}},
		"another row's key":  {Key: balance.EncodeKey(other.Key()), Value: v},
		"foreign key":        {Key: []byte("xyz"), Value: v},
		"another amount key": {Key: balance.EncodeKey(balance.NormalRow(n.UpdateID, 5).Key()), Value: v},
	} {
		account := "damaged " + name
		require.NoError(t, l.Add(ctx, account, timeid.New(c.now), 3))
		m.Partition, m.Op, m.Timestamp = account, store.OpPut, stamp.Reserve(c.now, 1)
		require.NoError(t, s.Apply(ctx, []store.Mutation{m}))
		before, err := s.Snapshot(ctx, account, balance.MaxRows, store.ReadComplete)
		require.NoError(t, err)

		_, err = l.Balance(ctx, account)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, name)
		require.ErrorContains(t, err, account, name)
		if name != "foreign key" {
			require.ErrorContains(t, err, n.UpdateID.String(), name)
		}
		_, err = l.Conflicts(ctx, account)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, name)
		s.ResetCalls()
		_, err = l.Merge(ctx, account)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, name)
		require.Zero(t, s.Calls().Applies, name)
		after, err := s.Snapshot(ctx, account, balance.MaxRows, store.ReadComplete)
		require.NoError(t, err)
		require.Equal(t, before, after, name)

		require.NoError(t, l.Delete(ctx, account), name)
		b, err := l.Balance(ctx, account)
		require.NoError(t, err, name)
		require.Zero(t, b, name)
	}
}

// TestTransactionsDamagedRecordFailsItsOwnTransactionAlone: a record that
// does not decode fails the Apply and Recorded of its own transaction
// (crdt.ErrCorruptEncoding, nothing written), and no other transaction's:
// a lookup ends at the first key of another transaction without decoding
// it. It failed the transactions whose row id sorts just before a damaged
// record in its partition. Merge and Balance go on.
func TestTransactionsDamagedRecordFailsItsOwnTransactionAlone(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewPartitions()
	s := &counting{mem: mem}
	c := newTestClock()
	tx := newTxns(t, s, c)
	for i := range 5 {
		mustApply(t, tx, crdt.TxnID(fmt.Sprint("a", i)), 5, balance.Applied)
	}
	c.Add(time.Hour)
	mustMerge(t, tx)
	rw := tx.Options().RetryWindow.Microseconds()
	damaged := 0
	for w := c.Now().UnixMicro()/rw - 1; w <= c.Now().UnixMicro()/rw+3; w++ {
		for sh := range tx.Options().RecordShards {
			p := fmt.Sprintf("%s#txn.%d.%d", acct, w, sh)
			rows, err := mem.Snapshot(ctx, p, 100, store.ReadComplete)
			require.NoError(t, err)
			for _, r := range rows {
				require.NoError(t, mem.Apply(ctx, []store.Mutation{{Partition: p, Op: store.OpPut, Key: r.Key, Value: []byte{1, 2, 3}, Timestamp: 1 << 60}}))
				damaged++
			}
		}
	}
	require.Equal(t, 10, damaged, "5 records in 2 windows")

	applies := s.applies.Load()
	_, err := tx.Apply(ctx, acct, "a1", 5)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	_, err = tx.Recorded(ctx, acct, "a1")
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	require.Equal(t, applies, s.applies.Load(), "nothing written")
	for i := range 500 {
		txn := crdt.TxnID(fmt.Sprint("b", i))
		got, err := tx.Recorded(ctx, acct, txn)
		require.NoError(t, err, txn)
		require.Empty(t, got, txn)
	}
	mustApply(t, tx, "b0", 7, balance.Applied)
	mustMerge(t, tx)
	require.Equal(t, int64(32), balanceOf(t, tx))
}
