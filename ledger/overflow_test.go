package ledger_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestOverflowKeepsTheKey: two ledgers that could not see each other (b's
// read is stale) each credit 2^62 + 10, so the account holds 2^63 + 20.
// The key stays readable and writable (SPEC.md 6.6): Value fails with
// crdt.ErrOverflow, a credit is refused with it and changes nothing, a
// retry is still recognised, and a debit brings the value back, after
// which credits apply again.
func TestOverflowKeepsTheKey(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	lb, staleNext := staleOnce(mem)
	a, err := ledger.New(mem, "acct", ledger.Options{Actor: "a"})
	require.NoError(t, err)
	b, err := ledger.New(lb, "acct", ledger.Options{Actor: "b"})
	require.NoError(t, err)
	const half = 1<<62 + 10
	_, err = b.Credit(ctx, "open", 1) // b's entry exists before its stale read
	require.NoError(t, err)
	res, err := a.Credit(ctx, "x1", half)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	staleNext.Store(true) // b reads the state before x1
	res, err = b.Credit(ctx, "x2", half)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	require.Equal(t, int64(half+1), res.Value, "b did not see x1")

	for _, l := range []*ledger.Ledger{a, b} {
		_, err = l.Value(ctx)
		require.ErrorIs(t, err, crdt.ErrOverflow)
		c, err := l.Find(ctx)
		require.NoError(t, err, "the key stays readable")
		require.Equal(t, "9223372036854775829", c.BigValue().String())
		require.Equal(t, int64(math.MaxInt64), c.Value())
	}
	before := stored(t, mem)
	_, err = a.Credit(ctx, "x3", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow)
	require.True(t, before.Equal(stored(t, mem)), "a refused credit changes nothing stored")
	res, err = b.Credit(ctx, "x1", half)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, res.Outcome, "a retry is recognised past int64")
	require.Equal(t, int64(math.MaxInt64), res.Value, "Result.Value clamps")

	res, err = b.Debit(ctx, "d1", 1<<62)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	require.Equal(t, int64(1<<62+21), res.Value)
	_, err = a.Credit(ctx, "x3", 1)
	require.NoError(t, err)
	for _, l := range []*ledger.Ledger{a, b} {
		v, err := l.Value(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1<<62+22), v)
	}
}
