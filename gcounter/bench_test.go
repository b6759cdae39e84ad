package gcounter_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/countertest"
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
			countertest.Merge(b, dst, src, n)
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

// toJSON writes the natural hand-written JSON form of a counter,
// {"actor": count, ...}.
func toJSON(c *gcounter.Counter) ([]byte, error) {
	j := make(map[string]int64, c.Len())
	for a, n := range c.All() {
		j[string(a)] = n
	}
	return json.Marshal(j)
}

// fromJSON decodes the JSON form into a Counter with the same validation
// (ids, signs, overflow, the actor cap) as UnmarshalBinary, so both produce
// the same result from the same information.
func fromJSON(data []byte) (*gcounter.Counter, error) {
	var j map[string]int64
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	c := gcounter.New()
	c.Grow(len(j)) // the same pre-sizing UnmarshalBinary does
	for a, n := range j {
		if n <= 0 {
			return nil, fmt.Errorf("bad count %d", n)
		}
		if err := c.Increment(crdt.ActorID(a), n); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// thousandOf returns a counter of 1,000 actors named by actor, with counts
// of one to seven digits (the same counts as pncounter's benchmark P half).
func thousandOf(b *testing.B, actor func(int) crdt.ActorID) *gcounter.Counter {
	c := gcounter.New()
	for i := range 1000 {
		if err := c.Increment(actor(i), int64(i)*7919+1); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// BenchmarkCodecVsJSON decodes the same 1,000-actor GCounter from msgpack
// and from JSON in one run and reports the ratios: size-ratio is msgpack
// bytes / JSON bytes (goal <= 0.5) and decode-speedup is JSON decode time /
// msgpack decode time (goal >= 3). best-decode-speedup is the same ratio of
// the fastest decode of each kind, which other work on a shared machine
// disturbs least. ids=sequential names the actors actor-0 … actor-999;
// ids=pods names them as pods of 100 rollouts of one deployment (countertest.PodActor);
// ids=random uses 32-hex-digit ids, which share almost no prefix.
func BenchmarkCodecVsJSON(b *testing.B) {
	b.Run("ids=sequential", func(b *testing.B) { codecVsJSON(b, thousandOf(b, actorN)) })
	b.Run("ids=pods", func(b *testing.B) { codecVsJSON(b, thousandOf(b, countertest.PodActor)) })
	b.Run("ids=random", func(b *testing.B) { codecVsJSON(b, thousandOf(b, countertest.RandomActor)) })
}

var jsonForm = countertest.JSON[*gcounter.Counter]{To: toJSON, From: fromJSON}

func codecVsJSON(b *testing.B, c *gcounter.Counter) { format.CodecVsJSON(b, c, jsonForm) }

// BenchmarkDecode gives separate rows for the two decoders (1,000 actors,
// ids actor-0 … actor-999).
func BenchmarkDecode(b *testing.B) { format.DecodeRows(b, thousandOf(b, actorN), jsonForm) }
