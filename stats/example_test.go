package stats_test

import (
	"fmt"

	"github.com/counterkit/counterkit/stats"
)

// A Summary is built from single observations with Of and Add; the mean and
// the variance are exact quotients rounded once.
func Example() {
	var s stats.Summary
	for _, x := range []int64{1, 1, 2} {
		var err error
		if s, err = s.Add(stats.Of(x)); err != nil {
			panic(err)
		}
	}
	mean, _ := s.Mean()
	variance, _ := s.Variance()
	fmt.Println(s.Count, s.Sum, s.Min, s.Max, s.SumSquares())
	fmt.Println(mean, variance, s.Validate())

	// The empty Summary has no mean.
	_, ok := stats.Summary{}.Mean()
	fmt.Println(ok)

	// Above 2^53 the exact rule matters: float64(sum)/3 would give
	// 1.1727756859949458e+18.
	big := stats.Summary{}
	for _, x := range []int64{3518327057984836985, 1, 1} {
		big, _ = big.Add(stats.Of(x))
	}
	mean, _ = big.Mean()
	fmt.Println(mean)
	// Output:
	// 3 4 1 2 6
	// 1.3333333333333333 0.2222222222222222 <nil>
	// false
	// 1.1727756859949455e+18
}
