package tpncounter

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/leanovate/gopter/gen"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
)

// retireFixture returns a counter where "old" made three credits and a
// debit, "live" two credits, and nothing is shared.
func retireFixture(t *testing.T, o Options) *Counter {
	t.Helper()
	c := newT(t, o)
	for _, op := range []struct {
		a   crdt.ActorID
		txn crdt.TxnID
		amt int64
	}{{"old", "o1", 5}, {"old", "o2", 7}, {"old", "o3", 11}, {"old", "o4", -3}, {"live", "l1", 100}, {"live", "l2", 200}} {
		_, err := c.Apply(op.a, op.txn, op.amt)
		require.NoError(t, err)
	}
	return c
}

func TestRetire(t *testing.T) {
	o := Options{HistoryLength: 2}
	t.Run("keeps the value, drops the records, encodes as version 3", func(t *testing.T) {
		c := retireFixture(t, o)
		before := c.Value()
		ok, err := c.Retire("old")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, before, c.Value())
		e, _ := c.Positive().Entry("old")
		require.True(t, e.Retired)
		require.Empty(t, e.History)
		require.Empty(t, e.Folded)
		require.Equal(t, int64(23), e.Total)
		require.Equal(t, Stats{Actors: 1, Retired: 1, Transactions: 2, History: 2}, c.Stats())
		b := must(c.MarshalBinary())
		require.Equal(t, byte(3), b[len("\x93\xaatpncounter")], "version 3 once an entry is retired")
		d := newT(t, o)
		require.NoError(t, d.UnmarshalBinary(b))
		require.True(t, d.Equal(c))
		require.Equal(t, b, must(d.MarshalBinary()))
		// Retiring again changes nothing.
		ok, err = c.Retire("old")
		require.NoError(t, err)
		require.False(t, ok)
	})
	t.Run("declined while another actor holds a transaction", func(t *testing.T) {
		c := retireFixture(t, o)
		d := newT(t, o)
		_, err := d.Apply("other", "o3", 11) // delivered to both at once
		require.NoError(t, err)
		require.NoError(t, c.Merge(d))
		ok, err := c.Retire("old")
		require.NoError(t, err)
		require.False(t, ok)
		e, _ := c.Positive().Entry("old")
		require.False(t, e.Retired)
	})
	t.Run("a retirement wins over the entry it retired, loses to a later write", func(t *testing.T) {
		a := retireFixture(t, o)
		b := a.Clone()
		ok, err := b.Retire("old")
		require.NoError(t, err)
		require.True(t, ok)
		want := a.Value()
		// Merged either way, with the live entry of the same version: the
		// retirement.
		for _, pair := range [][2]*Counter{{a.Clone(), b}, {b.Clone(), a}} {
			require.NoError(t, pair[0].Merge(pair[1]))
			e, _ := pair[0].Positive().Entry("old")
			require.True(t, e.Retired)
			require.Equal(t, want, pair[0].Value())
		}
		// Retirements racing each other are equal.
		c := a.Clone()
		_, err = c.Retire("old")
		require.NoError(t, err)
		require.True(t, c.Equal(b))
		// The actor was not gone after all: its next write (a state that
		// never saw the retirement, delivered late) wins, counted once.
		_, err = a.Apply("old", "o5", 13)
		require.NoError(t, err)
		for _, pair := range [][2]*Counter{{a.Clone(), b}, {b.Clone(), a}} {
			require.NoError(t, pair[0].Merge(pair[1]))
			e, _ := pair[0].Positive().Entry("old")
			require.False(t, e.Retired)
			require.Equal(t, want+13, pair[0].Value())
		}
		// And it may write on top of its retirement: live again.
		_, err = b.Apply("old", "o6", 17)
		require.NoError(t, err)
		e, _ := b.Positive().Entry("old")
		require.False(t, e.Retired)
		require.Equal(t, want+17, b.Value())
		require.Equal(t, 0, b.Stats().Retired)
	})
	t.Run("timed: a retired transaction resent is refused", func(t *testing.T) {
		to := o
		to.TxnTime = atTime
		c := newT(t, to)
		for _, x := range []crdt.TxnID{"a@1", "b@2", "c@3"} {
			_, err := c.Apply("old", x, 1)
			require.NoError(t, err)
		}
		_, err := c.Apply("live", "d@4", 1)
		require.NoError(t, err)
		ok, err := c.Retire("old")
		require.NoError(t, err)
		require.True(t, ok)
		_, err = c.Apply("live", "b@2", 1)
		require.True(t, errors.Is(err, crdt.ErrOutsideWindow), "%v", err)
		_, err = c.Apply("live", "e@5", 1)
		require.NoError(t, err)
		require.Equal(t, int64(5), c.Value())
	})
	t.Run("untimed: a retired transaction resent counts again (the documented limit)", func(t *testing.T) {
		c := retireFixture(t, o)
		_, err := c.Retire("old")
		require.NoError(t, err)
		out, err := c.Apply("live", "o1", 5)
		require.NoError(t, err)
		require.Equal(t, Applied, out)
	})
	t.Run("live actors are capped, retired ones are not counted", func(t *testing.T) {
		co := Options{MaxActors: 2}
		c := newT(t, co)
		for _, a := range []crdt.ActorID{"a", "b"} {
			_, err := c.Apply(a, crdt.TxnID("t-"+a), 1)
			require.NoError(t, err)
		}
		_, err := c.Apply("c", "t-c", 1)
		require.ErrorIs(t, err, crdt.ErrTooLarge)
		_, err = c.Retire("a")
		require.NoError(t, err)
		_, err = c.Apply("c", "t-c", 1)
		require.NoError(t, err)
		// The retired actor writing again would make three live actors.
		_, err = c.Apply("a", "t-a2", 1)
		require.ErrorIs(t, err, crdt.ErrTooLarge)
	})
	t.Run("invalid actor", func(t *testing.T) {
		c := retireFixture(t, o)
		_, err := c.Retire("")
		require.ErrorIs(t, err, crdt.ErrInvalidActor)
	})
}

