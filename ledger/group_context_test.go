package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestEndedContextOfATransactionInDoubt: x's first call is ambiguous and
// its write stays pending. A retry of x whose context has ended, when its
// cycle starts or while it is queued, wrote nothing, but x may still land
// with the pending write (it does): its error wraps crdt.ErrAmbiguousWrite
// beside the context's, as a retry whose Fetch is refused does (SPEC.md
// 6.9, group commit). A call of y, which no write holds, gets the
// context's error alone.
func TestEndedContextOfATransactionInDoubt(t *testing.T) {
	for _, queued := range []bool{false, true} {
		t.Run(fmt.Sprint("queued=", queued), func(t *testing.T) {
			noLeak(t)
			r := newGroupRig(t)
			l := r.ledger(ledger.Options{RetryCount: 1})
			ctx := context.Background()
			r.st.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.Hold, faulty.Hold), faulty.MethodPut)))
			_, err := l.Credit(ctx, "x", 5)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			require.True(t, l.Pending())
			r.st.SetPolicy(nil)

			ended := func(txn crdt.TxnID) (ledger.Result, error) {
				cctx, cancel := context.WithCancel(ctx)
				if !queued {
					cancel()
					return l.Credit(cctx, txn, 5)
				}
				defer cancel()
				out := r.runGroup(l, "lead-"+txn, []req{{ctx: cctx, txn: txn, amount: 5}}, func() {
					cancel()
					waitFor(t, func() bool { return ledger.Queued(l) == 0 }, "left the queue")
				})
				return out[1].res, out[1].err
			}
			res, err := ended("x")
			require.ErrorIs(t, err, context.Canceled)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x may land with the pending write")
			require.False(t, res.Landed)
			require.NoError(t, r.st.DeliverAll())
			require.NotEqual(t, tpncounter.Unknown, r.stored().Status("x"), "and x landed")

			res, err = ended("y")
			require.ErrorIs(t, err, context.Canceled)
			require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite, "no write holds y")
			require.False(t, res.Landed)
		})
	}
}
