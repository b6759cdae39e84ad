package memory

import (
	"context"
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
