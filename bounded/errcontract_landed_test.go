package bounded_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
)

// The store contract (package store, "Errors"): a write answered with any
// error but crdt.ErrUnavailable may have landed. Here an Account's put of
// t1 lands and is answered crdt.ErrTooLarge (or ErrCorruptEncoding,
// ErrInvalidKey). The cycle takes that as "did not land" (account.go,
// cycle, case retry.Invalid): it undoes its entry and does not keep t1 as
// unrecorded, so no record of t1 is ever written, although the next read
// merges the landed entry back and t1 counts. Once t1 leaves the window,
// the caller's retry of t1 (on another Account of the key) finds neither
// the counter's copy nor a record and applies it again: counted twice.
func TestErrorContractBoundedLandedPutAnsweredInvalidCountsTwice(t *testing.T) {
	for _, k := range errKinds {
		t.Run(k.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st := newErrSiblings(memory.NewSiblings())
			opts := func(actor crdt.ActorID) bounded.AccountOptions {
				return bounded.AccountOptions{Actor: actor, Backoff: bounded.Backoff{Initial: -1}, Counter: bounded.Options{Window: 2}}
			}
			a, err := bounded.Open(st, "acct", opts("a"))
			require.NoError(t, err)
			b, err := bounded.Open(st, "acct", opts("b"))
			require.NoError(t, err)
			st.setPlan(map[int]injection{1: {apply: true, err: k.err}}) // t1's put lands, answered k
			_, err1 := a.Credit(ctx, "t1", 1)
			st.setPlan(nil)
			t.Logf("t1 on a: %v", err1)
			for i := 2; i <= 5; i++ { // t1 leaves a's window of 2
				_, err := a.Credit(ctx, crdt.TxnID(fmt.Sprint("t", i)), 10)
				require.NoError(t, err)
			}
			var res bounded.Result
			if err1 != nil { // the caller retries t1
				res, err = b.Credit(ctx, "t1", 1)
				require.NoError(t, err)
				t.Logf("retry of t1 on b: %v", res.Outcome)
			}
			z, err := bounded.Open(st, "acct", opts("z"))
			require.NoError(t, err)
			v, err := z.Value(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(41), v, "t1 (1) once and t2..t5 (10 each); the retry was %v\n%v", res.Outcome, st.log)
		})
	}
}
