package tally_test

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/tally"
)

// ovf is a counter of A over the memory store whose writes each come from
// a new mutator, a minute apart, so every shard has its own expires_at.
type ovf[A tally.Aggregate[A]] struct {
	t     *testing.T
	clock *fakeClock
	c     *tally.Counter[A]
}

func newOvf[A tally.Aggregate[A]](t *testing.T) *ovf[A] {
	clock := newClock()
	c, err := tally.New[A](memory.NewPartitions(), "k", tally.Options{Lifetime: 24 * time.Hour, Margin: time.Hour,
		MaxSkew: time.Hour, Grace: 3 * time.Hour, Clock: clock.Now, NewID: ids()})
	require.NoError(t, err)
	return &ovf[A]{t: t, clock: clock, c: c}
}

func (o *ovf[A]) mutator() *tally.Mutator[A] {
	m, err := o.c.NewMutator()
	require.NoError(o.t, err)
	return m
}

func (o *ovf[A]) write(fn func(A) error) {
	require.NoError(o.t, o.mutator().Update(context.Background(), fn))
	o.clock.Advance(time.Minute)
}

func (o *ovf[A]) read() A {
	v, err := o.c.ReadComplete(context.Background())
	require.NoError(o.t, err)
	return v
}

// gc runs GC once every shard so far is final; the value is the same
// before and after it. It returns (folded, live).
func (o *ovf[A]) gc() [2]int {
	before := o.read()
	o.clock.Advance(28 * time.Hour)
	plan, err := o.c.GC(context.Background())
	require.NoError(o.t, err)
	require.True(o.t, before.Equal(o.read()), "GC changed the value %v to %v", before, o.read())
	return [2]int{plan.Folded, plan.Live}
}

// TestSumPastInt64KeepsTheKey: shards that each fit but together pass
// int64 read exactly (Value clamps), GC folds the shards the tally holds and
// leaves the rest, and a write that brings the total back lets GC fold
// everything (SPEC.md 7.1, 7.4).
func TestSumPastInt64KeepsTheKey(t *testing.T) {
	ctx := context.Background()
	o := newOvf[*tally.Sum](t)
	m := o.mutator()
	require.NoError(t, m.Update(ctx, add(math.MaxInt64)))
	require.ErrorIs(t, m.Stage(add(1)), crdt.ErrOverflow, "a mutator's own sum stays in int64")
	require.NoError(t, m.Flush(ctx))
	require.Equal(t, "9223372036854775807", o.read().BigValue().String(), "refused: nothing written")
	o.clock.Advance(time.Minute)

	o.write(add(1))
	v := o.read()
	require.Equal(t, int64(math.MaxInt64), v.Value(), "clamped")
	require.Equal(t, "9223372036854775808", v.BigValue().String())
	_, err := tally.Tally[*tally.Sum]{State: v}.MarshalBinary()
	require.ErrorIs(t, err, crdt.ErrOverflow, "2^63 does not encode")
	require.Equal(t, [2]int{1, 1}, o.gc(), "the tally takes 2^63 − 1, not 2^63")
	require.Equal(t, [2]int{0, 1}, o.gc(), "and again")
	require.Equal(t, "9223372036854775808", o.read().BigValue().String())

	o.write(add(-2))
	require.Equal(t, int64(math.MaxInt64-1), o.read().Value())
	require.Equal(t, [2]int{2, 0}, o.gc(), "back in range: everything folds")
	require.Equal(t, int64(math.MaxInt64-1), o.read().Value())
}

// TestGCFoldsWholeExpiresAtGroups: folded_through covers every shard at or
// below it, so GC folds all the shards of one expires_at or none of them.
func TestGCFoldsWholeExpiresAtGroups(t *testing.T) {
	ctx := context.Background()
	o := newOvf[*tally.Sum](t)
	a, b := o.mutator(), o.mutator() // the same expires_at
	require.NoError(t, a.Update(ctx, add(math.MaxInt64)))
	require.NoError(t, b.Update(ctx, add(1)))
	require.Equal(t, [2]int{0, 2}, o.gc(), "a alone fits, but b shares its expires_at")
	o.write(add(-1))
	require.Equal(t, [2]int{3, 0}, o.gc())
	require.Equal(t, int64(math.MaxInt64), o.read().Value())
}

