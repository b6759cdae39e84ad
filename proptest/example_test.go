package proptest_test

import (
	"errors"
	"fmt"
	"maps"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
)

// gcounter is a grow-only counter, one max-register per actor, used by the
// examples.
type gcounter map[crdt.ActorID]int64

// gcounterModel describes gcounter to the checkers; Expect is the plain
// model: the sum of the accepted increments.
func gcounterModel() proptest.Model[gcounter, int64] {
	return proptest.Model[gcounter, int64]{
		Name:  "gcounter",
		New:   func() gcounter { return gcounter{} },
		GenOp: gen.Int64Range(0, 5), // 0 is rejected
		Apply: func(c gcounter, a crdt.ActorID, n int64) error {
			if n <= 0 {
				return crdt.ErrInvalidAmount
			}
			c[a] += n
			return nil
		},
		Merge: func(dst, src gcounter) error {
			for a, n := range src {
				dst[a] = max(dst[a], n)
			}
			return nil
		},
		Clone: maps.Clone[gcounter],
		Equal: func(a, b gcounter) bool { return maps.Equal(a, b) },
		Value: func(c gcounter) any {
			var sum int64
			for _, n := range c {
				sum += n
			}
			return sum
		},
		Expect: func(ops []int64) any {
			var sum int64
			for _, n := range ops {
				sum += n
			}
			return sum
		},
		Leq: func(a, b gcounter) bool {
			for k, n := range a {
				if n > b[k] {
					return false
				}
			}
			return true
		},
	}
}

// In a test, call proptest.CheckLaws(t, m, proptest.DefaultOptions()) and
// proptest.CheckConvergence(t, m, proptest.DefaultOptions()). RunLaws and
// RunConvergence are the same checks returning a Result.
func Example() {
	m := gcounterModel()
	cfg := proptest.Options{Cases: 200, Seed: 1}
	laws, _ := proptest.RunLaws(m, cfg)
	conv, _ := proptest.RunConvergence(m, cfg)
	fmt.Println(laws.Property, laws.Passed)
	fmt.Println(conv.Property, conv.Passed)
	// Output:
	// laws of gcounter true
	// convergence of gcounter true
}

func ExampleOptions() {
	// Zero fields take defaults; a fixed Seed makes the run reproducible.
	res, err := proptest.RunLaws(gcounterModel(), proptest.Options{Cases: 50, Seed: 7})
	fmt.Println(res.Cases, res.Seed, res.Succeeded, err)
	// Output: 50 7 50 <nil>
}

func ExampleModel() {
	m := gcounterModel()
	a, b := m.New(), m.New()
	_ = m.Apply(a, "r0", 2)
	_ = m.Apply(b, "r1", 3)
	err := m.Apply(b, "r1", 0) // rejected: not counted, b unchanged
	_ = m.Merge(a, b)
	fmt.Println(m.Value(a), m.Expect([]int64{2, 3}), errors.Is(err, crdt.ErrInvalidAmount))
	// Output: 5 5 true
}

func ExampleResult() {
	// A merge that adds instead of taking the maximum double-counts
	// whatever both sides have seen; the checker catches and shrinks it.
	m := gcounterModel()
	m.Name = "gcounter/sum-merge"
	m.Merge = func(dst, src gcounter) error {
		for a, n := range src {
			dst[a] += n
		}
		return nil
	}
	res, _ := proptest.RunLaws(m, proptest.Options{Cases: 200, Seed: 1})
	fmt.Println(res.Passed, res.Violation.Law)
	fmt.Println(res.Schedule)
	// Output:
	// false idempotent
	// schedule: 3 replicas, 1 steps
	//     0: r2 apply 3
}

