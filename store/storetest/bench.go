package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// BenchmarkSiblings measures the calls the counters make on a Siblings
// store, each on a fresh store from newStore, with allocations reported:
//
//   - Fetch: a key with one sibling;
//   - Fetch/siblings=8: a key with eight siblings;
//   - Put/blind: a Put with a nil token, each to a new key;
//   - FetchPut: a read-modify-write cycle on one key (the ledger's write);
//   - FetchPut/parallel: the same on one key per goroutine
//     (b.RunParallel).
func BenchmarkSiblings(b *testing.B, newStore func(b *testing.B) store.Siblings) {
	ctx := context.Background()
	value := make([]byte, 256)
	fetch := func(siblings int) func(b *testing.B) {
		return func(b *testing.B) {
			s := newStore(b)
			for i := range siblings {
				if err := s.Put(ctx, "k", crdt.ActorID(fmt.Sprint("a", i)), value, nil); err != nil {
					b.Fatal(err)
				}
			}
			loop(b, func(int) error { _, _, err := s.Fetch(ctx, "k"); return err })
		}
	}
	b.Run("Fetch", fetch(1))
	b.Run("Fetch/siblings=8", fetch(8))
	b.Run("Put/blind", func(b *testing.B) {
		s := newStore(b)
		loop(b, func(i int) error { return s.Put(ctx, fmt.Sprint("k", i), "a", value, nil) })
	})
	// fetchPut is the ledger's write: a Put with the token of a Fetch.
	fetchPut := func(s store.Siblings, key string) error {
		_, tok, err := s.Fetch(ctx, key)
		if err != nil {
			return err
		}
		return s.Put(ctx, key, "a", value, tok)
	}
	b.Run("FetchPut", func(b *testing.B) {
		s := newStore(b)
		loop(b, func(int) error { return fetchPut(s, "k") })
	})
	b.Run("FetchPut/parallel", func(b *testing.B) {
		s := newStore(b)
		b.ReportAllocs()
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			key := fmt.Sprint("k", n.Add(1))
			for pb.Next() {
				if err := fetchPut(s, key); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkPartitions measures the calls the counters make on a Partitions
// store, each on a fresh store from newStore, with allocations reported:
//
//   - Apply/1: one put per batch (a delta-log or tally write);
//   - Apply/16: a batch of 16 puts and a range delete (a merge);
//   - Snapshot/100: a partition of 100 rows;
//   - Scan/1000: a full scan of 1,000 rows;
//   - Scan/first-10: the first 10 rows of 1,000 (a scan stopped early).
func BenchmarkPartitions(b *testing.B, newStore func(b *testing.B) store.Partitions) {
	ctx := context.Background()
	value := make([]byte, 64)
	key := func(i int) []byte { return []byte(fmt.Sprintf("%08d", i)) }
	fill := func(b *testing.B, p store.Partitions, n int) {
		muts := make([]store.Mutation, 0, n)
		for i := range n {
			muts = append(muts, store.Mutation{Partition: "p", Op: store.OpPut, Key: key(i), Value: value, Timestamp: 1})
		}
		if err := p.Apply(ctx, muts); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Apply/1", func(b *testing.B) {
		p := newStore(b)
		loop(b, func(i int) error {
			return p.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: key(i % 1000), Value: value, Timestamp: int64(i)}})
		})
	})
	b.Run("Apply/16", func(b *testing.B) {
		p := newStore(b)
		muts := make([]store.Mutation, 17)
		loop(b, func(i int) error {
			for j := range 16 {
				muts[j] = store.Mutation{Partition: "p", Op: store.OpPut, Key: key(j), Value: value, Timestamp: int64(i)}
			}
			muts[16] = store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: key(100), End: key(200), Timestamp: int64(i)}
			return p.Apply(ctx, muts)
		})
	})
	b.Run("Snapshot/100", func(b *testing.B) {
		p := newStore(b)
		fill(b, p, 100)
		b.ReportAllocs()
		for b.Loop() {
			if rows, err := p.Snapshot(ctx, "p", 1000, store.ReadComplete); err != nil || len(rows) != 100 {
				b.Fatal(len(rows), err)
			}
		}
	})
	scan := func(n int) func(b *testing.B) {
		return func(b *testing.B) {
			p := newStore(b)
			fill(b, p, 1000)
			b.ReportAllocs()
			for b.Loop() {
				seen := 0
				if err := p.Scan(ctx, "p", nil, store.ReadAny, func(store.Row) bool { seen++; return seen < n }); err != nil || seen != n {
					b.Fatal(seen, err)
				}
			}
		}
	}
	b.Run("Scan/1000", scan(1000))
	b.Run("Scan/first-10", scan(10))
}

// loop runs op in b's loop with allocations reported; i counts the calls
// from 1.
func loop(b *testing.B, op func(i int) error) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := op(i); err != nil {
			b.Fatal(err)
		}
	}
}
