package tally_test

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"testing"

	"github.com/axiomhq/hyperloglog"
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/tally"
)

// kind describes one aggregate to the generic tests: how to observe an op,
// read the observable value, and the plain reference model of that value.
type kind[A tally.Aggregate[A], O any] struct {
	name    string
	new     func() A
	genOp   gopter.Gen
	observe func(A, O) error
	value   func(A) any
	expect  func([]O) any // plain model
	// idempotent kinds are also checked directly as join-semilattices.
	idempotent bool
	cases      int // proptest cases before COUNTERKIT_CASES scaling; 0 = lawCases
	maxOps     int // proptest MaxOps; 0 = default
}

type opt struct {
	V  int64
	OK bool
}

type statsValue struct {
	Count, Sum, Min, Max int64
	SumSq                string
}

func sumKind() kind[*tally.Sum, int64] {
	return kind[*tally.Sum, int64]{
		name:    "sum",
		new:     func() *tally.Sum { return new(tally.Sum) },
		genOp:   gen.Int64Range(-1_000_000, 1_000_000),
		observe: func(s *tally.Sum, x int64) error { return s.Add(x) },
		value:   func(s *tally.Sum) any { return s.Value() },
		expect: func(xs []int64) any {
			var t int64
			for _, x := range xs {
				t += x
			}
			return t
		},
	}
}

func minKind() kind[*tally.Min, int64] {
	return kind[*tally.Min, int64]{
		name:    "min",
		new:     func() *tally.Min { return new(tally.Min) },
		genOp:   gen.Int64(),
		observe: func(m *tally.Min, x int64) error { m.Add(x); return nil },
		value:   func(m *tally.Min) any { v, ok := m.Value(); return opt{v, ok} },
		expect: func(xs []int64) any {
			if len(xs) == 0 {
				return opt{}
			}
			return opt{slices.Min(xs), true}
		},
		idempotent: true,
	}
}

func maxKind() kind[*tally.Max, int64] {
	return kind[*tally.Max, int64]{
		name:    "max",
		new:     func() *tally.Max { return new(tally.Max) },
		genOp:   gen.Int64(),
		observe: func(m *tally.Max, x int64) error { m.Add(x); return nil },
		value:   func(m *tally.Max) any { v, ok := m.Value(); return opt{v, ok} },
		expect: func(xs []int64) any {
			if len(xs) == 0 {
				return opt{}
			}
			return opt{slices.Max(xs), true}
		},
		idempotent: true,
	}
}

func statsOf(s *tally.Stats) statsValue {
	lo, _ := s.Min()
	hi, _ := s.Max()
	return statsValue{Count: s.Count(), Sum: s.Sum(), Min: lo, Max: hi, SumSq: s.SumOfSquares().String()}
}

// statsModel computes the cells with math/big from the raw observations.
func statsModel(xs []int64) statsValue {
	if len(xs) == 0 {
		return statsValue{SumSq: "0"}
	}
	sum, sq := new(big.Int), new(big.Int)
	for _, x := range xs {
		b := big.NewInt(x)
		sum.Add(sum, b)
		sq.Add(sq, new(big.Int).Mul(b, b))
	}
	return statsValue{Count: int64(len(xs)), Sum: sum.Int64(), Min: slices.Min(xs), Max: slices.Max(xs), SumSq: sq.String()}
}

func statsKind() kind[*tally.Stats, int64] {
	return kind[*tally.Stats, int64]{
		name:    "stats",
		new:     func() *tally.Stats { return new(tally.Stats) },
		genOp:   gen.Int64Range(-3_000_000_000, 3_000_000_000), // squares above 2^63
		observe: func(s *tally.Stats, x int64) error { return s.Add(x) },
		value:   func(s *tally.Stats) any { return statsOf(s) },
		expect:  func(xs []int64) any { return statsModel(xs) },
		cases:   300, // big.Int values make each case slower
	}
}

func distinctKind() kind[*tally.Distinct, string] {
	return kind[*tally.Distinct, string]{
		name:    "distinct",
		new:     func() *tally.Distinct { return new(tally.Distinct) },
		genOp:   gen.IntRange(0, 300).Map(func(i int) string { return fmt.Sprintf("visitor-%d", i) }),
		observe: func(d *tally.Distinct, s string) error { d.AddString(s); return nil },
		value:   func(d *tally.Distinct) any { return d.Estimate() },
		// The model is the library's own sketch fed every item directly.
		expect: func(xs []string) any {
			sk := hyperloglog.NewNoSparse()
			for _, x := range xs {
				sk.Insert([]byte(x))
			}
			if len(xs) == 0 {
				return uint64(0)
			}
			return sk.Estimate()
		},
		idempotent: true,
		// Every Value and Expect of a 16 KiB sketch costs 2^14 register
		// visits, so this kind runs fewer, shorter cases by default.
		cases:  40,
		maxOps: 15,
	}
}

