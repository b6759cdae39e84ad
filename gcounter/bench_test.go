package gcounter_test

import (
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/gcounter"
)

// BenchmarkIncrement measures the hot path: an actor the counter already
// holds. Goal: 0 allocs/op.
func BenchmarkIncrement(b *testing.B) {
	c := gcounter.New()
	for i := range 100 {
		if err := c.Increment(actorN(i), 1); err != nil {
			b.Fatal(err)
		}
	}
	actor := actorN(42)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Increment(actor, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMerge merges a counter of n actors into one of n actors that
// shares half of them (the other half are new), and reports the cost per
// actor of the merged-in counter.
func BenchmarkMerge(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("actors=%d", n), func(b *testing.B) {
			dst, src := gcounter.New(), gcounter.New()
			for i := range n {
				_ = dst.Increment(actorN(i), int64(i+1))
				_ = src.Increment(actorN(i+n/2), int64(2*i+1))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				d := dst.Clone()
				b.StartTimer()
				if err := d.Merge(src); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/actor")
		})
	}
}

// BenchmarkMergeNoop merges a counter into one that already contains it
// (the steady state of gossip): lookups only, no growth.
func BenchmarkMergeNoop(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("actors=%d", n), func(b *testing.B) {
			dst := gcounter.New()
			for i := range n {
				_ = dst.Increment(actorN(i), int64(i+1))
			}
			src := dst.Clone()
			b.ReportAllocs()
			for b.Loop() {
				if err := dst.Merge(src); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/actor")
		})
	}
}

func BenchmarkUnmarshal1000(b *testing.B) {
	c := gcounter.New()
	for i := range 1000 {
		_ = c.Increment(actorN(i), int64(i)*1000+1)
	}
	data, err := c.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var d gcounter.Counter
		if err := d.UnmarshalBinary(data); err != nil {
			b.Fatal(err)
		}
	}
}
