package tally_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

// exampleConfig returns Options with a hand-driven clock and readable
// mutator ids, so that examples are deterministic.
func exampleConfig(now *time.Time) tally.Options {
	n := 0
	return tally.Options{
		Clock: func() time.Time { return *now },
		NewID: func() crdt.ActorID { n++; return crdt.ActorID(fmt.Sprintf("web-%d", n)) },
	}
}

// A page-view counter: three web servers each own a mutator; a day later a
// GC folds their shards into the tally and the read cost drops to one row.
func ExampleCounter() {
	ctx := context.Background()
	db := memory.NewPartitions()
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	views, err := tally.New[*tally.Sum](db, "page:/home", exampleConfig(&now))
	if err != nil {
		panic(err)
	}
	for _, hits := range []int64{120, 45, 300} {
		m, err := views.NewMutator()
		if err != nil {
			panic(err)
		}
		for range hits {
			// One write per page view: no read, and only this mutator's row.
			if err := m.Update(ctx, func(s *tally.Sum) error { return s.Add(1) }); err != nil {
				panic(err)
			}
		}
		fmt.Printf("%s counted %d views\n", m.ID(), hits)
	}
	v, _ := views.Read(ctx)
	rows, _ := db.Snapshot(ctx, "page:/home", 100, store.ReadComplete)
	fmt.Println("views:", v.Value(), "rows:", len(rows))

	now = now.Add(tally.DefaultLifetime + tally.DefaultGrace + time.Minute)
	plan, err := views.GC(ctx)
	if err != nil {
		panic(err)
	}
	v, _ = views.Read(ctx)
	rows, _ = db.Snapshot(ctx, "page:/home", 100, store.ReadComplete)
	fmt.Println("gc folded:", plan.Folded, "views:", v.Value(), "rows:", len(rows))
	// Output:
	// web-1 counted 120 views
	// web-2 counted 45 views
	// web-3 counted 300 views
	// views: 465 rows: 3
	// gc folded: 3 views: 465 rows: 1
}

// Unique visitors: each server keeps a HyperLogLog of the visitor ids it
// saw; a read is the union, so a visitor seen by two servers counts once.
func ExampleCounter_uniqueVisitors() {
	ctx := context.Background()
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	visitors, err := tally.New[*tally.Distinct](memory.NewPartitions(), "visitors:2024-05-01", exampleConfig(&now))
	if err != nil {
		panic(err)
	}
	for server := range 3 {
		m, err := visitors.NewMutator()
		if err != nil {
			panic(err)
		}
		// Servers see overlapping visitors: 0-999, 500-1499, 1000-1999.
		for i := server * 500; i < server*500+1000; i++ {
			id := fmt.Sprintf("visitor-%d", i)
			if err := m.Stage(func(d *tally.Distinct) error { d.AddString(id); return nil }); err != nil {
				panic(err)
			}
		}
		if err := m.Flush(ctx); err != nil { // 1000 visits, one write
			panic(err)
		}
	}
	v, _ := visitors.Read(ctx)
	fmt.Printf("about %d unique visitors (exactly 2000)\n", v.Estimate())
	// Output:
	// about 2003 unique visitors (exactly 2000)
}

// PlanGC shows the batch a GC would write without writing it.
func ExampleCounter_PlanGC() {
	ctx := context.Background()
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	c, _ := tally.New[*tally.Max](memory.NewPartitions(), "latency-max", exampleConfig(&now))
	m, _ := c.NewMutator()
	_ = m.Update(ctx, func(x *tally.Max) error { x.Add(250); return nil })
	now = now.Add(49 * time.Hour)
	plan, _ := c.PlanGC(ctx)
	t, _ := tally.DecodeTally[*tally.Max](plan.Batch.Tally)
	v, _ := t.State.Value()
	fmt.Println("delete:", plan.Batch.Delete)
	fmt.Println("write timestamp = expires_at folded:", time.UnixMicro(plan.Batch.WriteTS).UTC())
	fmt.Println("tally:", v)
	// Output:
	// delete: [web-1]
	// write timestamp = expires_at folded: 2024-05-02 00:00:00 +0000 UTC
	// tally: 250
}

