package tpncounter

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

// TestValuePastInt64: writers that could not see each other credit (or
// debit) past int64. Merge accepts it in either order and the state
// round-trips; Value clamps and BigValue is exact; a change that moves the
// value further out is refused unchanged, one towards int64 applies, even
// when the value stays past it (SPEC.md 6.3 step 5, 6.5, 6.6).
func TestValuePastInt64(t *testing.T) {
	const big = 1<<62 + 10
	for _, sign := range []int64{1, -1} {
		x, y := mustNew(t, 3), mustNew(t, 3)
		apply(t, x, "a", "x1", sign*big)
		apply(t, y, "b", "x2", sign*big)
		xy, yx := x.Clone(), y.Clone()
		require.NoError(t, xy.Merge(y))
		require.NoError(t, yx.Merge(x))
		require.True(t, xy.Equal(yx))
		want := map[int64]string{1: "9223372036854775828", -1: "-9223372036854775828"}[sign]
		require.Equal(t, want, xy.BigValue().String())
		require.Equal(t, map[int64]int64{1: math.MaxInt64, -1: math.MinInt64}[sign], xy.Value())
		bs, err := xy.MarshalBinary()
		require.NoError(t, err)
		back := mustNew(t, 3)
		require.NoError(t, back.UnmarshalBinary(bs))
		require.True(t, back.Equal(xy))
		require.Equal(t, want, back.BigValue().String())

		before := xy.Clone()
		_, err = xy.Apply("c", "x3", sign)
		require.ErrorIs(t, err, crdt.ErrOverflow, "further from int64")
		require.True(t, xy.Equal(before))
		require.Equal(t, Applied, apply(t, xy, "c", "d0", -sign*1), "towards int64, though still past it")
		require.Equal(t, Applied, apply(t, xy, "c", "d1", -sign*big))
		require.Equal(t, sign*(big-1), xy.Value())
		require.Equal(t, Duplicate, apply(t, xy, "b", "x2", sign*big))
	}
}

// TestActorSumFits: one actor's total and history never pass int64, so
// folding them never overflows, while the half may: a credits and debits
// math.MaxInt64 each (value 0); a's next credit is refused, b's applies
// (P is then past int64, the value 5).
func TestActorSumFits(t *testing.T) {
	c := mustNew(t, 1)
	apply(t, c, "a", "c1", math.MaxInt64)
	apply(t, c, "a", "d1", -math.MaxInt64)
	before := c.Clone()
	_, err := c.Apply("a", "c2", 5)
	require.ErrorIs(t, err, crdt.ErrOverflow)
	require.True(t, c.Equal(before))
	require.Equal(t, Applied, apply(t, c, "b", "c2", 5))
	require.Equal(t, "9223372036854775812", c.Positive().BigValue().String())
	require.Equal(t, int64(5), c.Value())
	for _, actor := range []crdt.ActorID{"a", "b"} {
		_, err := c.Compact(actor)
		require.NoError(t, err)
	}
	require.Equal(t, Applied, apply(t, c, "b", "c3", 5))
	require.Equal(t, int64(10), c.Value())
}

// TestActorSumCountsTotalAndRetired: an actor's own sum counts its folded
// total, also once the entry is retired (kept as its encoding after a
// decode): each refuses a credit that would take the sum past int64
// although the counter's value fits.
func TestActorSumCountsTotalAndRetired(t *testing.T) {
	c := mustNew(t, 1)
	apply(t, c, "a", "c1", math.MaxInt64-10)
	apply(t, c, "a", "c2", 1)
	_, err := c.Compact("a") // history 1: c1 folds into a's total
	require.NoError(t, err)
	apply(t, c, "a", "d1", -(math.MaxInt64 - 9))
	e, _ := c.Positive().Entry("a")
	require.Equal(t, int64(math.MaxInt64-10), e.Total)
	_, err = c.Apply("a", "c3", 10)
	require.ErrorIs(t, err, crdt.ErrOverflow, "total plus history plus 10")
	require.Equal(t, Applied, apply(t, c, "a", "c3", 9))

	ok, err := c.Retire("a")
	require.NoError(t, err)
	require.True(t, ok)
	bs, err := c.MarshalBinary()
	require.NoError(t, err)
	for _, r := range []*Counter{c, decodeT(t, bs)} {
		_, err = r.Apply("a", "c4", 1)
		require.ErrorIs(t, err, crdt.ErrOverflow, "a retired entry's total")
		require.Equal(t, Applied, apply(t, r, "b", "c4", 1))
	}
}

func decodeT(t *testing.T, bs []byte) *Counter {
	t.Helper()
	c := mustNew(t, 1)
	require.NoError(t, c.UnmarshalBinary(bs))
	return c
}
