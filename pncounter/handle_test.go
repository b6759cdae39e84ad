package pncounter_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/pncounter"
)

// TestHandle: Add is Increment for the handle's actor, credits and debits,
// with its errors, also after UnmarshalBinary moved the entries.
func TestHandle(t *testing.T) {
	c := pncounter.New()
	require.NoError(t, c.Increment("z", 1))
	h := c.Handle("b")
	require.NoError(t, h.Add(10))
	require.NoError(t, h.Add(-3))
	require.Equal(t, int64(7), c.Get("b"))
	require.Equal(t, int64(8), c.Value())
	require.ErrorIs(t, h.Add(math.MinInt64), crdt.ErrInvalidAmount)
	require.ErrorIs(t, h.Add(math.MaxInt64), crdt.ErrOverflow)
	bad := c.Handle("")
	require.ErrorIs(t, bad.Add(1), crdt.ErrInvalidActor)
	require.ErrorIs(t, bad.Add(-1), crdt.ErrInvalidActor)
	require.Equal(t, int64(8), c.Value(), "refused adds change nothing")
	require.Equal(t, crdt.ActorID("b"), h.Actor())

	other := pncounter.New()
	for _, a := range []crdt.ActorID{"z", "b", "a"} {
		require.NoError(t, other.Increment(a, 100))
		require.NoError(t, other.Increment(a, -50))
	}
	data, err := other.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, c.UnmarshalBinary(data))
	require.NoError(t, h.Add(1))
	require.NoError(t, h.Add(-2))
	require.Equal(t, int64(49), c.Get("b"))
	require.Equal(t, int64(50), c.Get("a"))
	require.Equal(t, int64(50), c.Get("z"))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = h.Add(1); _ = h.Add(-1) }))
}
