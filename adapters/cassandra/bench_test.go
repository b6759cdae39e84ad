package cassandra

// Benchmarks measure the cluster (CASSANDRA_HOSTS) and skip without one.
// Each is a body run by benchOnCluster, which TestBenchmarksRunOnModel
// also runs once on the model (benchOnModel), so CI checks what the body
// expects; TestBenchmarksHaveModelTwins (twins_test.go) fails when a
// benchmark reaches the cluster any other way. BenchmarkStoreKit runs the
// storetest benchmarks every backend runs, each on freshly created
// tables; the others compare the adapter's writes with raw driver INSERTs
// of the same rows in the same run (goal: adapter throughput >= 0.9x raw).
// Run with
//
//	CASSANDRA_HOSTS=127.0.0.1 go test -run '^$' -bench . -benchtime 5s

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/twincheck"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/storetest"
)

// benchOnCluster runs a benchmark body on the cluster named by
// CASSANDRA_HOSTS, or skips with the harness's reason.
func benchOnCluster(b *testing.B, body func(b *testing.B, tg *target)) {
	body(b, openCluster(b))
}

// benchOnModel runs a benchmark body once (b.N = 1, each sub-benchmark
// once) on a fresh model: the benchmark's run in CI.
func benchOnModel(t *testing.T, body func(b *testing.B, tg *target)) {
	t.Helper()
	twincheck.RunBenchmarkOnce(t, func(b *testing.B) { body(b, openModel(b)) })
}

// TestBenchmarksRunOnModel runs the body of every benchmark once on the
// model. testing.Benchmark keeps a failing body's log to itself: print
// from the body to see why one fails.
func TestBenchmarksRunOnModel(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"StoreKit", func(t *testing.T) { benchOnModel(t, benchStoreKit) }},
		{"SiblingsPut", func(t *testing.T) { benchOnModel(t, benchSiblingsPut) }},
		{"SiblingsPutRatio", func(t *testing.T) { benchOnModel(t, benchSiblingsPutRatio) }},
		{"PartitionsApply", func(t *testing.T) { benchOnModel(t, benchPartitionsApply) }},
		{"PartitionsApplyRatio", func(t *testing.T) { benchOnModel(t, benchPartitionsApplyRatio) }},
		{"Shortfall", func(t *testing.T) { benchOnModel(t, benchShortfall) }},
	} {
		t.Run(c.name, c.run)
	}
}

// BenchmarkStoreKit runs storetest.BenchmarkSiblings and
// BenchmarkPartitions against the cluster.
func BenchmarkStoreKit(b *testing.B) { benchOnCluster(b, benchStoreKit) }

func benchStoreKit(b *testing.B, tg *target) {
	b.Run("Siblings", func(b *testing.B) {
		storetest.BenchmarkSiblings(b, func(b *testing.B) store.Siblings { return tg.freshDB(b, Options{}).Siblings() })
	})
	b.Run("Partitions", func(b *testing.B) {
		storetest.BenchmarkPartitions(b, func(b *testing.B) store.Partitions { return tg.freshDB(b, Options{}).Partitions() })
	})
}

// rawExec sends s as the raw driver does: through the session at its
// level (QUORUM, harness_test.go) on a cluster, to the model's node at
// QUORUM otherwise.
func (tg *target) rawExec(ctx context.Context, s stmt) error {
	if tg.Server() {
		return tg.session.Query(s.cql, s.args...).ExecContext(ctx)
	}
	return tg.model.send([]stmt{s}, gocql.Quorum)
}

// writeBench is one way of writing row i of a benchmark.
type writeBench struct {
	name  string
	write func(ctx context.Context, i int64) error
}

// siblingWriters compares Siblings.Put (nil token: one INSERT) with the
// raw INSERT it sends.
func siblingWriters(b *testing.B, tg *target) []writeBench {
	db := tg.newDB(b, Options{})
	key := uniqueKey(b, "bench")
	value := make([]byte, 64) // a typical small encoded state
	s := db.Siblings()
	raw := s.cql(siblingsInsert)
	return []writeBench{
		{"raw-driver", func(ctx context.Context, i int64) error {
			return tg.rawExec(ctx, stmt{cql: raw, args: []any{key, fmt.Sprintf("a%d", i%64), value, time.Now().UnixMicro()}, key: key})
		}},
		{"adapter", func(ctx context.Context, i int64) error {
			return s.Put(ctx, key, crdt.ActorID(fmt.Sprintf("a%d", i%64)), value, nil)
		}},
	}
}

// partitionWriters compares a one-row Partitions.Apply with the raw
// INSERT it sends.
func partitionWriters(b *testing.B, tg *target) []writeBench {
	db := tg.newDB(b, Options{})
	part := uniqueKey(b, "bench")
	value := make([]byte, 32)
	p := db.Partitions()
	raw := p.mutationStmt(store.Mutation{Partition: part, Op: store.OpPut, Value: value, Timestamp: 1}).cql
	return []writeBench{
		{"raw-driver", func(ctx context.Context, i int64) error {
			return tg.rawExec(ctx, stmt{cql: raw, args: []any{part, []byte(fmt.Sprintf("r%d", i)), value, time.Now().UnixMicro()}, key: part})
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
func BenchmarkSiblingsPut(b *testing.B) { benchOnCluster(b, benchSiblingsPut) }

func benchSiblingsPut(b *testing.B, tg *target) { runWriters(b, siblingWriters(b, tg)) }

// BenchmarkSiblingsPutRatio reports adapter/raw throughput for Puts.
func BenchmarkSiblingsPutRatio(b *testing.B) { benchOnCluster(b, benchSiblingsPutRatio) }

func benchSiblingsPutRatio(b *testing.B, tg *target) {
	ws := siblingWriters(b, tg)
	ratio(b, ws[0], ws[1])
}

// BenchmarkPartitionsApply compares a one-row Apply with the raw INSERT
// it sends.
func BenchmarkPartitionsApply(b *testing.B) { benchOnCluster(b, benchPartitionsApply) }

func benchPartitionsApply(b *testing.B, tg *target) { runWriters(b, partitionWriters(b, tg)) }

// BenchmarkPartitionsApplyRatio reports adapter/raw throughput for
// one-row Applies.
func BenchmarkPartitionsApplyRatio(b *testing.B) { benchOnCluster(b, benchPartitionsApplyRatio) }

func benchPartitionsApplyRatio(b *testing.B, tg *target) {
	ws := partitionWriters(b, tg)
	ratio(b, ws[0], ws[1])
}
