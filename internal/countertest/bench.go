package countertest

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// MapCounter is the baseline: a map from actor to count, merged by max, as
// most Go CRDT code writes a grow-only counter.
type MapCounter map[crdt.ActorID]uint64

// Merge takes the larger count of each actor.
func (m MapCounter) Merge(o MapCounter) {
	for a, n := range o {
		if n > m[a] {
			m[a] = n
		}
	}
}

// Must stops the benchmark on err.
func Must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// PairBench runs an operation of the Counter (ck) and of the baseline (mp)
// in alternation, a batch of calls of each at a time (about 50µs of work),
// b.N calls of each in all. prep(i) readies slot i of a batch untimed (a
// fresh copy to merge into, say); run(i) is timed. On a loaded machine a
// batch that was descheduled is far slower than the others, so it reports
// medians: ns/op and map-ns/op, the median time per call of each, and
// ratio, the median over batch pairs of ck's time over mp's; best-ratio,
// the ratio of the fastest batches; and ck-allocs/op and map-allocs/op,
// measured over one batch of each.
func PairBench(b *testing.B, prepCK, runCK, prepMap, runMap func(i int), slots int) {
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

// Today is gcounter.Counter's Increment as it was before Handle and the
// hash table index (commit 66c9162, gcounter/gcounter.go): a Go map from
// actor to the position of its entry. It is the "today's" of the Handle
// goal: Handle.Add at 0.5x or better of it.
type Today struct {
	index   map[crdt.ActorID]int
	entries []todayEntry
	total   int64
}

type todayEntry struct {
	actor crdt.ActorID
	count int64
}

// Increment adds n to actor's count.
func (c *Today) Increment(actor crdt.ActorID, n int64) error {
	if n < 0 {
		return fmt.Errorf("gcounter: increment of %d by %q: %w (must be >= 0)", n, actor, crdt.ErrInvalidAmount)
	}
	i, ok := c.index[actor]
	if !ok {
		if err := actor.Validate(); err != nil {
			return fmt.Errorf("gcounter: increment: %w", err)
		}
	}
	if c.total > math.MaxInt64-n {
		return fmt.Errorf("gcounter: increment of %d by %q: %w (total %d)", n, actor, crdt.ErrOverflow, c.total)
	}
	if n == 0 {
		return nil
	}
	if ok {
		c.entries[i].count += n
		c.total += n
		return nil
	}
	if c.index == nil {
		c.index = map[crdt.ActorID]int{}
	}
	c.index[actor] = len(c.entries)
	c.entries = append(c.entries, todayEntry{actor, n})
	c.total += n
	return nil
}

// JSON is a counter's hand-written JSON form, the baseline of its binary
// codec: To encodes, From decodes with the same validation as
// UnmarshalBinary.
type JSON[C Counter[C]] struct {
	To   func(C) ([]byte, error)
	From func([]byte) (C, error)
}

// CodecVsJSON decodes c from its binary encoding and from its JSON form in
// one run and reports the sizes (msgpack-bytes, json-bytes, size-ratio),
// the mean decode times (msgpack-ns/decode, json-ns/decode), their ratio
// decode-speedup, and best-decode-speedup, the ratio of the fastest decode
// of each kind, which other work on a shared machine disturbs least.
func (f Format[C]) CodecVsJSON(b *testing.B, c C, j JSON[C]) {
	mp, err := c.MarshalBinary()
	Must(b, err)
	js, err := j.To(c)
	Must(b, err)
	if back, err := j.From(js); err != nil || !back.Equal(c) {
		b.Fatalf("JSON path does not round-trip: %v", err)
	}
	b.ReportAllocs()
	var tMsgpack, tJSON time.Duration
	bestMsgpack, bestJSON := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	d := f.New() // UnmarshalBinary replaces its state; see DecodeRows
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := d.UnmarshalBinary(mp); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := j.From(js); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		tJSON += end.Sub(mid)
		tMsgpack += mid.Sub(start)
		bestJSON = min(bestJSON, end.Sub(mid))
		bestMsgpack = min(bestMsgpack, mid.Sub(start))
	}
	b.ReportMetric(float64(len(mp)), "msgpack-bytes")
	b.ReportMetric(float64(len(js)), "json-bytes")
	b.ReportMetric(float64(len(mp))/float64(len(js)), "size-ratio")
	b.ReportMetric(float64(tMsgpack.Nanoseconds())/float64(b.N), "msgpack-ns/decode")
	b.ReportMetric(float64(tJSON.Nanoseconds())/float64(b.N), "json-ns/decode")
	b.ReportMetric(float64(tJSON)/float64(tMsgpack), "decode-speedup")
	b.ReportMetric(float64(bestJSON)/float64(bestMsgpack), "best-decode-speedup")
}

// DecodeRows benchmarks the two decoders of c in separate rows, msgpack
// and json.
func (f Format[C]) DecodeRows(b *testing.B, c C, j JSON[C]) {
	mp, err := c.MarshalBinary()
	Must(b, err)
	js, err := j.To(c)
	Must(b, err)
	b.Run("msgpack", func(b *testing.B) {
		// One receiver for every call: UnmarshalBinary replaces its
		// state, and a fresh one each time would count an allocation
		// that a receiver on the stack does not cost.
		d := f.New()
		b.ReportAllocs()
		b.SetBytes(int64(len(mp)))
		for b.Loop() {
			if err := d.UnmarshalBinary(mp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(js)))
		for b.Loop() {
			if _, err := j.From(js); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Merge merges src, a counter of n actors, into a fresh copy of dst (made
// untimed) b.N times, and reports ns/actor, the time per merged-in actor.
func Merge[C interface {
	Clone() C
	Merge(C) error
}](b *testing.B, dst, src C, n int) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		d := dst.Clone()
		b.StartTimer()
		if err := d.Merge(src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/actor")
}
