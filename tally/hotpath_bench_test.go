package tally_test

import (
	"context"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tally"
)

// BenchmarkHotPath is the tally's hot path with no Observer: one increment
// staged and flushed as one write, over adapters/memory. It uses only what
// the tally offered before observation existed (where Options was named
// Config), so that the same file measures both builds (BENCHMARKS.md,
// "Observation cost").
func BenchmarkHotPath(b *testing.B) { benchFlush(b, tally.Options{}) }

// benchFlush measures Stage(+1) and Flush on one mutator of a counter made
// with opts.
func benchFlush(b *testing.B, opts tally.Options) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	opts.Clock = func() time.Time { return at }
	opts.NewID = func() crdt.ActorID { return "bench-1" }
	c, err := tally.New[*tally.Sum](memory.NewPartitions(), "bench", opts)
	if err != nil {
		b.Fatal(err)
	}
	m, err := c.NewMutator()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	inc := func(s *tally.Sum) error { return s.Add(1) }
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Stage(inc); err != nil {
			b.Fatal(err)
		}
		if err := m.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