// sharded is the state a tally reader sees, without storage: one
// last-write-wins shard per actor (the version counts the actor's writes;
// one writer per shard, so equal versions hold equal states). Merge keeps
// the newer version of each shard; Value combines all shards. This is how
// a non-idempotent aggregate such as Sum becomes a convergent counter.
type sharded[A tally.Aggregate[A]] struct {
	shards map[crdt.ActorID]version[A]
}

type version[A any] struct {
	n   int
	agg A
}

func (s *sharded[A]) String() string {
	ids := slices.Sorted(maps.Keys(s.shards))
	out := "{"
	for _, id := range ids {
		out += fmt.Sprintf(" %s@%d:%v", id, s.shards[id].n, s.shards[id].agg)
	}
	return out + " }"
}

func shardedModel[A tally.Aggregate[A], O any](k kind[A, O]) proptest.Model[*sharded[A], O] {
	clone := func(s *sharded[A]) *sharded[A] {
		c := &sharded[A]{shards: make(map[crdt.ActorID]version[A], len(s.shards))}
		for id, v := range s.shards {
			c.shards[id] = version[A]{v.n, v.agg.Clone()}
		}
		return c
	}
	return proptest.Model[*sharded[A], O]{
		Name:  "sharded " + k.name,
		New:   func() *sharded[A] { return &sharded[A]{shards: map[crdt.ActorID]version[A]{}} },
		GenOp: k.genOp,
		Apply: func(s *sharded[A], actor crdt.ActorID, op O) error {
			v, ok := s.shards[actor]
			if !ok {
				v.agg = k.new()
			}
			if err := k.observe(v.agg, op); err != nil {
				return err
			}
			v.n++
			s.shards[actor] = v
			return nil
		},
		Merge: func(dst, src *sharded[A]) error {
			for id, v := range src.shards {
				if v.n > dst.shards[id].n {
					dst.shards[id] = version[A]{v.n, v.agg.Clone()}
				}
			}
			return nil
		},
		Clone: clone,
		Equal: func(a, b *sharded[A]) bool {
			if len(a.shards) != len(b.shards) {
				return false
			}
			for id, v := range a.shards {
				w, ok := b.shards[id]
				if !ok || v.n != w.n || !v.agg.Equal(w.agg) {
					return false
				}
			}
			return true
		},
		Value: func(s *sharded[A]) any {
			acc := k.new()
			for _, id := range slices.Sorted(maps.Keys(s.shards)) {
				if err := acc.Combine(s.shards[id].agg); err != nil {
					return err.Error()
				}
			}
			return k.value(acc)
		},
		Expect: k.expect,
		Leq: func(a, b *sharded[A]) bool {
			for id, v := range a.shards {
				if v.n > b.shards[id].n {
					return false
				}
			}
			return true
		},
	}
}

// directModel treats an idempotent aggregate itself as a join-semilattice.
func directModel[A tally.Aggregate[A], O any](k kind[A, O]) proptest.Model[A, O] {
	return proptest.Model[A, O]{
		Name:   k.name,
		New:    k.new,
		GenOp:  k.genOp,
		Apply:  func(a A, _ crdt.ActorID, op O) error { return k.observe(a, op) },
		Merge:  func(dst, src A) error { return dst.Combine(src) },
		Clone:  func(a A) A { return a.Clone() },
		Equal:  func(a, b A) bool { return a.Equal(b) },
		Value:  k.value,
		Expect: k.expect,
	}
}

// lawCases is the number of proptest cases of a kind that sets none,
// before COUNTERKIT_CASES scaling (COUNTERKIT_CASES=3.4 gives about
// proptest's default 1,000). By default a kind runs half its cases (half
// of lawCases, or of its own); with COUNTERKIT_CASES above 1,
// proptest.Scale of all of them.
const lawCases = 300