// A write that timed out may have landed. Updating again would count it
// twice, so the mutator refuses until the caller resolves it.
func ExampleMutator_Retry() {
	ctx := context.Background()
	db := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	c, _ := tally.New[*tally.Sum](db, "credits", exampleConfig(&now))
	m, _ := c.NewMutator()

	// The write and both resends land, but their acknowledgements are lost.
	db.SetPolicy(faulty.Script(faulty.LoseAck, faulty.LoseAck, faulty.LoseAck))
	err := m.Update(ctx, func(s *tally.Sum) error { return s.Add(100) })
	fmt.Println("update:", errors.Is(err, crdt.ErrAmbiguousWrite))
	err = m.Update(ctx, func(s *tally.Sum) error { return s.Add(100) })
	fmt.Println("update again refused:", errors.Is(err, tally.ErrUnresolved))

	fmt.Println("retry:", m.Retry(ctx))
	v, _ := c.ReadComplete(ctx)
	fmt.Println("credits:", v.Value())
	// Output:
	// update: true
	// update again refused: true
	// retry: <nil>
	// credits: 100
}

// Abandon makes an unknown write definitely not count.
func ExampleMutator_Abandon() {
	ctx := context.Background()
	db := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	c, _ := tally.New[*tally.Sum](db, "credits", exampleConfig(&now))
	m, _ := c.NewMutator()
	_ = m.Update(ctx, func(s *tally.Sum) error { return s.Add(5) })

	db.SetPolicy(faulty.Script(faulty.LoseAck, faulty.LoseAck, faulty.LoseAck))
	err := m.Update(ctx, func(s *tally.Sum) error { return s.Add(100) })
	fmt.Println("unknown:", errors.Is(err, crdt.ErrAmbiguousWrite))
	fmt.Println("abandon:", m.Abandon(ctx))
	v, _ := c.ReadComplete(ctx)
	fmt.Println("credits:", v.Value())
	// Output:
	// unknown: true
	// abandon: <nil>
	// credits: 5
}

func ExampleSum() {
	var a, b tally.Sum
	_ = a.Add(40)
	_ = b.Add(2)
	_ = a.Combine(&b)
	fmt.Println(a.Value())
	var big tally.Sum
	_ = big.Add(1 << 62)
	err := big.Add(1 << 62)
	fmt.Println(errors.Is(err, crdt.ErrOverflow), big.Value() == 1<<62)
	// Output:
	// 42
	// true true
}

func ExampleMin() {
	var m tally.Min
	_, ok := m.Value()
	fmt.Println("empty:", !ok)
	m.Add(7)
	m.Add(-3)
	v, _ := m.Value()
	fmt.Println(v)
	// Output:
	// empty: true
	// -3
}

func ExampleMax() {
	var a, b tally.Max
	a.Add(10)
	b.Add(99)
	_ = a.Combine(&b)
	v, _ := a.Value()
	fmt.Println(v)
	// Output: 99
}

func ExampleStats() {
	var s tally.Stats
	for _, x := range []int64{2, 4, 4, 4, 5, 5, 7, 9} {
		_ = s.Add(x)
	}
	mean, _ := s.Mean()
	variance, _ := s.Variance()
	lo, _ := s.Min()
	hi, _ := s.Max()
	fmt.Println(s.Count(), s.Sum(), lo, hi, s.SumOfSquares())
	fmt.Println("mean", mean, "variance", variance)
	// Output:
	// 8 40 2 9 232
	// mean 5 variance 4
}

func ExampleDistinct() {
	var a, b tally.Distinct
	for i := range 100 {
		a.AddString(fmt.Sprint(i))
		b.AddString(fmt.Sprint(i + 50)) // half overlap
	}
	_ = a.Combine(&b)
	fmt.Println(a.Estimate(), "≈ 150")
	// Output: 151 ≈ 150
}

func ExampleShard() {
	s := tally.Shard[*tally.Sum]{Mutator: "web-1", ExpiresAt: 1714608000000000, State: new(tally.Sum)}
	_ = s.State.Add(42)
	b, _ := s.MarshalBinary()
	back, _ := tally.DecodeShard[*tally.Sum](b)
	fmt.Println(back.Mutator, back.ExpiresAt, back.State.Kind(), back.State.Value())
	_, err := tally.DecodeShard[*tally.Max](b)
	fmt.Println(errors.Is(err, crdt.ErrTypeMismatch))
	// Output:
	// web-1 1714608000000000 sum 42
	// true
}

func ExampleTally() {
	t := tally.Tally[*tally.Stats]{FoldedThrough: 1714608000000000, State: new(tally.Stats)}
	_ = t.State.Add(3)
	b, _ := t.MarshalBinary()
	back, _ := tally.DecodeTally[*tally.Stats](b)
	fmt.Println(back.FoldedThrough, back.State)
	// Output: 1714608000000000 n=1 sum=3 min=3 max=3 sumsq=9
}
