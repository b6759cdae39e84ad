package tally_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

// countingStore counts the snapshots and applies made through it.
type countingStore struct {
	store.Partitions
	snapshots, applies atomic.Int64
}

func (s *countingStore) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	s.snapshots.Add(1)
	return s.Partitions.Snapshot(ctx, partition, limit, level)
}

func (s *countingStore) Apply(ctx context.Context, muts []store.Mutation) error {
	s.applies.Add(1)
	return s.Partitions.Apply(ctx, muts)
}

// BenchmarkRead measures a read against the number of live shards, and the
// same 1,000 shards after a GC folded them into the tally (one row).
func BenchmarkRead(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 100, 1000} {
		for _, gc := range []bool{false, true} {
			name := fmt.Sprintf("shards=%d", n)
			if gc {
				name += "/after-gc"
			}
			b.Run(name, func(b *testing.B) {
				clock := newClock()
				db := memory.NewPartitions()
				c, err := tally.New[*tally.Sum](db, "bench", tally.Options{Clock: clock.Now, NewID: ids()})
				if err != nil {
					b.Fatal(err)
				}
				for range n {
					m, _ := c.NewMutator()
					if err := m.Update(ctx, add(1)); err != nil {
						b.Fatal(err)
					}
				}
				if gc {
					clock.Advance(tally.DefaultLifetime + tally.DefaultGrace + time.Minute)
					if _, err := c.GC(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					v, err := c.Read(ctx)
					if err != nil || v.Value() != int64(n) {
						b.Fatal(v, err)
					}
				}
				b.ReportMetric(float64(liveShards(b, db, "bench")), "live-shards")
			})
		}
	}
}

// BenchmarkIncrement compares one write per increment with coalescing 100
// increments into one write (Stage ×100, Flush), in memory.
func BenchmarkIncrement(b *testing.B) {
	ctx := context.Background()
	for _, batch := range []int{1, 100} {
		name := "flush-each"
		if batch > 1 {
			name = fmt.Sprintf("coalesce-%d", batch)
		}
		b.Run(name, func(b *testing.B) {
			db := &countingStore{Partitions: memory.NewPartitions()}
			c, err := tally.New[*tally.Sum](db, "bench", tally.Options{Clock: newClock().Now, NewID: ids()})
			if err != nil {
				b.Fatal(err)
			}
			m, _ := c.NewMutator()
			b.ReportAllocs()
			start := time.Now()
			for i := range b.N {
				if err := m.Stage(add(1)); err != nil {
					b.Fatal(err)
				}
				if (i+1)%batch == 0 {
					if err := m.Flush(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := m.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "incr/s")
			b.ReportMetric(float64(db.applies.Load())/float64(b.N), "writes/incr")
			b.ReportMetric(float64(db.snapshots.Load())/float64(b.N), "reads/incr")
		})
	}
}
