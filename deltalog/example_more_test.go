package deltalog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// Counters over a store: an update is one write, a retry counts once, and
// a merge after the window folds old cells so that reads stay cheap.
func ExampleCounters() {
	ctx := context.Background()
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	c, _ := deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: func() time.Time { return now }})
	id := timeid.FromParts(now, 1, 1)
	_ = c.Add(ctx, "likes", id, 1)
	_ = c.Add(ctx, "likes", id, 1) // retry: same cell
	_ = c.Add(ctx, "likes", timeid.FromParts(now, 2, 1), 1)
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
	st := memory.NewPartitions()
	c, _ := deltalog.New(st, deltalog.Options{Clock: func() time.Time { return now }})
	var b deltalog.Batch
	b.Add("seats:flight-1", timeid.FromParts(now, 1, 1), -2)
	b.Add("seats:flight-2", timeid.FromParts(now, 1, 1), 0) // zero delta: invalid
	err := c.Apply(ctx, &b)
	rows, _ := st.Snapshot(ctx, "seats:flight-1", 10, store.ReadComplete)
	fmt.Println(b.Len(), errors.Is(err, crdt.ErrInvalidAmount), len(rows))
	// Output: 2 true 0
}

// Each cell is one row of its counter's partition, keyed by EncodeKey:
// keys in byte order are cells newest first, a merge cell before the
// regular cell with its id. DecodeKey reads a key back.
func ExampleEncodeKey() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	older, newer := timeid.FromParts(t, 1, 1), timeid.FromParts(t.Add(time.Second), 1, 1)
	keys := [][]byte{
		deltalog.EncodeKey(older, deltalog.KindRegular),
		deltalog.EncodeKey(older, deltalog.KindMerge),
		deltalog.EncodeKey(newer, deltalog.KindRegular),
	}
	slices.SortFunc(keys, bytes.Compare)
	for _, k := range keys {
		id, kind, err := deltalog.DecodeKey(k)
		fmt.Println(len(k), id.Time().Format(time.TimeOnly), kind, err)
	}
	// Output:
	// 17 00:00:01 r <nil>
	// 17 00:00:00 m <nil>
	// 17 00:00:00 r <nil>
}

// Kind tells a regular update cell from a merge cell. A merge cell sorts
// before the regular cell with the same id, so a scan meets it first and
// stops there.
func ExampleKind() {
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	id := timeid.FromParts(t, 1, 1)
	r := deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 3}
	m := deltalog.Cell{ID: id, Kind: deltalog.KindMerge, Delta: 3, Stats: deltalog.Stats{Count: 1, Sum: 3, Min: 3, Max: 3, SumSqLo: 9}}
	fmt.Println(deltalog.KindMerge, deltalog.KindRegular, deltalog.CompareCells(m, r))
	// Output: m r -1
}

// The zero Options select the defaults; New checks the timing
// assumptions (CompactGrace ≥ MaxScan + SafetyMargin).
func ExampleOptions() {
	c, _ := deltalog.New(memory.NewPartitions(), deltalog.Options{})
	o := c.Options()
	fmt.Println(o.Window, o.FutureSkew, o.SafetyMargin, o.MaxScan, o.CompactGrace)
	_, err := deltalog.New(memory.NewPartitions(), deltalog.Options{CompactGrace: time.Second})
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
		_ = l.Add(timeid.FromParts(t.Add(time.Duration(i)*time.Second), 1, 1), d)
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

// Stats (a stats.Summary) combine without caring about order or grouping,
// and keep the sum of squares exactly, so mean and variance survive merges;
// each is the exact quotient rounded once.
func ExampleStats() {
	a := deltalog.Stats{Count: 2, Sum: 6, Min: 2, Max: 4, SumSqLo: 4 + 16}
	b := deltalog.Stats{Count: 1, Sum: 6, Min: 6, Max: 6, SumSqLo: 36}
	s, err := a.Add(b)
	mean, _ := s.Mean()
	variance, _ := s.Variance()
	fmt.Println(s.Count, s.Sum, s.Min, s.Max, s.SumSquares(), mean, err)
	fmt.Printf("%.4f\n", variance)
	// The empty set has no mean.
	_, ok := deltalog.Stats{}.Mean()
	fmt.Println(ok)
	// Output:
	// 3 12 2 6 56 4 <nil>
	// 2.6667
	// false
}

// Counters keep a counter in one partition of a store.Partitions; a scan of
// the partition meets its cells newest first, a merge cell before the
// regular cell of the same id, so a reader stops at the first merge cell.
// Compact then deletes, with one range delete, what that merge cell
// covers.
func ExampleCounters_Compact() {
	ctx := context.Background()
	t := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t
	st := memory.NewPartitions()
	c, _ := deltalog.New(st, deltalog.Options{Clock: func() time.Time { return now }})
	for i, d := range []int64{2, 3, 4} {
		now = t.Add(time.Duration(i) * time.Second)
		_ = c.Add(ctx, "c", timeid.FromParts(now, 1, 1), d)
	}
	now = t.Add(11*time.Minute + 1500*time.Millisecond) // the first two cells are past Window + SafetyMargin
	_, _, _ = c.Merge(ctx, "c")
	show := func() {
		_ = st.Scan(ctx, "c", nil, store.ReadComplete, func(r store.Row) bool {
			id, kind, _ := deltalog.DecodeKey(r.Key)
			var cell deltalog.Cell
			_ = cell.UnmarshalBinary(r.Value)
			fmt.Println(" ", id.Time().Format(time.TimeOnly), kind, cell.Delta)
			return true
		})
	}
	fmt.Println("before compaction:")
	show()
	now = now.Add(3 * time.Minute) // past CompactGrace
	did, _ := c.Compact(ctx, "c")
	fmt.Println("compacted:", did)
	show()
	r, _ := c.Read(ctx, "c")
	fmt.Println("value:", r.Value)
	// Output:
	// before compaction:
	//   00:00:02 r 4
	//   00:00:01 m 5
	//   00:00:01 r 3
	//   00:00:00 r 2
	// compacted: true
	//   00:00:02 r 4
	//   00:00:01 m 5
	// value: 9
}
