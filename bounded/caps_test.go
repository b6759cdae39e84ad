package bounded_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// withActors returns a counter in which n actors, named prefix and a
// number, each credited 1.
func withActors(t *testing.T, prefix string, n int) *bounded.Counter {
	t.Helper()
	c, err := bounded.New(bounded.Options{})
	require.NoError(t, err)
	for i := range n {
		_, err := c.Apply(crdt.ActorID(fmt.Sprintf("%s%05d", prefix, i)), crdt.TxnID(fmt.Sprint("t", i)), 1)
		require.NoError(t, err)
	}
	return c
}

// TestSiblingsPastMaxActors: two Accounts that could not see each other
// each add an actor to a state of MaxActors - 1. The siblings' union
// (MaxActors + 1) stays readable and its actors write; a new actor is
// refused (SPEC.md 13.2). Before, every call merged the siblings and
// failed too_large, for good.
func TestSiblingsPastMaxActors(t *testing.T) {
	ctx := context.Background()
	inner := memory.NewSiblings()
	b, err := withActors(t, "a", bounded.MaxActors-1).MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, inner.Put(ctx, "k", "seed", b, nil))
	st := faulty.NewSiblings(inner, faulty.Options{Policy: counterCalls(faulty.Only(faulty.Script(faulty.Pass, faulty.Stale), faulty.MethodFetch))})
	open := func(actor crdt.ActorID) *bounded.Account {
		acc, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: actor})
		require.NoError(t, err)
		return acc
	}
	x, y := open("x"), open("y")
	_, err = x.Credit(ctx, "x1", 1)
	require.NoError(t, err)
	_, err = y.Credit(ctx, "y1", 1) // its read is stale: a sibling
	require.NoError(t, err)

	c, err := open("z").Sync(ctx)
	require.NoError(t, err, "the key stays readable")
	require.Equal(t, bounded.MaxActors+1, c.Len())
	require.Equal(t, int64(bounded.MaxActors+1), c.Value())
	_, err = open("z").Credit(ctx, "z1", 1)
	require.ErrorIs(t, err, crdt.ErrTooLarge, "a new actor")
	res, err := x.Credit(ctx, "x2", 1)
	require.NoError(t, err, "an actor of the state writes")
	require.Equal(t, int64(bounded.MaxActors+2), res.Value)
}

// TestMergeBound: Merge and the decoder accept up to MaxMergedActors
// entries, and refuse one more (crdt.ErrTooLarge), the receiver unchanged.
func TestMergeBound(t *testing.T) {
	all, err := bounded.New(bounded.Options{})
	require.NoError(t, err)
	for i := range bounded.MaxMergedActors / bounded.MaxActors {
		require.NoError(t, all.Merge(withActors(t, fmt.Sprintf("p%02d-", i), bounded.MaxActors)))
	}
	require.Equal(t, bounded.MaxMergedActors, all.Len())
	b, err := all.MarshalBinary()
	require.NoError(t, err)
	back, err := bounded.New(bounded.Options{})
	require.NoError(t, err)
	require.NoError(t, back.UnmarshalBinary(b))
	require.Equal(t, all.Value(), back.Value())

	err = all.Merge(withActors(t, "q", 1))
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.Equal(t, bounded.MaxMergedActors, all.Len(), "unchanged")
}
