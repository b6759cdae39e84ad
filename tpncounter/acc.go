package tpncounter

import (
	"math"
	"math/bits"
)

// acc is a 128-bit two's complement accumulator. A counter keeps its value in
// one so that intermediate sums (several large totals before a correction is
// subtracted) never wrap; only the final value must fit in an int64.
type acc struct {
	hi int64
	lo uint64
}

func (a *acc) add(v int64) {
	var carry uint64
	a.lo, carry = bits.Add64(a.lo, uint64(v), 0)
	a.hi += int64(carry) + (v >> 63)
}

func (a *acc) sub(v int64) {
	if v == math.MinInt64 {
		a.add(math.MaxInt64)
		a.add(1)
		return
	}
	a.add(-v)
}

// fits reports whether the accumulated value is representable as an int64.
func (a acc) fits() bool {
	return (a.hi == 0 && a.lo <= math.MaxInt64) || (a.hi == -1 && a.lo > math.MaxInt64)
}

// int64 returns the value; callers check fits first.
func (a acc) int64() int64 { return int64(a.lo) }
