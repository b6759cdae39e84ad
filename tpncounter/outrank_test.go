package tpncounter

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

// Outrank raises a retired entry's seq to MaxSeq, so that it wins over any
// version of its actor still in flight; it changes nothing else, and
// nothing when the entry is live, absent or already raised (SPEC.md 6.10).
func TestOutrank(t *testing.T) {
	c := retireFixture(t, Options{})
	inFlight := c.Clone() // "old" goes on writing: a write of it in flight
	_, err := inFlight.Apply("old", "late", 7)
	require.NoError(t, err)
	_, err = inFlight.Apply("old", "later", -2)
	require.NoError(t, err)

	ok, err := c.Retire("old")
	require.NoError(t, err)
	require.True(t, ok)
	value := c.Value()
	for _, tc := range []struct {
		actor crdt.ActorID
		want  bool
	}{
		{"live", false}, // a live entry is left alone
		{"none", false}, // no entry
		{"old", true},   // both halves raised
		{"old", false},  // again: nothing to do
	} {
		ok, err := c.Outrank(tc.actor)
		require.NoError(t, err)
		require.Equal(t, tc.want, ok, tc.actor)
	}
	require.Equal(t, value, c.Value())
	p, _ := c.Positive().Entry("old")
	n, _ := c.Negative().Entry("old")
	require.True(t, p.Retired && n.Retired)
	require.Equal(t, []uint64{MaxSeq, MaxSeq}, []uint64{p.Seq, n.Seq})

	// The encoding holds it, and the retirement wins over the write in
	// flight in either order.
	d := roundTrip(t, c)
	require.True(t, d.Equal(c))
	require.NoError(t, d.Merge(inFlight))
	require.NoError(t, inFlight.Merge(c))
	require.True(t, d.Equal(inFlight))
	require.Equal(t, value, d.Value(), "the write in flight does not count")

	_, err = c.Outrank("")
	require.ErrorIs(t, err, crdt.ErrInvalidActor)
}

// Outrank after an encoding (which caches the retired entries' runs)
// changes the next one.
func TestOutrankAfterEncoding(t *testing.T) {
	c := retireFixture(t, Options{})
	_, err := c.Retire("old")
	require.NoError(t, err)
	_, err = c.MarshalBinary()
	require.NoError(t, err)
	_, err = c.Outrank("old")
	require.NoError(t, err)
	require.Equal(t, 2*MaxSeq, roundTrip(t, c).Version("old"))
}

// A retired entry read from an encoding (kept dormant) is raised too, and
// its encoding changes with it.
func TestOutrankDormant(t *testing.T) {
	c := retireFixture(t, Options{})
	_, err := c.Retire("old")
	require.NoError(t, err)
	d := roundTrip(t, c)
	ok, err := d.Outrank("old")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 2*MaxSeq, d.Version("old"))
	require.Equal(t, c.Value(), d.Value())
	require.True(t, roundTrip(t, d).Equal(d))
}

func roundTrip(t *testing.T, c *Counter) *Counter {
	t.Helper()
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	d := newT(t, c.Options())
	require.NoError(t, d.UnmarshalBinary(b))
	return d
}
