package deltalog_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
)

// Counters over a store: an update is one write, a retry counts once, and
// a merge after the window folds old cells so that reads stay cheap.
func ExampleCounters() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	store := memory.NewDeltaLogStore(0)
	c, _ := deltalog.New(store, deltalog.Options{Clock: func() time.Time { return now }})
	id := deltalog.IDFromParts(now, 1, 1)
	_ = c.Add(ctx, "likes", id, 1)
	_ = c.Add(ctx, "likes", id, 1) // retry: same cell
	_ = c.Add(ctx, "likes", deltalog.IDFromParts(now, 2, 1), 1)
	r, _ := c.Read(ctx, "likes")
	fmt.Println("value:", r.Value, "cells read:", r.Cells)

	now = now.Add(15 * time.Minute) // past Window + SafetyMargin
	m, ok, _ := c.Merge(ctx, "likes")
	fmt.Println("merged:", ok, m.Kind, m.Delta)
	// Output:
	// value: 2 cells read: 2
	// merged: true m 2
}

// A Batch applies updates to several counters in one store write, all or
// nothing: an invalid update fails the whole batch.
func ExampleBatch() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	store := memory.NewDeltaLogStore(0)
	c, _ := deltalog.New(store, deltalog.Options{Clock: func() time.Time { return now }})
	var b deltalog.Batch
	b.Add("seats:flight-1", deltalog.IDFromParts(now, 1, 1), -2)
	b.Add("seats:flight-2", deltalog.IDFromParts(now, 1, 1), 0) // zero delta: invalid
	err := c.Apply(ctx, &b)
	fmt.Println(b.Len(), errors.Is(err, crdt.ErrInvalidAmount), store.Len("seats:flight-1"))
	// Output: 2 true 0
}

// An Entry addresses a cell to a counter; Store.Insert writes a slice of
// them atomically, possibly across counters.
func ExampleEntry() {
	ctx := context.Background()
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var store deltalog.Store = memory.NewDeltaLogStore(0)
	id := deltalog.IDFromParts(t, 1, 1)
	_ = store.Insert(ctx, []deltalog.Entry{
		{Counter: "from", Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: -5}},
		{Counter: "to", Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 5}},
	})
	for _, k := range []string{"from", "to"} {
		_ = store.Scan(ctx, k, func(c deltalog.Cell) bool { fmt.Println(k, c.Delta); return true })
	}
	// Output:
	// from -5
	// to 5
}

// Kind tells a regular update cell from a merge cell. A merge cell sorts
// before the regular cell with the same id, so a scan meets it first and
// stops there.
func ExampleKind() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	id := deltalog.IDFromParts(t, 1, 1)
	r := deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 3}
	m := deltalog.Cell{ID: id, Kind: deltalog.KindMerge, Delta: 3, Stats: deltalog.Stats{Count: 1, Sum: 3, Min: 3, Max: 3, SumSqLo: 9}}
	fmt.Println(deltalog.KindMerge, deltalog.KindRegular, deltalog.CompareCells(m, r))
	// Output: m r -1
}

// The zero Options select the defaults; New checks the timing
// assumptions (CompactGrace ≥ MaxScan + SafetyMargin).
func ExampleOptions() {
	c, _ := deltalog.New(memory.NewDeltaLogStore(0), deltalog.Options{})
	o := c.Options()
	fmt.Println(o.Window, o.FutureSkew, o.SafetyMargin, o.MaxScan, o.CompactGrace)
	_, err := deltalog.New(memory.NewDeltaLogStore(0), deltalog.Options{CompactGrace: time.Second})
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	// Output:
	// 10m0s 5s 1m0s 10s 2m0s
	// true
}

// A Reading carries the value, the aggregates of the updates it includes,
// and its cost in cells: after a merge, a read stops at the merge cell.
func ExampleReading() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var l deltalog.Log
	for i, d := range []int64{3, -1, 4, 1, 5} {
		_ = l.Add(deltalog.IDFromParts(t.Add(time.Duration(i)*time.Second), 1, 1), d)
	}
	r, _ := l.Read()
	fmt.Printf("value %d over %d cells, n=%d min=%d max=%d\n", r.Value, r.Cells, r.Stats.Count, r.Stats.Min, r.Stats.Max)
	_, _, _ = l.MergeBefore(t.Add(3500*time.Millisecond), t.Add(time.Hour)) // covers the first four
	r, _ = l.Read()
	fmt.Printf("value %d over %d cells, n=%d min=%d max=%d\n", r.Value, r.Cells, r.Stats.Count, r.Stats.Min, r.Stats.Max)
	// Output:
	// value 12 over 5 cells, n=5 min=-1 max=5
	// value 12 over 2 cells, n=5 min=-1 max=5
}

// Stats combine without caring about order or grouping, and keep the sum
// of squares exactly, so mean and variance survive merges.
func ExampleStats() {
	a := deltalog.Stats{Count: 2, Sum: 6, Min: 2, Max: 4, SumSqLo: 4 + 16}
	b := deltalog.Stats{Count: 1, Sum: 6, Min: 6, Max: 6, SumSqLo: 36}
	s, err := a.Add(b)
	fmt.Println(s.Count, s.Sum, s.Min, s.Max, s.SumSquares(), s.Mean(), err)
	fmt.Printf("%.4f\n", s.Variance())
	// Output:
	// 3 12 2 6 56 4 <nil>
	// 2.6667
}

// A Store scans a counter newest first, merge cell before the regular cell
// of the same id, so a reader can stop at the first merge cell: everything
// below it is already in its sum.
func ExampleStore() {
	ctx := context.Background()
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var store deltalog.Store = memory.NewDeltaLogStore(0)
	id := func(s int) deltalog.ID { return deltalog.IDFromParts(t.Add(time.Duration(s)*time.Second), 1, 1) }
	_ = store.Insert(ctx, []deltalog.Entry{
		{Counter: "c", Cell: deltalog.Cell{ID: id(0), Kind: deltalog.KindRegular, Delta: 2}},
		{Counter: "c", Cell: deltalog.Cell{ID: id(1), Kind: deltalog.KindRegular, Delta: 3}},
		{Counter: "c", Cell: deltalog.Cell{ID: id(1), Kind: deltalog.KindMerge, Delta: 5,
			Stats: deltalog.Stats{Count: 2, Sum: 5, Min: 2, Max: 3, SumSqLo: 13}, Written: 1}},
		{Counter: "c", Cell: deltalog.Cell{ID: id(2), Kind: deltalog.KindRegular, Delta: 4}},
	})
	var sum int64
	_ = store.Scan(ctx, "c", func(c deltalog.Cell) bool {
		fmt.Println(c.ID.Time().Format(time.TimeOnly), c.Kind, c.Delta)
		sum += c.Delta
		return c.Kind != deltalog.KindMerge
	})
	fmt.Println("value:", sum)
	_ = store.DeleteCovered(ctx, "c", id(1))
	fmt.Println("cells left:", store.(*memory.DeltaLogStore).Len("c"))
	// Output:
	// 00:00:02 r 4
	// 00:00:01 m 5
	// value: 9
	// cells left: 2
}
