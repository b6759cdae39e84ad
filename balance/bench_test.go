package balance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/timeid"
)

func BenchmarkAdd(b *testing.B) {
	l, s, c := newAccounts(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c.now = c.now.Add(time.Microsecond)
		if err := l.Add(ctx, "a", timeid.New(c.now), 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.Calls().Applies)/float64(b.N), "writes/op")
	b.ReportMetric(float64(s.Calls().Snapshots)/float64(b.N), "reads/op")
}

// BenchmarkBalance reads an account after n increments, with a merge every
// 100 increments and without. With merges, rows/read is bounded by the
// rows younger than GCGrace (tombstones wait that long before collection),
// not by n; without merges it grows with n.
func BenchmarkBalance(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		for _, merges := range []bool{true, false} {
			b.Run(fmt.Sprintf("updates=%d/merges=%v", n, merges), func(b *testing.B) {
				l, s, c := newAccounts(b)
				ctx := context.Background()
				for i := range n {
					c.now = c.now.Add(100 * time.Millisecond)
					if err := l.Add(ctx, "a", timeid.New(c.now), 1); err != nil {
						b.Fatal(err)
					}
					if merges && i%100 == 99 {
						if _, err := l.Merge(ctx, "a"); err != nil {
							b.Fatal(err)
						}
					}
				}
				s.ResetCalls()
				b.ReportAllocs()
				for b.Loop() {
					v, err := l.Balance(ctx, "a")
					if err != nil || v != int64(n) {
						b.Fatal(v, err)
					}
				}
				b.ReportMetric(float64(s.Calls().RowsRead)/float64(b.N), "rows/read")
			})
		}
	}
}

func BenchmarkMerge(b *testing.B) {
	l, _, c := newAccounts(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for range 100 {
			c.now = c.now.Add(10 * time.Millisecond)
			_ = l.Add(ctx, "a", timeid.New(c.now), 1)
		}
		c.now = c.now.Add(2 * time.Minute)
		b.StartTimer()
		if _, err := l.Merge(ctx, "a"); err != nil {
			b.Fatal(err)
		}
	}
}
