package pncounter_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/countertest"
	"github.com/counterkit/counterkit/pncounter"
)

var actorN = countertest.ActorN

// BenchmarkIncrement measures the hot path: an actor the counter already
// holds, alternating credits and debits. Goal: 0 allocs/op.
func BenchmarkIncrement(b *testing.B) {
	c := pncounter.New()
	for i := range 100 {
		_ = c.Apply(actorN(i), 1)
		_ = c.Apply(actorN(i), -1)
	}
	actor := actorN(42)
	b.ReportAllocs()
	d := int64(1)
	for b.Loop() {
		if err := c.Apply(actor, d); err != nil {
			b.Fatal(err)
		}
		d = -d
	}
}

// BenchmarkMerge merges a counter of n actors (in both halves) into one of n
// actors sharing half of them, reporting the cost per merged-in actor.
func BenchmarkMerge(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("actors=%d", n), func(b *testing.B) {
			dst, src := pncounter.New(), pncounter.New()
			for i := range n {
				_ = dst.Apply(actorN(i), int64(i+1))
				_ = dst.Apply(actorN(i), -int64(i+1))
				_ = src.Apply(actorN(i+n/2), int64(2*i+1))
				_ = src.Apply(actorN(i+n/2), -int64(i+1))
			}
			countertest.Merge(b, dst, src, n)
		})
	}
}

// jsonCounter is the JSON shape the comparison uses: the natural
// hand-written form, {"p": {"actor": count}, "n": {...}}.
type jsonCounter struct {
	P map[string]int64 `json:"p"`
	N map[string]int64 `json:"n"`
}

func toJSON(c *pncounter.Counter) ([]byte, error) {
	j := jsonCounter{P: map[string]int64{}, N: map[string]int64{}}
	for a, v := range c.P().All() {
		j.P[string(a)] = v
	}
	for a, v := range c.N().All() {
		j.N[string(a)] = v
	}
	return json.Marshal(j)
}

// fromJSON decodes the JSON shape into a Counter with the same validation
// (ids, signs, overflow) as UnmarshalBinary, so both produce the same
// result from the same information.
func fromJSON(data []byte) (*pncounter.Counter, error) {
	var j jsonCounter
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	c := pncounter.New()
	c.Grow(len(j.P), len(j.N)) // the same pre-sizing UnmarshalBinary does
	for a, v := range j.P {
		if v <= 0 {
			return nil, fmt.Errorf("bad count %d", v)
		}
		if err := c.Increment(crdt.ActorID(a), v); err != nil {
			return nil, err
		}
	}
	for a, v := range j.N {
		if v <= 0 {
			return nil, fmt.Errorf("bad count %d", v)
		}
		if err := c.Decrement(crdt.ActorID(a), v); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func thousand(b *testing.B) *pncounter.Counter { return thousandOf(b, actorN) }

func thousandOf(b *testing.B, actor func(int) crdt.ActorID) *pncounter.Counter {
	c := pncounter.New()
	for i := range 1000 {
		if err := c.Apply(actor(i), int64(i)*7919+1); err != nil {
			b.Fatal(err)
		}
		if err := c.Apply(actor(i), -(int64(i)*104729 + 1)); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// BenchmarkCodecVsJSON decodes the same 1,000-actor PNCounter from msgpack
// and from JSON in one run and reports the ratios: size-ratio is
// msgpack bytes / JSON bytes (goal <= 0.5) and decode-speedup is JSON
// decode time / msgpack decode time (goal >= 3). ids=sequential names the
// actors actor-0 … actor-999; ids=random uses 32-hex-digit ids, which share
// almost no prefix.
func BenchmarkCodecVsJSON(b *testing.B) {
	b.Run("ids=sequential", func(b *testing.B) { codecVsJSON(b, thousand(b)) })
	b.Run("ids=random", func(b *testing.B) { codecVsJSON(b, thousandOf(b, countertest.RandomActor)) })
}

var jsonForm = countertest.JSON[*pncounter.Counter]{To: toJSON, From: fromJSON}

func codecVsJSON(b *testing.B, c *pncounter.Counter) { format.CodecVsJSON(b, c, jsonForm) }

// BenchmarkDecode gives separate rows for the two decoders.
func BenchmarkDecode(b *testing.B) { format.DecodeRows(b, thousand(b), jsonForm) }

func BenchmarkMarshal(b *testing.B) {
	c := thousand(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.MarshalBinary(); err != nil {
			b.Fatal(err)
		}
	}
}
