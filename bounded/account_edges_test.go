package bounded_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// edgeAccount opens an Account of actor over st that does not wait between
// attempts.
// counterCalls gives p the calls of the account's key alone: the record
// calls (SPEC.md 13.5, "Records") pass untouched.
func counterCalls(p faulty.Policy) faulty.Policy {
	return faulty.Keys(p, func(key string) bool { return !bounded.IsRecordKey(key) })
}

func edgeAccount(t *testing.T, st *faulty.Siblings, actor crdt.ActorID) *bounded.Account {
	t.Helper()
	a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: actor, Backoff: bounded.Backoff{Initial: -1}})
	require.NoError(t, err)
	return a
}

// TestGrantSkipsARequestPastInt64 (found by a review): past int64, a
// debit that moves the value back applies (SPEC.md 13.5, Value). b's
// credit of 2^63−4 is in doubt when b asks for 10, and a's credit of as
// much takes the value past int64; a's step 5 granting b's request would
// take b's rights past int64 too. That grant failed the call, so no Debit,
// Sync or Close of a could write until b debits. It is skipped instead.
func TestGrantSkipsARequestPastInt64(t *testing.T) {
	ctx := context.Background()
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	a, b := edgeAccount(t, st, "a"), edgeAccount(t, st, "b")
	st.SetPolicy(func(c faulty.Call) faulty.Fault { // b's put is lost, then refused
		if bounded.IsRecordKey(c.Key) {
			return faulty.Pass
		}
		if c.Method == faulty.MethodPut {
			return faulty.Lose
		}
		if c.N > 1 {
			return faulty.Refuse
		}
		return faulty.Pass
	})
	_, err := b.Credit(ctx, "t1", math.MaxInt64-3)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	st.SetPolicy(nil)
	_, err = a.Credit(ctx, "t2", math.MaxInt64-3)
	require.NoError(t, err)
	r, err := b.Debit(ctx, "t3", 10) // t1 in doubt is not spendable: b asks for 10
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.Equal(t, int64(10), r.Requested)
	r, err = a.Debit(ctx, "t4", 10)
	require.NoError(t, err, "a debit that moves the value back applies")
	require.Equal(t, bounded.Applied, r.Outcome)
	c, err := a.Sync(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(10), c.Outstanding(b.Writer()), "b's request waits for b's debit")
	_, err = a.Close(ctx, "")
	require.NoError(t, err)
}

// TestCopyOfAnotherAmountNotTakenBack (found by a review): a caller reuses
// id t with another amount on an Account whose read is stale. Both calls
// are acknowledged, so both copies count; settling took back the larger
// holder's acknowledged copy because the smaller holds t, whatever its
// amount. A copy is taken back only for one of its own amount (SPEC.md
// 13.5 step 3).
func TestCopyOfAnotherAmountNotTakenBack(t *testing.T) {
	ctx := context.Background()
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{RecordWrites: true})
	a, b := edgeAccount(t, st, "a"), edgeAccount(t, st, "b")
	require.Less(t, a.Writer(), b.Writer())
	_, err := a.Sync(ctx) // a's next stale read shows the empty key
	require.NoError(t, err)
	r, err := b.Credit(ctx, "t", 5)
	require.NoError(t, err)
	require.Equal(t, bounded.Applied, r.Outcome)
	// Both of a's reads stale: the account's key, and t's record key.
	st.SetPolicy(faulty.Only(faulty.Script(faulty.Stale, faulty.Stale), faulty.MethodFetch))
	r, err = a.Credit(ctx, "t", 7)
	require.NoError(t, err)
	require.Equal(t, bounded.Applied, r.Outcome, "a did not see b's copy")
	st.SetPolicy(nil)
	c, err := b.Sync(ctx)
	require.NoError(t, err)
	require.Equal(t, []bounded.Holder{{Actor: a.Writer(), Amount: 7}, {Actor: b.Writer(), Amount: 5}}, c.Holders("t"))
	require.Equal(t, int64(12), c.Value(), "both acknowledged calls count")
	require.Equal(t, []crdt.TxnID{"t"}, c.Doubled())
}

// TestCloseWithdrawsItsRequest (found by a review): an Account that asked
// for rights and then closed kept its request, and the others went on
// granting to it, rights no debit could use again. Close withdraws it.
func TestCloseWithdrawsItsRequest(t *testing.T) {
	ctx := context.Background()
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	a, b := edgeAccount(t, st, "a"), edgeAccount(t, st, "b")
	_, err := a.Credit(ctx, "c1", 10)
	require.NoError(t, err)
	r, err := b.Debit(ctx, "d1", 4)
	require.ErrorIs(t, err, crdt.ErrInsufficientRights)
	require.Equal(t, int64(4), r.Requested)
	_, err = b.Close(ctx, a.Writer())
	require.NoError(t, err)
	_, err = a.Credit(ctx, "c2", 10) // a's write grants what is requested
	require.NoError(t, err)
	c, err := a.Sync(ctx)
	require.NoError(t, err)
	require.Zero(t, c.Outstanding(b.Writer()))
	require.Zero(t, c.Rights(b.Writer()), "nothing granted to the closed incarnation")
	require.Equal(t, int64(20), c.Rights(a.Writer()))
}

