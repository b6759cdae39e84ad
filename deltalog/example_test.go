package deltalog_test

import (
	"context"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// Example_mergeIllustration walks a counter through merges: a merge at the
// first cell older than the window (sum 6 before and after), more updates
// and a compaction (sum 9), a second merge (still 9), and, once the window
// has passed, a final merge and compaction that leave one merge cell of
// +9. Cells are printed newest first, each named by a short label.
func Example_mergeIllustration() {
	ctx := context.Background()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	now := base
	st := memory.NewPartitions()
	counters, err := deltalog.New(st, deltalog.Options{
		Window: 2 * time.Minute, FutureSkew: time.Second, SafetyMargin: 30 * time.Second,
		MaxScan: 10 * time.Second, CompactGrace: time.Minute,
		Clock: func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}
	names := map[deltalog.ID]string{}
	add := func(name string, at time.Duration, delta int64) {
		now = base.Add(at)
		id := timeid.FromParts(now, 7, uint64(len(names)))
		names[id] = name
		if err := counters.Add(ctx, "visits", id, delta); err != nil {
			panic(err)
		}
	}
	show := func(title string) {
		fmt.Println(title)
		_ = st.Scan(ctx, "visits", nil, store.ReadComplete, func(r store.Row) bool {
			var c deltalog.Cell
			if err := c.UnmarshalBinary(r.Value); err != nil {
				panic(err)
			}
			fmt.Printf("  %s:%s (%+d)\n", names[c.ID], c.Kind, c.Delta)
			return true
		})
		r, err := counters.Read(ctx, "visits")
		if err != nil {
			panic(err)
		}
		fmt.Println("  sum:", r.Value)
	}
	merge := func(at time.Duration) {
		now = base.Add(at)
		if _, _, err := counters.Merge(ctx, "visits"); err != nil {
			panic(err)
		}
	}
	compact := func(at time.Duration) {
		now = base.Add(at)
		if _, err := counters.Compact(ctx, "visits"); err != nil {
			panic(err)
		}
	}
	m := func(x float64) time.Duration { return time.Duration(x * float64(time.Minute)) }

	for _, c := range []struct {
		name string
		at   float64
		d    int64
	}{
		{"796580f8", 1, +1}, {"0658c820", 2, +2}, {"8065cac8", 7, +1}, {"b36b0690", 7.6, -3},
		{"f30da118", 8, +2}, {"2d6dd7d8", 8.4, +1}, {"727b3618", 8.8, +1}, {"acceb308", 9.2, -1},
		{"7d871160", 9.5, +1}, {"adc82418", 9.8, +1},
	} {
		add(c.name, m(c.at), c.d)
	}
	show("pre-merge:")
	merge(m(10)) // cutoff 7.5m: 8065cac8 is the first cell older than it
	show("post-merge:")
	add("30d0d210", m(10.5), +1)
	add("65c8e8e0", m(11), +1)
	add("9569b458", m(11.4), +1)
	compact(m(11.5))
	show("post-compaction, pre-new-merge:")
	merge(m(11.5)) // cutoff 9m: 727b3618
	show("post-merge:")
	merge(m(14)) // no update within the window: cutoff at the newest cell
	compact(m(15))
	show("after the window and a compaction:")

	// Output:
	// pre-merge:
	//   adc82418:r (+1)
	//   7d871160:r (+1)
	//   acceb308:r (-1)
	//   727b3618:r (+1)
	//   2d6dd7d8:r (+1)
	//   f30da118:r (+2)
	//   b36b0690:r (-3)
	//   8065cac8:r (+1)
	//   0658c820:r (+2)
	//   796580f8:r (+1)
	//   sum: 6
	// post-merge:
	//   adc82418:r (+1)
	//   7d871160:r (+1)
	//   acceb308:r (-1)
	//   727b3618:r (+1)
	//   2d6dd7d8:r (+1)
	//   f30da118:r (+2)
	//   b36b0690:r (-3)
	//   8065cac8:m (+4)
	//   8065cac8:r (+1)
	//   0658c820:r (+2)
	//   796580f8:r (+1)
	//   sum: 6
	// post-compaction, pre-new-merge:
	//   9569b458:r (+1)
	//   65c8e8e0:r (+1)
	//   30d0d210:r (+1)
	//   adc82418:r (+1)
	//   7d871160:r (+1)
	//   acceb308:r (-1)
	//   727b3618:r (+1)
	//   2d6dd7d8:r (+1)
	//   f30da118:r (+2)
	//   b36b0690:r (-3)
	//   8065cac8:m (+4)
	//   sum: 9
	// post-merge:
	//   9569b458:r (+1)
	//   65c8e8e0:r (+1)
	//   30d0d210:r (+1)
	//   adc82418:r (+1)
	//   7d871160:r (+1)
	//   acceb308:r (-1)
	//   727b3618:m (+5)
	//   727b3618:r (+1)
	//   2d6dd7d8:r (+1)
	//   f30da118:r (+2)
	//   b36b0690:r (-3)
	//   8065cac8:m (+4)
	//   sum: 9
	// after the window and a compaction:
	//   9569b458:m (+9)
	//   sum: 9
}

// ExampleCounters_Apply debits one counter and credits another in one
// atomic batch; retrying the batch after a lost acknowledgement changes
// nothing.
func ExampleCounters_Apply() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	counters, _ := deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: func() time.Time { return now }})

	id := timeid.FromParts(now, 1, 1)
	var b deltalog.Batch
	b.Add("stock:warehouse-a", id, -3)
	b.Add("stock:warehouse-b", id, +3)
	for range 2 {
		if err := counters.Apply(ctx, &b); err != nil {
			panic(err)
		}
	}
	a, _ := counters.Read(ctx, "stock:warehouse-a")
	c, _ := counters.Read(ctx, "stock:warehouse-b")
	fmt.Println(a.Value, c.Value)
	// Output: -3 3
}

