package embedded_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
)

// BenchmarkGroupVsBatch: the adapter's group commit (the baseline)
// against the engine's own Batch method, with its default MaxBatchDelay
// (10 ms) and a short one (200 µs), on the same write (a Put of a new
// key, durable when it returns) with 1, 8 and 32 writers. The three run
// in alternating phases of one run, as BenchmarkVsRaw, since the disk's
// fsync latency drifts; x-batch… is the batch variant's time per write as
// a multiple of the group commit's.
//
//	cd adapters/embedded && taskset -c 1 go test -run '^$' -bench GroupVsBatch -benchtime 300x
func BenchmarkGroupVsBatch(b *testing.B) {
	ctx := context.Background()
	variants := []struct {
		name string
		opts embedded.Options
	}{
		{"group", embedded.Options{}},
		{"batch10ms", embedded.BatchOptions(embedded.Options{}, 10*time.Millisecond)}, // bbolt's default
		{"batch200us", embedded.BatchOptions(embedded.Options{}, 200*time.Microsecond)},
	}
	for _, g := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("g%d", g), func(b *testing.B) {
			b.ReportAllocs()
			var n atomic.Uint64
			ops := make([]func(uint64) error, len(variants))
			dbs := make([]*embedded.DB, len(variants))
			for i, v := range variants {
				db, _ := openTemp(b, v.opts)
				dbs[i] = db
				s := db.Siblings()
				ops[i] = func(k uint64) error { return s.Put(ctx, benchKey(k), "actor", benchValue, nil) }
			}
			phase := func(op func(uint64) error, count int) time.Duration { return runPhase(b, g, &n, op, count) }
			chunk := 4 * g
			took := make([]time.Duration, len(variants))
			for done := 0; done < b.N; done += chunk {
				c := min(chunk, b.N-done)
				for i, op := range ops {
					took[i] += phase(op, c)
				}
			}
			for i, v := range variants { // the same work: every variant keeps its digests right
				if err := dbs[i].Verify(); err != nil {
					b.Fatalf("%s: %v", v.name, err)
				}
			}
			for i, v := range variants {
				b.ReportMetric(float64(took[i].Nanoseconds())/float64(b.N), v.name+"-ns/op")
				if i > 0 {
					b.ReportMetric(float64(took[i])/float64(took[0]), "x-"+v.name)
				}
			}
		})
	}
}
