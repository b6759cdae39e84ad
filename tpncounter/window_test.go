package tpncounter

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
)

// TestWindowHoldsWithDeferredIDs: ids that actor A keeps in its folded
// record because an idle actor B still holds them must not push A's newer
// folded ids out early. x is recognised until A has made h+f later writes.
func TestWindowHoldsWithDeferredIDs(t *testing.T) {
	for _, hf := range []int{2, 3, 10} {
		t.Run(fmt.Sprint(hf), func(t *testing.T) {
			opts := Options{HistoryLength: hf, FoldedLength: hf}
			a, err := New(opts)
			require.NoError(t, err)
			b, _ := New(opts)
			for i := 0; i < hf; i++ { // B holds p0..p(h-1) and then stays idle
				id := crdt.TxnID(fmt.Sprint("p", i))
				apply(t, a, "A", id, 1)
				apply(t, b, "B", id, 1)
			}
			require.NoError(t, a.Merge(b))
			apply(t, a, "A", "x", 100)
			for i := 1; i <= 2*hf; i++ { // the documented window: h+f later writes
				apply(t, a, "A", crdt.TxnID(fmt.Sprint("y", i)), 10)
				before := a.Value()
				out, err := a.Clone().Apply("C", "x", 100)
				require.NoError(t, err)
				require.NotEqual(t, Applied, out, "retry of x after %d later writes counted again (value %d)", i, before)
				require.NotEqual(t, Unknown, a.Status("x"))
			}
			require.Positive(t, a.Stats().Deferred, "the test must exercise deferred ids")
		})
	}
}

// An entry at MaxSeq refuses to change rather than wrap to 0 (a wrapped
// entry would lose to every older one in Merge).
func TestSeqDoesNotWrap(t *testing.T) {
	c := mustNew(t, 1)
	apply(t, c, "a", "t1", 5)
	apply(t, c, "a", "t2", 5)
	c.p.entries["a"].seq = MaxSeq
	before := c.Clone()
	_, err := c.Apply("a", "t3", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow)
	_, err = c.Compact("a")
	require.ErrorIs(t, err, crdt.ErrOverflow)
	require.True(t, c.Equal(before))
	require.Equal(t, Duplicate, apply(t, c, "a", "t2", 5))
	require.Equal(t, Applied, apply(t, c, "b", "t3", 1), "other actors write on")
}

// Nil values follow crdt.State's rule: merging nil or itself changes
// nothing; read-only methods on nil answer as the empty state does.
func TestNilValues(t *testing.T) {
	c := mustNew(t, 2)
	apply(t, c, "a", "t", 5)
	before := c.Clone()
	require.NoError(t, c.Merge(nil))
	require.NoError(t, c.Merge(c))
	require.True(t, c.Equal(before))
	g := c.Positive()
	require.NoError(t, g.Merge(nil))
	require.NoError(t, g.Merge(g))
	require.Equal(t, int64(5), g.Value())

	var nc *Counter
	var ng *GCounter
	require.Zero(t, nc.Value())
	require.Equal(t, Unknown, nc.Status("t"))
	require.False(t, nc.HasTransaction("t"))
	_, ok := nc.Owner("t")
	require.False(t, ok)
	require.Empty(t, nc.Conflicts())
	require.Zero(t, nc.Stats())
	require.True(t, nc.Horizon().IsZero())
	require.True(t, nc.Leq(c))
	require.False(t, c.Leq(nc))
	require.True(t, nc.Equal(mustNew(t, 2)))
	require.Zero(t, ng.Value())
	require.Zero(t, ng.Len())
	require.Empty(t, ng.Actors())
	require.Equal(t, Unknown, ng.Status("t"))
	_, ok = ng.Entry("a")
	require.False(t, ok)
	require.True(t, ng.Equal(&GCounter{}))
	require.False(t, ng.Equal(g))
	require.Panics(t, func() { _, _ = nc.Apply("a", "t", 1) })
}

// Deferred ids cost room, never window: when idle actors hold so many of an
// actor's folded ids that its entry would pass MaxEntriesPerActor, Apply
// refuses with crdt.ErrTooLarge and changes nothing, rather than forget a
// newer id early; Stats.Deferred shows the build-up.
func TestDeferredIDsAreBoundedByAnError(t *testing.T) {
	testsize.SkipSequential(t)
	opts := Options{HistoryLength: 10, FoldedLength: 10}
	a, err := New(opts)
	require.NoError(t, err)
	var refused error
	for j := 0; refused == nil && j < 500; j++ {
		b, _ := New(opts)
		for i := 0; i < 11; i++ {
			x := crdt.TxnID(fmt.Sprintf("x%d-%d", j, i))
			if _, refused = a.Apply("A", x, 1); refused != nil {
				break
			}
			apply(t, b, crdt.ActorID(fmt.Sprintf("B%03d", j)), x, 1) // delivered twice, B then idles
		}
		require.NoError(t, a.Merge(b))
	}
	require.ErrorIs(t, refused, crdt.ErrTooLarge)
	st := a.Stats()
	require.Greater(t, st.Deferred, MaxEntriesPerActor-30, "the entry filled with deferred ids")
	e, _ := a.p.Entry("A")
	require.LessOrEqual(t, len(e.History)+len(e.Folded), MaxEntriesPerActor)
	before := a.Clone()
	_, err = a.Apply("A", "another", 1)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.True(t, a.Equal(before))
	t.Logf("refused at %d deferred ids: %v", st.Deferred, refused)
}

// Retract takes an actor's own copy out, from its history or its folded
// record and total, with a new version of its entry; another actor's copy
// then counts, or nothing does.
func TestRetract(t *testing.T) {
	c := mustNew(t, 1)
	apply(t, c, "a", "x", 10)
	apply(t, c, "a", "y", 20) // x folded
	apply(t, c, "a", "z", 30)
	o := mustNew(t, 1)
	apply(t, o, "b", "y", 20)
	require.NoError(t, c.Merge(o))
	require.Equal(t, int64(60), c.Value())
	e, _ := c.p.Entry("a")
	seq := e.Seq
	for _, tc := range []struct {
		x    crdt.TxnID
		want int64
	}{{"x", 50}, {"y", 50}, {"z", 20}} { // y: b's copy counts instead
		ok, err := c.Retract("a", tc.x)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, tc.want, c.Value(), tc.x)
		require.NoError(t, c.p.checkIndex())
	}
	e, _ = c.p.Entry("a")
	require.Equal(t, seq+3, e.Seq)
	require.Zero(t, e.Total)
	ok, err := c.Retract("a", "x")
	require.NoError(t, err)
	require.False(t, ok, "nothing left to retract")
	require.Equal(t, InHistory, c.Status("y"))
}
