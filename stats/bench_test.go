package stats_test

import (
	"testing"

	"github.com/counterkit/counterkit/stats"
)

// BenchmarkAdd adds single observations, as a tally Stats mutator does.
func BenchmarkAdd(b *testing.B) {
	var s stats.Summary
	x := int64(1)
	for b.Loop() {
		next, err := s.Add(stats.Of(x))
		if err != nil {
			s = stats.Summary{}
			continue
		}
		s, x = next, x*3+1
		if x > 1<<40 {
			x = 1
		}
	}
}