func checkKind[A tally.Aggregate[A], O any](t *testing.T, k kind[A, O]) {
	cfg := proptest.DefaultOptions()
	cases := lawCases
	if k.cases != 0 {
		cases = k.cases
	}
	cfg.Cases = cases / 2
	if proptest.Scale(1) > 1 { // COUNTERKIT_CASES above 1
		cfg.Cases = proptest.Scale(cases)
	}
	if k.maxOps != 0 {
		cfg.MaxOps = k.maxOps
	}
	t.Run("sharded-laws", func(t *testing.T) { proptest.CheckLaws(t, shardedModel(k), cfg) })
	t.Run("sharded-convergence", func(t *testing.T) { proptest.CheckConvergence(t, shardedModel(k), cfg) })
	if k.idempotent {
		t.Run("direct-laws", func(t *testing.T) { proptest.CheckLaws(t, directModel(k), cfg) })
		t.Run("direct-convergence", func(t *testing.T) { proptest.CheckConvergence(t, directModel(k), cfg) })
	}
	t.Run("algebra", func(t *testing.T) { checkAlgebra(t, k) })
}

// TestLaws checks every aggregate with proptest (Apply = add one
// observation), through the sharded view and, for the idempotent ones,
// directly.
func TestLaws(t *testing.T) {
	testsize.SkipSequential(t)
	t.Run("sum", func(t *testing.T) { checkKind(t, sumKind()) })
	t.Run("min", func(t *testing.T) { checkKind(t, minKind()) })
	t.Run("max", func(t *testing.T) { checkKind(t, maxKind()) })
	t.Run("stats", func(t *testing.T) { checkKind(t, statsKind()) })
	t.Run("distinct", func(t *testing.T) { checkKind(t, distinctKind()) })
}

// checkAlgebra checks the monoid laws of Combine directly, on aggregates
// built from three random observation lists, against the plain model.
func checkAlgebra[A tally.Aggregate[A], O any](t *testing.T, k kind[A, O]) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = proptest.Scale(300)
	if k.cases != 0 {
		params.MinSuccessfulTests = proptest.Scale(k.cases)
	}
	props := gopter.NewProperties(params)
	build := func(xs []O) A {
		a := k.new()
		for _, x := range xs {
			if err := k.observe(a, x); err != nil {
				t.Fatalf("observe %v: %v", x, err)
			}
		}
		return a
	}
	join := func(a, b A) A {
		c := a.Clone()
		if err := c.Combine(b); err != nil {
			t.Fatalf("combine: %v", err)
		}
		return c
	}
	same := func(a, b A) bool { return a.Equal(b) && fmt.Sprint(k.value(a)) == fmt.Sprint(k.value(b)) }
	lists := gen.SliceOf(k.genOp)
	props.Property("monoid laws and model", prop(lists, func(xs, ys, zs []O) string {
		a, b, c := build(xs), build(ys), build(zs)
		aRef := a.Clone()
		ab, ba := join(a, b), join(b, a)
		switch {
		case !a.Equal(aRef):
			return "Clone shares memory with its source"
		case !same(ab, ba):
			return fmt.Sprintf("not commutative: %v vs %v", ab, ba)
		case !same(join(ab, c), join(a, join(b, c))):
			return "not associative"
		case !same(join(a, k.new()), a) || !same(join(k.new(), a), a):
			return "zero value is not the identity"
		case !same(join(a, b), build(append(slices.Clone(xs), ys...))):
			return "a⊕b differs from observing both lists into one value"
		case fmt.Sprint(k.value(ab)) != fmt.Sprint(k.expect(append(slices.Clone(xs), ys...))):
			return fmt.Sprintf("value %v, model %v", k.value(ab), k.expect(append(slices.Clone(xs), ys...)))
		case k.idempotent && !same(join(a, a), a):
			return "not idempotent"
		case !same(b, build(ys)):
			return "Combine modified its argument"
		}
		return ""
	}))
	props.TestingRun(t)
}

// prop adapts a three-list check returning "" on success.
func prop[O any](lists gopter.Gen, f func(xs, ys, zs []O) string) gopter.Prop {
	return func(gp *gopter.GenParameters) *gopter.PropResult {
		var in [3][]O
		for i := range in {
			v, ok := lists(gp).Retrieve()
			if !ok {
				return &gopter.PropResult{Status: gopter.PropUndecided}
			}
			in[i] = v.([]O)
		}
		if msg := f(in[0], in[1], in[2]); msg != "" {
			return &gopter.PropResult{Status: gopter.PropFalse, Labels: []string{fmt.Sprintf("%s (inputs %v)", msg, in)}}
		}
		return &gopter.PropResult{Status: gopter.PropTrue}
	}
}
