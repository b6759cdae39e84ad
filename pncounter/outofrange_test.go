package pncounter_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/pncounter"
)

// Out of range, a value may move back towards the range whether or not a
// half's total then passes int64 (SPEC.md 5.2); a review found a debit of
// 1 applied on one state of value 2^63+1 and refused on another, where
// the N half's total would pass int64. It may not move away, nor from the
// range out of it, and a delta of 0 only checks the actor.
func TestOutOfRangeMovesBackWhateverTheHalves(t *testing.T) {
	state := func(p, n map[crdt.ActorID]int64) *pncounter.Counter {
		c := pncounter.New()
		for a, v := range p {
			one := pncounter.New()
			require.NoError(t, one.Increment(a, v))
			require.NoError(t, c.Merge(one))
		}
		for a, v := range n {
			one := pncounter.New()
			require.NoError(t, one.Decrement(a, v))
			require.NoError(t, c.Merge(one))
		}
		return c
	}
	s1 := state(map[crdt.ActorID]int64{"a": math.MaxInt64, "b": 2}, nil)
	s2 := state(map[crdt.ActorID]int64{"a": math.MaxInt64, "b": math.MaxInt64, "c": 2}, map[crdt.ActorID]int64{"d": math.MaxInt64})
	for i, c := range []*pncounter.Counter{s1, s2} {
		require.Equal(t, "9223372036854775809", c.BigValue().String(), "state %d", i+1)
		require.NoError(t, c.Apply("e", -1), "state %d: back towards the range", i+1)
		require.Equal(t, "9223372036854775808", c.BigValue().String())
		require.ErrorIs(t, c.Apply("f", 1), crdt.ErrOverflow, "state %d: away from it", i+1)
		require.NoError(t, c.Apply("g", 0), "state %d: 0 checks the actor only", i+1)
		require.NoError(t, c.Apply("e", -1), "state %d: into the range", i+1)
		require.Equal(t, int64(math.MaxInt64), c.Value())
		require.ErrorIs(t, c.Apply("f", 1), crdt.ErrOverflow, "state %d: out of the range", i+1)
	}
}
