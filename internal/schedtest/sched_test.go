package schedtest

import (
	"fmt"
	"testing"
)

// tree returns a scenario of depth decisions among width each, and the
// set of schedules it saw.
func tree(depth, width int) (func(*Sched) string, map[string]int) {
	seen := map[string]int{}
	return func(s *Sched) string {
		path := ""
		for range depth {
			path += fmt.Sprint(s.Pick(width))
		}
		seen[path]++
		if len(s.Choices) != depth {
			return fmt.Sprintf("the schedule's choices %v are not its %d decisions", s.Choices, depth)
		}
		return ""
	}, seen
}

// TestExploreRunsSmallTreesWhole: a tree of at most budget/4 schedules
// runs whole, each schedule once; a larger one runs budget schedules.
func TestExploreRunsSmallTreesWhole(t *testing.T) {
	once, seen := tree(3, 3) // 27 schedules
	if n := Explore(t, 200, once); n != 27 || len(seen) != 27 {
		t.Fatalf("a 27-schedule tree with budget 200: %d runs, %d distinct", n, len(seen))
	}
	for p, k := range seen {
		if k != 1 {
			t.Fatalf("schedule %s ran %d times", p, k)
		}
	}
	once, seen = tree(6, 3) // 729 schedules
	if n := Explore(t, 200, once); n != 200 {
		t.Fatalf("a 729-schedule tree with budget 200: %d runs", n)
	}
	if len(seen) < 150 {
		t.Fatalf("a 729-schedule tree with budget 200: only %d distinct schedules", len(seen))
	}
	once, seen = tree(4, 2)
	if n := Explore(t, 0, once); n != 16 || len(seen) != 16 {
		t.Fatalf("budget 0: %d runs, %d distinct, want all 16", n, len(seen))
	}
}
