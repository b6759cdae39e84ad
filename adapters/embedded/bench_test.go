package embedded_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store"
	bolt "go.etcd.io/bbolt"
)

// The benchmarks compare, in one run, the adapter with a raw put of the
// same bytes into the same engine (bbolt, a file beside it: one
// transaction and one fsync per put with db.Update, or bbolt's own group
// commit, db.Batch) and with the memory store, with 1 and 32 goroutines.
// Every embedded write is durable when it returns.
//
//	cd adapters/embedded && go test -run '^$' -bench . -benchtime 3s

const benchValueSize = 200 // about a ledger entry or a log cell

var benchValue = func() []byte {
	v := make([]byte, benchValueSize)
	for i := range v {
		v[i] = byte('a' + i%26)
	}
	return v
}()

// runWriters calls op(i) b.N times in total from g goroutines, i unique.
func runWriters(b *testing.B, g int, op func(i uint64) error) {
	b.ReportAllocs()
	var n atomic.Uint64
	if g == 1 {
		for b.Loop() {
			if err := op(n.Add(1)); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.SetParallelism(max(1, g/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(n.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func rawBolt(b *testing.B) *bolt.DB {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, &bolt.Options{FreelistType: bolt.FreelistMapType})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		b.Fatal(err)
	}
	return db
}

func rawPut(db *bolt.DB, batch bool, key []byte) error {
	fn := func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put(key, benchValue) }
	if batch {
		return db.Batch(fn)
	}
	return db.Update(fn)
}

func benchKey(i uint64) string { return fmt.Sprintf("acct-%09d", i) }

// BenchmarkSiblingsPut: a Put of a new key (no token), as a ledger's first
// write of an account, against the same bytes put raw.
func BenchmarkSiblingsPut(b *testing.B) {
	ctx := context.Background()
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("embedded/g%d", g), func(b *testing.B) {
			db, _ := openTemp(b, embedded.Options{})
			s := db.Siblings()
			runWriters(b, g, func(i uint64) error { return s.Put(ctx, benchKey(i), "actor", benchValue, nil) })
		})
		b.Run(fmt.Sprintf("raw-update/g%d", g), func(b *testing.B) {
			db := rawBolt(b)
			runWriters(b, g, func(i uint64) error { return rawPut(db, false, []byte(benchKey(i))) })
		})
		if g > 1 {
			b.Run(fmt.Sprintf("raw-batch/g%d", g), func(b *testing.B) {
				db := rawBolt(b)
				runWriters(b, g, func(i uint64) error { return rawPut(db, true, []byte(benchKey(i))) })
			})
		}
		b.Run(fmt.Sprintf("memory/g%d", g), func(b *testing.B) {
			s := memory.NewSiblings()
			runWriters(b, g, func(i uint64) error { return s.Put(ctx, benchKey(i), "actor", benchValue, nil) })
		})
	}
}

// BenchmarkSiblingsFetchPut: the ledger's write path, a Fetch and a Put
// with its token on one of 1,000 keys, so each key keeps one sibling.
func BenchmarkSiblingsFetchPut(b *testing.B) {
	ctx := context.Background()
	cycle := func(s interface {
		store.Siblings
	}) func(uint64) error {
		return func(i uint64) error {
			k := benchKey(i % 1000)
			_, tok, err := s.Fetch(ctx, k)
			if err != nil {
				return err
			}
			return s.Put(ctx, k, "actor", benchValue, tok)
		}
	}
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("embedded/g%d", g), func(b *testing.B) {
			db, _ := openTemp(b, embedded.Options{})
			runWriters(b, g, cycle(db.Siblings()))
		})
		b.Run(fmt.Sprintf("memory/g%d", g), func(b *testing.B) {
			runWriters(b, g, cycle(memory.NewSiblings()))
		})
	}
}

