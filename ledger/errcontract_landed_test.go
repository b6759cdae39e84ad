package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// The store contract (package store, "Errors"): a write answered with any
// error but crdt.ErrUnavailable may have landed, and callers treat it as
// ambiguous. A Cassandra batch refused as too large after a coordinator
// retry, or an error the adapter maps to crdt.ErrCorruptEncoding or
// crdt.ErrInvalidKey, can come back for a put that took effect.
//
// Here the ledger's first put lands and is answered with such an error.
// The ledger takes t1 back out of its own state (ledger.go, put, the
// retry.Invalid case) although the store holds it; the caller's retry of
// t1 finds it stored and is answered Duplicate, and the ledger's next write,
// which carries the take-out at a larger seq, removes t1 for good: an
// acknowledged transaction that counts 0 times.
func TestErrorContractLedgerLandedPutAnsweredInvalidLosesRetriedTxn(t *testing.T) {
	for _, k := range errKinds {
		t.Run(k.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st := newErrSiblings(memory.NewSiblings())
			opts := func(actor crdt.ActorID) ledger.Options {
				return ledger.Options{Actor: actor, Backoff: ledger.Backoff{Initial: -1}}
			}
			a, err := ledger.New(st, "acct", opts("a"))
			require.NoError(t, err)
			st.setPlan(map[int]injection{1: {apply: true, err: k.err}}) // t1's put lands, answered k
			_, err = a.Update(ctx, "t1", 1)
			st.setPlan(nil)
			t.Logf("t1: %v", err)
			// The caller retries t1 until it is acknowledged.
			var res ledger.Result
			for range 3 {
				if res, err = a.Update(ctx, "t1", 1); err == nil {
					break
				}
			}
			require.NoError(t, err, "retry of t1")
			t.Logf("retry of t1: %v", res.Outcome)
			_, err = a.Update(ctx, "t2", 10)
			require.NoError(t, err)
			z, err := ledger.New(st, "acct", opts("z"))
			require.NoError(t, err)
			v, err := z.Value(ctx)
			require.NoError(t, err)
			has, err := z.HasTransaction(ctx, "t1")
			require.NoError(t, err)
			require.True(t, has, "t1 was acknowledged (%v) but is not in the ledger\n%v", res.Outcome, st.log)
			require.Equal(t, int64(11), v, "t1 (1) acknowledged once, t2 (10)\n%v", st.log)
		})
	}
}

// As above, with the retry made by another ledger of the key, as a caller
// that moves to another process does: it finds t1 stored (Duplicate), and
// the first ledger's next write takes it out.
func TestErrorContractLedgerLandedPutAnsweredInvalidLosesDuplicate(t *testing.T) {
	for _, k := range errKinds {
		t.Run(k.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st := newErrSiblings(memory.NewSiblings())
			opts := func(actor crdt.ActorID) ledger.Options {
				return ledger.Options{Actor: actor, Backoff: ledger.Backoff{Initial: -1}}
			}
			a, err := ledger.New(st, "acct", opts("a"))
			require.NoError(t, err)
			b, err := ledger.New(st, "acct", opts("b"))
			require.NoError(t, err)
			st.setPlan(map[int]injection{1: {apply: true, err: k.err}})
			_, err = a.Update(ctx, "t1", 1)
			st.setPlan(nil)
			t.Logf("t1 on a: %v", err)
			res, err := b.Update(ctx, "t1", 1)
			require.NoError(t, err, "retry of t1 on b")
			t.Logf("retry of t1 on b: %v", res.Outcome)
			_, err = a.Update(ctx, "t2", 10)
			require.NoError(t, err)
			_, err = b.Update(ctx, "t3", 100)
			require.NoError(t, err)
			z, err := ledger.New(st, "acct", opts("z"))
			require.NoError(t, err)
			v, err := z.Value(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(111), v, "t1 acknowledged (%v) on b must count once\n%v", res.Outcome, st.log)
			if res.Outcome == tpncounter.Duplicate {
				has, err := z.HasTransaction(ctx, "t1")
				require.NoError(t, err)
				require.True(t, has)
			}
		})
	}
}
