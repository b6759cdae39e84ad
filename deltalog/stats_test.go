package deltalog_test

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/timeid"
)

var statsID = timeid.FromParts(time.Date(2013, 5, 28, 10, 0, 0, 0, time.UTC), 0x1234, 0xA1B2C3D4E5F6)

// withSq returns s with the sum of squares q.
func withSq(s deltalog.Stats, q *big.Int) deltalog.Stats {
	s.SumSqLo = new(big.Int).And(q, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	s.SumSqHi = new(big.Int).Rsh(q, 64).Uint64()
	return s
}

// statsOfDeltas returns the exact stats of deltas, computed with math/big.
func statsOfDeltas(xs ...int64) deltalog.Stats {
	s := deltalog.Stats{Count: int64(len(xs)), Min: xs[0], Max: xs[0]}
	sum, sq := new(big.Int), new(big.Int)
	for _, x := range xs {
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
		sum.Add(sum, big.NewInt(x))
		sq.Add(sq, new(big.Int).Mul(big.NewInt(x), big.NewInt(x)))
	}
	s.Sum = sum.Int64() // callers keep the sum within int64
	return withSq(s, sq)
}

func mergeCell(s deltalog.Stats) deltalog.Cell {
	return deltalog.Cell{ID: statsID, Kind: deltalog.KindMerge, Delta: s.Sum, Written: 1, Stats: s}
}

// encodeMergeCell encodes a merge cell as the codec would, without
// validating it, so tests can hand the decoder cells MarshalBinary refuses.
func encodeMergeCell(t testing.TB, s deltalog.Stats) []byte {
	t.Helper()
	var b bytes.Buffer
	e := msgpack.NewEncoder(&b)
	e.UseCompactInts(true) // the decoder accepts integers in their smallest form only
	require.NoError(t, e.Encode([]any{string(crdt.TagLogCell), 1, []any{statsID[:], uint64(deltalog.KindMerge), s.Sum, 1,
		[]any{s.Count, s.Sum, s.Min, s.Max, s.SumSqHi, s.SumSqLo}}}))
	return b.Bytes()
}

// checkStats validates s as a merge cell's stats and decodes its encoding;
// the two must agree, and a refusal must be for the stats.
func checkStats(t testing.TB, s deltalog.Stats) error {
	t.Helper()
	verr := mergeCell(s).Validate()
	var c deltalog.Cell
	derr := c.UnmarshalBinary(encodeMergeCell(t, s))
	switch {
	case verr == nil && derr != nil:
		t.Fatalf("%+v: valid but not decoded: %v", s, derr)
	case verr != nil && !errors.Is(verr, crdt.ErrInvalidAmount):
		t.Fatalf("%+v: Validate: %v", s, verr)
	case verr != nil && !(errors.Is(derr, crdt.ErrCorruptEncoding) && strings.Contains(derr.Error(), "merge cell stats")):
		t.Fatalf("%+v: invalid (%v) but decoded with %v", s, verr, derr)
	case derr == nil && c.Stats != s:
		t.Fatalf("decoded %+v, want %+v", c.Stats, s)
	}
	return verr
}

// TestMergeCellStatsRefused: each case breaks one condition by the least
// amount (its neighbour at the bound passes); the first is a state whose
// Variance came out as −1 before the sum of squares was checked.
func TestMergeCellStatsRefused(t *testing.T) {
	c := func(n, sum, mn, mx int64, sq int64) deltalog.Stats {
		return withSq(deltalog.Stats{Count: n, Sum: sum, Min: mn, Max: mx}, big.NewInt(sq))
	}
	below := statsOfDeltas(math.MinInt64, math.MaxInt64, 0, 0)
	below = withSq(below, new(big.Int).Sub(below.SumSquares(), big.NewInt(2)))
	cases := []struct {
		name    string
		bad, ok deltalog.Stats
	}{
		{"min = max with a smaller sum of squares (variance −1)", c(2, 4, 2, 2, 6), c(2, 4, 2, 2, 8)},
		{"min = max with a larger sum of squares", c(3, 6, 2, 2, 14), c(3, 6, 2, 2, 12)},
		{"one delta, sum of squares not sum²", c(1, 3, 3, 3, 8), c(1, 3, 3, 3, 9)},
		{"two deltas, sum not min + max", c(2, 9, 0, 10, 81), c(2, 10, 0, 10, 100)},
		{"two deltas, sum of squares not min² + max²", c(2, 10, 0, 10, 98), c(2, 10, 0, 10, 100)},
		{"sum below (n−1)·min + max though above n·min", c(3, 9, 0, 10, 101), c(3, 10, 0, 10, 100)},
		{"sum above min + (n−1)·max though below n·max", c(3, 21, 0, 10, 221), c(3, 20, 0, 10, 200)},
		{"sum of squares and sum of another parity", c(4, 20, 0, 10, 151), c(4, 20, 0, 10, 152)},
		{"sum of squares below the least (0, 5, 5, 10)", c(4, 20, 0, 10, 148), c(4, 20, 0, 10, 150)},
		{"sum of squares above the greatest (0, 0, 10, 10)", c(4, 20, 0, 10, 202), c(4, 20, 0, 10, 200)},
		{"least with an uneven split (−3, 1, 1, 2, 4)", c(5, 5, -3, 4, 29), c(5, 5, -3, 4, 31)},
		{"greatest with a remainder (−3, −3, 3, 4, 4)", c(5, 5, -3, 4, 61), c(5, 5, -3, 4, 59)},
		{"the int64 extremes and 0, sum of squares 1 too large",
			withSq(statsOfDeltas(math.MinInt64, math.MaxInt64, 0), new(big.Int).Add(statsOfDeltas(math.MinInt64, math.MaxInt64, 0).SumSquares(), big.NewInt(1))),
			statsOfDeltas(math.MinInt64, math.MaxInt64, 0)},
		{"below the least by 2 at the int64 extremes", below, statsOfDeltas(math.MinInt64, math.MaxInt64, 0, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, checkStats(t, tc.bad), crdt.ErrInvalidAmount, "%+v", tc.bad)
			require.NoError(t, checkStats(t, tc.ok), "%+v", tc.ok)
			v, ok := tc.ok.Variance()
			require.True(t, ok)
			require.GreaterOrEqual(t, v, 0.0)
		})
	}
}

