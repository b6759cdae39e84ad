package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/timeid"
)

// BenchmarkHotPath is the balance's hot path with no Observer: Add of a new
// update (one normal row written, no read) over adapters/memory, the clock
// moving 1 µs per update. It uses only what the package offered before
// observation existed, so that the same file measures both builds
// (BENCHMARKS.md, "Observation cost").
func BenchmarkHotPath(b *testing.B) { benchAdd(b, balance.Options{}) }

// benchAdd measures Add on accounts made with opts (Clock set here).
func benchAdd(b *testing.B, opts balance.Options) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	opts.Clock = func() time.Time { return now }
	a, err := balance.New(memory.NewPartitions(), opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Microsecond)
		if err := a.Add(ctx, "a", timeid.New(now), 1); err != nil {
			b.Fatal(err)
		}
	}
}
