package tally_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/stats"
	"github.com/counterkit/counterkit/tally"
)

// statsCells is the stats body of a tally as raw cells, so tests can encode
// cells that no Add ever builds.
type statsCells struct {
	n, sum, min, max int64
	sq               *big.Int
}

func (c statsCells) String() string {
	return fmt.Sprintf("n=%d sum=%d min=%d max=%d sumsq=%s", c.n, c.sum, c.min, c.max, c.sq)
}

// encode returns the bytes of a stats tally holding c.
func (c statsCells) encode(t testing.TB) []byte {
	t.Helper()
	lo := new(big.Int).And(c.sq, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(c.sq, 64).Uint64()
	var b bytes.Buffer
	e := msgpack.NewEncoder(&b)
	e.UseCompactInts(true) // the decoder accepts integers in their smallest form only
	require.NoError(t, e.Encode([]any{string(crdt.TagTally), 1, []any{"stats", 0, []any{c.n, c.sum, c.min, c.max, hi, lo}}}))
	return b.Bytes()
}

// refusedForStats reports whether err is the decoder refusing the stats
// cells (not their encoding).
func refusedForStats(err error) bool {
	return errors.Is(err, crdt.ErrCorruptEncoding) && strings.Contains(err.Error(), "corrupt encoding: stats n=")
}

// decode decodes c as a stats tally.
func (c statsCells) decode(t testing.TB) (*tally.Stats, error) {
	tl, err := tally.DecodeTally[*tally.Stats](c.encode(t))
	return tl.State, err
}

// cellsOf returns the exact cells of a multiset, computed with math/big.
func cellsOf(xs ...int64) statsCells {
	c := statsCells{n: int64(len(xs)), min: xs[0], max: xs[0], sq: new(big.Int)}
	sum := new(big.Int)
	for _, x := range xs {
		c.min, c.max = min(c.min, x), max(c.max, x)
		sum.Add(sum, big.NewInt(x))
		c.sq.Add(c.sq, new(big.Int).Mul(big.NewInt(x), big.NewInt(x)))
	}
	c.sum = sum.Int64() // callers keep the sum within int64
	return c
}

func bigInt(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

// TestStatsDecodeRefusesImpossibleCells: each case breaks one condition
// by the least amount (its neighbour at the bound decodes), and the first is
// the state whose Variance came out as −1 before the sum of squares was
// checked.
func TestStatsDecodeRefusesImpossibleCells(t *testing.T) {
	c := func(n, sum, mn, mx int64, sq string) statsCells {
		return statsCells{n: n, sum: sum, min: mn, max: mx, sq: bigInt(sq)}
	}
	min64, max64 := int64(math.MinInt64), int64(math.MaxInt64)
	cases := []struct {
		name    string
		bad, ok statsCells
	}{
		{"min = max with a smaller sum of squares (variance −1)", c(2, 4, 2, 2, "6"), c(2, 4, 2, 2, "8")},
		{"min = max with a larger sum of squares", c(3, 6, 2, 2, "14"), c(3, 6, 2, 2, "12")},
		{"min = max with another sum", c(3, 7, 2, 2, "12"), c(3, 6, 2, 2, "12")},
		{"one observation, sum of squares not sum²", c(1, 3, 3, 3, "8"), c(1, 3, 3, 3, "9")},
		{"two observations, sum not min + max", c(2, 9, 0, 10, "81"), c(2, 10, 0, 10, "100")},
		{"two observations, sum of squares not min² + max²", c(2, 10, 0, 10, "98"), c(2, 10, 0, 10, "100")},
		{"sum below (n−1)·min + max though above n·min", c(3, 9, 0, 10, "101"), c(3, 10, 0, 10, "100")},
		{"sum above min + (n−1)·max though below n·max", c(3, 21, 0, 10, "221"), c(3, 20, 0, 10, "200")},
		{"sum of squares and sum of another parity", c(4, 20, 0, 10, "151"), c(4, 20, 0, 10, "152")},
		{"sum of squares below the least (0, 5, 5, 10)", c(4, 20, 0, 10, "148"), c(4, 20, 0, 10, "150")},
		{"sum of squares above the greatest (0, 0, 10, 10)", c(4, 20, 0, 10, "202"), c(4, 20, 0, 10, "200")},
		{"least with an uneven split (−3, 1, 1, 2, 4)", c(5, 5, -3, 4, "29"), c(5, 5, -3, 4, "31")},
		{"greatest with a remainder (−3, −3, 3, 4, 4)", c(5, 5, -3, 4, "61"), c(5, 5, -3, 4, "59")},
		{"the int64 extremes and 0, sum of squares 1 too large", c(3, -1, min64, max64, "170141183460469231713240559642174554114"),
			cellsOf(min64, max64, 0)},
		{"below the least by 2 at the int64 extremes", cellsOf(min64, max64, 0, 0),
			cellsOf(min64, max64, 0, 0)},
	}
	// The last case's bad cells: its least minus 2.
	last := &cases[len(cases)-1].bad
	last.sq = new(big.Int).Sub(last.sq, big.NewInt(2))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.bad.decode(t)
			require.True(t, refusedForStats(err), "%s: %v", tc.bad, err)
			s, err := tc.ok.decode(t)
			require.NoError(t, err, "%s refused", tc.ok)
			v, _ := s.Variance()
			require.GreaterOrEqual(t, v, 0.0)
		})
	}
}

