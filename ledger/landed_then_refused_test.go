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

// A credit whose first Put landed with its acknowledgement lost, after
// which the store refused every call, fails with an error that wraps
// crdt.ErrAmbiguousWrite and crdt.ErrUnavailable both (SPEC.md 2.3): the
// docs of Update and ErrUnavailable say to test ErrAmbiguousWrite first,
// for a caller that took ErrUnavailable for "did not land" and sent the
// credit again under a new id would count it twice (review F of stop
// 101). The same id sent again once the store is back is a duplicate.
func TestLandedThenRefusedWrapsBoth(t *testing.T) {
	ctx := context.Background()
	landed := false
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: func(c faulty.Call) faulty.Fault {
		switch {
		case !landed && c.Method == faulty.MethodPut:
			landed = true
			return faulty.LoseAck
		case landed:
			return faulty.Refuse
		}
		return faulty.Pass
	}})
	l, err := ledger.New(fs, "acct", ledger.Options{Actor: "a", Backoff: obsNoWait})
	require.NoError(t, err)
	res, err := l.Credit(ctx, "pay-1", 10)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.False(t, res.Landed)

	fs.SetPolicy(nil)
	l2, err := ledger.New(fs, "acct", ledger.Options{Actor: "b"})
	require.NoError(t, err)
	res, err = l2.Credit(ctx, "pay-1", 10)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, res.Outcome, "the first copy landed")
	v, err := l2.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(10), v)
}
