package gcounter_test

// Merge and Increment against the simplest map-based counter, measured in
// one benchmark so that the ratio is taken within the run:
//
//	taskset -c 1 go test ./gcounter -run '^$' -bench 'VsMap' -count 6
//
// Each row runs the operation on a Counter and on mapCounter in
// alternation, batch by batch, timing only the operation, and reports
// ns/op (the Counter's), map-ns/op, ratio (Counter / map) and the
// allocations of each per operation, ck-allocs/op and map-allocs/op (one
// batch of each, measured apart).

import (
	"fmt"
	"maps"
	"math/rand"
	"testing"

	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/countertest"
)

type mapCounter = countertest.MapCounter

var uuidIDs, pairBench, must = countertest.UUIDIDs, countertest.PairBench, countertest.Must

// mergeCase is a receiver and a state merged into it, as a Counter and as
// a mapCounter.
type mergeCase struct {
	dst, src       *gcounter.Counter
	dstMap, srcMap mapCounter
}

// mergeCases builds, for n actors with UUID ids:
//   - nothing-new: a reader's state and a sibling it already covers (each
//     of the sibling's counts at most the reader's), both decoded from
//     their encodings, as a reader that merges what it fetches has them;
//   - nothing-new-other-order: the same with the reader's state built by
//     Increment in another order than the sibling's (no shared layout);
//   - all-new: a sibling of n actors the reader does not hold.
func mergeCases(b *testing.B, n int) map[string]mergeCase {
	rng := rand.New(rand.NewSource(int64(n)))
	ids := uuidIDs(rng, 2*n)
	built, older, fresh := gcounter.New(), gcounter.New(), gcounter.New()
	m, mOlder, mFresh := mapCounter{}, mapCounter{}, mapCounter{}
	for i, a := range ids[:n] {
		cnt := int64(1 + rng.Intn(1000))
		old := cnt - int64(rng.Intn(int(cnt)))
		if i%2 == 0 {
			old = cnt
		}
		must(b, built.Increment(a, cnt))
		must(b, older.Increment(a, old))
		m[a], mOlder[a] = uint64(cnt), uint64(old)
	}
	for _, a := range ids[n:] {
		cnt := int64(1 + rng.Intn(1000))
		must(b, fresh.Increment(a, cnt))
		mFresh[a] = uint64(cnt)
	}
	out := map[string]mergeCase{
		"nothing-new":             {dst: format.Decoded(b, built), src: format.Decoded(b, older)},
		"nothing-new-other-order": {dst: built, src: format.Decoded(b, older)},
		"all-new":                 {dst: format.Decoded(b, built), src: format.Decoded(b, fresh)},
	}
	// The baseline's maps hold the same id strings as the Counters (a
	// decoded sibling's ids are its own copies, so a lookup compares bytes
	// on both sides), with the same counts.
	for name, mc := range out {
		mc.dstMap, mc.srcMap = asMap(mc.dst), asMap(mc.src)
		out[name] = mc
	}
	for name, want := range map[string][2]mapCounter{"nothing-new": {m, mOlder}, "all-new": {m, mFresh}} {
		if !maps.Equal(out[name].dstMap, want[0]) || !maps.Equal(out[name].srcMap, want[1]) {
			b.Fatalf("%s: the baseline's maps differ from the counters", name)
		}
	}
	return out
}

func asMap(c *gcounter.Counter) mapCounter {
	m := mapCounter{}
	for a, n := range c.All() {
		m[a] = uint64(n)
	}
	return m
}

// BenchmarkMergeVsMap: Merge against mapCounter.merge, for 10, 100 and
// 10,000 actors; all-new merges into a fresh copy each time (made untimed).
func BenchmarkMergeVsMap(b *testing.B) {
	for _, n := range []int{10, 100, 10000} {
		cases := mergeCases(b, n)
		for _, name := range []string{"nothing-new", "nothing-new-other-order", "all-new"} {
			mc := cases[name]
			b.Run(fmt.Sprintf("actors=%d/%s", n, name), func(b *testing.B) {
				batch := max(1, 1<<16/n) // slots for fresh copies
				dsts := make([]*gcounter.Counter, batch)
				maps_ := make([]mapCounter, batch)
				prepCK, prepMap := func(int) {}, func(int) {}
				for i := range dsts {
					dsts[i], maps_[i] = mc.dst, mc.dstMap
				}
				if name == "all-new" {
					prepCK = func(i int) { dsts[i] = mc.dst.Clone() }
					prepMap = func(i int) { maps_[i] = maps.Clone(mc.dstMap) }
				}
				pairBench(b,
					prepCK, func(i int) {
						if err := dsts[i].Merge(mc.src); err != nil {
							b.Fatal(err)
						}
					},
					prepMap, func(i int) { maps_[i].Merge(mc.srcMap) }, batch)
			})
		}
	}
}

// BenchmarkIncrementVsHandle, 100 actors, for an actor the counter holds:
// Handle.Add against Increment (a lookup), and against countertest.Today's
// Increment (the code before Handle; "map" in the metric names is then the
// second one); Increment against the baseline's m[actor]++.
func BenchmarkIncrementVsHandle(b *testing.B) {
	ids := uuidIDs(rand.New(rand.NewSource(1)), 100)
	c, m := gcounter.New(), mapCounter{}
	for _, a := range ids {
		must(b, c.Increment(a, 1))
		m[a] = 1
	}
	actor := ids[42]
	h := c.Handle(actor)
	const slots = 1 << 16
	nop := func(int) {}
	b.Run("handle-vs-increment", func(b *testing.B) {
		pairBench(b, nop, func(int) {
			if err := h.Add(1); err != nil {
				b.Fatal(err)
			}
		}, nop, func(int) {
			if err := c.Increment(actor, 1); err != nil {
				b.Fatal(err)
			}
		}, slots)
	})
	var today countertest.Today
	for _, a := range ids {
		must(b, today.Increment(a, 1))
	}
	b.Run("handle-vs-today", func(b *testing.B) {
		pairBench(b, nop, func(int) {
			if err := h.Add(1); err != nil {
				b.Fatal(err)
			}
		}, nop, func(int) {
			if err := today.Increment(actor, 1); err != nil {
				b.Fatal(err)
			}
		}, slots)
	})
	b.Run("increment-vs-map", func(b *testing.B) {
		pairBench(b, nop, func(int) {
			if err := c.Increment(actor, 1); err != nil {
				b.Fatal(err)
			}
		}, nop, func(int) { m[actor]++ }, slots)
	})
}
