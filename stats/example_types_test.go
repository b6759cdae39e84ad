package stats_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/stats"
)

// Two replicas summarise the latencies they saw; their Summaries add to
// the same cells in either order, so a merged Summary can be stored and
// compared as a value. Cells that no set of observations has, or a sum
// that does not fit, are refused.
func ExampleSummary() {
	summarise := func(xs ...int64) stats.Summary {
		var s stats.Summary
		for _, x := range xs {
			s, _ = s.Add(stats.Of(x))
		}
		return s
	}
	eu := summarise(12, 15, 40)
	us := summarise(9, 30)

	ab, _ := eu.Add(us)
	ba, _ := us.Add(eu)
	fmt.Println(ab)
	fmt.Println(ab == ba)
	mean, _ := ab.Mean()
	fmt.Println(mean)

	_, err := stats.Of(math.MaxInt64).Add(stats.Of(1))
	fmt.Println(errors.Is(err, crdt.ErrOverflow))
	forged := stats.Summary{Count: 2, Sum: 100, Min: 1, Max: 5, SumSqLo: 26}
	fmt.Println(errors.Is(forged.Validate(), crdt.ErrInvalidAmount))
	// Output:
	// n=5 sum=106 min=9 max=40 sumsq=2950
	// true
	// 21.2
	// true
	// true
}

// Writers that could not see each other each stored a Summary that fits;
// their Combine passes the widths a stored Summary has. It stays exact:
// the fields are clamped, BigCount, BigSum, SumSquares, Mean and Variance
// are not, and a later Combine brings it back. Add refuses what Combine
// keeps, and Validate refuses to store it.
func ExampleSummary_Combine() {
	a := stats.Of(math.MaxInt64).Combine(stats.Of(math.MaxInt64))
	b := stats.Of(math.MinInt64).Combine(stats.Of(math.MinInt64))
	all := a.Combine(b).Combine(stats.Of(1 << 33)) // sum of squares 2^128 + 2^65 + 2
	fmt.Println(all.Fits(), all.SumSqHi == math.MaxUint64, all.SumSquares())
	mean, _ := all.Mean()
	fmt.Println(mean)

	high := a.Combine(stats.Of(1)) // the sum passes int64
	fmt.Println(high.Fits(), high.Sum, high.BigSum(), high.BigCount())
	back := high.Combine(stats.Of(math.MinInt64))
	fmt.Println(back.Fits(), back)

	_, err := a.Add(stats.Of(1))
	fmt.Println(errors.Is(err, crdt.ErrOverflow), errors.Is(high.Validate(), crdt.ErrOverflow))
	// Output:
	// false true 340282366920938463500268095579187314690
	// 1.717986918e+09
	// false 9223372036854775807 18446744073709551615 3
	// true n=4 sum=9223372036854775807 min=-9223372036854775808 max=9223372036854775807 sumsq=255211775190703847560637467426407055363
	// true true
}

// Fits, BigCount and BigSum tell a Summary past its fields' widths from one
// that fits.
func ExampleSummary_Fits() {
	var s stats.Summary
	for range 2 {
		s = s.Combine(stats.Of(math.MinInt64))
	}
	fmt.Println(s.Fits(), s.Count, s.BigCount(), s.Sum, s.BigSum())
	fmt.Println(s) // String gives the exact values
	// Output:
	// false 2 2 -9223372036854775808 -18446744073709551616
	// n=2 sum=-18446744073709551616 min=-9223372036854775808 max=-9223372036854775808 sumsq=170141183460469231731687303715884105728
}
