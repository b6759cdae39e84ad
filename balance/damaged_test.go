package balance_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

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