// The merge laws and convergence hold with retirements among the operations: any replica
// retires any actor (declined or not), racing other retirements and the
// actor's own writes. Values are not compared: a retry of a retired
// transaction counts again by design (untimed), which these schedules do
// not avoid; the simulation checks exactly-once where Retire's assumption
// holds.
func TestLawsWithRetirement(t *testing.T) {
	testsize.SkipSequential(t)
	cfg := proptest.DefaultOptions()
	cfg.Cases = proptest.Scale(300)
	m := withAnyValue(counterModel(2))
	m.Name = "tpncounter/history=2 with retirements"
	m.GenOp = gen.IntRange(0, 30).Map(func(i int) txnOp {
		if i >= 26 {
			return txnOp{crdt.TxnID(fmt.Sprintf("retire r%d", i-26))}
		}
		return txnOp{crdt.TxnID(fmt.Sprintf("t%d", i))}
	})
	apply := m.Apply
	retired := 0
	m.Apply = func(c *Counter, a crdt.ActorID, o txnOp) error {
		if target, ok := strings.CutPrefix(string(o.Txn), "retire "); ok {
			done, err := c.Retire(crdt.ActorID(target))
			if done {
				retired++
			}
			return err
		}
		return apply(c, a, o)
	}
	res, err := proptest.RunLaws(m, cfg)
	require.NoError(t, err)
	require.True(t, res.Passed, res.Report)
	t.Logf("laws: %d retirements in %d cases", retired, cfg.Cases)
	require.Positive(t, retired)
	// Convergence: every replica, retiring as it goes, ends equal once
	// all states are exchanged.
	retired = 0
	cfg.Replicas = 4
	res, err = proptest.RunConvergence(m, cfg)
	require.NoError(t, err)
	require.True(t, res.Passed, res.Report)
	t.Logf("convergence: %d retirements in %d cases", retired, cfg.Cases)
	require.Positive(t, retired)
}

// TestGCounterRetireOwnerLiveActors covers the half-type's Retire and Owner
// and the Counter's LiveActors, which the ledger's RetireAfter watches.
func TestGCounterRetireOwnerLiveActors(t *testing.T) {
	g, err := NewGCounter(Options{HistoryLength: 2})
	require.NoError(t, err)
	for _, op := range []struct {
		a   crdt.ActorID
		txn crdt.TxnID
	}{{"old", "o1"}, {"old", "o2"}, {"old", "o3"}, {"b", "x"}} {
		_, err := g.Apply(op.a, op.txn, 4)
		require.NoError(t, err)
	}
	h, err := NewGCounter(Options{HistoryLength: 2}) // a wrote x without seeing b's copy
	require.NoError(t, err)
	_, err = h.Apply("a", "x", 4)
	require.NoError(t, err)
	require.NoError(t, g.Merge(h))
	own, ok := g.Owner("x")
	require.True(t, ok)
	require.Equal(t, crdt.ActorID("a"), own.Actor, "the smallest holder owns")
	_, ok = g.Owner("nobody")
	require.False(t, ok)

	_, err = g.Retire("")
	require.ErrorIs(t, err, crdt.ErrInvalidActor)
	ok, err = g.Retire("b")
	require.NoError(t, err)
	require.False(t, ok, "a holds b's transaction: declined")
	before := g.Value()
	ok, err = g.Retire("old")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, before, g.Value())
	e, _ := g.Entry("old")
	require.True(t, e.Retired)
	require.Equal(t, int64(12), e.Total)
	ok, err = g.Retire("old")
	require.NoError(t, err)
	require.False(t, ok, "already retired")
	ok, err = g.Retire("never")
	require.NoError(t, err)
	require.False(t, ok, "no entry")

	c := retireFixture(t, Options{HistoryLength: 2})
	_, err = c.Apply("neg", "n1", -1)
	require.NoError(t, err)
	live := func() map[crdt.ActorID]uint64 {
		out := map[crdt.ActorID]uint64{}
		for a, v := range c.LiveActors() {
			out[a] = v
		}
		return out
	}
	first := live()
	require.Equal(t, []crdt.ActorID{"live", "neg", "old"}, slices.Sorted(maps.Keys(first)))
	_, err = c.Apply("old", "o5", -1)
	require.NoError(t, err)
	require.Greater(t, live()["old"], first["old"], "a change moves the version")
	require.Equal(t, first["live"], live()["live"])
	ok, err = c.Retire("old")
	require.NoError(t, err)
	require.True(t, ok)
	require.NotContains(t, live(), crdt.ActorID("old"))
	n := 0
	for range c.LiveActors() {
		n++
		break
	}
	require.Equal(t, 1, n, "the iterator stops when asked")
}
