package deltalog_test

import (
	"context"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

// ovLog drives one counter of Counters over the memory store (newSpy).
type ovLog struct {
	t     *testing.T
	c     *deltalog.Counters
	clock *fakeClock
}

func newOvLog(t *testing.T) *ovLog {
	c, _, clock := newCounters(t, 0)
	return &ovLog{t: t, c: c, clock: clock}
}

// add writes one update per delta, a second apart.
func (o *ovLog) add(deltas ...int64) {
	for _, d := range deltas {
		require.NoError(o.t, o.c.Add(context.Background(), "k", timeid.New(o.clock.Now()), d))
		o.clock.Advance(time.Second)
	}
}

func (o *ovLog) read() deltalog.Reading {
	r, err := o.c.Read(context.Background(), "k")
	require.NoError(o.t, err)
	return r
}

// merge runs Merge and Compact once every cell so far is older than the
// merge cutoff and the merge cell older than CompactGrace; the reading
// is the same before, between and after (but for its cost). It returns
// how many updates the merge cell covers (0: none written).
func (o *ovLog) merge() int64 {
	ctx := context.Background()
	before := o.read()
	o.clock.Advance(2 * time.Minute)
	m, ok, err := o.c.Merge(ctx, "k")
	require.NoError(o.t, err)
	o.clock.Advance(time.Minute)
	_, err = o.c.Compact(ctx, "k")
	require.NoError(o.t, err)
	after := o.read()
	before.Cells, after.Cells = 0, 0
	require.Equal(o.t, before, after, "merge and compact changed the reading")
	if !ok {
		return 0
	}
	require.True(o.t, m.Stats.Fits())
	return m.Stats.Count
}

// TestOverflowKeepsTheKey: updates whose sum passes int64, or whose sum of
// squares passes 2^128, read exactly (the value clamped); a merge cell
// goes where its aggregates fit, and an update that brings the sum back
// lets the next merge cover everything (SPEC.md 8.3).
func TestOverflowKeepsTheKey(t *testing.T) {
	t.Run("sum", func(t *testing.T) {
		o := newOvLog(t)
		o.add(math.MaxInt64)
		require.Equal(t, int64(math.MaxInt64), o.read().Value, "2^63 − 1 fits")
		o.add(1)
		r := o.read()
		require.Equal(t, int64(math.MaxInt64), r.Value, "clamped")
		require.Equal(t, r.Value, r.Stats.Sum)
		require.Equal(t, "9223372036854775808", r.Stats.BigSum().String())
		require.Equal(t, int64(1), o.merge(), "the merge cell takes 2^63 − 1 alone")
		require.Equal(t, int64(0), o.merge(), "and no more while the sum is 2^63")
		o.add(-2)
		require.Equal(t, int64(math.MaxInt64-1), o.read().Value)
		require.Equal(t, int64(3), o.merge(), "back in range: one cell covers everything")
		require.Equal(t, 1, o.read().Cells)
	})
	t.Run("sum below int64", func(t *testing.T) {
		o := newOvLog(t)
		o.add(math.MinInt64, -1)
		r := o.read()
		require.Equal(t, int64(math.MinInt64), r.Value)
		require.Equal(t, "-9223372036854775809", r.Stats.BigSum().String())
		require.Equal(t, int64(1), o.merge())
	})
	t.Run("sum of squares", func(t *testing.T) {
		o := newOvLog(t)
		xs := []int64{math.MinInt64, math.MaxInt64, math.MinInt64, math.MaxInt64}
		o.add(xs...) // 2^128 − 2^65 + 2
		require.True(t, o.read().Stats.Fits())
		o.add(1 << 33)
		r := o.read()
		require.False(t, r.Stats.Fits())
		sq := big.NewInt(0)
		for _, x := range append(xs, 1<<33) {
			sq.Add(sq, new(big.Int).Mul(big.NewInt(x), big.NewInt(x)))
		}
		require.Equal(t, sq.String(), r.Stats.SumSquares().String())
		require.Equal(t, [4]int64{5, 1<<33 - 2, math.MinInt64, math.MaxInt64}, [4]int64{r.Stats.Count, r.Value, r.Stats.Min, r.Stats.Max})
		sum := big.NewInt(1<<33 - 2)
		num := new(big.Int).Sub(new(big.Int).Mul(big.NewInt(5), sq), new(big.Int).Mul(sum, sum))
		want, _ := new(big.Rat).SetFrac(num, big.NewInt(25)).Float64()
		got, _ := r.Stats.Variance()
		require.Equal(t, want, got, "exact, rounded once")
		require.Equal(t, int64(4), o.merge(), "the merge cell stops below 2^128")
		o.add(5)
		require.Equal(t, int64(6), o.read().Stats.Count, "writes go on")
		require.Equal(t, int64(0), o.merge(), "a sum of squares never comes back")
	})
}

// TestCountPastInt64 builds a merge cell of MaxInt64 zeros in a Log (valid:
// no writer can add that many) and one more update.
func TestCountPastInt64(t *testing.T) {
	var l deltalog.Log
	old, id := timeid.New(base), timeid.New(base.Add(time.Second))
	require.NoError(t, l.Add(old, 1))
	require.NoError(t, l.Insert(deltalog.Cell{ID: old, Kind: deltalog.KindMerge, Delta: 1,
		Stats: deltalog.Stats{Count: math.MaxInt64, Sum: 1, Min: 0, Max: 1, SumSqLo: 1}}))
	require.NoError(t, l.Add(id, 2))
	r, err := l.Read()
	require.NoError(t, err)
	require.Equal(t, [2]int64{math.MaxInt64, 3}, [2]int64{r.Stats.Count, r.Value})
	require.Equal(t, "9223372036854775808", r.Stats.BigCount().String())
	_, ok, err := l.MergeBefore(base.Add(time.Hour), base)
	require.NoError(t, err)
	require.False(t, ok, "no cell holds that count")
	require.Equal(t, 3, l.Len())
}
