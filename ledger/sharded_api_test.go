package ledger_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestShardedDebitAndAccessors: Debit subtracts on the transaction's
// sub-key and refuses what Ledger.Debit refuses; the accessors describe the
// layout and the writers.
func TestShardedDebitAndAccessors(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	s, err := ledger.NewSharded(st, "acct", 4, ledger.Options{Actor: "svc"})
	require.NoError(t, err)
	require.Equal(t, "acct", s.Account())
	require.Equal(t, 4, s.Shards())
	require.Equal(t, crdt.ActorID("svc"), s.Actor())

	_, err = s.Credit(ctx, "c1", 10)
	require.NoError(t, err)
	res, err := s.Debit(ctx, "d1", 3)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	res, err = s.Debit(ctx, "d1", 3)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, res.Outcome)
	_, err = s.Debit(ctx, "d2", 0)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = s.Debit(ctx, "d2", -1)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = s.Debit(ctx, "c1", 10)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction, "c1 is a credit")
	v, err := s.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(7), v)

	// d1 lives on its shard's key, written by that sub-ledger's writer.
	i := s.Shard("d1")
	require.Equal(t, ledger.ShardOf("d1", 4), i)
	require.Equal(t, fmt.Sprintf("acct/%d", i), s.Key(i))
	l, err := ledger.New(st, s.Key(i), ledger.Options{Actor: "reader"})
	require.NoError(t, err)
	c, err := l.Find(ctx)
	require.NoError(t, err)
	own, ok := c.Owner("d1")
	require.True(t, ok)
	require.Equal(t, s.Writer("d1"), own.Actor)
	require.Equal(t, s.Key(i), l.Key())
	require.Equal(t, crdt.ActorID("reader"), l.Actor())
}

// Bad input through a Sharded is refused before the layout is read or
// written: an Update of −2^63 on a new account stores nothing (not even
// the marker), and on an account of another n it is still ErrInvalidAmount.
func TestShardedBadAmountWritesNothing(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	s, err := ledger.NewSharded(st, "fresh", 2, ledger.Options{Actor: "svc"})
	require.NoError(t, err)
	for _, amount := range []int64{math.MinInt64, 0} {
		_, err = s.Update(ctx, "x", amount)
		require.ErrorIs(t, err, crdt.ErrInvalidAmount)
		require.Zero(t, st.Count("fresh"), "no marker written")
	}
	_, err = s.Credit(ctx, "y", 1)
	require.NoError(t, err)
	other, err := ledger.NewSharded(st, "fresh", 3, ledger.Options{Actor: "svc"})
	require.NoError(t, err)
	_, err = other.Update(ctx, "x", math.MinInt64)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
}
