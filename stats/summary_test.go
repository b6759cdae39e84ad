package stats_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/stats"
)

// of returns the Summary of xs, built with Of and Add.
func of(t testing.TB, xs ...int64) stats.Summary {
	t.Helper()
	var s stats.Summary
	for _, x := range xs {
		var err error
		s, err = s.Add(stats.Of(x))
		require.NoError(t, err)
	}
	return s
}

// ref is the reference: the exact sum, sum of squares, mean and variance of
// xs with math/big, each derived value rounded once by big.Rat.
type ref struct {
	sum, sq        *big.Int
	mean, variance float64
}

func refOf(xs []int64) ref {
	n, sum, sq := big.NewInt(int64(len(xs))), new(big.Int), new(big.Int)
	for _, x := range xs {
		b := big.NewInt(x)
		sum.Add(sum, b)
		sq.Add(sq, new(big.Int).Mul(b, b))
	}
	r := ref{sum: sum, sq: sq}
	if len(xs) > 0 {
		r.mean, _ = new(big.Rat).SetFrac(sum, n).Float64()
		num := new(big.Int).Sub(new(big.Int).Mul(n, sq), new(big.Int).Mul(sum, sum))
		r.variance, _ = new(big.Rat).SetFrac(num, new(big.Int).Mul(n, n)).Float64()
	}
	return r
}

// checkAgainstRef requires s to be the Summary of xs, by the reference.
func checkAgainstRef(t testing.TB, s stats.Summary, xs []int64) {
	t.Helper()
	r := refOf(xs)
	require.Equal(t, int64(len(xs)), s.Count)
	require.Equal(t, 0, r.sum.Cmp(big.NewInt(s.Sum)), "sum")
	require.Equal(t, 0, r.sq.Cmp(s.SumSquares()), "sum of squares")
	m, okM := s.Mean()
	v, okV := s.Variance()
	require.Equal(t, len(xs) > 0, okM)
	require.Equal(t, len(xs) > 0, okV)
	require.Equal(t, math.Float64bits(r.mean), math.Float64bits(m), "mean %v, want %v", m, r.mean)
	require.Equal(t, math.Float64bits(r.variance), math.Float64bits(v), "variance %v, want %v", v, r.variance)
	require.GreaterOrEqual(t, v, 0.0)
	require.NoError(t, s.Validate())
	if len(xs) > 0 {
		require.Equal(t, slicesMin(xs), s.Min)
		require.Equal(t, slicesMax(xs), s.Max)
	}
}

func slicesMin(xs []int64) int64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func slicesMax(xs []int64) int64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		name           string
		xs             []int64
		mean, variance string // as strconv 'g' -1; "" when absent
	}{
		{"empty", nil, "", ""},
		{"one value", []int64{7}, "7", "0"},
		{"halves", []int64{1, 2, 3, 4}, "2.5", "1.25"},
		{"thirds", []int64{1, 1, 2}, "1.3333333333333333", "0.2222222222222222"},
		{"negative", []int64{-5, -6}, "-5.5", "0.25"},
		{"extremes", []int64{math.MinInt64, math.MaxInt64}, "-0.5", "8.507059173023462e+37"},
		{"min int64 alone", []int64{math.MinInt64}, "-9.223372036854776e+18", "0"},
		{"sum past 2^53", []int64{1 << 53, 1, 1}, "3.0023997515803315e+15", "1.802880853657926e+31"},
		// float64(sum)/3 is 1.1727756859949458e+18: rounding twice differs.
		{"mean rounded once", []int64{3518327057984836985, 1, 1}, "1.1727756859949455e+18", "2.750805619321831e+36"},
		{"large sum, 7 values", []int64{1<<60 + 1, 1<<60 + 3, 1<<59 + 5, 1, 1, 1, 1}, "4.117576802167311e+17", "2.577074685705449e+35"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := of(t, tc.xs...)
			checkAgainstRef(t, s, tc.xs)
			m, ok := s.Mean()
			got := ""
			if ok {
				got = fmtDouble(m)
			}
			require.Equal(t, tc.mean, got, "Mean")
			v, ok := s.Variance()
			got = ""
			if ok {
				got = fmtDouble(v)
			}
			require.Equal(t, tc.variance, got, "Variance")
		})
	}
}

