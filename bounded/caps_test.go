package bounded_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
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
	testsize.SkipSequential(t)
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
	testsize.SkipSequential(t)
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

// TestTransferPastTheRecipientCap: an entry's encoding holds at most
// MaxActors recipients (SPEC.md 13.4), so a Transfer to one more is
// refused with crdt.ErrTooLarge and changes nothing, where it used to be
// accepted and leave a state no decoder reads. A recipient already given
// to can still be given more.
func TestTransferPastTheRecipientCap(t *testing.T) {
	if testing.Short() {
		t.Skip("4,096 transfers, each re-encoding the entry: seconds, minutes under -race")
	}
	c, err := bounded.New(bounded.Options{})
	require.NoError(t, err)
	_, err = c.Apply("a", "t", 2*bounded.MaxActors)
	require.NoError(t, err)
	for i := range bounded.MaxActors {
		require.NoError(t, c.Transfer("a", crdt.ActorID(fmt.Sprintf("r%05d", i)), 1))
	}
	before, err := c.MarshalBinary()
	require.NoError(t, err)
	_, err = bounded.Decode(before, 0)
	require.NoError(t, err)
	err = c.Transfer("a", "s", 1)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	after, err := c.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused transfer changes nothing")
	require.NoError(t, c.Transfer("a", "r00007", 1))
	require.Equal(t, int64(2), c.Sent("a", "r00007"))
}

// TestGrantSkipsPastTheRecipientCap: requesters that writers who could not
// see each other added pass MaxActors together (SPEC.md 13.2 keeps such a
// state readable). The holder's grant step gives to as many as an entry
// holds and skips the rest, so every Account still reads the key.
func TestGrantSkipsPastTheRecipientCap(t *testing.T) {
	if testing.Short() {
		t.Skip("4,096 grants, each re-encoding the entry: seconds, minutes under -race")
	}
	ctx := context.Background()
	st := memory.NewSiblings()
	h, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "holder"})
	require.NoError(t, err)
	_, err = h.Credit(ctx, "c1", 100000)
	require.NoError(t, err)
	base, err := h.Sync(ctx)
	require.NoError(t, err)
	sibling := func(prefix string, n int) []byte {
		c := base.Clone()
		for i := range n {
			_, err := c.Request(crdt.ActorID(fmt.Sprintf("%s%05d", prefix, i)), 1)
			require.NoError(t, err)
		}
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		return b
	}
	require.NoError(t, st.Put(ctx, "k", "x", sibling("r", bounded.MaxActors-1), nil))
	require.NoError(t, st.Put(ctx, "k", "y", sibling("s", 10), nil))
	merged, err := h.Sync(ctx)
	require.NoError(t, err)
	e, _ := merged.Entry(h.Writer())
	require.Len(t, e.Sent, bounded.MaxActors)
	require.Equal(t, int64(1), merged.Outstanding("s00009"), "the last requester waits")
	other, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "reader"})
	require.NoError(t, err)
	_, err = other.Value(ctx)
	require.NoError(t, err)
}

// TestForkedSiblingsAreRefusedWhereRead: two siblings that each decode,
// in which actor a forked (two states of its entry each gave the same
// rights away, and each recipient spent them), merge to a value below the
// bound, which the decoder refuses. An Account refuses that merge as
// corrupt where it reads it and writes nothing, where it used to write it
// and stop every other Account's reads.
func TestForkedSiblingsAreRefusedWhereRead(t *testing.T) {
	ctx := context.Background()
	fork := func(to crdt.ActorID, request bool) []byte {
		c, err := bounded.New(bounded.Options{})
		require.NoError(t, err)
		_, err = c.Apply("a", "credit", 5)
		require.NoError(t, err)
		require.NoError(t, c.Transfer("a", to, 5))
		if request { // a's entry one write newer, so that it wins the merge
			_, err = c.Request("a", 1)
			require.NoError(t, err)
		}
		_, err = c.Apply(to, crdt.TxnID("spend-"+to), -5)
		require.NoError(t, err)
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		_, err = bounded.Decode(b, 0)
		require.NoError(t, err, "each fork decodes")
		return b
	}
	st := memory.NewSiblings()
	require.NoError(t, st.Put(ctx, "k", "w1", fork("b", false), nil))
	require.NoError(t, st.Put(ctx, "k", "w2", fork("c", true), nil))
	before, _, err := st.Fetch(ctx, "k")
	require.NoError(t, err)

	acc, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "p"})
	require.NoError(t, err)
	_, err = acc.Value(ctx)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	var inv *bounded.InvariantError
	require.ErrorAs(t, err, &inv)
	require.Equal(t, bounded.InvValueAtLeastBound, inv.Invariant)
	_, err = acc.Sync(ctx)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	_, err = acc.Credit(ctx, "t", 1)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	after, _, err := st.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing written over the forks")
}
