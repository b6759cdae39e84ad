package embedded_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/store"
)

// BenchmarkChecks compares the store with its file check and digests
// ("checked") and without them ("unchecked": the store before them) in
// alternating phases of one run, as BenchmarkVsRaw does: writes (each
// durable when it returns, one fsync per commit), reads, Verify, and Open
// of a store of 20,000 siblings and 20,000 rows. It reports both
// latencies and x-unchecked, the checked store's time as a multiple of
// the unchecked one's.
//
//	cd adapters/embedded && taskset -c 1 go test -run '^$' -bench Checks -benchtime 400x
func BenchmarkChecks(b *testing.B) {
	ctx := context.Background()
	opts := [2]embedded.Options{{}, embedded.UncheckedOptions(embedded.Options{})}
	writes := []struct {
		name string
		g    int
		op   func(db *embedded.DB) func(uint64) error
	}{
		{"put/g1", 1, putOp}, {"put/g32", 32, putOp},
		{"fetch-put/g1", 1, func(db *embedded.DB) func(uint64) error {
			s := db.Siblings()
			return func(i uint64) error {
				k := benchKey(i % 1000)
				_, tok, err := s.Fetch(ctx, k)
				if err != nil {
					return err
				}
				return s.Put(ctx, k, "actor", benchValue, tok)
			}
		}},
		{"apply/g1", 1, applyOp}, {"apply/g32", 32, applyOp},
	}
	for _, w := range writes {
		b.Run(w.name, func(b *testing.B) {
			var ops [2]func(uint64) error
			for v := range ops {
				db, _ := openTemp(b, opts[v])
				ops[v] = w.op(db)
			}
			alternate(b, w.g, ops)
		})
	}

	// A store of 20,000 siblings and 20,000 rows in 100 partitions, of
	// each kind, for the reads, Verify and Open.
	const n = 20000
	var dbs [2]*embedded.DB
	var dirs [2]string
	for v := range dbs {
		dbs[v], dirs[v] = openTemp(b, opts[v])
		fillConcurrently(b, dbs[v], n)
	}
	reads := []struct {
		name string
		op   func(db *embedded.DB) func(uint64) error
	}{
		{"fetch", func(db *embedded.DB) func(uint64) error {
			return func(i uint64) error { _, _, err := db.Siblings().Fetch(ctx, benchKey(i%n)); return err }
		}},
		{"snapshot-200-rows", func(db *embedded.DB) func(uint64) error {
			return func(i uint64) error {
				_, err := db.Partitions().Snapshot(ctx, fmt.Sprintf("part-%03d", i%100), 1000, store.ReadComplete)
				return err
			}
		}},
		{"verify", func(db *embedded.DB) func(uint64) error {
			return func(uint64) error { return db.Verify() }
		}},
	}
	for _, r := range reads {
		b.Run(r.name, func(b *testing.B) { alternate(b, 1, [2]func(uint64) error{r.op(dbs[0]), r.op(dbs[1])}) })
	}
	for _, db := range dbs {
		db.Close()
	}
	b.Run("open-close", func(b *testing.B) {
		var ops [2]func(uint64) error
		for v := range ops {
			ops[v] = func(uint64) error {
				db, err := embedded.Open(dirs[v], opts[v])
				if err != nil {
					return err
				}
				return db.Close()
			}
		}
		alternate(b, 1, ops)
	})
}

// fillConcurrently writes n partitions and n sibling keys into db from 32 goroutines
// (putOp and applyOp of 0..n-1).
func fillConcurrently(b *testing.B, db *embedded.DB, n int) {
	put, apply := putOp(db), applyOp(db)
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 32 {
				if err := put(uint64(i)); err != nil {
					b.Error(err)
					return
				}
				if err := apply(uint64(i)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func putOp(db *embedded.DB) func(uint64) error {
	s := db.Siblings()
	return func(i uint64) error { return s.Put(context.Background(), benchKey(i), "actor", benchValue, nil) }
}

func applyOp(db *embedded.DB) func(uint64) error {
	p := db.Partitions()
	return func(i uint64) error {
		return p.Apply(context.Background(), []store.Mutation{{Partition: fmt.Sprintf("part-%03d", i%100), Op: store.OpPut,
			Key: []byte(benchKey(i)), Value: benchValue, Timestamp: tsBase + int64(i)}})
	}
}

// alternate runs b.N operations of each of ops[0] (checked) and ops[1]
// (unchecked) from g goroutines, in alternating chunks.
func alternate(b *testing.B, g int, ops [2]func(uint64) error) {
	b.ReportAllocs()
	var n atomic.Uint64
	var took [2]time.Duration
	phase := func(op func(uint64) error, count int) time.Duration { return runPhase(b, g, &n, op, count) }
	chunk := 1
	if g > 1 {
		chunk = 2 * g
	}
	for done := 0; done < b.N; done += chunk {
		c := min(chunk, b.N-done)
		took[0] += phase(ops[0], c)
		took[1] += phase(ops[1], c)
	}
	b.ReportMetric(float64(took[0].Nanoseconds())/float64(b.N), "checked-ns/op")
	b.ReportMetric(float64(took[1].Nanoseconds())/float64(b.N), "unchecked-ns/op")
	b.ReportMetric(float64(took[0])/float64(took[1]), "x-unchecked")
}