func TestOf(t *testing.T) {
	require.Equal(t, stats.Summary{Count: 1, Sum: -3, Min: -3, Max: -3, SumSqLo: 9}, stats.Of(-3))
	require.Equal(t, stats.Summary{Count: 1, Sum: math.MinInt64, Min: math.MinInt64, Max: math.MinInt64, SumSqHi: 1 << 62}, stats.Of(math.MinInt64))
}

func TestAddOverflow(t *testing.T) {
	huge := stats.Summary{Count: math.MaxInt64, Sum: 0, Min: 0, Max: 0}
	sq := stats.Summary{Count: 2, Min: -1, Max: 1, SumSqHi: 1 << 63} // built by hand: its sum of squares is 2^127
	for _, tc := range []struct {
		name string
		a, b stats.Summary
	}{
		{"count", huge, stats.Of(0)},
		{"sum above", stats.Of(math.MaxInt64), stats.Of(1)},
		{"sum below", stats.Of(math.MinInt64), stats.Of(-1)},
		{"sum of squares", sq, sq},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.a.Add(tc.b)
			require.ErrorIs(t, err, crdt.ErrOverflow)
			require.Equal(t, tc.a, got, "the receiver is returned unchanged")
			_, err = tc.b.Add(tc.a)
			require.ErrorIs(t, err, crdt.ErrOverflow)
		})
	}
	// Both operands of an intermediate overflow may still fit in another
	// grouping: Add is exact, not wrapping.
	s, err := stats.Of(math.MaxInt64).Add(stats.Of(math.MinInt64))
	require.NoError(t, err)
	require.Equal(t, int64(-1), s.Sum)
}

// TestCombinePastTheWidths: Combine keeps what Add refuses, exactly, with
// the fields clamped, at each boundary: count and sum MaxInt64 fit and
// MaxInt64 + 1 does not, a sum of squares 2^128 − 1 fits and 2^128 does not.
func TestCombinePastTheWidths(t *testing.T) {
	huge := stats.Summary{Count: math.MaxInt64}
	// Built by hand (Combine does not validate): 2^128 − 2, even.
	sq := stats.Summary{Count: 2, Min: -1, Max: 1, SumSqHi: math.MaxUint64, SumSqLo: math.MaxUint64 - 1}
	max128 := stats.Summary{Count: 3, Min: -1, Max: 1, Sum: 1, SumSqHi: math.MaxUint64, SumSqLo: math.MaxUint64}
	two := func(x string) *big.Int { b, _ := new(big.Int).SetString(x, 0); return b }
	for _, tc := range []struct {
		name          string
		a, b          stats.Summary
		fits          bool
		n, sum, sumsq string // exact
		want          stats.Summary
	}{
		{"count at MaxInt64", stats.Summary{Count: math.MaxInt64 - 1}, stats.Of(0), true, "9223372036854775807", "0", "0", huge},
		{"count past MaxInt64", huge, stats.Of(0), false, "9223372036854775808", "0", "0", huge},
		{"sum at MaxInt64", stats.Of(math.MaxInt64 - 1), stats.Of(1), true, "2", "9223372036854775807", "0x3ffffffffffffffe0000000000000005",
			stats.Summary{Count: 2, Sum: math.MaxInt64, Min: 1, Max: math.MaxInt64 - 1, SumSqHi: 0x3ffffffffffffffe, SumSqLo: 5}},
		{"sum past MaxInt64", stats.Of(math.MaxInt64), stats.Of(1), false, "2", "9223372036854775808", "0x3fffffffffffffff0000000000000002",
			stats.Summary{Count: 2, Sum: math.MaxInt64, Min: 1, Max: math.MaxInt64, SumSqHi: 0x3fffffffffffffff, SumSqLo: 2}},
		{"sum past MinInt64", stats.Of(math.MinInt64), stats.Of(-1), false, "2", "-9223372036854775809", "0x40000000000000000000000000000001",
			stats.Summary{Count: 2, Sum: math.MinInt64, Min: math.MinInt64, Max: -1, SumSqHi: 1 << 62, SumSqLo: 1}},
		{"sum of squares at 2^128 − 1", sq, stats.Of(1), true, "3", "1", "0xffffffffffffffffffffffffffffffff", max128},
		{"sum of squares at 2^128", max128, stats.Of(1), false, "4", "2", "0x100000000000000000000000000000000",
			stats.Summary{Count: 4, Sum: 2, Min: -1, Max: 1, SumSqHi: math.MaxUint64, SumSqLo: math.MaxUint64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, got := range []stats.Summary{tc.a.Combine(tc.b), tc.b.Combine(tc.a)} {
				require.Equal(t, tc.fits, got.Fits())
				require.Equal(t, [3]string{tc.n, tc.sum, two(tc.sumsq).String()},
					[3]string{got.BigCount().String(), got.BigSum().String(), got.SumSquares().String()})
				want := tc.want
				require.Equal(t, [6]any{want.Count, want.Sum, want.Min, want.Max, want.SumSqHi, want.SumSqLo},
					[6]any{got.Count, got.Sum, got.Min, got.Max, got.SumSqHi, got.SumSqLo}, "the fields, clamped")
				if tc.fits {
					require.Equal(t, want, got)
					continue
				}
				require.ErrorIs(t, got.Validate(), crdt.ErrOverflow)
				_, err := tc.a.Add(tc.b)
				require.ErrorIs(t, err, crdt.ErrOverflow)
				// Exact, so a Combine brings it back to the Summary that fits.
				back := got.Combine(stats.Summary{Count: 1, Sum: -1, Min: -1, Max: -1, SumSqLo: 1})
				require.Equal(t, got.BigSum().Sub(got.BigSum(), big.NewInt(1)).String(), back.BigSum().String())
			}
		})
	}
	// Past int64 and back: the result fits again and equals the direct sum.
	up := stats.Of(math.MaxInt64).Combine(stats.Of(math.MaxInt64))
	down := up.Combine(stats.Of(math.MinInt64)).Combine(stats.Of(math.MinInt64))
	direct := stats.Of(math.MaxInt64).Combine(stats.Of(math.MinInt64))
	require.Equal(t, direct.Combine(direct), down)
	require.True(t, down.Fits())
}