// multisets calls fn with every multiset of n values from [lo, hi], in
// non-decreasing order.
func multisets(n int, lo, hi int64, fn func([]int64)) {
	xs := make([]int64, n)
	var rec func(i int, from int64)
	rec = func(i int, from int64) {
		if i == n {
			fn(xs)
			return
		}
		for x := from; x <= hi; x++ {
			xs[i] = x
			rec(i+1, x)
		}
	}
	rec(0, lo)
}

// TestStatsCheckIsTight enumerates every multiset of up to five values in
// [−2, 3] and requires the decoder to accept, for each (count, sum, min,
// max), exactly the sums of squares between the least and the greatest of
// the multisets with those cells and of the parity of the sum; every sum of
// squares is refused for (count, sum, min, max) no multiset has. So every
// real multiset passes, and no interval or parity check could be tighter.
func TestStatsCheckIsTight(t *testing.T) {
	testsize.SkipSequential(t)
	const lo, hi, maxN = -2, 3, 5
	type key struct{ n, sum, min, max int64 }
	type bounds struct{ least, greatest int64 }
	real := map[key]bounds{}
	for n := 1; n <= maxN; n++ {
		multisets(n, lo, hi, func(xs []int64) {
			c := cellsOf(xs...)
			k, q := key{c.n, c.sum, c.min, c.max}, c.sq.Int64()
			b, ok := real[k]
			if !ok {
				b = bounds{q, q}
			}
			real[k] = bounds{min(b.least, q), max(b.greatest, q)}
		})
	}
	checked := 0
	for n := int64(1); n <= maxN; n++ {
		for mn := int64(lo); mn <= hi; mn++ {
			for mx := mn; mx <= hi; mx++ {
				for sum := n*mn - 1; sum <= n*mx+1; sum++ {
					b, possible := real[key{n, sum, mn, mx}]
					for q := int64(0); q <= n*hi*hi+2; q++ {
						want := possible && b.least <= q && q <= b.greatest && (q-sum)%2 == 0
						cells := statsCells{n: n, sum: sum, min: mn, max: mx, sq: big.NewInt(q)}
						s, err := cells.decode(t)
						if err != nil && !refusedForStats(err) {
							t.Fatalf("%s: %v", cells, err)
						}
						if want != (err == nil) {
							t.Fatalf("%s: decoded %v, want %v (real multisets with these cells: %v, sums of squares %d..%d)",
								cells, err == nil, want, possible, b.least, b.greatest)
						}
						if err == nil {
							if v, _ := s.Variance(); v < 0 {
								t.Fatalf("%s: variance %v", cells, v)
							}
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d cell tuples checked against %d real (count, sum, min, max)", checked, len(real))
}

// randomObservation favours the int64 extremes and small values, where the
// checks' bounds are met with equality.
func randomObservation(rng *rand.Rand) int64 {
	switch rng.IntN(6) {
	case 0:
		return math.MinInt64 + rng.Int64N(3)
	case 1:
		return math.MaxInt64 - rng.Int64N(3)
	case 2:
		return rng.Int64N(7) - 3
	case 3:
		return int64(rng.Uint64())
	default:
		return rng.Int64N(1<<33) - 1<<32
	}
}

// randomObservations returns up to 40 observations whose running sums fit
// int64 and whose sum of squares fits 128 bits (what Add accepts), often
// repeating values so that the sum of squares meets its least or greatest
// bound.
func randomObservations(rng *rand.Rand) []int64 {
	n := 1 + rng.IntN(40)
	pool := []int64{randomObservation(rng), randomObservation(rng), randomObservation(rng)}
	var xs []int64
	var sum int64
	sq := new(big.Int)
	for tries := 0; len(xs) < n && tries < 1000; tries++ {
		x := randomObservation(rng)
		if rng.IntN(2) == 0 {
			x = pool[rng.IntN(len(pool))]
		}
		s := sum + x
		q := new(big.Int).Add(sq, new(big.Int).Mul(big.NewInt(x), big.NewInt(x)))
		if (x > 0 && s < sum) || (x < 0 && s > sum) || q.BitLen() > 128 {
			continue
		}
		sum, sq = s, q
		xs = append(xs, x)
	}
	return xs
}

// TestStatsRealObservationsPass: the stats of random observation sets
// (built with Add, split and combined, encoded and decoded) always pass the
// decoder's check, and Variance equals the exact population variance.
func TestStatsRealObservationsPass(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewPCG(uint64(seed), 0x57a75))
	for i := range proptest.Scale(3000) {
		xs := randomObservations(rng)
		a := new(tally.Stats)
		for _, x := range xs {
			if err := a.Add(x); err != nil {
				t.Fatalf("seed %d case %d: Add(%d): %v", seed, i, x, err)
			}
		}
		// Split at random, the two parts combine to the same cells (unless
		// the second part's own sum overflows).
		cut := rng.IntN(len(xs) + 1)
		p, q := new(tally.Stats), new(tally.Stats)
		splitOK := true
		for j, x := range xs {
			s := p
			if j >= cut {
				s = q
			}
			if s.Add(x) != nil {
				splitOK = false
			}
		}
		if splitOK {
			if err := p.Combine(q); err != nil || !p.Equal(a) {
				t.Fatalf("seed %d case %d: split at %d combines to %s (%v), want %s", seed, i, cut, p, err, a)
			}
		}
		want := cellsOf(xs...)
		enc, err := tally.Tally[*tally.Stats]{State: a}.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, want.encode(t), enc, "seed %d case %d: cells of %v", seed, i, xs)
		got, err := tally.DecodeTally[*tally.Stats](enc)
		if err != nil {
			t.Fatalf("seed %d case %d: the stats of %v were refused: %v", seed, i, xs, err)
		}
		// Exact variance: (n·Σx² − (Σx)²) / n², rounded once.
		n := big.NewInt(want.n)
		num := new(big.Int).Sub(new(big.Int).Mul(n, want.sq), new(big.Int).Mul(big.NewInt(want.sum), big.NewInt(want.sum)))
		wantV, _ := new(big.Rat).SetFrac(num, new(big.Int).Mul(n, n)).Float64()
		if v, _ := got.State.Variance(); v != wantV || v < 0 {
			t.Fatalf("seed %d case %d: variance of %v = %v, want %v", seed, i, xs, v, wantV)
		}
	}
}

// TestStatsCombineKeepsCheckedCellsPassing: cells that pass the check need
// not come from observations (a sum of squares can be moved by an even
// amount within its bounds); whatever Combine builds from any of them must
// pass again, with a variance that is not negative.
func TestStatsCombineKeepsCheckedCellsPassing(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc0b1e))
	var pool []*tally.Stats
	var unreal int
	for tries := 0; len(pool) < proptest.Scale(400); tries++ {
		require.Less(t, tries, proptest.Scale(400)*100, "too few cells pass the check")
		c := cellsOf(randomObservations(rng)...)
		shift := int64(2 * (rng.IntN(7) - 3))
		if rng.IntN(4) == 0 {
			shift *= 1 << 40
		}
		c.sq = new(big.Int).Add(c.sq, big.NewInt(shift))
		if c.sq.Sign() < 0 || c.sq.BitLen() > 128 {
			continue
		}
		s, err := c.decode(t)
		if err != nil {
			require.True(t, refusedForStats(err), "%s: %v", c, err)
			continue
		}
		if shift != 0 {
			unreal++
		}
		pool = append(pool, s)
	}
	require.Positive(t, unreal, "no shifted cells passed the check")
	for i := range proptest.Scale(3000) {
		acc := pool[rng.IntN(len(pool))].Clone()
		for range 1 + rng.IntN(3) {
			require.NoError(t, acc.Combine(pool[rng.IntN(len(pool))]))
		}
		enc, err := tally.Tally[*tally.Stats]{State: acc}.MarshalBinary()
		if !acc.Summary().Fits() {
			require.ErrorIs(t, err, crdt.ErrOverflow)
			continue
		}
		require.NoError(t, err)
		if _, err := tally.DecodeTally[*tally.Stats](enc); err != nil {
			t.Fatalf("seed %d case %d: Combine built %s, which the decoder refuses: %v", seed, i, acc, err)
		}
		if v, _ := acc.Variance(); v < 0 {
			t.Fatalf("seed %d case %d: %s has variance %v", seed, i, acc, v)
		}
	}
	t.Logf("%d cells in the pool, %d of them with a shifted sum of squares", len(pool), unreal)
}

// TestStatsSummary checks the Summary accessor: a nil or empty Stats is the
// empty Summary, and a Stats holds exactly the Summary of its observations,
// whose Mean and Variance it reports.
func TestStatsSummary(t *testing.T) {
	var nilStats *tally.Stats
	require.Equal(t, stats.Summary{}, nilStats.Summary())
	require.Equal(t, stats.Summary{}, new(tally.Stats).Summary())

	var s tally.Stats
	var want stats.Summary
	for _, x := range []int64{3518327057984836985, 1, 1} {
		require.NoError(t, s.Add(x))
		var err error
		want, err = want.Add(stats.Of(x))
		require.NoError(t, err)
	}
	require.Equal(t, want, s.Summary())
	m, ok := s.Mean()
	wm, wok := want.Mean()
	require.Equal(t, wok, ok)
	require.Equal(t, wm, m)
	require.Equal(t, 1.1727756859949455e+18, m, "the exact quotient rounded once")
	v, _ := s.Variance()
	wv, _ := want.Variance()
	require.Equal(t, wv, v)

	// The accessor returns a copy.
	got := s.Summary()
	got.Count = 99
	require.Equal(t, want, s.Summary())
}
