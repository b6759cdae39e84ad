package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLateCopyOfADeadWriter, with the defaults: x's write by A times out
// in the network and A's process stops (a restart). The retry of x, on B
// (the new incarnation, or any other writer), applies and records x; B's
// later credits fold x out of its entry (counted in its total). Then A's
// held Put lands: A's entry holds x, which nothing else holds, so x counts
// twice. A's ledger would take its copy out at its next write (SPEC.md
// 6.11 step 3), but it never writes again. Once A is idle for RetireAfter,
// B's retirement pass finds the copy late (x's record names B, past it
// without x) and retires A with the copy left out (6.9): x counts once,
// and a retry of x is still recognised. Before, the pass declined a
// writer with a late copy, and x counted twice for good.
func TestLateCopyOfADeadWriter(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	mk := func(st store.Siblings, actor crdt.ActorID) *ledger.Ledger {
		o := ledger.Options{Actor: actor}
		clock.opts(&o)
		l, err := ledger.New(st, "k", o)
		require.NoError(t, err)
		return l
	}
	fa := faulty.NewSiblings(mem, faulty.Options{})
	a := mk(fa, "svc")
	_, err := a.Credit(ctx, "a0", 1)
	require.NoError(t, err)
	want := int64(1)
	fa.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(slices.Repeat([]faulty.Fault{faulty.Hold}, 20)...), faulty.MethodPut), func(k string) bool { return k == "k" }))
	_, err = a.Credit(ctx, "x", 100)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.Positive(t, fa.Held())

	b := mk(mem, "svc") // the restarted process: a new incarnation
	r, err := b.Credit(ctx, "x", 100)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, r.Outcome, "nothing landed yet")
	want += 100
	n := 0
	credit := func(k int) {
		for range k {
			n++
			clock.Add(time.Second)
			_, err := b.Credit(ctx, crdt.TxnID(fmt.Sprintf("c%d", n)), 1)
			require.NoError(t, err)
			want++
		}
	}
	credit(100)
	require.False(t, holdsTxn(stored(t, mem), b.Writer(), "x"), "B forgot x")
	require.NoError(t, fa.DeliverAll()) // A's copy of x lands
	for range 6 {
		clock.Add(30 * time.Minute)
		credit(5)
	}
	v, err := mk(mem, "reader").Value(ctx)
	require.NoError(t, err)
	require.Equal(t, want, v, "x counts once")
	_, live := maps.Collect(stored(t, mem).LiveActors())[a.Writer()]
	require.False(t, live, "A is retired")
	r, err = mk(mem, "retry").Credit(ctx, "x", 100)
	require.NoError(t, err)
	require.Contains(t, []tpncounter.Outcome{tpncounter.Duplicate, tpncounter.DuplicateFolded}, r.Outcome)
}
