package deltalog_test

import (
	"context"
	"fmt"
	"github.com/stretchr/testify/require"
	"testing"
	"time"

	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

func BenchmarkAdd(b *testing.B) {
	c, store, clock := newCounters(b, 0)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		clock.Advance(time.Microsecond)
		if err := c.Add(ctx, "k", timeid.New(clock.Now()), 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(store.Calls().Applies)/float64(b.N), "writes/op")
	b.ReportMetric(float64(store.Calls().Scans)/float64(b.N), "reads/op")
}

// BenchmarkRead measures read cost as the history grows, with merges (and
// compaction) running every 1000 updates and without. Updates arrive 100ms
// apart, so the one-minute window plus margin holds about 700 of them.
// cells/read is the number of cells a read examines.
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		for _, merges := range []bool{true, false} {
			b.Run(fmt.Sprintf("updates=%d/merges=%v", n, merges), func(b *testing.B) {
				ctx := context.Background()
				clock := &fakeClock{now: base}
				store := newSpy(0)
				c, err := deltalog.New(store, testOptions(clock))
				if err != nil {
					b.Fatal(err)
				}
				var want int64
				for i := range n {
					clock.Advance(100 * time.Millisecond)
					if err := c.Add(ctx, "k", timeid.New(clock.Now()), int64(i%5+1)); err != nil {
						b.Fatal(err)
					}
					want += int64(i%5 + 1)
					if merges && i%1000 == 999 {
						if _, _, err := c.Merge(ctx, "k"); err != nil {
							b.Fatal(err)
						}
						if _, err := c.Compact(ctx, "k"); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportAllocs()
				var r deltalog.Reading
				for b.Loop() {
					if r, err = c.Read(ctx, "k"); err != nil {
						b.Fatal(err)
					}
				}
				if r.Value != want {
					b.Fatalf("read %d, want %d", r.Value, want)
				}
				b.ReportMetric(float64(r.Cells), "cells/read")
				b.ReportMetric(float64(store.Len("k")), "cells-stored")
			})
		}
	}
}

func BenchmarkMerge(b *testing.B) {
	c, _, clock := newCounters(b, 0)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for range 100 {
			clock.Advance(10 * time.Millisecond)
			_ = c.Add(ctx, "k", timeid.New(clock.Now()), 1)
		}
		clock.Advance(2 * time.Minute)
		b.StartTimer()
		if _, _, err := c.Merge(ctx, "k"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeSteady merges a counter in steady state: 10 updates a
// second, the default options, merged and compacted every 5 seconds; each
// op is one Merge, after 50 more updates (outside the timer). It reports
// the cells the merge scanned (cells/merge) and those a read scans
// (cells/read, once, at the end), against which a merge that scanned
// from the newest cell would read as many:
//
//	taskset -c 1 go test -run '^$' -bench MergeSteady ./deltalog
func BenchmarkMergeSteady(b *testing.B) {
	ctx := context.Background()
	clock := &fakeClock{now: base}
	st := newSpy(0)
	c, err := deltalog.New(st, deltalog.Options{Clock: clock.Now})
	require.NoError(b, err)
	o := c.Options()
	n := 0
	interval := func() {
		for range 50 {
			clock.Advance(100 * time.Millisecond)
			n++
			if err := c.Add(ctx, "k", timeid.FromParts(clock.Now(), uint16(n), 1), 1); err != nil {
				b.Fatal(err)
			}
		}
	}
	for clock.Now().Sub(base) < o.Window+o.SafetyMargin+o.CompactGrace+time.Minute {
		interval()
		if _, _, err := c.Merge(ctx, "k"); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Compact(ctx, "k"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	scanned := int64(0)
	for b.Loop() {
		b.StopTimer()
		interval()
		if _, err := c.Compact(ctx, "k"); err != nil {
			b.Fatal(err)
		}
		read := st.Calls().RowsRead
		b.StartTimer()
		if _, _, err := c.Merge(ctx, "k"); err != nil {
			b.Fatal(err)
		}
		scanned += st.Calls().RowsRead - read
	}
	b.ReportMetric(float64(scanned)/float64(b.N), "cells/merge")
	r, err := c.Read(ctx, "k")
	require.NoError(b, err)
	require.Equal(b, int64(n), r.Value)
	b.ReportMetric(float64(r.Cells), "cells/read")
}
