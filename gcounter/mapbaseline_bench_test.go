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
	"math"
	"math/rand"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
)

// mapCounter is the baseline: a map from actor to count, merged by max, as
// most Go CRDT code writes a grow-only counter.
type mapCounter map[crdt.ActorID]uint64

func (m mapCounter) merge(o mapCounter) {
	for a, n := range o {
		if n > m[a] {
			m[a] = n
		}
	}
}

// uuidIDs returns n distinct actor ids shaped like UUIDs, from rng.
func uuidIDs(rng *rand.Rand, n int) []crdt.ActorID {
	seen := map[crdt.ActorID]bool{}
	var out []crdt.ActorID
	for len(out) < n {
		id := crdt.ActorID(fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", rng.Uint32(), rng.Intn(1<<16), rng.Intn(1<<12), 0x8000|rng.Intn(1<<14), rng.Int63n(1<<48)))
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// pairBench runs an operation of the Counter (ck) and of the baseline (mp)
// in alternation, a batch of calls of each at a time (about 50µs of work),
// b.N calls of each in all. prep(i) readies slot i of a batch untimed (a
// fresh copy to merge into, say); run(i) is timed. On a loaded machine a
// batch that was descheduled is far slower than the others, so it reports
// medians: ns/op and map-ns/op, the median time per call of each, and
// ratio, the median over batch pairs of ck's time over mp's; best-ratio,
// the ratio of the fastest batches; and ck-allocs/op and map-allocs/op,
// measured over one batch of each.
func pairBench(b *testing.B, prepCK, runCK, prepMap, runMap func(i int), slots int) {
	b.Helper()
	timed := func(k int, prep, run func(int)) float64 {
		for i := range k {
			prep(i)
		}
		t0 := time.Now()
		for i := range k {
			run(i)
		}
		return float64(time.Since(t0).Nanoseconds()) / float64(k)
	}
	allocs := func(k int, prep, run func(int)) float64 {
		for i := range k {
			prep(i)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := range k {
			run(i)
		}
		runtime.ReadMemStats(&m1)
		return float64(m1.Mallocs-m0.Mallocs) / float64(k)
	}
	// Warm up both, measuring allocations, and size the batches.
	ckAllocs, mapAllocs := allocs(slots, prepCK, runCK), allocs(slots, prepMap, runMap)
	// The time of one call, from the fastest of a few short batches (a
	// single call is below the clock's resolution, and one batch may be
	// descheduled).
	k := min(slots, 64)
	per := math.Inf(1)
	for range 5 {
		per = min(per, max(timed(k, prepCK, runCK), timed(k, prepMap, runMap)))
	}
	batch := min(slots, max(1, int(50e3/max(per, 1))))
	b.ResetTimer()
	var ck, mp, ratios []float64
	for done := 0; done < b.N; done += batch {
		k := min(batch, b.N-done)
		c, m := timed(k, prepCK, runCK), timed(k, prepMap, runMap)
		ck, mp, ratios = append(ck, c), append(mp, m), append(ratios, c/m)
	}
	b.StopTimer()
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(slices.Min(ck)/slices.Min(mp), "best-ratio")
	b.ReportMetric(median(ck), "ns/op")
	b.ReportMetric(median(mp), "map-ns/op")
	b.ReportMetric(ckAllocs, "ck-allocs/op")
	b.ReportMetric(mapAllocs, "map-allocs/op")
}

// mergeCase is a receiver and a state merged into it, as a Counter and as
// a mapCounter.
type mergeCase struct {
	dst, src       *gcounter.Counter
	dstMap, srcMap mapCounter
}

func decoded(b *testing.B, c *gcounter.Counter) *gcounter.Counter {
	data, err := c.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	out := gcounter.New()
	if err := out.UnmarshalBinary(data); err != nil {
		b.Fatal(err)
	}
	return out
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
		"nothing-new":             {dst: decoded(b, built), src: decoded(b, older)},
		"nothing-new-other-order": {dst: built, src: decoded(b, older)},
		"all-new":                 {dst: decoded(b, built), src: decoded(b, fresh)},
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

func must(b *testing.B, err error) {
	if err != nil {
		b.Fatal(err)
	}
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
					prepMap, func(i int) { maps_[i].merge(mc.srcMap) }, batch)
			})
		}
	}
}

// BenchmarkIncrementVsHandle, 100 actors, for an actor the counter holds:
// Handle.Add against Increment (a lookup), and against todayCounter's
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
	var today todayCounter
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