func TestValidate(t *testing.T) {
	ok := []stats.Summary{
		{},
		stats.Of(0),
		stats.Of(math.MinInt64),
		{Count: 3, Sum: 4, Min: 1, Max: 2, SumSqLo: 6},
		{Count: 2, Sum: 4, Min: -1, Max: 5, SumSqLo: 26},
	}
	for _, s := range ok {
		require.NoError(t, s.Validate(), "%+v", s)
	}
	bad := map[string]stats.Summary{
		"empty with a sum":         {Sum: 1},
		"empty with a min":         {Min: -1},
		"empty with squares":       {SumSqLo: 1},
		"negative count":           {Count: -1},
		"min above max":            {Count: 2, Sum: 3, Min: 2, Max: 1, SumSqLo: 5},
		"one value, sum not min":   {Count: 1, Sum: 2, Min: 1, Max: 1, SumSqLo: 1},
		"one value, wrong squares": {Count: 1, Sum: 1, Min: 1, Max: 1, SumSqLo: 3},
		"sum outside":              {Count: 2, Sum: 100, Min: 1, Max: 2, SumSqLo: 5},
		"parity":                   {Count: 3, Sum: 4, Min: 1, Max: 2, SumSqLo: 7},
		"below the least":          {Count: 4, Sum: 6, Min: 0, Max: 3, SumSqLo: 9 + 2},
		"above the greatest":       {Count: 4, Sum: 6, Min: 0, Max: 3, SumSqLo: 9 + 9 + 2},
	}
	for name, s := range bad {
		err := s.Validate()
		require.Error(t, err, name)
		require.True(t, errors.Is(err, crdt.ErrInvalidAmount), "%s: %v", name, err)
	}
	// The bounds are tight: the least and the greatest pass.
	require.NoError(t, stats.Summary{Count: 4, Sum: 6, Min: 0, Max: 3, SumSqLo: 9 + 1 + 4}.Validate())     // 0, 1, 2, 3
	require.NoError(t, stats.Summary{Count: 4, Sum: 6, Min: 0, Max: 3, SumSqLo: 9 + 9 + 0 + 0}.Validate()) // 0, 0, 3, 3
}