func observeAll(xs ...int64) func(*tally.Stats) error {
	return func(s *tally.Stats) error {
		for _, x := range xs {
			if err := s.Add(x); err != nil {
				return err
			}
		}
		return nil
	}
}

// requireStats checks s against the exact aggregates of n observations
// with sum sum, min lo, max hi and sum of squares sq.
func requireStats(t *testing.T, s *tally.Stats, n, sum, sq *big.Int, lo, hi int64) {
	t.Helper()
	c := s.Summary()
	require.Equal(t, n.String(), c.BigCount().String(), "count")
	require.Equal(t, sum.String(), c.BigSum().String(), "sum")
	require.Equal(t, sq.String(), s.SumOfSquares().String(), "sum of squares")
	require.Equal(t, [2]int64{lo, hi}, [2]int64{c.Min, c.Max})
	clamp := func(x *big.Int) int64 {
		if x.IsInt64() {
			return x.Int64()
		}
		return map[int]int64{1: math.MaxInt64, -1: math.MinInt64}[x.Sign()]
	}
	require.Equal(t, [2]int64{clamp(n), clamp(sum)}, [2]int64{s.Count(), s.Sum()}, "clamped")
	mean, _ := new(big.Rat).SetFrac(sum, n).Float64()
	num := new(big.Int).Sub(new(big.Int).Mul(n, sq), new(big.Int).Mul(sum, sum))
	variance, _ := new(big.Rat).SetFrac(num, new(big.Int).Mul(n, n)).Float64()
	gotMean, _ := s.Mean()
	gotVar, _ := s.Variance()
	require.Equal(t, [2]float64{mean, variance}, [2]float64{gotMean, gotVar}, "exact, rounded once")
}

// TestStatsPastTheirWidthsKeepTheKey: stats shards whose sum of squares,
// sum or count together pass 2^128 or int64 read exactly, GC leaves what
// the tally cannot hold, and writes go on.
func TestStatsPastTheirWidthsKeepTheKey(t *testing.T) {
	ctx := context.Background()
	b := big.NewInt
	sq := func(x int64) *big.Int { return new(big.Int).Mul(b(x), b(x)) }
	add := func(xs ...*big.Int) *big.Int {
		r := new(big.Int)
		for _, x := range xs {
			r.Add(r, x)
		}
		return r
	}
	t.Run("sum of squares", func(t *testing.T) {
		o := newOvf[*tally.Stats](t)
		one := add(sq(math.MinInt64), sq(math.MaxInt64), sq(1<<33)) // 2^127 + 2^66 − 2^64 + 1
		o.write(observeAll(math.MinInt64, math.MaxInt64, 1<<33))
		require.True(t, o.read().Summary().Fits())
		o.write(observeAll(math.MinInt64, math.MaxInt64, 1<<33))
		s := o.read()
		require.False(t, s.Summary().Fits())
		requireStats(t, s, b(6), b(2*(1<<33-1)), add(one, one), math.MinInt64, math.MaxInt64)
		require.Equal(t, [2]int{1, 1}, o.gc())
		o.write(observeAll(3))
		requireStats(t, o.read(), b(7), b(2*(1<<33-1)+3), add(one, one, sq(3)), math.MinInt64, math.MaxInt64)
	})
	t.Run("sum", func(t *testing.T) {
		o := newOvf[*tally.Stats](t)
		m := o.mutator()
		require.NoError(t, m.Update(ctx, observeAll(math.MaxInt64)))
		require.ErrorIs(t, m.Stage(observeAll(1)), crdt.ErrOverflow, "a mutator's own sum stays in int64")
		o.clock.Advance(time.Minute)
		o.write(observeAll(1))
		requireStats(t, o.read(), b(2), add(b(math.MaxInt64), b(1)), add(sq(math.MaxInt64), b(1)), 1, math.MaxInt64)
		require.Equal(t, [2]int{1, 1}, o.gc())
		o.write(observeAll(-1))
		s := o.read()
		require.True(t, s.Summary().Fits())
		require.Equal(t, int64(math.MaxInt64), s.Sum())
		require.Equal(t, [2]int{2, 0}, o.gc())
	})
	t.Run("count", func(t *testing.T) {
		o := newOvf[*tally.Stats](t)
		zeros := zeros(t, math.MaxInt64) // valid: no mutator observes that many
		for range 2 {
			o.write(func(s *tally.Stats) error { return s.Combine(zeros) })
		}
		n := add(b(math.MaxInt64), b(math.MaxInt64))
		requireStats(t, o.read(), n, b(0), b(0), 0, 0)
		require.Equal(t, [2]int{1, 1}, o.gc())
		o.write(observeAll(4))
		requireStats(t, o.read(), add(n, b(1)), b(4), b(16), 0, 4)
		// Combine in a mutator past what a shard holds: its Flush fails and
		// writes nothing.
		m := o.mutator()
		require.NoError(t, m.Update(ctx, func(s *tally.Stats) error { return s.Combine(zeros) }))
		require.ErrorIs(t, m.Update(ctx, func(s *tally.Stats) error { return s.Combine(zeros) }), crdt.ErrOverflow)
		requireStats(t, o.read(), add(n, b(math.MaxInt64), b(1)), b(4), b(16), 0, 4)
	})
}

