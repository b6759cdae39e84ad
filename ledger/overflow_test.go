package ledger_test

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestOverflowKeepsTheKey: two ledgers that could not see each other (b's
// read is stale) each credit (or debit) 2^62 + 10, so the account holds
// about ±2^63. The key stays readable and writable (SPEC.md 6.2): Value
// fails with crdt.ErrOverflow, a change further out is refused and changes
// nothing, a retry is still recognised, and a change back brings the value
// into range, after which the other sign applies again.
func TestOverflowKeepsTheKey(t *testing.T) {
	for _, s := range []int64{1, -1} {
		t.Run(fmt.Sprint("sign=", s), func(t *testing.T) {
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
			res, err := a.Update(ctx, "x1", s*half)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, res.Outcome)
			staleNext.Store(true) // b reads the state before x1
			res, err = b.Update(ctx, "x2", s*half)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, res.Outcome)
			require.Equal(t, 1+s*half, res.Value, "b did not see x1")

			exact := new(big.Int).Add(big.NewInt(1), new(big.Int).Mul(big.NewInt(2*s), big.NewInt(half)))
			clamped := map[int64]int64{1: math.MaxInt64, -1: math.MinInt64}[s]
			for _, l := range []*ledger.Ledger{a, b} {
				_, err = l.Value(ctx)
				require.ErrorIs(t, err, crdt.ErrOverflow)
				c, err := l.Find(ctx)
				require.NoError(t, err, "the key stays readable")
				require.Equal(t, exact.String(), c.BigValue().String())
				require.Equal(t, clamped, c.Value())
			}
			before := stored(t, mem)
			_, err = a.Update(ctx, "x3", s)
			require.ErrorIs(t, err, crdt.ErrOverflow)
			require.True(t, before.Equal(stored(t, mem)), "a refused change stores nothing")
			res, err = b.Update(ctx, "x1", s*half)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Duplicate, res.Outcome, "a retry is recognised past int64")
			require.Equal(t, clamped, res.Value, "Result.Value clamps")

			res, err = b.Update(ctx, "back", -s<<62)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, res.Outcome)
			require.Equal(t, 1+s*(2*half-1<<62), res.Value)
			_, err = a.Update(ctx, "x3", s)
			require.NoError(t, err)
			for _, l := range []*ledger.Ledger{a, b} {
				v, err := l.Value(ctx)
				require.NoError(t, err)
				require.Equal(t, 1+s*(2*half-1<<62+1), v)
			}
		})
	}
}

// TestShardedValueSumsExactly: one sub-key of a Sharded account passes
// int64 (two writers that could not see each other), another holds a
// debit that brings the account back: Value sums the sub-keys exactly and
// returns the account's balance.
func TestShardedValueSumsExactly(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	lb, staleNext := staleOnce(mem)
	a, err := ledger.NewSharded(mem, "acct", 2, ledger.Options{Actor: "a"})
	require.NoError(t, err)
	b, err := ledger.NewSharded(lb, "acct", 2, ledger.Options{Actor: "b"})
	require.NoError(t, err)
	on := func(shard int, prefix string) crdt.TxnID {
		for i := 0; ; i++ {
			if x := crdt.TxnID(fmt.Sprint(prefix, i)); ledger.ShardOf(x, 2) == shard {
				return x
			}
		}
	}
	const half = 1<<62 + 10
	_, err = b.Credit(ctx, on(0, "open"), 1)
	require.NoError(t, err)
	_, err = a.Credit(ctx, on(0, "x"), half)
	require.NoError(t, err)
	staleNext.Store(true) // b's read of sub-key 0 misses a's credit
	_, err = b.Credit(ctx, on(0, "y"), half)
	require.NoError(t, err)
	_, err = a.Value(ctx)
	require.ErrorIs(t, err, crdt.ErrOverflow, "the account's sum does not fit yet")
	_, err = a.Debit(ctx, on(1, "d"), 1<<62)
	require.NoError(t, err)
	for _, s := range []*ledger.Sharded{a, b} {
		v, err := s.Value(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1+2*half-1<<62), v)
	}
}
