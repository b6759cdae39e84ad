package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLandAfterALateCopy: A's write of x is held in flight (answered
// ambiguous); x is retried on B, which applies, records and folds it; then
// A's write lands. A service stopping calls Land once (Ledger.Pending):
// that one call must leave x counted once, not twice until another ledger
// retires A's entry (one Find is not enough: its read finds A's late copy,
// and the take-out is written by the next write). Sharded.Land likewise.
// Broken variant, seen to fail (value 206 for 106, 213 for 113): Land
// running Find once (ledger.go Land, `for range 3 {` made `for range 1 {`).
func TestLandAfterALateCopy(t *testing.T) {
	ctx := context.Background()
	opts := func(a crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: a, Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1, Counter: tpncounter.Options{HistoryLength: 2}}
	}
	type writer interface {
		Credit(context.Context, crdt.TxnID, int64) (ledger.Result, error)
		Land(context.Context) error
		Value(context.Context) (int64, error)
	}
	for _, c := range []struct {
		name   string
		others int // B's credits after x: enough to fold x on its sub-key
		open   func(st *faulty.Siblings, mem *memory.Siblings) (a, b writer, err error)
	}{
		{"ledger", 5, func(st *faulty.Siblings, mem *memory.Siblings) (writer, writer, error) {
			a, err := ledger.New(st, "k", opts("a"))
			if err != nil {
				return nil, nil, err
			}
			b, err := ledger.New(mem, "k", opts("b"))
			return a, b, err
		}},
		{"sharded", 12, func(st *faulty.Siblings, mem *memory.Siblings) (writer, writer, error) {
			a, err := ledger.NewSharded(st, "hot", 2, opts("a"))
			if err != nil {
				return nil, nil, err
			}
			b, err := ledger.NewSharded(mem, "hot", 2, opts("b"))
			return a, b, err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewSiblings()
			st := faulty.NewSiblings(mem, faulty.Options{})
			a, b, err := c.open(st, mem)
			require.NoError(t, err)
			_, err = a.Credit(ctx, "pre", 1)
			require.NoError(t, err)
			st.SetPolicy(counterCalls(faulty.Only(func(faulty.Call) faulty.Fault { return faulty.Hold }, "Put")))
			_, err = a.Credit(ctx, "x", 100)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			st.SetPolicy(nil)
			r, err := b.Credit(ctx, "x", 100)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, r.Outcome)
			for i := range c.others { // B records x and folds it
				_, err := b.Credit(ctx, crdt.TxnID(fmt.Sprint("o", i)), 1)
				require.NoError(t, err)
			}
			require.NoError(t, st.DeliverAll()) // A's writes land late
			require.NoError(t, a.Land(ctx))     // A's service stops
			require.NoError(t, b.Land(ctx))
			v, err := b.Value(ctx)
			require.NoError(t, err)
			require.EqualValues(t, 101+c.others, v, "x counted once after A's Land")
		})
	}
}
