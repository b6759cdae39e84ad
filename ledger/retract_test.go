package ledger_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// A transaction delivered to two ledgers at once is counted exactly once
// even when the one whose write is in doubt reads a stale state on its
// retry. A's Put of x lands but loses its acknowledgement; B, reading from
// before it, applies x too and records it; B's next write drops its copy
// of x in favour of A's (A's writer id is smaller, so A's copy counts). A's
// retry reads a state from before B's write and finds B's record: taking
// x out of its write then would leave x held by no one. The record names
// B's entry at the version that held x, and A's stale state holds an
// older one, so A's attempt fails as unavailable instead; its next, fresh,
// read sees its own copy landed. Before records carried the version, A
// took x back and x was lost. B's next write, which drops its copy in
// favour of A's, first records A's copy as the one that counts.
func TestRetractionNeedsAFreshRead(t *testing.T) {
	ctx := context.Background()
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{RecordWrites: true})
	newLedger := func(actor crdt.ActorID) *ledger.Ledger {
		l, err := ledger.New(fs, "k", ledger.Options{Actor: actor, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}})
		require.NoError(t, err)
		return l
	}
	a, b := newLedger("a"), newLedger("b") // a's writer id sorts first
	_, err := a.Credit(ctx, "w", 1)        // the key exists: stale reads have a state to show
	require.NoError(t, err)

	// A: fetch, record read, put (lands, acknowledgement lost), fetch refused.
	fs.SetPolicy(counterCalls(faulty.Script(faulty.Pass, faulty.LoseAck, faulty.Refuse)))
	_, err = a.Debit(ctx, "x", 43)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, a.Pending())

	// B: its fetch is served from before A's write; it applies x.
	fs.SetPolicy(counterCalls(faulty.Script(faulty.Stale)))
	r, err := b.Debit(ctx, "x", 43)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, r.Outcome)
	// A retries x; its first fetch is served from before both writes.
	fs.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.StaleBy(2)), faulty.MethodFetch)))
	_, err = a.Debit(ctx, "x", 43)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "a stale read cannot tell whether B still holds x")
	// B writes again, now seeing A's copy: it records A's copy as the one
	// that counts, then drops its own.
	fs.SetPolicy(nil)
	_, err = b.Debit(ctx, "y", 10)
	require.NoError(t, err)
	fs.SetPolicy(nil)
	r, err = a.Debit(ctx, "x", 43)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	require.Equal(t, a.Writer(), r.Owner.Actor, "A's own write landed, and its copy counts")
	_, err = a.Debit(ctx, "z", 1) // A writes again
	require.NoError(t, err)

	c, err := newLedger("reader").Find(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1-43-10-1), c.Value(), "x counted exactly once")
}
