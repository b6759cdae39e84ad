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
	fmt.Printf("%+v\n", ab)
	fmt.Println(ab == ba)
	mean, _ := ab.Mean()
	fmt.Println(mean)

	_, err := stats.Of(math.MaxInt64).Add(stats.Of(1))
	fmt.Println(errors.Is(err, crdt.ErrOverflow))
	forged := stats.Summary{Count: 2, Sum: 100, Min: 1, Max: 5, SumSqLo: 26}
	fmt.Println(errors.Is(forged.Validate(), crdt.ErrInvalidAmount))
	// Output:
	// {Count:5 Sum:106 Min:9 Max:40 SumSqHi:0 SumSqLo:2950}
	// true
	// 21.2
	// true
	// true
}