// TestMergeCellStatsCheckIsTight enumerates every multiset of up to five
// deltas in [−2, 3] (zero included: the check is about aggregates) and
// requires a merge cell to pass, for each (count, sum, min, max), exactly
// with the sums of squares between the least and the greatest of the
// multisets with those aggregates and of the parity of the sum, and never
// for (count, sum, min, max) no multiset has.
func TestMergeCellStatsCheckIsTight(t *testing.T) {
	testsize.SkipSequential(t)
	const lo, hi, maxN = -2, 3, 5
	type key struct{ n, sum, min, max int64 }
	type bounds struct{ least, greatest int64 }
	real := map[key]bounds{}
	var rec func(xs []int64, from int64)
	rec = func(xs []int64, from int64) {
		if len(xs) > 0 {
			s := statsOfDeltas(xs...)
			k, q := key{s.Count, s.Sum, s.Min, s.Max}, s.SumSquares().Int64()
			b, ok := real[k]
			if !ok {
				b = bounds{q, q}
			}
			real[k] = bounds{min(b.least, q), max(b.greatest, q)}
		}
		if len(xs) == maxN {
			return
		}
		for x := from; x <= hi; x++ {
			rec(append(xs, x), x)
		}
	}
	rec(nil, lo)
	checked := 0
	for n := int64(1); n <= maxN; n++ {
		for mn := int64(lo); mn <= hi; mn++ {
			for mx := mn; mx <= hi; mx++ {
				for sum := n*mn - 1; sum <= n*mx+1; sum++ {
					b, possible := real[key{n, sum, mn, mx}]
					for q := int64(0); q <= n*hi*hi+2; q++ {
						s := withSq(deltalog.Stats{Count: n, Sum: sum, Min: mn, Max: mx}, big.NewInt(q))
						want := possible && b.least <= q && q <= b.greatest && (q-sum)%2 == 0
						if got := checkStats(t, s) == nil; got != want {
							t.Fatalf("%+v: valid %v, want %v (real multisets with these aggregates: %v, sums of squares %d..%d)",
								s, got, want, possible, b.least, b.greatest)
						}
						if v, _ := s.Variance(); want && v < 0 {
							t.Fatalf("%+v: variance %v", s, v)
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d aggregates checked against %d real (count, sum, min, max)", checked, len(real))
}

// randomDeltas returns up to 40 non-zero deltas, favouring the int64
// extremes and repeated values, whose running sums fit int64 and whose sum
// of squares fits 128 bits.
func randomDeltas(rng *rand.Rand) []int64 {
	one := func() int64 {
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
	pool := []int64{one(), one(), one()}
	n := 1 + rng.IntN(40)
	var xs []int64
	var sum int64
	sq := new(big.Int)
	for tries := 0; len(xs) < n && tries < 1000; tries++ {
		x := one()
		if rng.IntN(2) == 0 {
			x = pool[rng.IntN(len(pool))]
		}
		s := sum + x
		q := new(big.Int).Add(sq, new(big.Int).Mul(big.NewInt(x), big.NewInt(x)))
		if x == 0 || (x > 0 && s < sum) || (x < 0 && s > sum) || q.BitLen() > 128 {
			continue
		}
		sum, sq = s, q
		xs = append(xs, x)
	}
	return xs
}

// TestMergeCellsOfRealDeltasPass: merge cells of random updates always
// pass validation and decode, and the read's Variance is the exact
// population variance.
func TestMergeCellsOfRealDeltasPass(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewPCG(uint64(seed), 0xde17a))
	for i := range proptest.Scale(1000) {
		xs := randomDeltas(rng)
		if len(xs) == 0 {
			continue
		}
		var l deltalog.Log
		for j, x := range xs {
			require.NoError(t, l.Add(timeid.New(base.Add(time.Duration(j)*time.Second)), x))
		}
		m, ok, err := l.MergeBefore(base.Add(time.Duration(len(xs))*time.Second), base)
		if err != nil || !ok {
			t.Fatalf("seed %d case %d: merge of %v: %v %v", seed, i, xs, ok, err)
		}
		want := statsOfDeltas(xs...)
		require.Equal(t, want, m.Stats, "seed %d case %d", seed, i)
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("seed %d case %d: the merge cell of %v is refused: %v", seed, i, xs, err)
		}
		var d deltalog.Cell
		require.NoError(t, d.UnmarshalBinary(b), "seed %d case %d", seed, i)
		var wantV float64
		if n := big.NewInt(want.Count); want.Count > 1 {
			num := new(big.Int).Sub(new(big.Int).Mul(n, want.SumSquares()), new(big.Int).Mul(big.NewInt(want.Sum), big.NewInt(want.Sum)))
			wantV, _ = new(big.Rat).SetFrac(num, new(big.Int).Mul(n, n)).Float64()
		}
		if v, _ := d.Stats.Variance(); v != wantV || v < 0 {
			t.Fatalf("seed %d case %d: variance of %v = %v, want %v", seed, i, xs, v, wantV)
		}
	}
}

// TestStatsAddKeepsValidStatsValid: stats that pass need not come from
// deltas (a sum of squares can move by an even amount within its bounds);
// whatever Add builds from any of them must pass again, with a variance
// that is not negative.
func TestStatsAddKeepsValidStatsValid(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewPCG(uint64(seed), 0xadd5))
	var pool []deltalog.Stats
	unreal := 0
	for tries := 0; len(pool) < proptest.Scale(400); tries++ {
		require.Less(t, tries, proptest.Scale(400)*100, "too few stats pass the check")
		xs := randomDeltas(rng)
		if len(xs) == 0 {
			continue
		}
		s := statsOfDeltas(xs...)
		shift := int64(2 * (rng.IntN(7) - 3))
		if rng.IntN(4) == 0 {
			shift *= 1 << 40
		}
		q := new(big.Int).Add(s.SumSquares(), big.NewInt(shift))
		if q.Sign() < 0 || q.BitLen() > 128 {
			continue
		}
		s = withSq(s, q)
		if checkStats(t, s) != nil {
			continue
		}
		if shift != 0 {
			unreal++
		}
		pool = append(pool, s)
	}
	require.Positive(t, unreal, "no shifted stats passed the check")
	for i := range proptest.Scale(3000) {
		acc := pool[rng.IntN(len(pool))]
		for range 1 + rng.IntN(3) {
			next, err := acc.Add(pool[rng.IntN(len(pool))])
			if err != nil {
				require.ErrorIs(t, err, crdt.ErrOverflow)
				break
			}
			acc = next
		}
		if err := checkStats(t, acc); err != nil {
			t.Fatalf("seed %d case %d: Add built %+v, which is refused: %v", seed, i, acc, err)
		}
		if v, _ := acc.Variance(); v < 0 {
			t.Fatalf("seed %d case %d: %+v has variance %v", seed, i, acc, v)
		}
	}
	t.Logf("%d stats in the pool, %d of them with a shifted sum of squares", len(pool), unreal)
}

// TestMergeCellEmptyStatsRefused: a merge cell covers at least one update,
// so stats with count 0 are refused, even all-zero ones (which
// stats.Summary.Validate accepts as the empty set) and negative counts.
func TestMergeCellEmptyStatsRefused(t *testing.T) {
	for _, s := range []deltalog.Stats{{}, {Count: -1, Sum: 1, Min: 1, Max: 1, SumSqLo: 1}, {Count: 0, Sum: 2, Min: 1, Max: 1, SumSqLo: 2}} {
		err := checkStats(t, s)
		require.ErrorIs(t, err, crdt.ErrInvalidAmount, "%+v", s)
		require.Contains(t, err.Error(), "merge cell stats", "%+v", s)
	}
}
