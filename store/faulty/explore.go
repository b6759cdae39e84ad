package faulty

import (
	"fmt"
	"maps"
	"slices"
)

// Judge judges one run of an exploration of Trials: counted is how many
// times each update (named by its amount) counts in the value read back,
// acked the updates acknowledged, told those every attempt of which was
// answered with an error saying nothing was written (WriteError.NotWritten).
// An acknowledged update must count once, none twice, and a told one not
// at all. It returns each problem, and its class ("counted 2", "told not
// written, counted 1") for grouping.
func Judge(counted map[int64]int64, acked, told map[int64]bool) (problems, classes []string) {
	for _, a := range slices.Sorted(maps.Keys(counted)) {
		switch n := counted[a]; {
		case acked[a] && n != 1 || n > 1:
			problems = append(problems, fmt.Sprintf("update %d (acked %v) counted %d", a, acked[a], n))
			classes = append(classes, fmt.Sprintf("counted %d", n))
		case told[a] && n != 0:
			problems = append(problems, fmt.Sprintf("update %d told not written, counted %d", a, n))
			classes = append(classes, fmt.Sprintf("told not written, counted %d", n))
		}
	}
	return problems, classes
}

// Groups are the runs of an exploration that went wrong, by group (say
// driver/retry/kind/apply).
type Groups map[string]*Group

// A Group is the runs of one group that went wrong, and how often each
// class of problem (Judge) was seen in them.
type Group struct {
	Runs    int
	Classes map[string]int
}

// Add records a run of group key that went wrong with classes, and
// reports whether it is the group's first.
func (g Groups) Add(key string, classes []string) (first bool) {
	gr := g[key]
	if first = gr == nil; first {
		gr = &Group{Classes: map[string]int{}}
		g[key] = gr
	}
	gr.Runs++
	for _, c := range classes {
		gr.Classes[c]++
	}
	return first
}