// BenchmarkPartitionsApply: a batch of one put (a log cell, a balance
// row) into one of 100 partitions, against the same bytes put raw.
func BenchmarkPartitionsApply(b *testing.B) {
	ctx := context.Background()
	apply := func(p store.Partitions) func(uint64) error {
		return func(i uint64) error {
			return p.Apply(ctx, []store.Mutation{{
				Partition: fmt.Sprintf("part-%03d", i%100), Op: store.OpPut,
				Key: []byte(benchKey(i)), Value: benchValue, Timestamp: tsBase + int64(i),
			}})
		}
	}
	for _, g := range []int{1, 32} {
		b.Run(fmt.Sprintf("embedded/g%d", g), func(b *testing.B) {
			db, _ := openTemp(b, embedded.Options{})
			runWriters(b, g, apply(db.Partitions()))
		})
		b.Run(fmt.Sprintf("raw-update/g%d", g), func(b *testing.B) {
			db := rawBolt(b)
			runWriters(b, g, func(i uint64) error {
				return rawPut(db, false, []byte(fmt.Sprintf("part-%03d", i%100)+benchKey(i)))
			})
		})
		if g > 1 {
			b.Run(fmt.Sprintf("raw-batch/g%d", g), func(b *testing.B) {
				db := rawBolt(b)
				runWriters(b, g, func(i uint64) error {
					return rawPut(db, true, []byte(fmt.Sprintf("part-%03d", i%100)+benchKey(i)))
				})
			})
		}
		b.Run(fmt.Sprintf("memory/g%d", g), func(b *testing.B) {
			runWriters(b, g, apply(memory.NewPartitions()))
		})
	}
}

// BenchmarkVsRaw runs the adapter and the raw engine in alternating
// phases of the same run (the disk's speed drifts: sequential benchmarks
// of fsync-bound writes differ by 2x from one second to the next) and
// reports both latencies and "x-raw", the adapter's throughput as a
// fraction of the raw engine's. The raw side is db.Update with one
// goroutine and db.Batch, bbolt's own group commit, with 32.
func BenchmarkVsRaw(b *testing.B) {
	ctx := context.Background()
	for _, shape := range []string{"siblings", "partitions"} {
		for _, g := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/g%d", shape, g), func(b *testing.B) {
				db, _ := openTemp(b, embedded.Options{})
				raw := rawBolt(b)
				var adapter func(uint64) error
				rawKey := func(i uint64) []byte { return []byte(benchKey(i)) }
				switch shape {
				case "siblings":
					s := db.Siblings()
					adapter = func(i uint64) error { return s.Put(ctx, benchKey(i), "actor", benchValue, nil) }
				case "partitions":
					p := db.Partitions()
					adapter = func(i uint64) error {
						return p.Apply(ctx, []store.Mutation{{Partition: fmt.Sprintf("part-%03d", i%100), Op: store.OpPut,
							Key: []byte(benchKey(i)), Value: benchValue, Timestamp: tsBase + int64(i)}})
					}
					rawKey = func(i uint64) []byte { return []byte(fmt.Sprintf("part-%03d", i%100) + benchKey(i)) }
				}
				rawOp := func(i uint64) error { return rawPut(raw, g > 1, rawKey(i)) }
				b.ReportAllocs()
				var n atomic.Uint64
				var tA, tR time.Duration
				phase := func(op func(uint64) error, ops int) time.Duration { return runPhase(b, g, &n, op, ops) }
				chunk := 1 // one goroutine: alternate every write
				if g > 1 {
					chunk = 2 * g
				}
				for done := 0; done < b.N; done += chunk {
					c := min(chunk, b.N-done)
					tA += phase(adapter, c)
					tR += phase(rawOp, c)
				}
				b.ReportMetric(float64(tA.Nanoseconds())/float64(b.N), "embedded-ns/op")
				b.ReportMetric(float64(tR.Nanoseconds())/float64(b.N), "raw-ns/op")
				b.ReportMetric(float64(tR)/float64(tA), "x-raw")
			})
		}
	}
}

// runPhase runs count calls of op, numbered from n, on g goroutines (inline
// when g is 1, so that no goroutine wake-up is in the figure), and returns
// how long they took. A failed call fails b.
func runPhase(b *testing.B, g int, n *atomic.Uint64, op func(uint64) error, count int) time.Duration {
	start := time.Now()
	if g == 1 {
		for range count {
			if err := op(n.Add(1)); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(count))
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := op(n.Add(1)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}