// zeros returns the Stats of n zeros, by doubling.
func zeros(t *testing.T, n int64) *tally.Stats {
	acc, pow := new(tally.Stats), new(tally.Stats)
	require.NoError(t, pow.Add(0))
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			require.NoError(t, acc.Combine(pow))
		}
		require.NoError(t, pow.Combine(pow.Clone()))
	}
	return acc
}

// TestCombinePastTheWidthsIsExact: shards of extreme observations, each
// within its own widths (a refused observation is dropped, as a mutator's
// Stage drops it), combine in any order to the exact aggregates of what
// they hold, and the combination encodes iff it fits (SPEC.md 7.1).
func TestCombinePastTheWidthsIsExact(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewPCG(uint64(seed), 0x0f))
	obs := func() int64 {
		switch rng.IntN(3) {
		case 0:
			return math.MaxInt64 - rng.Int64N(3)
		case 1:
			return math.MinInt64 + rng.Int64N(3)
		}
		return rng.Int64N(2001) - 1000
	}
	for range proptest.Scale(1000) {
		var sums []*tally.Sum
		var sts []*tally.Stats
		sum, n, sSum, sq := new(big.Int), new(big.Int), new(big.Int), new(big.Int)
		for range 1 + rng.IntN(6) {
			a, b := new(tally.Sum), new(tally.Stats)
			for range rng.IntN(4) {
				x := obs()
				if a.Add(x) == nil {
					sum.Add(sum, big.NewInt(x))
				}
				if b.Add(x) == nil {
					n.Add(n, big.NewInt(1))
					sSum.Add(sSum, big.NewInt(x))
					sq.Add(sq, new(big.Int).Mul(big.NewInt(x), big.NewInt(x)))
				}
			}
			sums, sts = append(sums, a), append(sts, b)
		}
		order := rng.Perm(len(sums))
		a, a2 := combineAll(t, sums, nil), combineAll(t, sums, order)
		require.True(t, a.Equal(a2), "order: %v vs %v", a, a2)
		require.Equal(t, sum.String(), a.BigValue().String())
		_, err := tally.Shard[*tally.Sum]{Mutator: "m", ExpiresAt: 1, State: a}.MarshalBinary()
		require.Equal(t, sum.IsInt64(), err == nil, "sum %s encodes iff it fits: %v", sum, err)

		b, b2 := combineAll(t, sts, nil), combineAll(t, sts, order)
		require.True(t, b.Equal(b2), "order: %v vs %v", b, b2)
		c := b.Summary()
		require.Equal(t, [3]string{n.String(), sSum.String(), sq.String()},
			[3]string{c.BigCount().String(), c.BigSum().String(), c.SumSquares().String()})
		fits := n.IsInt64() && sSum.IsInt64() && sq.BitLen() <= 128
		require.Equal(t, fits, c.Fits())
		_, err = tally.Tally[*tally.Stats]{State: b}.MarshalBinary()
		require.Equal(t, fits, err == nil, "%v encodes iff it fits: %v", b, err)
	}
}

// combineAll combines parts, in order (nil: as given).
func combineAll[A tally.Aggregate[A]](t *testing.T, parts []A, order []int) A {
	var acc A
	for k := range parts {
		i := k
		if order != nil {
			i = order[k]
		}
		if k == 0 {
			acc = parts[i].Clone()
			continue
		}
		require.NoError(t, acc.Combine(parts[i]))
	}
	return acc
}