// TestRequestedIsTheOutstandingRequest: after a refused debit,
// Result.Requested is the account's outstanding request once the call
// ended (SPEC.md 13.5): the shortfall; an earlier larger request that is
// not met; 0 when the whole balance above the bound is short and nothing
// was asked before, else the earlier request, which stays.
func TestRequestedIsTheOutstandingRequest(t *testing.T) {
	ctx := context.Background()
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	a, b := edgeAccount(t, st, "a"), edgeAccount(t, st, "b")
	_, err := a.Credit(ctx, "c", 10) // a holds the whole value and never writes again
	require.NoError(t, err)
	for _, step := range []struct {
		txn       crdt.TxnID
		n, wanted int64
	}{
		{"d1", 15, 0},  // beyond the value: nothing asked
		{"d2", 4, 4},   // the shortfall
		{"d3", 3, 4},   // within the request: it stays 4
		{"d4", 20, 4},  // beyond the value: the earlier request stays
		{"d5", 10, 10}, // the whole value: asked
	} {
		res, err := b.Debit(ctx, step.txn, step.n)
		require.ErrorIs(t, err, crdt.ErrInsufficientRights, string(step.txn))
		require.Equal(t, step.wanted, res.Requested, "%s of %d", step.txn, step.n)
		c, err := b.Sync(ctx)
		require.NoError(t, err)
		require.Equal(t, step.wanted, c.Outstanding(b.Writer()), "%s: Requested is the outstanding request", step.txn)
	}
}

// TestResultRightsCountTheCreditsTheCallConfirmed: Result.Rights is what
// the account may debit once the call ended. A credit answered
// ErrAmbiguousWrite is not spendable until a call confirms it (SPEC.md
// 13.5, U); the call that confirms it, by its answer or by writing its
// record, reports its rights as spendable.
func TestResultRightsCountTheCreditsTheCallConfirmed(t *testing.T) {
	ctx := context.Background()
	t.Run("the retry of the credit", func(t *testing.T) {
		r := newDoubtRig(t)
		a := r.open("a", 0)
		r.script(faulty.Pass, faulty.Lose, faulty.Pass, faulty.Lose) // both Puts lost
		_, err := a.Credit(ctx, "x", 5)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		r.st.SetPolicy(nil)
		res, err := a.Credit(ctx, "x", 5)
		require.NoError(t, err)
		require.Equal(t, int64(5), res.Rights, "x is acknowledged: its 5 are spendable")
		_, err = a.Debit(ctx, "d", 5)
		require.NoError(t, err, "and a debit of them applies")
	})
	t.Run("a transfer that writes the credit's record", func(t *testing.T) {
		r := newDoubtRig(t)
		a, b := r.open("a", 0), r.open("b", 0)
		_, err := a.Credit(ctx, "c", 10)
		require.NoError(t, err)
		r.script(faulty.Pass, faulty.LoseAck, faulty.Refuse) // y lands, unanswered
		_, err = a.Credit(ctx, "y", 1)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		r.st.SetPolicy(nil)
		res, err := a.Transfer(ctx, b.Writer(), 4)
		require.NoError(t, err)
		require.Len(t, r.recs("y"), 1, "the transfer wrote y's record")
		require.Equal(t, int64(7), res.Rights, "10 + 1 − 4: y's record is written, so y is spendable")
	})
}

// TestRetryOfALostCreditIsDuplicate: SPEC.md 13.5's outcome is applied
// only when the call's step 4 applied the transaction. A credit whose
// every Put was lost (ErrAmbiguousWrite, nothing stored) stays in the
// account's last write; its retry on the same Account applies nothing
// and answers Duplicate, although its Put is what lands it.
func TestRetryOfALostCreditIsDuplicate(t *testing.T) {
	ctx := context.Background()
	r := newDoubtRig(t)
	a := r.open("a", 0)
	r.script(faulty.Pass, faulty.Lose, faulty.Pass, faulty.Lose)
	_, err := a.Credit(ctx, "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	r.st.SetPolicy(nil)
	require.Zero(t, r.value(), "nothing landed")
	res, err := a.Credit(ctx, "x", 5)
	require.NoError(t, err)
	require.Equal(t, bounded.Duplicate, res.Outcome)
	require.Equal(t, int64(5), r.value(), "this call landed x, once")
}
