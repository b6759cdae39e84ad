package bounded_test

import (
	"context"
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestOverflowKeepsTheKey: two Accounts that could not see each other (b
// reads the key stale) each credit 2^62 + 10, and the siblings' value is
// 2^63 + 20. The key stays readable and writable (SPEC.md 13.1, 13.5):
// Value fails ErrOverflow and Sync gives the exact value; a credit further
// out is refused and stores nothing; a retry is still a duplicate; a debit
// that moves the value back applies, and credits apply again once it fits.
func TestOverflowKeepsTheKey(t *testing.T) {
	ctx := context.Background()
	inner := memory.NewSiblings()
	st := faulty.NewSiblings(inner, faulty.Options{Policy: counterCalls(faulty.Only(faulty.Script(faulty.Pass, faulty.Stale), faulty.MethodFetch))})
	a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "a"})
	require.NoError(t, err)
	b, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "b"})
	require.NoError(t, err)
	const half = 1<<62 + 10
	_, err = a.Credit(ctx, "a1", half)
	require.NoError(t, err)
	res, err := b.Credit(ctx, "b1", half) // its read is stale: a sibling
	require.NoError(t, err)
	require.Equal(t, int64(half), res.Value)
	sibs, _, err := inner.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Len(t, sibs, 2, "two writers that could not see each other")

	past := pastInt64(20)
	for _, acc := range []*bounded.Account{a, b} {
		_, err = acc.Value(ctx)
		require.ErrorIs(t, err, crdt.ErrOverflow, "the value does not fit")
		c, err := acc.Sync(ctx)
		require.NoError(t, err, "the key stays readable")
		require.Equal(t, past, c.BigValue())
		require.Equal(t, int64(math.MaxInt64), c.Value(), "clamped")
	}
	before, _, err := inner.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Len(t, before, 1, "Sync wrote the merge")

	_, err = a.Credit(ctx, "a2", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow, "a credit further out")
	res, err = b.Credit(ctx, "b1", half)
	require.NoError(t, err)
	require.Equal(t, bounded.Duplicate, res.Outcome, "a retry is recognised")
	require.Equal(t, int64(math.MaxInt64), res.Value, "Result.Value clamps")
	after, _, err := inner.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing stored")

	res, err = b.Debit(ctx, "b2", 20)
	require.NoError(t, err, "a debit towards int64 applies")
	require.Equal(t, bounded.Applied, res.Outcome)
	_, err = a.Credit(ctx, "a2", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow, "2^63 still does not fit")
	_, err = a.Debit(ctx, "a3", 1)
	require.NoError(t, err)
	v, err := a.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), v, "exactly 2^63 - 1 fits")
	_, err = a.Credit(ctx, "a2", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow)
	_, err = b.Debit(ctx, "b3", 1)
	require.NoError(t, err)
	_, err = a.Credit(ctx, "a2", 1)
	require.NoError(t, err, "credits apply again")
	v, err = b.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), v)
}

// TestOverflowDoubledDebitStays: a debit two actors hold while the value
// is past int64. The larger holder's Account cannot take its copy back
// (that would take the value further out): the copy stays doubled, and
// the Account's calls still work (SPEC.md 13.5 step 3).
func TestOverflowDoubledDebitStays(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	b, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "b"})
	require.NoError(t, err)
	var sides []*bounded.Counter
	for _, actor := range []crdt.ActorID{"a", b.Writer()} { // a < b~...: b is the larger holder
		c, err := bounded.New(bounded.Options{})
		require.NoError(t, err)
		_, err = c.Apply(actor, crdt.TxnID("c-"+actor), 1<<62+10)
		require.NoError(t, err)
		_, err = c.Apply(actor, "d1", -5)
		require.NoError(t, err)
		sides = append(sides, c)
	}
	require.NoError(t, sides[0].Merge(sides[1]))
	require.Equal(t, []crdt.TxnID{"d1"}, sides[0].Doubled())
	enc, err := sides[0].MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, st.Put(ctx, "k", "a", enc, nil))

	c, err := b.Sync(ctx)
	require.NoError(t, err, "the Retract is skipped, not the call")
	require.Equal(t, pastInt64(10), c.BigValue())
	require.Equal(t, []crdt.TxnID{"d1"}, c.Doubled())
	_, err = b.Debit(ctx, "d2", 20)
	require.NoError(t, err)
	c, err = b.Sync(ctx)
	require.NoError(t, err)
	require.Empty(t, c.Doubled(), "back in int64: b takes its copy back")
	require.Equal(t, pastInt64(-5), c.BigValue())
}

// pastInt64 returns 2^63 + n.
func pastInt64(n int64) *big.Int {
	return new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 63), big.NewInt(n))
}

// TestOverflowOfAnAccountsLifetimeCredits: an Account's credits and
// debits are each a sum over its incarnation's life (SPEC.md 13.1). Once
// its credits reach 2^63 − 1, a credit fails crdt.ErrOverflow even at
// value 0, and stores nothing; its debits go on, and a new Account of
// the same actor, a new incarnation, credits.
func TestOverflowOfAnAccountsLifetimeCredits(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "a"})
	require.NoError(t, err)
	_, err = a.Credit(ctx, "c1", math.MaxInt64)
	require.NoError(t, err)
	_, err = a.Debit(ctx, "d1", math.MaxInt64-1)
	require.NoError(t, err)
	before, _, err := st.Fetch(ctx, "k")
	require.NoError(t, err)
	_, err = a.Credit(ctx, "c2", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow)
	after, _, err := st.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing stored")
	res, err := a.Debit(ctx, "d2", 1)
	require.NoError(t, err)
	require.Zero(t, res.Value)

	again, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "a"})
	require.NoError(t, err)
	res, err = again.Credit(ctx, "c2", 1)
	require.NoError(t, err)
	require.Equal(t, int64(1), res.Value)
}
