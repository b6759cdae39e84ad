package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// Two incarnations that each hold one transaction retire once both are
// idle. A's Put of x is held in flight and its call fails ambiguous; the
// client retries x on B, which applies it; A's Put then lands: A and B
// both hold x. Neither writes again while C credits once an hour with
// RetireAfter 1h: within a few of C's writes A and B are retired
// together, x still counted once. Retired one at a time, each would be
// declined for ever, because the other holds x (the model checker's
// hole2-retire-shared scope found it).
func TestIdleIncarnationsSharingRetire(t *testing.T) {
	ctx := context.Background()
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	newLedger := func(actor crdt.ActorID) *ledger.Ledger {
		o := ledger.Options{Actor: actor, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}, RetireAfter: time.Hour}
		clock.opts(&o)
		l, err := ledger.New(fs, "k", o)
		require.NoError(t, err)
		return l
	}
	a, b, c := newLedger("a"), newLedger("b"), newLedger("c")
	// A: fetch, record fetch, put held; the retry's fetch refused.
	fs.SetPolicy(counterCalls(faulty.Script(faulty.Pass, faulty.Hold, faulty.Refuse)))
	_, err := a.Credit(ctx, "x", 1)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	fs.SetPolicy(nil)
	_, err = b.Credit(ctx, "x", 1)
	require.NoError(t, err)
	require.NoError(t, fs.DeliverAll()) // A's write lands after B's
	want := int64(1)
	for i := 1; i <= 4; i++ {
		clock.Add(time.Hour)
		_, err := c.Credit(ctx, crdt.TxnID(fmt.Sprint("c", i)), 10)
		require.NoError(t, err)
		want += 10
	}
	got, err := newLedger("reader").Find(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got.Value())
	live := slices.Sorted(maps.Keys(maps.Collect(got.LiveActors())))
	require.Equal(t, []crdt.ActorID{c.Writer()}, slices.DeleteFunc(live, func(x crdt.ActorID) bool { return x != c.Writer() && x != a.Writer() && x != b.Writer() }),
		"A and B retired, only C live")
}

// Twenty idle incarnations linked in a chain, each sharing a transaction
// with the next, are more than one write retires (MaxRetirePerWrite) and
// none of them retires alone. They retire together once every one of them
// is idle and recorded, the value unchanged. Before, every pass picked the
// same sixteen, their RetireAll declined because the chain went on
// outside them, and the entries stayed for ever.
func TestIdleChainRetires(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	const n = 20
	var chain *tpncounter.Counter
	for i := range n {
		one, err := tpncounter.New(tpncounter.Options{})
		require.NoError(t, err)
		w := crdt.ActorID(fmt.Sprintf("w%02d~aaaaaaaa", i))
		for _, x := range []int{i, i + 1} {
			_, err := one.Apply(w, crdt.TxnID(fmt.Sprint("t", x)), 1)
			require.NoError(t, err)
		}
		if chain == nil {
			chain = one
		} else {
			require.NoError(t, chain.Merge(one))
		}
	}
	require.Equal(t, int64(n+1), chain.Value())
	b, err := chain.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, st.Put(ctx, "k", "seed", b, nil))

	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	o := ledger.Options{Actor: "c", RetireAfter: time.Hour}
	clock.opts(&o)
	c, err := ledger.New(st, "k", o)
	require.NoError(t, err)
	want := int64(n + 1)
	for i := 1; i <= 5; i++ {
		_, err := c.Credit(ctx, crdt.TxnID(fmt.Sprint("c", i)), 10)
		require.NoError(t, err)
		want += 10
		clock.Add(time.Hour)
	}
	got, err := c.Find(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got.Value())
	live := slices.Collect(maps.Keys(maps.Collect(got.LiveActors())))
	require.Equal(t, []crdt.ActorID{c.Writer()}, live, "the whole chain retired")
}
