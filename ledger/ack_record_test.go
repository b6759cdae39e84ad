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

// A call made after another call of its transaction was acknowledged is
// recognised even by a ledger whose read of the account's key lags: a's
// call lands but its record's put is lost (ambiguous_write); the caller's
// retry on b is a Duplicate from the counter, acknowledged only once b has
// written the record a's call could not; c, reading the account's key
// stale, then finds that record: Duplicate, not Applied. The value counts
// x once. (Without b's record, c answered Applied.)
func TestDuplicateAcknowledgedOnceRecorded(t *testing.T) {
	ctx := context.Background()
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{RecordWrites: true})
	open := func(actor crdt.ActorID) *ledger.Ledger {
		l, err := ledger.New(fs, "k", ledger.Options{Actor: actor})
		require.NoError(t, err)
		return l
	}
	a, b, c := open("a"), open("b"), open("c")
	_, err := a.Credit(ctx, "t0", 1)
	require.NoError(t, err)

	fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Lose), faulty.MethodPut), ledger.IsRecordKey))
	r, err := a.Credit(ctx, "x", 10)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, r.Landed)

	fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodPut), ledger.IsRecordKey))
	r, err = b.Credit(ctx, "x", 10)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "not acknowledged while the record cannot be written")
	fs.SetPolicy(nil)
	r, err = b.Credit(ctx, "x", 10)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	require.Equal(t, a.Writer(), r.Owner.Actor)

	fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Stale), faulty.MethodFetch), func(k string) bool { return k == "k" }))
	r, err = c.Credit(ctx, "x", 10)
	fs.SetPolicy(nil)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome, "c's read lags, the record does not")
	for _, l := range []*ledger.Ledger{a, b, c} {
		_, err := l.Find(ctx)
		require.NoError(t, err)
	}
	v, err := open("reader").Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(11), v)
}