// ExampleLog shows the pure log: a retry is idempotent, a merge cell
// carries aggregates, and compaction keeps the value.
func ExampleLog() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var l deltalog.Log
	for i, d := range []int64{4, -1, 7, 2} {
		_ = l.Add(timeid.FromParts(t.Add(time.Duration(i)*time.Second), 1, 1), d)
	}
	_ = l.Add(timeid.FromParts(t, 1, 1), 4) // a retry of the first update
	m, _, _ := l.MergeBefore(t.Add(2500*time.Millisecond), t.Add(time.Hour))
	mean, _ := m.Stats.Mean()
	fmt.Printf("merge cell %+d: count %d min %d max %d mean %.2f\n",
		m.Delta, m.Stats.Count, m.Stats.Min, m.Stats.Max, mean)
	before := l.Value()
	dropped := l.Compact()
	r, _ := l.Read()
	fmt.Println(before, r.Value, dropped, r.Stats.Count, r.Stats.SumSquares())
	// Output:
	// merge cell +10: count 3 min -1 max 7 mean 3.33
	// 12 12 3 4 70
}

// ExampleCell_MarshalBinary encodes a merge cell in the crdt envelope and
// decodes it back.
func ExampleCell_MarshalBinary() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c := deltalog.Cell{ID: timeid.FromParts(t, 1, 1), Kind: deltalog.KindMerge, Delta: 4,
		Stats: deltalog.Stats{Count: 3, Sum: 4, Min: 1, Max: 2, SumSqLo: 6}}
	b, _ := c.MarshalBinary()
	var d deltalog.Cell
	err := d.UnmarshalBinary(b)
	variance, _ := d.Stats.Variance()
	fmt.Println(len(b), err, d == c, d.Kind, variance)
	// Output: 45 <nil> true m 0.2222222222222222
}
