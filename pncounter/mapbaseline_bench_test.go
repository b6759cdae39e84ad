package pncounter_test

// Merge and Increment against the simplest map-based PN counter, measured
// in one benchmark so that the ratio is taken within the run:
//
//	taskset -c 1 go test ./pncounter -run '^$' -bench 'VsMap|VsHandle' -count 6
//
// Each row runs the operation on a Counter and on mapPN in alternation,
// batch by batch, timing only the operation, and reports the medians
// ns/op (the Counter's) and map-ns/op, ratio (the median of the paired
// ratios, Counter / map), best-ratio (of the fastest batches) and the
// allocations of each per operation, ck-allocs/op and map-allocs/op.

import (
	"fmt"
	"maps"
	"math/rand"
	"testing"

	"github.com/counterkit/counterkit/internal/countertest"
	"github.com/counterkit/counterkit/pncounter"
)

// mapCounter is a grow-only counter as a map from actor to count, merged
// by max; mapPN is the baseline PN counter: two of them.
type mapCounter = countertest.MapCounter

var uuidIDs, pairBench, must = countertest.UUIDIDs, countertest.PairBench, countertest.Must

type mapPN struct{ p, n mapCounter }

func (m mapPN) merge(o mapPN) {
	m.p.Merge(o.p)
	m.n.Merge(o.n)
}

func (m mapPN) clone() mapPN { return mapPN{maps.Clone(m.p), maps.Clone(m.n)} }

func asMapPN(c *pncounter.Counter) mapPN {
	m := mapPN{mapCounter{}, mapCounter{}}
	for a, n := range c.P().All() {
		m.p[a] = uint64(n)
	}
	for a, n := range c.N().All() {
		m.n[a] = uint64(n)
	}
	return m
}

// pnCases: as gcounter's mergeCases, each actor both incrementing and
// decrementing (both halves hold every actor).
func pnCases(b *testing.B, n int) map[string][2]*pncounter.Counter {
	rng := rand.New(rand.NewSource(int64(n)))
	ids := uuidIDs(rng, 2*n)
	built, older, fresh := pncounter.New(), pncounter.New(), pncounter.New()
	for i, a := range ids[:n] {
		for _, sign := range []int64{1, -1} {
			cnt := int64(1 + rng.Intn(1000))
			old := cnt - int64(rng.Intn(int(cnt)))
			if i%2 == 0 {
				old = cnt
			}
			must(b, built.Increment(a, sign*cnt))
			must(b, older.Increment(a, sign*old))
		}
	}
	for _, a := range ids[n:] {
		must(b, fresh.Increment(a, int64(1+rng.Intn(1000))))
		must(b, fresh.Increment(a, -int64(1+rng.Intn(1000))))
	}
	return map[string][2]*pncounter.Counter{
		"nothing-new":             {format.Decoded(b, built), format.Decoded(b, older)},
		"nothing-new-other-order": {built, format.Decoded(b, older)},
		"all-new":                 {format.Decoded(b, built), format.Decoded(b, fresh)},
	}
}

// BenchmarkMergeVsMap: Merge against mapPN.merge, for 10, 100 and 10,000
// actors; all-new merges into a fresh copy each time (made untimed).
func BenchmarkMergeVsMap(b *testing.B) {
	for _, n := range []int{10, 100, 10000} {
		cases := pnCases(b, n)
		for _, name := range []string{"nothing-new", "nothing-new-other-order", "all-new"} {
			dst, src := cases[name][0], cases[name][1]
			dstMap, srcMap := asMapPN(dst), asMapPN(src)
			b.Run(fmt.Sprintf("actors=%d/%s", n, name), func(b *testing.B) {
				slots := max(1, 1<<16/n)
				dsts := make([]*pncounter.Counter, slots)
				dmaps := make([]mapPN, slots)
				for i := range dsts {
					dsts[i], dmaps[i] = dst, dstMap
				}
				prepCK, prepMap := func(int) {}, func(int) {}
				if name == "all-new" {
					prepCK = func(i int) { dsts[i] = dst.Clone() }
					prepMap = func(i int) { dmaps[i] = dstMap.clone() }
				}
				pairBench(b,
					prepCK, func(i int) {
						if err := dsts[i].Merge(src); err != nil {
							b.Fatal(err)
						}
					},
					prepMap, func(i int) { dmaps[i].merge(srcMap) }, slots)
			})
		}
	}
}

// BenchmarkIncrementVsHandle: Handle.Add against Increment (lookups) and
// against todayPN's Increment (the code before Handle), for an actor the
// counter holds, a credit and a debit in turn ("map" in the metric names
// is then the second one); 100 actors.
func BenchmarkIncrementVsHandle(b *testing.B) {
	ids := uuidIDs(rand.New(rand.NewSource(1)), 100)
	c := pncounter.New()
	for _, a := range ids {
		must(b, c.Increment(a, 1))
		must(b, c.Increment(a, -1))
	}
	var today todayPN
	for _, a := range ids {
		must(b, today.Increment(a, 1))
		must(b, today.Increment(a, -1))
	}
	actor := ids[42]
	h := c.Handle(actor)
	nop := func(int) {}
	add := func(i int) {
		if err := h.Add(int64(1 - 2*(i&1))); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("handle-vs-increment", func(b *testing.B) {
		pairBench(b, nop, add, nop, func(i int) {
			if err := c.Increment(actor, int64(1-2*(i&1))); err != nil {
				b.Fatal(err)
			}
		}, 1<<16)
	})
	b.Run("increment-vs-today", func(b *testing.B) {
		pairBench(b, nop, func(i int) {
			if err := c.Increment(actor, int64(1-2*(i&1))); err != nil {
				b.Fatal(err)
			}
		}, nop, func(i int) {
			if err := today.Increment(actor, int64(1-2*(i&1))); err != nil {
				b.Fatal(err)
			}
		}, 1<<16)
	})
	b.Run("handle-vs-today", func(b *testing.B) {
		pairBench(b, nop, add, nop, func(i int) {
			if err := today.Increment(actor, int64(1-2*(i&1))); err != nil {
				b.Fatal(err)
			}
		}, 1<<16)
	})
}
