package cassandra

// Benchmarks need a cluster (CASSANDRA_HOSTS) and skip without one.
// BenchmarkStoreKit runs the storetest benchmarks every backend runs, each
// on freshly created tables; the others compare the adapter's writes with
// raw driver INSERTs of the same rows in the same run (goal: adapter
// throughput >= 0.9x raw). Run with
//
//	CASSANDRA_HOSTS=127.0.0.1 go test -run '^$' -bench . -benchtime 5s

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/storetest"
)

// BenchmarkStoreKit runs storetest.BenchmarkSiblings and
// BenchmarkPartitions against the cluster.
func BenchmarkStoreKit(b *testing.B) {
	integration(b)
	b.Run("Siblings", func(b *testing.B) {
		storetest.BenchmarkSiblings(b, func(b *testing.B) store.Siblings { return freshDB(b, Options{}).Siblings() })
	})
	b.Run("Partitions", func(b *testing.B) {
		storetest.BenchmarkPartitions(b, func(b *testing.B) store.Partitions { return freshDB(b, Options{}).Partitions() })
	})
}

// writeBench is one way of writing row i of a benchmark.
type writeBench struct {
	name  string
	write func(ctx context.Context, i int64) error
}

// siblingWriters compares Siblings.Put (nil token: one INSERT) with the
// raw INSERT it sends.
func siblingWriters(b *testing.B, db *DB) []writeBench {
	key := uniqueKey(b, "bench")
	value := make([]byte, 64) // a typical small encoded state
	s := db.Siblings()
	raw := s.cql(siblingsInsert)
	return []writeBench{
		{"raw-driver", func(ctx context.Context, i int64) error {
			return db.session.Query(raw, key, fmt.Sprintf("a%d", i%64), value, time.Now().UnixMicro()).ExecContext(ctx)
		}},
		{"adapter", func(ctx context.Context, i int64) error {
			return s.Put(ctx, key, crdt.ActorID(fmt.Sprintf("a%d", i%64)), value, nil)
		}},
	}
}

// partitionWriters compares a one-row Partitions.Apply with the raw
// INSERT it sends.
func partitionWriters(b *testing.B, db *DB) []writeBench {
	part := uniqueKey(b, "bench")
	value := make([]byte, 32)
	p := db.Partitions()
	raw := p.mutationStmt(store.Mutation{Partition: part, Op: store.OpPut, Value: value, Timestamp: 1}).cql
	return []writeBench{
		{"raw-driver", func(ctx context.Context, i int64) error {
			return db.session.Query(raw, part, []byte(fmt.Sprintf("r%d", i)), value, time.Now().UnixMicro()).ExecContext(ctx)
		}},
		{"adapter", func(ctx context.Context, i int64) error {
			return p.Apply(ctx, []store.Mutation{{Partition: part, Op: store.OpPut, Key: []byte(fmt.Sprintf("r%d", i)), Value: value, Timestamp: time.Now().UnixMicro()}})
		}},
	}
}

func runWriters(b *testing.B, writers []writeBench) {
	for _, w := range writers {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			var n atomic.Int64
			ctx := context.Background()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := w.write(ctx, n.Add(1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// ratio interleaves rounds of raw and adapter writes and reports adapter
// throughput divided by raw throughput (goal >= 0.9), so cluster noise
// affects both sides alike.
func ratio(b *testing.B, raw, adapter writeBench) {
	b.ReportAllocs()
	ctx := context.Background()
	var rawT, adT time.Duration
	const round = 50
	for i := 0; i < b.N; i++ {
		for _, w := range []struct {
			wb *writeBench
			d  *time.Duration
		}{{&raw, &rawT}, {&adapter, &adT}} {
			start := time.Now()
			for j := 0; j < round; j++ {
				if err := w.wb.write(ctx, int64(i*round+j)); err != nil {
					b.Fatal(err)
				}
			}
			*w.d += time.Since(start)
		}
	}
	if adT > 0 {
		b.ReportMetric(float64(rawT)/float64(adT), "adapter/raw-throughput")
	}
}

// BenchmarkSiblingsPut compares Siblings.Put with the raw INSERT it sends.
func BenchmarkSiblingsPut(b *testing.B) {
	runWriters(b, siblingWriters(b, newTestDB(b, Options{})))
}

// BenchmarkSiblingsPutRatio reports adapter/raw throughput for Puts.
func BenchmarkSiblingsPutRatio(b *testing.B) {
	ws := siblingWriters(b, newTestDB(b, Options{}))
	ratio(b, ws[0], ws[1])
}

// BenchmarkPartitionsApply compares a one-row Apply with the raw INSERT
// it sends.
func BenchmarkPartitionsApply(b *testing.B) {
	runWriters(b, partitionWriters(b, newTestDB(b, Options{})))
}

// BenchmarkPartitionsApplyRatio reports adapter/raw throughput for
// one-row Applies.
func BenchmarkPartitionsApplyRatio(b *testing.B) {
	ws := partitionWriters(b, newTestDB(b, Options{}))
	ratio(b, ws[0], ws[1])
}
