package embedded_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/store"
)

// BenchmarkChecks compares, in one run, the store with its file check and
// digests ("checked") and without them ("unchecked", the store before
// them): writes (each durable when it returns, one fsync per commit),
// reads, Open and Verify of a store of 20,000 siblings and rows.
//
//	cd adapters/embedded && taskset -c 1 go test -run '^$' -bench Checks -benchtime 2s
func BenchmarkChecks(b *testing.B) {
	ctx := context.Background()
	variants := []struct {
		name string
		opts func(embedded.Options) embedded.Options
	}{
		{"checked", func(o embedded.Options) embedded.Options { return o }},
		{"unchecked", embedded.UncheckedOptions},
	}
	for _, g := range []int{1, 32} {
		for _, v := range variants {
			b.Run(fmt.Sprintf("put/g%d/%s", g, v.name), func(b *testing.B) {
				db, _ := openTemp(b, v.opts(embedded.Options{}))
				s := db.Siblings()
				runWriters(b, g, func(i uint64) error { return s.Put(ctx, benchKey(i), "actor", benchValue, nil) })
			})
		}
	}
	for _, v := range variants {
		b.Run("fetch-put/g1/"+v.name, func(b *testing.B) {
			db, _ := openTemp(b, v.opts(embedded.Options{}))
			s := db.Siblings()
			runWriters(b, 1, func(i uint64) error {
				k := benchKey(i % 1000)
				_, tok, err := s.Fetch(ctx, k)
				if err != nil {
					return err
				}
				return s.Put(ctx, k, "actor", benchValue, tok)
			})
		})
	}
	for _, v := range variants {
		b.Run("apply/g1/"+v.name, func(b *testing.B) {
			db, _ := openTemp(b, v.opts(embedded.Options{}))
			p := db.Partitions()
			runWriters(b, 1, func(i uint64) error {
				return p.Apply(ctx, []store.Mutation{{Partition: fmt.Sprintf("p%d", i%100), Op: store.OpPut,
					Key: []byte(benchKey(i)), Value: benchValue, Timestamp: tsBase + int64(i)}})
			})
		})
	}
	// A store of 20,000 siblings and 20,000 rows in 100 partitions,
	// written in batches, for the reads, Open and Verify.
	const n = 20000
	for _, v := range variants {
		dir := b.TempDir()
		db, err := embedded.Open(dir, v.opts(embedded.Options{}))
		if err != nil {
			b.Fatal(err)
		}
		// Group commit: 32 writers fill it quickly.
		errs := make(chan error, 32)
		for w := range 32 {
			go func() {
				for i := w; i < n; i += 32 {
					if err := db.Siblings().Put(ctx, benchKey(uint64(i)), "actor", benchValue, nil); err != nil {
						errs <- err
						return
					}
					if err := db.Partitions().Apply(ctx, []store.Mutation{{Partition: fmt.Sprintf("p%d", i%100), Op: store.OpPut,
						Key: []byte(benchKey(uint64(i))), Value: benchValue, Timestamp: tsBase}}); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range 32 {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
		b.Run("fetch/"+v.name, func(b *testing.B) {
			runWriters(b, 1, func(i uint64) error {
				_, _, err := db.Siblings().Fetch(ctx, benchKey(i%n))
				return err
			})
		})
		b.Run("snapshot-200-rows/"+v.name, func(b *testing.B) {
			runWriters(b, 1, func(i uint64) error {
				_, err := db.Partitions().Snapshot(ctx, fmt.Sprintf("p%d", i%100), 1000, store.ReadComplete)
				return err
			})
		})
		b.Run("verify/"+v.name, func(b *testing.B) {
			runWriters(b, 1, func(uint64) error { return db.Verify() })
		})
		db.Close()
		b.Run("open-close/"+v.name, func(b *testing.B) {
			runWriters(b, 1, func(uint64) error {
				db, err := embedded.Open(dir, v.opts(embedded.Options{}))
				if err != nil {
					return err
				}
				return db.Close()
			})
		})
	}
}
