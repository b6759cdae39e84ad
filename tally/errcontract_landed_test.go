package tally_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/tally"
)

// The store contract (package store, "Errors"): a write answered with any
// error but crdt.ErrUnavailable may have landed. Here a mutator's flush
// lands and is answered crdt.ErrTooLarge (or ErrCorruptEncoding,
// ErrInvalidKey). send stops at it as a refusal (counter.go, send:
// retry.Invalid, not ambiguous) and flush discards the staged update
// (mutator.go, flush, default case), telling the caller "nothing was
// written ... the caller may apply them again" (Mutator doc). The caller
// does, through a new mutator (the process restarted), and the landed
// shard of the first still counts: the update counts twice.
func TestErrorContractTallyLandedFlushAnsweredInvalidCountsTwice(t *testing.T) {
	for _, k := range errKinds {
		t.Run(k.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			clk := newClock()
			st := newErrPartitions(memory.NewPartitions())
			cfg := tally.Options{Lifetime: 24 * time.Hour, Margin: time.Hour, MaxSkew: time.Hour, Grace: 3 * time.Hour,
				Clock: clk.Now, NewID: ids()}
			c, err := tally.New[*tally.Sum](st, "k", cfg)
			require.NoError(t, err)
			m1, err := c.NewMutator()
			require.NoError(t, err)
			st.setPlan(map[int]injection{1: {apply: true, err: k.err}}) // the flush lands, answered k
			err = m1.Update(ctx, add(1))
			st.setPlan(nil)
			t.Logf("update on m1: %v", err)
			switch {
			case err == nil:
			case m1.Unresolved(): // ambiguous: the documented way is Retry
				require.NoError(t, m1.Retry(ctx))
			default: // "discarded ... may apply them again": a new process does
				clk.Advance(time.Millisecond)
				m2, err := c.NewMutator()
				require.NoError(t, err)
				require.NoError(t, m2.Update(ctx, add(1)))
			}
			v, err := c.ReadComplete(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(1), v.Value(), "one update of 1\n%v", st.log)
		})
	}
}
