package exact

import (
	"fmt"
	"math/big"
)

// StatsDefect returns why no multiset of n integers (observations, deltas)
// has sum sum, minimum lo, maximum hi and sum of squares sq, or "" when the
// cells pass every check of SPEC.md 7.1 (all exact; sq between the least
// and greatest sums of squares L and G, both attained, so the tightest).
// Every real multiset passes; Combine keeps passing cells passing
// (concatenating multisets attaining each operand's bounds gives the
// combined cells); L ≥ sum²/n (Cauchy–Schwarz), so Variance is never
// negative for cells that pass.
func StatsDefect(n, sum, lo, hi int64, sq *big.Int) string {
	switch {
	case n < 1:
		return "count must be at least 1"
	case lo > hi:
		return "min above max"
	}
	N, S, m, M := big.NewInt(n), big.NewInt(sum), big.NewInt(lo), big.NewInt(hi)
	square := func(x *big.Int) *big.Int { return new(big.Int).Mul(x, x) }
	mul := func(x, y *big.Int) *big.Int { return new(big.Int).Mul(x, y) }
	if n == 1 || lo == hi {
		if lo != hi || S.Cmp(mul(N, m)) != 0 || sq.Cmp(mul(N, square(m))) != 0 {
			return "with one observation, or min = max, every value is min: want min = max, sum = count·min, sum of squares = count·min²"
		}
		return ""
	}
	// d values other than one min and one max, summing to r.
	d := big.NewInt(n - 2)
	r := new(big.Int).Sub(S, m)
	r.Sub(r, M)
	if r.Cmp(mul(d, m)) < 0 || r.Cmp(mul(d, M)) > 0 {
		return "sum outside [(count−1)·min + max, min + (count−1)·max]"
	}
	if new(big.Int).Sub(sq, S).Bit(0) != 0 {
		return "sum of squares and sum differ in parity (x² ≡ x mod 2)"
	}
	ends := new(big.Int).Add(square(m), square(M))
	least := new(big.Int).Set(ends)
	if n > 2 {
		// d−k of them at q and k at q+1, where r = q·d + k, 0 ≤ k < d.
		q, k := new(big.Int).DivMod(r, d, new(big.Int))
		least.Add(least, mul(new(big.Int).Sub(d, k), square(q)))
		least.Add(least, mul(k, square(new(big.Int).Add(q, big.NewInt(1)))))
	}
	// j of them at hi, one at lo + rem and d − j − 1 at lo, where
	// r − d·lo = j·(hi − lo) + rem.
	t := new(big.Int).Sub(r, mul(d, m))
	j, rem := new(big.Int).DivMod(t, new(big.Int).Sub(M, m), new(big.Int))
	greatest := new(big.Int).Add(ends, mul(j, square(M)))
	greatest.Add(greatest, square(new(big.Int).Add(m, rem)))
	// The rest, d − j − 1 of them, at lo; j = d only when rem = 0, and
	// then the −1 cancels the one at lo + rem.
	greatest.Add(greatest, mul(new(big.Int).Sub(d, new(big.Int).Add(j, big.NewInt(1))), square(m)))
	switch {
	case sq.Cmp(least) < 0:
		return fmt.Sprintf("sum of squares below %s, the least any such values have", least)
	case sq.Cmp(greatest) > 0:
		return fmt.Sprintf("sum of squares above %s, the greatest any such values have", greatest)
	}
	return ""
}