// randomObservation draws from small values, values near 2^53 and values
// near the int64 extremes, so sums past 2^53 and sums of squares past 2^64
// are frequent.
func randomObservation(rng *rand.Rand) int64 {
	switch rng.IntN(4) {
	case 0:
		return rng.Int64N(21) - 10
	case 1:
		return 1<<53 + rng.Int64N(1<<20) - 1<<19
	case 2:
		return math.MaxInt64/4 - rng.Int64N(1<<40)
	}
	return int64(rng.Uint64())
}

// TestAddProperties checks that Add is commutative and associative (when no
// grouping overflows), that the empty Summary is its identity, and that
// every result, its mean and its variance match the math/big reference.
func TestAddProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		var parts [3][]int64
		var sums [3]stats.Summary
		var all []int64
		fits := true
		for i := range parts {
			for range rng.IntN(4) {
				x := randomObservation(rng)
				s, err := sums[i].Add(stats.Of(x))
				if err != nil {
					fits = false
					break
				}
				sums[i] = s
				parts[i] = append(parts[i], x)
			}
			all = append(all, parts[i]...)
		}
		if !fits {
			continue
		}
		a, b, c := sums[0], sums[1], sums[2]
		id, err := a.Add(stats.Summary{})
		require.NoError(t, err)
		require.Equal(t, a, id)
		id, err = stats.Summary{}.Add(a)
		require.NoError(t, err)
		require.Equal(t, a, id)

		ab, err1 := a.Add(b)
		ba, err2 := b.Add(a)
		require.Equal(t, err1 == nil, err2 == nil)
		if err1 == nil {
			require.Equal(t, ab, ba, "commutative")
			checkAgainstRef(t, ab, append(append([]int64{}, parts[0]...), parts[1]...))
		}
		bc, err3 := b.Add(c)
		if err1 != nil || err3 != nil {
			continue
		}
		left, errL := ab.Add(c)
		right, errR := a.Add(bc)
		if errL != nil || errR != nil {
			// Only the final sum can differ in fitting; an exact
			// Sum is the same in both groupings, so both fail.
			require.Equal(t, errL == nil, errR == nil, "%v / %v", errL, errR)
			continue
		}
		require.Equal(t, left, right, "associative")
		checkAgainstRef(t, left, all)
	}
}

// FuzzSummary checks Add and the derived values against the reference for
// observations from the fuzzer, in two groupings.
func FuzzSummary(f *testing.F) {
	f.Add(int64(1), int64(1), int64(2), int64(0))
	f.Add(int64(3518327057984836985), int64(1), int64(1), int64(0))
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), int64(0), int64(-1))
	f.Add(int64(1<<53), int64(1), int64(1), int64(1<<53))
	f.Fuzz(func(t *testing.T, w, x, y, z int64) {
		xs := []int64{w, x, y, z}
		left := stats.Summary{}
		for _, v := range xs {
			var err error
			if left, err = left.Add(stats.Of(v)); err != nil {
				t.Skip("the sum does not fit")
			}
		}
		wx, err1 := stats.Of(w).Add(stats.Of(x))
		yz, err2 := stats.Of(y).Add(stats.Of(z))
		if err1 != nil || err2 != nil {
			t.Skip("a partial sum does not fit")
		}
		right, err := yz.Add(wx)
		require.NoError(t, err)
		require.Equal(t, left, right)
		checkAgainstRef(t, left, xs)
	})
}

func fmtDouble(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// TestValidateIsNecessaryNotSufficient checks Validate's documentation:
// its checks are necessary, and the cell it names passes them although no
// set of four integers has it (the middle two would need a sum of -5 and a
// sum of squares of 15, and only 13 and 17 are possible).
func TestValidateIsNecessaryNotSufficient(t *testing.T) {
	cell := stats.Summary{Count: 4, Sum: -10, Min: -4, Max: -1, SumSqLo: 32}
	if err := cell.Validate(); err != nil {
		t.Fatalf("the documented cell fails Validate: %v", err)
	}
	for a := int64(-4); a <= -1; a++ {
		for b := a; b <= -1; b++ {
			s := stats.Of(-4).Combine(stats.Of(a)).Combine(stats.Of(b)).Combine(stats.Of(-1))
			if s == cell {
				t.Fatalf("{-4, %d, %d, -1} has the cell: the documentation's example is wrong", a, b)
			}
		}
	}
}
