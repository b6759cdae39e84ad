package tally_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/tally"
)

// TestNilAggregates checks the rule every aggregate follows: read-only
// methods on a nil pointer answer as for the empty value, Combine(nil) is a
// no-op returning nil, and Add and Combine panic on a nil receiver.
func TestNilAggregates(t *testing.T) {
	t.Run("Sum", func(t *testing.T) {
		var s *tally.Sum
		require.Zero(t, s.Value())
		require.Equal(t, "0", s.String())
		require.True(t, s.Equal(new(tally.Sum)))
		require.True(t, s.Clone().Equal(new(tally.Sum)))
		require.Panics(t, func() { _ = s.Add(1) })
		require.Panics(t, func() { _ = s.Combine(nil) })
		require.Panics(t, func() { _ = s.Combine(sumOf(t, 1)) })
		v := sumOf(t, 5)
		require.NoError(t, v.Combine(nil))
		require.Equal(t, int64(5), v.Value())
	})
	t.Run("Min and Max", func(t *testing.T) {
		var mn *tally.Min
		var mx *tally.Max
		v, ok := mn.Value()
		require.Equal(t, int64(0), v)
		require.False(t, ok)
		v, ok = mx.Value()
		require.Equal(t, int64(0), v)
		require.False(t, ok)
		require.Equal(t, "none", mn.String())
		require.Equal(t, "none", mx.String())
		require.True(t, mn.Equal(new(tally.Min)) && mx.Equal(new(tally.Max)))
		require.True(t, mn.Clone().Equal(new(tally.Min)) && mx.Clone().Equal(new(tally.Max)))
		require.Panics(t, func() { mn.Add(1) })
		require.Panics(t, func() { mx.Add(1) })
		require.Panics(t, func() { _ = mn.Combine(nil) })
		require.Panics(t, func() { _ = mx.Combine(nil) })
		a, b := new(tally.Min), new(tally.Max)
		a.Add(3)
		b.Add(3)
		require.NoError(t, a.Combine(nil))
		require.NoError(t, b.Combine(nil))
		require.NoError(t, a.Combine(a))
		require.NoError(t, b.Combine(b))
		v, ok = a.Value()
		require.Equal(t, int64(3), v)
		require.True(t, ok)
		v, ok = b.Value()
		require.Equal(t, int64(3), v)
		require.True(t, ok)
	})
	t.Run("Stats", func(t *testing.T) {
		var s *tally.Stats
		require.Zero(t, s.Count())
		require.Zero(t, s.Sum())
		_, ok := s.Min()
		require.False(t, ok)
		_, ok = s.Max()
		require.False(t, ok)
		require.Zero(t, s.SumOfSquares().Sign())
		_, ok = s.Mean()
		require.False(t, ok)
		_, ok = s.Variance()
		require.False(t, ok)
		require.Equal(t, "n=0", s.String())
		require.True(t, s.Equal(new(tally.Stats)))
		require.True(t, s.Clone().Equal(new(tally.Stats)))
		require.Panics(t, func() { _ = s.Add(1) })
		require.Panics(t, func() { _ = s.Combine(nil) })
		require.Panics(t, func() { _ = s.Combine(statsOfXs(t, 1)) })
		v := statsOfXs(t, 1, 2)
		require.NoError(t, v.Combine(nil))
		require.True(t, v.Equal(statsOfXs(t, 1, 2)))
		// Combine is the monoid operation, not a join: v ⊕ v doubles.
		require.NoError(t, v.Combine(v))
		require.True(t, v.Equal(statsOfXs(t, 1, 2, 1, 2)), "got %s", v)
		require.Equal(t, big.NewInt(10), v.SumOfSquares())
	})
	t.Run("Distinct", func(t *testing.T) {
		var d *tally.Distinct
		require.Zero(t, d.Estimate())
		require.True(t, d.Equal(new(tally.Distinct)))
		require.True(t, d.Clone().Equal(new(tally.Distinct)))
		require.Equal(t, "≈0 distinct", d.String())
		require.Panics(t, func() { d.AddString("x") })
		require.Panics(t, func() { _ = d.Combine(nil) })
		v := distinctOf(50)
		require.NoError(t, v.Combine(nil))
		require.NoError(t, v.Combine(v))
		require.True(t, v.Equal(distinctOf(50)))
	})
}
