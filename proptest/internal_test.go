package proptest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/leanovate/gopter/gen"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

// recorder stands in for *testing.T so that a failing check can be
// observed without failing this test.
type recorder struct {
	name             string
	logs, errs, fats []string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }
func (r *recorder) Logf(f string, a ...any) {
	r.logs = append(r.logs, fmt.Sprintf(f, a...))
}
func (r *recorder) Errorf(f string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(f, a...))
}
func (r *recorder) Fatalf(f string, a ...any) {
	r.fats = append(r.fats, fmt.Sprintf(f, a...))
}

// maxRegister is the smallest CRDT: an int64 that merges by maximum. The
// model value of a set of ops is their maximum (0 for none).
func maxRegister(merge func(dst, src *int64) error) Model[*int64, int64] {
	return Model[*int64, int64]{
		Name:  "max-register",
		New:   func() *int64 { return new(int64) },
		GenOp: gen.Int64Range(1, 20),
		Apply: func(s *int64, _ crdt.ActorID, op int64) error {
			*s = max(*s, op)
			return nil
		},
		Merge: merge,
		Clone: func(s *int64) *int64 { c := *s; return &c },
		Equal: func(a, b *int64) bool { return *a == *b },
		Value: func(s *int64) any { return *s },
		Expect: func(ops []int64) any {
			var m int64
			for _, op := range ops {
				m = max(m, op)
			}
			return m
		},
		Leq: func(a, b *int64) bool { return *a <= *b },
	}
}

func maxMerge(dst, src *int64) error { *dst = max(*dst, *src); return nil }
func sumMerge(dst, src *int64) error { *dst += *src; return nil }

func TestCheckLogsSeedAndReplay(t *testing.T) {
	r := &recorder{name: "TestSomething/case_1"}
	cfg := Options{Cases: 100, Seed: 99}
	checkWith(r, func() (Result, error) { return RunLaws(maxRegister(maxMerge), cfg) })
	require.Empty(t, r.errs)
	require.Empty(t, r.fats)
	require.Len(t, r.logs, 1)
	require.Contains(t, r.logs[0], "seed 99")
	require.Contains(t, r.logs[0], "COUNTERKIT_SEED=99 go test "+replayTags+"./proptest -run '^TestSomething$/^case_1$'")
}

func TestCheckFailureCarriesReplayCommand(t *testing.T) {
	for _, run := range []func(Options) (Result, error){
		func(c Options) (Result, error) { return RunLaws(maxRegister(sumMerge), c) },
		func(c Options) (Result, error) { return RunConvergence(maxRegister(sumMerge), c) },
	} {
		seed := Seed()
		r := &recorder{name: "TestBroken"}
		checkWith(r, func() (Result, error) { return run(Options{Cases: 200, Seed: seed}) })
		require.Len(t, r.errs, 1, "a broken merge must fail the check")
		msg := r.errs[0]
		require.Contains(t, msg, fmt.Sprintf("replay: COUNTERKIT_SEED=%d go test "+replayTags+"./proptest -run '^TestBroken$'", seed))
		require.Contains(t, msg, fmt.Sprintf("(seed %d)", seed))
		require.Contains(t, msg, "law ")
		require.Contains(t, msg, "schedule:")
		require.Len(t, r.logs, 1, "the seed is logged on failure too")
	}
}

func TestCheckInvalidModelIsFatal(t *testing.T) {
	m := maxRegister(maxMerge)
	m.Value = nil
	r := &recorder{name: "TestX"}
	checkWith(r, func() (Result, error) { return RunLaws(m, Options{Seed: 1}) })
	require.Len(t, r.fats, 1)
	require.Contains(t, r.fats[0], "has no Value")
}

func TestReplayCommandQuoting(t *testing.T) {
	require.Equal(t, "COUNTERKIT_SEED=-5 go test "+replayTags+"./proptest -run '^TestA$/^x\\.y\\+z$'", replayCommand("TestA/x.y+z", -5))
	require.Equal(t, "COUNTERKIT_SEED=1 go test "+replayTags+`./proptest -run '^TestA$/^it'\''s$'`, replayCommand("TestA/it's", 1))
	require.Equal(t, "COUNTERKIT_SEED=1 go test "+replayTags+"./proptest -run '^TestReplayCommandQuoting$'", Replay(t, 1))
}

func TestUnion(t *testing.T) {
	cases := []struct{ a, b, want []int }{
		{nil, nil, []int{}},
		{[]int{1, 3}, nil, []int{1, 3}},
		{nil, []int{2}, []int{2}},
		{[]int{1, 3, 5}, []int{2, 3, 6}, []int{1, 2, 3, 5, 6}},
		{[]int{4}, []int{4}, []int{4}},
	}
	for _, c := range cases {
		// Model: a set.
		set := map[int]bool{}
		for _, x := range append(append([]int{}, c.a...), c.b...) {
			set[x] = true
		}
		got := union(c.a, c.b)
		require.Equal(t, c.want, got)
		require.Len(t, got, len(set))
	}
}

func TestShrinkingFindsMinimalCounterexample(t *testing.T) {
	// A sum-merge register breaks idempotence with a single applied op.
	res, err := RunLaws(maxRegister(sumMerge), Options{Cases: 100, Seed: 3})
	require.NoError(t, err)
	require.False(t, res.Passed)
	require.Equal(t, 1, strings.Count(res.Schedule, "apply"), res.Report)
	require.Equal(t, 1, strings.Count(res.Schedule, "\n"), "one step is enough:\n%s", res.Report)
}