func ExampleSimulate() {
	type step = proptest.Step[int64]
	sched := proptest.Schedule[int64]{Replicas: 3, Steps: []step{
		{Kind: proptest.StepApply, Replica: 0, Op: 2},
		{Kind: proptest.StepSend, Replica: 0},
		{Kind: proptest.StepApply, Replica: 1, Op: 3},
		{Kind: proptest.StepDeliver, Replica: 1, Msg: 0},
		{Kind: proptest.StepDeliver, Replica: 1, Msg: 0}, // duplicate
	}}
	m := gcounterModel()
	tr, err := proptest.Simulate(m, sched)
	fmt.Println(err)
	for _, r := range tr.Replicas {
		fmt.Println(r.Actor, m.Value(r.State), r.Ops, tr.Ops(r.Ops))
	}
	// Output:
	// <nil>
	// r0 2 [0] [2]
	// r1 5 [0 2] [2 3]
	// r2 0 [] []
}

func ExampleTrace() {
	sched := proptest.Schedule[int64]{Replicas: 3, Steps: []proptest.Step[int64]{
		{Kind: proptest.StepApply, Replica: 2, Op: 4},
		{Kind: proptest.StepSend, Replica: 2},
		{Kind: proptest.StepApply, Replica: 2, Op: 0}, // rejected
		{Kind: proptest.StepApply, Replica: 2, Op: 1},
	}}
	tr, _ := proptest.Simulate(gcounterModel(), sched)
	snap := tr.Snapshots[0]
	fmt.Println(tr.Accepted, snap.Actor, snap.State, snap.Ops)
	// Output: [0 3] r2 map[r2:4] [0]
}

func ExampleReplica() {
	sched := proptest.Schedule[int64]{Replicas: 3, Steps: []proptest.Step[int64]{
		{Kind: proptest.StepApply, Replica: 1, Op: 5},
	}}
	tr, _ := proptest.Simulate(gcounterModel(), sched)
	r := tr.Replicas[1]
	fmt.Println(r.Actor, r.State, r.Ops)
	// Output: r1 map[r1:5] [0]
}

func ExampleSchedule() {
	sched := proptest.Schedule[int64]{Replicas: 3, Steps: []proptest.Step[int64]{
		{Kind: proptest.StepApply, Replica: 0, Op: 1},
		{Kind: proptest.StepSend, Replica: 0},
		{Kind: proptest.StepSend, Replica: 0},
		{Kind: proptest.StepDeliver, Replica: 2, Msg: 1},
		{Kind: proptest.StepDeliver, Replica: 2, Msg: 0}, // older snapshot after newer
		{Kind: proptest.StepDrop, Msg: 0},
		{Kind: proptest.StepApply, Replica: 1, Op: 1, Repeat: true},
	}}
	fmt.Println(sched)
	// Output:
	// schedule: 3 replicas, 7 steps
	//     0: r0 apply 1
	//     1: r0 send
	//     2: r0 send
	//     3: r2 <- r0@2
	//     4: r2 <- r0@1
	//     5: drop r0@1
	//     6: r1 apply 1 (repeat)
}

func ExampleStep() {
	st := proptest.Step[string]{Kind: proptest.StepApply, Replica: 1, Op: "credit t1"}
	fmt.Println(st.Kind, proptest.Actor(st.Replica), st.Op)
	// Output: apply r1 credit t1
}

func ExampleStepKind() {
	for _, k := range []proptest.StepKind{proptest.StepApply, proptest.StepSend, proptest.StepDeliver, proptest.StepDrop} {
		fmt.Print(k, " ")
	}
	fmt.Println()
	// Output: apply send deliver drop
}

func ExampleViolation() {
	m := gcounterModel()
	m.Value = func(gcounter) any { return int64(0) } // forgets everything
	_, err := proptest.Simulate(m, proptest.Schedule[int64]{Replicas: 3, Steps: []proptest.Step[int64]{
		{Kind: proptest.StepApply, Replica: 0, Op: 2},
	}})
	var v *proptest.Violation
	if errors.As(err, &v) {
		fmt.Println(v.Law, v.Step)
	}
	// Output: value 0
}

func ExampleGenSchedule() {
	g := proptest.GenSchedule[int64](gen.Int64Range(1, 3), proptest.Options{MaxOps: 4})
	params := gopter.DefaultGenParameters().CloneWithSeed(1)
	v, _ := g(params.WithSize(8)).Retrieve()
	s := v.(proptest.Schedule[int64])
	fmt.Println(s.Replicas, len(s.Steps) <= proptest.MaxSteps(4))
	// Output: 3 true
}
