package memory

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"

	"github.com/counterkit/counterkit/store"
)

// BenchmarkPointScanAfterPut alternates a write that adds a row with a
// point read (a Scan from an existing key that stops after one row) on a
// partition of rows rows, so that each read follows a change of the
// partition's ordered keys. The partition grows by one row per iteration.
func BenchmarkPointScanAfterPut(b *testing.B) {
	// benchKey is the row key of i: the even ones are the partition's
	// first rows, the odd ones the rows the iterations add.
	benchKey := func(i int) []byte {
		return binary.BigEndian.AppendUint64([]byte("row/"), uint64(i))
	}
	value := []byte("a value of 24 bytes here")
	for _, rows := range []int{1, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			ctx := context.Background()
			s := NewPartitions()
			const batch = 10_000
			muts := make([]store.Mutation, 0, batch)
			for i := 0; i < rows; i += batch {
				muts = muts[:0]
				for j := i; j < min(i+batch, rows); j++ {
					muts = append(muts, store.Mutation{Partition: "p", Op: store.OpPut, Key: benchKey(2 * j), Value: value, Timestamp: 1})
				}
				if err := s.Apply(ctx, muts); err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC() // not the building's garbage in the timed loop
			put := []store.Mutation{{Partition: "p", Op: store.OpPut, Value: value, Timestamp: 1}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				put[0].Key = benchKey(2*i + 1)
				if err := s.Apply(ctx, put); err != nil {
					b.Fatal(err)
				}
				from := benchKey(2 * (i * 7919 % rows))
				n := 0
				err := s.Scan(ctx, "p", from, store.ReadAny, func(store.Row) bool {
					n++
					return false
				})
				if err != nil || n != 1 {
					b.Fatalf("Scan: %d rows, %v", n, err)
				}
			}
		})
	}
}

// BenchmarkLookup reads the first row from a key that no row has, the way
// a lookup of a transaction's record that is not there reads (the row after
// it, if any, is another key's), in one of 32 partitions holding rows rows
// in all, with keys spread uniformly (SHA-256 digests); rows=1000 is the
// baseline the larger stores' x-vs-small compares with, in the same run.
func BenchmarkLookup(b *testing.B) {
	key := func(i int) []byte {
		h := sha256.Sum256(binary.BigEndian.AppendUint64(nil, uint64(i)))
		return h[:]
	}
	value := []byte("12345678")
	const parts = 32
	var small float64
	for _, rows := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			ctx := context.Background()
			s := NewPartitions()
			for i := 0; i < rows; {
				p := fmt.Sprint("p", i%parts)
				var muts []store.Mutation
				for ; i < rows && len(muts) < 500; i += parts {
					muts = append(muts, store.Mutation{Partition: p, Op: store.OpPut, Key: key(i), Value: value, Timestamp: 1})
				}
				if err := s.Apply(ctx, muts); err != nil {
					b.Fatal(err)
				}
				if i >= rows && i%parts != parts-1 {
					i = i%parts + 1 // the next partition's rows
				}
			}
			names := make([]string, parts)
			for i := range names {
				names[i] = fmt.Sprint("p", i)
			}
			froms := make([][]byte, 4096)
			for i := range froms {
				froms[i] = key(rows + i)[:17]
			}
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				err := s.Scan(ctx, names[i%parts], froms[i%len(froms)], store.ReadAny, func(store.Row) bool { return false })
				if err != nil {
					b.Fatal(err)
				}
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if rows == 1_000 {
				small = ns
			} else if small > 0 {
				b.ReportMetric(ns/small, "x-vs-small")
			}
		})
	}
}
