package tpncounter_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/tpncounter"
)

// retiredRun returns a counter whose n actors prefix0..prefixn-1 each
// credited 1 and were then retired, one at a time, as a ledger's passes do.
func retiredRun(t *testing.T, o tpncounter.Options, prefix string, n int) *tpncounter.Counter {
	t.Helper()
	c, err := tpncounter.New(o)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		a := crdt.ActorID(fmt.Sprintf("%s%06d", prefix, i))
		_, err := c.Apply(a, crdt.TxnID(a), 1)
		require.NoError(t, err)
		ok, err := c.RetireAllAt(time.Unix(0, 1.7e18+int64(i)), a)
		require.True(t, ok)
		require.NoError(t, err)
	}
	return c
}

func roundTrip(t *testing.T, o tpncounter.Options, c *tpncounter.Counter) *tpncounter.Counter {
	t.Helper()
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	d, err := tpncounter.New(o)
	require.NoError(t, err)
	require.NoError(t, d.UnmarshalBinary(b), "a state its own encoder wrote")
	require.True(t, c.Equal(d))
	return d
}

// A writer never writes bytes its decoder refuses (SPEC.md 6.1): retiring
// actors one at a time past 65536 retired entries, or merging two siblings
// of 40000 retired entries each, gives states that encode and decode (with
// any MaxActors), and whose actors write again.
func TestRetiredPast65536RoundTrips(t *testing.T) {
	testsize.SkipSequential(t)
	small := tpncounter.Options{MaxActors: 2}
	c := retiredRun(t, small, "a", tpncounter.MaxRetired+1)
	require.Equal(t, tpncounter.MaxRetired+1, c.Stats().Retired)
	d := roundTrip(t, small, c)
	_, err := d.Apply("a000007", "again", 1) // a retired actor writes again
	require.NoError(t, err)
	require.Equal(t, int64(tpncounter.MaxRetired+2), d.Value())

	x := retiredRun(t, small, "x", 40000)
	y := retiredRun(t, small, "y", 40000)
	require.NoError(t, x.Merge(y), "siblings of 40000 retired entries each")
	require.Equal(t, 80000, x.Stats().Retired)
	roundTrip(t, small, x)
}

// The hard bound: a half holds at most MaxActorsLimit + MaxRetired entries,
// live or retired. Merge refuses a union above it, unchanged; Apply refuses
// a new actor at it even with no live actor, while a retired actor writes
// again (the count stays). The state at the bound round-trips.
func TestEntryBound(t *testing.T) {
	testsize.SkipSequential(t)
	o := tpncounter.Options{}
	half := (tpncounter.MaxActorsLimit + tpncounter.MaxRetired) / 2
	c := retiredRun(t, o, "a", half)
	require.NoError(t, c.Merge(retiredRun(t, o, "b", half)))
	require.Equal(t, 2*half, c.Stats().Retired)
	require.Equal(t, 0, c.Stats().Actors)
	roundTrip(t, o, c)

	one := retiredRun(t, o, "c", 0)
	_, err := one.Apply("c", "c1", 1)
	require.NoError(t, err)
	before := c.Clone()
	require.ErrorIs(t, c.Merge(one), crdt.ErrTooLarge)
	require.True(t, c.Equal(before))
	_, err = c.Apply("new", "n1", 1)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	_, err = c.Apply("a000001", "n1", 1)
	require.NoError(t, err)
	roundTrip(t, o, c)
}
